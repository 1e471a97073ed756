#!/bin/bash
# cli.sh - the command line: options, dpkg's configuration, exit statuses,
# messages, locks.
TEST_NAME=cli
. "${TESTLIB:?}"
need_cmd perl

pkg=$TESTDIR/pkg
new_pkg "$pkg" clitest
mkdir -p "$pkg/usr/share/clitest"
echo hello >"$pkg/usr/share/clitest/hello"
build_deb "$TESTDIR/clitest.deb" "$pkg"
deb=$TESTDIR/clitest.deb

# run EXPECTED_STATUS NAME ARGS...: run unpkg, keep its output in
# $TESTDIR/NAME.out/.err, check the exit status.
run() {
	local want=$1 name=$2 rc=0
	shift 2
	"$UNPKG" "$@" >"$TESTDIR/$name.out" 2>"$TESTDIR/$name.err" || rc=$?
	assert_status "$want" "$rc" "unpkg $*"
}

section "help and version"
run 0 help --help
assert_grep '^Usage: unpkg' "$TESTDIR/help.out" "--help"
assert_grep '--sync=<strategy>' "$TESTDIR/help.out" "--help lists --sync"
assert_grep '--path-exclude=<glob> +do not unpack' "$TESTDIR/help.out" "--help lists the path filters"
run 0 help-short -h
assert_same_file "$TESTDIR/help.out" "$TESTDIR/help-short.out" "-h is --help"
run 0 help-q '-?'
assert_same_file "$TESTDIR/help.out" "$TESTDIR/help-q.out" "-? is --help"
assert_grep 'hands every other action' "$TESTDIR/help.out" "--help explains the hand-over to dpkg"
run 0 version --version
assert_grep '^unpkg [0-9]+\.[0-9]+' "$TESTDIR/version.out" "--version"
assert_grep '^This is free software; see the GNU General Public License version 2 or$' \
	"$TESTDIR/version.out" "--version's licence lines, as dpkg's"

section "usage errors exit 2 and change nothing"
root=$TESTDIR/usage-root
mkroot "$root"
run 2 noaction --root="$root" "$deb"
assert_grep 'need an action' "$TESTDIR/noaction.err" "no action"
run 2 nofile --root="$root" -i
assert_grep '--install needs at least one package archive' "$TESTDIR/nofile.err" "no file"
run 2 badopt --root="$root" --no-such-option -i "$deb"
run 2 badsync --root="$root" --sync=fsync -i "$deb"
assert_grep "unknown sync strategy 'fsync'" "$TESTDIR/badsync.err" "--sync=fsync"
run 2 twoactions --root="$root" -i --unpack "$deb"
assert_grep 'conflicting actions --unpack and -i' "$TESTDIR/twoactions.err" "two actions"
run 2 afterfile --root="$root" -i "$deb" --unpack
assert_grep "cannot access archive '--unpack'" "$TESTDIR/afterfile.err" \
	"options end at the first file, as in dpkg"
[ ! -e "$root/usr" ] || check_fail "a usage error wrote into the root"

section "a missing archive stops the run before it starts (exit 2), as in dpkg"
run 2 missing --root="$root" -i "$deb" "$TESTDIR/nope.deb"
assert_grep "cannot access archive '.*nope.deb': No such file or directory" \
	"$TESTDIR/missing.err" "missing file"
run 2 notfile --root="$root" -i "$TESTDIR"
assert_grep "archive '.*' is not a regular file" "$TESTDIR/notfile.err" "directory"
[ ! -e "$root/usr" ] || check_fail "a missing archive did not stop the run"

section "a bad archive is an error of that package (exit 1)"
echo "not a deb" >"$TESTDIR/text.deb"
run 1 notdeb --root="$root" -i "$TESTDIR/text.deb" "$deb"
assert_grep "error processing archive .*text.deb" "$TESTDIR/notdeb.err" "not a .deb"
# the good package of the same run is still installed, as with dpkg
[ -f "$root/usr/share/clitest/hello" ] || check_fail "the valid package of the run was not installed"
assert_grep '^Errors were encountered while processing:' "$TESTDIR/notdeb.err" "closing summary"

section "--root DIR and --root=DIR; --instdir and --admindir"
r1=$TESTDIR/r1 r2=$TESTDIR/r2
mkroot "$r1"
mkroot "$r2"
run 0 root-eq --root="$r1" --unpack "$deb"
run 0 root-sp --root "$r2" --unpack "$deb"
tree_manifest "$r1" >"$TESTDIR/m1"
tree_manifest "$r2" >"$TESTDIR/m2"
assert_same_file "$TESTDIR/m1" "$TESTDIR/m2" "--root=DIR vs --root DIR"
inst=$TESTDIR/inst adm=$TESTDIR/adm
mkdir -p "$inst"
run 0 split --instdir="$inst" --admindir "$adm" --unpack "$deb"
[ -f "$inst/usr/share/clitest/hello" ] || check_fail "--instdir: file not under the instdir"
assert_grep '^Package: clitest' "$adm/status" "--admindir status"
[ ! -e "$inst/var/lib/dpkg" ] || check_fail "--admindir: a database was made under the instdir"
# unpkg creates a missing database skeleton (a fresh root works as is)
fresh=$TESTDIR/fresh
mkdir -p "$fresh"
run 0 fresh --root="$fresh" -i "$deb"
assert_grep '^Status: install ok installed' "$fresh/var/lib/dpkg/status" "fresh root"
dpkg --root="$fresh" --audit >"$TESTDIR/audit" 2>&1
assert_empty "$TESTDIR/audit" "dpkg --audit of a fresh root"

section "sync mode: default, dpkg's configuration, command line"
r=$TESTDIR/sync-root
mkroot "$r"
run 0 default --root="$r" --stats --unpack "$deb"
# auto: the strategy for the file system of the test directory
assert_grep '^stats: sync mode: [a-z]+ \(auto for [^,]+, default\)' \
	"$TESTDIR/default.out" "default mode"
echo force-unsafe-io >"$UNPKG_CONFDIR/dpkg.cfg.d/docker-apt-speedup"
run 0 cfg --root="$r" --stats --unpack "$deb"
assert_grep '^stats: sync mode: none \(force-unsafe-io in .*docker-apt-speedup\)' \
	"$TESTDIR/cfg.out" "force-unsafe-io from dpkg.cfg.d"
# no syncs for the package's files, the database's as ever: status-new
# twice (mark, record), info/PKG.list and .md5sums; the admin directory
# twice and info/ once (through io_uring the record's status-new gets an
# fsync, with info/)
assert_grep '^stats: calls sync_file_range=0 (fdatasync=4 fsync=3|fdatasync=3 fsync=4) syncfs=0 ' \
	"$TESTDIR/cfg.out" "only the database synced with force-unsafe-io"
# ~/.dpkg.cfg comes after the system's files, before the command line
home=$TESTDIR/home
mkdir -p "$home"
echo refuse-unsafe-io >"$home/.dpkg.cfg"
HOME=$home run 0 user-cfg --root="$r" --stats --unpack "$deb"
assert_grep '^stats: sync mode: [a-z]+ \(auto for [^,]+, refuse-unsafe-io in '"$home"'/\.dpkg\.cfg\)' \
	"$TESTDIR/user-cfg.out" "~/.dpkg.cfg read after dpkg.cfg.d"
HOME=$home run 0 user-cfg-cl --root="$r" --force-unsafe-io --stats --unpack "$deb"
assert_grep '^stats: sync mode: none \(--force-unsafe-io\)' \
	"$TESTDIR/user-cfg-cl.out" "the command line after ~/.dpkg.cfg"
rm "$home/.dpkg.cfg"
run 0 refuse --root="$r" --refuse-unsafe-io --stats --unpack "$deb"
assert_grep '^stats: sync mode: [a-z]+ \(auto for [^,]+, --refuse-unsafe-io\)' \
	"$TESTDIR/refuse.out" "--refuse-unsafe-io"
run 0 last-wins --root="$r" --refuse-unsafe-io --force-unsafe-io --stats --unpack "$deb"
assert_grep '^stats: sync mode: none \(--force-unsafe-io\)' "$TESTDIR/last-wins.out" "later option wins"
run 0 explicit --root="$r" --sync=syncfs --stats --unpack "$deb"
assert_grep '^stats: sync mode: syncfs \(--sync=syncfs\)' "$TESTDIR/explicit.out" "--sync=syncfs"
# the mark's, the barrier's, and the renames' with the record's
assert_grep '^stats: calls .* syncfs=3 ' "$TESTDIR/explicit.out" "syncfs count"
rm "$UNPKG_CONFDIR/dpkg.cfg.d/docker-apt-speedup"
assert_grep '^stats: phase writing the files +[0-9.]+ s$' "$TESTDIR/explicit.out" "phase times"
assert_grep '^stats: total +[0-9.]+ s$' "$TESTDIR/explicit.out" "the total time"
assert_grep '^stats: written files=1 bytes=6$' "$TESTDIR/explicit.out" "written counts"

section "dpkg-style progress lines"
r=$TESTDIR/msg-root
mkroot "$r"
run 0 msg --root="$r" -i "$deb"
# (dpkg shortens a long path of an archive: its own line is the oracle)
mkroot "$TESTDIR/msg-dpkg"
dpkg --root="$TESTDIR/msg-dpkg" --no-act -i "$deb" | grep '^Preparing to unpack' >"$TESTDIR/msg.prep" ||
	hard_error "dpkg --no-act -i printed no Preparing line"
printf '%s\n' "Selecting previously unselected package clitest." \
	"(Reading database ... 0 files and directories currently installed.)" \
	"$(cat "$TESTDIR/msg.prep")" "Unpacking clitest (1.0) ..." \
	"Setting up clitest (1.0) ..." >"$TESTDIR/msg.want"
assert_same_file "$TESTDIR/msg.want" "$TESTDIR/msg.out" "progress lines"
run 0 msg2 --root="$r" -i "$deb"
assert_grep '^Unpacking clitest \(1.0\) over \(1.0\) \.\.\.$' "$TESTDIR/msg2.out" "reinstall line"

section "locks: dpkg's lock files keep unpkg out while held"
r=$TESTDIR/lock-root
mkroot "$r"
run 0 lock-init --root="$r" --unpack "$deb"
# hold LOCKFILE with an fcntl write lock (as dpkg and apt do) while
# running unpkg with the given arguments.  The holder says "locked" on a
# fifo once it has the lock and keeps it until it is killed (or the test
# is gone): unpkg runs only after that line came, however slow the
# machine (the read's limit is only for a holder that hangs).
with_lock() {
	local lockfile=$1 name=$2 want=$3 line=
	shift 3
	mkfifo "$TESTDIR/$name.fifo"
	perl -MFcntl -e '
		open(my $fh, "+<", $ARGV[0]) or die "open: $!";
		# struct flock on 64-bit Linux: short type, short whence, off_t
		# start, off_t len, pid_t pid (with padding)
		my $lk = pack("s s x4 q q i x4", F_WRLCK, 0, 0, 0, 0);
		fcntl($fh, F_SETLK, $lk) or die "lock: $!";
		my $test = getppid();
		$| = 1; print "locked\n"; close(STDOUT);
		sleep 1 while getppid() == $test;' "$lockfile" \
		>"$TESTDIR/$name.fifo" &
	local pid=$!
	read -r -t 600 line <"$TESTDIR/$name.fifo" || true
	if [ "$line" != locked ]; then
		kill "$pid" 2>/dev/null || true
		hard_error "could not take $lockfile"
	fi
	run "$want" "$name" "$@"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}
with_lock "$r/var/lib/dpkg/lock-frontend" frontend 2 --root="$r" --unpack "$deb"
assert_grep 'frontend lock .*locked by another process' "$TESTDIR/frontend.err" "lock-frontend held"
# apt holds lock-frontend itself and says so: unpkg then takes only lock
DPKG_FRONTEND_LOCKED=1 with_lock "$r/var/lib/dpkg/lock-frontend" frontend-ok 0 \
	--root="$r" --unpack "$deb"
with_lock "$r/var/lib/dpkg/lock" lock 2 --root="$r" --unpack "$deb"
assert_grep 'locked by another process' "$TESTDIR/lock.err" "lock held"

section "not root"
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	rc=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$UNPKG" \
		--root="$r" -i "$deb" >"$TESTDIR/nonroot.out" 2>"$TESTDIR/nonroot.err" || rc=$?
	assert_status 2 $rc "unpkg as nobody"
	assert_grep 'requires superuser privilege' "$TESTDIR/nonroot.err" "not root message"
else
	skip_part "unpkg run by a user other than root" "no 'nobody' user or no setpriv"
fi

#!/bin/bash
# sync.sh - the commit passes as the kernel sees them.
#
# An install is traced with strace and every sync and rename call is turned
# into one letter; the order of the letters is the contract of each
# strategy (DESIGN.md section 2):
#   W  sync_file_range(SYNC_FILE_RANGE_WRITE)   (pass 1, as each file is written)
#   A  sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE)   (pass 2)
#   D  fdatasync of a staged file               (pass 3)
#   m  rename of a new directory, made as NAME.dpkg-new (at once, as
#      each directory entry is unpacked)
#   R  rename of a staged entry                 (pass 4)
#   F  fsync of a touched directory             (renames made durable)
#   S  syncfs
#   U  io_uring_enter (the uring strategy's batched syncs)
#   d/M/f  the database write: fdatasync(status-new), rename to status,
#          fsync of the admin directory (in every strategy: --force-unsafe-io
#          skips the syncs of the packages' files, not the database's).  The half-installed mark is made
#          durable by the strategy (dpkg, batch: d; uring: U; syncfs: S)
#          before anything else happens; the record is written before the
#          renames are made durable, by the same sync (d with the F's, U,
#          S), and put in place (Mf) after it.
# Calls that failed (= -1) changed nothing and are left out.
TEST_NAME=sync
. "${TESTLIB:?}"
need_cmd strace

pkg=$TESTDIR/pkg
new_pkg "$pkg" syncs
mkdir -p "$pkg/usr/share/syncs/a" "$pkg/usr/share/syncs/b"
for i in 1 2 3 4 5 6 7 8; do
	echo "data $i" >"$pkg/usr/share/syncs/a/f$i"
done
ln -s ../a/f1 "$pkg/usr/share/syncs/b/link"
build_deb "$TESTDIR/syncs.deb" "$pkg"
# A second package, for the runs that install two.
new_pkg "$TESTDIR/pkg2" syncs2
mkdir -p "$TESTDIR/pkg2/usr/share/syncs2"
echo other >"$TESTDIR/pkg2/usr/share/syncs2/f"
build_deb "$TESTDIR/syncs2.deb" "$TESTDIR/pkg2"
debs=("$TESTDIR/syncs.deb")
# 8 files plus the two info files unpkg writes (list, generated md5sums)
nfiles=10
# the same, plus the symlink
nrenames=11
# usr, usr/share, usr/share/syncs and its a and b
ndirs=5

# A package of its own, installed first so that the database a traced run
# finds has been used: writing info/format, the lock files and triggers/
# happens once per database and is not part of what is checked here.
new_pkg "$TESTDIR/first" first
build_deb "$TESTDIR/first.deb" "$TESTDIR/first"
used_root() {
	mkroot "$1"
	"$UNPKG" --root="$1" --unpack "$TESTDIR/first.deb" >/dev/null
}

# LeakSanitizer cannot work under ptrace: in a sanitizer build, traced runs
# check everything but leaks (the untraced runs of the suite cover those).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# letters ROOT TRACE: the calls of TRACE as a string of letters.
letters() {
	local admin="$1/var/lib/dpkg"
	awk -v admin="$admin" '
	/ = -1 / { next }
	/status-new/ && /fdatasync|fsync/ { printf "d"; next }
	/rename/ && /status-new/ { printf "M"; next }
	/^[0-9]+ +mkdir/ {
		if (match($0, /"[^"]*"/)) made[substr($0, RSTART, RLENGTH)] = 1
		next
	}
	/WAIT_BEFORE/ { printf "A"; next }
	/SYNC_FILE_RANGE_WRITE/ { printf "W"; next }
	/^[0-9]+ +fdatasync/ { printf "D"; next }
	/^[0-9]+ +rename/ {
		if (match($0, /"[^"]*"/) && (substr($0, RSTART, RLENGTH) in made))
			printf "m"
		else
			printf "R"
		next
	}
	/^[0-9]+ +fsync\(/ {
		if (index($0, "<" admin ">")) printf "f"; else printf "F"
		next
	}
	/^[0-9]+ +syncfs/ { printf "S"; next }
	/^[0-9]+ +io_uring_enter/ { printf "U"; next }
	' "$2"
	echo
}

# trace MODE [strace option...]: install under strace with --sync=MODE,
# print the letters.
trace() {
	local mode=$1 root=$TESTDIR/root-$1
	shift
	used_root "$root"
	strace -f -y -qq -o "$TESTDIR/trace-$mode" "$@" \
		-e trace=sync_file_range,fdatasync,fsync,syncfs,rename,renameat,renameat2,io_uring_enter,mkdir,mkdirat \
		"$UNPKG" --root="$root" --sync="$mode" --stats --unpack \
		"${debs[@]}" >"$TESTDIR/out-$mode" 2>"$TESTDIR/err-$mode" ||
		{ show_file "$TESTDIR/err-$mode"; fail "unpkg --sync=$mode failed"; }
	letters "$root" "$TESTDIR/trace-$mode"
}

# expect WHAT SEQUENCE REGEX: SEQUENCE matches the extended REGEX.
expect() {
	if [[ $2 =~ $3 ]]; then
		note "$1: $2"
	else
		check_fail "$1: call sequence '$2' does not match /$3/"
	fi
}

count() {
	local s=${1//[^$2]/}
	echo ${#s}
}

section "dpkg: mark, the four passes in order, the record made durable with the renames"
seq=$(trace dpkg)
# mark (dMf), then W.. A.. D.. R.. F.., then the record (dMf)
expect "dpkg strategy" "$seq" '^dMf[mW]+A+D+R+dF+Mf$'
[ "$(count "$seq" W)" -eq $nfiles ] || check_fail "dpkg: $(count "$seq" W) SYNC_FILE_RANGE_WRITE calls, expected $nfiles"
[ "$(count "$seq" A)" -eq $nfiles ] || check_fail "dpkg: $(count "$seq" A) WAIT_BEFORE calls, expected $nfiles"
[ "$(count "$seq" D)" -eq $nfiles ] || check_fail "dpkg: $(count "$seq" D) fdatasync calls, expected $nfiles"
[ "$(count "$seq" R)" -eq $nrenames ] || check_fail "dpkg: $(count "$seq" R) renames, expected $nrenames"
[ "$(count "$seq" m)" -eq $ndirs ] || check_fail "dpkg: $(count "$seq" m) directories made, expected $ndirs"
# every file is written, and its writeback started, before the wait pass:
# the W calls interleave with the writes, so each W names a .dpkg-new file
grep -q 'SYNC_FILE_RANGE_WRITE' "$TESTDIR/trace-dpkg" &&
	! grep 'SYNC_FILE_RANGE_WRITE' "$TESTDIR/trace-dpkg" | grep -vq '\.dpkg-new>' ||
	check_fail "dpkg: a SYNC_FILE_RANGE_WRITE on something other than a staged file"
assert_grep '^stats: sync mode: dpkg' "$TESTDIR/out-dpkg" "dpkg --stats"
# the staged files', and the mark's and the record's status-new
assert_grep "^stats: calls sync_file_range=$((2 * nfiles)) fdatasync=$((nfiles + 2)) " \
	"$TESTDIR/out-dpkg" "dpkg --stats counts"

section "two packages: dpkg commits each, batch commits the run once"
debs=("$TESTDIR/syncs.deb" "$TESTDIR/syncs2.deb")
seq=$(trace dpkg)
expect "dpkg strategy, two packages" "$seq" '^dMf([mW]+A+D+R+dF+Mf){2}$'
seq=$(trace batch)
expect "batch strategy, two packages" "$seq" '^dMf[mW]+A+D+R+dF+Mf$'
[ "$(count "$seq" D)" -eq $((nfiles + 3)) ] ||
	check_fail "batch: $(count "$seq" D) fdatasync calls, expected $((nfiles + 3))"
assert_grep '^stats: sync mode: batch' "$TESTDIR/out-batch" "batch --stats"
debs=("$TESTDIR/syncs.deb")

section "uring: the run's syncs submitted together through io_uring"
debs=("$TESTDIR/syncs.deb" "$TESTDIR/syncs2.deb")
seq=$(trace uring)
expect "uring strategy" "$seq" '^UMf[mW]+U+R+U+Mf$'
assert_grep '^stats: sync mode: uring' "$TESTDIR/out-uring" "uring --stats"
# the staged files, and the mark's status-new, through the ring
assert_grep "^stats: calls sync_file_range=$((nfiles + 3)) fdatasync=$((nfiles + 4)) " \
	"$TESTDIR/out-uring" "uring --stats counts"
debs=("$TESTDIR/syncs.deb")

section "syncfs: one syncfs before and one after the renames, covering the database too"
seq=$(trace syncfs)
expect "syncfs strategy" "$seq" '^SMfm+SR+SMf$'

section "none: no syncs for the package's files, the database's as always"
seq=$(trace none)
# the mark (its status-new synced, Mf); the package's files renamed
# unsynced, its two info files synced before their renames and info/ after
# them, with the record's status-new (Mf): through io_uring (U) as in the
# uring strategy, or one by one (d, D, F) where io_uring is refused
expect "none strategy" "$seq" '^(UMfm+UR+UMf|dMfm+DDR+dFMf)$'
[ "$(count "$seq" WAS)" -eq 0 ] || check_fail "none: a sync of the package's files"
[ "$(count "$seq" R)" -eq $nrenames ] || check_fail "none: $(count "$seq" R) renames, expected $nrenames"

section "fallback: sync_file_range failing with ENOSYS selects syncfs"
seq=$(trace dpkg -e inject=sync_file_range:error=ENOSYS)
# the refused W attempt (left out: it failed), then the syncfs recipe
expect "fallback" "$seq" '^dMfm*SR+SMf$'
assert_grep 'sync_file_range is not available; using the syncfs strategy' \
	"$TESTDIR/err-dpkg" "fallback notice"
assert_grep '^stats: sync mode: syncfs' "$TESTDIR/out-dpkg" "fallback --stats"

section "install: configure's conffile renames and their record made durable by one sync, the backups removed before the end state"
new_pkg "$TESTDIR/conf" withconf
mkdir -p "$TESTDIR/conf/etc"
echo "setting=1" >"$TESTDIR/conf/etc/withconf.conf"
echo /etc/withconf.conf >"$TESTDIR/conf/DEBIAN/conffiles"
build_deb "$TESTDIR/withconf.deb" "$TESTDIR/conf"
root=$TESTDIR/root-conf
used_root "$root"
strace -f -y -qq -o "$TESTDIR/trace-conf" \
	-e trace=sync_file_range,fdatasync,fsync,syncfs,rename,renameat,renameat2,mkdir,mkdirat \
	"$UNPKG" --root="$root" --sync=syncfs -i "$TESTDIR/withconf.deb" \
	>"$TESTDIR/out-conf" 2>"$TESTDIR/err-conf" ||
	{ show_file "$TESTDIR/err-conf"; fail "unpkg -i failed"; }
seq=$(letters "$root" "$TESTDIR/trace-conf")
# unpack as above, then the conffile's rename (R), one syncfs, the record
# half-configured with the new hash (SMf); the conffile's backup removed,
# then the end state written on its own (dMf): a run killed while the
# backup is removed must find the package half-configured
expect "install with a conffile" "$seq" '^SMfm+SR+SMfRSMfdMf$'
assert_grep '^setting=1$' "$root/etc/withconf.conf" "conffile installed"

section "fdatasync failing with EIO aborts the run, leaving the root as before"
root=$TESTDIR/root-eio
used_root "$root"
tree_manifest "$root" >"$TESTDIR/before-eio"
db_manifest "$root/var/lib/dpkg" >"$TESTDIR/before-eio-db"
# the first fdatasync is the database's mark, the second a staged file's
rc=0
strace -f -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:error=EIO:when=2 \
	"$UNPKG" --root="$root" --sync=dpkg --unpack "$TESTDIR/syncs.deb" \
	>"$TESTDIR/out-eio" 2>"$TESTDIR/err-eio" || rc=$?
assert_status 1 $rc "unpkg with fdatasync EIO"
assert_grep 'cannot fdatasync .*Input/output error' "$TESTDIR/err-eio" "EIO message"
tree_manifest "$root" >"$TESTDIR/after-eio"
db_manifest "$root/var/lib/dpkg" >"$TESTDIR/after-eio-db"
assert_same_file "$TESTDIR/before-eio" "$TESTDIR/after-eio" "tree after EIO"
assert_same_file "$TESTDIR/before-eio-db" "$TESTDIR/after-eio-db" "database after EIO"
assert_no_debris "$root"

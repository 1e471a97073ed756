#!/bin/bash
# powerloss.sh - power cuts at every device flush of an install, replayed
# from a recorded write stream; after each, the crash-safety contract
# (DESIGN.md section 3, I1-I7, and I8 below) is checked.
# doc/reliability.md, "Power-loss replay", has the method and the results.
#
# Recording.  The file system under test (ext4 mounted noauto_da_alloc, xfs
# or btrfs) lives on a loop device (direct I/O, request merging off) over
# bench/imgfs, which logs every write, discard and cache flush the loop
# device passes on, in the order it receives them, one request at a time.
# The root of the install is a directory of that file system; the image as
# it was before the run is kept (BASE).  The recorded run, from mount to
# unmount, is the crash-free reference.  Three things make the recording
# harsher than an idle test machine, and closer to a real one:
#  - a slow disk: imgfs acknowledges each write CRASH_WRITE_LATENCY_US
#    (default 1000) after receiving it and answers flushes meanwhile; a
#    flush covers only the writes acknowledged before it, so writes still
#    in flight when a file system issues a flush are not made durable by
#    it (the log puts them after it);
#  - a bystander: while the installer runs, another process appends to a
#    file next to the root and fsyncs it every CRASH_BYSTANDER_MS (10) ms,
#    and once more after the run, as journald or apt would; each of its
#    fsyncs commits the journal with whatever metadata the installer has
#    made so far, like the periodic commit of a real system does;
#  - a quiet moment of CRASH_IDLE_S (6) seconds after the installer exits,
#    before that last fsync: ext4's periodic commit (5 s) is recorded too.
#
# Overlay variants (CRASH_FS ext4+overlay, xfs+overlay, btrfs+overlay), a
# container's root: the file system under test is the base one, made,
# mounted, recorded and checked as above; on it lie lower/, upper/ and
# work/, the scenario's root is copied into lower/root (an image layer:
# the run replaces its files by copy-up and whiteouts), and the installer's
# root is root in an overlayfs (lowerdir, upperdir and workdir those three,
# default options) mounted on $W/ov, outside the base mount.  Each mount of
# the base file system (BASE's "before" snapshot, the recorded run, each
# state's checks and its I6 re-runs) gets an overlay mounted anew on it,
# unmounted before the base is; the "after" snapshot of the recorded run
# is read through a second overlay mounted after the last fsync, as a
# state's checks read theirs.  The bystander writes to the base file
# system, next to the layers.  The overlay variants run when named in
# CRASH_FS, and make check's quick matrix has one cell of them (below).
#
# Replay.  tests/crash/crashimg builds, for a flush point K, the image as a
# power cut would leave it: BASE, every record up to flush K, and a subset
# of the writes between flush K and K+1 cut into 4 KiB units (torn writes
# included).  States: the bare prefix of every flush point, the final
# image, and random subsets (seed 1, 2, ...) up to the state budget.  Each
# state goes on a new file (st-K-SEED.img, a new inode, removed after) and
# a new loop device, and is checked:
#   mount        journal recovery, as after a reboot; a state that does
#                not mount counts as file-system damage (FS), and so does
#                one whose overlay (overlay variants) does not mount
#   I3 I8        dpkg-query -W and dpkg --audit accept the database
#   I1 I2 I4 I5 I7 I8
#                every path of the packages of the run is its old or new
#                state (type, mode, owner, size, MD5, link target, mtime;
#                absent counts as a state); nothing else changed in the
#                root but *.dpkg-new/*.dpkg-tmp, and nothing appeared next
#                to the root (I2; in an overlay variant, nothing next
#                to it in upper/ or next to the layers either, and lower/
#                exactly as it was); a package recorded unpacked/installed
#                at a version has that version's files and info/ files
#                (I4); old and new files side by side only under
#                half-installed + reinstreq, no new file under the old or
#                no status (I5); the files of the package that is not
#                part of the run are untouched (I7); its status entry and
#                info/ files too, and every other database file is its old
#                or its new content (I8)
#   fsck -n      after the recovery (e2fsck -fn, xfs_repair -n, btrfs
#                check --readonly): tells file-system damage apart (FS)
#   I6           the same install run again exits 0 and gives exactly the
#                tree and database of the crash-free run, no *.dpkg-new /
#                *.dpkg-tmp left; a second run changes nothing
# A file that cannot be read (EIO, EUCLEAN) is a finding of class FS,
# reported with its state.  The checks of I1-I8 are those of
# tests/integration/faults.sh (both use tests/integration/invariants.sh).
# I8 holds in every mode, --force-unsafe-io included: status and updates/
# parse, a package that is not part of the run keeps its exact entry and
# info/ files, each database file the run writes is its old or new content.
#
# Isolation.  The test runs in a private mount namespace of its own (it
# re-executes itself under "unshare -m --propagation private"); after
# every umount and "losetup -d" it checks that the file system and the
# loop device are gone (/sys/fs/ext4/loopN, /sys/fs/xfs/loopN,
# /sys/fs/btrfs/*/devices/loopN, findmnt, /sys/block/loopN/loop/
# backing_file), waiting up to CRASH_RELEASE_WAIT_S (5) seconds for a
# deferred detach, and stops with "state still mounted elsewhere"
# otherwise.  Every mount, loop device and process of the test is
# released on every exit, a failing one too, and that is checked.
#
# Installers ("rows"): unpkg:STRATEGY (--sync=auto|dpkg|batch|uring|
# syncfs|none), unpkg-broken:STRATEGY (a build with
# -DUNPKG_BROKEN_RENAME_FIRST, given as CRASH_BROKEN_UNPKG), dpkg-safe
# (dpkg --refuse-unsafe-io), dpkg-unsafe (dpkg --force-unsafe-io).
# Scenarios: fresh (alpha 1.0 and beta 1.0 on a root holding keeper) and
# upgrade (to alpha 2.0, beta 2.0), both with -i, beta's trigger interests
# changing with its version; and the other actions,
# judged by S1, S2 and S3 (doc/design.md) instead of I4 and I5, in the
# full matrix or when asked for (CRASH_SCENARIOS):
#   configure  --configure -a, 2.0 unpacked over 1.0 (conffiles waiting)
#   triggers   --triggers-only -a on a root with a shell (a static
#              busybox, else the scenario is skipped): gamma (file
#              trigger on alpha's files, noawait) and delta (explicit
#              trigger) triggers-pending, zeta triggers-awaited on delta
#              (it activates delta's trigger), after alpha 1.0, beta 1.0
#              and zeta were installed with --no-triggers; the postinsts
#              of gamma and delta append to /var/log/triggered and fsync
#              it.  Judged by T1 too (invariants.sh, inv_check_triggers):
#              each of gamma, delta, zeta has its trigger state (status,
#              Triggers-Pending, Triggers-Awaited) of before or of after
#              the processing, never a pending trigger lost; one recorded
#              processed has run its postinst "triggered" (the log says
#              so); an awaiter freed only when what it awaited has no
#              trigger pending
#   remove     --remove alpha beta, 1.0 installed: conffiles stay, the
#              directories keeper shares stay (S1: recorded config-files
#              means no file left but conffiles; S2: recorded installed
#              or half-configured means no file gone)
#   purge      --purge alpha beta, 1.0 installed
# Where unpkg hands an action to stock dpkg (which knows no --sync), the
# unpkg rows run without --sync and are reported, not judged.
#
# Rules: an unpkg row shows no violation of any kind in any cell;
# unpkg:none (EXPECT_LOSS) must show I1 (lost file data) in at least one
# cell of fresh or upgrade and no I8 and no file-system damage in any; a
# row of EXPECT_VIOLATIONS (the rename-first build) must show violations
# in at least one cell of fresh or upgrade (a matrix of the other
# actions alone asks for neither); stock dpkg is reported, not judged.
#
# Default (make check), upgrade: unpkg:auto and unpkg:dpkg on ext4 with
# CRASH_STATES (120) states each, unpkg:auto on xfs and btrfs with 3/4 of
# that, the self-test unpkg:none on ext4 with half; and remove with
# unpkg:auto on ext4+overlay with half (a container's root, where the
# removed files are unlinked at once, and the directories of the lower
# layer rebuilt to be moved aside); 2/5 of all that (the
# self-test at least 40) in a sanitizer build (configure
# --enable-sanitizers, seen in the build's Makefile).  Then two self-tests
# of the harness: a state with an unreadable file must be reported as FS,
# and a state pinned from another mount namespace (CRASH_PIN_AT, in a
# small run of this test) must stop it with "state still mounted
# elsewhere" and leave nothing behind.
# CRASH_MATRIX=full (make crashcheck): every file system, scenario (the
# six above) and row, CRASH_STATES (150) per cell, CRASH_AUTO_STATES
# (twice that) for unpkg:auto; the overlay variants only when CRASH_FS
# names them (each would add as much time as a base file system), e.g.
# CRASH_MATRIX=full CRASH_FS="ext4+overlay xfs+overlay"
# CRASH_ROWS=unpkg:auto.  CRASH_FS, CRASH_SCENARIOS or CRASH_ROWS alone:
# those cells (defaults ext4, upgrade, unpkg:auto unpkg:dpkg and the
# self-test row).
#
# Environment:
#   CRASH_MATRIX=full              the whole matrix (make crashcheck)
#   CRASH_FS="ext4 xfs btrfs"      file systems (also ext4+overlay,
#                                  xfs+overlay, btrfs+overlay; see above)
#   CRASH_SCENARIOS="fresh upgrade"   (or configure, triggers, remove,
#                                  purge)
#   CRASH_ROWS="unpkg:auto ..."    installers (the default is above)
#   CRASH_STATES=N                 states per cell (see above)
#   CRASH_AUTO_STATES=N            states of the unpkg:auto cells (full)
#   CRASH_SELFTEST_STATES=N        states of the self-test cells
#   CRASH_SELFTEST=0               no self-test row, no self-test of the
#                                  harness
#   CRASH_BROKEN_UNPKG=PATH        the rename-first build, for unpkg-broken:*
#   CRASH_RESULTS=FILE             append one line per cell to FILE
#   CRASH_ONLY=K:SEED[,K:SEED...]  check only these states (reproduce)
#   CRASH_KEEP_STATE=DIR           with CRASH_ONLY: keep the state images,
#                                  the log and BASE in DIR
#   CRASH_MAXSHOW=N                violations printed in full per cell (5)
#   CRASH_PIN_AT=N                 pin the Nth state from another mount
#                                  namespace (the self-test does)
#   CRASH_WRITE_LATENCY_US, CRASH_BYSTANDER_MS, CRASH_IDLE_S,
#   CRASH_RELEASE_WAIT_S           see above
TEST_NAME=powerloss

# A private mount namespace of its own.  A process that enters a new mount
# namespace while a crash state is mounted (a container, a sandbox, a test
# of another suite) copies that mount: the test's umount then drops only
# its own copy, "losetup -d" is deferred, and the file system lives on,
# writing into the state's image.  In a namespace of its own, with private
# propagation, no mount of the test is seen by anyone who enters a new
# namespace from outside, and none leaks out.  The test re-executes itself
# there before lib.sh makes its scratch directory (the exit status is the
# one of the re-executed test).  Each state on a new image file and the
# checks after every umount and detach (release_state) cover the rest:
# a copy made from inside, by a process the test starts.
if [ -z "${POWERLOSS_OUTER_NS:-}" ] ||
	[ "$POWERLOSS_OUTER_NS" = "$(readlink /proc/self/ns/mnt)" ]; then
	if [ -n "${POWERLOSS_OUTER_NS:-}" ]; then
		echo "$TEST_NAME: ERROR: unshare -m did not give a new mount namespace" >&2
		exit 99
	fi
	if ! unshare -m --propagation private true 2>/dev/null; then
		echo "$TEST_NAME: SKIP: cannot make a private mount namespace (unshare -m)" >&2
		exit 77
	fi
	POWERLOSS_OUTER_NS=$(readlink /proc/self/ns/mnt) ||
		{ echo "$TEST_NAME: ERROR: no /proc/self/ns/mnt" >&2; exit 99; }
	export POWERLOSS_OUTER_NS
	exec unshare -m --propagation private -- "$BASH" "$0" "$@"
fi
# (a test this one starts makes a namespace of its own again)
unset POWERLOSS_OUTER_NS

# shellcheck source=tests/integration/lib.sh
. "${TESTLIB:?TESTLIB is not set}"
# shellcheck source=tests/integration/invariants.sh
. "$(dirname "$TESTLIB")/invariants.sh"
need_cmd losetup mount umount mountpoint findmnt unshare setsid truncate awk md5sum find sort cmp debugfs

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$(dirname "$UNPKG")/.." && pwd)
IMGFS=${IMGFS:-$BUILD/bench/imgfs}
CRASHIMG=${CRASHIMG:-$BUILD/tests/crash/crashimg}
for p in "$IMGFS" "$CRASHIMG"; do
	[ -x "$p" ] || hard_error "$p is not built (make check builds it)"
done

# A sanitizer build (configure --enable-sanitizers) runs each installer
# several times slower: make check gives it a third of the states.
SAN_BUILD=0
if grep -q '^SAN_CFLAGS = .*-fsanitize' "$BUILD/Makefile" 2>/dev/null; then
	SAN_BUILD=1
fi
# The rename-first build with --sync=dpkg renames each package a few
# milliseconds before its fdatasyncs, a window ext4's ordered data mode
# closes and the recording has not caught (doc/reliability.md): it runs in
# the matrix, but only its batch row is required to show violations.
EXPECT_VIOLATIONS=" unpkg-broken:batch unpkg-broken:uring unpkg-broken:syncfs "
# --force-unsafe-io: file data may be lost (I1 must be seen), the database
# never (I8 must not).
EXPECT_LOSS=" unpkg:none "

# CELLS: "FS SCENARIO ROW STATES" per cell.
CELLS=()
# add_cells FSES SCENARIOS ROWS: every combination; STATES per cell, the
# default strategy AUTO_STATES, the self-test rows SELFTEST_STATES.
add_cells() {
	local fs scen row n
	for fs in $1; do
		for scen in $2; do
			for row in $3; do
				n=$STATES
				[ "$row" != unpkg:auto ] || n=$AUTO_STATES
				[[ $EXPECT_LOSS$EXPECT_VIOLATIONS != *" $row "* ]] || n=$SELFTEST_STATES
				CELLS+=("$fs $scen $row $n")
			done
		done
	done
}
if [ "${CRASH_MATRIX:-quick}" = full ]; then
	STATES=${CRASH_STATES:-150}
	AUTO_STATES=${CRASH_AUTO_STATES:-$((STATES * 2))}
	SELFTEST_STATES=${CRASH_SELFTEST_STATES:-$STATES}
	add_cells "${CRASH_FS:-ext4 xfs btrfs}" "${CRASH_SCENARIOS:-fresh upgrade configure triggers remove purge}" \
		"${CRASH_ROWS:-unpkg:auto unpkg:dpkg unpkg:batch unpkg:uring unpkg:syncfs unpkg:none unpkg-broken:dpkg unpkg-broken:batch dpkg-safe dpkg-unsafe}"
elif [ -n "${CRASH_FS:-}${CRASH_SCENARIOS:-}${CRASH_ROWS:-}" ]; then
	# a part of the matrix, chosen by hand
	STATES=${CRASH_STATES:-160}
	AUTO_STATES=$STATES
	SELFTEST_STATES=${CRASH_SELFTEST_STATES:-$((STATES / 2))}
	rows=${CRASH_ROWS:-unpkg:auto unpkg:dpkg}
	if [ "${CRASH_SELFTEST:-1}" = 1 ] && [ -z "${CRASH_ROWS:-}" ]; then
		rows="$rows unpkg:none"
	fi
	add_cells "${CRASH_FS:-ext4}" "${CRASH_SCENARIOS:-upgrade}" "$rows"
else
	# make check: the default strategy on each file system, ext4 with
	# --sync=dpkg and the self-test too, and a removal on an overlay.  A state takes 0.45 to 0.65 s
	# on this project's loaded 2-core test machine (doc/reliability.md):
	# 120 states for an ext4 cell, 90 for xfs and btrfs, 60 for the
	# self-test keep the whole test near 5 minutes; CRASH_STATES scales
	# them all.  A sanitizer build gets 2/5 of the states, the self-test
	# at least 40.
	STATES=${CRASH_STATES:-120}
	[ -n "${CRASH_STATES:-}" ] || [ "$SAN_BUILD" = 0 ] || STATES=$((STATES * 2 / 5))
	CELLS=("ext4 upgrade unpkg:auto $STATES"
		"ext4 upgrade unpkg:dpkg $STATES"
		"xfs upgrade unpkg:auto $((STATES * 3 / 4))"
		"btrfs upgrade unpkg:auto $((STATES * 3 / 4))"
		"ext4+overlay remove unpkg:auto $((STATES / 2))")
	SELFTEST_STATES=${CRASH_SELFTEST_STATES:-$((STATES / 2))}
	[ -n "${CRASH_SELFTEST_STATES:-}" ] || [ "$SELFTEST_STATES" -ge 40 ] || SELFTEST_STATES=40
	if [ "${CRASH_SELFTEST:-1}" = 1 ]; then
		CELLS+=("ext4 upgrade unpkg:none $SELFTEST_STATES")
	fi
fi
FSES=$(for c in "${CELLS[@]}"; do echo "${c%% *}"; done | sort -u)
ONLY=${CRASH_ONLY:-}
MAXSHOW=${CRASH_MAXSHOW:-5}
# The self-tests of the harness (a damaged state, a pinned state) run
# with every matrix but one that checks chosen states only.
SELFTESTS=0
if [ "${CRASH_SELFTEST:-1}" = 1 ] && [ -z "$ONLY" ]; then
	SELFTESTS=1
	grep -qw ext4 <<<"$FSES" || SELFTESTS=0
fi
# Tags of known unpkg bugs (doc/reliability.md); a finding whose every
# violation carries one of them does not fail the test.  (The two this
# harness saw, dir-mode and obsolete-left, are fixed.)
KNOWN_BUGS=" "
declare -A KNOWN_SEEN=()

# --- preconditions ------------------------------------------------------------
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE is not available)"
{ exec 3<>/dev/fuse; } 2>/dev/null || skip "cannot open /dev/fuse here"
exec 3>&-
for fs in $FSES; do
	# (an overlay variant: its base file system, and overlayfs)
	bfs=${fs%+overlay}
	case $bfs in
	ext4) need_cmd mkfs.ext4 e2fsck ;;
	xfs) need_cmd mkfs.xfs xfs_repair ;;
	btrfs) need_cmd mkfs.btrfs btrfs ;;
	*) hard_error "CRASH_FS: ext4, xfs or btrfs, each alone or +overlay, not $fs" ;;
	esac
	grep -qw "$bfs" /proc/filesystems || modprobe "$bfs" 2>/dev/null ||
		skip "the kernel has no $bfs"
	if [ "$bfs" != "$fs" ]; then
		grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
			skip "CRASH_FS $fs: the kernel has no overlayfs (module overlay)"
	fi
done
W=$TESTDIR/w
mkdir -p "$W"
# The images are sparse; on a tmpfs, copying and replaying them is cheap.
mount -t tmpfs -o size=6g,mode=0700 unpkg-powerloss "$W" 2>/dev/null ||
	skip "cannot mount file systems here"
register_mount "$W"
mkdir -p "$W/m" "$W/fuse" "$W/ov"
# the scratch files of the checks (invariants.sh)
INV_WORK=$W
truncate -s 1M "$W/probe.img"
probe=$(losetup --find --show "$W/probe.img" 2>/dev/null) ||
	skip "cannot attach a loop device here (no free loop device or no loop driver)"
losetup -d "$probe"
rm -f "$W/probe.img"

# --- cleanup: nothing mounted, attached or running is left behind ------------
LOOPS=()
IMGFS_PID=
BYSTANDER_PID=
PIN_PID=
# How long a file system or loop device may take to go after its umount
# or "losetup -d" (udev's probes hold a new device for a moment).
RELEASE_WAIT_S=${CRASH_RELEASE_WAIT_S:-5}

# loop_file DEV: the file DEV is attached to ("" if none; " (deleted)"
# follows a removed one).
loop_file() {
	cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null || true
}

# fs_alive DEV: a file system on DEV still lives, in this mount namespace
# or in any other (sysfs lists each one until it is shut down).
fs_alive() {
	local n=${1#/dev/}
	[ -e "/sys/fs/ext4/$n" ] || [ -e "/sys/fs/xfs/$n" ] ||
		compgen -G "/sys/fs/btrfs/*/devices/$n" >/dev/null ||
		findmnt -rn -S "$1" >/dev/null
}

# loop_holds DEV FILE: DEV is still attached to FILE.
loop_holds() {
	local f
	f=$(loop_file "$1")
	[ -n "$2" ] && [ "${f% (deleted)}" = "$2" ]
}

# await_gone CMD...: wait, at most RELEASE_WAIT_S seconds, until CMD fails.
await_gone() {
	local n=0
	while "$@"; do
		[ "$n" -lt $((RELEASE_WAIT_S * 20)) ] || return 1
		sleep 0.05
		n=$((n + 1))
	done
}

# holders DEV: the processes whose mount namespace has DEV mounted.
holders() {
	local mm f pid out=""
	mm=$(cat "/sys/block/${1#/dev/}/dev" 2>/dev/null) || mm=none
	for f in /proc/[0-9]*/mountinfo; do
		grep -qe " $mm " -e " $1 " "$f" 2>/dev/null || continue
		pid=${f#/proc/}
		pid=${pid%/mountinfo}
		out+=" $pid ($(cat "/proc/$pid/comm" 2>/dev/null))"
	done
	echo "${out:- none found}"
}

# elsewhere DEV WHAT: stop the test: a state lives on where the test
# cannot reach it, and what is built next could be written into it.
elsewhere() {
	hard_error "state still mounted elsewhere: $2 ($1, $(loop_file "$1"); mounted by:$(holders "$1")): a process that entered a new mount namespace while the state was mounted keeps it"
}

# The file system of the cell: FS as named in CRASH_FS, BFS without its
# "+overlay", OVERLAY 1 for an overlay variant; ROOT is the installer's
# root, ROOT_IN_FS where it lies in the base file system (run_cell).
BFS='' OVERLAY=0 ROOT='' ROOT_IN_FS=''

# ov_mount: for an overlay variant, a new overlay at $W/ov on the layers
# of the file system mounted at $W/m (overlayfs's default options);
# nothing otherwise.
ov_mount() {
	[ "$OVERLAY" = 1 ] || return 0
	mount -t overlay -o "lowerdir=$W/m/lower,upperdir=$W/m/upper,workdir=$W/m/work" \
		unpkg-powerloss-ov "$W/ov"
}

# unmount_state DEV: unmount $W/m, where DEV is mounted, the overlay on it
# first, and make sure its file system is gone in every mount namespace
# (an overlay still mounted anywhere would keep it alive).
unmount_state() {
	if mountpoint -q "$W/ov"; then
		umount "$W/ov" || hard_error "cannot unmount the overlay $W/ov ($1)"
		! mountpoint -q "$W/ov" || hard_error "an overlay is still mounted at $W/ov after umount ($1)"
	fi
	umount "$W/m" || hard_error "cannot unmount $W/m ($1)"
	await_gone fs_alive "$1" || elsewhere "$1" "its $BFS lives on after umount"
}

# attach FILE [losetup option...]: a new loop device on FILE, in DEV.
attach() {
	local f=$1
	shift
	DEV=$(losetup --find --show "$@" "$f") || hard_error "losetup failed on $f"
	LOOPS+=("$DEV")
}

# detach DEV: detach, make sure the device let go of its file, forget it.
# (On a device still in use, losetup -d only asks for the detach to
# happen when the last user goes, and succeeds.)
detach() {
	local d f keep=()
	f=$(loop_file "$1")
	f=${f% (deleted)}
	[ "$BFS" != btrfs ] || btrfs device scan --forget "$1" >/dev/null 2>&1 || true
	losetup -d "$1" || hard_error "cannot detach $1"
	for d in "${LOOPS[@]}"; do
		[ "$d" = "$1" ] || keep+=("$d")
	done
	LOOPS=("${keep[@]}")
	await_gone loop_holds "$1" "$f" || elsewhere "$1" "the loop device stays attached after losetup -d"
}

# leftovers: what this test still holds: loop devices on its files, its
# mounts, its imgfs; one line each.
leftovers() {
	local f b
	for f in /sys/block/loop*/loop/backing_file; do
		b=$(cat "$f" 2>/dev/null) || continue
		case $b in
		"$TESTDIR"/*) f=${f#/sys/block/}; echo "/dev/${f%%/*} on $b" ;;
		esac
	done
	if [ -n "$IMGFS_PID" ] && kill -0 "$IMGFS_PID" 2>/dev/null; then
		echo "imgfs (pid $IMGFS_PID)"
	fi
	local m
	for m in "$W/ov" "$W/m" "$W/fuse"; do
		! mountpoint -q "$m" || echo "mount $m"
	done
}

# stop PID: end a process of this test and reap it, whatever its status
# (not one for the ERR trap).
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

detach_all() {
	local d
	[ -z "$PIN_PID" ] || stop "$PIN_PID"
	[ -z "$BYSTANDER_PID" ] || stop "$BYSTANDER_PID"
	PIN_PID='' BYSTANDER_PID=''
	if mountpoint -q "$W/ov"; then
		umount "$W/ov" || umount -l "$W/ov"
	fi
	if mountpoint -q "$W/m"; then
		umount "$W/m" || umount -l "$W/m"
	fi
	for d in "${LOOPS[@]}"; do
		[ -n "$d" ] && losetup -d "$d"
	done
	LOOPS=()
	if mountpoint -q "$W/fuse"; then
		umount "$W/fuse" || umount -l "$W/fuse"
	fi
	if [ -n "$IMGFS_PID" ]; then
		stop "$IMGFS_PID"
		IMGFS_PID=
	fi
	return 0
}
# On every exit, a failing one too: release everything, then check that
# it is gone (a deferred detach is waited for), else say what is left and
# fail (exit 99 when the test itself had passed).
cleanup_powerloss() {
	local rc=$? left
	set +e
	trap - ERR
	detach_all
	local n=0
	while left=$(leftovers) && [ -n "$left" ] && [ "$n" -lt $((RELEASE_WAIT_S * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ -n "$left" ]; then
		printf '%s: ERROR: left behind (state still mounted elsewhere?):\n%s\n' "$TEST_NAME" "$left" >&2
		[ "$rc" -ne 0 ] || rc=99
	fi
	n=0
	while mountpoint -q "$W" && ! umount "$W" 2>/dev/null && [ "$n" -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if mountpoint -q "$W"; then
		echo "$TEST_NAME: ERROR: cannot unmount $W" >&2
		[ "$rc" -ne 0 ] || rc=99
	fi
	(exit "$rc")
	on_exit
}
trap cleanup_powerloss EXIT
# (a signal ends the test through the same release)
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# --- file systems ---------------------------------------------------------------
# (of the base file system, BFS, in an overlay variant)
fs_size() {
	case $1 in
	ext4) echo 64M ;;
	xfs) echo 300M ;;	# mkfs.xfs refuses smaller ones since xfsprogs 5.19
	btrfs) echo 128M ;;	# mkfs.btrfs: at least 114 MiB
	esac
}
fs_mkfs() {
	case $BFS in
	ext4) mkfs.ext4 -q -F -b 4096 "$1" ;;
	xfs) mkfs.xfs -q -f "$1" ;;
	btrfs) mkfs.btrfs -q -f "$1" >/dev/null ;;
	esac
}
fs_mount() {
	case $BFS in
	ext4) mount -t ext4 -o noauto_da_alloc "$1" "$2" ;;
	*) mount -t "$BFS" "$1" "$2" ;;
	esac
}
# fs_check DEV: the read-only check of the file system; its report in
# $W/fsck.out, status 0 if clean.
fs_check() {
	case $BFS in
	ext4) e2fsck -fn "$1" >"$W/fsck.out" 2>&1 ;;
	xfs) xfs_repair -n "$1" >"$W/fsck.out" 2>&1 ;;
	btrfs) btrfs check --readonly "$1" >"$W/fsck.out" 2>&1 ;;
	esac
}

# --- fixtures -----------------------------------------------------------------
# text N WORD: N numbered lines (deterministic, about 20 bytes each).
text() {
	seq -f "$2 line %.0f" 1 "$1"
}
T1=1000000000 T2=1100000000
stamp() {
	find "$1" -path "$1/DEBIAN" -prune -o -exec touch -h -d "@$2" {} +
}

stage=$TESTDIR/keeper
new_pkg "$stage" keeper 1.0
mkdir -p "$stage/usr/share/keeper" "$stage/usr/share/common" "$stage/etc"
text 3000 keeper >"$stage/usr/share/keeper/data"
echo 'keeper, in a shared directory' >"$stage/usr/share/common/keeper"
echo 'keeper = 1' >"$stage/etc/keeper.conf"
echo /etc/keeper.conf >"$stage/DEBIAN/conffiles"
stamp "$stage" "$T1"
KEEPER=$TESTDIR/keeper_1.0_all.deb
build_deb "$KEEPER" "$stage"

# alpha VERSION TIME: files that change, stay, go and come, a file that
# becomes a symlink, a hardlink pair, another owner, a conffile, files of
# a few hundred KiB (many 4 KiB units, so torn writes show).
make_alpha() {
	local v=$1 t=$2 s=$TESTDIR/alpha$1 a
	new_pkg "$s" alpha "$v"
	a=$s/usr/share/alpha
	mkdir -p "$a/deep/er" "$s/usr/bin" "$s/etc/alpha" "$s/usr/share/common"
	text 12000 "alpha big $v" >"$a/big"
	ln "$a/big" "$a/big-link"
	echo 'the same in both versions' >"$a/same"
	echo "nested $v" >"$a/deep/er/x"
	for i in 1 2 3 4 5 6; do
		text $((i * 150)) "alpha small $i $v" >"$a/small$i"
	done
	printf '#!/bin/sh\necho alpha %s\n' "$v" >"$s/usr/bin/alpha-run"
	chmod 0755 "$s/usr/bin/alpha-run"
	echo "owned by daemon $v" >"$a/daemon"
	chown 1:1 "$a/daemon"
	chmod 0640 "$a/daemon"
	echo "alpha = $v" >"$s/etc/alpha/alpha.conf"
	echo /etc/alpha/alpha.conf >"$s/DEBIAN/conffiles"
	if [ "$v" = 1.0 ]; then
		echo 'only in 1.0' >"$a/gone"
		mkdir -p "$a/olddir"
		text 500 'a tree 2.0 drops' >"$a/olddir/f"
		echo 'a file that becomes a symlink' >"$a/tolink"
		ln -s ../share/alpha/big "$s/usr/bin/alpha"
	else
		echo 'only in 2.0' >"$a/new"
		mkdir -p "$a/newdir"
		text 500 'a tree 1.0 lacked' >"$a/newdir/f"
		ln -s same "$a/tolink"
		ln -s ../share/alpha/same "$s/usr/bin/alpha"
	fi
	stamp "$s" "$t"
	build_deb "$TESTDIR/alpha_$v.deb" "$s"
}
make_beta() {
	local v=$1 t=$2 s=$TESTDIR/beta$1 so
	new_pkg "$s" beta "$v"
	echo "Depends: alpha (>= $v)" >>"$s/DEBIAN/control"
	so=libbeta.so.${v%%.*}
	mkdir -p "$s/usr/lib/beta" "$s/usr/share/doc/beta" "$s/usr/share/common"
	text 20000 "beta library $v" >"$s/usr/lib/beta/$so"
	ln -s "$so" "$s/usr/lib/beta/libbeta.so"
	text 40 "beta changelog $v" >"$s/usr/share/doc/beta/changelog"
	echo "Beta in a directory keeper owns, $v" >"$s/usr/share/common/beta"
	# interests nothing in the runs activates: every run changes
	# triggers/ (File, beta-one in 1.0, beta-two in 2.0)
	if [ "$v" = 1.0 ]; then
		printf 'interest-noawait beta-one\ninterest-noawait /usr/share/beta-watch\n'
	else
		printf 'interest beta-two\ninterest-noawait /usr/share/beta-watch\n'
	fi >"$s/DEBIAN/triggers"
	stamp "$s" "$t"
	build_deb "$TESTDIR/beta_$v.deb" "$s"
}
make_alpha 1.0 "$T1"
make_alpha 2.0 "$T2"
make_beta 1.0 "$T1"
make_beta 2.0 "$T2"

# The triggers scenario's packages: gamma has a file trigger on alpha's
# files (interest-noawait), delta an explicit trigger that zeta activates
# and awaits; the postinsts of gamma and delta append "NAME postinst
# ARGS" to /var/log/triggered and fsync it (T1: a package recorded
# processed has run its postinst).
make_trig() {
	local s=$TESTDIR/$1
	new_pkg "$s" "$1" 1.0
	printf '%s\n' "$2" >"$s/DEBIAN/triggers"
	if [ "$3" = postinst ]; then
		printf '#!/bin/sh\necho "%s postinst $*" >>/var/log/triggered\nsync /var/log/triggered\n' \
			"$1" >"$s/DEBIAN/postinst"
		chmod 0755 "$s/DEBIAN/postinst"
	fi
	mkdir -p "$s/usr/share/$1"
	text 200 "$1" >"$s/usr/share/$1/data"
	stamp "$s" "$T1"
	build_deb "$TESTDIR/$1_1.0.deb" "$s"
}

# The roots the scenarios start from, made once (copied with cp -a).
TPL_FRESH=$TESTDIR/tpl-fresh
TPL_OLD=$TESTDIR/tpl-old
prime_root "$TPL_FRESH"
"$UNPKG" --root="$TPL_FRESH" --sync=dpkg -i "$KEEPER" >/dev/null
cp -a "$TPL_FRESH" "$TPL_OLD"
"$UNPKG" --root="$TPL_OLD" --sync=dpkg -i "$TESTDIR/alpha_1.0.deb" "$TESTDIR/beta_1.0.deb" >/dev/null

# 2.0 unpacked over 1.0, the conffile waiting as NAME.dpkg-new
TPL_UNPACKED=$TESTDIR/tpl-unpacked
cp -a "$TPL_OLD" "$TPL_UNPACKED"
"$UNPKG" --root="$TPL_UNPACKED" --sync=dpkg --unpack "$TESTDIR/alpha_2.0.deb" "$TESTDIR/beta_2.0.deb" >/dev/null

# Pending triggers (a root with a shell for the postinsts): gamma and
# delta installed, then alpha 1.0, beta 1.0 and zeta without trigger
# processing: gamma and delta triggers-pending, zeta triggers-awaited.
TPL_TRIG=$TESTDIR/tpl-trig
if [[ " ${CELLS[*]} " == *" triggers "* ]]; then
	if have_busybox; then
		make_trig gamma 'interest-noawait /usr/share/alpha' postinst
		make_trig delta 'interest delta-trig' postinst
		make_trig zeta 'activate delta-trig' -
		shell_root "$TPL_TRIG"
		prime_root "$TPL_TRIG"
		mkdir -p "$TPL_TRIG/var/log"
		: >"$TPL_TRIG/var/log/triggered"
		"$UNPKG" --root="$TPL_TRIG" --sync=dpkg -i "$KEEPER" >/dev/null
		dpkg --root="$TPL_TRIG" -i "$TESTDIR/gamma_1.0.deb" "$TESTDIR/delta_1.0.deb" >/dev/null
		dpkg --root="$TPL_TRIG" --no-triggers -i "$TESTDIR/alpha_1.0.deb" \
			"$TESTDIR/beta_1.0.deb" "$TESTDIR/zeta_1.0.deb" >/dev/null
		[ "$(dpkg-query --root="$TPL_TRIG" -W -f='${db:Status-Status} ' gamma delta zeta)" = \
			"triggers-pending triggers-pending triggers-awaited " ] ||
			hard_error "the triggers template: gamma, delta not triggers-pending or zeta not triggers-awaited"
	else
		skip_part "the triggers scenario" "no static busybox at $BUSYBOX (package busybox-static) to run its postinsts"
		keep=()
		for c in "${CELLS[@]}"; do
			[[ " $c " == *" triggers "* ]] || keep+=("$c")
		done
		CELLS=("${keep[@]}")
	fi
fi

# A scenario: the root it starts from, the arguments of its run (and of
# the re-runs after a power cut), the packages of the run and the rules
# its states are judged by (INV_ACTION, invariants.sh).
scenario_tpl() {
	case $1 in
	fresh) echo "$TPL_FRESH" ;;
	upgrade | remove | purge) echo "$TPL_OLD" ;;
	configure) echo "$TPL_UNPACKED" ;;
	triggers) echo "$TPL_TRIG" ;;
	*) hard_error "unknown scenario $1" ;;
	esac
}
scenario_args() {
	case $1 in
	fresh) echo "-i $TESTDIR/alpha_1.0.deb $TESTDIR/beta_1.0.deb" ;;
	upgrade) echo "-i $TESTDIR/alpha_2.0.deb $TESTDIR/beta_2.0.deb" ;;
	configure) echo "--configure -a" ;;
	triggers) echo "--triggers-only -a" ;;
	remove) echo "--remove alpha beta" ;;
	purge) echo "--purge alpha beta" ;;
	esac
}
scenario_pkgs() {
	case $1 in
	triggers) echo gamma delta zeta ;;
	*) echo alpha beta ;;
	esac
}
scenario_action() {
	case $1 in
	fresh | upgrade) echo unpack ;;
	*) echo "$1" ;;
	esac
}
# by_dpkg SCENARIO: true if unpkg hands the scenario's action to stock
# dpkg, which knows no --sync: the unpkg rows then run without it, are
# all stock dpkg, and are reported, not judged.  Probed once.
declare -A BY_DPKG=()
by_dpkg() {
	if [ -z "${BY_DPKG[$1]:-}" ]; then
		BY_DPKG[$1]=0
		# shellcheck disable=SC2046
		! handed_to_dpkg "$(scenario_tpl "$1")" $(scenario_args "$1") || BY_DPKG[$1]=1
	fi
	[ "${BY_DPKG[$1]}" = 1 ]
}

# run_installer ROW ROOT ARG...: one run of the installer of ROW (of the
# scenario SCEN).
run_installer() {
	local row=$1 root=$2
	local -a sync=(--sync="${row#*:}")
	shift 2
	! by_dpkg "$SCEN" || sync=()
	case $row in
	unpkg:*) "$UNPKG" --root="$root" "${sync[@]}" "$@" ;;
	unpkg-broken:*)
		[ -x "${CRASH_BROKEN_UNPKG:-}" ] ||
			hard_error "row $row needs CRASH_BROKEN_UNPKG (a build with -DUNPKG_BROKEN_RENAME_FIRST)"
		"$CRASH_BROKEN_UNPKG" --root="$root" "${sync[@]}" "$@" ;;
	dpkg-safe) dpkg --root="$root" --refuse-unsafe-io "$@" ;;
	dpkg-unsafe) dpkg --root="$root" --force-unsafe-io "$@" ;;
	*) hard_error "unknown row $row" ;;
	esac
}

# --- what a root looks like ---------------------------------------------------
# statuses, fingerprint, pkg_paths and the checks of I1-I7 are shared with
# tests/integration/faults.sh (tests/integration/invariants.sh); a cell's
# reference (old.* and new.* snapshots, paths, versions) is in $C.

# --- one cell: record, then replay ---------------------------------------------

# bystander FILE: append a line to FILE and fsync it, every BYSTANDER_MS
# milliseconds, until killed.
BYSTANDER_MS=${CRASH_BYSTANDER_MS:-10}
# A slow disk: each write of the recorded run takes this long, so the
# installer's writes are still in flight when its (or the bystander's)
# flushes are issued.
WRITE_LATENCY_US=${CRASH_WRITE_LATENCY_US:-1000}
# Seconds between the installer's exit and the bystander's last fsync.
IDLE_S=${CRASH_IDLE_S:-6}
bystander() {
	trap - ERR
	trap 'exit 0' TERM
	local i=0 pause
	# worked out once: a TERM arriving while bash parses a command
	# substitution runs the trap in the parser's state ("trap: line 2:
	# unexpected EOF while looking for matching `)'") and exits 2
	pause=0.$(printf '%03d' "$BYSTANDER_MS")
	while :; do
		i=$((i + 1))
		echo "bystander $i" >>"$1"
		sync "$1"
		sleep "$pause"
	done
}

# record_cell: the recorded crash-free run of ROW/SCEN on FS, and what
# the states are compared with (files in $C).
record_cell() {
	local tpl size dev rc
	tpl=$(scenario_tpl "$SCEN")
	by_dpkg "$SCEN" || true # (probed here, not in the recorded run)
	size=$(fs_size "$BFS")
	rm -rf "$C"
	mkdir -p "$C"

	# BASE: the file system with the root as it is before the run.
	truncate -s "$size" "$C/base.img"
	attach "$C/base.img"
	dev=$DEV
	fs_mkfs "$dev" || hard_error "mkfs.$BFS failed"
	fs_mount "$dev" "$W/m" || hard_error "cannot mount the new $BFS"
	if [ "$OVERLAY" = 1 ]; then
		# the root an image layer; lower.fp: its exact content, which
		# no state may change (check_state)
		mkdir "$W/m/lower" "$W/m/upper" "$W/m/work"
		cp -a "$tpl" "$W/m/lower/root"
		fingerprint "$W/m/lower/root" db >"$C/lower.fp"
		[ ! -s "$W/fp.err" ] || hard_error "cannot read the lower layer: $(head -n 3 "$W/fp.err")"
		ov_mount || hard_error "cannot mount an overlay on the new $BFS"
	else
		cp -a "$tpl" "$W/m/root"
	fi
	read -ra PKGS <<<"$(scenario_pkgs "$SCEN")"
	inv_snapshot "$ROOT" "$C" old "${PKGS[@]}"
	unmount_state "$dev"
	detach "$dev"

	# The recorded run: imgfs logs the stream the loop device sends.
	cp --sparse=always "$C/base.img" "$C/rec.img"
	setsid "$IMGFS" -f --log "$C/log" --write-latency-us "$WRITE_LATENCY_US" \
		"$C/rec.img" "$W/fuse" \
		</dev/null >"$C/imgfs.err" 2>&1 &
	IMGFS_PID=$!
	local tries=0
	until [ -e "$W/fuse/disk" ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 200 ] || { cat "$C/imgfs.err" >&2; hard_error "imgfs did not start"; }
		sleep 0.05
	done
	attach "$W/fuse/disk" --direct-io=on
	dev=$DEV
	local q=/sys/block/${dev#/dev/}
	echo 2 >"$q/queue/nomerges" || hard_error "cannot turn off merging on $dev"
	[ "$(cat "$q/loop/dio")" = 1 ] || note "warning: $dev does not use direct I/O"
	[ "$(cat "$q/queue/write_cache")" = "write back" ] ||
		hard_error "$dev does not announce a volatile write cache: file systems would send no flushes"
	fs_mount "$dev" "$W/m" || hard_error "cannot mount the recorded $BFS"
	if [ "$OVERLAY" = 1 ]; then
		ov_mount || hard_error "cannot mount an overlay on the recorded $BFS"
		note "overlay: $(findmnt -rn -o OPTIONS "$W/ov")"
	fi
	# A busy system: while the installer runs, another program appends to
	# a log file of the same file system and fsyncs it every few
	# milliseconds (as journald or a database would).  Each of its fsyncs
	# commits the file system journal with whatever the installer did so
	# far, the way the periodic commit does on a real machine, so metadata
	# of the run (renames) may become durable before its data.
	bystander "$W/m/bystander" &
	BYSTANDER_PID=$!
	# shellcheck disable=SC2046
	run_logged "$C/run" run_installer "$ROW" "$ROOT" $(scenario_args "$SCEN")
	rc=$RUN_RC
	stop "$BYSTANDER_PID"
	BYSTANDER_PID=
	[ "$rc" -eq 0 ] || {
		show_file "$C/run.err" "$ROW stderr"
		hard_error "the crash-free run of $ROW failed (exit $rc)"
	}
	# Then a quiet moment, as after most installs: the file system's
	# periodic commit (ext4: every 5 s) makes whatever metadata the run
	# left in memory durable, without anyone asking; the recording covers
	# it (a power cut a few seconds after the installer exited).
	sleep "$IDLE_S"
	# A bystander: some other program fsyncs a file of the same file
	# system after the run, as apt, a logger or the next install would.
	# Its journal commit makes the run's metadata durable; a run that
	# relied on the kernel writing its data back later is caught here.
	echo "written after the run" >"$W/m/bystander"
	sync "$W/m/bystander"
	if [ "$OVERLAY" = 1 ]; then
		# the result as a new overlay reads it from the layers, as
		# each state's checks and re-runs do (the umount syncs the
		# base file system: recorded, after every state that matters)
		umount "$W/ov" || hard_error "cannot unmount the overlay of the recorded run"
		ov_mount || hard_error "cannot mount an overlay again on the recorded $BFS"
	fi
	inv_snapshot "$ROOT" "$C" new "${PKGS[@]}"
	unmount_state "$dev"
	detach "$dev"
	umount "$W/fuse"
	wait "$IMGFS_PID" || hard_error "imgfs failed: $(cat "$C/imgfs.err")"
	IMGFS_PID=
	INV_ACTION=$(scenario_action "$SCEN") inv_reference "$C" "${PKGS[@]}"
	"$CRASHIMG" info "$C/log" >"$C/info" || hard_error "crashimg: bad log"
	# The whole log on BASE must give the final image.
	rm -f "$C/check.img"
	"$CRASHIMG" build "$C/log" "$C/base.img" "$C/check.img" \
		"$(awk 'NR == 1 { print $2 }' "$C/info")" all >/dev/null
	cmp -s "$C/check.img" "$C/rec.img" ||
		hard_error "the replayed log is not the final image: the recording is incomplete"
	rm -f "$C/check.img" "$C/rec.img"
}

# pick_states BUDGET: "K SEED" lines: the bare prefix of every flush point
# and the final image first, then random subsets round-robin over the
# intervals that have writes (seeds 1, 2, ...), BUDGET in all.  With a
# budget smaller than the flush points, they are thinned out evenly.
pick_states() {
	awk -v budget="$1" '
	NR == 1 { nf = $2; next }
	{ k[NR - 2] = $1; u[NR - 2] = $4 }
	END {
		base = nf + 2
		if (budget < base) {
			for (i = 0; i < budget; i++) print int(i * (nf + 1) / budget), 0
			exit
		}
		for (i = 0; i <= nf; i++) print i, 0
		print nf, "all"
		left = budget - base
		nw = 0
		for (i = 0; i <= nf; i++) if (u[i] > 0) w[nw++] = i
		for (seed = 1; left > 0 && nw > 0; seed++)
			for (j = 0; j < nw && left > 0; j++) {
				# an interval of U units has at most 2^U subsets
				if (u[w[j]] < 20 && seed >= 2 ^ u[w[j]]) continue
				print w[j], seed; left--
			}
	}' "$C/info"
}

# pin_state: the regression test of a state pinned from another mount
# namespace (CRASH_PIN_AT): a process enters a new mount namespace while
# the state is mounted, and keeps the copy of that mount it got.
pin_state() {
	unshare -m --propagation private sleep "${CRASH_PIN_S:-60}" &
	PIN_PID=$!
	local n=0
	until grep -q " $W/m " "/proc/$PIN_PID/mountinfo" 2>/dev/null &&
		[ "$(readlink "/proc/$PIN_PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]; do
		n=$((n + 1))
		[ "$n" -lt 100 ] || hard_error "the pinning process did not start"
		sleep 0.05
	done
	note "state $STATE_NO pinned by pid $PIN_PID from its own mount namespace"
}

# damage_state IMG: the damaged-state self-test (DAMAGE_STATE): make
# keeper's data file unreadable in a cleanly unmounted ext4 image (an
# extent header that is not one: reading it fails with EUCLEAN, "Structure
# needs cleaning").
damage_state() {
	debugfs -w -R "sif $ROOT_IN_FS/usr/share/keeper/data block[0] 0x12345678" "$1" \
		>"$W/debugfs.out" 2>&1 || hard_error "debugfs: $(cat "$W/debugfs.out")"
}

# check_state K SEED: build and check one crash state; its violations in
# $W/viol (empty if none), its file-system verdict in FS_VERDICT.  The
# state is made in a new file, STATE_IMG (the caller removes it), on a new
# loop device: never in a file an earlier state's file system could still
# write to.  A file that cannot be read is a finding of class FS.
STATE_NO=0
check_state() {
	local k=$1 seed=$2 dev desc
	local v=$W/viol
	: >"$v"
	FS_VERDICT=clean
	STATE_NO=$((STATE_NO + 1))
	STATE_IMG=$W/st-$k-$seed.img
	desc=$("$CRASHIMG" build "$C/log" "$C/base.img" "$STATE_IMG" "$k" "$seed") ||
		hard_error "crashimg build $k $seed failed"
	STATE_DESC=$desc
	[ -z "${DAMAGE_STATE:-}" ] || damage_state "$STATE_IMG"
	attach "$STATE_IMG"
	dev=$DEV
	if ! fs_mount "$dev" "$W/m" 2>"$W/mount.err"; then
		FS_VERDICT=unmountable
		echo "FS: does not mount: $(head -c 200 "$W/mount.err" | tr '\n' ' ')" >>"$v"
		detach "$dev"
		return
	fi
	if ! ov_mount 2>"$W/mount.err"; then
		FS_VERDICT=unmountable
		echo "FS: its overlay does not mount: $(head -c 200 "$W/mount.err" | tr '\n' ' ')" >>"$v"
		unmount_state "$dev"
		detach "$dev"
		return
	fi
	[ "${CRASH_PIN_AT:-0}" != "$STATE_NO" ] || pin_state
	local r=$ROOT
	# I2: nothing next to the root.
	if [ "$OVERLAY" = 0 ]; then
		find "$W/m" -mindepth 1 -maxdepth 1 ! -name root ! -name lost+found ! -name bystander \
			-printf 'I2: outside the root: %P\n' >>"$v" 2>"$W/find.err" || true
	else
		# An overlay: the layers, lost+found and the bystander's file
		# at the top of the base file system; root alone at the top of
		# the overlay and of upper/ (what was made next to the root is
		# in both, a whiteout of something next to it in upper/ only);
		# in work/, overlayfs's own work/ and index/, not looked into:
		# its scratch space (copy-ups under way), emptied by every
		# mount.  Whiteouts and opaque directories in upper/root are
		# how the overlay records removals: judged, like the rest of
		# the root, through the overlay.  lower/ is a layer no writer
		# reaches: its exact content, database included, as on BASE.
		{
			find "$W/m" -mindepth 1 -maxdepth 1 ! -name lower ! -name upper ! -name work \
				! -name lost+found ! -name bystander -printf 'I2: next to the layers: %P\n'
			find "$W/ov" -mindepth 1 -maxdepth 1 ! -name root -printf 'I2: outside the root: %P\n'
			find "$W/m/upper" -mindepth 1 -maxdepth 1 ! -name root -printf 'I2: in upper/, outside the root: %P\n'
			find "$W/m/work" -mindepth 1 -maxdepth 1 ! -name work ! -name index -printf 'I2: in work/: %P\n'
		} >>"$v" 2>"$W/find.err" || true
		fingerprint "$W/m/lower/root" db >"$W/lower.fp"
		inv_read_errors "$v" "the lower layer" "$W/fp.err"
		if ! cmp -s "$C/lower.fp" "$W/lower.fp"; then
			echo "I2: the lower layer changed: $({ diff "$C/lower.fp" "$W/lower.fp" || true; } | sed -n '/^[<>]/p' | head -n 3 | tr '\n' ' ')" >>"$v"
		fi
	fi
	inv_read_errors "$v" "the top of the file system" "$W/find.err"
	# I1, I3, I4, I5, I7, I8
	inv_check_state "$r" "$C" "$v"
	unmount_state "$dev"
	# Damage the journal recovery did not mend.
	if ! fs_check "$dev"; then
		FS_VERDICT=damaged
		echo "FS: $BFS check reports damage: $(grep -v '^$' "$W/fsck.out" | tail -n 3 | tr '\n' ' ')" >>"$v"
	fi
	# I6: the same install again converges, and a second one is a no-op.
	if ! fs_mount "$dev" "$W/m" 2>"$W/mount.err"; then
		echo "FS: does not mount a second time" >>"$v"
		detach "$dev"
		return
	fi
	if ! ov_mount 2>"$W/mount.err"; then
		echo "FS: its overlay does not mount a second time: $(head -c 200 "$W/mount.err" | tr '\n' ' ')" >>"$v"
		unmount_state "$dev"
		detach "$dev"
		return
	fi
	# shellcheck disable=SC2046
	run_logged "$W/rerun" run_installer "$ROW" "$r" $(scenario_args "$SCEN")
	if [ "$RUN_RC" -ne 0 ]; then
		echo "I6: the re-run exits $RUN_RC: $(grep -v '^ ' "$W/rerun.err" | tail -n 3 | tr '\n' ' ')" >>"$v"
	fi
	# (leaves the fingerprint of the re-run's root in $W/conv.fp)
	inv_check_converged "$r" "$C" "$v"
	# shellcheck disable=SC2046
	run_logged "$W/rerun2" run_installer "$ROW" "$r" $(scenario_args "$SCEN")
	fingerprint "$r" db >"$W/conv2.fp"
	if [ "$RUN_RC" -ne 0 ] || ! cmp -s "$W/conv.fp" "$W/conv2.fp"; then
		echo "I6: a second re-run (exit $RUN_RC) changed: $(diff "$W/conv.fp" "$W/conv2.fp" | sed -n '/^[<>]/p' | head -n 3 | tr '\n' ' ')" >>"$v"
	fi
	unmount_state "$dev"
	detach "$dev"
	if [ "$FS_VERDICT" = clean ] && grep -q '^FS: ' "$v"; then
		FS_VERDICT=unreadable
	fi
}

# classify: the tag of the violations in $W/viol: "known TAG" when every
# invariant violation carries the same known-bug tag, else "new".
classify() {
	awk -v known="$KNOWN_BUGS" '
	/^ / { next }
	{
		if (match($0, /\[known bug: [a-z-]+\]/)) {
			t = substr($0, RSTART + 12, RLENGTH - 13)
			if (index(known, " " t " ")) { tags[t] = 1; next }
		}
		nk++
	}
	END {
		n = 0; for (t in tags) { n++; tag = t }
		if (nk || n != 1) print "new"; else print "known", tag
	}' "$W/viol"
}

# run_cell FS SCEN ROW BUDGET
run_cell() {
	FS=$1 SCEN=$2 ROW=$3
	BFS=${FS%+overlay} OVERLAY=0 ROOT=$W/m/root ROOT_IN_FS=/root
	if [ "$BFS" != "$FS" ]; then
		OVERLAY=1 ROOT=$W/ov/root ROOT_IN_FS=/lower/root
	fi
	local budget=$4 states=0 bad=0 fsbad=0 known=0 shown=0 k seed line t0 t1 inv
	local -A per=()
	C=$W/cell
	t0=$(date +%s)
	section "$FS / $SCEN / $ROW"
	record_cell
	local nf writes
	nf=$(awk 'NR == 1 { print $2 }' "$C/info")
	writes=$(awk 'NR > 1 { n += $4 } END { print n + 0 }' "$C/info")
	t1=$(date +%s)
	note "recorded: $nf flushes, $writes units of 4 KiB written ($((t1 - t0)) s); checking up to $budget states"
	if [ -n "$ONLY" ]; then
		tr ',' '\n' <<<"$ONLY" | tr ':' ' ' >"$C/states"
	else
		pick_states "$budget" >"$C/states"
	fi
	# (read first: no file of $W stays open if the test stops in the loop)
	local states_list
	mapfile -t states_list <"$C/states"
	for k in "${states_list[@]}"; do
		seed=${k#* } k=${k%% *}
		check_state "$k" "$seed"
		states=$((states + 1))
		if [ -n "${CRASH_KEEP_STATE:-}" ]; then
			mkdir -p "$CRASH_KEEP_STATE"
			cp --sparse=always "$STATE_IMG" "$CRASH_KEEP_STATE/state-$FS-$k-$seed.img"
			cp --sparse=always "$C/base.img" "$C/log" "$CRASH_KEEP_STATE/"
		fi
		rm -f "$STATE_IMG"
		if [ "$FS_VERDICT" != clean ]; then
			fsbad=$((fsbad + 1))
		fi
		if [ -s "$W/viol" ]; then
			read -r t tag < <(classify)
			if [ "$t" = known ] && [ "$FS_VERDICT" = clean ]; then
				known=$((known + 1))
				KNOWN_SEEN[$tag]=$((${KNOWN_SEEN[$tag]:-0} + 1))
			else
				bad=$((bad + 1))
			fi
			for inv in $(grep -o '^[IST][0-9]\|^FS' "$W/viol" | sort -u || true); do
				per[$inv]=$((${per[$inv]:-0} + 1))
			done
			if [ "$shown" -lt "$MAXSHOW" ]; then
				shown=$((shown + 1))
				note "state K=$k SEED=$seed (flush $k of $nf; units/taken: $(cut -d' ' -f3,4 <<<"$STATE_DESC")), file system $FS_VERDICT:"
				sed -n '1,30s/^/    /p' "$W/viol"
				echo "    reproduce: CRASH_FS=$FS CRASH_SCENARIOS=$SCEN CRASH_ROWS=$ROW CRASH_ONLY=$k:$seed make check TESTS=tests/crash/powerloss.sh"
			fi
		fi
		if [ $((states % 25)) -eq 0 ]; then
			note "... $states states, $bad with violations, $known known, $fsbad file-system damage ($(($(date +%s) - t0)) s)"
		fi
	done
	local by=""
	for inv in I1 I2 I3 I4 I5 I6 I7 I8 S1 S2 S3 T1 FS; do
		[ -z "${per[$inv]:-}" ] || by+=" $inv=${per[$inv]}"
	done
	line="$FS $SCEN $ROW flushes=$nf states=$states violations=$bad known=$known fsdamage=$fsbad by:${by:- none} seconds=$(($(date +%s) - t0)) replay=$(($(date +%s) - t1))"
	note "RESULT $line"
	[ -z "${CRASH_RESULTS:-}" ] || echo "$line" >>"$CRASH_RESULTS"
	CELL_BAD=$bad CELL_KNOWN=$known CELL_FS=$fsbad
	CELL_I1=${per[I1]:-0} CELL_I8=${per[I8]:-0}
}

# --- self-tests of the harness itself ------------------------------------------

# damage_selftest: after an ext4 cell, its final image with keeper's data
# file made unreadable (damage_state) must be reported as a finding of
# class FS with the state, and the test must go on.
damage_selftest() {
	local nf
	nf=$(awk 'NR == 1 { print $2 }' "$C/info")
	section "self-test: a state with a file that cannot be read (EUCLEAN)"
	DAMAGE_STATE=1 check_state "$nf" all
	rm -f "$STATE_IMG"
	sed 's/^/    /' "$W/viol"
	if [ "$FS_VERDICT" != clean ] && grep -q '^FS: cannot read' "$W/viol"; then
		note "reported as file-system damage ($FS_VERDICT), the test goes on"
	else
		check_fail "self-test: an unreadable file in a state was not reported as FS (verdict $FS_VERDICT)"
	fi
}

# pin_selftest: the test run again, small, with its 3rd state pinned by a
# process in another mount namespace (CRASH_PIN_AT): it must stop with
# "state still mounted elsewhere", and leave no mount, loop device or
# process behind once the pin is gone.
pin_selftest() {
	local d=$TESTDIR/pin rc=0 f b left
	section "self-test: a state pinned from another mount namespace"
	mkdir -p "$d"
	env -u CRASH_RESULTS -u CRASH_KEEP_STATE -u CRASH_ONLY -u CRASH_MATRIX \
		UNPKG_TEST_TMPDIR="$d" CRASH_PIN_AT=3 CRASH_SELFTEST=0 CRASH_IDLE_S=0 \
		CRASH_FS=ext4 CRASH_SCENARIOS=upgrade CRASH_ROWS=unpkg:dpkg CRASH_STATES=6 \
		"$BASH" "$0" >"$d.log" 2>&1 || rc=$?
	grep -e 'pinned' -e 'ERROR' -e 'RESULT' "$d.log" | sed 's/^/    /'
	if [ "$rc" -eq 99 ] && grep -q 'state still mounted elsewhere' "$d.log"; then
		note "the pinned state stopped the test (exit 99) with the message"
	else
		check_fail "self-test: a state pinned from another mount namespace did not stop the test (exit $rc); its log:"
		sed 's/^/    | /' "$d.log" >&2
	fi
	left=
	for f in /sys/block/loop*/loop/backing_file; do
		b=$(cat "$f" 2>/dev/null) || continue
		case $b in "$d"/*) left+=" $b" ;; esac
	done
	[ -z "$(ls -A "$d")" ] || left+=" $(ls -A "$d")"
	[ -z "$left" ] || check_fail "self-test: the pinned run left behind:$left"
}

# --- the matrix -----------------------------------------------------------------
# Rules: an unpkg row must show no violation at all, of any kind (FS
# included), in every cell; unpkg:none (--force-unsafe-io, files may be
# lost) must show I1 in at least one cell, and no I8 and no file-system
# damage in any (its database stays whole); the rename-first build's
# EXPECT_VIOLATIONS rows must show violations in at least one cell; stock
# dpkg is reported, not judged.
declare -A ROW_BAD=() ROW_I1=() ROW_UNPACK=()
DAMAGE_DONE=0
for cell in "${CELLS[@]}"; do
	read -r FS SCEN ROW budget <<<"$cell"
	run_cell "$FS" "$SCEN" "$ROW" "$budget"
	ROW_BAD[$ROW]=$((${ROW_BAD[$ROW]:-0} + CELL_BAD))
	ROW_I1[$ROW]=$((${ROW_I1[$ROW]:-0} + CELL_I1))
	[ "$(scenario_action "$SCEN")" != unpack ] || ROW_UNPACK[$ROW]=1
	[ -z "$ONLY" ] || continue
	if by_dpkg "$SCEN"; then
		# (its rows are stock dpkg's: reported, not judged)
		[ "$CELL_BAD" -eq 0 ] ||
			note "$ROW on $FS/$SCEN: the run by stock dpkg: $CELL_BAD crash states violate the contract (reported, not judged)"
	elif [[ $EXPECT_LOSS == *" $ROW "* ]]; then
		if [ "$CELL_I8" -ne 0 ] || [ "$CELL_FS" -ne 0 ]; then
			check_fail "$ROW on $FS/$SCEN: $CELL_I8 crash states violate I8 (the database), $CELL_FS file-system damage: the database must stay whole in every mode"
		fi
	elif [[ $EXPECT_VIOLATIONS != *" $ROW "* ]] && [[ $ROW == unpkg:* ]] &&
		[ "$CELL_BAD" -ne 0 ]; then
		check_fail "$ROW on $FS/$SCEN: $CELL_BAD crash states violate the contract"
	fi
	if [ "$SELFTESTS" = 1 ] && [ "$DAMAGE_DONE" = 0 ] && [ "$BFS" = ext4 ] &&
		[[ $ROW == unpkg:* ]] && [[ $EXPECT_LOSS$EXPECT_VIOLATIONS != *" $ROW "* ]]; then
		damage_selftest
		DAMAGE_DONE=1
	fi
done
# The self-test: an installer that is unsafe by design must be caught
# (in at least one cell: a file system may hide a missing sync), among
# the cells where it unpacked packages: the other actions rename and
# remove files whose data is durable already, they write none that a
# missing sync or an early rename could lose.
for ROW in "${!ROW_BAD[@]}"; do
	[ -z "$ONLY" ] || break
	[ -n "${ROW_UNPACK[$ROW]:-}" ] || continue
	if [[ $EXPECT_VIOLATIONS == *" $ROW "* ]] && [ "${ROW_BAD[$ROW]}" -eq 0 ]; then
		check_fail "self-test: no violation found for $ROW, unsafe by design: the harness is broken"
	fi
	if [[ $EXPECT_LOSS == *" $ROW "* ]] && [ "${ROW_I1[$ROW]}" -eq 0 ]; then
		check_fail "self-test: no lost file data (I1) found for $ROW, unsafe by design: the harness is broken"
	fi
done
[ "$SELFTESTS" != 1 ] || pin_selftest
for tag in $KNOWN_BUGS; do
	if [ "${KNOWN_SEEN[$tag]:-0}" -gt 0 ]; then
		note "KNOWN BUG $tag: ${KNOWN_SEEN[$tag]} states (doc/reliability.md)"
	fi
done

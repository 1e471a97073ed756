#!/bin/bash
# faults.sh - unpkg killed or failing at every step of a run, and run in
# unusual environments; after each fault the crash-safety contract
# (DESIGN.md section 3, invariants I1-I7, and I8 of doc/design.md) is checked.
#
# Fixtures: "keeper" (installed before every scenario, never part of a
# run), "alpha" and "beta" in versions 1.0 and 2.0 with regular files, a
# file of another owner, a symlink, hardlink pairs, conffiles, nested
# directories; 2.0 changes files, drops files and a whole directory tree,
# adds new ones, turns a file into a symlink and retargets a symlink;
# "gamma" with a file trigger on alpha's files.
# Scenarios (the run; the re-run after a fault is the same command):
#   fresh      unpkg -i alpha_1.0 beta_1.0 on a root holding keeper
#   upgrade    unpkg -i alpha_2.0 beta_2.0 on a root holding keeper and 1.0
#   diverted   the upgrade, with alpha's /usr/share/alpha/a (hard-linked)
#              and /usr/share/alpha/gone (which 2.0 drops) diverted locally
#              (dpkg-divert --rename): 2.0's file and its hard link go to
#              the divert-to path, gone's diverted file is removed
#   configure  unpkg --configure -a, alpha and beta 2.0 unpacked over 1.0
#              (their conffiles waiting as NAME.dpkg-new)
#   confkeep   unpkg --force-confold --configure -a, the same with alpha's
#              conffile changed by the administrator: it is kept, the
#              package's version goes to NAME.dpkg-dist and its hash is
#              recorded (every call that changes the file system, auto)
#   triggers   unpkg --triggers-only -a, gamma triggers-pending after
#              alpha 1.0 was installed with --no-triggers
#   remove     unpkg --remove alpha beta, 1.0 installed
#   purge      unpkg --purge alpha beta, 1.0 installed
# The last four are judged by I1-I3, I6-I8 and the rules S1, S2, S3 of
# doc/design.md (invariants.sh), triggers by T1 too.  Where unpkg hands such an action to stock
# dpkg (which knows no --sync), its runs go without --sync, the strategies
# are one case, and what dpkg violates is reported, not judged.
#
# 1. SIGKILL at every step.  A crash-free run is traced first; then unpkg is
#    started again under strace with
#        -e inject=NAME:signal=KILL:when=K
#    which kills it on entry to the K-th call of NAME (that call does not
#    run).  strace counts per system call, so the pairs (NAME, K) taken
#    from the trace address every call of the run, numbered N here.
#    A SIGKILL loses nothing the kernel already accepted, so what a killed
#    run leaves behind only changes at calls that change the file system
#    (a successful write to a file, open with O_CREAT/O_TRUNC, mkdir,
#    rename, link, symlink, unlink, chmod, chown, utimensat, fallocate,
#    ...): killing before each of them reaches every state a kill can
#    leave.  Default selection (about two minutes): with the default
#    strategy (auto), every call of the run, changing or not, for the
#    fresh install and every second call that changes the file system
#    for the upgrade; with dpkg's, every second of those calls for the
#    upgrade and every fourth for the fresh install; about 12 per case
#    for the other strategies.
#    After each kill:
#      - dpkg-query -W and dpkg --audit accept the database (I3);
#      - every path of alpha and beta is byte-exact its old or its new
#        state: type, mode, owner, size, MD5, link target, mtime (I1);
#        nothing else appeared but *.dpkg-new / *.dpkg-tmp (I2);
#      - a package whose files mix old and new states is half-installed
#        with reinstreq; one recorded as unpacked/installed at a version
#        has that version's files and info/ files; one recorded at its old
#        version, or not at all, has no new file (I4, I5);
#      - keeper's files are untouched (I7), and its status entry and
#        info/ files (I8);
#      - unpkg run again without fault exits 0 and leaves exactly the
#        tree and database (tree_manifest + db_manifest) of the crash-free
#        run, with no *.dpkg-new / *.dpkg-tmp (I2, I6).
#    A self-test damages the root after one kill in six ways and requires
#    each to be reported; three more damages of a removal and a
#    configuration (a file of an installed package deleted, one of a
#    config-files package put back, a conffile's NAME.dpkg-new left under
#    installed) must be reported as S2, S1 and S3, and a pending trigger
#    of a killed trigger processing renamed as T1 (invariants.sh).
#    The other actions: the default strategy at every call that changes
#    the file system (every second one for remove and purge), about 12
#    points for each other strategy.  The upgrade and the removal on an
#    overlayfs's root (SCENARIO-overlay, the template its lower layer):
#    the default strategy at every call that changes the file system.
# 2. Failing system calls (strace error injection): ENOSPC at each write
#    to a file, EIO at each fdatasync / fsync / syncfs and each wait for
#    a file's writeback, sync_file_range with WAIT_AFTER (see fault_at for
#    what must hold afterwards); every one with auto and dpkg, about 12
#    syncs with the other strategies; EIO at every sync of the other
#    actions' scenarios with auto.
# 3. Environments: a read-only root, a read-only instdir with a writable
#    database, a root on tmpfs and a root on overlayfs (each compared with
#    dpkg on an identical root), and sync_file_range failing with ENOSYS
#    (the syncfs fallback, killed like in 1).
# doc/reliability.md has the results and the bugs this test found.  The
# checks of I1-I7 are in invariants.sh, shared with tests/crash/powerloss.sh.
#
# Environment:
#   UNPKG_FAULTS_FULL=changes every call that changes the file system of
#                             every case is a kill point, every fault of 2
#                             is injected (some minutes)
#   UNPKG_FAULTS_FULL=1       the same, but every single call of the runs
#                             is a kill point (about 45 minutes)
#   UNPKG_FAULTS_ONLY=S/T[:N[,N...]]
#                             kill only in scenario S (fresh, upgrade,
#                             diverted, fallback, configure, confkeep, triggers,
#                             remove, purge, upgrade-overlay, remove-overlay)
#                             with strategy T (auto, dpkg, ...),
#                             at every call that
#                             changes the file system or at the calls
#                             numbered N (to reproduce one finding)
#   UNPKG_FAULTS_ONLY=upgrade/T/enospc, S/T/eio, selftest
#                             only that part (several, separated by spaces:
#                             each of them, and the runs of part 2 listed)
#   UNPKG_FAULTS_STRICT=1     known bugs, and stock dpkg's violations,
#                             fail the test
#   UNPKG_FAULTS_MAXSHOW=N    violations printed in full per case (default 5)
#   UNPKG_FAULTS_TMPFS=0      run parts 1 and 2 in the scratch directory
#                             instead of a tmpfs
#   UNPKG_FAULTS_FS=TYPE      run them on a fresh file system of TYPE (ext4,
#                             xfs, ...) on a loop device instead: on ext4
#                             with a journal and xfs auto waits for the
#                             writeback where it would flush elsewhere
#                             (faults-ordered.sh)
# shellcheck source=tests/integration/lib.sh
. "${TESTLIB:?TESTLIB is not set}"
# shellcheck source=tests/integration/invariants.sh
. "$(dirname "$TESTLIB")/invariants.sh"
need_cmd strace cp awk sort cmp mountpoint

# strace must be able to trace and inject (ptrace may be forbidden).
if ! strace -f -qq -o /dev/null -e trace=getpid -e inject=getpid:error=ENOSYS \
	true 2>/dev/null; then
	skip "strace cannot trace or inject faults here (ptrace not permitted?)"
fi
# LeakSanitizer does not work under ptrace, and a killed run leaks by
# definition: leaks are checked by the untraced tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

FULL=${UNPKG_FAULTS_FULL:-0}
ONLY=${UNPKG_FAULTS_ONLY:-}
MAXSHOW=${UNPKG_FAULTS_MAXSHOW:-5}
# A SIGKILL loses nothing the kernel accepted, so the file system under
# the runs does not matter for part 1 and 2: a tmpfs makes the thousands
# of runs fast.  UNPKG_FAULTS_TMPFS=0 (or UNPKG_TEST_KEEP=1) keeps them in
# the scratch directory.
W=$TESTDIR/w
mkdir -p "$W"
if [ -n "${UNPKG_FAULTS_FS:-}" ]; then
	need_mounts
	need_cmd "mkfs.$UNPKG_FAULTS_FS"
	truncate -s 512M "$TESTDIR/w.img"
	case $UNPKG_FAULTS_FS in
	xfs | btrfs) "mkfs.$UNPKG_FAULTS_FS" -q -f "$TESTDIR/w.img" >/dev/null ;;
	*) "mkfs.$UNPKG_FAULTS_FS" -q -F "$TESTDIR/w.img" >/dev/null ;;
	esac
	mount -o loop -t "$UNPKG_FAULTS_FS" "$TESTDIR/w.img" "$W" ||
		hard_error "cannot mount a $UNPKG_FAULTS_FS image on $W"
	register_mount "$W"
	note "work directory on $UNPKG_FAULTS_FS"
elif [ "${UNPKG_FAULTS_TMPFS:-1}" = 1 ] && [ "${UNPKG_TEST_KEEP:-0}" != 1 ] &&
	mount -t tmpfs -o mode=0755 unpkg-faults "$W" 2>/dev/null; then
	register_mount "$W"
	note "work directory on a tmpfs"
fi
# Every run happens at this path, so traces of different runs compare.
ROOT=$W/root
# the scratch files of the checks (invariants.sh)
INV_WORK=$W

# --- fixtures ---------------------------------------------------------------

# lines N WORD: N numbered lines of text mentioning WORD (deterministic).
lines() {
	seq -f "$2 line %.0f" 1 "$1"
}

# stamp DIR TIME: every file of a staging directory gets the modification
# time TIME (seconds), so that the fixtures do not depend on the clock.
T1=1000000000 T2=1100000000
stamp() {
	find "$1" -path "$1/DEBIAN" -prune -o -exec touch -h -d "@$2" {} +
}

stage=$TESTDIR/keeper
new_pkg "$stage" keeper 1.0
mkdir -p "$stage/usr/share/keeper" "$stage/usr/share/common" "$stage/etc"
lines 200 keeper >"$stage/usr/share/keeper/data"
echo 'keeper file in a shared directory' >"$stage/usr/share/common/keeper"
echo 'keeper = 1' >"$stage/etc/keeper.conf"
echo /etc/keeper.conf >"$stage/DEBIAN/conffiles"
stamp "$stage" "$T1"
KEEPER=$TESTDIR/keeper_1.0_all.deb
build_deb "$KEEPER" "$stage"

# alpha 1.0 and 2.0
stage=$TESTDIR/alpha1
new_pkg "$stage" alpha 1.0
a=$stage/usr/share/alpha
mkdir -p "$a/olddir/deep" "$a/deep/er" "$stage/usr/bin" "$stage/etc/alpha" \
	"$stage/usr/share/common"
lines 3000 'alpha a 1.0' >"$a/a"
ln "$a/a" "$a/hl"
echo 'the same in both versions' >"$a/same"
echo 'only in 1.0' >"$a/gone"
echo 'a whole tree that 2.0 drops' >"$a/olddir/deep/f"
echo 'nested, changes' >"$a/deep/er/x"
echo 'a file that becomes a symlink' >"$a/tolink"
printf '#!/bin/sh\necho alpha 1.0\n' >"$stage/usr/bin/alpha-run"
chmod 0755 "$stage/usr/bin/alpha-run"
ln -s ../share/alpha/a "$stage/usr/bin/alpha"
echo 'alpha in a directory keeper owns' >"$stage/usr/share/common/alpha"
echo 'owned by daemon' >"$a/daemon"
chown 1:1 "$a/daemon"
chmod 0640 "$a/daemon"
echo 'alpha = 1' >"$stage/etc/alpha/alpha.conf"
echo /etc/alpha/alpha.conf >"$stage/DEBIAN/conffiles"
stamp "$stage" "$T1"
ALPHA1=$TESTDIR/alpha_1.0_all.deb
build_deb "$ALPHA1" "$stage"

stage=$TESTDIR/alpha2
new_pkg "$stage" alpha 2.0
a=$stage/usr/share/alpha
mkdir -p "$a/newdir/deep" "$a/deep/er" "$stage/usr/bin" "$stage/etc/alpha"
lines 3500 'alpha a 2.0' >"$a/a"
ln "$a/a" "$a/hl"
echo 'the same in both versions' >"$a/same"
echo 'only in 2.0' >"$a/new"
echo 'a whole tree that 1.0 lacked' >"$a/newdir/deep/f"
echo 'nested, changed' >"$a/deep/er/x"
ln -s same "$a/tolink"
printf '#!/bin/sh\necho alpha 2.0\n' >"$stage/usr/bin/alpha-run"
chmod 0755 "$stage/usr/bin/alpha-run"
ln -s ../share/alpha/same "$stage/usr/bin/alpha"
echo 'owned by daemon, 2.0' >"$a/daemon"
chown 1:1 "$a/daemon"
chmod 0640 "$a/daemon"
echo 'alpha = 2' >"$stage/etc/alpha/alpha.conf"
echo /etc/alpha/alpha.conf >"$stage/DEBIAN/conffiles"
stamp "$stage" "$T2"
ALPHA2=$TESTDIR/alpha_2.0_all.deb
build_deb "$ALPHA2" "$stage"

# beta 1.0 and 2.0 (beta depends on alpha: both are in every run)
stage=$TESTDIR/beta1
new_pkg "$stage" beta 1.0
echo 'Depends: alpha' >>"$stage/DEBIAN/control"
b=$stage/usr/lib/beta
mkdir -p "$b" "$stage/usr/share/beta" "$stage/usr/share/doc/beta" "$stage/etc"
lines 6000 'beta library 1' >"$b/libbeta.so.1"
ln -s libbeta.so.1 "$b/libbeta.so"
echo 'pair 1.0' >"$stage/usr/share/beta/p1"
ln "$stage/usr/share/beta/p1" "$stage/usr/share/beta/p2"
lines 20 'beta changelog 1.0' >"$stage/usr/share/doc/beta/changelog"
echo 'beta = same' >"$stage/etc/beta.conf"
echo /etc/beta.conf >"$stage/DEBIAN/conffiles"
# interests nothing in the runs activates: every run changes triggers/
printf 'interest-noawait beta-one\ninterest-noawait /usr/share/beta-watch\n' \
	>"$stage/DEBIAN/triggers"
stamp "$stage" "$T1"
BETA1=$TESTDIR/beta_1.0_all.deb
build_deb "$BETA1" "$stage"

stage=$TESTDIR/beta2
new_pkg "$stage" beta 2.0
echo 'Depends: alpha (>= 2.0)' >>"$stage/DEBIAN/control"
b=$stage/usr/lib/beta
mkdir -p "$b" "$stage/usr/share/beta" "$stage/usr/share/doc/beta" "$stage/etc"
lines 7000 'beta library 2' >"$b/libbeta.so.2"
ln -s libbeta.so.2 "$b/libbeta.so"
echo 'pair 2.0' >"$stage/usr/share/beta/p1"
ln "$stage/usr/share/beta/p1" "$stage/usr/share/beta/p2"
lines 25 'beta changelog 2.0' >"$stage/usr/share/doc/beta/changelog"
echo 'beta = same' >"$stage/etc/beta.conf"
echo /etc/beta.conf >"$stage/DEBIAN/conffiles"
printf 'interest beta-two\ninterest-noawait /usr/share/beta-watch\n' \
	>"$stage/DEBIAN/triggers"
stamp "$stage" "$T2"
# the same file in both versions, down to its time: dpkg keeps the
# installed copy of an unchanged conffile, unpkg replaces it, and only the
# time would tell (a difference reported in doc/reliability.md)
touch -d "@$T1" "$stage/etc/beta.conf"
BETA2=$TESTDIR/beta_2.0_all.deb
build_deb "$BETA2" "$stage"

# gamma: a file trigger on alpha's files (interest-noawait: alpha does
# not wait for it); no postinst (the roots have no shell to run one), so
# processing its trigger changes the database only
stage=$TESTDIR/gamma
new_pkg "$stage" gamma 1.0
mkdir -p "$stage/usr/share/gamma"
echo 'gamma watches alpha' >"$stage/usr/share/gamma/watch"
echo 'interest-noawait /usr/share/alpha' >"$stage/DEBIAN/triggers"
stamp "$stage" "$T1"
GAMMA=$TESTDIR/gamma_1.0_all.deb
build_deb "$GAMMA" "$stage"

# --- strategies ---------------------------------------------------------------

# The strategies this unpkg accepts, among those the design names.
STRATEGIES=()
for s in auto dpkg batch syncfs uring none; do
	rm -rf "$W/probe"
	mkdir "$W/probe"
	if "$UNPKG" --root="$W/probe" --sync="$s" --unpack "$KEEPER" \
		>/dev/null 2>"$W/probe.err"; then
		STRATEGIES+=("$s")
	else
		skip_part "--sync=$s" "unpkg refuses it here: $(head -n 1 "$W/probe.err")"
	fi
done
rm -rf "$W/probe"
[ "${#STRATEGIES[@]}" -gt 0 ] || hard_error "unpkg installs nothing with any --sync strategy"
note "strategies: ${STRATEGIES[*]}"

# unpkg_run ROOT STRATEGY ARG...: unpkg with a strategy, independent of
# the host's dpkg configuration (force-unsafe-io in a container).
unpkg_run() {
	local root=$1 s=$2
	shift 2
	"$UNPKG" --root="$root" --sync="$s" "$@"
}

# --- roots ------------------------------------------------------------------

# The roots a scenario starts from, made once and copied (cp -a keeps
# modes, owners, times and hardlinks; inode numbers do not matter).
TPL_FRESH=$W/tpl-fresh
TPL_OLD=$W/tpl-old
prime_root "$TPL_FRESH"
unpkg_run "$TPL_FRESH" dpkg -i "$KEEPER" >/dev/null
cp -a "$TPL_FRESH" "$TPL_OLD"
unpkg_run "$TPL_OLD" dpkg -i "$ALPHA1" "$BETA1" >/dev/null
# 2.0 unpacked over 1.0, its conffiles waiting as NAME.dpkg-new
TPL_UNPACKED=$W/tpl-unpacked
cp -a "$TPL_OLD" "$TPL_UNPACKED"
unpkg_run "$TPL_UNPACKED" dpkg --unpack "$ALPHA2" "$BETA2" >/dev/null
# the same with alpha's conffile changed by the administrator before
TPL_KEEP=$W/tpl-keep
cp -a "$TPL_OLD" "$TPL_KEEP"
echo 'alpha = the administrator'"'"'s' >"$TPL_KEEP/etc/alpha/alpha.conf"
unpkg_run "$TPL_KEEP" dpkg --unpack "$ALPHA2" "$BETA2" >/dev/null
# gamma triggers-pending: alpha 1.0 and beta installed without trigger
# processing after it
TPL_TRIG=$W/tpl-trig
cp -a "$TPL_FRESH" "$TPL_TRIG"
dpkg --root="$TPL_TRIG" -i "$GAMMA" >/dev/null
dpkg --root="$TPL_TRIG" --no-triggers -i "$ALPHA1" "$BETA1" >/dev/null
[ "$(dpkg-query --root="$TPL_TRIG" -W -f='${db:Status-Status}' gamma)" = triggers-pending ] ||
	hard_error "the triggers template: gamma is not triggers-pending"
TPL_DIV=$W/tpl-div
cp -a "$TPL_OLD" "$TPL_DIV"
for f in a gone; do
	dpkg-divert --root="$TPL_DIV" --local --rename --quiet \
		--divert "/usr/share/alpha/$f.distrib" --add "/usr/share/alpha/$f"
done

# reset_root TEMPLATE: ROOT becomes a fresh copy of TEMPLATE; in a case
# on an overlay (CASE_OVERLAY=1), the root of a fresh overlayfs with
# TEMPLATE as its lower layer, as in a container (redirect_dir off, the
# kernel's default: no directory of TEMPLATE can be renamed).
reset_root() {
	! is_mounted "$ROOT" || umount "$ROOT"
	rm -rf "$ROOT" "$W/ovl"
	if [ "${CASE_OVERLAY:-0}" = 0 ]; then
		cp -a "$1" "$ROOT"
		return 0
	fi
	mkdir -p "$ROOT" "$W/ovl/upper" "$W/ovl/work"
	[ -n "${ROOT_REGISTERED:-}" ] || register_mount "$ROOT"
	ROOT_REGISTERED=1
	mount -t overlay unpkg-faults-root -o \
		"lowerdir=$1,upperdir=$W/ovl/upper,workdir=$W/ovl/work,redirect_dir=off" \
		"$ROOT"
}

# The scenarios: what each starts from (scenario_template), the arguments
# of its run (scenario_args; the re-run that must converge is the same
# command again), the packages of the run (scenario_pkgs) and the rules its
# states are judged by (scenario_action, see invariants.sh).
# (SCENARIO-overlay: the same on an overlay's root, see reset_root)
scenario_template() {
	case ${1%-overlay} in
	fresh) echo "$TPL_FRESH" ;;
	upgrade | fallback | remove | purge) echo "$TPL_OLD" ;;
	diverted) echo "$TPL_DIV" ;;
	configure) echo "$TPL_UNPACKED" ;;
	confkeep) echo "$TPL_KEEP" ;;
	triggers) echo "$TPL_TRIG" ;;
	esac
}
scenario_args() {
	case ${1%-overlay} in
	fresh) echo "-i $ALPHA1 $BETA1" ;;
	upgrade | fallback | diverted) echo "-i $ALPHA2 $BETA2" ;;
	configure) echo "--configure -a" ;;
	confkeep) echo "--force-confold --configure -a" ;;
	triggers) echo "--triggers-only -a" ;;
	remove) echo "--remove alpha beta" ;;
	purge) echo "--purge alpha beta" ;;
	esac
}
scenario_pkgs() {
	case ${1%-overlay} in
	triggers) echo gamma ;;
	*) echo alpha beta ;;
	esac
}
scenario_action() {
	case ${1%-overlay} in
	fresh | upgrade | fallback | diverted) echo unpack ;;
	confkeep) echo configure ;;
	*) echo "${1%-overlay}" ;;
	esac
}
# sync_probe SCENARIO: SYNC_OK[SCENARIO] is 1 if unpkg takes --sync for
# the scenario's run, 0 where it hands the action to stock dpkg (which
# knows no --sync): the runs of such a scenario go without --sync, and its
# strategies are one.  Probed once, on a copy of the template.
declare -A SYNC_OK=()
# the scenarios of the actions other than unpacking
ACTION_SCENARIOS="configure triggers remove purge"
sync_probe() {
	local scen=$1 args
	[ -z "${SYNC_OK[$scen]:-}" ] || return 0
	read -ra args <<<"$(scenario_args "$scen")"
	SYNC_OK[$scen]=1
	if handed_to_dpkg "$(scenario_template "$scen")" "${args[@]}"; then
		SYNC_OK[$scen]=0
		skip_part "$scen with each --sync strategy" \
			"unpkg hands '${args[*]}' to stock dpkg, which knows no --sync: one case, without it"
	fi
}
# scenario_strace_opts SCENARIO: injections every run of the scenario gets.
scenario_strace_opts() {
	case $1 in
	fallback) echo "-e inject=sync_file_range:error=ENOSYS" ;;
	esac
}

# --- the contract after a fault ---------------------------------------------

# The checks of the contract are shared with tests/crash/powerloss.sh
# (invariants.sh): each case keeps its reference in CASE_DIR (old.* and
# new.* snapshots, paths, versions; see prepare_case).

# check_after_fault OUT: check the state a fault left in ROOT against the
# current case (CASE_* variables, see prepare_case); violations go to OUT.
# Leaves $W/cur.status, $W/cur.fp and $W/cur.newness (inv_check_state).
check_after_fault() {
	: >"$1"
	inv_check_state "$ROOT" "$CASE_DIR" "$1"
	[ ! -s "$1" ]
}

# check_converged OUT: ROOT is exactly the crash-free result of the case;
# differences go to OUT.
check_converged() {
	: >"$1"
	inv_check_converged "$ROOT" "$CASE_DIR" "$1"
	[ ! -s "$1" ]
}

# --- cases: a scenario with a strategy, its crash-free run as reference -----

# prepare_case SCENARIO STRATEGY: trace a crash-free run, record what it
# produced, and set the CASE_* variables.  Returns 1 (after a check_fail)
# if the crash-free run fails.
prepare_case() {
	local scen=$1 strat=$2 tpl
	local -a args rerun opts pkgs
	tpl=$(scenario_template "$scen")
	read -ra args <<<"$(scenario_args "$scen")"
	read -ra rerun <<<"$(scenario_args "$scen")"
	read -ra opts <<<"$(scenario_strace_opts "$scen")"
	read -ra pkgs <<<"$(scenario_pkgs "$scen")"
	CASE=$scen-$strat
	CASE_DIR=$W/case-$CASE
	CASE_OVERLAY=0
	[[ $scen != *-overlay ]] || CASE_OVERLAY=1
	CASE_TPL=$tpl
	CASE_ACTION=$(scenario_action "$scen")
	# the command of the run (and of the re-run), and how to show it
	sync_probe "$scen"
	CASE_CMD=("$UNPKG" --root="$ROOT")
	[ "${SYNC_OK[$scen]}" = 0 ] || CASE_CMD+=(--sync="$strat")
	CASE_RERUN=("${CASE_CMD[@]}" "${rerun[@]}")
	CASE_CMD+=("${args[@]}")
	CASE_BY_DPKG=$((1 - SYNC_OK[$scen]))
	CASE_SHOW="${CASE_CMD[*]:2}"
	CASE_SHOW="unpkg --root=ROOT ${CASE_SHOW//$TESTDIR\//}"
	CASE_OPTS=("${opts[@]}")
	CASE_STRAT=$strat
	mkdir -p "$CASE_DIR"
	reset_root "$tpl"
	CASE_OLD_STATUS=$CASE_DIR/old.status
	CASE_OLD_FP=$CASE_DIR/old.fp
	CASE_PATHS=$CASE_DIR/paths
	CASE_VERSIONS=$CASE_DIR/versions
	inv_snapshot "$ROOT" "$CASE_DIR" old "${pkgs[@]}"

	# The trace: -y names the files behind descriptors, which tells a
	# write to a file from one to stdout.
	RUN_RC=0
	strace -f -qq -y -s 40 -o "$CASE_DIR/trace" "${opts[@]}" "${CASE_CMD[@]}" \
		</dev/null >"$W/run.out" 2>"$W/run.err" || RUN_RC=$?
	# (the killed runs write to the same files: their calls compare)
	cp "$W/run.out" "$CASE_DIR/ref.out"
	cp "$W/run.err" "$CASE_DIR/ref.err"
	if [ "$RUN_RC" -ne 0 ]; then
		check_fail "$CASE: the crash-free run exited $RUN_RC"
		show_file "$CASE_DIR/ref.err"
		return 1
	fi
	if [ "$scen" = fallback ]; then
		assert_grep 'sync_file_range is not available; using the syncfs strategy' \
			"$CASE_DIR/ref.err" "$CASE: the syncfs fallback"
	fi
	CASE_NEW_TREE=$CASE_DIR/new.tree
	CASE_NEW_DB=$CASE_DIR/new.db
	CASE_NEW_FP=$CASE_DIR/new.fp
	inv_snapshot "$ROOT" "$CASE_DIR" new "${pkgs[@]}"
	# I6: a second run of the same command changes nothing.
	RUN_RC=0
	strace -f -qq -o /dev/null -e trace=sync_file_range "${opts[@]}" "${CASE_RERUN[@]}" \
		</dev/null >"$CASE_DIR/again.out" 2>"$CASE_DIR/again.err" || RUN_RC=$?
	fingerprint "$ROOT" db >"$CASE_DIR/again.fp"
	if [ "$RUN_RC" -ne 0 ] || ! cmp -s "$CASE_NEW_FP" "$CASE_DIR/again.fp"; then
		check_fail "$CASE: the same command again (exit $RUN_RC) changed the root:"
		diff "$CASE_NEW_FP" "$CASE_DIR/again.fp" | head -n 10 >&2 || true
	fi
	INV_ACTION=$CASE_ACTION inv_reference "$CASE_DIR" "${pkgs[@]}"
	# Every strategy must produce the same result.
	if [ -e "$W/result-$scen.tree" ]; then
		assert_same_file "$W/result-$scen.tree" "$CASE_NEW_TREE" "$CASE: tree vs. the first strategy's"
		assert_same_file "$W/result-$scen.db" "$CASE_NEW_DB" "$CASE: database vs. the first strategy's"
	else
		cp "$CASE_NEW_TREE" "$W/result-$scen.tree"
		cp "$CASE_NEW_DB" "$W/result-$scen.db"
	fi
	return 0
}

# kill_points TRACE: one line per call of the traced run's main process:
#   N NAME K CHANGES TEXT
# N counts all calls, K the calls of NAME so far (what when= counts),
# CHANGES is 1 for a successful call that changes the file system, TEXT
# the call as strace showed it, without its result.
kill_points() {
	awk '
	/^[0-9]+ +<\.\.\. / || /^[0-9]+ +(\+\+\+|---)/ { next }
	{
		pid = $1
		if (main == "") main = pid
		if (pid != main) next
		line = $0
		sub(/^[0-9]+ +/, "", line)
		name = line
		sub(/\(.*/, "", name)
		if (name !~ /^[a-z_0-9]+$/) next
		# strace cannot stop a process before its first execve is done
		if (n == 0 && name == "execve") next
		n++
		k[name]++
		text = line
		res = ""
		if (sub(/ <unfinished \.\.\.>$/, "", text) == 0) {
			res = line
			sub(/.*\) += /, "", res)
			sub(/\) += [^=]*$/, ")", text)
		}
		ch = 0
		if (res !~ /^-1/) {
			if (name ~ /^(mkdir|mkdirat|rename|renameat|renameat2|link|linkat|symlink|symlinkat|unlink|unlinkat|rmdir|chmod|fchmod|fchmodat|chown|fchown|fchownat|lchown|utime|utimes|utimensat|futimesat|fallocate|truncate|ftruncate|mknod|mknodat|setxattr|lsetxattr|fsetxattr|removexattr|lremovexattr|fremovexattr|copy_file_range|sendfile|splice)$/)
				ch = 1
			else if (name ~ /^(open|openat|openat2|creat)$/ && (text ~ /O_CREAT|O_TRUNC/ || name == "creat"))
				ch = 1
			else if (name ~ /^(write|pwrite64|writev|pwritev|pwritev2)$/ && text !~ /^[a-z0-9]+\([012]</)
				ch = 1
		}
		print n, name, k[name], ch, text
	}' "$1"
}

# --- 1. SIGKILL at every step -----------------------------------------------

TOTAL_POINTS=0
TOTAL_VIOLATIONS=0
TOTAL_KNOWN=0
CASE_SEQ=0
SUMMARY=$W/summary
: >"$SUMMARY"

# Bugs of unpkg this test found and that are not fixed yet (doc/
# reliability.md): a violation all of whose findings carry one of these
# tags is counted and printed as a known bug but does not fail the test
# (unless UNPKG_FAULTS_STRICT=1); a bug that no longer shows up is
# reported, so that it can be taken off the list.
KNOWN_BUGS=" "
STRICT=${UNPKG_FAULTS_STRICT:-0}
declare -A KNOWN_SEEN=()

# known_only FILE: every finding in FILE (lines not indented) is a known
# bug; their tags are counted in KNOWN_SEEN.
known_only() {
	local line tag all=0
	while IFS= read -r line; do
		case $line in " "*) continue ;; esac
		tag=
		if [[ $line =~ \[known\ bug:\ ([a-z-]+)\]$ ]]; then
			tag=${BASH_REMATCH[1]}
		fi
		if [ -n "$tag" ] && [[ $KNOWN_BUGS == *" $tag "* ]]; then
			KNOWN_SEEN[$tag]=$((${KNOWN_SEEN[$tag]:-0} + 1))
		else
			all=1
		fi
	done <"$1"
	[ "$all" = 0 ] && [ "$STRICT" != 1 ]
}

# report_violation N NAME K TEXT FILE: print one kill point's violations
# (the first MAXSHOW of a case in full) with the command that reproduces it.
report_violation() {
	local n=$1 name=$2 k=$3 text=$4 file=$5
	CASE_VIOLATIONS=$((CASE_VIOLATIONS + 1))
	known_only "$file" && CASE_KNOWN=$((CASE_KNOWN + 1))
	[ "$CASE_VIOLATIONS" -le "$MAXSHOW" ] || return 0
	printf '%s: VIOLATION %s N=%s (%s #%s: %s)\n' "$TEST_NAME" "$CASE" "$n" \
		"$name" "$k" "$text" >&2
	sed 's/^/    /' "$file" >&2
	printf '    reproduce: UNPKG_FAULTS_ONLY=%s/%s:%s UNPKG_TEST_KEEP=1, or on a copy of the %s root:\n' \
		"${CASE%-*}" "$CASE_STRAT" "$n" "${CASE%%-*}" >&2
	printf '      strace -f -o /dev/null %s -e trace=%s -e inject=%s:signal=KILL:when=%s %s\n' \
		"${CASE_OPTS[*]}" "$name" "$name" "$k" "$CASE_SHOW" >&2
}

# call_text: a call as strace shows it, without what changes from run to
# run (addresses, a socket's inode, the time at the start of a log line).
call_text() {
	sed -E 's/0x[0-9a-f]+/0x/g; s/socket:\[[0-9]+\]/socket:[]/g
		s/"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} /"TIME /'
}

# kill_at N NAME K TEXT CHANGES: one kill point of the current case;
# CHANGES is 1 if the call changes the file system.
kill_at() {
	local n=$1 name=$2 k=$3 text=$4 changes=$5 rc=0 trace_set=$2 last
	local -a opts=("${CASE_OPTS[@]}")
	if [ "${#opts[@]}" -gt 0 ]; then
		# an injection only applies to traced calls
		trace_set+=,sync_file_range
	fi
	reset_root "$CASE_TPL"
	(
		strace -f -qq -y -s 40 -o "$W/kill.trace" -e trace="$trace_set" \
			"${opts[@]}" -e inject="$name":signal=KILL:when="$k" "${CASE_CMD[@]}" \
			>"$W/run.out" 2>"$W/run.err"
		# (not the last command: the shell reports the kill, not us)
		rc=$?
		exit "$rc"
	) 2>/dev/null 3<&- || rc=$?
	CASE_POINTS=$((CASE_POINTS + 1))
	: >"$W/viol"
	if [ "$rc" -eq 0 ] && [ "$changes" = 0 ]; then
		# Calls that change nothing (mmap of the allocator, above all
		# ASan's) vary in number from run to run: this run made fewer
		# of them and was not killed, a drift like a kill at another
		# call.  Its end state is checked below all the same.
		CASE_DRIFT=$((CASE_DRIFT + 1))
		[ "$CASE_DRIFT" -gt 3 ] ||
			note "$CASE N=$n: the run made fewer $name calls than the crash-free run and was not killed (counted anyway)"
	elif [ "$rc" -ne 137 ]; then
		echo "SETUP: not killed (exit $rc): the run did not reach this call" >>"$W/viol"
	else
		# the killed call as strace showed it: complete ("= ?") or, when
		# strace prints some arguments on exit, up to them
		last=$(grep -E "^[0-9]+ +$name\(" "$W/kill.trace" | tail -n 1 |
			sed -E 's/^[0-9]+ +//; s/ += \?$//; s/ *<unfinished \.\.\.>\)?$//' | call_text)
		if [[ "$(call_text <<<"$text")" != "$last"* ]]; then
			CASE_DRIFT=$((CASE_DRIFT + 1))
			[ "$CASE_DRIFT" -gt 3 ] ||
				note "$CASE N=$n: killed at '$last', the crash-free run had '$text' (counted anyway)"
		fi
	fi
	[ -z "${SELFTEST:-}" ] || damage "$SELFTEST" killed
	check_after_fault "$W/viol.state" || cat "$W/viol.state" >>"$W/viol"
	# I6: a good run converges to the crash-free result.
	rc=0
	if [ "${#opts[@]}" -gt 0 ]; then
		strace -f -qq -o /dev/null -e trace=sync_file_range "${opts[@]}" "${CASE_RERUN[@]}" \
			>"$W/rerun.out" 2>"$W/rerun.err" || rc=$?
	else
		"${CASE_RERUN[@]}" >"$W/rerun.out" 2>"$W/rerun.err" || rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		echo "I6: the re-run exited $rc: $(head -c 400 "$W/rerun.err" | tr '\n' ' ')" >>"$W/viol"
	fi
	[ -z "${SELFTEST:-}" ] || damage "$SELFTEST" rerun
	check_converged "$W/viol.conv" || cat "$W/viol.conv" >>"$W/viol"
	if [ -s "$W/viol" ]; then
		report_violation "$n" "$name" "$k" "$text" "$W/viol"
	fi
}

# damage WHAT WHEN: break the root on purpose, to show that the checks
# catch it (see selftest).
damage() {
	case $1:$2 in
	partial:killed) truncate -s 10 "$ROOT/usr/share/alpha/a" ;;
	stray:killed) echo stray >"$ROOT/usr/share/alpha/stray" ;;
	status:killed) echo 'garbage' >>"$ROOT/var/lib/dpkg/status" ;;
	keeper:killed) echo changed >>"$ROOT/usr/share/keeper/data" ;;
	mixed:killed)
		sed -i 's/^Status: install reinstreq half-installed$/Status: install ok installed/' \
			"$ROOT/var/lib/dpkg/status"
		;;
	diverge:rerun) chmod 0600 "$ROOT/usr/share/alpha/same" ;;
	# the rules of the other actions
	back:killed)
		mkdir -p "$ROOT/usr/share/alpha"
		cp -a "$CASE_TPL/usr/share/alpha/same" "$ROOT/usr/share/alpha/same"
		;;
	gone:killed) rm "$ROOT/usr/share/alpha/same" ;;
	waiting:killed) cp -a "$CASE_TPL/etc/alpha/alpha.conf.dpkg-new" "$ROOT/etc/alpha/" ;;
	trigger:killed)
		sed -i 's|^Triggers-Pending: /usr/share/alpha$|Triggers-Pending: /usr/share/other|' \
			"$ROOT/var/lib/dpkg/status"
		;;
	esac
}

# selftest: kill the current case once per kind of damage, with the
# damage applied, and require the check that must see it to report it.
selftest() {
	local n name k ch text what want
	# a point in the middle of alpha's rename pass: the tree mixes old
	# and new files, alpha is half-installed
	read -r n name k ch text < <(awk '$2 ~ /^rename/ && $4 == 1 && /usr\/share\/alpha>, "a\.dpkg-new"/ { print; exit }' \
		"$CASE_DIR/points")
	[ -n "$n" ] || hard_error "selftest: no rename of usr/share/alpha/a in the trace"
	n=$((n + 1))
	selftest_damages "$(awk -v n="$n" '$1 >= n && $4 == 1 { print; exit }' "$CASE_DIR/points")" \
		partial:I1 stray:I2 status:I3 keeper:I7 mixed:I5 diverge:I6
}

# selftest_damages POINT WHAT:INVARIANT...: kill the current case at POINT
# (a line of the points file) once per damage WHAT, and require each to be
# reported as its INVARIANT.
selftest_damages() {
	local n name k ch text what want
	read -r n name k ch text <<<"$1"
	shift
	[ -n "$n" ] || hard_error "selftest: $CASE: no kill point"
	CASE_POINTS=0 CASE_DRIFT=0
	section "self-test: $CASE: damage the root after a kill at N=$n, the checks must see it"
	for what in "$@"; do
		want=${what#*:}
		CASE_VIOLATIONS=0
		SELFTEST=${what%:*} MAXSHOW=0 kill_at "$n" "$name" "$k" "$text" "$ch" </dev/null
		if [ "$CASE_VIOLATIONS" -eq 1 ] && grep -q "^$want: " "$W/viol"; then
			note "damage '${what%:*}' reported as $want"
		else
			check_fail "selftest: damage '${what%:*}' was not reported as $want:"
			sed 's/^/    /' "$W/viol" >&2
		fi
	done
	SELFTEST=
}

# selftest_rules: the same for S1, S2, S3 and T1: a removal killed before
# its first change, a file of alpha (recorded installed) deleted; killed at
# its last change (alpha recorded config-files), the file put back; a
# configuration killed at its last change (alpha recorded installed), the
# conffile's NAME.dpkg-new put back; a trigger processing killed before
# its first change, gamma's pending trigger replaced by another name.
selftest_rules() {
	local first last
	prepare_case remove auto || return 0
	kill_points "$CASE_DIR/trace" >"$CASE_DIR/points"
	first=$(awk '$4 == 1 { print; exit }' "$CASE_DIR/points")
	last=$(awk '$4 == 1 { l = $0 } END { print l }' "$CASE_DIR/points")
	selftest_damages "$first" gone:S2
	selftest_damages "$last" back:S1
	prepare_case configure auto || return 0
	kill_points "$CASE_DIR/trace" >"$CASE_DIR/points"
	selftest_damages "$(awk '$4 == 1 { l = $0 } END { print l }' "$CASE_DIR/points")" waiting:S3
	prepare_case triggers auto || return 0
	kill_points "$CASE_DIR/trace" >"$CASE_DIR/points"
	selftest_damages "$(awk '$4 == 1 { print; exit }' "$CASE_DIR/points")" trigger:T1
}

# kill_case SCENARIO STRATEGY SELECTION [N,N...]: prepare the case, then
# kill at the calls that change the file system: all of them (SELECTION
# "all"), every second one ("/2"), about 25 evenly spread ("~25"); at
# every call of the run, changing or not ("every", and every case in full
# mode); at the calls numbered N if given.
kill_case() {
	local scen=$1 strat=$2 sel=$3 pick=${4:-} n name k ch text i=0 total changing stride=1
	section "SIGKILL: $scen, --sync=$strat"
	prepare_case "$scen" "$strat" || return 0
	kill_points "$CASE_DIR/trace" >"$CASE_DIR/points"
	total=$(wc -l <"$CASE_DIR/points")
	changing=$(awk '$4 == 1' "$CASE_DIR/points" | wc -l)
	note "crash-free run: $total calls, $changing change the file system"
	case $sel in
	/*) stride=${sel#/} ;;
	~*) stride=$(((changing + ${sel#\~} - 1) / ${sel#\~})) ;;
	esac
	[ "$stride" -ge 1 ] || stride=1
	CASE_POINTS=0 CASE_VIOLATIONS=0 CASE_KNOWN=0 CASE_DRIFT=0
	CASE_SEQ=$((CASE_SEQ + 1))
	local t0=$SECONDS
	while read -r n name k ch text <&3; do
		if [ -n "$pick" ]; then
			case ",$pick," in *",$n,"*) ;; *) continue ;; esac
		elif [ "$FULL" != 1 ] && [ "$sel" != every ]; then
			# (UNPKG_FAULTS_FULL=changes: every call that changes the
			# file system, in every case)
			[ "$ch" = 1 ] || continue
			i=$((i + 1))
			# each case starts the stride at another offset
			[ $(((i - 1) % stride)) -eq $((CASE_SEQ % stride)) ] || continue
		fi
		# the ENOSYS injection owns sync_file_range in that scenario
		if [ "${#CASE_OPTS[@]}" -gt 0 ] && [ "$name" = sync_file_range ]; then
			continue
		fi
		kill_at "$n" "$name" "$k" "$text" "$ch" </dev/null
	done 3<"$CASE_DIR/points"
	local what="every call that changes the file system"
	[ "$stride" -eq 1 ] || what="1 in $stride of the calls that change the file system"
	[ "$stride" -ne 2 ] || what="every second call that changes the file system"
	[ "$stride" -ne 3 ] || what="every third call that changes the file system"
	[ "$stride" -ne 4 ] || what="every fourth call that changes the file system"
	[ "$FULL" != 1 ] && [ "$sel" != every ] || what="every call"
	[ -z "$pick" ] || what="calls $pick"
	[ "$CASE_BY_DPKG" = 0 ] || what+=", the run by stock dpkg"
	note "$CASE: $CASE_POINTS kill points ($what, of $total calls), $CASE_VIOLATIONS violations ($CASE_KNOWN of known bugs only), $((SECONDS - t0)) s"
	[ "$CASE_DRIFT" -eq 0 ] || note "$CASE: $CASE_DRIFT kill points hit another call than in the crash-free run, or were not reached"
	printf '%s %s %s %s %s %s %s\n' "$scen" "$strat" "$CASE_POINTS" "$CASE_VIOLATIONS" "$CASE_KNOWN" "$total" "$what" >>"$SUMMARY"
	TOTAL_POINTS=$((TOTAL_POINTS + CASE_POINTS))
	TOTAL_VIOLATIONS=$((TOTAL_VIOLATIONS + CASE_VIOLATIONS))
	TOTAL_KNOWN=$((TOTAL_KNOWN + CASE_KNOWN))
	judge "$((CASE_VIOLATIONS - CASE_KNOWN)) of $CASE_POINTS kill points violate the contract (not counting known bugs)" \
		"$((CASE_VIOLATIONS - CASE_KNOWN))"
}

# judge MSG COUNT: COUNT violations of the current case fail the test,
# unless the case's action is stock dpkg's (unpkg hands it over): then
# they are dpkg's, reported and not judged (doc/reliability.md has them),
# but with UNPKG_FAULTS_STRICT=1.
judge() {
	[ "$2" -gt 0 ] || return 0
	if [ "$CASE_BY_DPKG" = 1 ] && [ "$STRICT" != 1 ]; then
		note "$CASE: stock dpkg carried out the run: $1 (reported, not judged)"
	else
		check_fail "$CASE: $1"
	fi
}


# --- 2. failing system calls ------------------------------------------------

# A fault run is traced with the calls that matter afterwards.
FAULT_TRACE=fdatasync,fsync,syncfs,sync_file_range,write,pwrite64,writev,rename,renameat,renameat2,unlinkat,mkdirat,openat

# progress TRACE: for each package of the run, what the traced calls did
# to it: "PKG STARTED RENAMED", STARTED 1 once a *.dpkg-new entry of one
# of its paths or info/ files was created, RENAMED 1 once one was renamed
# into place.
progress() {
	awk -v root="$ROOT" '
	FNR == NR { split($0, f, "\t"); own[f[2]] = f[1]; pk[f[1]] = 1; next }
	/ = -1 / { next }
	/ openat2?\(.*O_CREAT/ { act = "started" }
	/ rename(at2?)?\(/ { act = "renamed" }
	!/ openat2?\(.*O_CREAT/ && !/ rename(at2?)?\(/ { next }
	{
		if (!match($0, /<[^>]*>/)) next
		dir = substr($0, RSTART + 1, RLENGTH - 2)
		if (!match($0, /"[^"]*"/)) next
		name = substr($0, RSTART + 1, RLENGTH - 2)
		if (sub(/\.dpkg-new$/, "", name) == 0) next
		path = substr(dir "/" name, length(root) + 2)
		if (path in own) P = own[path]
		else if (path ~ /^var\/lib\/dpkg\/info\/[^\/]+$/) {
			P = substr(path, 19)
			sub(/\..*/, "", P)
		} else next
		done[P, act] = 1
	}
	END {
		for (P in pk) print P, ((P, "started") in done) + 0, ((P, "renamed") in done) + 0
	}' "$CASE_PATHS" "$1"
}

# fault_at LABEL SPEC CAUSE: run the current case with the error injection
# SPEC (strace's -e inject= value), expect a failure whose message gives
# CAUSE (a regular expression) and check what it left behind:
#   - exit status 1 or 2, and a message naming the file or directory of
#     the failed call and the cause;
#   - the checks made after a kill (I1-I5, I7), no *.dpkg-new or
#     *.dpkg-tmp left, no package half-installed;
#   - a package whose staging had begun but none of whose entries had been
#     renamed into place when the call failed (the failure came before its
#     rename pass) is exactly as before the run: files, status, info/;
#     after a failed sync the packages not begun yet are too (the rest of
#     the run is given up); the others are wholly old or wholly new;
#   - a failure before any rename of the run leaves the whole root and
#     database as before, except that a failure in the database write
#     that marks the packages, before any file is touched, may leave the
#     mark (undoing it would need another sync of the directory that
#     failed);
#   - after a failed fdatasync/fsync/syncfs/wait: no further sync call on the
#     same file or directory (a retry can wrongly succeed: the kernel may
#     have dropped the dirty pages), and no staged entry renamed into
#     place (DESIGN.md: a sync error is fatal for the run);
#   - a good run afterwards converges to the crash-free result.
fault_at() {
	local label=$1 spec=$2 cause=$3 rc=0 inj obj base fault_rc sync=0
	local any_started=0 any_renamed=0 p started renamed hit=
	case $spec in fdatasync:* | fsync:* | syncfs:* | sync_file_range:*) sync=1 ;; esac
	reset_root "$CASE_TPL"
	strace -f -qq -y -s 40 -o "$W/fault.trace" -e trace="$FAULT_TRACE" \
		-e inject="$spec" "${CASE_CMD[@]}" \
		</dev/null >"$W/fault.out" 2>"$W/fault.err" || rc=$?
	fault_rc=$rc
	CASE_FAULT_RUNS=$((CASE_FAULT_RUNS + 1))
	: >"$W/viol"
	inj=$(grep -n -m 1 '(INJECTED)$' "$W/fault.trace" || true)
	if [ -z "$inj" ]; then
		echo "SETUP: the injection $spec did not happen (exit $rc)" >>"$W/viol"
	fi
	awk -v stop="${inj%%:*}" 'stop == "" || NR < stop' "$W/fault.trace" >"$W/fault.before"
	progress "$W/fault.before" >"$W/progress"
	while read -r p started renamed; do
		any_started=$((any_started | started))
		any_renamed=$((any_renamed | renamed))
	done <"$W/progress"

	case $rc in
	1 | 2) ;;
	*) echo "exit status $rc, expected 1 or 2" >>"$W/viol" ;;
	esac
	grep -Eiq -- "$cause" "$W/fault.err" ||
		echo "the message does not give the cause (/$cause/): $(head -c 300 "$W/fault.err" | tr '\n' ' ')" >>"$W/viol"
	if [ -n "$inj" ]; then
		# the file or directory of the failed call, from strace -y; a
		# staged file is reported under its final name, status-new as the
		# status file it replaces
		obj=$(sed -E 's/^[^:]*:[0-9]+ +[a-z0-9_]+\([0-9]+<([^>]*)>.*/\1/' <<<"$inj")
		obj=${obj#"$ROOT"}
		base=${obj##*/}
		base=${base%.dpkg-new}
		base=${base%-new}
		grep -Fq -- "$base" "$W/fault.err" ||
			echo "the message does not name '$obj': $(head -c 300 "$W/fault.err" | tr '\n' ' ')" >>"$W/viol"
		# the package the failed call was for
		hit=${obj%.dpkg-new}
		hit=$(awk -F'\t' -v f="${hit#/}" '$2 == f { print $1; exit }' "$CASE_PATHS")
		hit=${hit:-$(sed -nE 's|^/var/lib/dpkg/info/([^.]+)\..*|\1|p' <<<"$obj")}
	fi
	if [ "$sync" = 1 ] && [ -n "$inj" ]; then
		awk -v start="${inj%%:*}" -v obj="$ROOT$obj" '
		NR <= start || done { next }
		# a new file made under the same name is another object
		/ openat\(.*O_CREAT/ {
			r = $0
			sub(/.* = /, "", r)
			if (index(r, "<" obj ">")) done = 1
			next
		}
		/ (fdatasync|fsync|syncfs)\(/ && index($0, "<" obj ">)") ||
		/ sync_file_range\(.*WAIT_AFTER/ && index($0, "<" obj ">,") {
			print "the failed sync was retried: " substr($0, index($0, " ") + 1) " [known bug: sync-retried]"
		}
		/rename/ && /\.dpkg-new", / && !/status-new/ {
			print "the run went on after the failed sync: " substr($0, index($0, " ") + 1) " [known bug: went-on]"
		}' "$W/fault.trace" >"$W/after-sync"
		head -n 3 "$W/after-sync" >>"$W/viol"
	fi

	check_after_fault "$W/viol.state" || cat "$W/viol.state" >>"$W/viol"
	# no debris, but the new conffiles of a package left unpacked or
	# half-configured (they wait for its configuration as NAME.dpkg-new,
	# as with dpkg)
	local debris='' d
	while IFS= read -r d; do
		case $d in
		*.dpkg-new)
			p=$(awk -F'\t' -v f="${d%.dpkg-new}" '$2 == f && $3 == "conf" { print $1 }' "$CASE_PATHS")
			if [ -n "$p" ] && awk -v p="$p" '$1 == p && ($5 == "unpacked" || $5 == "half-configured") { f = 1 } END { exit !f }' "$W/cur.status" &&
				[ "$(awk -v p="$p" '$1 == p { print $2 }' "$W/cur.status")" = "$(awk -v p="$p" '$1 == p { print $3 }' "$CASE_VERSIONS")" ]; then
				continue
			fi
			;;
		esac
		debris+="$d "
	done < <(find "$ROOT" \( -name '*.dpkg-new' -o -name '*.dpkg-tmp' \) -printf '%P\n')
	[ -z "$debris" ] || echo "debris left: $debris" >>"$W/viol"
	# per package: exactly as before, or (checked above) old or new;
	# an action other than unpacking is judged by the state rules alone
	local want st line
	[ "$CASE_ACTION" = unpack ] || : >"$W/progress"
	while read -r p started renamed; do
		want=
		# a failed sync ends the run: every package not renamed yet
		# goes back; another failure only the package it hit
		if [ "$started" = 1 ] && [ "$renamed" = 0 ] &&
			{ [ "$sync" = 1 ] || [ "$p" = "$hit" ]; }; then
			want="its rename pass had not begun"
		elif [ "$started" = 0 ] && [ "$sync" = 1 ]; then
			want="a sync had failed before it began"
		fi
		line=$(awk -v p="$p" '$1 == p' "$W/cur.status")
		st=$(awk '{ print $5 }' <<<"$line")
		if [ "$st" = half-installed ] && [ "$any_started" = 1 ]; then
			echo "$p left half-installed" >>"$W/viol"
			continue
		fi
		[ -n "$want" ] || continue
		if [ "$line" != "$(awk -v p="$p" '$1 == p' "$CASE_OLD_STATUS")" ] &&
			! { [ "$any_started" = 0 ] && [ "$st" = half-installed ]; }; then
			echo "$p is recorded as '$line' though $want" >>"$W/viol"
		fi
		awk -v p="$p" '$1 == p && $2 != "-" { print "'"$p"' has new files though '"$want"': " $2 }' \
			"$W/cur.newness" >>"$W/viol"
	done <"$W/progress"
	if [ "$any_renamed" = 0 ] && [ "$sync" = 1 ] && [ "$CASE_ACTION" = unpack ]; then
		# the whole root as before, but for a mark (checked above)
		grep -v '^var/lib/dpkg/status ' "$CASE_OLD_FP" >"$W/fp.a"
		grep -v '^var/lib/dpkg/status ' "$W/cur.fp" >"$W/fp.b"
		if ! cmp -s "$W/fp.a" "$W/fp.b"; then
			echo "failed before any rename, but the root changed:" >>"$W/viol"
			{ diff "$W/fp.a" "$W/fp.b" || true; } | awk '/^[<>]/ && n++ < 6' >>"$W/viol"
		fi
	fi

	rc=0
	"${CASE_RERUN[@]}" </dev/null >"$W/rerun.out" 2>"$W/rerun.err" || rc=$?
	[ "$rc" -eq 0 ] ||
		echo "the good run afterwards exited $rc: $(head -c 300 "$W/rerun.err" | tr '\n' ' ')" >>"$W/viol"
	check_converged "$W/viol.conv" || cat "$W/viol.conv" >>"$W/viol"

	local where='' msg
	[ -z "$inj" ] || where="${inj#*:}"
	where=$(sed -E 's/^[0-9]+ +//; s/ += -1 .*//' <<<"$where")
	# (a run that did not fail may have said nothing)
	msg=$({ grep -v '^Errors were encountered\|^ [^ ]*\.deb$' "$W/fault.err" || true; } |
		tr '\n' ' ' | cut -c1-160)
	printf '%s\t%s\t%s\t%s\t%s\n' "$CASE" "$label" "$where" "$fault_rc" "$msg" >>"$W/faults.log"
	if [ -s "$W/viol" ]; then
		CASE_FAULT_VIOLATIONS=$((CASE_FAULT_VIOLATIONS + 1))
		known_only "$W/viol" && CASE_FAULT_KNOWN=$((CASE_FAULT_KNOWN + 1))
		if [ "$CASE_FAULT_VIOLATIONS" -le "$MAXSHOW" ]; then
			printf '%s: VIOLATION %s %s (%s)\n' "$TEST_NAME" "$CASE" "$label" "$where" >&2
			sed 's/^/    /' "$W/viol" >&2
			printf '    reproduce on a copy of the %s root: strace -f -o /dev/null -e trace=%s -e inject=%s %s\n' \
				"${CASE%%-*}" "${spec%%:*}" "$spec" "$CASE_SHOW" >&2
		fi
	fi
}

# fault_case SCENARIO STRATEGY WHAT [TARGET]: ENOSPC at each write to a
# file (WHAT=enospc), or EIO at each fdatasync, fsync and syncfs and each
# wait for a file's writeback (sync_file_range with WAIT_AFTER) (WHAT=eio)
# of the crash-free run; with TARGET, at about that many of them, evenly
# spread.
fault_case() {
	local scen=$1 strat=$2 what=$3 target=${4:-0} k call count i=0 stride=1
	section "failing calls: $what, $scen, --sync=$strat"
	prepare_case "$scen" "$strat" || return 0
	kill_points "$CASE_DIR/trace" >"$CASE_DIR/points"
	CASE_FAULT_RUNS=0 CASE_FAULT_VIOLATIONS=0 CASE_FAULT_KNOWN=0
	local t0=$SECONDS
	case $what in
	enospc) awk '$2 == "write" && $4 == 1 { print "write", $3 }' "$CASE_DIR/points" ;;
	eio) awk '$2 ~ /^(fdatasync|fsync|syncfs)$/ ||
		($2 == "sync_file_range" && /WAIT_AFTER/) { print $2, $3 }' "$CASE_DIR/points" ;;
	esac >"$CASE_DIR/faults"
	count=$(wc -l <"$CASE_DIR/faults")
	[ "$target" -eq 0 ] || stride=$(((count + target - 1) / target))
	[ "$stride" -ge 1 ] || stride=1
	while read -r call k <&3; do
		i=$((i + 1))
		[ $(((i - 1) % stride)) -eq 0 ] || continue
		case $what in
		enospc) fault_at "ENOSPC at write #$k" "write:error=ENOSPC:when=$k" 'no space left on device' ;;
		eio) fault_at "EIO at $call #$k" "$call:error=EIO:when=$k" 'input/output error' ;;
		esac
	done 3<"$CASE_DIR/faults"
	note "$CASE: $CASE_FAULT_RUNS runs with $what (of $count calls), $CASE_FAULT_VIOLATIONS with violations ($CASE_FAULT_KNOWN of known bugs only), $((SECONDS - t0)) s"
	[ "$CASE_BY_DPKG" = 0 ] || what+=" (the run by stock dpkg)"
	printf '%s %s %s %s %s %s\n' "$scen" "$strat" "$what" "$CASE_FAULT_RUNS" "$CASE_FAULT_VIOLATIONS" "$CASE_FAULT_KNOWN" >>"$W/faults.summary"
	TOTAL_FAULT_RUNS=$((TOTAL_FAULT_RUNS + CASE_FAULT_RUNS))
	TOTAL_FAULT_VIOLATIONS=$((TOTAL_FAULT_VIOLATIONS + CASE_FAULT_VIOLATIONS))
	TOTAL_FAULT_KNOWN=$((TOTAL_FAULT_KNOWN + CASE_FAULT_KNOWN))
	judge "$((CASE_FAULT_VIOLATIONS - CASE_FAULT_KNOWN)) of $CASE_FAULT_RUNS runs with $what violate the contract (not counting known bugs)" \
		"$((CASE_FAULT_VIOLATIONS - CASE_FAULT_KNOWN))"
}
TOTAL_FAULT_RUNS=0
TOTAL_FAULT_VIOLATIONS=0
TOTAL_FAULT_KNOWN=0
: >"$W/faults.log"
: >"$W/faults.summary"

# --- 3. environments -----------------------------------------------------------

ENV_RESULTS=$W/env.results
: >"$ENV_RESULTS"

# env_result NAME OUTCOME: one line of the summary table.
env_result() {
	printf '%s\t%s\n' "$1" "$2" >>"$ENV_RESULTS"
	note "$1: $2"
}

# env_mount FSTYPE DIR [OPTIONS]: mount a file system for an environment
# case; returns 1 when this machine cannot (the error in $W/mount.err).
env_mount() {
	mkdir -p "$2"
	if ! mount -t "$1" ${3:+-o "$3"} "unpkg-faults-$1" "$2" 2>"$W/mount.err"; then
		return 1
	fi
	register_mount "$2"
}

# unpkg_vs_dpkg NAME PREFIX B ARG...: run the action ARGs (-i DEB...,
# --remove PKG...) with unpkg on the roots PREFIX-STRATEGY (one per
# strategy, twins of B) and with dpkg on root B; each unpkg result must
# equal dpkg's (file tree and database).
unpkg_vs_dpkg() {
	local name=$1 prefix=$2 b=$3 s r rc bad=0 before
	shift 3
	rc=0
	dpkg --root="$b" "$@" >"$W/env.dpkg.out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { check_fail "$name: dpkg $1 exited $rc"; show_file "$W/env.dpkg.out"; }
	tree_manifest "$b" >"$W/env.dpkg.tree"
	db_manifest "$b" >"$W/env.dpkg.db"
	for s in "${STRATEGIES[@]}"; do
		r=$prefix-$s
		rc=0
		unpkg_run "$r" "$s" "$@" >"$W/env.unpkg.out" 2>&1 || rc=$?
		if [ "$rc" -ne 0 ]; then
			check_fail "$name: unpkg --sync=$s $1 exited $rc"
			show_file "$W/env.unpkg.out"
		fi
		tree_manifest "$r" >"$W/env.unpkg.tree"
		db_manifest "$r" >"$W/env.unpkg.db"
		before=$TEST_FAILURES
		assert_same_file "$W/env.dpkg.tree" "$W/env.unpkg.tree" "$name, --sync=$s: file tree (dpkg vs unpkg)"
		assert_same_file "$W/env.dpkg.db" "$W/env.unpkg.db" "$name, --sync=$s: database (dpkg vs unpkg)"
		[ "$rc" -eq 0 ] && [ "$TEST_FAILURES" -eq "$before" ] || bad=$((bad + 1))
	done
	if [ "$bad" -eq 0 ]; then
		env_result "$name" "same tree and database as dpkg (--sync: ${STRATEGIES[*]})"
	else
		env_result "$name" "DIFFERENT from dpkg with $bad of ${#STRATEGIES[@]} strategies"
	fi
}

# dpkg_root DIR DEB...: a primed root with DEBs installed by dpkg.
dpkg_root() {
	local dir=$1
	shift
	prime_root "$dir"
	[ "$#" -eq 0 ] || dpkg --root="$dir" -i "$@" >/dev/null
}

env_readonly() {
	section "environment: a read-only root"
	local base=$TESTDIR/ro rc
	mkdir -p "$base"
	# a read-only bind mount of a root, and a tmpfs remounted read-only
	dpkg_root "$base/root" "$KEEPER"
	mkdir -p "$base/bind"
	if ! mount --bind "$base/root" "$base/bind" 2>"$W/mount.err"; then
		skip_part "read-only roots and instdir" "cannot bind-mount: $(cat "$W/mount.err")"
		env_result "read-only root" "skipped: no bind mount"
		return 0
	fi
	register_mount "$base/bind"
	mount -o remount,bind,ro "$base/bind"
	local kind r
	for kind in bind tmpfs; do
		r=$base/bind
		if [ "$kind" = tmpfs ]; then
			if ! env_mount tmpfs "$base/tmpfs" mode=0755; then
				skip_part "read-only root on a tmpfs" "cannot mount a tmpfs: $(cat "$W/mount.err")"
				continue
			fi
			dpkg_root "$base/tmpfs" "$KEEPER"
			mount -o remount,ro "$base/tmpfs"
			r=$base/tmpfs
		fi
		fingerprint "$r" db >"$W/ro.before"
		rc=0
		unpkg_run "$r" dpkg -i "$ALPHA1" "$BETA1" >"$W/ro.out" 2>"$W/ro.err" || rc=$?
		show_file "$W/ro.err" "unpkg stderr"
		[ "$rc" -eq 1 ] || [ "$rc" -eq 2 ] || check_fail "read-only root ($kind): exit $rc, expected 1 or 2"
		assert_grep 'Read-only file system' "$W/ro.err" "read-only root ($kind): the cause"
		assert_grep "$(basename "$r")" "$W/ro.err" "read-only root ($kind): the path"
		fingerprint "$r" db >"$W/ro.after"
		assert_same_file "$W/ro.before" "$W/ro.after" "read-only root ($kind): root and database before and after"
		env_result "read-only root ($kind mount)" "exit $rc, nothing changed: $(head -n 1 "$W/ro.err")"
	done

	# The files read-only, the database writable: the mark is written,
	# the first directory fails, the mark is undone.
	section "environment: read-only files, writable database"
	mkdir -p "$base/admin"
	cp -a "$base/root/var/lib/dpkg/." "$base/admin/"
	fingerprint "$base/bind" >"$W/ro.before"
	db_manifest "$base/admin" >"$W/ro.db.before"
	rc=0
	"$UNPKG" --instdir="$base/bind" --admindir="$base/admin" --sync=dpkg \
		-i "$ALPHA2" "$BETA1" >"$W/ro.out" 2>"$W/ro.err" || rc=$?
	show_file "$W/ro.err" "unpkg stderr"
	assert_status 1 "$rc" "read-only files"
	assert_grep 'Read-only file system' "$W/ro.err" "read-only files: the cause"
	assert_grep '/(etc|usr)/' "$W/ro.err" "read-only files: the path"
	fingerprint "$base/bind" >"$W/ro.after"
	db_manifest "$base/admin" >"$W/ro.db.after"
	assert_same_file "$W/ro.before" "$W/ro.after" "read-only files: files before and after"
	assert_same_file "$W/ro.db.before" "$W/ro.db.after" "read-only files: database before and after"
	env_result "read-only instdir, writable admindir" "exit $rc, files and database unchanged: $(grep -m1 -i 'read-only' "$W/ro.err" | sed 's/^ *//')"
}

env_tmpfs() {
	section "environment: a root on tmpfs, compared with dpkg"
	local base=$TESTDIR/tmpfs-env s
	if ! env_mount tmpfs "$base" mode=0755; then
		skip_part "a root on tmpfs" "cannot mount a tmpfs: $(cat "$W/mount.err")"
		env_result "tmpfs" "skipped: cannot mount"
		return 0
	fi
	dpkg_root "$base/dpkg" "$KEEPER"
	for s in "${STRATEGIES[@]}"; do
		dpkg_root "$base/unpkg-$s" "$KEEPER"
	done
	unpkg_vs_dpkg "tmpfs, fresh install" "$base/unpkg" "$base/dpkg" -i "$ALPHA1" "$BETA1"
	unpkg_vs_dpkg "tmpfs, upgrade" "$base/unpkg" "$base/dpkg" -i "$ALPHA2" "$BETA2"
}

# overlay LOWER DIR: mount an overlay of LOWER at DIR (upper and work
# directories beside it).
overlay() {
	mkdir -p "$2.upper" "$2.work" "$2"
	mount -t overlay unpkg-faults-overlay \
		-o "lowerdir=$1,upperdir=$2.upper,workdir=$2.work" "$2" 2>"$W/mount.err" ||
		return 1
	register_mount "$2"
}

env_overlay() {
	section "environment: a root on overlayfs, compared with dpkg on a twin overlay"
	local base=$TESTDIR/overlay kind lower s
	# the layers on a tmpfs: an upper directory cannot be on every file
	# system (not on another overlay, for one); it is registered for
	# unmounting after the overlays on it
	mkdir -p "$base"
	if ! mount -t tmpfs -o mode=0755 unpkg-faults-tmpfs "$base" 2>"$W/mount.err"; then
		skip_part "a root on overlayfs" "cannot mount a tmpfs for its layers: $(cat "$W/mount.err")"
		env_result "overlayfs" "skipped: cannot mount a tmpfs: $(cat "$W/mount.err")"
		return 0
	fi
	# like a container image: the packages' directories in the lower layer
	dpkg_root "$base/lower-fresh" "$KEEPER"
	dpkg_root "$base/lower-old" "$KEEPER" "$ALPHA1" "$BETA1"
	# (rm: the removal, over the same lower layer as the upgrade; rmio:
	# the same once more, traced)
	for kind in fresh old rm rmio; do
		lower=old
		[ "$kind" != fresh ] || lower=fresh
		for s in dpkg "${STRATEGIES[@]/#/unpkg-}"; do
			if ! overlay "$base/lower-$lower" "$base/$kind-$s"; then
				register_mount "$base"
				skip_part "a root on overlayfs" "cannot mount overlayfs: $(cat "$W/mount.err")"
				env_result "overlayfs" "skipped: cannot mount overlayfs: $(cat "$W/mount.err")"
				return 0
			fi
		done
	done
	register_mount "$base"
	unpkg_vs_dpkg "overlayfs, fresh install into lower-layer directories" \
		"$base/fresh-unpkg" "$base/fresh-dpkg" -i "$ALPHA1" "$BETA1"
	unpkg_vs_dpkg "overlayfs, upgrade of packages in the lower layer" \
		"$base/old-unpkg" "$base/old-dpkg" -i "$ALPHA2" "$BETA2"
	unpkg_vs_dpkg "overlayfs, removal of packages in the lower layer" \
		"$base/rm-unpkg" "$base/rm-dpkg" --remove alpha beta
	# moving a file of the lower layer aside would copy it up whole,
	# with an fsync: the removal unlinks them at once instead (renames
	# in the admin directory aside, and directories, which fail EXDEV
	# and are rebuilt)
	strace -f -qq -y -e trace=rename,renameat,renameat2 -o "$W/rmio.trace" \
		"$UNPKG" --root="$base/rmio-unpkg-auto" --remove alpha beta >"$W/rmio.out" 2>&1 ||
		{ check_fail "overlayfs, traced removal: unpkg exited $?"; show_file "$W/rmio.out"; }
	if grep -v '/var/lib/dpkg' "$W/rmio.trace" | grep '= 0$' >"$W/rmio.moved"; then
		check_fail "overlayfs, removal: files moved aside (copied up) instead of unlinked:"
		show_file "$W/rmio.moved"
	else
		env_result "overlayfs, removal: files of the lower layer" "unlinked, none moved aside"
	fi
}

# --- main ---------------------------------------------------------------------

if [ -n "$ONLY" ]; then
	for only in $ONLY; do
		o_case=${only%%:*} o_pts=
		case $only in *:*) o_pts=${only#*:} ;; esac
		case ${o_case##*/} in
		selftest)
			prepare_case upgrade dpkg && kill_points "$CASE_DIR/trace" >"$CASE_DIR/points" && selftest
			selftest_rules
			;;
		enospc | eio) fault_case "${o_case%%/*}" "$(cut -d/ -f2 <<<"$o_case")" "${o_case##*/}" ;;
		*) kill_case "${o_case%/*}" "${o_case#*/}" all "$o_pts" ;;
		esac
	done
	# the runs of part 2, each: case, fault, failed call, exit status
	sed -E "s|$ROOT||g; s/^/$TEST_NAME: fault run: /" "$W/faults.log"
	exit 0
fi

# The checks first show that they can fail.
if [[ " ${STRATEGIES[*]} " == *" dpkg "* ]]; then
	prepare_case upgrade dpkg && kill_points "$CASE_DIR/trace" >"$CASE_DIR/points" &&
		selftest
fi
selftest_rules

# 1. SIGKILL.  Default: the default strategy (auto) at every call of the
# fresh install, the smaller case, and at every second call that changes
# the file system of the upgrade; the dpkg strategy at every second call
# that changes the file system of the upgrade and at every fourth one of
# the fresh install; about 12 points per case for the other strategies
# and for the sync_file_range ENOSYS fallback.
for scen in upgrade fresh; do
	for strat in "${STRATEGIES[@]}"; do
		if [ "$strat" = auto ] && [ "$scen" = fresh ]; then
			kill_case "$scen" "$strat" every
		elif [ "$FULL" != 0 ]; then
			kill_case "$scen" "$strat" all
		elif [ "$strat" = auto ]; then
			kill_case "$scen" "$strat" /2
		elif [ "$strat" = dpkg ] && [ "$scen" = upgrade ]; then
			kill_case "$scen" "$strat" /2
		elif [ "$strat" = dpkg ]; then
			kill_case "$scen" "$strat" /4
		else
			kill_case "$scen" "$strat" "~12"
		fi
	done
done
# an unpack onto diverted paths: every second call that changes the file
# system with the default strategy, about 12 with dpkg's
for strat in auto dpkg; do
	[[ " ${STRATEGIES[*]} " == *" $strat "* ]] || continue
	if [ "$FULL" != 0 ]; then
		kill_case diverted "$strat" all
	elif [ "$strat" = auto ]; then
		kill_case diverted "$strat" /2
	else
		kill_case diverted "$strat" "~12"
	fi
done
if [[ " ${STRATEGIES[*]} " == *" dpkg "* ]]; then
	if [ "$FULL" != 0 ]; then
		kill_case fallback dpkg all
	else
		kill_case fallback dpkg "~12"
	fi
fi
# The other actions: the default strategy at every call that changes the
# file system of the configuration and the trigger processing, at every
# second one of the removal and the purge; about 12 points for the other
# strategies (all in full mode).  Where stock dpkg carries the action
# out, there is one case, without --sync.
for scen in $ACTION_SCENARIOS; do
	sync_probe "$scen"
	for strat in "${STRATEGIES[@]}"; do
		if [ "$strat" != auto ] && [ "${SYNC_OK[$scen]}" = 0 ]; then
			continue
		elif [ "$FULL" != 0 ]; then
			kill_case "$scen" "$strat" all
		elif [ "$strat" != auto ]; then
			kill_case "$scen" "$strat" "~12"
		elif [ "$scen" = remove ] || [ "$scen" = purge ]; then
			kill_case "$scen" "$strat" /2
		else
			kill_case "$scen" "$strat" all
		fi
	done
done

# A kept conffile's NAME.dpkg-dist: the default strategy at every call
# that changes the file system.
kill_case confkeep auto all

# The upgrade and the removal on an overlay's root, as in a container:
# they remove directories of the lower layer, which overlayfs cannot
# rename.  The default strategy at every call that changes the file
# system.
overlay_kill_cases() {
	local p=$W/ovl-probe
	mkdir -p "$p/lower" "$p/upper" "$p/work" "$p/mnt"
	if ! mount -t overlay unpkg-faults-probe -o \
		"lowerdir=$p/lower,upperdir=$p/upper,workdir=$p/work,redirect_dir=off" \
		"$p/mnt" 2>"$W/mount.err"; then
		skip_part "SIGKILL on an overlay's root" "cannot mount overlayfs: $(cat "$W/mount.err")"
		return 0
	fi
	umount "$p/mnt"
	kill_case upgrade-overlay auto all
	kill_case remove-overlay auto all
}
overlay_kill_cases

# 2. Failing calls: every sync of the other actions with the default
# strategy (with every strategy in full mode); then every write to a file
# and every sync of the default
# strategy (auto) and of dpkg's, about 12 syncs of each other one (all in
# full mode).
for scen in $ACTION_SCENARIOS; do
	for strat in "${STRATEGIES[@]}"; do
		if [ "$strat" = auto ] || { [ "$FULL" != 0 ] && [ "${SYNC_OK[$scen]}" = 1 ] &&
			[ "$strat" != none ]; }; then
			fault_case "$scen" "$strat" eio
		fi
	done
done
for strat in "${STRATEGIES[@]}"; do
	if [ "$strat" = auto ] || [ "$strat" = dpkg ] || [ "$FULL" != 0 ]; then
		fault_case upgrade "$strat" enospc
	fi
	if [ "$strat" = auto ] || [ "$strat" = dpkg ] || [ "$FULL" != 0 ]; then
		fault_case upgrade "$strat" eio
	elif [ "$strat" != none ]; then
		fault_case upgrade "$strat" eio 12
	fi
done

# 3. Environments.
env_readonly
env_tmpfs
env_overlay

# --- summary ------------------------------------------------------------------

section "summary"
{
	printf 'SIGKILL: scenario strategy kill-points violations known-bugs-only calls-in-run selection\n'
	sed 's/^/  /' "$SUMMARY"
	printf 'failing calls: scenario strategy fault runs violations known-bugs-only\n'
	sed 's/^/  /' "$W/faults.summary"
	printf 'failing calls, each run: case, fault, failed call, exit status, message\n'
	sed -E "s|$ROOT||g; s/^/  /" "$W/faults.log"
	printf 'environments:\n'
	sed 's/^/  /' "$ENV_RESULTS"
} | sed "s/^/$TEST_NAME: /"
note "kill points tested: $TOTAL_POINTS, violations: $TOTAL_VIOLATIONS ($TOTAL_KNOWN of known bugs only)"
note "fault runs: $TOTAL_FAULT_RUNS, with violations: $TOTAL_FAULT_VIOLATIONS ($TOTAL_FAULT_KNOWN of known bugs only)"
for tag in $KNOWN_BUGS; do
	if [ "${KNOWN_SEEN[$tag]:-0}" -gt 0 ]; then
		note "KNOWN BUG $tag: ${KNOWN_SEEN[$tag]} findings (doc/reliability.md)"
	elif [ -z "$ONLY" ] && [ "$FULL" = 0 ]; then
		note "known bug $tag did not show up: fixed? then take it off KNOWN_BUGS"
	fi
done

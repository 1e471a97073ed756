#!/bin/bash
# bench-apt.sh - a quick run of "unpkg-bench apt" (bench/unpkg-bench-apt):
# the whole apt job on a one-package set, one run.
#
# First what needs no network: the dispatch from unpkg-bench, the list of
# contenders, a wrong option.  Then, in a Debian 12 minbase root that the
# tool debootstraps from the host's apt sources and keeps in
#   $UNPKG_TEST_CACHE (default /var/cache/unpkg-tests)/bench-apt
# apt-get install and purge of "less" with every contender, counted and
# timed on a slow disk of 1 ms per flush: every contender must succeed and
# leave the same root after each phase; stock dpkg must be seen syncing,
# dpkg under eatmydata not; apt's dpkg invocations must be counted, all of
# them carried out by stock dpkg for the dpkg contenders, and unpkg's own
# syncs attributed to unpkg.  Last, the root check must catch differences
# planted with --post-cmd: a file removed after unpkg's install, a line
# added to its database after its purge.
# When the host's apt sources have no Debian archive, the test is skipped
# (as debootstrap.sh is); when the archive cannot be reached (debootstrap
# or apt-get update fails for want of the network), the apt runs are a
# skipped part.
TEST_NAME=bench-apt
. "${TESTLIB:?}"
need_cmd debootstrap chroot strace findmnt losetup mkfs.ext4 setsid
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE is not available)"
need_mounts

SRC=$(cd "$(dirname "$TESTLIB")/../.." && pwd)
BENCH=$SRC/bench/unpkg-bench
BUILD_BENCH=${BENCHDIR:-$(dirname "$UNPKG")/../bench}
export IMGFS=$BUILD_BENCH/imgfs
for p in "$BENCH" "$SRC/bench/unpkg-bench-apt" "$IMGFS"; do
	[ -x "$p" ] || hard_error "$p is not built or not executable"
done
CACHE=${UNPKG_TEST_CACHE:-/var/cache/unpkg-tests}/bench-apt

# csv_field CSV CONTENDER PHASE COLUMN: a field of the summary CSV.
csv_field() {
	awk -F, -v id="$2" -v ph="$3" -v col="$4" '
	NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
	$1 == id && $2 == ph { print $c }' "$1"
}

section "without the network: dispatch, contenders, usage"
run_logged "$TESTDIR/list" "$BENCH" apt --list-contenders
assert_status 0 "$RUN_RC" "unpkg-bench apt --list-contenders"
for c in dpkg-safe dpkg-unsafe dpkg-eatmydata unpkg; do
	assert_grep "^$c " "$TESTDIR/list.out" "contender $c listed"
done
assert_grep 'Dir::Bin::dpkg=/usr/local/sbin/unpkg' "$TESTDIR/list.out" "unpkg is apt's dpkg"
run_logged "$TESTDIR/usage" "$BENCH" apt --no-such-option
assert_status 2 "$RUN_RC" "unpkg-bench apt with an unknown option"
run_logged "$TESTDIR/usage2" "$BENCH" apt --set 'less Bad_Name'
assert_status 2 "$RUN_RC" "unpkg-bench apt with a bad package name"

MIRROR=${UNPKG_TEST_MIRROR:-$(debian_archive bookworm || true)}
[ -n "$MIRROR" ] ||
	skip "the host's apt sources have no Debian archive (no bookworm, nor the host's own release, with main)"

CONTENDERS=dpkg-safe,dpkg-unsafe,dpkg-eatmydata,unpkg
if ! command -v eatmydata >/dev/null 2>&1; then
	skip_part dpkg-eatmydata "eatmydata is not installed"
	CONTENDERS=dpkg-safe,dpkg-unsafe,unpkg
fi

# unreachable ERRFILE: whether the tool failed for want of the archive.
unreachable() {
	grep -qiE 'Failed getting release file|Couldn.t download|Unable to fetch|Failed to fetch|Temporary failure|Could not resolve|Connection refused|Network is unreachable|No route' "$1"
}

section "install and purge of less, every contender, one run"
run_logged "$TESTDIR/a1" "$BENCH" apt --unpkg "$UNPKG" --cache "$CACHE" --dir "$TESTDIR" \
	--mirror "$MIRROR" --set less --runs 1 --latency 1 --contenders "$CONTENDERS" \
	--out "$TESTDIR/a1"
show_file "$TESTDIR/a1.out" "unpkg-bench apt output"
show_file "$TESTDIR/a1.err" "unpkg-bench apt stderr"
if [ "$RUN_RC" = 2 ] && unreachable "$TESTDIR/a1.err"; then
	skip_part "the apt runs" "the Debian archive $MIRROR cannot be reached (see the stderr above)"
	exit 0
fi
assert_status 0 "$RUN_RC" "unpkg-bench apt"
csv=$TESTDIR/a1.csv
for f in a1.csv a1-runs.csv a1.json; do
	[ -s "$TESTDIR/$f" ] || fail "$f was not written"
done
if command -v python3 >/dev/null 2>&1; then
	python3 -m json.tool "$TESTDIR/a1.json" >/dev/null || check_fail "a1.json is not valid JSON"
else
	skip_part "a1.json is valid JSON" "no python3 to read it"
fi
IFS=, read -r -a cs <<<"$CONTENDERS"
for c in "${cs[@]}"; do
	for ph in install purge; do
		[ "$(csv_field "$csv" "$c" "$ph" root)" = same ] ||
			check_fail "$c, $ph: root '$(csv_field "$csv" "$c" "$ph" root)', expected same"
		[ "$(csv_field "$csv" "$c" "$ph" failed)" = 0 ] || check_fail "$c, $ph: failed runs"
		inv=$(csv_field "$csv" "$c" "$ph" invocations)
		stock=$(csv_field "$csv" "$c" "$ph" stock_invocations)
		[ "$inv" -ge 1 ] || check_fail "$c, $ph: no dpkg invocation of apt counted"
		case $c in
		dpkg-*)
			[ "$stock" = "$inv" ] ||
				check_fail "$c, $ph: $inv invocations, $stock of them by stock dpkg"
			[ "$(csv_field "$csv" "$c" "$ph" unpkg_fsync)" = 0 ] ||
				check_fail "$c, $ph: syncs attributed to unpkg"
			;;
		esac
	done
done
[ "$(csv_field "$csv" dpkg-safe install dpkg_fsync)" -gt 0 ] ||
	check_fail "dpkg-safe: no fsync of stock dpkg counted"
if [[ $CONTENDERS == *eatmydata* ]]; then
	for col in dpkg_fsync dpkg_fdatasync dpkg_sync_file_range dpkg_syncfs dpkg_sync; do
		[ "$(csv_field "$csv" dpkg-eatmydata install "$col")" = 0 ] ||
			check_fail "dpkg-eatmydata: stock dpkg made a sync call ($col) despite eatmydata"
	done
fi
u=$(csv_field "$csv" unpkg install unpkg_fsync)
u=$((u + $(csv_field "$csv" unpkg install unpkg_fdatasync) + $(csv_field "$csv" unpkg install unpkg_syncfs) + $(csv_field "$csv" unpkg install unpkg_io_uring_enter)))
[ "$u" -gt 0 ] || check_fail "unpkg: none of its own syncs counted"
[ "$(csv_field "$csv" unpkg install stock_invocations)" -lt "$(csv_field "$csv" unpkg install invocations)" ] ||
	check_fail "unpkg: every invocation of apt counted as stock dpkg's (unpkg carries out --unpack)"

section "planted differences are caught"
# shellcheck disable=SC2016 # expanded by --post-cmd's shell
plant='if [ "$CONTENDER" = unpkg ] && [ "$PHASE" = install ]; then rm "$ROOT/usr/share/doc/less/copyright"; fi
if [ "$CONTENDER" = unpkg ] && [ "$PHASE" = purge ]; then echo "root root 0755 /usr/bin/planted" >>"$ROOT/var/lib/dpkg/statoverride"; fi'
run_logged "$TESTDIR/a2" "$BENCH" apt --unpkg "$UNPKG" --cache "$CACHE" --dir "$TESTDIR" \
	--mirror "$MIRROR" --set less --runs 1 --latency 0 --no-count --contenders dpkg-safe,unpkg \
	--post-cmd "$plant" --out "$TESTDIR/a2"
show_file "$TESTDIR/a2.out" "unpkg-bench apt output"
assert_status 1 "$RUN_RC" "unpkg-bench apt with planted differences"
[ "$(csv_field "$TESTDIR/a2.csv" dpkg-safe install root)" = same ] ||
	check_fail "the reference is flagged: $(csv_field "$TESTDIR/a2.csv" dpkg-safe install root)"
for ph in install purge; do
	[ "$(csv_field "$TESTDIR/a2.csv" unpkg "$ph" root)" = DIFFERS ] ||
		check_fail "the planted difference after $ph is not caught: $(csv_field "$TESTDIR/a2.csv" unpkg "$ph" root)"
done
assert_grep '^-\./usr/share/doc/less/copyright ' "$TESTDIR/a2.err" "the removed file is shown"
assert_grep '^[+]root root 0755 /usr/bin/planted' "$TESTDIR/a2.err" "the database line is shown"

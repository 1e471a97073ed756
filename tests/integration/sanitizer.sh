#!/bin/bash
# sanitizer.sh - the sanitizer build can fail a test that expects exit 1.
#
# Many tests expect unpkg to refuse an input with exit status 1; an ASan,
# LSan or UBSan finding also used to end a process with 1, so such a test
# passed with a memory error on the very error path it exercised.  make
# check now runs every test of a sanitizer build with options that give a
# finding an exit status of its own and write its report into the test's
# UNPKG_SAN_DIR (Makefile.am), and lib.sh fails a test that leaves a report
# there.  This test proves both with tests/san-selftest, a sanitized
# program that makes one error and then exits 1:
#   1. overflow, leak and undefined each end with the sanitizers' exit
#      status, not 1, and leave a report naming the error in UNPKG_SAN_DIR
#      (with GCC, UBSan's reports go to stderr only: a skipped part);
#   2. a test written with lib.sh that runs the leak (the overflow when
#      leak detection is off), accepts its failure as if it were a refusal
#      and exits 0, ends with status 1 and the report in its log; the same
#      test running the clean mode passes.
# Skipped in a build without sanitizers.

. "${TESTLIB:?}"

SELFTEST=$(dirname "$(dirname "$UNPKG")")/tests/san-selftest
[ -n "${UNPKG_SAN_DIR:-}" ] ||
	skip "not a sanitizer build (configure --enable-sanitizers)"
[ -x "$SELFTEST" ] || hard_error "$SELFTEST is not built"
grep -aq __asan_init "$SELFTEST" ||
	hard_error "UNPKG_SAN_DIR is set but $SELFTEST has no AddressSanitizer"

# The exit status make check asked for (the last exitcode= wins).
want=$(sed -n 's/.*exitcode=\([0-9]*\).*/\1/p' <<<"$ASAN_OPTIONS")
[ -n "$want" ] && [ "$want" -ne 1 ] ||
	hard_error "ASAN_OPTIONS gives no exit status of its own: $ASAN_OPTIONS"
note "sanitizer exit status: $want"

# With GCC, UBSan is a runtime library apart from ASan's (libubsan.so) and
# writes its reports to stderr whatever log_path says; only the exit status
# tells then.  GCC's UBSan also checks object sizes, so it is UBSan, not
# ASan, that reports the overflow.  run-tests.sh builds with clang, whose
# runtimes are one.
gcc_ubsan=0
if ldd "$SELFTEST" | grep -q 'libubsan\.so'; then
	gcc_ubsan=1
fi
leaks=1
case :$ASAN_OPTIONS: in
*:detect_leaks=0:*) leaks=0 ;;
esac

# run_case MODE PATTERN: san-selftest MODE exits $want and leaves one
# report matching PATTERN; the report is then moved out of UNPKG_SAN_DIR
# (it is this test's evidence, not a finding).
run_case() {
	local mode=$1 pattern=$2 n=0 f
	section "$mode"
	run_logged "$TESTDIR/$mode" "$SELFTEST" "$mode"
	assert_status "$want" "$RUN_RC" "san-selftest $mode"
	show_file "$TESTDIR/$mode.err" "stderr"
	mkdir -p "$TESTDIR/reports.$mode"
	for f in "$UNPKG_SAN_DIR"/*; do
		mv -- "$f" "$TESTDIR/reports.$mode/"
		n=$((n + 1))
	done
	if [ "$n" -eq 0 ] && [ "$gcc_ubsan" -eq 1 ] &&
		grep -q 'runtime error:' "$TESTDIR/$mode.err"; then
		skip_part "$mode report file" "GCC's libubsan caught it and ignores log_path (stderr only)"
		return 0
	fi
	if [ "$n" -ne 1 ]; then
		check_fail "san-selftest $mode: $n reports in UNPKG_SAN_DIR, expected 1"
		return 0
	fi
	show_file "$TESTDIR/reports.$mode"/* "report"
	assert_grep "$pattern" "$TESTDIR/reports.$mode"/* "san-selftest $mode: report"
}

run_case overflow 'ERROR: AddressSanitizer: heap-buffer-overflow'
if [ "$leaks" -eq 1 ]; then
	run_case leak 'ERROR: LeakSanitizer: detected memory leaks'
else
	skip_part leak "ASAN_OPTIONS turns leak detection off here: $ASAN_OPTIONS"
fi
run_case undefined 'runtime error: signed integer overflow'

# --- lib.sh turns a report into a failure ------------------------------------

# child MODE: a test that runs san-selftest MODE as a test runs unpkg on a
# refused input: it wants a failure and gets one.  It runs with a report
# directory of its own.
child() {
	local mode=$1 dir=$TESTDIR/child-$1
	mkdir -p "$dir/san"
	cat >"$dir/child.sh" <<-EOF
	. "\${TESTLIB:?}"
	if "$SELFTEST" $mode; then
		fail "san-selftest $mode succeeded"
	fi
	note "san-selftest $mode failed, as a refused input does"
	EOF
	run_logged "$dir/out" env UNPKG_SAN_DIR="$dir/san" \
		ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$dir/san/report" \
		LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}log_path=$dir/san/report" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$dir/san/report" \
		bash "$dir/child.sh"
	CHILD_ERR=$dir/out.err
}

# A finding that goes to a file with either compiler: a leak, else the
# overflow (which GCC's UBSan takes).
if [ "$leaks" -eq 1 ]; then
	mode=leak pattern='LeakSanitizer: detected memory leaks'
else
	mode=overflow pattern='heap-buffer-overflow'
fi
section "a test expecting exit 1 gets a sanitizer finding ($mode)"
if [ "$mode" = overflow ] && [ "$gcc_ubsan" -eq 1 ]; then
	skip_part "lib.sh failing a test on a report" "no finding here that GCC's runtimes write to a file with leaks off"
else
	child "$mode"
	show_file "$CHILD_ERR" "its log"
	assert_status 1 "$RUN_RC" "a test whose program had a sanitizer report"
	assert_grep 'FAIL: sanitizer report .*/report\.[0-9]+:' "$CHILD_ERR" "its log"
	assert_grep "$pattern" "$CHILD_ERR" "its log"
fi

section "the same test, clean"
child clean
show_file "$CHILD_ERR" "its log"
assert_status 0 "$RUN_RC" "a test whose program had no sanitizer finding"

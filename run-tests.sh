#!/bin/bash
# run-tests.sh - install what unpkg needs, then build it twice and run the
# whole test suite on each build:
#   _build/      a normal build:                              make check
#   _build-san/  ASan + UBSan build, with clang if it is      make check
#                installed (its sanitizer runtimes write every report to
#                a file; see Makefile.am, SAN_TESTS_ENVIRONMENT)
# then the fuzzing smoke run (make fuzz-smoke in _build).
#
# Usage: ./run-tests.sh [--no-deps] [--no-san] [--no-fuzz]
#   --no-deps  do not install packages with apt-get (they are already there)
#   --no-san   skip the sanitizer build
#   --no-fuzz  skip the fuzzing smoke run
#
# Run it as root to get the tests that need root (mounts, chown); as an
# ordinary user apt-get is run through sudo and those tests are skipped.
#
# Besides automake's results, the summary counts as failed:
# - every test of the sanitizer build that left a sanitizer report (ASan,
#   LSan, UBSan) in its report directory, whatever its own result: such a
#   test may have expected unpkg to fail and got a memory error instead;
# - with CI=true in the environment (as CI sets it), every skipped test and
#   every skipped part of a test ("NAME: SKIP PART: WHAT: WHY" in its log)
#   that is not a skip by design, listed in BY_DESIGN below with its reason.
# Skipped parts and tests are listed in the summary either way.  The last
# line printed is "N passed, N failed", summed over both builds.
#
# Environment:
#   UNPKG_CHECK_TIMEOUT  time limit for each "make check" (default 40m)
#   UNPKG_TESTS          run only these tests in each build (make check
#                        TESTS=...), e.g. "tests/integration/errors.sh"
#   CI                   "true": a skip not by design is a failure
set -euo pipefail

want_deps=yes
san_build=yes
fuzz=yes
for arg in "$@"; do
	case $arg in
	--no-deps) want_deps=no ;;
	--no-san) san_build=no ;;
	--no-fuzz) fuzz=no ;;
	-h | --help)
		sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"
		exit 0
		;;
	*)
		echo "run-tests.sh: unknown argument: $arg (try --help)" >&2
		exit 2
		;;
	esac
done

top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$top"

say() { printf '\n=== %s\n' "$*"; }

# --- dependencies -----------------------------------------------------------
# shellcheck source=tools/deps.sh
. tools/deps.sh
if [ "$want_deps" = yes ]; then
	say "build and test dependencies"
	install_deps "${BUILD_DEPS[@]}" "${TEST_DEPS[@]}"
fi

# --- generate the build system ----------------------------------------------
if [ -f config.status ]; then
	echo "run-tests.sh: the source tree itself is configured; run 'make distclean' here first" >&2
	exit 2
fi
say "autoreconf -fi"
mkdir -p m4
autoreconf -fi

jobs=$(nproc)
timeout_check=${UNPKG_CHECK_TIMEOUT:-40m}
total_pass=0 total_fail=0 total_skip=0
overall=0
skip_report=()
on_ci=no
if [ "${CI:-}" = true ]; then
	on_ci=yes
fi

# Skips by design: the ones CI accepts.  Each entry is a pattern
# "BUILD: TEST: WHAT" (shell glob; WHAT is "(whole test)" for a test that
# skipped as a whole), a "|", and the reason.  Any other skip, of a test
# or of a part of one, fails a CI run: a part that cannot run on CI's
# machine is a part that never runs.
BY_DESIGN=(
	"sanitizer build: memory: (whole test)|memory.sh measures unpkg's RSS, which in a sanitizer build is mostly ASan's own; it runs in the normal build"
	"normal build: sanitizer: (whole test)|sanitizer.sh checks the sanitizers' reporting, which only the sanitizer build has"
	"sanitizer build: check_deb: heap bound of many open packages|mallinfo2() does not see ASan's allocator; the bound is checked in the normal build"
	"*: check_strategy: auto beside a device's dirty data|it needs \$TMPDIR on a file system with a device where auto takes syncfs; submount.sh runs it on ext4 and xfs"
)

# by_design KEY: print the reason if KEY ("BUILD: TEST: WHAT") is a skip
# by design, else fail.
by_design() {
	local entry
	for entry in "${BY_DESIGN[@]}"; do
		# shellcheck disable=SC2053 # the pattern is a glob on purpose
		if [[ $1 == ${entry%%|*} ]]; then
			printf '%s\n' "${entry#*|}"
			return 0
		fi
	done
	return 1
}

# Print the logs that explain a failed run of "make check" in build dir $1.
show_failures() {
	local dir=$1 trs log
	if [ -f "$dir/test-suite.log" ]; then
		say "$dir/test-suite.log (last 60 lines)"
		tail -n 60 "$dir/test-suite.log"
	fi
	while IFS= read -r trs; do
		if grep -Eq '^:test-result: (FAIL|XPASS|ERROR)' "$trs"; then
			log=${trs%.trs}.log
			say "$log (last 200 lines)"
			tail -n 200 "$log" 2>/dev/null || echo "(no log)"
		fi
	done < <(find "$dir" -name '*.trs' | sort)
}

# test_name TRS: the name a test uses in its log lines (lib.sh's TEST_NAME,
# a unit test's program name): the file name without .trs and .sh.
test_name() {
	local n=${1##*/}
	n=${n%.trs}
	printf '%s\n' "${n%.sh}"
}

# Count the results recorded in the .trs files of build dir $1.
count_results() {
	local dir=$1 label=$2 pass fail skip xfail xpass error results
	results=$(find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null |
		sed -n 's/^:test-result: //p' || true)
	pass=$(grep -cx 'PASS' <<<"$results" || true)
	xfail=$(grep -cx 'XFAIL' <<<"$results" || true)
	fail=$(grep -cx 'FAIL' <<<"$results" || true)
	xpass=$(grep -cx 'XPASS' <<<"$results" || true)
	error=$(grep -cx 'ERROR' <<<"$results" || true)
	skip=$(grep -cx 'SKIP' <<<"$results" || true)
	echo "$label: PASS $pass, XFAIL $xfail, FAIL $fail, XPASS $xpass, ERROR $error, SKIP $skip"
	total_pass=$((total_pass + pass + xfail))
	total_fail=$((total_fail + fail + xpass + error))
	total_skip=$((total_skip + skip))
	skip_report+=("$skip in $label")
}

# Skips of build dir $1 (label $2): the tests automake recorded as SKIP,
# with the reason from their log, and the skipped parts in every test log
# ("NAME: SKIP PART: WHAT: WHY").  Each goes to the summary; on CI each
# not by design counts as a failed result.
skipped_parts=()
collect_skips() {
	local dir=$1 label=$2 trs log name reason line key why
	while IFS= read -r trs; do
		grep -qx ':test-result: SKIP' "$trs" || continue
		name=$(test_name "$trs")
		log=${trs%.trs}.log
		reason=$(sed -n "s/^$name: SKIP: //p" "$log" 2>/dev/null | head -n 1)
		key="$label: $name: (whole test)"
		note_skip "$key" "${reason:-(no reason in $log)}" whole
	done < <(find "$dir" -name '*.trs' | sort)
	while IFS= read -r line; do
		name=${line%%: SKIP PART: *}
		line=${line#*: SKIP PART: }
		key="$label: $name: ${line%%: *}"
		why=${line#*: }
		note_skip "$key" "$why" part
	done < <(find "$dir" -name '*.log' ! -name test-suite.log ! -name 'fuzz-smoke*' \
		-exec grep -h -E '^[^ :]+: SKIP PART: ' {} + 2>/dev/null | sort -u)
}

# note_skip KEY WHY KIND: list a skip; on CI fail it unless by design.
note_skip() {
	local key=$1 why=$2 kind=$3 reason
	if reason=$(by_design "$key"); then
		skipped_parts+=("$key: $why [by design: $reason]")
		return 0
	fi
	if [ "$on_ci" = yes ]; then
		skipped_parts+=("$key: $why [FAILED: not a skip by design, and CI=true]")
		total_fail=$((total_fail + 1))
		if [ "$kind" = whole ]; then
			# counted as skipped by count_results: now a failure
			total_skip=$((total_skip - 1))
		fi
		overall=1
	else
		skipped_parts+=("$key: $why")
	fi
}

# Sanitizer reports of build dir $1 (label $2): every TEST.san directory
# (UNPKG_SAN_DIR of each test, Makefile.am) that holds a report.  The
# reports are printed; a test that left one and did not already fail counts
# as failed, whatever automake recorded.
san_reports=0
collect_sanitizer_reports() {
	local dir=$1 label=$2 d f trs
	while IFS= read -r d; do
		set -- "$d"/*
		[ -e "$1" ] || continue
		san_reports=$((san_reports + 1))
		say "$label: sanitizer reports of ${d%.san}"
		for f in "$d"/*; do
			printf -- '--- %s\n' "$f"
			cat -- "$f"
		done
		trs=${d%.san}.trs
		if [ -f "$trs" ] && grep -Eq '^:test-result: (FAIL|XPASS|ERROR)' "$trs"; then
			continue
		fi
		if [ -f "$trs" ] && grep -Eq '^:test-result: SKIP' "$trs"; then
			total_skip=$((total_skip - 1))
		elif [ -f "$trs" ]; then
			total_pass=$((total_pass - 1))
		fi
		total_fail=$((total_fail + 1))
		overall=1
	done < <(find "$dir" -name '*.san' -type d | sort)
}

# Configure in build dir $1 with the remaining arguments, then make check.
run_build() {
	local dir=$1 label=$2 rc=0
	shift 2
	say "$label: configure $* (in $dir)"
	# Objects of another configuration (another compiler) must not be
	# linked into this one: make does not know what CC built them.
	if [ -e "$dir" ] && [ "$(cat "$dir/.run-tests.config" 2>/dev/null)" != "$*" ]; then
		rm -rf -- "$dir"
	fi
	mkdir -p "$dir"
	printf '%s\n' "$*" >"$dir/.run-tests.config"
	rm -f "$dir/test-suite.log"
	find "$dir" \( -name '*.trs' -o -name '*.log' \) -path '*/tests/*' -delete
	find "$dir" -name '*.san' -type d -prune -exec rm -rf {} +
	if ! (cd "$dir" && ../configure -q "$@"); then
		echo "run-tests.sh: $label: configure failed (see $dir/config.log)" >&2
		total_fail=$((total_fail + 1))
		return 1
	fi
	say "$label: make -j$jobs check"
	(cd "$dir" && timeout --kill-after=60 "$timeout_check" \
		make -j"$jobs" check ${UNPKG_TESTS:+TESTS="$UNPKG_TESTS"}) || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "run-tests.sh: $label: make check did not finish within $timeout_check" >&2
	fi
	if [ ! -f "$dir/test-suite.log" ] && [ "$rc" -ne 0 ]; then
		# The build broke before any test ran: count that as one failure.
		echo "run-tests.sh: $label: build failed before the tests ran" >&2
		total_fail=$((total_fail + 1))
	fi
	count_results "$dir" "$label"
	collect_skips "$dir" "$label"
	collect_sanitizer_reports "$dir" "$label"
	if [ "$rc" -ne 0 ]; then
		show_failures "$dir"
		return 1
	fi
	return 0
}

# LeakSanitizer stops the world with ptrace, which some sandboxes forbid;
# then every sanitized program would end in "LeakSanitizer has encountered a
# fatal error". Find out with a small program that leaks on purpose, and
# turn leak detection off only when it cannot work here.
lsan_works() {
	local tmp out="" rc=1
	tmp=$(mktemp -d)
	printf '#include <stdlib.h>\nvoid *volatile p;\nint main(void){p = malloc(32); p = 0; return 0;}\n' >"$tmp/leak.c"
	if ${san_cc:-cc} -fsanitize=address -g "$tmp/leak.c" -o "$tmp/leak" 2>/dev/null; then
		out=$(ASAN_OPTIONS=detect_leaks=1 "$tmp/leak" 2>&1 || true)
	fi
	case $out in
	*"detected memory leaks"*) rc=0 ;;
	esac
	rm -rf "$tmp"
	return "$rc"
}

# --- the normal build -------------------------------------------------------
run_build _build "normal build" || overall=1

# --- the sanitizer build ----------------------------------------------------
if [ "$san_build" = yes ]; then
	# clang's ASan and UBSan are one runtime, which honours log_path for
	# every report; GCC's libubsan writes its reports to stderr only,
	# where a test expecting a failure does not look.
	san_cc=${CC:-cc}
	if command -v clang >/dev/null; then
		san_cc=clang
	else
		say "no clang: the sanitizer build uses $san_cc (UBSan reports then go to stderr only)"
	fi
	if lsan_works; then
		leaks=1
	else
		leaks=0
		say "LeakSanitizer does not work on this machine (ptrace refused?): running with detect_leaks=0"
	fi
	# make check adds exitcode, halt_on_error and log_path (Makefile.am).
	export ASAN_OPTIONS="detect_leaks=$leaks"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
	run_build _build-san "sanitizer build" --enable-sanitizers CC="$san_cc" || overall=1
fi

# --- fuzzing smoke run ------------------------------------------------------
# Each libFuzzer target 60 s on its seeds (fuzz/smoke.sh): one result per
# target, a crash or a build failure counting as failed, no clang as skipped.
if [ "$fuzz" = yes ]; then
	say "fuzz smoke run: make fuzz-smoke (in _build)"
	(cd _build && make fuzz-smoke) >_build/fuzz-smoke.log 2>&1 || overall=1
	grep '^fuzz-smoke: ' _build/fuzz-smoke.log | tee _build/fuzz-smoke.results || true
	fz_pass=$(grep -c '^fuzz-smoke: PASS' _build/fuzz-smoke.results || true)
	fz_fail=$(grep -c '^fuzz-smoke: FAIL' _build/fuzz-smoke.results || true)
	fz_skip=$(grep -c '^fuzz-smoke: SKIP' _build/fuzz-smoke.results || true)
	if [ $((fz_pass + fz_fail + fz_skip)) -eq 0 ]; then
		echo "run-tests.sh: make fuzz-smoke failed before any target ran:" >&2
		tail -n 30 _build/fuzz-smoke.log >&2
		fz_fail=1
	fi
	total_pass=$((total_pass + fz_pass))
	total_fail=$((total_fail + fz_fail))
	total_skip=$((total_skip + fz_skip))
	skip_report+=("$fz_skip in fuzz smoke run")
	# ("fuzz-smoke: SKIP TARGET (WHY)")
	while read -r _ _ target why; do
		note_skip "fuzz smoke run: $target: (whole test)" "$why" whole
	done < <(grep '^fuzz-smoke: SKIP' _build/fuzz-smoke.results || true)
fi

# --- summary ----------------------------------------------------------------
total=$((total_pass + total_fail + total_skip))
if [ "$total" -eq 0 ]; then
	echo "run-tests.sh: no test was run" >&2
	overall=1
fi
say "summary"
detail=""
for item in "${skip_report[@]}"; do
	detail+="${detail:+, }$item"
done
echo "$total_skip skipped${detail:+ ($detail)}"
echo "skips of whole tests and of parts of tests: ${#skipped_parts[@]}"
for item in "${skipped_parts[@]}"; do
	echo "  $item"
done
if [ "$san_reports" -gt 0 ]; then
	echo "tests that left sanitizer reports (printed above), counted as failed: $san_reports"
fi
echo "$total_pass passed, $total_fail failed"
exit "$overall"

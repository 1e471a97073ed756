#!/bin/bash
# run-tests.sh - install what unpkg needs, then build it twice and run the
# whole test suite on each build:
#   _build/      a normal build:                  make check
#   _build-san/  AddressSanitizer + UBSan build:  make check
#
# Usage: ./run-tests.sh [--no-deps] [--no-san]
#   --no-deps  do not install packages with apt-get (they are already there)
#   --no-san   skip the sanitizer build
#
# Run it as root to get the tests that need root (mounts, chown); as an
# ordinary user apt-get is run through sudo and those tests are skipped.
# The last line printed is "N passed, N failed", summed over both builds.
#
# Environment:
#   UNPKG_CHECK_TIMEOUT  time limit for each "make check" (default 40m)
set -euo pipefail

want_deps=yes
san_build=yes
for arg in "$@"; do
	case $arg in
	--no-deps) want_deps=no ;;
	--no-san) san_build=no ;;
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

# Configure in build dir $1 with the remaining arguments, then make check.
run_build() {
	local dir=$1 label=$2 rc=0
	shift 2
	say "$label: configure $* (in $dir)"
	mkdir -p "$dir"
	rm -f "$dir/test-suite.log"
	find "$dir" -name '*.trs' -delete
	if ! (cd "$dir" && ../configure -q "$@"); then
		echo "run-tests.sh: $label: configure failed (see $dir/config.log)" >&2
		total_fail=$((total_fail + 1))
		return 1
	fi
	say "$label: make -j$jobs check"
	(cd "$dir" && timeout --kill-after=60 "$timeout_check" \
		make -j"$jobs" check) || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "run-tests.sh: $label: make check did not finish within $timeout_check" >&2
	fi
	if [ ! -f "$dir/test-suite.log" ] && [ "$rc" -ne 0 ]; then
		# The build broke before any test ran: count that as one failure.
		echo "run-tests.sh: $label: build failed before the tests ran" >&2
		total_fail=$((total_fail + 1))
	fi
	count_results "$dir" "$label"
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
	if ${CC:-cc} -fsanitize=address -g "$tmp/leak.c" -o "$tmp/leak" 2>/dev/null; then
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
	if lsan_works; then
		leaks=1
	else
		leaks=0
		say "LeakSanitizer does not work on this machine (ptrace refused?): running with detect_leaks=0"
	fi
	export ASAN_OPTIONS="detect_leaks=$leaks"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
	run_build _build-san "sanitizer build" --enable-sanitizers || overall=1
fi

# --- fuzzing smoke run ------------------------------------------------------
# Each libFuzzer target 60 s on its seeds (fuzz/smoke.sh): one result per
# target, a crash or a build failure counting as failed, no clang as skipped.
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
echo "$total_pass passed, $total_fail failed"
exit "$overall"

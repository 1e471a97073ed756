#!/bin/bash
# smoke.sh - short libFuzzer runs of the fuzz targets (make fuzz-smoke).
#
#   fuzz/smoke.sh --check CLANG
#       exit 0 if CLANG can build a libFuzzer program with ASan and UBSan;
#       otherwise print one SKIP line per target and exit 1
#   fuzz/smoke.sh --run SECONDS CORPUSDIR TARGET...
#       run each TARGET (a fuzz/fuzz_NAME binary) for SECONDS seconds on
#       its seed corpus (CORPUSDIR/control and the dictionary control.dict
#       for fuzz_control, CORPUSDIR/deb and deb.dict for the others; the
#       seeds are only read); print one line per target:
#           fuzz-smoke: PASS fuzz_deb (N runs, cov C, ft F)
#           fuzz-smoke: FAIL fuzz_deb (crash; log: fuzz/fuzz_deb.smoke.log)
#       and exit 1 if any target failed.
# The fuzzers' own output goes to fuzz/NAME.smoke.log; a crashing input is
# kept as fuzz/NAME.crash (reproduce with: fuzz/fuzz_NAME fuzz/NAME.crash).
set -uo pipefail

targets_all="fuzz_deb fuzz_control fuzz_extract"

case ${1:-} in
--check)
	clang=${2:?}
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$tmp/probe.c"
	if command -v "$clang" >/dev/null 2>&1 &&
		"$clang" -fsanitize=fuzzer,address,undefined "$tmp/probe.c" \
			-o "$tmp/probe" >"$tmp/log" 2>&1 &&
		"$tmp/probe" -runs=1 >>"$tmp/log" 2>&1; then
		exit 0
	fi
	for t in $targets_all; do
		echo "fuzz-smoke: SKIP $t ($clang cannot build libFuzzer programs: install clang and libclang-rt-14-dev)"
	done
	exit 1
	;;
--run)
	seconds=${2:?}
	corpus=$(cd "${3:?}" && pwd) || exit 1
	shift 3
	;;
*)
	sed -n '2,/^set -uo/{/^#/s/^# \{0,1\}//p}' "$0"
	exit 2
	;;
esac

failed=0
for bin in "$@"; do
	name=$(basename "$bin")
	case $name in
	fuzz_control) seeds=$corpus/control dict=control.dict ;;
	*) seeds=$corpus/deb dict=deb.dict ;;
	esac
	dir=$(cd "$(dirname "$bin")" && pwd) || exit 1
	dict=$(cd "$(dirname "$0")" && pwd)/$dict
	log=$dir/$name.smoke.log
	work=$(mktemp -d "${TMPDIR:-/tmp}/unpkg-$name.XXXXXX")
	mkdir -p "$work/corpus" "$work/artifacts"
	rc=0
	# libFuzzer adds what it finds to the first directory, so the seeds
	# are only read.  -timeout: an input taking this long counts as a
	# hang, which is a failure too.
	(cd "$work" && "$dir/$name" -max_total_time="$seconds" -timeout=30 \
		-rss_limit_mb=2048 -print_final_stats=1 -dict="$dict" \
		-artifact_prefix="$work/artifacts/" \
		"$work/corpus" "$seeds") >"$log" 2>&1 || rc=$?
	stats=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
	crash=$(find "$work/artifacts" -type f | head -1)
	if [ "$rc" -eq 0 ] && [ -z "$crash" ]; then
		echo "fuzz-smoke: PASS $name (${runs:-?} runs in ${seconds}s, cov ${cov:-?}, ft ${ft:-?})"
	else
		failed=1
		if [ -n "$crash" ]; then
			cp "$crash" "$dir/$name.crash"
			echo "fuzz-smoke: FAIL $name (exit $rc; input kept as $dir/$name.crash; log: $log)"
		else
			echo "fuzz-smoke: FAIL $name (exit $rc; log: $log)"
		fi
		grep -E 'ERROR|SUMMARY|fuzz_[a-z]+:' "$log" | head -5 | sed 's/^/    /'
	fi
	rm -rf "$work"
done
exit "$failed"

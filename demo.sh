#!/bin/bash
# demo.sh - the first thing to run on a fresh Debian 12 machine:
#   1. install unpkg's build dependencies (apt-get),
#   2. build unpkg (in _build/),
#   3. download real packages from Debian's archive and install them into a
#      fresh root with unpkg, then into a twin root with stock dpkg (safe
#      I/O), and show what each did, how long it took, and whether the two
#      roots came out identical.
#
# Usage: ./demo.sh [PACKAGE...]      (default: hello tree)
#
# The roots are empty, so the packages' dependencies (libc6, ...) are not
# installed: both tools run with --force-depends, which turns that into a
# warning.  Timings are of one run each: a demonstration, not a benchmark.
#
# Environment: UNPKG_DEMO_DIR  work directory (default /tmp/unpkg-demo)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$top"
# shellcheck source=tools/deps.sh
. tools/deps.sh

pkgs=("$@")
[ "${#pkgs[@]}" -gt 0 ] || pkgs=(hello tree)
work=${UNPKG_DEMO_DIR:-/tmp/unpkg-demo}

say() { printf '\n=== %s\n' "$*"; }

say "1. build dependencies"
install_deps "${BUILD_DEPS[@]}" "${DEMO_DEPS[@]}"

say "2. building unpkg in _build/"
[ -x configure ] || autoreconf -fi
mkdir -p _build
(cd _build && { [ -f Makefile ] || ../configure -q; } && make -s -j"$(nproc)")
unpkg=$top/_build/src/unpkg
"$unpkg" --version | head -n 1
echo "built: $unpkg"

say "3. downloading ${pkgs[*]} from Debian's archive"
rm -rf "$work"
mkdir -p "$work/debs" "$work/unpkg-root" "$work/dpkg-root/var/lib/dpkg/info" \
	"$work/dpkg-root/var/lib/dpkg/updates"
: >"$work/dpkg-root/var/lib/dpkg/status"
# apt's download runs as the _apt user when it can write the directory
chmod 0777 "$work/debs"
(cd "$work/debs" && as_root apt-get download "${pkgs[@]}")
ls -l "$work/debs"

run_timed() {
	local label=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v l="$label" \
		'BEGIN { printf "%s took %.3f s\n", l, b - a }' >>"$work/times"
}

say "4. unpkg -i into a fresh root ($work/unpkg-root)"
run_timed "unpkg (--refuse-unsafe-io)" as_root "$unpkg" --root="$work/unpkg-root" \
	--refuse-unsafe-io --force-depends --stats -i "$work"/debs/*.deb

say "5. stock dpkg -i into a twin root ($work/dpkg-root)"
run_timed "dpkg  (--refuse-unsafe-io)" as_root dpkg --root="$work/dpkg-root" \
	--refuse-unsafe-io --force-depends -i "$work"/debs/*.deb

say "6. comparison"
manifest() {
	(cd "$1" && find . -path ./var/lib/dpkg -prune -o ! -type d \
		-printf '%p %y %m %U %G %s %l %T@\n' | LC_ALL=C sort)
}
manifest "$work/unpkg-root" >"$work/unpkg.tree"
manifest "$work/dpkg-root" >"$work/dpkg.tree"
echo "$(wc -l <"$work/unpkg.tree") files and links installed"
if diff -u "$work/dpkg.tree" "$work/unpkg.tree" &&
	diff -u "$work/dpkg-root/var/lib/dpkg/status" \
		"$work/unpkg-root/var/lib/dpkg/status"; then
	echo "same files, modes, owners, sizes, link targets and times;" \
		"same status file"
else
	echo "the roots differ (see above)"
fi
dpkg-query --root="$work/unpkg-root" -W -f='${Package} ${Version} ${db:Status-Abbrev}\n'
cat "$work/times"

say "the unpkg this demo built"
echo "$unpkg"
echo "run it from there (man page: man -l doc/unpkg.8), or install it with"
echo "  sudo make -C _build install    (/usr/local/sbin/unpkg)"

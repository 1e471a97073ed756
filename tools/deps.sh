# shellcheck shell=bash disable=SC2034
# tools/deps.sh - the Debian packages unpkg needs, and how to install them.
# Sourced by demo.sh and run-tests.sh.

# To build unpkg.
BUILD_DEPS=(
	build-essential autoconf automake libtool pkg-config
	libarchive-dev zlib1g-dev liblzma-dev libzstd-dev libbz2-dev libmd-dev
	liburing-dev libfuse3-dev
	check
)
# To run the test suite (dpkg is the oracle the results are compared with).
TEST_DEPS=(
	dpkg dpkg-dev binutils xz-utils zstd bzip2 strace e2fsprogs apt perl
	util-linux mount fuse3 time busybox-static
	clang libclang-rt-14-dev
	xfsprogs btrfs-progs
	debootstrap
	# bench.sh checks unpkg-bench's JSON report with it
	python3
	# bench-apt.sh compares with dpkg under it, as the users do
	eatmydata
)
# To run the demo.
DEMO_DEPS=(dpkg apt)

# as_root CMD...: run CMD as root, through sudo when not root.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "not root and no sudo: cannot run: $*" >&2
		return 2
	fi
}

# install_deps PACKAGE...: install those of the packages that are missing.
install_deps() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null |
			grep -q '^ii' || missing+=("$p")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		echo "all needed packages are installed"
		return 0
	fi
	echo "installing: ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get -o Acquire::Retries=3 update
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get -o Acquire::Retries=3 install -y --no-install-recommends \
		"${missing[@]}"
}

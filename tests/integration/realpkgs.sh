#!/bin/bash
# realpkgs.sh - real Debian packages, unpkg against dpkg.
#
# The packages come from the configured apt sources (apt-get download) and
# are kept in a cache directory so repeated runs do not download again:
# $UNPKG_PKGCACHE if set, else $HOME/.cache/unpkg-test-debs.  Without
# network access and without a cached copy the test is skipped (77).
#
# The set was chosen for packages without maintainer scripts (unpkg does not
# run scripts yet), covering:
#   libzstd1, liblz4-1        shared libraries (symlinks, ldconfig triggers)
#   tree                      a small program
#   file, libmagic1,          a program with its library and data package,
#   libmagic-mgc              tied by strict "=" dependencies
#   fonts-dejavu-core         arch:all data with conffiles
#   ncurses-term              arch:all, ~2900 entries, ~1000 symlinks
#   iso-codes                 arch:all, ~1500 entries
# All of them are xz-compressed in Debian 12; libzstd1 is also repacked with
# zstd (control.tar.zst + data.tar.zst) to cover zstd on real content.
# A package found with a maintainer script (a newer version may add one) is
# left out with a note.
#
# Cases: each package alone with --unpack; all of them in one --unpack
# run; all of them in one -i run, on roots where empty stand-ins for their
# outside dependencies (libc6, zlib1g, ...) were installed by dpkg first, so
# that configuration succeeds; the zstd repack with -i.

. "${TESTLIB:?TESTLIB is not set}"
need_cmd apt-get zstd

CACHE=${UNPKG_PKGCACHE:-${HOME:-/root}/.cache/unpkg-test-debs}
PACKAGES=(libzstd1 liblz4-1 tree file libmagic1 libmagic-mgc
	fonts-dejavu-core ncurses-term iso-codes)

# cached_deb PKG: the cached package file of PKG, if any.
cached_deb() {
	local f
	for f in "$CACHE/$1"_*.deb; do
		printf '%s\n' "$f"
		return 0
	done
	return 1
}

# --- fetch --------------------------------------------------------------------

mkdir -p "$CACHE"
missing=()
for p in "${PACKAGES[@]}"; do
	cached_deb "$p" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	note "downloading into $CACHE: ${missing[*]}"
	if ! (cd "$CACHE" && apt-get download "${missing[@]}") >"$TESTDIR/download.log" 2>&1; then
		if grep -q 'Unable to locate package\|has no installation candidate' "$TESTDIR/download.log"; then
			note "package lists incomplete: running apt-get update once"
			apt-get update >"$TESTDIR/update.log" 2>&1 || true
		fi
		if ! (cd "$CACHE" && apt-get download "${missing[@]}") >"$TESTDIR/download.log" 2>&1; then
			cat "$TESTDIR/download.log" >&2
			skip "cannot download ${missing[*]} (no network or no apt source); set UNPKG_PKGCACHE to a directory holding them"
		fi
	fi
fi

DEBS=()
NAMES=()
for p in "${PACKAGES[@]}"; do
	deb=$(cached_deb "$p") || hard_error "$p is not in $CACHE after the download"
	scripts=$(dpkg-deb --ctrl-tarfile "$deb" | tar -t |
		grep -E '^(\./)?(preinst|postinst|prerm|postrm|config)$' || true)
	if [ -n "$scripts" ]; then
		note "leaving out $(basename "$deb"): it has maintainer scripts ($(echo $scripts))"
		continue
	fi
	DEBS+=("$deb")
	NAMES+=("$p")
done
[ "${#DEBS[@]}" -gt 0 ] || skip "no usable package left"
note "packages: $(for d in "${DEBS[@]}"; do basename "$d"; done | tr '\n' ' ')"

# --- stand-ins for the dependencies outside the set ---------------------------

# Every package named in a Depends or Pre-Depends of the set that is not in
# the set itself gets an empty arch:all package with version 1:999, enough
# for any versioned relation used by these packages.
declare -A inset=()
for p in "${NAMES[@]}"; do
	inset[$p]=1
done
declare -A stand_in=()
for deb in "${DEBS[@]}"; do
	for field in Depends Pre-Depends; do
		for dep in $(deb_field "$deb" "$field" | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:.*//' | tr -d ' '); do
			[ -n "${inset[$dep]:-}" ] || stand_in[$dep]=1
		done
	done
done
STANDINS=()
for dep in "${!stand_in[@]}"; do
	new_pkg "$TESTDIR/standin-$dep" "$dep" 1:999 all
	build_deb "$TESTDIR/standin-${dep}_999_all.deb" "$TESTDIR/standin-$dep"
	STANDINS+=("$TESTDIR/standin-${dep}_999_all.deb")
done
note "stand-ins: ${!stand_in[*]}"

# standin_root DIR: a root with the stand-ins installed by dpkg.
standin_root() {
	mkroot "$1"
	if [ "${#STANDINS[@]}" -gt 0 ]; then
		dpkg_in "$1" -i "${STANDINS[@]}" >/dev/null ||
			hard_error "dpkg could not install the stand-in packages"
	fi
}

# --- cases --------------------------------------------------------------------

for deb in "${DEBS[@]}"; do
	section "$(basename "$deb"): --unpack"
	compare_with_dpkg --unpack "$deb"
done

section "all ${#DEBS[@]} packages in one --unpack run"
compare_with_dpkg --unpack "${DEBS[@]}"

section "all ${#DEBS[@]} packages in one -i run (dependencies met by stand-ins)"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
standin_root "$dir/unpkg"
standin_root "$dir/dpkg"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -i "${DEBS[@]}"
[ "$CMP_DPKG_RC" -eq 0 ] || hard_error "dpkg -i failed on the real packages (see above)"

# --- zstd repack ----------------------------------------------------------------

for deb in "${DEBS[@]}"; do
	[ "$(deb_field "$deb" Package)" = libzstd1 ] || continue
	section "$(basename "$deb") repacked with zstd members: -i"
	work=$TESTDIR/repack
	mkdir -p "$work"
	dpkg-deb --ctrl-tarfile "$deb" >"$work/control.tar"
	dpkg-deb --fsys-tarfile "$deb" >"$work/data.tar"
	zstd -q --rm -19 "$work/control.tar" "$work/data.tar"
	zdeb=$TESTDIR/$(basename "$deb" .deb).zst.deb
	assemble_deb "$zdeb" "$work/control.tar.zst" "$work/data.tar.zst"
	note "members: $(ar t "$zdeb" | tr '\n' ' ')"
	dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
	standin_root "$dir/unpkg"
	standin_root "$dir/dpkg"
	compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -i "$zdeb"
done

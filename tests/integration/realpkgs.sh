#!/bin/bash
# realpkgs.sh - real Debian packages, unpkg against dpkg.
#
# The packages come from the host's apt sources (apt-get download) and
# are kept in a cache directory so repeated runs do not download again:
# $UNPKG_PKGCACHE if set, else $HOME/.cache/unpkg-test-debs.
#
# The set covers:
#   libzstd1, liblz4-1        shared libraries (symlinks, ldconfig triggers)
#   tree                      a small program
#   file, libmagic1,          a program with its library and data package,
#   libmagic-mgc              tied by strict "=" dependencies
#   fonts-dejavu-core         arch:all data with conffiles
#   ncurses-term              arch:all, ~2900 entries, ~1000 symlinks
#   iso-codes                 arch:all, ~1500 entries
#   netbase, readline-common  maintainer scripts that write files (postinst)
#                             and remove them (postrm)
#   hicolor-icon-theme        postinst, prerm and a file trigger
# All of them are xz-compressed in Debian 12; libzstd1 is also repacked with
# zstd (control.tar.zst + data.tar.zst) to cover zstd on real content.
# Every root has a static busybox as /bin/sh, so the maintainer scripts run
# (chrooted, as dpkg runs them) on both sides.
#
# Cases: each package alone with --unpack; all of them in one --unpack
# run; all of them in one -i run, on roots where empty stand-ins for their
# outside dependencies (libc6, zlib1g, ...) were installed by dpkg first, so
# that configuration succeeds; the same -i again (a reinstall: the scripts'
# upgrade paths); all of them removed, then purged; the zstd repack with
# -i.
#
# The packages come from the host's apt sources: the test fails when the
# host has a Debian archive configured that cannot be reached (apt-get
# update or the download fails), and is skipped only when the host has no
# Debian archive configured and the cache lacks a package.  Parallel runs
# share the cache under a lock (flock on $CACHE/.lock).

. "${TESTLIB:?TESTLIB is not set}"
need_cmd apt-get zstd flock
need_busybox

CACHE=${UNPKG_PKGCACHE:-${HOME:-/root}/.cache/unpkg-test-debs}
PACKAGES=(libzstd1 liblz4-1 tree file libmagic1 libmagic-mgc
	fonts-dejavu-core ncurses-term iso-codes
	netbase readline-common hicolor-icon-theme)

# cached_deb PKG: the cached package file of PKG, if any.
cached_deb() {
	local f
	for f in "$CACHE/$1"_*.deb; do
		printf '%s\n' "$f"
		return 0
	done
	return 1
}

# --- the host's apt sources, as lib.sh reads them --------------------------------

section "apt_source_entries and debian_archive on a made-up /etc/apt"
etc=$TESTDIR/etc-apt
mkdir -p "$etc/sources.list.d"
cat >"$etc/sources.list" <<'EOF'
# a comment
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] http://one.example/debian/ bookworm main contrib # note
deb [ arch=amd64 ] http://two.example/debian bookworm-updates main
EOF
cat >"$etc/sources.list.d/a.sources" <<'EOF'
Types: deb-src
URIs: http://src2.example/debian
Suites: bookworm
Components: main

Types: deb deb-src
URIs: http://three.example/debian http://four.example/debian
# a comment
Suites: bookworm-security
 trixie-security
Components: main
 contrib
Enabled: yes

types: deb
uris: http://off.example/debian
suites: bookworm-backports
components: main
enabled: no
EOF
cat >"$TESTDIR/entries.want" <<'EOF'
http://one.example/debian/ bookworm main contrib
http://two.example/debian bookworm-updates main
http://three.example/debian bookworm-security main contrib
http://three.example/debian trixie-security main contrib
http://four.example/debian bookworm-security main contrib
http://four.example/debian trixie-security main contrib
EOF
APT_ETC=$etc apt_source_entries >"$TESTDIR/entries.got"
assert_same_file "$TESTDIR/entries.want" "$TESTDIR/entries.got" "apt_source_entries"
printf 'ID=debian\nVERSION_CODENAME=bookworm\n' >"$TESTDIR/os-release"
for q in "bookworm http://one.example/debian" \
	"bookworm-security http://three.example/debian" \
	"trixie-security http://three.example/debian" \
	"trixie http://one.example/debian" \
	"bookworm-backports -"; do
	got=$(APT_ETC=$etc OS_RELEASE=$TESTDIR/os-release debian_archive "${q%% *}" || echo -)
	[ "$got" = "${q#* }" ] ||
		check_fail "debian_archive ${q%% *}: '$got', expected '${q#* }'"
done

# --- fetch --------------------------------------------------------------------

# The cache is shared by parallel runs (both builds of make check): one
# downloads while the others wait, and no one copies a half-written file.
mkdir -p "$CACHE"
exec 8>"$CACHE/.lock"
flock 8
missing=()
for p in "${PACKAGES[@]}"; do
	cached_deb "$p" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
	archive=$(debian_archive "$codename") ||
		skip "$CACHE lacks ${missing[*]} and the host's apt sources have no Debian archive; set UNPKG_PKGCACHE to a directory holding them"
	note "downloading from the host's apt sources ($archive $codename) into $CACHE: ${missing[*]}"
	if ! (cd "$CACHE" && apt-get download "${missing[@]}") >"$TESTDIR/download.log" 2>&1; then
		if grep -q 'Unable to locate package\|has no installation candidate' "$TESTDIR/download.log"; then
			note "package lists incomplete: running apt-get update once"
			if ! apt-get -o Acquire::Retries=2 update >"$TESTDIR/update.log" 2>&1 ||
				grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$TESTDIR/update.log"; then
				cat "$TESTDIR/update.log" >&2
				fail "apt-get update failed: the host's Debian archive $archive is configured but cannot be reached"
			fi
		fi
		if ! (cd "$CACHE" && apt-get download "${missing[@]}") >"$TESTDIR/download.log" 2>&1; then
			cat "$TESTDIR/download.log" >&2
			fail "cannot download ${missing[*]} from the host's apt sources ($archive $codename)"
		fi
	fi
fi

# Copies of the packages, taken under the lock.
DEBS=()
NAMES=()
mkdir -p "$TESTDIR/debs"
for p in "${PACKAGES[@]}"; do
	deb=$(cached_deb "$p") || hard_error "$p is not in $CACHE after the download"
	cp -- "$deb" "$TESTDIR/debs/"
	DEBS+=("$TESTDIR/debs/$(basename "$deb")")
	NAMES+=("$p")
done
exec 8>&-
note "packages: $(for d in "${DEBS[@]}"; do basename "$d"; done | tr '\n' ' ')"
for deb in "${DEBS[@]}"; do
	scripts=$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | awk '{ sub(/^\.\//, "") }
		/^(preinst|postinst|prerm|postrm|config|triggers)$/ { printf "%s ", $0 }')
	[ -z "$scripts" ] || note "$(basename "$deb"): $scripts"
done

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

# standin_root DIR: a script_root with the stand-ins installed by dpkg.
standin_root() {
	script_root "$1"
	if [ "${#STANDINS[@]}" -gt 0 ]; then
		dpkg_in "$1" -i "${STANDINS[@]}" >/dev/null ||
			hard_error "dpkg could not install the stand-in packages"
	fi
}

# --- cases --------------------------------------------------------------------

# script_root DIR: a root for the maintainer scripts: /bin/sh and every
# other busybox applet in /bin, and /dev/null, with the same times in twin
# roots (shell_root).
script_root() {
	local a
	shell_root "$1"
	for a in $("$BUSYBOX" --list); do
		[ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"
	done
	mkdir -p "$1/dev"
	mknod -m 666 "$1/dev/null" c 1 3
	find "$1/bin" "$1/dev/null" -exec touch -h -r "$BUSYBOX" {} +
}
# Every root is a script_root.  Files the scripts write (/etc/hosts,
# /etc/networks, ...) have the time they were written: times are compared
# for the packages' own files only.
CMP_MKROOT=script_root
CMP_OWNED_MTIMES=1
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
# The postinsts ran in the roots (not only the unpacking): files they
# write are there on the dpkg side, and compared above.
for f in etc/hosts etc/networks etc/inputrc; do
	[ -s "$dir/dpkg/$f" ] || hard_error "/$f, written by a postinst, is missing in the dpkg root"
done

section "all ${#DEBS[@]} packages again with -i (a reinstall)"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -i "${DEBS[@]}"
[ "$CMP_DPKG_RC" -eq 0 ] || hard_error "dpkg -i failed again on the real packages (see above)"

# Their removal and purge: the postrms that undo what the postinsts
# wrote, the triggers the removals activate, the conffiles kept, then gone.
section "all ${#DEBS[@]} packages removed (-r), then purged (-P)"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -r "${NAMES[@]}"
[ "$CMP_DPKG_RC" -eq 0 ] || hard_error "dpkg -r failed on the real packages (see above)"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -P "${NAMES[@]}"
[ "$CMP_DPKG_RC" -eq 0 ] || hard_error "dpkg -P failed on the real packages (see above)"

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

# lib.sh - shared helpers for unpkg's shell integration tests.
#
# Sourced by every tests/integration/*.sh script:
#
#     . "${TESTLIB:?}"
#
# The test driver (automake's parallel harness, see Makefile.am) exports
#   UNPKG    the unpkg binary under test
#   TESTLIB  this file
# Exit statuses follow the automake convention: 0 pass, 1 fail, 77 skip,
# 99 hard error (the test itself could not run as intended).
#
# Optional environment:
#   UNPKG_TEST_KEEP=1   keep the per-test scratch directory for inspection
#   UNPKG_TEST_TMPDIR   where to create the scratch directory (default $TMPDIR
#                       or /tmp); it must allow device nodes and setuid bits
#
# Conventions
# - The oracle is stock dpkg: a fixture is installed with unpkg into one root
#   and with dpkg into a twin root prepared the same way, and the results are
#   compared (files, modes, owners, contents, link targets, hardlink groups,
#   and the dpkg database as dpkg and dpkg-query see it).
# - `fail` stops the test at once; `check_fail` records a failure and lets
#   the test go on so one run reports every difference.  A test that
#   recorded failures exits 1 when it ends.
# - Every helper is a shell function; the ones meant for tests are listed in
#   the sections below with their contract.

set -eEuo pipefail
shopt -s nullglob
# Byte-wise sorting and stable quoting, independent of the caller's locale.
export LC_ALL=C
umask 022

# --------------------------------------------------------------------------
# Outcome reporting
# --------------------------------------------------------------------------

TEST_NAME=$(basename "$0" .sh)
TEST_FAILURES=0

# note MSG...: a progress line in the test log.
note() {
	printf '%s: %s\n' "$TEST_NAME" "$*"
}

# section TITLE...: a visible header before each case of a test.
section() {
	printf '\n==== %s: %s\n' "$TEST_NAME" "$*"
}

# fail MSG...: report a failure and end the test (exit 1).
fail() {
	printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2
	exit 1
}

# check_fail MSG...: report a failure, keep going; the test exits 1 at the end.
check_fail() {
	printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2
	TEST_FAILURES=$((TEST_FAILURES + 1))
	return 0
}

# skip MSG...: the test cannot run here (exit 77).
skip() {
	printf '%s: SKIP: %s\n' "$TEST_NAME" "$*" >&2
	exit 77
}

# skip_part WHAT WHY...: a part of the test (WHAT) cannot run here; the rest
# goes on.  The line "NAME: SKIP PART: WHAT: WHY" goes to the test's log,
# where run-tests.sh finds it and reports it beside automake's results: a
# part never disappears from a passing test without a trace.
skip_part() {
	local what=$1
	shift
	printf '%s: SKIP PART: %s: %s\n' "$TEST_NAME" "$what" "$*" >&2
}

# hard_error MSG...: the test itself is broken or its setup failed (exit 99).
hard_error() {
	printf '%s: ERROR: %s\n' "$TEST_NAME" "$*" >&2
	exit 99
}

# A command failing outside an explicit check is a setup problem, not a
# finding about unpkg: report where it happened and exit 99.
on_err() {
	local rc=$?
	printf '%s: ERROR: line %s: command failed (status %s): %s\n' \
		"$TEST_NAME" "${BASH_LINENO[0]}" "$rc" "$BASH_COMMAND" >&2
	exit 99
}
trap on_err ERR

# --------------------------------------------------------------------------
# Scratch directory and cleanup
# --------------------------------------------------------------------------

TEST_MOUNTS=()

# register_mount DIR: unmount DIR, and every mount below it, when the test
# ends (see errors.sh).  Mounts are released in the order of registration.
register_mount() {
	TEST_MOUNTS+=("$1")
}

# is_mounted DIR: DIR is a mount point (also a dead FUSE mount, which
# mountpoint(1) cannot stat).
is_mounted() {
	mountpoint -q -- "$1" 2>/dev/null ||
		findmnt -rn -o TARGET | grep -qxF -- "$1"
}

# release_mount DIR: unmount DIR with every mount below it (umount -R)
# and every mount stacked on it, retrying for a few seconds while one is
# busy (a process of the test may still be ending); return 1, showing what
# is left, if DIR stays mounted.
release_mount() {
	local m=$1 try err=
	for try in 1 2 3 4 5 6 7 8 9 10; do
		is_mounted "$m" || return 0
		err=$(umount -R -- "$m" 2>&1) && continue
		sleep 0.5
	done
	is_mounted "$m" || return 0
	printf '%s: ERROR: cannot unmount %s: %s\n' "$TEST_NAME" "$m" "$err" >&2
	findmnt -R -- "$m" >&2
	return 1
}

# mounts_under DIR: the mount points at or under DIR (in this mount
# namespace), one a line.
mounts_under() {
	findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1'
}

# The end of every test: release the registered mounts, remove the scratch
# directory - never while a file system is still mounted under it, rm
# would descend into it - and look for sanitizer reports.  A mount that
# cannot be released is a hard error (exit 99), reported with what is
# still mounted; the scratch directory is then left in place.
on_exit() {
	local rc=$? m left
	trap - ERR
	set +e
	for m in "${TEST_MOUNTS[@]}"; do
		release_mount "$m" || rc=99
	done
	if [ "${UNPKG_TEST_KEEP:-0}" = 1 ]; then
		printf '%s: scratch directory kept: %s\n' "$TEST_NAME" "$TESTDIR" >&2
	elif [ -n "${TESTDIR:-}" ] && [ -d "$TESTDIR" ]; then
		left=$(mounts_under "$TESTDIR")
		if [ -n "$left" ]; then
			printf '%s: ERROR: still mounted under the scratch directory, left in place: %s\n' \
				"$TEST_NAME" "$TESTDIR" >&2
			printf '    | %s\n' $left >&2
			rc=99
		elif ! rm -rf --one-file-system -- "$TESTDIR"; then
			printf '%s: ERROR: cannot remove the scratch directory %s\n' \
				"$TEST_NAME" "$TESTDIR" >&2
			rc=99
		fi
	fi
	if ! no_sanitizer_reports; then
		rc=1
	fi
	if [ "$rc" -eq 0 ] && [ "$TEST_FAILURES" -gt 0 ]; then
		printf '%s: %d check(s) failed\n' "$TEST_NAME" "$TEST_FAILURES" >&2
		rc=1
	fi
	exit "$rc"
}

# no_sanitizer_reports: in a sanitizer build, make check gives each test a
# directory UNPKG_SAN_DIR where every sanitized process (unpkg run by the
# test, whatever its exit status was expected to be) writes its ASan, LSan
# and UBSan reports (see Makefile.am).  Print every report found there and
# return 1; return 0 when there is none (or no such directory).
no_sanitizer_reports() {
	local f found=0
	[ -n "${UNPKG_SAN_DIR:-}" ] || return 0
	for f in "$UNPKG_SAN_DIR"/*; do
		[ -f "$f" ] || continue
		found=1
		printf '%s: FAIL: sanitizer report %s:\n' "$TEST_NAME" "$f" >&2
		sed 's/^/    | /' -- "$f" >&2
	done
	[ "$found" -eq 0 ]
}

TESTDIR=$(mktemp -d "${UNPKG_TEST_TMPDIR:-${TMPDIR:-/tmp}}/unpkg-$TEST_NAME.XXXXXX")
trap on_exit EXIT

# --sync=auto leaves syncfs for uring where other programs have unwritten
# data (strategy.h); on a machine running tests side by side that depends
# on the moment, and a test must see the same strategy in every run.  The
# bound is out of reach unless a test sets its own (submount.sh tests the
# rule).
export UNPKG_AUTO_DIRTY_MAX_MIB=${UNPKG_AUTO_DIRTY_MAX_MIB:-1048576}

# unpkg reads dpkg's configuration like dpkg: the host's (which may turn on
# force-unsafe-io, or a log in the host's /var/log) must not decide what a
# test sees.  Tests that want a configuration write it here.
export UNPKG_CONFDIR=$TESTDIR/conf
mkdir -p "$UNPKG_CONFDIR/dpkg.cfg.d"

# --------------------------------------------------------------------------
# Preconditions
# --------------------------------------------------------------------------

# need_cmd CMD...: skip the test unless every CMD is on PATH.
need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "required command '$c' not found"
	done
}

# need_root: skip unless running as root (fixtures need chown, mknod, mount).
need_root() {
	[ "$(id -u)" -eq 0 ] || skip "must run as root (chown, mknod and mount are used)"
}

[ -n "${UNPKG:-}" ] || hard_error "UNPKG is not set (run through 'make check')"
[ -x "$UNPKG" ] || hard_error "UNPKG=$UNPKG is not an executable file"
need_root
need_cmd dpkg dpkg-deb dpkg-query ar tar gzip xz md5sum find diff stat od dd

# --------------------------------------------------------------------------
# Assertions
# --------------------------------------------------------------------------

# assert_status EXPECTED ACTUAL WHAT: check an exit status (soft failure).
assert_status() {
	[ "$2" -eq "$1" ] || check_fail "$3: exit status $2, expected $1"
}

# assert_grep PATTERN FILE WHAT: FILE has a line matching the extended
# regular expression PATTERN (soft failure; FILE is shown on mismatch).
assert_grep() {
	if ! grep -Eq -- "$1" "$2"; then
		check_fail "$3: no line matches /$1/ in:"
		sed 's/^/    | /' "$2" >&2
	fi
}

# assert_same_file EXPECTED ACTUAL WHAT: the two files are identical; the
# unified diff is shown otherwise (soft failure).
assert_same_file() {
	if ! diff -u --label "expected ($3)" --label "actual ($3)" "$1" "$2" >"$TESTDIR/.diff"; then
		check_fail "$3 differs:"
		cat "$TESTDIR/.diff" >&2
	fi
	return 0
}

# assert_empty FILE WHAT: FILE exists and is empty (soft failure).
assert_empty() {
	if [ -s "$1" ]; then
		check_fail "$2: expected no output, got:"
		sed 's/^/    | /' "$1" >&2
	fi
}

# assert_no_debris ROOT: no *.dpkg-new / *.dpkg-tmp anywhere under ROOT.
assert_no_debris() {
	local found
	found=$(find "$1" \( -name '*.dpkg-new' -o -name '*.dpkg-tmp' \) -printf '%P\n' | sort | tr '\n' ' ')
	[ -z "$found" ] || check_fail "debris left under the root: $found"
}

# show_file FILE [LABEL]: copy FILE into the log, indented.
show_file() {
	[ -s "$1" ] || return 0
	printf '  -- %s\n' "${2:-$1}"
	sed 's/^/    | /' "$1"
}

# --------------------------------------------------------------------------
# Roots
# --------------------------------------------------------------------------

# mkroot DIR: an empty target root with dpkg's database skeleton, the same
# for both sides of a comparison.
mkroot() {
	mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates"
	: >"$1/var/lib/dpkg/status"
}

# need_mounts: skip unless this test may mount file systems and attach
# loop devices (root in a namespace that allows both).
need_mounts() {
	local dev
	mkdir "$TESTDIR/probe"
	mount -t tmpfs -o size=1m unpkg-test "$TESTDIR/probe" 2>/dev/null ||
		skip "cannot mount file systems here"
	umount "$TESTDIR/probe"
	truncate -s 1M "$TESTDIR/probe.img"
	dev=$(losetup --find --show "$TESTDIR/probe.img" 2>/dev/null) ||
		skip "cannot attach a loop device here"
	losetup -d "$dev"
	rm -rf "$TESTDIR/probe" "$TESTDIR/probe.img"
}

# have_busybox: true if a static busybox (package busybox-static, or
# $BUSYBOX) can serve as /bin/sh in a test root, where maintainer scripts
# run chrooted.
have_busybox() {
	BUSYBOX=${BUSYBOX:-/bin/busybox}
	case $({ [ -x "$BUSYBOX" ] && ldd "$BUSYBOX"; } 2>&1 || true) in
	*"not a dynamic"*) return 0 ;;
	esac
	return 1
}

# need_busybox: skip unless have_busybox.
need_busybox() {
	have_busybox || skip "no static busybox at $BUSYBOX (package busybox-static)"
}

# shell_root DIR: an empty root (mkroot) whose /bin/sh is the static
# busybox of need_busybox.
shell_root() {
	rm -rf "$1"
	mkroot "$1"
	mkdir -p "$1/bin"
	cp -p "$BUSYBOX" "$1/bin/busybox"
	ln -s busybox "$1/bin/sh"
	# The same times in twin roots.
	touch -h -r "$BUSYBOX" "$1/bin/sh"
}

# prime_root DIR: mkroot, then let dpkg create the files it adds to a
# database on first use (info/format, triggers/), so that a later run that
# must change nothing can be checked with an exact before/after comparison.
prime_root() {
	mkroot "$1"
	dpkg --root="$1" --configure --pending >/dev/null
}

# --------------------------------------------------------------------------
# Building packages
# --------------------------------------------------------------------------

# new_pkg DIR NAME [VERSION [ARCH]]: start a staging directory for a binary
# package: DIR/DEBIAN/control with the mandatory fields, no dependencies and
# no maintainer scripts.  Add files under DIR, DEBIAN/conffiles etc. after.
new_pkg() {
	local dir=$1 name=$2 version=${3:-1.0} arch=${4:-all}
	mkdir -p "$dir/DEBIAN"
	cat >"$dir/DEBIAN/control" <<-EOF
	Package: $name
	Version: $version
	Architecture: $arch
	Maintainer: unpkg test suite <unpkg-tests@example.invalid>
	Section: misc
	Priority: optional
	Description: $name, a fixture of the unpkg test suite
	 Built at test time by $TEST_NAME.
	EOF
}

# build_deb OUT.deb PKGDIR [dpkg-deb option...]: build with dpkg-deb
# (xz-compressed by default; a later -Z option wins).  Ownership in PKGDIR
# is kept as is (no --root-owner-group): tests chown the staging files to
# the owners they want, which works because the suite runs as root.
build_deb() {
	local out=$1 dir=$2
	shift 2
	dpkg-deb -Zxz "$@" --build "$dir" "$out" >/dev/null
}

# compress_member FILE COMP: compress FILE in place with COMP (none, gz, xz,
# zst, bz2) and print the resulting file name.
compress_member() {
	local f=$1
	case $2 in
	none) ;;
	gz) gzip -9n "$f"; f=$f.gz ;;
	xz) xz -6 "$f"; f=$f.xz ;;
	zst) zstd -q --rm -19 "$f"; f=$f.zst ;;
	bz2) bzip2 -9 "$f"; f=$f.bz2 ;;
	*) hard_error "compress_member: unknown compression '$2'" ;;
	esac
	printf '%s\n' "$f"
}

# assemble_deb OUT CONTROL_TAR DATA_TAR: write the ar container of a binary
# package from ready tar files, named anything ending in .tar or .tar.EXT.
# They are stored as control.tar[.EXT] and data.tar[.EXT], after
# debian-binary, in the order dpkg requires.
assemble_deb() {
	local out=$1 control=$2 data=$3 work cm dm
	case $out in /*) ;; *) out=$PWD/$out ;; esac
	cm=control.tar${control##*.tar}
	dm=data.tar${data##*.tar}
	work=$(mktemp -d "$TESTDIR/ar.XXXXXX")
	printf '2.0\n' >"$work/debian-binary"
	cp -- "$control" "$work/$cm"
	cp -- "$data" "$work/$dm"
	rm -f -- "$out"
	(cd "$work" && ar rc "$out" debian-binary "$cm" "$dm")
	rm -rf -- "$work"
}

# tar_member OUT NAME TYPEFLAG [LINKNAME [CONTENT]]: append one ustar member
# to the tar stream being written to OUT.  NAME and LINKNAME are stored as
# given, hostile ones included (GNU tar would rewrite those).  TYPEFLAG: 0
# file, 1 hardlink, 2 symlink, 5 directory.  Owner root, mtime 2001-01-01,
# mode 0644 (directories 0755, symlinks 0777).  End the stream with tar_end.
tar_member() {
	local out=$1 name=$2 type=$3 link=${4:-} content=${5:-} mode=0644 h sum
	case $type in 5) mode=0755 ;; 2) mode=0777 ;; esac
	[ "${#name}" -le 100 ] && [ "${#link}" -le 100 ] ||
		hard_error "tar_member: names longer than 100 bytes are not supported"
	h=$(mktemp "$TESTDIR/hdr.XXXXXX")
	{
		printf '%s' "$name"
		head -c $((100 - ${#name})) /dev/zero
		printf '%07o\0%07o\0%07o\0%011o\0%011o\0' "$((8#$mode))" 0 0 \
			"${#content}" 978307200
		printf '        %s%s' "$type" "$link"
		head -c $((100 - ${#link})) /dev/zero
		printf 'ustar\00000root'
		head -c 28 /dev/zero
		printf 'root'
		head -c 28 /dev/zero
		printf '%07o\0%07o\0' 0 0
		head -c 167 /dev/zero
	} >"$h"
	sum=$(od -An -v -tu1 "$h" | tr -s ' ' '\n' | awk '{ s += $1 } END { print s }')
	printf '%06o\0 ' "$sum" | dd of="$h" bs=1 seek=148 conv=notrunc status=none
	cat "$h" >>"$out"
	if [ -n "$content" ]; then
		printf '%s' "$content" >>"$out"
		head -c $(((512 - ${#content} % 512) % 512)) /dev/zero >>"$out"
	fi
	rm -f -- "$h"
}

# tar_end OUT: the two zero blocks that end a tar stream.
tar_end() {
	head -c 1024 /dev/zero >>"$1"
}

# make_control_tar PKGDIR OUT: control.tar of PKGDIR/DEBIAN as dpkg-deb
# makes it (./ prefixed names, root-owned).
make_control_tar() {
	tar -C "$1/DEBIAN" --format=gnu --sort=name --owner=0 --group=0 \
		--numeric-owner -cf "$2" .
}

# make_data_tar PKGDIR OUT: data.tar of PKGDIR without DEBIAN, ./ prefixed
# names, sorted, ownership taken from the staging files.
make_data_tar() {
	tar -C "$1" --format=gnu --sort=name --exclude=./DEBIAN -cf "$2" .
}

# build_deb_manual OUT COMP_CONTROL COMP_DATA PKGDIR: build a package
# without dpkg-deb, so every compression pair can be made, including bz2
# (which dpkg-deb -Z does not offer).  COMP_* is none, gz, xz, zst or bz2.
build_deb_manual() {
	local out=$1 cc=$2 cd=$3 dir=$4 work c d
	case $out in /*) ;; *) out=$PWD/$out ;; esac
	work=$(mktemp -d "$TESTDIR/manual.XXXXXX")
	make_control_tar "$dir" "$work/control.tar"
	make_data_tar "$dir" "$work/data.tar"
	c=$(compress_member "$work/control.tar" "$cc")
	d=$(compress_member "$work/data.tar" "$cd")
	assemble_deb "$out" "$c" "$d"
	rm -rf -- "$work"
}

# ar_member_range DEB NAME_PREFIX: print "OFFSET SIZE" of the data of the
# first ar member of DEB whose name starts with NAME_PREFIX (e.g. data.tar);
# OFFSET is counted from the start of the file.
ar_member_range() {
	local deb=$1 want=$2 off=8 total name size
	total=$(stat -c %s "$deb")
	while [ "$off" -lt "$total" ]; do
		name=$(dd if="$deb" bs=1 skip="$off" count=16 status=none | tr -d ' ')
		size=$(dd if="$deb" bs=1 skip=$((off + 48)) count=10 status=none | tr -d ' ')
		name=${name%/}
		if [ "${name#"$want"}" != "$name" ]; then
			printf '%s %s\n' "$((off + 60))" "$size"
			return 0
		fi
		off=$((off + 60 + size + size % 2))
	done
	hard_error "ar_member_range: no member $want* in $deb"
}

# truncate_copy SRC DST LENGTH: DST is the first LENGTH bytes of SRC.
truncate_copy() {
	head -c "$3" -- "$1" >"$2"
}

# flip_bytes FILE OFFSET COUNT: invert COUNT bytes of FILE from OFFSET.
flip_bytes() {
	local file=$1 off=$2 count=$3 b esc=
	for b in $(od -An -v -tu1 -j "$off" -N "$count" -- "$file"); do
		esc+=$(printf '\\x%02x' $((255 - b)))
	done
	printf "$esc" | dd of="$file" bs=1 seek="$off" conv=notrunc status=none
}

# deb_field DEB FIELD: a control field of a package file.
deb_field() {
	dpkg-deb -f "$1" "$2"
}

# --------------------------------------------------------------------------
# Manifests
# --------------------------------------------------------------------------

# tree_manifest ROOT [RELPATH...]: describe every path under ROOT, one line
# each, sorted, so two trees can be compared with diff.  Skipped: the dpkg
# database (var/lib/dpkg, see db_manifest), var/log (dpkg may log there) and
# any RELPATH given.  Line format (names are shell-quoted with printf %q, so
# spaces, tabs, newlines and UTF-8 are unambiguous):
#   PATH TYPE MODE UID:GID [size=N md5=HEX] [dev=MAJ:MIN] [-> TARGET]
#        [mtime=SECONDS] [hardlink=FIRST]
# TYPE is find's %y letter (f d l p c b s); MODE is four octal digits with
# the setuid/setgid/sticky bits; mtime is printed for everything but
# directories (dpkg does not set directory times); FIRST names the
# smallest path sharing the inode, for non-directories with more than one
# link.  The root itself is listed as ".".
tree_manifest() {
	local root=${1%/} rel
	shift
	local -a prune=(-path "$root/var/lib/dpkg" -o -path "$root/var/log")
	for rel in "$@"; do
		prune+=(-o -path "$root/$rel")
	done

	local -a paths=() types=() modes=() owners=() sizes=() mtimes=() \
		nlinks=() inodes=() targets=()
	local p y m u g s t n i l
	while IFS= read -r -d '' p && IFS= read -r -d '' y &&
		IFS= read -r -d '' m && IFS= read -r -d '' u &&
		IFS= read -r -d '' g && IFS= read -r -d '' s &&
		IFS= read -r -d '' t && IFS= read -r -d '' n &&
		IFS= read -r -d '' i && IFS= read -r -d '' l; do
		paths+=("${p:-.}") types+=("$y") modes+=("$m") owners+=("$u:$g")
		sizes+=("$s") mtimes+=("$t") nlinks+=("$n") inodes+=("$i")
		targets+=("$l")
	done < <(find "$root" \( "${prune[@]}" \) -prune -o \
		-printf '%P\0%y\0%m\0%U\0%G\0%s\0%T@\0%n\0%D:%i\0%l\0')

	# Contents of regular files, hashed in one batch.
	local -A md5=()
	local rec k
	while IFS= read -r -d '' rec; do
		md5[${rec:34}]=${rec:0:32}
	done < <(
		for k in "${!paths[@]}"; do
			if [ "${types[k]}" = f ]; then
				printf '%s\0' "${paths[k]}"
			fi
		done | (cd "$root" && xargs -0r md5sum -z --)
	)

	# Hardlink groups: the smallest path (byte order) of each inode.
	local -A first=()
	for k in "${!paths[@]}"; do
		[ "${types[k]}" != d ] && [ "${nlinks[k]}" -gt 1 ] || continue
		i=${inodes[k]}
		if [ -z "${first[$i]:-}" ] || [[ ${paths[k]} < ${first[$i]} ]]; then
			first[$i]=${paths[k]}
		fi
	done

	# Emit in byte order of the raw paths.
	local -A index=()
	for k in "${!paths[@]}"; do
		index[${paths[k]}]=$k
	done
	local line q
	while IFS= read -r -d '' p; do
		k=${index[$p]}
		y=${types[k]}
		printf -v line '%q %s %04o %s' "$p" "$y" "$((8#${modes[k]}))" "${owners[k]}"
		case $y in
		f) line+=" size=${sizes[k]} md5=${md5[$p]:-?}" ;;
		c | b) line+=" dev=$(stat -c '%t:%T' -- "$root/$p")" ;;
		l) printf -v q '%q' "${targets[k]}"; line+=" -> $q" ;;
		esac
		if [ "$y" != d ]; then
			line+=" mtime=${mtimes[k]}"
			if [ "${nlinks[k]}" -gt 1 ]; then
				printf -v q '%q' "${first[${inodes[k]}]}"
				line+=" hardlink=$q"
			fi
		fi
		printf '%s\n' "$line"
	done < <(printf '%s\0' "${paths[@]}" | sort -z)
}

# Files of the dpkg database that db_manifest leaves out.  Each is private
# runtime state of dpkg that a compatible tool need not reproduce and that
# no reader (dpkg, dpkg-query, apt) takes information from:
#   lock, lock-frontend  empty lock files; only their fcntl locks matter
#   status-old           dpkg's backup copy of the previous status
#   triggers/Lock        empty lock file of the trigger machinery
# triggers/Unincorp is left out only when empty: an empty and a missing
# Unincorp both mean "no pending triggers"; with content it is compared.
DB_EXCLUDE=(lock lock-frontend status-old triggers/Lock)

# db_manifest ROOT | db_manifest ADMINDIR | db_manifest --admindir DIR:
# every file and directory of a dpkg database - status, updates/, info/,
# triggers/, ... - except DB_EXCLUDE, sorted, with type, mode and owner,
# and the full content of each regular file.  A directory holding a
# "status" file and no var/lib/dpkg is taken as the database itself;
# otherwise as a root whose database is var/lib/dpkg.  --admindir forces
# the first reading.
db_manifest() {
	local admin p x attrs
	if [ "$1" = --admindir ]; then
		admin=${2%/}
	elif [ -e "$1/status" ] && [ ! -d "$1/var/lib/dpkg" ]; then
		admin=${1%/}
	else
		admin=${1%/}/var/lib/dpkg
	fi
	if [ ! -d "$admin" ]; then
		printf 'NO DATABASE DIRECTORY\n'
		return 0
	fi
	while IFS= read -r -d '' p; do
		for x in "${DB_EXCLUDE[@]}"; do
			if [ "$p" = "$x" ]; then
				continue 2
			fi
		done
		if [ "$p" = triggers/Unincorp ] && [ ! -s "$admin/$p" ]; then
			continue
		fi
		attrs=$(find "$admin/$p" -maxdepth 0 -printf '%y %m %U:%G')
		printf '=== %q %s %04o %s\n' "${p:-.}" "${attrs%% *}" \
			"$((8#$(cut -d' ' -f2 <<<"$attrs")))" "${attrs##* }"
		if [ -f "$admin/$p" ] && [ ! -L "$admin/$p" ] && [ -s "$admin/$p" ]; then
			cat -- "$admin/$p"
			if [ -n "$(tail -c1 -- "$admin/$p")" ]; then
				printf '\n(no newline at end of file)\n'
			fi
		fi
	done < <(find "$admin" -printf '%P\0' | sort -z)
}

# --------------------------------------------------------------------------
# Running unpkg and dpkg
# --------------------------------------------------------------------------

# run_logged PREFIX CMD...: run CMD with stdin from /dev/null, stdout to
# PREFIX.out and stderr to PREFIX.err; its exit status goes to RUN_RC.
run_logged() {
	local prefix=$1
	shift
	RUN_RC=0
	"$@" <"/dev/null" >"$prefix.out" 2>"$prefix.err" || RUN_RC=$?
}

# handed_to_dpkg TEMPLATE ARG...: true if unpkg hands the action of ARGs
# to stock dpkg, which knows no --sync (tried on a scratch copy of the root
# TEMPLATE): a test that runs such an action with --sync=STRATEGY runs it
# without.
handed_to_dpkg() {
	local tpl=$1 d=$TESTDIR/handed-probe rc=0
	shift
	rm -rf "$d"
	cp -a "$tpl" "$d"
	"$UNPKG" --root="$d" --sync=auto "$@" </dev/null >"$d.out" 2>&1 || rc=$?
	rm -rf "$d"
	[ "$rc" -ne 0 ] && grep -q 'unknown option --sync' "$d.out"
}

# unpkg_in ROOT ARG...: run unpkg on ROOT the safe way (outputs not captured).
unpkg_in() {
	local root=$1
	shift
	"$UNPKG" --root="$root" --refuse-unsafe-io "$@"
}

# dpkg_in ROOT ARG...: run stock dpkg on ROOT.  Its host configuration may
# enable force-unsafe-io; that changes durability, not the result.
dpkg_in() {
	local root=$1
	shift
	dpkg --root="$root" "$@"
}

# --------------------------------------------------------------------------
# Comparing an unpkg root with a dpkg root
# --------------------------------------------------------------------------

# All compare_* helpers record mismatches as soft failures (check_fail) and
# return 0, so a test goes on and reports every difference.

# owned_mtimes_only ROOT: a filter of tree_manifest lines that drops
# " mtime=..." from the lines of paths no package of ROOT's database owns.
# A file unpacked from a package has the time the package gives it; a file
# a maintainer script writes has the time it was written, which differs
# between twin roots (its contents do not).
owned_mtimes_only() {
	local owned
	owned=$(mktemp "$TESTDIR/owned.XXXXXX")
	cat /dev/null "$1"/var/lib/dpkg/info/*.list | sed 's|^/||' | sort -u >"$owned"
	awk -v list="$owned" '
		BEGIN { while ((getline p < list) > 0) own[p] = 1 }
		{
			if (!($1 in own))
				sub(/ mtime=[0-9.]+/, "")
			print
		}'
}

# compare_trees A B WHAT [RELPATH...]: same tree_manifest, RELPATHs left
# out on both sides.  With CMP_OWNED_MTIMES=1 (roots where maintainer
# scripts write files), times are compared only for the paths a package of
# B owns (owned_mtimes_only).
compare_trees() {
	local a=$1 b=$2 what=$3 r
	shift 3
	for r in "$a" "$b"; do
		if [ "${CMP_OWNED_MTIMES:-0}" = 1 ]; then
			tree_manifest "$r" "$@" | owned_mtimes_only "$b" >"$r.tree"
		else
			tree_manifest "$r" "$@" >"$r.tree"
		fi
	done
	assert_same_file "$b.tree" "$a.tree" "$what: file tree (dpkg vs unpkg)"
}

# drop_selection ROOT PKG: take PKG's "install ok not-installed" stanza out
# of ROOT's status file.  dpkg keeps that selection for a package new to
# the system that failed before it was unpacked; unpkg forgets the package
# (an error before the rename pass changes nothing, DESIGN.md section 3;
# doc/design.md, "A new package that fails").  For a twin root of dpkg's
# before it is compared with unpkg's.
drop_selection() {
	local status=$1/var/lib/dpkg/status
	grep -q "^Package: $2\$" "$status" ||
		check_fail "dpkg kept no selection for $2 (test outdated?)"
	awk -v RS= -v ORS='\n\n' -v p="Package: $2" \
		'!(index($0, p "\n") == 1 && /\nStatus: install ok not-installed\n/)' \
		"$status" >"$status.tmp"
	mv "$status.tmp" "$status"
}

# compare_dbs A B WHAT: roots A and B have the same db_manifest.
compare_dbs() {
	compare_admindirs "${1%/}/var/lib/dpkg" "${2%/}/var/lib/dpkg" "$3"
}

# compare_admindirs ADMIN_A ADMIN_B WHAT: same db_manifest --admindir.
compare_admindirs() {
	local a=$1 b=$2 what=$3 ma mb
	# The manifests go to the scratch directory: next to an admindir
	# would be inside the root.
	ma=$(mktemp "$TESTDIR/db-unpkg.XXXXXX")
	mb=$(mktemp "$TESTDIR/db-dpkg.XXXXXX")
	db_manifest --admindir "$a" >"$ma"
	db_manifest --admindir "$b" >"$mb"
	assert_same_file "$mb" "$ma" "$what: dpkg database (dpkg vs unpkg)"
}

# compare_queries A B MODE PKG...: dpkg's and dpkg-query's view of root A
# (installed by unpkg) equals their view of root B (installed by dpkg):
# -s, -L and -V for each package, --audit, and the dpkg-query -W list.
# After a clean -i (dpkg printing nothing), --audit and -V on A must print
# nothing either.
compare_queries() {
	local a=$1 b=$2 mode=$3 pkg q r
	shift 3
	local -a queries=(--audit)
	for pkg in "$@"; do
		queries+=("-s $pkg" "-L $pkg" "-V $pkg")
	done
	for q in "${queries[@]}"; do
		for r in "$a" "$b"; do
			# $q is an option and a package name: split on purpose.
			run_logged "$r.q" dpkg --root="$r" $q
			{ cat "$r.q.out" "$r.q.err"; echo "(exit status $RUN_RC)"; } >"$r.q"
		done
		assert_same_file "$b.q" "$a.q" "$mode: dpkg $q"
		case $mode:${q%% *} in
		-i:--audit | -i:-V)
			if [ "$(cat "$b.q")" = "(exit status 0)" ] &&
				[ "$(cat "$a.q")" != "(exit status 0)" ]; then
				check_fail "$mode: dpkg $q must print nothing on the unpkg root"
			fi
			;;
		esac
	done
	for r in "$a" "$b"; do
		run_logged "$r.q" dpkg-query --root="$r" -W \
			-f='${Package} ${Version} ${Status}\n'
		{ cat "$r.q.out" "$r.q.err"; echo "(exit status $RUN_RC)"; } >"$r.W"
	done
	assert_same_file "$b.W" "$a.W" "$mode: dpkg-query -W"
}

# compare_roots_with_dpkg A B MODE DEB...: A and B are twin roots prepared
# the same way.  Install the DEBs with unpkg into A and with dpkg into B
# (MODE is -i or --unpack) and compare exit statuses, file trees, databases
# and the query views.  Sets CMP_UNPKG_RC, CMP_DPKG_RC and CMP_OK (1 if
# everything matched, else 0); the outputs stay in A.unpkg.out/.err and
# B.dpkg.out/.err.
compare_roots_with_dpkg() {
	local a=$1 b=$2 mode=$3 before=$TEST_FAILURES deb
	shift 3
	local -a pkgs=()
	for deb in "$@"; do
		if [ -f "$deb" ] && deb_field "$deb" Package >"$TESTDIR/.pkg" 2>/dev/null; then
			pkgs+=("$(cat "$TESTDIR/.pkg")")
		fi
	done

	run_logged "$a.unpkg" "$UNPKG" --root="$a" --refuse-unsafe-io "$mode" "$@"
	CMP_UNPKG_RC=$RUN_RC
	run_logged "$b.dpkg" dpkg --root="$b" "$mode" "$@"
	CMP_DPKG_RC=$RUN_RC
	note "unpkg $mode: exit $CMP_UNPKG_RC; dpkg $mode: exit $CMP_DPKG_RC"
	show_file "$a.unpkg.out" "unpkg stdout"
	show_file "$a.unpkg.err" "unpkg stderr"

	if [ "$CMP_UNPKG_RC" -ne "$CMP_DPKG_RC" ]; then
		check_fail "unpkg $mode exited $CMP_UNPKG_RC, dpkg exited $CMP_DPKG_RC"
		show_file "$b.dpkg.out" "dpkg stdout"
		show_file "$b.dpkg.err" "dpkg stderr"
	fi
	same_removal_warnings "$b.dpkg" "$a.unpkg" "$mode"
	compare_trees "$a" "$b" "$mode"
	compare_dbs "$a" "$b" "$mode"
	compare_queries "$a" "$b" "$mode" "${pkgs[@]}"
	CMP_OK=1
	if [ "$TEST_FAILURES" -ne "$before" ]; then
		CMP_OK=0
	fi
	return 0
}

# same_removal_warnings DPKG UNPKG WHAT: what a removal says of what it
# keeps ("while removing P, directory 'D' not empty so not removed") and
# of the names it was given that it ignores or takes once ("ignoring
# request to remove ...", "Package P listed more than once ...") in
# DPKG.out and DPKG.err, and in UNPKG.out and UNPKG.err, is the same, word
# for word and in order.
same_removal_warnings() {
	local p f
	for p in "$1" "$2"; do
		: >"$p.warn"
		for f in "$p.out" "$p.err"; do
			[ ! -f "$f" ] ||
				sed -n -e 's/^[a-z]*: warning: \(while removing .*\)/\1/p' \
					-e 's/^[a-z]*: warning: \(ignoring request .*\)/\1/p' \
					-e '/^Package .* listed more than once/p' \
					"$f" >>"$p.warn"
		done
	done
	assert_same_file "$1.warn" "$2.warn" "$3: warnings of what is kept (dpkg vs unpkg)"
}

# fail_both A B WHAT PKG ARG...: the same run of unpkg in root A (unpkg_in)
# and of dpkg in its twin B (dpkg_in), which both must fail, with the same
# exit status; their outputs stay in A.out and B.out.  dpkg keeps a
# selection of the refused new package PKG that unpkg does not: it is
# dropped from B (drop_selection) before the trees and the databases are
# compared.
fail_both() {
	local a=$1 b=$2 what=$3 pkg=$4 urc=0 drc=0
	shift 4
	unpkg_in "$a" "$@" >"$a.out" 2>&1 || urc=$?
	dpkg_in "$b" "$@" >"$b.out" 2>&1 || drc=$?
	show_file "$a.out" "unpkg output"
	assert_status "$drc" "$urc" "$what: unpkg $* (dpkg exits $drc)"
	[ "$urc" -ne 0 ] || check_fail "$what: unpkg $* succeeded"
	same_removal_warnings "$b" "$a" "$what"
	drop_selection "$b" "$pkg"
	compare_trees "$a" "$b" "$what"
	compare_dbs "$a" "$b" "$what"
}

# compare_with_dpkg MODE DEB...: compare_roots_with_dpkg on two fresh roots
# made by mkroot (or by the function named in CMP_MKROOT, e.g. shell_root),
# left in CMP_A and CMP_B for further checks.
compare_with_dpkg() {
	local dir
	dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
	CMP_A=$dir/unpkg CMP_B=$dir/dpkg
	"${CMP_MKROOT:-mkroot}" "$CMP_A"
	"${CMP_MKROOT:-mkroot}" "$CMP_B"
	compare_roots_with_dpkg "$CMP_A" "$CMP_B" "$@"
}

# --------------------------------------------------------------------------
# The host's Debian archive (debootstrap.sh, realpkgs.sh)
# --------------------------------------------------------------------------

# apt_source_entries: the binary package sources of the host's apt, one
# line per URI and suite: "URI SUITE COMPONENT...", in the order apt reads
# them: $APT_ETC/sources.list, then sources.list.d/*.list (one-line format)
# and sources.list.d/*.sources (deb822).  deb-src entries and deb822
# entries with "Enabled: no" are left out.  APT_ETC defaults to /etc/apt.
apt_source_entries() {
	local etc=${APT_ETC:-/etc/apt} f
	for f in "$etc/sources.list" "$etc"/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '
			{ sub(/#.*/, "") }
			$1 != "deb" { next }
			{
				i = 2
				if ($i ~ /^\[/) {
					while (i <= NF && $i !~ /\]$/)
						i++
					i++
				}
				line = $i " " $(i + 1)
				for (j = i + 2; j <= NF; j++)
					line = line " " $j
				print line
			}' "$f"
	done
	for f in "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			function add(k, v) {
				if (k == "types") types = types " " v
				else if (k == "uris") uris = uris " " v
				else if (k == "suites") suites = suites " " v
				else if (k == "components") comps = comps " " v
				else if (k == "enabled") enabled = v
			}
			function flush(   nt, nu, ns, k, u, s, deb, c) {
				nt = split(types, T, " ")
				deb = 0
				for (k = 1; k <= nt; k++)
					if (T[k] == "deb")
						deb = 1
				gsub(/[ \t]/, "", enabled)
				if (deb && tolower(enabled) != "no") {
					nu = split(uris, U, " ")
					ns = split(suites, S, " ")
					c = comps
					gsub(/[ \t]+/, " ", c)
					sub(/ $/, "", c)
					for (u = 1; u <= nu; u++)
						for (s = 1; s <= ns; s++)
							print U[u] " " S[s] c
				}
				types = uris = suites = comps = enabled = key = ""
			}
			/^#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ {
				v = $0
				sub(/^[ \t]+/, "", v)
				if (v != ".")
					add(key, v)
				next
			}
			{
				key = tolower($0)
				sub(/:.*/, "", key)
				v = $0
				sub(/^[^:]*:[ \t]*/, "", v)
				add(key, v)
			}
			END { flush() }' "$f"
	done
}

# debian_archive SUITE: the URI of the host's first apt source of SUITE
# (e.g. bookworm, bookworm-security) with the main component; else, on a
# Debian host, that of the host's own release in its place (the same
# archive serves the other releases: trixie-security for
# bookworm-security).  Returns 1 when the host has no such source.
debian_archive() {
	local suite=$1 alt="" id="" codename="" uri s rest want entries
	if [ -r "${OS_RELEASE:-/etc/os-release}" ]; then
		id=$(. "${OS_RELEASE:-/etc/os-release}" && printf '%s' "${ID:-}")
		codename=$(. "${OS_RELEASE:-/etc/os-release}" && printf '%s' "${VERSION_CODENAME:-}")
	fi
	if [ "$id" = debian ] && [ -n "$codename" ]; then
		case $suite in
		*-*) alt=$codename-${suite#*-} ;;
		*) alt=$codename ;;
		esac
	fi
	entries=$(apt_source_entries)
	for want in "$suite" ${alt:+"$alt"}; do
		while read -r uri s rest; do
			if [ "$s" = "$want" ] && [[ " $rest " == *" main "* ]]; then
				printf '%s\n' "${uri%/}"
				return 0
			fi
		done <<<"$entries"
	done
	return 1
}

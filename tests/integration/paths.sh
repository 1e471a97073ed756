#!/bin/bash
# paths.sh - where files land: merged-/usr roots, unusual member names,
# archives that try to write outside the root, and the options that name
# the root (--root=DIR, --root DIR, a relative root, --instdir/--admindir).
#
# Cases compared with dpkg (same result required):
#   merged-usr     root with bin -> usr/bin, lib -> usr/lib, sbin -> usr/sbin;
#                  a package shipping /bin/x, /lib/y, the directory /lib/z
#                  and /sbin/s lands in usr/ and the symlinks stay symlinks
#   member-names   data.tar members named "/etc/x" (absolute) and
#                  "usr/share/..." (no "./"): both land under the root
#   outside-link   a symlink whose absolute target is outside the root is
#                  created verbatim and never followed while installing it
#   unowned        files already on disk that no package owns: a file and a
#                  symlink over a file, a file over a symlink, a directory
#                  over a symlink to one; and (second package) a file over
#                  an empty directory
#   occupied       a file over a non-empty unowned directory: dpkg replaces
#                  the directory (its content is lost); unpkg may do the
#                  same or refuse cleanly (exit 1, root unchanged)
#   root options   --root DIR (two arguments), a relative --root, and
#                  --instdir with --admindir instead of --root
#
# Escape attempts (dpkg is not the reference here: with --root, dpkg 1.21
# follows "../" member names and symlinks already on disk right out of the
# root; each case logs what dpkg does, as a note).  For unpkg, in every
# case nothing outside the root may change: each root lives in a case
# directory next to a sentinel directory, and the whole case directory
# except the root is compared before and after.
#   dotdot-sentinel  member "../sentinel/pwned"
#   dotdot-deep      member "./var/lib/../../../../pwned" (through existing
#                    directories, ending in the case directory)
#   hardlink-out     hardlink member whose target is "../sentinel/keep"
#     For these three the member name itself leaves the root: unpkg must
#     refuse the package (exit 1, a message starting "unpkg: " that names
#     the package file or the member) and leave the root unchanged.
#   symlink-same-pkg   "./l -> SENTINEL" and "./l/pwned" in one package
#   symlink-abs        package 1 installs "./l -> SENTINEL", package 2
#                      ships "./l/pwned"
#   symlink-slash      package 1 installs "./l -> /", package 2 ships
#                      "./l/SENTINEL/pwned" (followed on the host, that path
#                      would be the sentinel again, so nothing else is hit)
#   symlink-relative   package 1 installs "./l -> ../sentinel", package 2
#                      ships "./l/pwned"
#     Resolving through symlinks inside the root, as a chroot would, is
#     allowed: unpkg may succeed (exit 0, the file inside the root) or
#     refuse (exit 1, root unchanged).  Which one it did is logged.

. "${TESTLIB:?TESTLIB is not set}"

LOGS=$TESTDIR/logs
mkdir -p "$LOGS"

# ---------------------------------------------------------------------------
section "merged-usr: /bin, /lib, /sbin are symlinks into /usr"

mkmerged() {
	mkroot "$1"
	mkdir -p "$1/usr/bin" "$1/usr/lib" "$1/usr/sbin"
	ln -s usr/bin "$1/bin"
	ln -s usr/lib "$1/lib"
	ln -s usr/sbin "$1/sbin"
	# Same times on both sides: the manifests compare symlink mtimes.
	touch -h -d @1000000000 "$1/bin" "$1/lib" "$1/sbin"
}

stage=$TESTDIR/merged
new_pkg "$stage" merged 1.0 all
mkdir -p "$stage/bin" "$stage/lib/z" "$stage/sbin"
echo 'bin x' >"$stage/bin/x"
chmod 0755 "$stage/bin/x"
echo 'lib y' >"$stage/lib/y"
echo 'lib z inner' >"$stage/lib/z/inner"
echo 'sbin s' >"$stage/sbin/s"
ln -s y "$stage/lib/y-link"
mdeb=$TESTDIR/merged_1.0_all.deb
build_deb "$mdeb" "$stage"

for mode in --unpack -i; do
	dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
	mkmerged "$dir/unpkg"
	mkmerged "$dir/dpkg"
	compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" "$mode" "$mdeb"
	a=$dir/unpkg
	for l in bin:usr/bin lib:usr/lib sbin:usr/sbin; do
		if [ "$(readlink "$a/${l%%:*}" || true)" != "${l#*:}" ]; then
			check_fail "$mode: /${l%%:*} is no longer the symlink to ${l#*:}"
		fi
	done
	[ -f "$a/usr/bin/x" ] || check_fail "$mode: /bin/x did not land in usr/bin"
	[ -f "$a/usr/lib/y" ] || check_fail "$mode: /lib/y did not land in usr/lib"
	[ -d "$a/usr/lib/z" ] && [ ! -L "$a/usr/lib/z" ] ||
		check_fail "$mode: /lib/z is not a directory in usr/lib"
	[ -f "$a/usr/sbin/s" ] || check_fail "$mode: /sbin/s did not land in usr/sbin"
done

# ---------------------------------------------------------------------------
section "member-names: absolute (/etc/x) and ./-less (usr/...) names"

stage=$TESTDIR/names
new_pkg "$stage" membernames 1.0 all
mkdir -p "$stage/etc" "$stage/usr/share/membernames"
echo 'absolute member' >"$stage/etc/x"
echo 'bare member' >"$stage/usr/share/membernames/y"
make_control_tar "$stage" "$TESTDIR/names-control.tar"
# -P keeps the leading "/" that --transform puts back.
tar -C "$stage" -P --format=gnu --sort=name --exclude=./DEBIAN \
	--transform 's,^\./etc,/etc,;s,^\./usr,usr,' -cf "$TESTDIR/names-data.tar" .
note "members: $(tar -tf "$TESTDIR/names-data.tar" | tr '\n' ' ')"
gzip -9n "$TESTDIR/names-control.tar"
ndeb=$TESTDIR/membernames_1.0_all.deb
assemble_deb "$ndeb" "$TESTDIR/names-control.tar.gz" "$TESTDIR/names-data.tar"
compare_with_dpkg -i "$ndeb"
[ -f "$CMP_A/etc/x" ] || check_fail "member /etc/x did not land in ROOT/etc/x"
[ -f "$CMP_A/usr/share/membernames/y" ] || check_fail "member usr/share/membernames/y missing"

# ---------------------------------------------------------------------------
section "outside-link: an absolute symlink to outside the root, created verbatim"

outside=$TESTDIR/outside-target
mkdir -p "$outside"
echo 'do not touch' >"$outside/keep"
stage=$TESTDIR/outlink
new_pkg "$stage" outlink 1.0 all
mkdir -p "$stage/etc"
ln -s "$outside" "$stage/etc/outside-dir"
ln -s "$outside/keep" "$stage/etc/outside-file"
odeb=$TESTDIR/outlink_1.0_all.deb
build_deb "$odeb" "$stage"
before=$(tree_manifest "$outside")
compare_with_dpkg -i "$odeb"
[ "$(tree_manifest "$outside")" = "$before" ] || check_fail "the symlink target outside the root changed"

# ---------------------------------------------------------------------------
section "unowned: files already on disk that no package owns"

# mkunowned DIR: a root holding, at paths the package ships, an unowned
# file (replaced by a file, and by a symlink), an unowned symlink (replaced
# by a file), a symlink to a directory (followed, as with merged /usr) and
# an empty directory (replaced by a file, by a second package).  Fixed
# times on both twins.
mkunowned() {
	local u=$1/usr/share/unowned
	mkroot "$1"
	mkdir -p "$u/file-over-dir" "$1/usr/share/elsewhere"
	echo 'old unowned content' >"$u/file-over-file"
	echo 'old unowned content' >"$u/link-over-file"
	ln -s file-over-file "$u/file-over-link"
	ln -s ../elsewhere "$u/dirlink"
	find "$1/usr" -exec touch -h -d @1000000000 {} +
}

stage=$TESTDIR/unowned
new_pkg "$stage" unowned 1.0 all
u=$stage/usr/share/unowned
mkdir -p "$u/dirlink"
echo 'packaged' >"$u/file-over-file"
ln -s file-over-file "$u/link-over-file"
echo 'packaged' >"$u/file-over-link"
echo 'inside the followed directory' >"$u/dirlink/inner"
udeb=$TESTDIR/unowned_1.0_all.deb
build_deb "$udeb" "$stage"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
mkunowned "$dir/unpkg"
mkunowned "$dir/dpkg"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -i "$udeb"
[ -L "$dir/unpkg/usr/share/unowned/dirlink" ] ||
	check_fail "unowned: the symlink to a directory was replaced"

section "unowned: an empty directory where the package ships a file"
stage=$TESTDIR/unowned-emptydir
new_pkg "$stage" unowned-emptydir 1.0 all
mkdir -p "$stage/usr/share/unowned"
echo 'packaged' >"$stage/usr/share/unowned/file-over-dir"
edeb=$TESTDIR/unowned-emptydir_1.0_all.deb
build_deb "$edeb" "$stage"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
mkunowned "$dir/unpkg"
mkunowned "$dir/dpkg"
compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" -i "$edeb"

section "unowned: a non-empty directory where the package ships a file"
# dpkg 1.21 replaces the directory, and what it held is gone.  Refusing
# (exit 1, the root unchanged, a message naming the path) is an acceptable
# alternative for unpkg; anything else is not.
mkoccupied() {
	prime_root "$1"
	mkdir -p "$1/usr/share/unowned/file-over-dir"
	echo 'user data' >"$1/usr/share/unowned/file-over-dir/occupant"
	find "$1/usr" -exec touch -h -d @1000000000 {} +
}
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
a=$dir/unpkg b=$dir/dpkg
mkoccupied "$a"
mkoccupied "$b"
{ tree_manifest "$a"; db_manifest "$a"; } >"$a.before"
run_logged "$a.unpkg" unpkg_in "$a" -i "$edeb"
urc=$RUN_RC
drc=0
dpkg_in "$b" -i "$edeb" >"$b.dpkg.out" 2>&1 || drc=$?
note "dpkg (reference): the occupant is $([ -e "$b/usr/share/unowned/file-over-dir/occupant" ] && echo kept || echo GONE)"
note "unpkg: exit $urc"
show_file "$a.unpkg.err" "unpkg stderr"
case $urc in
0)
	assert_status "$drc" "$urc" "occupied directory: unpkg succeeded (dpkg exits $drc)"
	compare_trees "$a" "$b" "occupied directory"
	compare_dbs "$a" "$b" "occupied directory"
	compare_queries "$a" "$b" -i unowned-emptydir
	;;
1)
	{ tree_manifest "$a"; db_manifest "$a"; } >"$a.after"
	assert_same_file "$a.before" "$a.after" "occupied directory: root before and after the failed run"
	assert_grep '^unpkg: ' "$a.unpkg.err" "occupied directory: message prefix"
	assert_grep 'file-over-dir' "$a.unpkg.err" "occupied directory: message names the path"
	assert_no_debris "$a"
	;;
*) check_fail "occupied directory: unpkg exit status $urc (expected 0 or 1)" ;;
esac

# ---------------------------------------------------------------------------
# Escape attempts.

# make_escape_deb OUT NAME DATA_TAR: a package NAME around a ready data.tar.
make_escape_deb() {
	local out=$1 name=$2 data=$3 cstage
	cstage=$(mktemp -d "$TESTDIR/ctl.XXXXXX")
	new_pkg "$cstage" "$name" 1.0 all
	make_control_tar "$cstage" "$cstage/control.tar"
	gzip -9n "$cstage/control.tar"
	assemble_deb "$out" "$cstage/control.tar.gz" "$data"
}

# new_case NAME: a case directory CASE=$TESTDIR/NAME/CASEDIR holding
# top/root (the target root) and top/sentinel, so that "../" reaches the
# sentinel and "../../../" the case directory itself.  Sets ROOT and SENT.
new_case() {
	CASE=$TESTDIR/$1
	ROOT=$CASE/top/root
	SENT=$CASE/top/sentinel
	prime_root "$ROOT"
	mkdir -p "$SENT"
	echo 'sentinel content' >"$SENT/keep"
}

# outside_state: everything in CASE except the root.
outside_state() {
	tree_manifest "$CASE" top/root
}

# root_state: the root's tree and database.
root_state() {
	tree_manifest "$ROOT"
	db_manifest "$ROOT"
}

# run_escape TOOL NAME SETUP_DEB... -- ATTACK_DEB: in a fresh case for TOOL
# (unpkg or dpkg), install the SETUP_DEBs with dpkg (they are harmless on
# their own), then run TOOL -i on ATTACK_DEB.  Leaves ESC_RC, ESC_OUTSIDE
# (1 if something outside the root changed) and ESC_ROOT_SAME (1 if the
# root is as before the attack), with outputs in $LOGS/NAME.TOOL.{out,err}.
run_escape() {
	local tool=$1 name=$2
	shift 2
	local -a setup=()
	while [ "$1" != -- ]; do
		setup+=("$1")
		shift
	done
	local attack=$2
	new_case "$name.$tool"
	if [ "${#setup[@]}" -gt 0 ]; then
		dpkg_in "$ROOT" -i "${setup[@]}" >"$LOGS/$name.$tool.setup" 2>&1 ||
			hard_error "$name: dpkg could not install the setup package(s)"
	fi
	local out_before root_before
	out_before=$(outside_state)
	root_before=$(root_state)
	if [ "$tool" = unpkg ]; then
		run_logged "$LOGS/$name.$tool" unpkg_in "$ROOT" -i "$attack"
	else
		run_logged "$LOGS/$name.$tool" dpkg_in "$ROOT" -i "$attack"
	fi
	ESC_RC=$RUN_RC
	ESC_OUTSIDE=0
	if [ "$(outside_state)" != "$out_before" ]; then
		ESC_OUTSIDE=1
		diff -u <(printf '%s\n' "$out_before") <(outside_state) |
			sed 's/^/    /' >"$LOGS/$name.$tool.outside-diff" || true
	fi
	ESC_ROOT_SAME=0
	if [ "$(root_state)" = "$root_before" ]; then
		ESC_ROOT_SAME=1
	else
		diff -u <(printf '%s\n' "$root_before") <(root_state) |
			sed 's/^/    /' >"$LOGS/$name.$tool.root-diff" || true
	fi
}

# report_unchanged_root NAME: a failed unpkg run must leave the root as it
# was; show how it differs otherwise.
report_unchanged_root() {
	if [ "$ESC_ROOT_SAME" != 1 ]; then
		check_fail "$1: unpkg failed but changed the root:"
		cat "$LOGS/$1.unpkg.root-diff" >&2
	fi
}

# escape_case NAME KIND SETUP_DEB... -- ATTACK_DEB: run the attack with
# dpkg (noted only) and with unpkg (checked).  KIND "refuse": unpkg must
# exit 1 and leave the root unchanged; KIND "contain": exit 0 or exit 1
# with the root unchanged.  Either way nothing outside the root changes.
escape_case() {
	local name=$1 kind=$2
	shift 2
	section "escape: $name"
	run_escape dpkg "$name" "$@"
	note "dpkg (reference only): exit $ESC_RC; wrote outside the root: $([ "$ESC_OUTSIDE" = 1 ] && echo YES || echo no)"

	run_escape unpkg "$name" "$@"
	note "unpkg: exit $ESC_RC; wrote outside the root: $([ "$ESC_OUTSIDE" = 1 ] && echo YES || echo no); root unchanged: $([ "$ESC_ROOT_SAME" = 1 ] && echo yes || echo no)"
	show_file "$LOGS/$name.unpkg.out" "unpkg stdout"
	show_file "$LOGS/$name.unpkg.err" "unpkg stderr"
	if [ "$ESC_OUTSIDE" = 1 ]; then
		check_fail "$name: unpkg changed files outside the root:"
		cat "$LOGS/$name.unpkg.outside-diff" >&2
	fi
	local attack=${*: -1}
	case $kind:$ESC_RC in
	refuse:1 | contain:1)
		report_unchanged_root "$name"
		assert_grep '^unpkg: ' "$LOGS/$name.unpkg.err" "$name: error message"
		;;
	contain:0)
		note "unpkg resolved the path inside the root"
		assert_no_debris "$ROOT"
		;;
	refuse:*) check_fail "$name: unpkg exit status $ESC_RC (expected 1)" ;;
	*) check_fail "$name: unpkg exit status $ESC_RC (expected 0 or 1)" ;;
	esac
	if [ "$kind" = refuse ]; then
		# The message names the package file or the offending member.
		assert_grep "$(basename "$attack")|$ESC_MEMBER" "$LOGS/$name.unpkg.err" "$name: message names the cause"
	fi
}

estage=$TESTDIR/escape-stage
mkdir -p "$estage"
echo 'pwned' >"$estage/pwned"

# dotdot-sentinel
tar -C "$estage" -P --format=gnu --transform 's,^pwned$,../sentinel/pwned,' \
	-cf "$TESTDIR/dotdot-sentinel.tar" pwned
make_escape_deb "$TESTDIR/dotdot-sentinel.deb" dotdot-sentinel "$TESTDIR/dotdot-sentinel.tar"
ESC_MEMBER='\.\./sentinel/pwned'
escape_case dotdot-sentinel refuse -- "$TESTDIR/dotdot-sentinel.deb"

# dotdot-deep
tar -C "$estage" -P --format=gnu --transform 's,^pwned$,./var/lib/../../../../pwned,' \
	-cf "$TESTDIR/dotdot-deep.tar" pwned
make_escape_deb "$TESTDIR/dotdot-deep.deb" dotdot-deep "$TESTDIR/dotdot-deep.tar"
ESC_MEMBER='lib/\.\./\.\./\.\./\.\./pwned'
escape_case dotdot-deep refuse -- "$TESTDIR/dotdot-deep.deb"

# hardlink-out: "./a" is a plain file; "./hl" is a hardlink to
# "../sentinel/keep" (written by hand: GNU tar strips "../" from link names).
htar=$TESTDIR/hardlink-out.tar
tar_member "$htar" ./ 5
tar_member "$htar" ./a 0 '' 'inside'
tar_member "$htar" ./hl 1 ../sentinel/keep
tar_end "$htar"
make_escape_deb "$TESTDIR/hardlink-out.deb" hardlink-out "$htar"
ESC_MEMBER='\.\./sentinel/keep|\./hl'
escape_case hardlink-out refuse -- "$TESTDIR/hardlink-out.deb"

# Symlink cases.  The sentinel path differs per case directory, so the
# packages are built per tool inside the case: build_symlink_debs TOOL NAME
# TARGET FILE writes NAME.TOOL.setup.deb (./l -> TARGET) and
# NAME.TOOL.attack.deb (./l/FILE), plus NAME.TOOL.same.deb with both.
build_symlink_debs() {
	local tool=$1 name=$2 target=$3 file=$4 w
	w=$(mktemp -d "$TESTDIR/sym.XXXXXX")
	mkdir -p "$w/s1" "$w/s2/l/$(dirname "$file")"
	ln -s "$target" "$w/s1/l"
	echo 'pwned' >"$w/s2/l/$file"
	tar -C "$w/s1" --format=gnu -cf "$w/setup.tar" ./l
	tar -C "$w/s2" --format=gnu --no-recursion -cf "$w/attack.tar" "./l/$file"
	cp "$w/setup.tar" "$w/same.tar"
	tar -C "$w/s2" --format=gnu --no-recursion -rf "$w/same.tar" "./l/$file"
	make_escape_deb "$TESTDIR/$name.$tool.setup.deb" "$name-setup" "$w/setup.tar"
	make_escape_deb "$TESTDIR/$name.$tool.attack.deb" "$name" "$w/attack.tar"
	make_escape_deb "$TESTDIR/$name.$tool.same.deb" "$name" "$w/same.tar"
}

# symlink_case NAME TARGET FILE [same]: TARGET and FILE may use @SENT@ for
# the absolute sentinel path of the case directory of each tool.
symlink_case() {
	local name=$1 target=$2 file=$3 same=${4:-} tool t f
	for tool in dpkg unpkg; do
		t=${target//@SENT@/$TESTDIR/$name.$tool/top/sentinel}
		f=${file//@SENT@/$TESTDIR/$name.$tool/top/sentinel}
		f=${f#/}
		build_symlink_debs "$tool" "$name" "$t" "$f"
	done
	section "escape: $name"
	for tool in dpkg unpkg; do
		if [ -n "$same" ]; then
			run_escape "$tool" "$name" -- "$TESTDIR/$name.$tool.same.deb"
		else
			run_escape "$tool" "$name" "$TESTDIR/$name.$tool.setup.deb" -- \
				"$TESTDIR/$name.$tool.attack.deb"
		fi
		if [ "$tool" = dpkg ]; then
			note "dpkg (reference only): exit $ESC_RC; wrote outside the root: $([ "$ESC_OUTSIDE" = 1 ] && echo YES || echo no)"
			continue
		fi
		note "unpkg: exit $ESC_RC; wrote outside the root: $([ "$ESC_OUTSIDE" = 1 ] && echo YES || echo no); root unchanged: $([ "$ESC_ROOT_SAME" = 1 ] && echo yes || echo no)"
		show_file "$LOGS/$name.unpkg.out" "unpkg stdout"
		show_file "$LOGS/$name.unpkg.err" "unpkg stderr"
		if [ "$ESC_OUTSIDE" = 1 ]; then
			check_fail "$name: unpkg changed files outside the root:"
			cat "$LOGS/$name.unpkg.outside-diff" >&2
		fi
		case $ESC_RC in
		0)
			note "unpkg resolved the symlink inside the root; the file is at $(cd "$ROOT" && find . -name pwned -printf '%P ' 2>/dev/null)"
			assert_no_debris "$ROOT"
			[ -n "$(find "$ROOT" -name pwned -type f)" ] ||
				check_fail "$name: unpkg exited 0 but the file is nowhere in the root"
			;;
		1)
			report_unchanged_root "$name"
			assert_grep '^unpkg: ' "$LOGS/$name.unpkg.err" "$name: error message"
			;;
		*) check_fail "$name: unpkg exit status $ESC_RC (expected 0 or 1)" ;;
		esac
	done
}

symlink_case symlink-same-pkg @SENT@ pwned same
symlink_case symlink-abs @SENT@ pwned
symlink_case symlink-slash / @SENT@/pwned
symlink_case symlink-relative ../sentinel pwned

# ---------------------------------------------------------------------------
# The options that name the root.

stage=$TESTDIR/rootopt
new_pkg "$stage" rootopt 1.0 all
mkdir -p "$stage/usr/share/rootopt" "$stage/etc"
echo 'where am I' >"$stage/usr/share/rootopt/file"
echo 'conf' >"$stage/etc/rootopt.conf"
echo /etc/rootopt.conf >"$stage/DEBIAN/conffiles"
rdeb=$TESTDIR/rootopt_1.0_all.deb
build_deb "$rdeb" "$stage"

# compare_custom WHAT UNPKG_ARGS... -- DPKG_ARGS...: run both with their own
# arguments (which name the roots A and B, set by the caller) and compare
# their exit statuses; the caller compares the trees and databases.  It
# runs in the test's shell (not a subshell), so its failures count.
compare_custom() {
	local what=$1
	shift
	local -a uargs=() dargs=()
	while [ "$1" != -- ]; do
		uargs+=("$1")
		shift
	done
	shift
	dargs=("$@")
	run_logged "$A.unpkg" "$UNPKG" --refuse-unsafe-io "${uargs[@]}"
	local urc=$RUN_RC
	run_logged "$B.dpkg" dpkg "${dargs[@]}"
	note "$what: unpkg exit $urc, dpkg exit $RUN_RC"
	show_file "$A.unpkg.err" "unpkg stderr"
	assert_status "$RUN_RC" "$urc" "$what: unpkg exit status (dpkg's)"
}

section "root options: --root DIR (two arguments)"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
A=$dir/unpkg B=$dir/dpkg
mkroot "$A"
mkroot "$B"
compare_custom "--root DIR" --root "$A" -i "$rdeb" -- --root "$B" -i "$rdeb"
compare_trees "$A" "$B" "--root DIR"
compare_dbs "$A" "$B" "--root DIR"
compare_queries "$A" "$B" -i rootopt

section "root options: relative --root=DIR"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
A=$dir/unpkg B=$dir/dpkg
mkroot "$A"
mkroot "$B"
cd "$dir"
compare_custom "relative --root" --root=unpkg -i "$rdeb" -- --root=dpkg -i "$rdeb"
cd "$TESTDIR"
compare_trees "$A" "$B" "relative --root"
compare_dbs "$A" "$B" "relative --root"
compare_queries "$A" "$B" -i rootopt

section "root options: --instdir=DIR --admindir=DIR (database outside the tree)"
dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
A=$dir/unpkg-inst B=$dir/dpkg-inst
mkdir -p "$A" "$B"
for adm in "$dir/unpkg-admin" "$dir/dpkg-admin"; do
	mkdir -p "$adm/info" "$adm/updates"
	: >"$adm/status"
done
compare_custom "--instdir/--admindir" \
	--instdir="$A" --admindir="$dir/unpkg-admin" -i "$rdeb" -- \
	--instdir="$B" --admindir="$dir/dpkg-admin" -i "$rdeb"
compare_trees "$A" "$B" "--instdir"
compare_admindirs "$dir/unpkg-admin" "$dir/dpkg-admin" "--admindir"
[ ! -e "$A/var/lib/dpkg" ] || check_fail "--admindir: unpkg created a database under the instdir"
for q in "dpkg -s rootopt" "dpkg -L rootopt" "dpkg -V rootopt" "dpkg --audit" \
	"dpkg-query -W -f=\${Package}_\${Version}_\${Status}\n"; do
	for side in unpkg dpkg; do
		# $q is a command, an option and a package name: split on purpose.
		${q%% *} --admindir="$dir/$side-admin" ${q#* } >"$dir/$side.q" 2>&1 ||
			echo "(exit $?)" >>"$dir/$side.q"
	done
	assert_same_file "$dir/dpkg.q" "$dir/unpkg.q" "--admindir: $q"
done

#!/bin/bash
# filters.sh - dpkg's path filters (--path-exclude, --path-include), each
# case compared with dpkg in twin roots: the tree, the whole database
# (info/PKG.list still names the filtered paths, a generated md5sums does
# not, a filtered conffile keeps the hash recorded for it), dpkg's view
# (-s, -L, -V, --audit) and the exit statuses.
#
#   slim          the rules of Debian's slim container images, read from
#                 ~/.dpkg.cfg by both programs: doc files but the copyright
#                 excluded (their directories and the symlinks there kept),
#                 man pages, info, locales (but the included few), lintian
#                 overrides, groff; one package with an md5sums member, one
#                 without; --unpack and -i
#   conffile      a filter that excludes a conffile: on install (none on
#                 disk, "newconffile" recorded), on an upgrade that changes
#                 it, on an upgrade of a conffile the first version
#                 installed (the local file kept, its hash too), and of a
#                 plain file that becomes a filtered conffile (kept)
#   emptied       "DIR/*" excluded: DIR made and listed, nothing below it;
#                 "DIR" itself excluded with files below it: both fail
#   order         include after exclude re-admits; exclude after include
#                 wins; an include re-admits the excluded directories
#                 below its fixed start (not those above: both fail)
#   upgrade       filters changed between versions: what the old version
#                 installed at a path the new one filters is removed, and
#                 comes back when a later version is installed unfiltered
#   removal       dpkg -r and -P (and unpkg -r, handed to dpkg) afterwards
#   hardlink      a hard link whose target is filtered: both fail
. "${TESTLIB:?TESTLIB is not set}"

# The rules of /etc/dpkg/dpkg.cfg.d/docker in Debian's slim images (plus
# groff, which older ones exclude too), in dpkg's configuration syntax.
SLIM_RULES='path-exclude /usr/share/doc/*
path-exclude /usr/share/doc/kde/HTML/*/*
path-exclude /usr/share/gnome/help/*/*
path-exclude=/usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
path-exclude /usr/share/omf/*/*-*.emf
path-include /usr/share/doc/*/copyright
path-include /usr/share/doc/kde/HTML/C/*
path-include /usr/share/gnome/help/*/C/*
path-include /usr/share/locale/all_languages
path-include /usr/share/locale/currency/*
path-include /usr/share/locale/l10n/*
path-include /usr/share/locale/languages
path-include /usr/share/locale/locale.alias
path-include "/usr/share/omf/*/*-C.emf"'

SRC=$TESTDIR/src

# put FILE [CONTENT]: a file of a staging tree, its directories made.
put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "${2:-content of $(basename "$1")}" >"$1"
}

# with_md5sums DIR: DIR/DEBIAN/md5sums as dh_md5sums writes it.
with_md5sums() {
	(cd "$1" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
		sort -z | xargs -0r md5sum) >"$1/DEBIAN/md5sums"
}

# doc_pkg NAME VERSION [md5sums]: a package with something for each slim
# rule, and the entries that stay.
doc_pkg() {
	local name=$1 v=$2 d=$SRC/$1-$2
	new_pkg "$d" "$name" "$v"
	put "$d/usr/bin/$name" "#!/bin/sh version $v"
	chmod 0755 "$d/usr/bin/$name"
	put "$d/usr/share/doc/$name/copyright"
	put "$d/usr/share/doc/$name/changelog.Debian.gz" "changes $v"
	put "$d/usr/share/doc/$name/examples/deep/example.conf"
	ln -s "$name" "$d/usr/share/doc/$name-extra"
	put "$d/usr/share/doc/kde/HTML/C/$name/index.docbook"
	put "$d/usr/share/doc/kde/HTML/de/$name/index.docbook"
	put "$d/usr/share/gnome/help/$name/C/index.page"
	put "$d/usr/share/gnome/help/$name/de/index.page"
	put "$d/usr/share/man/man1/$name.1.gz"
	put "$d/usr/share/man/de/man1/$name.1.gz"
	put "$d/usr/share/info/$name.info.gz"
	put "$d/usr/share/lintian/overrides/$name"
	put "$d/usr/share/groff/site-tmac/$name.tmac"
	put "$d/usr/share/locale/de/LC_MESSAGES/$name.mo"
	[ "${3:-}" != md5sums ] || put "$d/usr/share/locale/locale.alias"
	put "$d/usr/share/locale/currency/$name"
	put "$d/usr/share/omf/$name/$name-C.emf"
	put "$d/usr/share/omf/$name/$name-de.emf"
	put "$d/usr/share/$name/data" "data $v"
	if [ "${3:-}" = md5sums ]; then
		with_md5sums "$d"
	fi
	build_deb "$TESTDIR/${name}_$v.deb" "$d"
}

# twins NAME: fresh twin roots TESTDIR/NAME/{unpkg,dpkg}, in A and B.
twins() {
	A=$TESTDIR/$1/unpkg B=$TESTDIR/$1/dpkg
	mkroot "$A"
	mkroot "$B"
}

# both MODE ARG...: the same run of unpkg in A and of dpkg in B, compared.
both() {
	compare_roots_with_dpkg "$A" "$B" "$@"
}

# listed ROOT PKG PATH: PATH is in PKG's file list.
listed() {
	grep -qxF -- "$3" "$1/var/lib/dpkg/info/$2.list"
}

# ---------------------------------------------------------------------------
section "slim: Debian's slim image rules from ~/.dpkg.cfg"

doc_pkg slimsum 1.0 md5sums
doc_pkg slimgen 1.0
HOME_SAVED=$HOME
export HOME=$TESTDIR/home
mkdir -p "$HOME"
printf '%s\n' "$SLIM_RULES" >"$HOME/.dpkg.cfg"
for mode in --unpack -i; do
	twins "slim$mode"
	both "$mode" "$TESTDIR/slimsum_1.0.deb" "$TESTDIR/slimgen_1.0.deb"
	for p in slimsum slimgen; do
		for f in usr/share/doc/$p/copyright usr/share/doc/kde/HTML/C/$p/index.docbook \
			usr/share/gnome/help/$p/C/index.page usr/share/locale/locale.alias \
			usr/share/locale/currency/$p usr/share/omf/$p/$p-C.emf usr/bin/$p \
			usr/share/doc/$p/examples/deep; do
			[ -e "$A/$f" ] || check_fail "$mode: /$f (kept by the rules) is missing"
		done
		[ -L "$A/usr/share/doc/$p-extra" ] ||
			check_fail "$mode: the symlink in /usr/share/doc was not kept"
		for f in usr/share/doc/$p/changelog.Debian.gz usr/share/man/man1/$p.1.gz \
			usr/share/locale/de/LC_MESSAGES/$p.mo usr/share/omf/$p/$p-de.emf \
			usr/share/doc/$p/examples/deep/example.conf usr/share/lintian/overrides/$p; do
			[ ! -e "$A/$f" ] || check_fail "$mode: /$f was unpacked"
			listed "$A" "$p" "/$f" || check_fail "$mode: /$f is not in $p.list"
		done
	done
	if grep -q changelog "$A/var/lib/dpkg/info/slimgen.md5sums"; then
		check_fail "$mode: the generated md5sums names a filtered file"
	fi
done
export HOME=$HOME_SAVED

# ---------------------------------------------------------------------------
section "conffile: a filter that excludes a conffile"

# conf_pkg VERSION CONTENT: package confpkg, conffiles /etc/confpkg/a.conf
# (CONTENT) and /etc/confpkg/b.conf.
conf_pkg() {
	local d=$SRC/confpkg-$1
	new_pkg "$d" confpkg "$1"
	put "$d/etc/confpkg/a.conf" "$2"
	put "$d/etc/confpkg/b.conf" "b $1"
	printf '/etc/confpkg/a.conf\n/etc/confpkg/b.conf\n' >"$d/DEBIAN/conffiles"
	build_deb "$TESTDIR/confpkg_$1.deb" "$d"
}
conf_pkg 1.0 'a = 1'
conf_pkg 2.0 'a = 2'
NOCONF=--path-exclude=/etc/confpkg/a.conf

twins conf-new
both --unpack "$NOCONF" "$TESTDIR/confpkg_1.0.deb"
both --configure confpkg
[ ! -e "$A/etc/confpkg/a.conf" ] && [ ! -e "$A/etc/confpkg/a.conf.dpkg-new" ] ||
	check_fail "conffile: the filtered conffile was unpacked"
grep -q '^ /etc/confpkg/a.conf newconffile$' "$A/var/lib/dpkg/status" ||
	check_fail "conffile: the filtered conffile is not recorded as newconffile"
both -i "$NOCONF" "$TESTDIR/confpkg_2.0.deb"

twins conf-upgrade
both -i "$TESTDIR/confpkg_1.0.deb"
echo 'a = local' >"$A/etc/confpkg/a.conf"
echo 'a = local' >"$B/etc/confpkg/a.conf"
touch -r "$A/etc/confpkg/a.conf" "$B/etc/confpkg/a.conf"
both -i "$NOCONF" "$TESTDIR/confpkg_2.0.deb"
[ "$(cat "$A/etc/confpkg/a.conf")" = 'a = local' ] ||
	check_fail "conffile: the local conffile did not stay"

# a plain file of version 0.9 that 1.0 makes a filtered conffile: kept
d=$SRC/confpkg-0.9
new_pkg "$d" confpkg 0.9
put "$d/etc/confpkg/a.conf" 'a = plain'
build_deb "$TESTDIR/confpkg_0.9.deb" "$d"
twins conf-became
both -i "$TESTDIR/confpkg_0.9.deb"
both -i "$NOCONF" "$TESTDIR/confpkg_1.0.deb"
[ "$(cat "$A/etc/confpkg/a.conf")" = 'a = plain' ] ||
	check_fail "conffile: the file that became a filtered conffile did not stay"

# ---------------------------------------------------------------------------
section "emptied: a filter that empties a directory"

d=$SRC/emptied
new_pkg "$d" emptied 1.0
put "$d/usr/share/emptied/sub/deeper/file"
put "$d/usr/share/emptied/top"
put "$d/usr/lib/emptied/kept"
build_deb "$TESTDIR/emptied_1.0.deb" "$d"

twins emptied
both -i --path-exclude='/usr/share/emptied/*' "$TESTDIR/emptied_1.0.deb"
[ -d "$A/usr/share/emptied" ] && [ -z "$(ls -A "$A/usr/share/emptied")" ] ||
	check_fail "emptied: /usr/share/emptied is not there and empty"
both -r emptied

twins emptied-dir
fail_both "$A" "$B" emptied emptied -i --path-exclude=/usr/share/emptied "$TESTDIR/emptied_1.0.deb"

# ---------------------------------------------------------------------------
section "order: the last matching rule decides"

twins order
both -i --path-exclude='/usr/share/doc/*' --path-include='/usr/share/doc/*/examples/*' \
	--path-include='/usr/lib/*' --path-exclude='/usr/share/man/*' \
	--path-include='/usr/share/man/man1/*' --path-exclude='/usr/share/man/man1/*.1.gz' \
	"$TESTDIR/slimgen_1.0.deb"
[ -f "$A/usr/share/doc/slimgen/examples/deep/example.conf" ] ||
	check_fail "order: the include after the exclude did not re-admit the example"
[ ! -e "$A/usr/share/doc/slimgen/copyright" ] ||
	check_fail "order: the copyright was not excluded"
[ -d "$A/usr/share/man/man1" ] && [ ! -e "$A/usr/share/man/man1/slimgen.1.gz" ] ||
	check_fail "order: the exclude after the include did not win"

# An include re-admits the excluded directories below its fixed start,
# not those above it: /usr/share/doc/slimgen stays out, and its examples
# have nowhere to go.
twins order-above
fail_both "$A" "$B" slimgen slimgen -i --path-exclude='/usr/share/doc/*' \
	--path-include='/usr/share/doc/slimgen/examples/*' "$TESTDIR/slimgen_1.0.deb"

# ---------------------------------------------------------------------------
section "upgrade: filters changed between versions"

doc_pkg slimgen 2.0
doc_pkg slimgen 3.0
twins upgrade
both -i "$TESTDIR/slimgen_1.0.deb"
export HOME=$TESTDIR/home
both -i "$TESTDIR/slimgen_2.0.deb"
export HOME=$HOME_SAVED
[ ! -e "$A/usr/share/doc/slimgen/changelog.Debian.gz" ] ||
	check_fail "upgrade: the old version's file at a filtered path stayed"
[ -f "$A/usr/share/doc/slimgen/copyright" ] ||
	check_fail "upgrade: the copyright went"
both -i "$TESTDIR/slimgen_3.0.deb"
[ -f "$A/usr/share/doc/slimgen/changelog.Debian.gz" ] ||
	check_fail "upgrade: the file did not come back unfiltered"
export HOME=$TESTDIR/home
both -i "$TESTDIR/slimgen_2.0.deb"
export HOME=$HOME_SAVED

# ---------------------------------------------------------------------------
section "removal: dpkg removes what unpkg installed filtered"

for how in -r -P; do
	twins "removal$how"
	export HOME=$TESTDIR/home
	both -i "$TESTDIR/slimsum_1.0.deb" "$TESTDIR/confpkg_1.0.deb"
	export HOME=$HOME_SAVED
	for r in "$A" "$B"; do
		run_logged "$r.rm" dpkg --root="$r" "$how" slimsum confpkg
		[ "$RUN_RC" -eq 0 ] || check_fail "dpkg $how on $r: exit $RUN_RC"
	done
	compare_trees "$A" "$B" "dpkg $how"
	compare_dbs "$A" "$B" "dpkg $how"
done
twins removal-unpkg
both -i "$NOCONF" "$TESTDIR/confpkg_1.0.deb"
both -P confpkg

# ---------------------------------------------------------------------------
section "hardlink: a hard link to a filtered file"

d=$SRC/hardlink
new_pkg "$d" hardlink 1.0
put "$d/usr/share/hardlink/target"
ln "$d/usr/share/hardlink/target" "$d/usr/share/hardlink/zlink"
build_deb "$TESTDIR/hardlink_1.0.deb" "$d"
twins hardlink
fail_both "$A" "$B" hardlink hardlink -i --path-exclude=/usr/share/hardlink/target \
	"$TESTDIR/hardlink_1.0.deb"

exit $((TEST_FAILURES > 0))

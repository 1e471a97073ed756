#!/bin/bash
# divert.sh - dpkg-divert's diversions, compared with stock dpkg in twin
# roots.  Each step runs the same command in both roots (unpkg in A, dpkg
# in B), then compares exit statuses, trees, whole databases (diversions
# included), dpkg -s/-L/-V per package, dpkg -S of the diverted paths and
# dpkg-divert --list.
#
#   local           dpkg-divert --local --rename of a file of an installed
#                   package, then its upgrade: the new file goes to the
#                   divert-to path, the list keeps the original name
#                   (a file trigger on the divert-to path fires, as in
#                   dpkg: its postinst writes /log)
#   conffile        a local diversion of a conffile: configured at the
#                   divert-to path
#                   (hello 2.0's hard link to it is linked to the
#                   divert-to path)
#   local-new       a local diversion made before the package is
#                   installed at all
#   obsolete        the upgrade drops a diverted file: it is removed at
#                   the divert-to path
#   preinst         a package whose preinst diverts (--package, --rename)
#                   a path another installed package owns, and ships that
#                   path itself: its own diversion does not apply to it,
#                   and the other package's file is no conflict
#   preinst-local   a preinst that adds a local diversion of the package's
#                   own file: applied to that very unpack
#   diverted-upgrade  upgrade of the package whose file is diverted by
#                   the other: written at the divert-to path
#   diverter-upgrade  upgrade of the diverting package: written as is
#   third           a third package shipping the diverted path, diverted
#                   by neither: a conflict in both
#   onto            a package shipping another's divert-to path: refused
#                   in both (and with --force-overwrite-diverted, taken)
#   replaces        a package that Replaces another and diverts one of its
#                   files: that file keeps the other one from disappearing
#   removed         a package removed in favour of another (Conflicts and
#                   Replaces): its locally diverted file goes from the
#                   divert-to path
#   merged-usr      dash's /bin/sh diversion on a merged-/usr root: a
#                   package's /bin/sx symlink diverted by another package
TEST_NAME=divert
. "${TESTLIB:?}"
need_root
need_busybox
need_cmd dpkg-divert

# divert_root DIR [merged]: a root whose /bin/sh is busybox (shell_root)
# and which holds dpkg-divert, for the maintainer scripts.  With "merged",
# bin is a symlink to usr/bin.
divert_root() {
	local f
	rm -rf "$1"
	mkroot "$1"
	if [ "${2:-}" = merged ]; then
		mkdir -p "$1/usr/bin"
		ln -s usr/bin "$1/bin"
	else
		mkdir -p "$1/bin" "$1/usr/bin"
	fi
	cp -p "$BUSYBOX" "$1/bin/busybox"
	ln -s busybox "$1/bin/sh"
	cp -p /usr/bin/dpkg-divert "$1/usr/bin/dpkg-divert"
	for f in $(ldd /usr/bin/dpkg-divert | grep -o '/[^ ]*'); do
		cp --parents -L "$f" "$1/"
	done
	# the same times in both twins
	find "$1" ! -type d -exec touch -h -d @1000000000 {} +
}

# pkg NAME VERSION [PREINST] FILE...: a package shipping FILEs (their
# content names the package and version; a FILE "x->target" is a
# symlink), with PREINST as its preinst body if not empty and $CONTROL
# added to its control file.
pkg() {
	local name=$1 version=$2 preinst=$3 dir=$TESTDIR/s/$1-$2 f
	shift 3
	rm -rf "$dir"
	new_pkg "$dir" "$name" "$version"
	[ -z "${CONTROL:-}" ] || printf '%s\n' "$CONTROL" >>"$dir/DEBIAN/control"
	if [ -n "$preinst" ]; then
		printf '#!/bin/sh\nset -e\n%s\n' "$preinst" >"$dir/DEBIAN/preinst"
		chmod 0755 "$dir/DEBIAN/preinst"
	fi
	for f in "$@"; do
		mkdir -p "$dir/$(dirname "${f%%->*}")"
		case $f in
		*'->'*) ln -s "${f#*->}" "$dir/${f%%->*}" ;;
		*) echo "$name $version $f" >"$dir/$f" ;;
		esac
	done
	build_deb "$TESTDIR/$name-$version.deb" "$dir"
}

A=$TESTDIR/unpkg B=$TESTDIR/dpkg

# twins [merged]: fresh twin roots.
twins() {
	divert_root "$A" "$@"
	divert_root "$B" "$@"
}

# both CMD...: run CMD (with ROOT standing for the root) in both roots.
both() {
	local r
	for r in "$A" "$B"; do
		"${@//ROOT/$r}" >/dev/null
	done
}

# sort_owners: dpkg -S lines "pkg1, pkg2: /path" with the packages sorted.
sort_owners() {
	local line owners
	while IFS= read -r line; do
		case $line in
		"diversion by "* | dpkg-query:* | "(exit status"*)
			printf '%s\n' "$line"
			;;
		*)
			owners=$(printf '%s\n' "${line%%: *}" | tr -d ' ' | tr ',' '\n' |
				sort | paste -sd, | sed 's/,/, /g')
			printf '%s: %s\n' "$owners" "${line#*: }"
			;;
		esac
	done
}

# step WHAT PATHS PKGS ARGS...: the same dpkg command line through unpkg
# in A and dpkg in B, then everything compared: PATHS (space-separated)
# are asked with dpkg -S, PKGS with -s, -L and -V.
step() {
	local what=$1 paths=$2 pkgs=$3 urc=0 drc=0 r p
	shift 3
	section "$what: $*"
	"$UNPKG" --root="$A" --refuse-unsafe-io "$@" >"$A.out" 2>&1 || urc=$?
	dpkg --root="$B" --refuse-unsafe-io "$@" >"$B.out" 2>&1 || drc=$?
	show_file "$A.out" "unpkg output"
	if [ "$urc" -ne "$drc" ]; then
		show_file "$B.out" "dpkg output"
	fi
	assert_status "$drc" "$urc" "$what (dpkg exits $drc)"
	[ -z "${PRE_CMP:-}" ] || pre_cmp "$PRE_CMP"
	compare_trees "$A" "$B" "$what"
	compare_dbs "$A" "$B" "$what"
	# shellcheck disable=SC2086 # lists of words on purpose
	compare_queries "$A" "$B" "$what" $pkgs
	# The owners dpkg -S names come in the order it read their lists
	# (by the lists' places on the disk): sorted here.
	for r in "$A" "$B"; do
		{
			for p in $paths; do
				dpkg --root="$r" -S "$p" 2>&1 || echo "(exit status $?)"
			done | sort_owners
			dpkg-divert --root="$r" --list | sort
		} >"$r.S"
	done
	assert_same_file "$B.S" "$A.S" "$what: dpkg -S and dpkg-divert --list"
}

pkg hello 1.0 '' usr/bin/hello usr/bin/hello-old usr/share/hello/doc
pkg hello 2.0 '' usr/bin/hello usr/share/hello/doc
# a hard link to the diverted file: linked to it at the divert-to path
ln "$TESTDIR/s/hello-2.0/usr/bin/hello" "$TESTDIR/s/hello-2.0/usr/bin/hello-hl"
build_deb "$TESTDIR/hello-2.0.deb" "$TESTDIR/s/hello-2.0"
pkg hello 3.0 '' usr/bin/hello usr/share/hello/doc usr/share/hello/more
PREINST_WRAP='dpkg-divert --package wrap --divert /usr/bin/hello.real --rename --add /usr/bin/hello'
pkg wrap 1.0 "$PREINST_WRAP" usr/bin/hello usr/share/wrap/a
pkg wrap 2.0 "$PREINST_WRAP" usr/bin/hello usr/share/wrap/b
pkg self 1.0 'dpkg-divert --local --divert /usr/bin/self.local --no-rename --add /usr/bin/self' \
	usr/bin/self
pkg third 1.0 '' usr/bin/hello
pkg onto 1.0 '' usr/bin/hello.real
HELLO_PATHS='/usr/bin/hello /usr/bin/hello.real /usr/bin/hello.distrib /usr/bin/hello-old /usr/bin/hello-old.distrib'

# a file trigger's interest in the divert-to path
mkdir -p "$TESTDIR/s/watch/DEBIAN"
new_pkg "$TESTDIR/s/watch" watch 1.0
echo 'interest /usr/bin/hello.distrib' >"$TESTDIR/s/watch/DEBIAN/triggers"
printf '#!/bin/sh\necho "watch postinst $*" >>/log\n' >"$TESTDIR/s/watch/DEBIAN/postinst"
chmod 0755 "$TESTDIR/s/watch/DEBIAN/postinst"
build_deb "$TESTDIR/watch-1.0.deb" "$TESTDIR/s/watch"
# /log is written at run time: its time is not compared
export CMP_OWNED_MTIMES=1

twins
step install "$HELLO_PATHS" "hello watch" -i "$TESTDIR/hello-1.0.deb" \
	"$TESTDIR/watch-1.0.deb"
section "local diversions with --rename"
both dpkg-divert --root=ROOT --local --divert /usr/bin/hello.distrib --rename --add /usr/bin/hello
both dpkg-divert --root=ROOT --local --divert /usr/bin/hello-old.distrib --rename --add /usr/bin/hello-old
[ -f "$A/usr/bin/hello.distrib" ] && [ ! -e "$A/usr/bin/hello" ] ||
	fail "dpkg-divert --rename did not move the file (test outdated?)"
step local+obsolete "$HELLO_PATHS" "hello watch" -i "$TESTDIR/hello-2.0.deb"
[ -f "$A/usr/bin/hello.distrib" ] && [ ! -e "$A/usr/bin/hello" ] &&
	[ ! -e "$A/usr/bin/hello-old.distrib" ] &&
	[ "$A/usr/bin/hello-hl" -ef "$A/usr/bin/hello.distrib" ] ||
	check_fail "local: hello 2.0 not at the divert-to path, or hello-old.distrib left"
grep -q 'watch postinst triggered /usr/bin/hello.distrib' "$A/log" ||
	check_fail "local: the file trigger on the divert-to path did not fire"
step local-removed "$HELLO_PATHS" "hello watch" -r hello
[ ! -e "$A/usr/bin/hello.distrib" ] && [ ! -e "$A/usr/bin/hello-hl" ] ||
	check_fail "local-removed: hello's diverted file is left"

twins
both dpkg-divert --root=ROOT --local --divert /usr/bin/hello.distrib --no-rename --add /usr/bin/hello
step local-new "$HELLO_PATHS" hello -i "$TESTDIR/hello-1.0.deb"

pkg conf 1.0 '' etc/conf.cfg
echo /etc/conf.cfg >"$TESTDIR/s/conf-1.0/DEBIAN/conffiles"
build_deb "$TESTDIR/conf-1.0.deb" "$TESTDIR/s/conf-1.0"
twins
both dpkg-divert --root=ROOT --local --divert /etc/conf.cfg.local --no-rename --add /etc/conf.cfg
step conffile "/etc/conf.cfg /etc/conf.cfg.local" conf -i "$TESTDIR/conf-1.0.deb"
step conffile-removed "/etc/conf.cfg /etc/conf.cfg.local" conf -r conf
step conffile-purged "/etc/conf.cfg /etc/conf.cfg.local" conf -P conf
# (dpkg purges a conffile at its own name: the diverted one stays)

twins
step preinst-local "/usr/bin/self /usr/bin/self.local" self -i "$TESTDIR/self-1.0.deb"
[ -f "$A/usr/bin/self.local" ] ||
	check_fail "preinst-local: the diversion the preinst added was not applied"

twins
step install "$HELLO_PATHS" hello -i "$TESTDIR/hello-1.0.deb"
step preinst "$HELLO_PATHS" "hello wrap" -i "$TESTDIR/wrap-1.0.deb"
step diverted-upgrade "$HELLO_PATHS" "hello wrap" -i "$TESTDIR/hello-3.0.deb"
step diverter-upgrade "$HELLO_PATHS" "hello wrap" -i "$TESTDIR/wrap-2.0.deb"
# dpkg keeps a selection for a new package that failed, unpkg none
# (drop_selection in lib.sh): dropped from B first
pre_cmp() { drop_selection "$B" "$1"; }
PRE_CMP=third step third "$HELLO_PATHS" "hello wrap" -i "$TESTDIR/third-1.0.deb"
PRE_CMP=onto step onto "$HELLO_PATHS" "hello wrap" -i "$TESTDIR/onto-1.0.deb"
step onto-forced "$HELLO_PATHS" "hello wrap onto" -i --force-overwrite-diverted \
	"$TESTDIR/onto-1.0.deb"

# Replaces: big takes solo's /usr/share/solo/x; solo's /usr/bin/hello,
# which big diverts, is not the same file as big's: solo stays
pkg solo 1.0 '' usr/bin/hello usr/share/solo/x
CONTROL='Replaces: solo' pkg big 1.0 \
	'dpkg-divert --package big --divert /usr/bin/hello.solo --rename --add /usr/bin/hello' \
	usr/bin/hello usr/share/solo/x
twins
step install-solo "/usr/bin/hello /usr/share/solo/x" solo -i "$TESTDIR/solo-1.0.deb"
step replaces "/usr/bin/hello /usr/bin/hello.solo /usr/share/solo/x" "solo big" \
	-i "$TESTDIR/big-1.0.deb"
grep -q '^Package: solo$' "$A/var/lib/dpkg/status" ||
	check_fail "replaces: solo disappeared"

pkg oldtool 1.0 '' usr/bin/oldtool usr/share/oldtool/x
CONTROL=$'Conflicts: oldtool\nReplaces: oldtool' pkg newtool 1.0 '' usr/bin/newtool
twins
step install-oldtool "/usr/bin/oldtool /usr/bin/oldtool.distrib" oldtool \
	-i "$TESTDIR/oldtool-1.0.deb"
both dpkg-divert --root=ROOT --local --divert /usr/bin/oldtool.distrib --rename --add /usr/bin/oldtool
step removed "/usr/bin/oldtool /usr/bin/oldtool.distrib" "oldtool newtool" \
	-i "$TESTDIR/newtool-1.0.deb"
[ ! -e "$A/usr/bin/oldtool.distrib" ] ||
	check_fail "removed: the diverted file of the removed package is left"

# dash's diversion of /bin/sh, on a merged-/usr root (/bin/sx here: the
# scripts need the root's /bin/sh)
pkg shells 1.0 '' 'bin/sx->busybox'
pkg dashy 1.0 'dpkg-divert --package dashy --divert /bin/sx.distrib --no-rename --add /bin/sx' \
	'bin/sx->busybox'
twins merged
step merged-usr "/bin/sx /bin/sx.distrib /usr/bin/sx" "dashy shells" \
	-i "$TESTDIR/dashy-1.0.deb" "$TESTDIR/shells-1.0.deb"
[ -L "$A/usr/bin/sx.distrib" ] ||
	check_fail "merged-usr: shells' /bin/sx not at the divert-to path"

exit $((TEST_FAILURES > 0))

#!/bin/bash
# scripts.sh - maintainer scripts: which ones run, with which arguments, in
# which order, and the state a failure leaves, compared with stock dpkg.
#
# Package sp has all four scripts in 1.0 and 2.0; each appends "VERSION
# SCRIPT ARGS" to /log in the root and fails (exit 3) when the root holds
# /fail-SCRIPT-VERSION.  Each case installs 1.0 (or nothing) with each
# tool in twin roots, creates the failure markers, installs 2.0 and
# compares the exit status, the --status-fd lines, the script log in
# order, the tree, the whole database (info/, updates/, triggers/
# included) and dpkg's view of it.  Then a two-package run: the postinst
# of a package runs after that of the package it depends on, and the
# roots are compared the same way.  The roots hold a static busybox as
# /bin/sh: the scripts run chrooted, as dpkg runs them.
TEST_NAME=scripts
. "${TESTLIB:?}"
need_root
need_busybox

# script_pkg DIR NAME VERSION [DEPENDS]; with CONFFILE=1 in the
# environment, the package also ships the conffile /etc/NAME.conf, whose
# content changes with the version.
script_pkg() {
	local dir=$1 name=$2 version=$3 s
	new_pkg "$dir" "$name" "$version"
	[ -z "${4:-}" ] || echo "Depends: $4" >>"$dir/DEBIAN/control"
	mkdir -p "$dir/usr/share/$name"
	echo "$version" >"$dir/usr/share/$name/v$version"
	if [ "${CONFFILE:-0}" = 1 ]; then
		mkdir -p "$dir/etc"
		echo "$name configuration $version" >"$dir/etc/$name.conf"
		echo "/etc/$name.conf" >"$dir/DEBIAN/conffiles"
	fi
	for s in preinst postinst prerm postrm; do
		cat >"$dir/DEBIAN/$s" <<-EOF
		#!/bin/sh
		echo "$name $version $s \$*" >>/log
		[ ! -e /fail-$s-$version ] || exit 3
		EOF
		chmod 0755 "$dir/DEBIAN/$s"
	done
}
script_pkg "$TESTDIR/s1" sp 1.0
script_pkg "$TESTDIR/s2" sp 2.0
build_deb "$TESTDIR/sp1.deb" "$TESTDIR/s1"
build_deb "$TESTDIR/sp2.deb" "$TESTDIR/s2"
# the same package with a conffile (spc*.deb)
CONFFILE=1 script_pkg "$TESTDIR/c1" sp 1.0
CONFFILE=1 script_pkg "$TESTDIR/c2" sp 2.0
build_deb "$TESTDIR/spc1.deb" "$TESTDIR/c1"
build_deb "$TESTDIR/spc2.deb" "$TESTDIR/c2"

# fixed_times ROOT FILE...: the files the test puts in a root (the shell,
# failure markers) get the same time in both twins, so the tree comparison
# covers them too.
fixed_times() {
	local r=$1 f
	shift
	for f in "$@"; do
		touch -h -d @1000000000 "$r/$f"
	done
}

# compare_script_roots A B WHAT PKG...: the strict oracle after a run: the
# tree, the whole database (status, info/, updates/, triggers/) and dpkg's
# view of PKGs.  Left out of the tree: /log, written at run time (its
# content is compared line by line before).
compare_script_roots() {
	local a=$1 b=$2 what=$3
	shift 3
	compare_trees "$a" "$b" "$what" log
	compare_dbs "$a" "$b" "$what"
	compare_queries "$a" "$b" "$what" "$@"
}

# script_case FROM MARKER...: FROM is 1.0 (installed first) or "none".
# With STUB=PKG in the environment, PKG is a new package that fails and
# whose selection dpkg keeps (drop_selection); with DEB=spc, the package
# with a conffile.
script_case() {
	local from=$1 a=$TESTDIR/case/unpkg b=$TESTDIR/case/dpkg m r urc=0 drc=0
	local deb=$TESTDIR/${DEB:-sp}
	shift
	section "from $from, failing: ${*:-nothing}${DEB:+ ($DEB)}"
	shell_root "$a"
	shell_root "$b"
	if [ "$from" = 1.0 ]; then
		unpkg_in "$a" -i "${deb}1.deb" >/dev/null 2>&1 ||
			check_fail "unpkg -i sp 1.0 failed"
		dpkg_in "$b" -i "${deb}1.deb" >/dev/null 2>&1 ||
			hard_error "dpkg -i sp 1.0 failed"
	fi
	for r in "$a" "$b"; do
		for m in "$@"; do
			touch "$r/$m"
		done
		fixed_times "$r" bin/busybox bin/sh "$@"
	done
	unpkg_in "$a" --status-fd 3 -i "${deb}2.deb" 3>"$a.sf" >"$a.out" 2>&1 ||
		urc=$?
	dpkg_in "$b" --status-fd 3 --refuse-unsafe-io -i "${deb}2.deb" \
		3>"$b.sf" >"$b.out" 2>&1 || drc=$?
	assert_same_file "$b.sf" "$a.sf" "status-fd lines (dpkg vs unpkg)"
	show_file "$a.out" "unpkg output"
	assert_status "$drc" "$urc" "unpkg -i sp 2.0 (dpkg exits $drc)"
	assert_same_file "$b/log" "$a/log" "scripts run (dpkg vs unpkg)"
	[ -z "${STUB:-}" ] || drop_selection "$b" "$STUB"
	compare_script_roots "$a" "$b" "after sp 2.0" sp
}

script_case none
script_case none fail-postinst-2.0
script_case none fail-preinst-2.0 fail-postrm-2.0
script_case 1.0
script_case 1.0 fail-prerm-1.0
script_case 1.0 fail-prerm-1.0 fail-prerm-2.0
script_case 1.0 fail-prerm-1.0 fail-prerm-2.0 fail-postinst-1.0
script_case 1.0 fail-preinst-2.0
script_case 1.0 fail-preinst-2.0 fail-postrm-2.0
script_case 1.0 fail-preinst-2.0 fail-postinst-1.0
script_case 1.0 fail-postrm-1.0
script_case 1.0 fail-postrm-1.0 fail-postrm-2.0
script_case 1.0 fail-postrm-1.0 fail-postrm-2.0 fail-preinst-1.0
script_case 1.0 fail-postrm-1.0 fail-postrm-2.0 fail-postinst-1.0
script_case 1.0 fail-postinst-2.0
# A failed postinst leaves the package half-configured with its conffiles
# in place: dpkg records the hashes of the new version's conffiles.
DEB=spc script_case none fail-postinst-2.0
DEB=spc script_case 1.0 fail-postinst-2.0
DEB=spc script_case 1.0 fail-prerm-1.0

# A package new to the system whose preinst fails and whose postrm
# abort-install works: only dpkg keeps a selection (drop_selection).
STUB=sp script_case none fail-preinst-2.0
[ ! -e "$TESTDIR/case/unpkg/usr/share/sp" ] ||
	check_fail "files of sp unpacked after its preinst failed"
[ ! -s "$TESTDIR/case/unpkg/var/lib/dpkg/status" ] ||
	check_fail "the failed new package is in the status file"

# Two packages in one run: app depends on lib; the postinst of lib runs
# first whatever the order on the command line, as with dpkg.
section "configure order: app (Depends: lib) before lib on the command line"
script_pkg "$TESTDIR/app" app 1.0 lib
script_pkg "$TESTDIR/lib" lib 1.0
build_deb "$TESTDIR/app.deb" "$TESTDIR/app"
build_deb "$TESTDIR/lib.deb" "$TESTDIR/lib"
a=$TESTDIR/order/unpkg b=$TESTDIR/order/dpkg
shell_root "$b"
fixed_times "$b" bin/busybox bin/sh
dpkg_in "$b" --status-fd 3 -i "$TESTDIR/app.deb" "$TESTDIR/lib.deb" \
	3>"$b.sf" >"$b.out" 2>&1 || hard_error "dpkg -i app lib failed"
printf '%s\n' 'lib 1.0 postinst configure ' 'app 1.0 postinst configure ' >"$b.want"
grep postinst "$b/log" >"$b.post"
assert_same_file "$b.want" "$b.post" "dpkg: postinst order (test outdated?)"
for strategy in dpkg batch; do
	shell_root "$a"
	fixed_times "$a" bin/busybox bin/sh
	unpkg_in "$a" --sync=$strategy --status-fd 3 -i "$TESTDIR/app.deb" \
		"$TESTDIR/lib.deb" 3>"$a.sf" >"$a.out" 2>&1 ||
		check_fail "unpkg --sync=$strategy -i app lib failed"
	assert_same_file "$b/log" "$a/log" "--sync=$strategy: scripts run (dpkg vs unpkg)"
	# The status lines: each package's in dpkg's order; the two packages'
	# lines interleave as the run's phases do (doc/design.md, "Status
	# and log lines"), so the whole is compared sorted.
	for p in app lib; do
		grep -E "[ :]$p(:|\$)" "$a.sf" >"$a.sf.$p" || true
		grep -E "[ :]$p(:|\$)" "$b.sf" >"$b.sf.$p" || true
		assert_same_file "$b.sf.$p" "$a.sf.$p" "--sync=$strategy: $p's status lines"
	done
	sort "$a.sf" >"$a.sf.sorted"
	sort "$b.sf" >"$b.sf.sorted"
	assert_same_file "$b.sf.sorted" "$a.sf.sorted" "--sync=$strategy: the status lines"
	compare_script_roots "$a" "$b" "--sync=$strategy -i app lib" app lib
done

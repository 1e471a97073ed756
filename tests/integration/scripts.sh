#!/bin/bash
# scripts.sh - maintainer scripts: which ones run, with which arguments, in
# which order, and the state a failure leaves, compared with stock dpkg.
#
# Package sp has all four scripts in 1.0 and 2.0; each appends "VERSION
# SCRIPT ARGS" to /log in the root and fails (exit 3) when the root holds
# /fail-SCRIPT-VERSION.  Each case installs 1.0 (or nothing) with each
# tool in twin roots, creates the failure markers, installs 2.0 and
# compares the exit status, the script log, the status file and the tree.
# Then a two-package run: the postinst of a package runs after that of
# the package it depends on.  The roots hold a static busybox as /bin/sh:
# the scripts run chrooted, as dpkg runs them.
TEST_NAME=scripts
. "${TESTLIB:?}"
need_root
need_busybox

# script_pkg DIR NAME VERSION [DEPENDS]
script_pkg() {
	local dir=$1 name=$2 version=$3 s
	new_pkg "$dir" "$name" "$version"
	[ -z "${4:-}" ] || echo "Depends: $4" >>"$dir/DEBIAN/control"
	mkdir -p "$dir/usr/share/$name"
	echo "$version" >"$dir/usr/share/$name/v$version"
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

# statuses ROOT: the status file without blank lines.
statuses() {
	grep -v '^$' "$1/var/lib/dpkg/status" || true
}

# script_case FROM MARKER...: FROM is 1.0 (installed first) or "none".
script_case() {
	local from=$1 a=$TESTDIR/case/unpkg b=$TESTDIR/case/dpkg m urc=0 drc=0
	shift
	section "from $from, failing: ${*:-nothing}"
	shell_root "$a"
	shell_root "$b"
	if [ "$from" = 1.0 ]; then
		unpkg_in "$a" -i "$TESTDIR/sp1.deb" >/dev/null 2>&1 ||
			check_fail "unpkg -i sp 1.0 failed"
		dpkg_in "$b" -i "$TESTDIR/sp1.deb" >/dev/null 2>&1 ||
			hard_error "dpkg -i sp 1.0 failed"
	fi
	for m in "$@"; do
		touch "$a/$m" "$b/$m"
	done
	unpkg_in "$a" -i "$TESTDIR/sp2.deb" >"$a.out" 2>&1 || urc=$?
	dpkg_in "$b" --refuse-unsafe-io -i "$TESTDIR/sp2.deb" >"$b.out" 2>&1 ||
		drc=$?
	show_file "$a.out" "unpkg output"
	assert_status "$drc" "$urc" "unpkg -i sp 2.0 (dpkg exits $drc)"
	assert_same_file "$b/log" "$a/log" "scripts run (dpkg vs unpkg)"
	statuses "$a" >"$a.status"
	statuses "$b" >"$b.status"
	assert_same_file "$b.status" "$a.status" "status file (dpkg vs unpkg)"
	compare_trees "$a" "$b" "after sp 2.0" var/lib/dpkg/triggers bin/busybox bin/sh log "$@"
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

# A package new to the system whose preinst fails and whose postrm
# abort-install works: dpkg keeps an "install ok not-installed" selection;
# unpkg forgets the package (an error before the rename pass changes
# nothing, DESIGN.md section 3).  Only the status file differs.
section "from none, failing: fail-preinst-2.0 (status differs, see above)"
a=$TESTDIR/case/unpkg
shell_root "$a"
touch "$a/fail-preinst-2.0"
rc=0
unpkg_in "$a" -i "$TESTDIR/sp2.deb" >"$a.out" 2>&1 || rc=$?
assert_status 1 "$rc" "unpkg -i sp 2.0 with a failing preinst"
printf '%s\n' 'sp 2.0 preinst install' 'sp 2.0 postrm abort-install' >"$a.want"
assert_same_file "$a.want" "$a/log" "scripts run"
[ ! -e "$a/usr/share/sp" ] || check_fail "files of sp unpacked after its preinst failed"
[ ! -s "$a/var/lib/dpkg/status" ] || check_fail "the failed new package is in the status file"

# Two packages in one run: app depends on lib; the postinst of lib runs
# first whatever the order on the command line, as with dpkg.
section "configure order: app (Depends: lib) before lib on the command line"
script_pkg "$TESTDIR/app" app 1.0 lib
script_pkg "$TESTDIR/lib" lib 1.0
build_deb "$TESTDIR/app.deb" "$TESTDIR/app"
build_deb "$TESTDIR/lib.deb" "$TESTDIR/lib"
a=$TESTDIR/order/unpkg b=$TESTDIR/order/dpkg
shell_root "$a"
shell_root "$b"
for strategy in dpkg batch; do
	shell_root "$a"
	unpkg_in "$a" --sync=$strategy -i "$TESTDIR/app.deb" "$TESTDIR/lib.deb" \
		>"$a.out" 2>&1 || check_fail "unpkg --sync=$strategy -i app lib failed"
	grep postinst "$a/log" >"$a.post"
	printf '%s\n' 'lib 1.0 postinst configure ' 'app 1.0 postinst configure ' >"$a.want"
	assert_same_file "$a.want" "$a.post" "--sync=$strategy: postinst order"
done
dpkg_in "$b" -i "$TESTDIR/app.deb" "$TESTDIR/lib.deb" >"$b.out" 2>&1 ||
	hard_error "dpkg -i app lib failed"
grep postinst "$b/log" >"$b.post"
assert_same_file "$b.post" "$a.post" "postinst order (dpkg vs unpkg)"


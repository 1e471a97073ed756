#!/bin/bash
# relations.sh - what dpkg checks about a package before it unpacks it:
# Conflicts and Breaks, Replaces (files moving between packages), the
# architecture, and one package given twice.  Each case prepares twin
# roots (unpkg installs the starting packages in one, dpkg in the other),
# installs the package under test with each tool and compares exit
# statuses, trees, databases and dpkg's view of both
# (compare_roots_with_dpkg).
TEST_NAME=relations
. "${TESTLIB:?}"

# rel_pkg NAME VERSION FIELDS FILE...: build TESTDIR/NAME_VERSION.deb
# with the extra control FIELDS ("Conflicts: x" lines) and FILEs.
rel_pkg() {
	local name=$1 version=$2 fields=$3 dir f
	shift 3
	dir=$TESTDIR/src/$name-$version
	new_pkg "$dir" "$name" "$version"
	[ -z "$fields" ] || printf '%s\n' "$fields" >>"$dir/DEBIAN/control"
	for f in "$@"; do
		mkdir -p "$dir/${f%/*}"
		echo "$name $version" >"$dir/$f"
	done
	build_deb "$TESTDIR/${name}_$version.deb" "$dir"
}
rel_pkg base 1.0 '' usr/share/base/a usr/share/base/b
rel_pkg base 2.0 '' usr/share/base/a
rel_pkg prov 1.0 'Provides: virt' usr/share/prov/p
rel_pkg conf 1.0 'Conflicts: base' usr/share/conf/c
rel_pkg confv 1.0 'Conflicts: base (>= 2)' usr/share/confv/c
rel_pkg confvirt 1.0 'Conflicts: virt' usr/share/confvirt/c
rel_pkg brk 1.0 'Breaks: base (<< 2)' usr/share/brk/c
rel_pkg hater 1.0 'Conflicts: victim' usr/share/hater/h
rel_pkg victim 1.0 '' usr/share/victim/v
rel_pkg repl 1.0 'Replaces: base (<< 2)' usr/share/base/a usr/share/repl/r
rel_pkg norepl 1.0 '' usr/share/base/a
rel_pkg whole 1.0 'Replaces: base' usr/share/base/a usr/share/base/b

# rel_case NAME "STARTING DEBS" ARGS...: twin roots holding the starting
# packages, then the same run of both tools.
# rel_roots NAME "STARTING DEBS": the twin roots of case NAME, in
# TESTDIR/case-NAME/{unpkg,dpkg}, each tool installing the starting
# packages in its own.
rel_roots() {
	local name=$1 start=$2 dir=$TESTDIR/case-$1 deb
	section "$name"
	mkroot "$dir/unpkg"
	mkroot "$dir/dpkg"
	for deb in $start; do
		unpkg_in "$dir/unpkg" -i "$TESTDIR/$deb.deb" >/dev/null 2>&1 ||
			check_fail "$name: unpkg -i $deb (setup) failed"
		dpkg_in "$dir/dpkg" -i "$TESTDIR/$deb.deb" >/dev/null 2>&1 ||
			hard_error "$name: dpkg -i $deb (setup) failed"
	done
}

rel_case() {
	local name=$1 dir=$TESTDIR/case-$1
	rel_roots "$1" "$2"
	shift 2
	compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" "$@"
}

# rel_fail NAME "STARTING DEBS" PKG ARGS...: a run that must fail with
# both tools.  dpkg keeps an "install ok not-installed" selection for a new
# package it refused; unpkg changes nothing (an error before the rename
# pass leaves the database as it was, DESIGN.md section 3): that stanza is
# taken out of dpkg's status file before the roots are compared.
rel_fail() {
	local name=$1 pkg=$3 dir=$TESTDIR/case-$1 urc=0 drc=0
	rel_roots "$1" "$2"
	shift 3
	unpkg_in "$dir/unpkg" "$@" >"$dir/unpkg.out" 2>&1 || urc=$?
	dpkg_in "$dir/dpkg" "$@" >"$dir/dpkg.out" 2>&1 || drc=$?
	show_file "$dir/unpkg.out" "unpkg output"
	assert_status "$drc" "$urc" "$name: unpkg $* (dpkg exits $drc)"
	[ "$urc" -ne 0 ] || check_fail "$name: unpkg $* succeeded"
	grep -q "^Package: $pkg\$" "$dir/dpkg/var/lib/dpkg/status" ||
		check_fail "$name: dpkg kept no selection for $pkg (test outdated?)"
	awk -v RS= -v ORS='\n\n' -v p="Package: $pkg" \
		'!(index($0, p "\n") == 1 && /\nStatus: install ok not-installed\n/)' \
		"$dir/dpkg/var/lib/dpkg/status" >"$dir/status"
	cat "$dir/status" >"$dir/dpkg/var/lib/dpkg/status"
	compare_trees "$dir/unpkg" "$dir/dpkg" "$name"
	compare_dbs "$dir/unpkg" "$dir/dpkg" "$name"
}

rel_fail conflicts base_1.0 conf -i "$TESTDIR/conf_1.0.deb"
assert_grep 'conflicting packages - not installing conf' \
	"$TESTDIR/case-conflicts/unpkg.out" "conflicts: dpkg's words"
rel_case conflicts-unmet-version base_1.0 -i "$TESTDIR/confv_1.0.deb"
rel_fail conflicts-virtual prov_1.0 confvirt -i "$TESTDIR/confvirt_1.0.deb"
rel_fail conflicts-reverse hater_1.0 victim -i "$TESTDIR/victim_1.0.deb"
rel_case conflicts-forced base_1.0 --force-conflicts -i "$TESTDIR/conf_1.0.deb"
rel_fail breaks base_1.0 brk -i "$TESTDIR/brk_1.0.deb"
assert_grep 'installing brk would break base, and' \
	"$TESTDIR/case-breaks/unpkg.out" "breaks: dpkg's words"
rel_case breaks-forced base_1.0 --force-breaks -i "$TESTDIR/brk_1.0.deb"
rel_case replaces base_1.0 -i "$TESTDIR/repl_1.0.deb"
rel_fail overwrite-refused base_1.0 norepl -i "$TESTDIR/norepl_1.0.deb"
rel_case overwrite-forced base_1.0 --force-overwrite -i "$TESTDIR/norepl_1.0.deb"
rel_case disappears base_1.0 -i "$TESTDIR/whole_1.0.deb"

# One package given twice: dpkg unpacks one over the other, the later one
# stays.
rel_case twice '' -i "$TESTDIR/base_1.0.deb" "$TESTDIR/base_2.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "twice: unpkg failed"

# The architecture: a foreign one is refused unless the database lists
# it (dpkg --add-architecture) or --force-architecture.
native=$(dpkg --print-architecture)
foreign=arm64
[ "$native" != arm64 ] || foreign=amd64
dir=$TESTDIR/src/alien
new_pkg "$dir" alien 1.0 "$foreign"
build_deb "$TESTDIR/alien_1.0.deb" "$dir"
section "foreign architecture"
r=$TESTDIR/case-foreign
mkroot "$r"
rc=0
unpkg_in "$r" -i "$TESTDIR/alien_1.0.deb" >"$r.out" 2>&1 || rc=$?
assert_status 1 "$rc" "foreign architecture refused"
assert_grep "package architecture \\($foreign\\) does not match system \\($native\\)" \
	"$r.out" "foreign architecture: dpkg's words"
rel_case foreign-forced '' --force-architecture -i "$TESTDIR/alien_1.0.deb"
rel_roots foreign-listed ''
for r in unpkg dpkg; do
	dpkg --root="$TESTDIR/case-foreign-listed/$r" --add-architecture "$foreign"
done
compare_roots_with_dpkg "$TESTDIR/case-foreign-listed/unpkg" \
	"$TESTDIR/case-foreign-listed/dpkg" -i "$TESTDIR/alien_1.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "foreign-listed: unpkg refused an added architecture"


# --abort-after: after that many failed packages, the rest is not
# processed, as by dpkg.
section "--abort-after=1"
r=$TESTDIR/case-abort
mkroot "$r"
rc=0
unpkg_in "$r" --abort-after=1 -i "$TESTDIR/alien_1.0.deb" "$TESTDIR/base_1.0.deb" \
	>"$r.out" 2>&1 || rc=$?
assert_status 1 "$rc" "--abort-after=1"
assert_grep 'too many errors, stopping' "$r.out" "dpkg's words"
! grep -q '^Package: base$' "$r/var/lib/dpkg/status" ||
	check_fail "--abort-after=1: base was installed after the first error"
unpkg_in "$r" -i "$TESTDIR/alien_1.0.deb" "$TESTDIR/base_1.0.deb" >/dev/null 2>&1 || true
grep -q '^Package: base$' "$r/var/lib/dpkg/status" ||
	check_fail "without --abort-after: base was not installed"

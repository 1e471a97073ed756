#!/bin/bash
# relations.sh - what dpkg checks about a package before it unpacks it:
# Conflicts and Breaks (--auto-deconfigure included), Replaces (files
# moving between packages, installed or of the same run), the
# architecture, and one package given twice.  Each case prepares twin
# roots (unpkg installs the starting packages in one, dpkg in the other),
# installs the package under test with each tool and compares exit
# statuses, trees, databases and dpkg's view of both
# (compare_roots_with_dpkg).
TEST_NAME=relations
. "${TESTLIB:?}"

# rel_src NAME VERSION FIELDS FILE...: the package's tree in
# TESTDIR/src/NAME-VERSION, with the extra control FIELDS ("Conflicts: x"
# lines) and FILEs.
rel_src() {
	local name=$1 version=$2 fields=$3 dir=$TESTDIR/src/$1-$2 f
	shift 3
	new_pkg "$dir" "$name" "$version"
	[ -z "$fields" ] || printf '%s\n' "$fields" >>"$dir/DEBIAN/control"
	for f in "$@"; do
		mkdir -p "$dir/${f%/*}"
		echo "$name $version" >"$dir/$f"
	done
}

# rel_pkg NAME VERSION FIELDS FILE...: that tree built as
# TESTDIR/NAME_VERSION.deb.
rel_pkg() {
	rel_src "$@"
	build_deb "$TESTDIR/${1}_$2.deb" "$TESTDIR/src/$1-$2"
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
rel_pkg ess 1.0 'Essential: yes' usr/share/ess/e
rel_pkg bess 1.0 'Breaks: ess' usr/share/bess/b
# files passing between packages of one run
rel_pkg sa 1.0 '' usr/share/shared/f usr/share/sa/own
rel_pkg sb 1.0 'Replaces: sa' usr/share/shared/f usr/share/sb/own
rel_pkg sbv 1.0 'Replaces: sa (<< 1.0)' usr/share/shared/f
rel_pkg sw 1.0 '' usr/share/shared/g
rel_pkg swb 1.0 'Replaces: sw' usr/share/shared/g usr/share/swb/own
# Conflicts with Replaces: the installed package is removed
rel_pkg rmc 1.0 '' usr/share/rmc/own usr/share/rmc/sub/x usr/share/shared/f
rel_pkg rma 1.0 $'Conflicts: rmc\nReplaces: rmc' usr/share/rma/own usr/share/shared/f
rel_pkg rmdep 1.0 'Depends: rmc' usr/share/rmdep/own
# interested in rmc's files: their removal in favour of rma activates it
rel_src rmwatch 1.0 '' usr/share/rmwatch/own
echo "interest /usr/share/rmc" >"$TESTDIR/src/rmwatch-1.0/DEBIAN/triggers"
build_deb "$TESTDIR/rmwatch_1.0.deb" "$TESTDIR/src/rmwatch-1.0"
rel_pkg rmalt 1.0 'Depends: rmc | base' usr/share/rmalt/own
rel_pkg rmboth 1.0 $'Depends: rmc\nPre-Depends: rmc (>= 0.1), rmc (<< 9)' usr/share/rmboth/own
rel_pkg rmrev 1.0 'Conflicts: rmb' usr/share/rmrev/own
rel_pkg rmb 1.0 'Replaces: rmrev' usr/share/rmb/own

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

# compare_db_views A B WHAT: the databases of roots A and B, and dpkg's
# view of every package either lists (status_queries).
compare_db_views() {
	compare_dbs "$1" "$2" "$3"
	status_queries "$1" "$2" "$3"
}

# status_queries A B WHAT: compare_queries for every package the status
# file of A or B lists.
status_queries() {
	local -a pkgs
	mapfile -t pkgs < <(sed -n 's/^Package: //p' "$1/var/lib/dpkg/status" \
		"$2/var/lib/dpkg/status" | sort -u)
	compare_queries "$1" "$2" "$3" "${pkgs[@]}"
}

# rel_fail NAME "STARTING DEBS" PKG ARGS...: a run that must fail with
# both tools (fail_both: dpkg's selection of the refused PKG dropped),
# then dpkg's view of every package compared too.
rel_fail() {
	local name=$1 pkg=$3 dir=$TESTDIR/case-$1
	rel_roots "$1" "$2"
	shift 3
	fail_both "$dir/unpkg" "$dir/dpkg" "$name" "$pkg" "$@"
	status_queries "$dir/unpkg" "$dir/dpkg" "$name"
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
# dpkg 1.21 deconfigures an essential package too; with -i its
# configuration then fails (no "Version of" line: the Breaks has none).
rel_case deconf-essential ess_1.0 --auto-deconfigure -i "$TESTDIR/bess_1.0.deb"
assert_grep '^ +bess \(1\.0\) breaks ess and is installed\.$' \
	"$TESTDIR/case-deconf-essential/unpkg.unpkg.err" "deconf-essential: dpkg's words"
! grep -q 'Version of' "$TESTDIR/case-deconf-essential/unpkg.unpkg.err" ||
	check_fail "deconf-essential: a version line for an unversioned Breaks"
rel_case replaces base_1.0 -i "$TESTDIR/repl_1.0.deb"
rel_fail overwrite-refused base_1.0 norepl -i "$TESTDIR/norepl_1.0.deb"
rel_case overwrite-forced base_1.0 --force-overwrite -i "$TESTDIR/norepl_1.0.deb"
rel_case disappears base_1.0 -i "$TESTDIR/whole_1.0.deb"
# Conflicts with Replaces: dpkg removes the installed package after the new
# one is unpacked (its files but those the new one took), unless a package
# that stays depends on it.
rel_case conflicts-replaces rmc_1.0 -i "$TESTDIR/rma_1.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "conflicts-replaces: unpkg failed"
assert_grep '^Removing rmc \(1\.0\), to allow configuration of rma \(1\.0\) \.\.\.$' \
	"$TESTDIR/case-conflicts-replaces/unpkg.unpkg.out" "conflicts-replaces: dpkg's words"
! grep -q '^Package: rmc$' "$TESTDIR/case-conflicts-replaces/unpkg/var/lib/dpkg/status" ||
	check_fail "conflicts-replaces: rmc still in the database"
rel_case conflicts-replaces-unpack rmc_1.0 --unpack "$TESTDIR/rma_1.0.deb"
# the removal activates the file triggers of rmc's paths, as dpkg's does:
# rmwatch waits with the trigger pending (--no-triggers)
rel_case conflicts-replaces-trigger "rmwatch_1.0 rmc_1.0" --no-triggers --unpack "$TESTDIR/rma_1.0.deb"
assert_grep '^Triggers-Pending: /usr/share/rmc$' \
	"$TESTDIR/case-conflicts-replaces-trigger/dpkg/var/lib/dpkg/status" \
	"conflicts-replaces-trigger: dpkg's record (test outdated?)"
rel_case conflicts-replaces-reverse rmrev_1.0 -i "$TESTDIR/rmb_1.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "conflicts-replaces-reverse: unpkg failed"
rel_case conflicts-replaces-alt "base_1.0 rmc_1.0 rmalt_1.0" -i "$TESTDIR/rma_1.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "conflicts-replaces-alt: unpkg failed"
# a directory holding a file of no package stays, listed
rel_roots conflicts-replaces-dir rmc_1.0
for r in unpkg dpkg; do
	f=$TESTDIR/case-conflicts-replaces-dir/$r/usr/share/rmc/sub/local
	echo local >"$f"
	touch -d @1100000000 "$f"	# the same in both trees
done
compare_roots_with_dpkg "$TESTDIR/case-conflicts-replaces-dir/unpkg" \
	"$TESTDIR/case-conflicts-replaces-dir/dpkg" -i "$TESTDIR/rma_1.0.deb"
rel_fail conflicts-replaces-depended "rmc_1.0 rmdep_1.0" rma -i "$TESTDIR/rma_1.0.deb"
assert_grep 'no, cannot proceed with removal of rmc \(--auto-deconfigure will help\):' \
	"$TESTDIR/case-conflicts-replaces-depended/unpkg.out" "conflicts-replaces-depended: dpkg's words"
assert_grep 'conflicting packages - not installing rma' \
	"$TESTDIR/case-conflicts-replaces-depended/unpkg.out" "conflicts-replaces-depended: refused"
# Depended on by several: dpkg names the first of its list of the packages
# depending on rmc, which it builds backwards as it reads the status file:
# the last package, its Pre-Depends before its Depends, the last relation.
for c in "rmc_1.0 rmboth_1.0" "rmc_1.0 rmboth_1.0 rmdep_1.0"; do
	name=$(echo "conflicts-replaces-several ${c//_1.0/}" | tr " " -)
	rel_fail "$name" "$c" rma -i "$TESTDIR/rma_1.0.deb"
	for r in unpkg dpkg; do
		sed -n 's/^[a-z]*: no, cannot proceed/no, cannot proceed/
			/no, cannot proceed with removal/,/is to be removed/p' \
			"$TESTDIR/case-$name/$r.out" >"$TESTDIR/case-$name/$r.why"
	done
	assert_grep 'is to be removed' "$TESTDIR/case-$name/dpkg.why" "$name: dpkg's reason"
	assert_same_file "$TESTDIR/case-$name/dpkg.why" "$TESTDIR/case-$name/unpkg.why" \
		"$name: the dependency named"
done
# A package left with a directory the new one does not ship does not
# disappear (dpkg looks at the new package's paths, not at the types).
dir=$TESTDIR/src/keepdir-1.0
new_pkg "$dir" keepdir 1.0
mkdir -p "$dir/usr/share/base" "$dir/usr/share/keepdir-only"
echo keepdir >"$dir/usr/share/base/a"
build_deb "$TESTDIR/keepdir_1.0.deb" "$dir"
rel_pkg keepdirb 1.0 'Replaces: keepdir' usr/share/base/a
rel_case kept-by-directory keepdir_1.0 -i "$TESTDIR/keepdirb_1.0.deb"
grep -q '^Package: keepdir$' "$TESTDIR/case-kept-by-directory/unpkg/var/lib/dpkg/status" ||
	check_fail "kept-by-directory: keepdir disappeared"
# The installed package replaces the new one: it keeps the file, which
# the new one does not list.
rel_case replaced-by sb_1.0 -i "$TESTDIR/sa_1.0.deb"
[ "$CMP_UNPKG_RC" = 0 ] || check_fail "replaced-by: unpkg failed"
assert_grep '^Replaced by files in installed package sb \(1\.0\) \.\.\.$' \
	"$TESTDIR/case-replaced-by/unpkg.unpkg.out" "replaced-by: dpkg's words"

# Replaces between packages of the same run, as dpkg unpacks them one
# after the other: with each package committed on its own (--sync=dpkg)
# and with the run committed as one (batch).
real_unpkg=$UNPKG
for sync in dpkg batch; do
	printf '#!/bin/sh\nexec "%s" --sync=%s "$@"\n' "$real_unpkg" "$sync" \
		>"$TESTDIR/unpkg-$sync"
	chmod 0755 "$TESTDIR/unpkg-$sync"
	UNPKG=$TESTDIR/unpkg-$sync
	rel_case "run-replaces-$sync" '' -i "$TESTDIR/sa_1.0.deb" "$TESTDIR/sb_1.0.deb"
	[ "$CMP_UNPKG_RC" = 0 ] || check_fail "run-replaces-$sync: unpkg failed"
	assert_grep '^Replacing files in old package sa \(1\.0\) \.\.\.$' \
		"$TESTDIR/case-run-replaces-$sync/unpkg.unpkg.out" \
		"run-replaces-$sync: dpkg's words"
	rel_case "run-replaces-unpack-$sync" '' --unpack "$TESTDIR/sa_1.0.deb" "$TESTDIR/sb_1.0.deb"
	rel_case "run-replaced-by-$sync" '' -i "$TESTDIR/sb_1.0.deb" "$TESTDIR/sa_1.0.deb"
	[ "$CMP_UNPKG_RC" = 0 ] || check_fail "run-replaced-by-$sync: unpkg failed"
	# sw keeps nothing but directories: it disappears, not configured
	rel_case "run-disappears-$sync" base_1.0 -i "$TESTDIR/sw_1.0.deb" \
		"$TESTDIR/base_2.0.deb" "$TESTDIR/swb_1.0.deb"
	[ "$CMP_UNPKG_RC" = 0 ] || check_fail "run-disappears-$sync: unpkg failed"
	rel_case "run-kept-$sync" '' -i "$TESTDIR/swb_1.0.deb" "$TESTDIR/sw_1.0.deb"
	# Replaces with a version the other package does not have
	rel_fail "run-version-$sync" '' sbv -i "$TESTDIR/sa_1.0.deb" "$TESTDIR/sbv_1.0.deb"
	assert_grep "trying to overwrite '/usr/share/shared/f', which is also in package sa 1\.0" \
		"$TESTDIR/case-run-version-$sync/unpkg.out" "run-version-$sync: dpkg's words"
	rel_fail "run-not-replaced-$sync" '' sa -i "$TESTDIR/sbv_1.0.deb" "$TESTDIR/sa_1.0.deb"
	rel_case "run-overwrite-forced-$sync" '' --force-overwrite -i \
		"$TESTDIR/base_1.0.deb" "$TESTDIR/norepl_1.0.deb"
	[ "$CMP_UNPKG_RC" = 0 ] || check_fail "run-overwrite-forced-$sync: unpkg failed"
done
UNPKG=$real_unpkg

# A Replaces the other package's version does not meet shares no file:
# the batched run stays one commit (three syncfs: the mark's, the
# barrier's, the renames').
section "run-replaces-unmet: one commit"
rel_pkg sc 1.0 'Replaces: sa (<< 1.0)' usr/share/sc/own
r=$TESTDIR/case-run-replaces-unmet
mkroot "$r"
unpkg_in "$r" --sync=syncfs --stats -i "$TESTDIR/sa_1.0.deb" "$TESTDIR/sc_1.0.deb" \
	>"$r.out" 2>&1 || { show_file "$r.out"; check_fail "run-replaces-unmet: unpkg failed"; }
assert_grep '^stats: calls .* syncfs=4 ' "$r.out" "run-replaces-unmet: one commit and configure"

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

# --auto-deconfigure: installing a package that Breaks a configured one.
# Without the option dpkg refuses; with it, the broken package is
# half-configured and its prerm called ("deconfigure in-favour P V")
# before the new package is unpacked; with -i it is then queued for
# configuration, which the new package prevents.  If the new package
# fails, "postinst abort-deconfigure" puts it back.  A Breaks on an
# unpacked package stops nothing at unpack; the Breaks of an installed
# package against a new one only counts when the new one is configured.
# The packages log their scripts to /log in the root; the scripts run
# chrooted, so these roots hold a static busybox as /bin/sh.
if ! (need_busybox) 2>/dev/null; then	# (a subshell: its skip ends only it)
	skip_part "maintainer scripts with Breaks and Conflicts" \
		"no static busybox (package busybox-static)"
	exit 0	# the end of the test; the failures so far still count
fi
need_busybox

# dc_pkg NAME VERSION FIELDS FILE...: rel_pkg with the four scripts, each
# logging "NAME VERSION SCRIPT ARGS" and failing when /fail-NAME-SCRIPT
# exists in the root.
dc_pkg() {
	local name=$1 version=$2 dir=$TESTDIR/src/$1-$2 s
	rel_src "$@"
	for s in preinst postinst prerm postrm; do
		cat >"$dir/DEBIAN/$s" <<-EOS
		#!/bin/sh
		echo "$name $version $s \$*" >>/log
		[ ! -e /fail-$name-$s ] || exit 3
		EOS
		chmod 0755 "$dir/DEBIAN/$s"
	done
	build_deb "$TESTDIR/${name}_$version.deb" "$dir"
}
dc_pkg dv 1.0 '' usr/share/dv/v
dc_pkg dv 2.0 '' usr/share/dv/v
dc_pkg db 1.0 'Breaks: dv (<< 2)' usr/share/db/b
dc_pkg drb 1.0 'Breaks: dv (<< 2)' usr/share/drb/b

# prerms_first LOG: the script log as unpkg orders it for a run of more
# than one package: unpkg runs the old prerms of every package of the run
# before the run's half-installed mark, so before the first preinst
# (doc/design.md, "Maintainer scripts", step 1); dpkg runs each package's
# just before its preinst.  The prerm lines between the first preinst and
# the first postrm or postinst move before that preinst, in their order;
# nothing else moves.
prerms_first() {
	awk '{ line[NR] = $0 }
	     first == 0 && $3 == "preinst" { first = NR }
	     first && end == 0 && ($3 == "postrm" || $3 == "postinst") { end = NR }
	     END {
		if (first == 0) first = end = NR + 1
		if (end == 0) end = NR + 1
		for (i = 1; i < first; i++) print line[i]
		for (i = first; i < end; i++) if (split(line[i], f) && f[3] == "prerm") print line[i]
		for (i = first; i < end; i++) if (split(line[i], f) && f[3] != "prerm") print line[i]
		for (i = end; i <= NR; i++) print line[i]
	     }' "$1" >"$1.tmp"
	mv "$1.tmp" "$1"
}

# dc_case NAME "SETUP" STUB "MARKERS" ARGS...: twin shell roots; SETUP is
# a list of "MODE:DEB" (-i:dv_1.0); MARKERS are created in both roots
# before the run of ARGS.  Compares exit statuses, script logs in order
# (dpkg's through prerms_first when DC_PRERMS_FIRST=1, for a run of
# more than one package), trees and databases; STUB names a new package
# that failed, whose "not-installed" selection dpkg keeps (see rel_fail).
dc_case() {
	local name=$1 setup=$2 stub=$3 markers=$4 dir=$TESTDIR/case-$1 s m t
	local urc=0 drc=0
	shift 4
	section "$name"
	shell_root "$dir/unpkg"
	shell_root "$dir/dpkg"
	for s in $setup; do
		unpkg_in "$dir/unpkg" "${s%%:*}" "$TESTDIR/${s#*:}.deb" >/dev/null 2>&1 ||
			check_fail "$name: unpkg $s (setup) failed"
		dpkg_in "$dir/dpkg" "${s%%:*}" "$TESTDIR/${s#*:}.deb" >/dev/null 2>&1 ||
			hard_error "$name: dpkg $s (setup) failed"
	done
	for t in unpkg dpkg; do
		: >"$dir/$t/log"
		# the same time in both trees: the tree comparison covers them
		for m in $markers; do
			touch -d @1000000000 "$dir/$t/$m"
		done
		touch -h -d @1000000000 "$dir/$t/bin/busybox" "$dir/$t/bin/sh"
	done
	unpkg_in "$dir/unpkg" "$@" >"$dir/unpkg.out" 2>&1 || urc=$?
	dpkg_in "$dir/dpkg" "$@" >"$dir/dpkg.out" 2>&1 || drc=$?
	show_file "$dir/unpkg.out" "unpkg output"
	assert_status "$drc" "$urc" "$name: unpkg $* (dpkg exits $drc)"
	[ "${DC_PRERMS_FIRST:-0}" = 0 ] || prerms_first "$dir/dpkg/log"
	assert_same_file "$dir/dpkg/log" "$dir/unpkg/log" "$name: scripts run (dpkg vs unpkg)"
	[ -z "$stub" ] || drop_selection "$dir/dpkg" "$stub"
	# /log is written at run time; its content is compared above
	compare_trees "$dir/unpkg" "$dir/dpkg" "$name" log
	compare_db_views "$dir/unpkg" "$dir/dpkg" "$name"
}

dc_case deconf-refused -i:dv_1.0 db '' -i "$TESTDIR/db_1.0.deb"
assert_grep '\(--auto-deconfigure might help\)' "$TESTDIR/case-deconf-refused/unpkg.out" \
	"deconf-refused: dpkg's words"
dc_case deconf-unpack -i:dv_1.0 '' '' --auto-deconfigure --unpack "$TESTDIR/db_1.0.deb"
assert_grep '^De-configuring dv \(1\.0\), to allow installation of db \(1\.0\) \.\.\.$' \
	"$TESTDIR/case-deconf-unpack/unpkg.out" "deconf-unpack: dpkg's words"
assert_grep 'yes, will deconfigure dv \(broken by db\)' \
	"$TESTDIR/case-deconf-unpack/unpkg.out" "deconf-unpack: dpkg's notice"
dc_case deconf-install -i:dv_1.0 '' '' --auto-deconfigure -i "$TESTDIR/db_1.0.deb"
assert_grep '^ +db \(1\.0\) breaks dv \(<< 2\) and is installed\.$' \
	"$TESTDIR/case-deconf-install/unpkg.out" "deconf-install: dpkg's words"
DC_PRERMS_FIRST=1 dc_case deconf-upgraded -i:dv_1.0 '' '' --auto-deconfigure -i \
	"$TESTDIR/db_1.0.deb" "$TESTDIR/dv_2.0.deb"
dc_case deconf-prerm-fails -i:dv_1.0 db fail-dv-prerm --auto-deconfigure --unpack \
	"$TESTDIR/db_1.0.deb"
dc_case deconf-preinst-fails -i:dv_1.0 db fail-db-preinst --auto-deconfigure --unpack \
	"$TESTDIR/db_1.0.deb"
dc_case deconf-abort-fails -i:dv_1.0 db 'fail-db-preinst fail-dv-postinst' \
	--auto-deconfigure --unpack "$TESTDIR/db_1.0.deb"
dc_case breaks-unpacked --unpack:dv_1.0 '' '' --unpack "$TESTDIR/db_1.0.deb"
dc_case breaks-by-installed -i:drb_1.0 '' '' -i "$TESTDIR/dv_1.0.deb"

# Conflicts with Replaces and maintainer scripts: the installed package
# is half-configured, its prerm called "remove in-favour P V", then
# half-installed; the new one is unpacked; then the old one's files go,
# its postrm is called "remove" and it ends config-files (a postrm or a
# conffile is left) with its list and postrm.  A failed prerm or preinst
# puts it back with "postinst abort-remove in-favour P V"; a failed postrm
# leaves it half-installed and the new package unpacked.
dir=$TESTDIR/src/rsc-1.0
dc_pkg rsc 1.0 '' usr/share/rsc/own usr/share/rsc/sub/x usr/share/shared/f etc/rsc.conf
echo /etc/rsc.conf >"$dir/DEBIAN/conffiles"
build_deb "$TESTDIR/rsc_1.0.deb" "$dir"
dc_pkg rsa 1.0 $'Conflicts: rsc\nReplaces: rsc' usr/share/rsa/own usr/share/shared/f
dc_case conflicts-replaces-scripts -i:rsc_1.0 '' '' -i "$TESTDIR/rsa_1.0.deb"
assert_grep '^rsc 1\.0 prerm remove in-favour rsa 1\.0$' \
	"$TESTDIR/case-conflicts-replaces-scripts/unpkg/log" "conflicts-replaces-scripts: prerm"
grep -q '^Status: install ok config-files$' \
	"$TESTDIR/case-conflicts-replaces-scripts/unpkg/var/lib/dpkg/status" ||
	check_fail "conflicts-replaces-scripts: rsc is not config-files"
dc_pkg rsn 1.0 '' usr/share/rsn/own
dc_pkg rsna 1.0 $'Conflicts: rsn\nReplaces: rsn' usr/share/rsna/own
dc_case conflicts-replaces-postrm-only -i:rsn_1.0 '' '' -i "$TESTDIR/rsna_1.0.deb"
dc_case conflicts-replaces-prerm-fails -i:rsc_1.0 rsa fail-rsc-prerm -i "$TESTDIR/rsa_1.0.deb"
dc_case conflicts-replaces-preinst-fails -i:rsc_1.0 rsa fail-rsa-preinst -i "$TESTDIR/rsa_1.0.deb"
dc_case conflicts-replaces-postrm-fails -i:rsc_1.0 '' fail-rsc-postrm -i "$TESTDIR/rsa_1.0.deb"

#!/bin/bash
# remove.sh - unpkg --remove and --purge compared with stock dpkg.
#
# Twin roots (a static busybox as /bin/sh: the scripts run chrooted) get
# the same packages installed by dpkg; then unpkg removes or purges in one
# and dpkg in the other.  Compared: the exit status, the --status-fd
# lines, the --log lines (times dropped), the maintainer scripts run (each
# appends "NAME SCRIPT ARGS" to /log and fails when /fail-SCRIPT-NAME
# exists), the tree, the whole database and dpkg's view of it.
TEST_NAME=remove
. "${TESTLIB:?}"
need_root
need_busybox

# rm_pkg NAME [CONTROL-LINE...]: a package with the conffile
# /etc/NAME.conf, the files /usr/share/NAME/file and
# /usr/share/common/NAME (a directory all share), and the four scripts.
rm_pkg() {
	local name=$1 dir=$TESTDIR/src-$1 s line
	shift
	new_pkg "$dir" "$name"
	for line in "$@"; do
		echo "$line" >>"$dir/DEBIAN/control"
	done
	mkdir -p "$dir/usr/share/$name" "$dir/usr/share/common" "$dir/etc"
	echo "$name" >"$dir/usr/share/$name/file"
	echo "$name" >"$dir/usr/share/common/$name"
	if [ -n "${EXTRA:-}" ]; then
		mkdir -p "$dir/$(dirname "$EXTRA")"
		echo "$name" >"$dir/$EXTRA"
	fi
	echo "$name configuration" >"$dir/etc/$name.conf"
	echo "/etc/$name.conf" >"$dir/DEBIAN/conffiles"
	for s in preinst postinst prerm postrm; do
		cat >"$dir/DEBIAN/$s" <<-EOF
		#!/bin/sh
		echo "$name $s \$*" >>/log
		[ ! -e /fail-$s-$name ] || exit 3
		[ ! -e /kill-$s-$name ] || kill -9 \$PPID
		EOF
		chmod 0755 "$dir/DEBIAN/$s"
	done
	build_deb "$TESTDIR/$name.deb" "$dir"
}
rm_pkg aa
rm_pkg bb "Depends: aa"
rm_pkg cc "Depends: aa"
rm_pkg ee "Essential: yes"
rm_pkg pp "Protected: yes"
# m1 and m2 ship files below /lib, a symlink on a merged-/usr root
EXTRA=lib/m1/file rm_pkg m1
EXTRA=lib/m2/file rm_pkg m2
# x1 and x2 share /usr/share/deep/sub, x3 /usr/share/deep with them
EXTRA=usr/share/deep/sub/x1 rm_pkg x1
EXTRA=usr/share/deep/sub/x2 rm_pkg x2
EXTRA=usr/share/deep/x3 rm_pkg x3
# nn: no conffile, no script: nothing stays
new_pkg "$TESTDIR/src-nn" nn
mkdir -p "$TESTDIR/src-nn/usr/share/nn"
echo nn >"$TESTDIR/src-nn/usr/share/nn/file"
build_deb "$TESTDIR/nn.deb" "$TESTDIR/src-nn"
# pe: a plain file in /etc, no conffile, no script
new_pkg "$TESTDIR/src-pe" pe
mkdir -p "$TESTDIR/src-pe/etc"
echo pe >"$TESTDIR/src-pe/etc/pe.txt"
build_deb "$TESTDIR/pe.deb" "$TESTDIR/src-pe"
# cq: a conffile in a directory of its own, no script
new_pkg "$TESTDIR/src-cq" cq
mkdir -p "$TESTDIR/src-cq/etc/cq" "$TESTDIR/src-cq/usr/share/cq"
echo cq >"$TESTDIR/src-cq/etc/cq/cq.conf"
echo cq >"$TESTDIR/src-cq/usr/share/cq/file"
echo /etc/cq/cq.conf >"$TESTDIR/src-cq/DEBIAN/conffiles"
build_deb "$TESTDIR/cq.deb" "$TESTDIR/src-cq"
# md: files in 40 directories of their own, and a conffile (its list stays)
new_pkg "$TESTDIR/src-md" md
for i in $(seq 1 40); do
	mkdir -p "$TESTDIR/src-md/usr/share/md$i"
	echo "$i" >"$TESTDIR/src-md/usr/share/md$i/file"
done
mkdir -p "$TESTDIR/src-md/etc"
echo md >"$TESTDIR/src-md/etc/md.conf"
echo /etc/md.conf >"$TESTDIR/src-md/DEBIAN/conffiles"
build_deb "$TESTDIR/md.deb" "$TESTDIR/src-md"
# tt: a file trigger on aa's directory
rm_pkg tt
echo "interest /usr/share/aa" >"$TESTDIR/src-tt/DEBIAN/triggers"
build_deb "$TESTDIR/tt.deb" "$TESTDIR/src-tt"
# ti: interested in the trigger that ll's triggers file activates (as a
# library activates ldconfig)
rm_pkg ti
echo "interest-noawait ll-trig" >"$TESTDIR/src-ti/DEBIAN/triggers"
build_deb "$TESTDIR/ti.deb" "$TESTDIR/src-ti"
rm_pkg ll
echo "activate-noawait ll-trig" >"$TESTDIR/src-ll/DEBIAN/triggers"
build_deb "$TESTDIR/ll.deb" "$TESTDIR/src-ll"

A=$TESTDIR/case/unpkg B=$TESTDIR/case/dpkg

# setup DEB...: fresh twin roots with the packages installed by dpkg.
setup() {
	local r deb
	section "${CASE:-?}"
	for r in "$A" "$B"; do
		shell_root "$r"
		if [ "${MERGED:-0}" = 1 ]; then
			# merged /usr: /lib a symlink no package ships
			mkdir -p "$r/usr/lib"
			ln -s usr/lib "$r/lib"
			touch -h -d @1000000000 "$r/lib"
		fi
		for deb in "$@"; do
			dpkg_in "$r" -i "$TESTDIR/$deb.deb" >/dev/null 2>&1 ||
				hard_error "dpkg -i $deb failed"
		done
		rm -f "$r/log"
		touch -h -d @1000000000 "$r/bin/busybox" "$r/bin/sh"
	done
}

# both CMD: run shell command CMD in each root ($R).
both() {
	local R
	for R in "$A" "$B"; do
		R=$R eval "$1"
	done
}

# compare_rm ARG...: unpkg ARG... on A, dpkg ARG... on B, and compare.
compare_rm() {
	local urc=0 drc=0 r f
	for f in "$A"/fail-* "$B"/fail-*; do
		touch -d @1000000000 "$f"
	done
	"$UNPKG" --root="$A" --refuse-unsafe-io --status-fd 3 --log="$A.log" \
		"$@" 3>"$A.sf" >"$A.out" 2>&1 || urc=$?
	dpkg --root="$B" --refuse-unsafe-io --status-fd 3 --log="$B.log" \
		"$@" 3>"$B.sf" >"$B.out" 2>&1 || drc=$?
	show_file "$A.out" "unpkg output"
	assert_status "$drc" "$urc" "unpkg $* (dpkg exits $drc)"
	same_removal_warnings "$B" "$A" "$*"
	assert_same_file "$B.sf" "$A.sf" "$*: status-fd lines (dpkg vs unpkg)"
	for r in "$A" "$B"; do
		sed 's/^[0-9-]* [0-9:]* //' "$r.log" >"$r.log.lines"
		touch "$r/log"
	done
	assert_same_file "$B.log.lines" "$A.log.lines" "$*: --log lines"
	assert_same_file "$B/log" "$A/log" "$*: scripts run (dpkg vs unpkg)"
	compare_trees "$A" "$B" "$*" log
	compare_dbs "$A" "$B" "$*"
	compare_queries "$A" "$B" "$*" aa bb
	rm -f "$A.log" "$B.log"
}

CASE="shared directories, conffiles kept on remove, then purged"
setup aa bb
compare_rm -r aa bb
compare_rm -P aa bb

CASE="remove then purge one of two sharing a directory"
setup aa bb
compare_rm --force-depends -P aa
compare_rm -P bb

# x1's file goes aside into sub, x2 moves sub aside whole, and for x3
# deep holds nothing but what went aside
CASE="nested directories shared by packages removed in one run"
setup x1 x2 x3
compare_rm -r x1 x2 x3
compare_rm -P x1 x2 x3

CASE="modified conffile and its variants purged"
setup aa
both 'echo local >>"$R/etc/aa.conf"; for s in .dpkg-old .dpkg-new .dpkg-dist .dpkg-bak .dpkg-tmp .orig "~" .bak .ucf-old; do echo x >"$R/etc/aa.conf$s"; done; echo x >"$R/etc/#aa.conf#"; touch -d @1000000000 "$R"/etc/*'
compare_rm -P aa

CASE="a directory of the package holding a file of nobody's"
setup aa
both 'echo x >"$R/usr/share/aa/extra"; touch -d @1000000000 "$R/usr/share/aa/extra"'
compare_rm -P aa

CASE="failing prerm"
setup aa
both 'touch "$R/fail-prerm-aa"'
compare_rm -r aa

CASE="failing prerm and postinst abort-remove"
setup aa
both 'touch "$R/fail-prerm-aa" "$R/fail-postinst-aa"'
compare_rm -P aa

CASE="failing postrm remove"
setup aa
both 'touch "$R/fail-postrm-aa"'
compare_rm -r aa

CASE="failing postrm purge"
setup aa
compare_rm -r aa
both 'touch "$R/fail-postrm-aa"'
compare_rm -P aa
setup aa
both 'touch "$R/fail-postrm-aa"'
compare_rm -P aa

# unpkg killed by aa's postrm, once aa's files are aside, before the
# record: aa and bb stay half-installed, and the next run finishes their
# removal from what was moved aside (lists included) as dpkg's one run
# does.
CASE="killed before the record, then run again"
setup aa bb
touch "$A/kill-postrm-aa"
"$UNPKG" --root="$A" --refuse-unsafe-io -r bb aa >/dev/null 2>&1 &&
	check_fail "unpkg -r bb aa went on after it was killed"
rm "$A/kill-postrm-aa"
grep -A1 '^Package: aa$' "$A/var/lib/dpkg/status" | grep -q 'half-installed' ||
	check_fail "aa is not half-installed after the kill"
"$UNPKG" --root="$A" --refuse-unsafe-io -r bb aa >/dev/null 2>&1 ||
	check_fail "unpkg -r bb aa run again failed"
dpkg_in "$B" -r bb aa >/dev/null 2>&1 || hard_error "dpkg -r bb aa failed"
compare_trees "$A" "$B" "killed, then -r bb aa" log
compare_dbs "$A" "$B" "killed, then -r bb aa"

CASE="Essential refused, then forced"
setup ee
compare_rm -r ee
compare_rm --force-remove-essential -P ee

CASE="Protected refused, then forced"
setup pp
compare_rm -P pp
compare_rm --force-remove-protected -r pp

# same_dep_message WHAT: the lines of the dependency problem in the last
# outputs, from its first line to dpkg's empty line after the list
# (dependents in dpkg's order), the same for unpkg and dpkg.
same_dep_message() {
	local r
	for r in "$A" "$B"; do
		sed -E -n '/dependency problems(,| prevent)/,/^$/{s/^(dpkg|unpkg): (warning: )?//;p}' \
			"$r.out" >"$r.msg"
	done
	[ -s "$B.msg" ] || hard_error "$1: dpkg printed no dependency problem"
	assert_same_file "$B.msg" "$A.msg" "$1: the dependency problem (dpkg vs unpkg)"
}

CASE="dependency refused, then --force-depends"
setup aa bb cc
compare_rm -r aa
same_dep_message "-r aa"
compare_rm --force-depends -r aa
same_dep_message "--force-depends -r aa"

CASE="packages that are not installed"
setup aa
compare_rm -r zz
compare_rm -P aa
compare_rm -r aa
compare_rm -P aa

# apt names packages with their architecture
CASE="a package named with its architecture"
setup aa
compare_rm -r aa:all
compare_rm -P aa:all

CASE="remove of a config-files package, purge of it"
setup aa
compare_rm -r aa
compare_rm -r aa
compare_rm -P aa

# never configured: no prerm, no Config-Version
CASE="an unpacked package removed, then purged"
setup
both 'dpkg --root="$R" --unpack "$TESTDIR/aa.deb" >/dev/null 2>&1; rm -f "$R/log"'
compare_rm -r aa
compare_rm -P aa

CASE="a package with nothing to keep"
setup nn
compare_rm -r nn
compare_rm -P nn

# (dpkg takes the packages of -a in the order of its package table, nn
# first; aa waits for bb)
CASE="-a with the selections"
setup aa bb nn
both 'printf "aa purge\nbb deinstall\nnn deinstall\n" | dpkg --root="$R" --set-selections'
compare_rm -r -a
compare_rm -P -a

# (apt's purge of a package it removed before: dpkg notes the package
# as it blanks its configured version, its first status line there)
CASE="-a purging a config-files package"
setup aa
compare_rm -r aa
both 'echo "aa purge" | dpkg --root="$R" --set-selections'
compare_rm -P -a

# (nothing left once its files are gone: dpkg has no purge step for it,
# no "processing: purge" line)
CASE="purge of a package without conffiles or scripts"
setup nn
compare_rm -P nn

# (aa keeps /etc/aa.conf, and so /etc, in the list it stages: pe, whose
# removal is its purge, leaves /etc to aa without a word.  unpkg read
# aa's list as gone until the run's end and warned that /etc was not
# empty.)
CASE="a directory a package removed before in the run keeps"
setup aa pe
compare_rm -r aa pe

# dpkg warns of a name of no installed package as its queue reaches it,
# and says at once of a name given again that it takes it once.  unpkg
# warned of every name not installed before it removed anything, and
# said nothing of a name given again.
CASE="names not installed, or given twice"
setup nn aa
both 'echo x >"$R/usr/share/nn/local"; touch -d @1000000000 "$R/usr/share/nn/local"'
compare_rm -r zz nn yy aa nn zz

CASE="a file trigger activated by the removal"
setup tt aa
compare_rm -r aa

# dpkg activates the triggers of every path of the list, there or not:
# here aa's files and directory, left out by a filter (a slim image's
# path-exclude), still activate tt's.  unpkg activated only for what it
# removed: tt's trigger (man-db's, in the apt job) was lost.
CASE="a file trigger on paths a filter left out"
setup tt
both 'dpkg --root="$R" --path-exclude="/usr/share/aa*" -i "$TESTDIR/aa.deb" >/dev/null; rm -f "$R/log"'
[ ! -e "$A/usr/share/aa" ] || hard_error "the filter did not leave /usr/share/aa out"
compare_rm -r aa
assert_grep '^tt postinst triggered' "$A/log" "-r aa, filtered: tt's trigger processed"

CASE="merged /usr: /lib a symlink that other packages list"
MERGED=1 setup m1 m2
compare_rm -P m1
[ -L "$A/lib" ] || check_fail "merged /usr: the /lib symlink was removed"
compare_rm -P m2

CASE="a trigger the removed package's triggers file activates"
setup ti ll
compare_rm -r ll

# unreachable DIR ARG...: unpkg ARG... on A and dpkg ARG... on B, as root
# without its capability to override permissions, /DIR searchable only
# (neither read nor written); their exit statuses and databases compared.
nodac="setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search"
unreachable() {
	local dir=$1 urc
	shift
	both "chmod 0100 \"\$R/$dir\""
	run_logged "$A" $nodac "$UNPKG" --root="$A" --refuse-unsafe-io "$@"
	urc=$RUN_RC
	show_file "$A.err" "unpkg $*, stderr"
	run_logged "$B" $nodac dpkg --root="$B" --refuse-unsafe-io "$@"
	[ "$RUN_RC" -ne 0 ] || hard_error "dpkg $* succeeded (test outdated?)"
	assert_status "$RUN_RC" "$urc" "$*, /$dir out of reach (dpkg exits $RUN_RC)"
	# the error, in dpkg's words: the path it could not remove
	sed "s|^[a-z]*: |PROG: |; s|$A/|ROOT/|g" "$A.err" >"$A.err.words"
	sed "s|^[a-z]*: |PROG: |; s|$B/|ROOT/|g" "$B.err" >"$B.err.words"
	assert_same_file "$B.err.words" "$A.err.words" "$*, /$dir out of reach: the error (dpkg vs unpkg)"
	both "chmod 0755 \"\$R/$dir\""
	compare_dbs "$A" "$B" "$*, /$dir out of reach"
}

# A path the removal cannot look at is not taken for gone: x1's file in
# /usr/share/common.  dpkg fails x1 and leaves it half-installed, its list
# as it was, and so does unpkg; unpkg puts back what it had moved aside,
# where dpkg had deleted the files it reached first.  Before, unpkg took
# the file for gone: x1 forgotten, its file left for nobody.
CASE="a file of the package that cannot be looked at"
setup x1 x2
unreachable usr/share/common -r x1
for f in $(cat "$A/var/lib/dpkg/info/x1.list"); do
	[ -e "$A$f" ] || check_fail "-r x1, a file out of reach: $f is gone"
done

# The package that fails so fails alone: dpkg goes on with the others of
# the run and exits 1, and so does unpkg.  Before, unpkg ended the run
# (exit 2) and removed nothing.  aa's own directory is out of reach; nn
# has nothing there.
CASE="a package out of reach among others removed"
setup aa nn
unreachable usr/share/aa -r aa nn
for f in $(cat "$A/var/lib/dpkg/info/aa.list"); do
	[ -e "$A$f" ] || check_fail "-r aa nn, aa out of reach: $f is gone"
done
[ ! -e "$A/usr/share/nn" ] || check_fail "-r aa nn, aa out of reach: nn's files stayed"
assert_same_file "$B/log" "$A/log" "-r aa nn, aa out of reach: scripts run"

# In a purge, a conffile out of reach fails its package alone too: dpkg
# leaves cq config-files, its configuration forgotten (no Config-Version,
# every conffile's hash "newconffile") and its conffile there, and goes
# on with nn.  Before, unpkg ended the run (exit 2) and removed nothing.
CASE="a conffile out of reach in a purge"
setup cq nn
compare_rm -r cq
unreachable etc/cq -P cq nn
[ -f "$A/etc/cq/cq.conf" ] || check_fail "-P cq nn: cq's conffile is gone"
[ ! -e "$A/usr/share/nn" ] || check_fail "-P cq nn: nn's files stayed"

# And so does a directory out of reach once the postrm purge has run:
# dpkg leaves x1 config-files, its conffiles gone and forgotten, its list
# the directories left, and goes on with nn.  Before, unpkg ended the run.
CASE="a directory out of reach at the end of a purge"
setup x1 nn
both 'echo x >"$R/usr/share/deep/sub/other"; touch -d @1000000000 "$R/usr/share/deep/sub/other"'
compare_rm -r x1
both 'rm "$R/usr/share/deep/sub/other"'
unreachable usr/share/deep -P x1 nn
[ ! -e "$A/etc/x1.conf" ] || check_fail "-P x1 nn: x1's conffile is back"
[ ! -e "$A/usr/share/nn" ] || check_fail "-P x1 nn: nn's files stayed"
assert_same_file "$B/log" "$A/log" "-P x1 nn, /usr/share/deep out of reach: scripts run"

# A failed sync ends the run, whichever call meets it.  On an overlay's
# root the removal unlinks the files of the image at once, and where the
# descriptors run short the transaction first syncs what it staged (md's
# new list) to make room.  That sync's failure was taken for the file's:
# a warning, then a sync again (which can wrongly succeed) and md
# recorded config-files, exit 0.
CASE="a failed sync while unlinking on an overlay's root"
setup md
ov=$TESTDIR/ov
mkdir -p "$ov/upper" "$ov/work" "$ov/mnt"
if ! mount -t overlay unpkg-remove-ov -o "lowerdir=$A,upperdir=$ov/upper,workdir=$ov/work" \
	"$ov/mnt" 2>"$TESTDIR/ov.err"; then
	skip_part "$CASE" "cannot mount an overlayfs here: $(cat "$TESTDIR/ov.err")"
else
	register_mount "$ov/mnt"
	# (LeakSanitizer cannot work under ptrace: the untraced runs check
	# for leaks)
	run_logged "$TESTDIR/ov" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o "$TESTDIR/ov.trace" -e trace=syncfs \
		-e inject=syncfs:error=EIO:when=1 prlimit --nofile=44:44 \
		"$UNPKG" --root="$ov/mnt" --refuse-unsafe-io --sync=syncfs -r md
	grep -q INJECTED "$TESTDIR/ov.trace" ||
		hard_error "no syncfs failed: the run needed no room for descriptors (test outdated?)"
	assert_status 2 "$RUN_RC" "-r md, a failed sync on the overlay"
	assert_grep "cannot sync .*Input/output error" "$TESTDIR/ov.err" "the failed sync is reported"
	[ "$(sed -n '/INJECTED/,$p' "$TESTDIR/ov.trace" | grep -c 'syncfs(')" = 1 ] ||
		check_fail "-r md: synced again after the failed sync"
	assert_grep "^Status: deinstall ok half-installed" "$ov/mnt/var/lib/dpkg/status" \
		"-r md, a failed sync: md stays half-installed"
	release_mount "$ov/mnt"
fi

exit $((TEST_FAILURES > 0))

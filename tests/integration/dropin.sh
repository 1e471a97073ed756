#!/bin/bash
# dropin.sh - unpkg as a stand-in for dpkg: the --status-fd and --log
# lines, the actions handed to stock dpkg, --recursive, dpkg's option
# syntax and configuration, hooks, and a run under apt-get.  The oracle is
# stock dpkg on twin roots.
TEST_NAME=dropin
. "${TESTLIB:?}"

ARCH=$(dpkg --print-architecture)

# --- fixtures --------------------------------------------------------------
mk() {	# mk OUT NAME VERSION ARCH FILE [CONFFILE]
	local dir=$TESTDIR/src-$1
	rm -rf "$dir"
	new_pkg "$dir" "$2" "$3" "$4"
	mkdir -p "$dir/usr/share/$2"
	echo "$2 $3" >"$dir/usr/share/$2/$5"
	if [ $# -ge 6 ]; then
		mkdir -p "$dir/etc"
		echo "$2 $3 conf" >"$dir/etc/$6"
		echo "/etc/$6" >"$dir/DEBIAN/conffiles"
	fi
	build_deb "$TESTDIR/$1.deb" "$dir"
}
mk alpha1 alpha 1.0 all a
mk alpha2 alpha 2.0 all a
mk beta beta 3.0-1 "$ARCH" b
mk gamma gamma 1 all g gamma.conf
mk gamma2 gamma 2 all g gamma.conf
# owns a file of alpha: fails with "trying to overwrite"
dir=$TESTDIR/src-clash
new_pkg "$dir" clash 1 all
mkdir -p "$dir/usr/share/alpha"
echo clash >"$dir/usr/share/alpha/a"
build_deb "$TESTDIR/clash.deb" "$dir"
echo "not a deb" >"$TESTDIR/junk.deb"
D=$TESTDIR
# Lines dpkg writes that unpkg does not, set per section; each with its
# reason where it is set.
DPKG_ONLY='^$'

# both SCEN ARGS...: run unpkg on root $D/u-SCEN and dpkg on $D/d-SCEN
# (made by the caller), each with --status-fd 3 to SCEN.{u,d}.sf and --log
# to SCEN.{u,d}.log; keep the exit statuses in URC and DRC.
both() {
	local s=$1
	shift
	URC=0 DRC=0
	"$UNPKG" --root="$D/u-$s" --log="$D/$s.u.log" --status-fd 3 "$@" \
		3>"$D/$s.u.sf" >"$D/$s.u.out" 2>"$D/$s.u.err" || URC=$?
	dpkg --root="$D/d-$s" --log="$D/$s.d.log" --status-fd 3 "$@" \
		3>"$D/$s.d.sf" >"$D/$s.d.out" 2>"$D/$s.d.err" || DRC=$?
	# the log without time stamps
	cut -d' ' -f3- "$D/$s.u.log" >"$D/$s.u.lines"
	cut -d' ' -f3- "$D/$s.d.log" >"$D/$s.d.lines"
}

# same_lines WHAT UNPKG_FILE DPKG_FILE: unpkg wrote the lines dpkg wrote,
# as many times each (DPKG_ONLY lines of dpkg's left out, see where it is
# set), and each package's lines in the same order as dpkg's.  Only the
# interleaving of different packages' lines may differ: a run opens and
# checks every archive before its one half-installed mark, and records
# them together (doc/design.md: the pipeline; "Progress output").  Lines
# that name no package by itself (a conffile's, an archive's error) are
# counted, not ordered.
same_lines() {
	local what=$1 u=$2 d=$3 p
	grep -Ev "$DPKG_ONLY" "$d" >"$d.cmp" || true
	sort "$u" >"$u.sorted"
	sort "$d.cmp" >"$d.sorted"
	assert_same_file "$d.sorted" "$u.sorted" "$what: the lines (sorted)"
	for p in $(grep -ohE '(alpha|beta|gamma|clash|delta|eps|zeta)(:[a-z0-9]+)?' "$u" "$d" | sort -u); do
		grep -E "[ :]$p( |:|\$)" "$u" >"$u.$p" || true
		grep -E "[ :]$p( |:|\$)" "$d.cmp" >"$d.$p" || true
		assert_same_file "$d.$p" "$u.$p" "$what: $p's lines in order"
	done
}

section "--status-fd and --log: new packages unpacked"
mkroot "$D/u-new" && mkroot "$D/d-new"
both new --unpack "$D/alpha1.deb" "$D/beta.deb"
assert_status 0 "$URC" "unpkg --unpack"
assert_status 0 "$DRC" "dpkg --unpack"
same_lines "status-fd, --unpack" "$D/new.u.sf" "$D/new.d.sf"
same_lines "log, --unpack" "$D/new.u.lines" "$D/new.d.lines"
assert_grep '^processing: install: alpha$' "$D/new.u.sf" "processing line"
assert_grep "^status half-installed beta:$ARCH 3.0-1$" "$D/new.u.lines" "log status line"
assert_grep '^startup archives unpack$' "$D/new.u.lines" "log startup line"
compare_trees "$D/u-new" "$D/d-new" "--unpack"
compare_dbs "$D/u-new" "$D/d-new" "--unpack"
compare_queries "$D/u-new" "$D/d-new" --unpack alpha beta

section "--status-fd and --log: upgrade, configure, a kept conffile"
# (in one run, as dpkg's order across packages is not unpkg's)
for r in u-up d-up; do
	mkroot "$D/$r"
	dpkg --root="$D/$r" -i "$D/alpha1.deb" "$D/gamma.deb" >/dev/null
	echo "changed by the admin" >"$D/$r/etc/gamma.conf"
	touch -d @1100000000 "$D/$r/etc/gamma.conf"	# the same in both trees
done
# upgrade_norm FILE: FILE.n, FILE without what differs by design: the
# half-installed mark names the new version, dpkg's the old one
# (doc/design.md, "Maintainer scripts"), so the version is left out of
# that log line; the conffile-prompt line names the file in the root of
# each tool, which is left out.
upgrade_norm() {
	sed -E -e 's/^(status half-installed [^ ]+) .*/\1 (version)/' \
		-e "s|'$D/[ud]-up/|'ROOT/|g" "$1" >"$1.n"
}
both up --force-confold -i "$D/alpha2.deb"
assert_status 0 "$URC" "unpkg -i upgrade"
assert_status 0 "$DRC" "dpkg -i upgrade"
for f in sf lines; do
	upgrade_norm "$D/up.u.$f"
	upgrade_norm "$D/up.d.$f"
done
same_lines "status-fd, -i upgrade" "$D/up.u.sf.n" "$D/up.d.sf.n"
same_lines "log, -i upgrade" "$D/up.u.lines.n" "$D/up.d.lines.n"
assert_grep '^processing: upgrade: alpha$' "$D/up.u.sf" "upgrade line"
assert_grep '^upgrade alpha:all 1.0 2.0$' "$D/up.u.lines" "upgrade log line"
assert_grep '^configure alpha:all 2.0 2.0$' "$D/up.u.lines" "configure log line"
both up --force-confold -i "$D/gamma2.deb"
assert_status 0 "$URC" "unpkg -i, conffile kept"
assert_status 0 "$DRC" "dpkg -i, conffile kept"
for f in sf lines; do
	upgrade_norm "$D/up.u.$f"
	upgrade_norm "$D/up.d.$f"
done
same_lines "status-fd, conffile kept" "$D/up.u.sf.n" "$D/up.d.sf.n"
same_lines "log, conffile kept" "$D/up.u.lines.n" "$D/up.d.lines.n"
assert_grep '^conffile /etc/gamma.conf keep$' "$D/up.u.lines" "conffile log line"
compare_trees "$D/u-up" "$D/d-up" "upgrades"
compare_dbs "$D/u-up" "$D/d-up" "upgrades"
compare_queries "$D/u-up" "$D/d-up" -i alpha gamma

section "(Reading database ...): every path dpkg knows, once"
# The paths of the lists, each once (alpha's and gamma's share /usr and
# /usr/share), and those no list names: a local diversion's two, a
# statoverride's (read by an unpack, not by a removal) and a file
# trigger's.  The line comes once per run, as its first package goes
# ahead.
dir=$TESTDIR/src-watch
new_pkg "$dir" watch 1 all
echo "interest /srv/watched" >"$dir/DEBIAN/triggers"
build_deb "$TESTDIR/watch.deb" "$dir"
for r in u-rd d-rd; do
	mkroot "$D/$r"
	dpkg --root="$D/$r" -i "$D/alpha1.deb" "$D/gamma.deb" "$D/watch.deb" >/dev/null
	dpkg-divert --root="$D/$r" --no-rename --divert /opt/moved /opt/nowhere >/dev/null
	dpkg-statoverride --root="$D/$r" --add root root 0755 /srv/override
done
# reading_line WHAT: the "(Reading database" lines of the run, dpkg's and
# unpkg's, and the "Preparing to unpack" lines, which show a long path of
# an archive shortened (".../beta.deb")
reading_line() {
	local s
	for s in u d; do
		grep -E '^(\(Reading database|Preparing to unpack)' "$D/rd.$s.out" \
			>"$D/rd.$s.reading" || true
	done
	[ "$(grep -c '^(Reading database' "$D/rd.d.reading")" = 1 ] ||
		hard_error "$1: dpkg did not say (Reading database ...) once (test outdated?)"
	assert_same_file "$D/rd.d.reading" "$D/rd.u.reading" "$1: (Reading database ...) (dpkg vs unpkg)"
}
both rd --unpack "$D/beta.deb" "$D/alpha2.deb"
reading_line "--unpack"
both rd -r alpha beta
reading_line "-r"
both rd -P gamma watch
reading_line "-P"

section "--status-fd: errors"
DPKG_ONLY='^$'
for r in u-err d-err; do
	mkroot "$D/$r"
	dpkg --root="$D/$r" -i "$D/alpha1.deb" >/dev/null
done
both err -i "$D/clash.deb" "$D/junk.deb"
assert_status 1 "$URC" "unpkg, failed packages"
assert_status 1 "$DRC" "dpkg, failed packages"
# the causes of junk.deb are worded differently: compare up to them
for f in "$D/err.u.sf" "$D/err.d.sf"; do
	sed -E 's/^(status: .*junk\.deb : error : ).*/\1.../' "$f" >"$f.n"
done
same_lines "status-fd, errors" "$D/err.u.sf.n" "$D/err.d.sf.n"
assert_grep "^status: $D/clash.deb : error : trying to overwrite '/usr/share/alpha/a', which is also in package alpha 1.0$" \
	"$D/err.u.sf" "error line"
assert_grep '^status: clash: not-installed$' "$D/err.u.sf" "restored state line"
dpkg --root="$D/u-err" --audit >"$D/err.audit" 2>&1
assert_empty "$D/err.audit" "dpkg --audit after the failed run"
drop_selection "$D/d-err" clash
compare_trees "$D/u-err" "$D/d-err" "errors"
compare_dbs "$D/u-err" "$D/d-err" "errors"
compare_queries "$D/u-err" "$D/d-err" -i alpha clash

section "--status-fd with more than one descriptor; --status-logger"
r=$D/fds
mkroot "$r"
"$UNPKG" --root="$r" --status-fd 3 --status-fd=4 \
	--status-logger="cat >'$D/logger.out'" --unpack "$D/beta.deb" \
	3>"$D/fd3" 4>"$D/fd4" >/dev/null
assert_same_file "$D/fd3" "$D/fd4" "two status descriptors"
assert_same_file "$D/fd3" "$D/logger.out" "status logger"
assert_grep '^status: beta: unpacked$' "$D/fd3" "status descriptor"

section "actions handed to stock dpkg"
r=$D/pass
mkroot "$r"
"$UNPKG" --root="$r" -i "$D/alpha1.deb" "$D/beta.deb" "$D/gamma.deb" >/dev/null
for q in "-l" "-s alpha" "-L beta" "--listfiles gamma" "-S /usr/share/alpha/a" \
	"-p alpha" "--get-selections" "-C" "-V" "--verify alpha"; do
	# shellcheck disable=SC2086 # word splitting wanted
	{ rc=0; "$UNPKG" --root="$r" $q >"$D/q.u" 2>&1 || rc=$?; echo "rc=$rc" >>"$D/q.u"; }
	# shellcheck disable=SC2086
	{ rc=0; dpkg --root="$r" $q >"$D/q.d" 2>&1 || rc=$?; echo "rc=$rc" >>"$D/q.d"; }
	assert_same_file "$D/q.d" "$D/q.u" "unpkg $q"
done
"$UNPKG" --print-architecture >"$D/arch.u"
dpkg --print-architecture >"$D/arch.d"
assert_same_file "$D/arch.d" "$D/arch.u" "--print-architecture"
"$UNPKG" --print-foreign-architectures >"$D/farch.u"
dpkg --print-foreign-architectures >"$D/farch.d"
assert_same_file "$D/farch.d" "$D/farch.u" "--print-foreign-architectures"
for cmp in "1.0 lt 2.0=0" "2.0 lt 1.0=1" "1:0 gt 2.0=0"; do
	args=${cmp%=*} want=${cmp##*=}
	rc=0
	# shellcheck disable=SC2086
	"$UNPKG" --compare-versions $args || rc=$?
	assert_status "$want" "$rc" "--compare-versions $args"
done
rc=0
"$UNPKG" --assert-multi-arch || rc=$?
assert_status 0 "$rc" "--assert-multi-arch"
# dpkg-deb's actions, through dpkg
"$UNPKG" -f "$D/beta.deb" Version >"$D/field.u"
echo 3.0-1 >"$D/field.d"
assert_same_file "$D/field.d" "$D/field.u" "-f (dpkg-deb --field)"
# remove and purge: stock dpkg on a database unpkg wrote, status-fd kept
rc=0
"$UNPKG" --root="$r" --status-fd 3 --remove alpha 3>"$D/rm.sf" >/dev/null || rc=$?
assert_status 0 "$rc" "unpkg --remove"
assert_grep '^processing: remove: alpha$' "$D/rm.sf" "--status-fd reaches dpkg"
rc=0
"$UNPKG" --root="$r" -P beta gamma >/dev/null || rc=$?
assert_status 0 "$rc" "unpkg -P"
[ ! -e "$r/etc/gamma.conf" ] || check_fail "--purge left the conffile"
dpkg --root="$r" --audit >"$D/pass.audit" 2>&1
assert_empty "$D/pass.audit" "dpkg --audit after remove and purge"
dpkg-query --root="$r" -W >"$D/pass.q" 2>&1
assert_empty "$D/pass.q" "the database after remove and purge"

section "unpkg's own options are not handed to dpkg"
printf '#!/bin/sh\nfor a; do echo "[$a]"; done\n' >"$D/dpkg-args"
chmod +x "$D/dpkg-args"
rc=0
UNPKG_DPKG=$D/dpkg-args "$UNPKG" --stats --sync=uring --root "$r" \
	--sync batch -l --stats -- --stats >"$D/args.out" 2>&1 || rc=$?
assert_status 0 "$rc" "-l with --stats and --sync"
printf '[--root]\n[%s]\n[-l]\n[--]\n[--stats]\n' "$r" >"$D/args.want"
assert_same_file "$D/args.want" "$D/args.out" "dpkg's arguments"
rc=0
"$UNPKG" --stats --sync=batch --root="$r" -l >"$D/args.l" 2>&1 || rc=$?
assert_status 0 "$rc" "-l --stats through stock dpkg"

section "the recursion guard"
ln -s "$UNPKG" "$D/dpkg-link"
rc=0
UNPKG_DPKG=$D/dpkg-link "$UNPKG" -l >"$D/guard.out" 2>&1 || rc=$?
assert_status 2 "$rc" "UNPKG_DPKG is a link to unpkg"
assert_grep 'is unpkg itself' "$D/guard.out" "recursion message"
cp "$UNPKG" "$D/dpkg-copy"
rc=0
timeout 20 env UNPKG_DPKG="$D/dpkg-copy" "$UNPKG" -l >"$D/guard2.out" 2>&1 || rc=$?
assert_status 2 "$rc" "UNPKG_DPKG is a copy of unpkg"
rc=0
UNPKG_DPKG=$D/no-such-dpkg "$UNPKG" -l >"$D/guard3.out" 2>&1 || rc=$?
assert_status 2 "$rc" "UNPKG_DPKG does not exist"
assert_grep 'cannot run dpkg' "$D/guard3.out" "missing dpkg message"

section "--recursive"
mk delta1 delta 1 all d
mk eps1 eps 1 all e
mk zeta1 zeta 1 all z
t=$D/tree
mkdir -p "$t/a/c" "$t/b" "$t/.h" "$t/x.deb" "$t/a-b" "$D/ext" "$D/tree2"
cp "$D/alpha1.deb" "$t/a/c/z.deb"
cp "$D/gamma.deb" "$t/a-b/g.deb"
cp "$D/beta.deb" "$t/b/beta.deb"
cp "$D/delta1.deb" "$t/.h/d.deb"
cp "$D/eps1.deb" "$D/ext/e.deb"
cp "$D/zeta1.deb" "$D/tree2/z.deb"
cp "$D/clash.deb" "$t/A.DEB"		# not *.deb: not found
echo text >"$t/a/readme.txt"
ln -s ../../ext "$t/a/link"		# followed
ln -s .. "$t/b/loop"			# a loop: not followed
mkroot "$D/u-rec" && mkroot "$D/d-rec"
both rec --unpack -R "$t/" "$D/tree2"
assert_status 0 "$URC" "unpkg -R"
assert_status 0 "$DRC" "dpkg -R"
grep '^Unpacking' "$D/rec.u.out" >"$D/rec.u.order"
grep '^Unpacking' "$D/rec.d.out" >"$D/rec.d.order"
assert_same_file "$D/rec.d.order" "$D/rec.u.order" "the archives -R finds, in dpkg's order"
[ "$(wc -l <"$D/rec.u.order")" -eq 6 ] || check_fail "-R: not 6 archives found"
compare_trees "$D/u-rec" "$D/d-rec" "-R"
compare_dbs "$D/u-rec" "$D/d-rec" "-R"
compare_queries "$D/u-rec" "$D/d-rec" --unpack alpha beta gamma delta eps zeta
mkdir -p "$D/empty"
for bad in "$D/empty" "$D/alpha1.deb" "$D/nope" ""; do
	rc=0 drc=0
	# shellcheck disable=SC2086 # "" is no argument
	"$UNPKG" --root="$D/u-rec" --unpack -R $bad >/dev/null 2>"$D/rec.err" || rc=$?
	# shellcheck disable=SC2086
	dpkg --root="$D/d-rec" --unpack -R $bad >/dev/null 2>&1 || drc=$?
	assert_status "$drc" "$rc" "-R ${bad:-(nothing)}: exit status as dpkg's"
done

section "dpkg's option syntax and errors"
r=$D/syn
mkroot "$r"
# usage errors: the same exit status as dpkg, nothing done
while IFS= read -r line; do
	# shellcheck disable=SC2086
	{ rc=0; "$UNPKG" --root="$r" $line >/dev/null 2>"$D/syn.err" || rc=$?; }
	# shellcheck disable=SC2086
	{ drc=0; dpkg --root="$r" $line >/dev/null 2>&1 || drc=$?; }
	assert_status "$drc" "$rc" "unpkg $line (dpkg exits $drc)"
	[ "$rc" -ne 0 ] || continue
	assert_grep '^unpkg: error: ' "$D/syn.err" "unpkg $line: message"
done <<EOF
--no-such-option -i $D/alpha1.deb
-Q -i $D/alpha1.deb
--force-bogus -i $D/alpha1.deb
--refuse-depends,bogus -i $D/alpha1.deb
--force=depends -i $D/alpha1.deb
--no-triggers=1 -i $D/alpha1.deb
--status-fd x -i $D/alpha1.deb
--status-fd 77 -i $D/alpha1.deb
--abort-after -1 -i $D/alpha1.deb
-D9 -i $D/alpha1.deb
-i --unpack $D/alpha1.deb
-i
--unpack
$D/alpha1.deb
-i $D/alpha1.deb --root=$r
EOF
[ ! -e "$r/usr" ] || check_fail "a usage error installed something"
assert_grep "cannot access archive '--root=" "$D/syn.err" "options end at the first operand"
# what apt passes, and the rest of dpkg's options: accepted
rc=0
"$UNPKG" --root="$r" --status-fd 3 --no-triggers --unpack --auto-deconfigure \
	--force-confold --force-confdef --abort-after=5 -D0 --debug=1 --no-debsig \
	--no-pager --triggers --no-triggers -B --force-depends,unsafe-io \
	--no-force-unsafe-io --refuse-downgrade --force-downgrade \
	--force-remove-essential --force-security-mac -- "$D/alpha1.deb" \
	3>/dev/null >/dev/null 2>"$D/apt.err" || rc=$?
assert_status 0 "$rc" "apt's options"
show_file "$D/apt.err" "stderr"
assert_grep '^Status: install ok unpacked' "$r/var/lib/dpkg/status" "installed with apt's options"
rc=0
"$UNPKG" --root="$r" -iB "$D/alpha1.deb" >/dev/null || rc=$?
assert_status 0 "$rc" "bundled short options"
# a force unpkg does not implement yet: accepted, with a warning
rc=0
"$UNPKG" --root="$r" --force-overwrite-dir -i "$D/alpha1.deb" >/dev/null 2>"$D/ow.err" || rc=$?
assert_status 0 "$rc" "--force-overwrite-dir"
assert_grep 'warning: --force-overwrite-dir is not implemented' "$D/ow.err" "--force-overwrite-dir warning"
# --force-help: dpkg's names, no more, no less
"$UNPKG" --force-help >"$D/fh.u"
dpkg --force-help >"$D/fh.d"
for f in "$D/fh.u" "$D/fh.d"; do
	sed -nE 's/^  (\[.\]|   ) ([a-z-]+) .*/\2/p' "$f" | sort >"$f.names"
done
assert_same_file "$D/fh.d.names" "$D/fh.u.names" "--force-help names"

section "dpkg's configuration goes through the same parser"
r=$D/cfg
mkroot "$r"
printf 'log "%s"\nforce-depends,confold\n# a comment\n\nno-debsig\n' "$D/cfg.log" \
	>"$UNPKG_CONFDIR/dpkg.cfg.d/test"
rc=0
"$UNPKG" --root="$r" --unpack "$D/beta.deb" >/dev/null || rc=$?
assert_status 0 "$rc" "configuration options"
assert_grep "^[0-9-]+ [0-9:]+ status unpacked beta:$ARCH 3.0-1$" "$D/cfg.log" "log from the configuration"
for bad in "bogus-opt" "status-fd" "no-triggers 1" "force-bogus"; do
	printf '%s\n' "$bad" >"$UNPKG_CONFDIR/dpkg.cfg.d/test"
	rc=0
	"$UNPKG" --root="$r" --unpack "$D/beta.deb" >/dev/null 2>"$D/cfg.err" || rc=$?
	assert_status 2 "$rc" "configuration line '$bad'"
	# an action handed to dpkg leaves the configuration to dpkg
	rc=0
	"$UNPKG" --root="$r" -l >/dev/null 2>&1 || rc=$?
	assert_status 0 "$rc" "-l with configuration line '$bad'"
done
rm "$UNPKG_CONFDIR/dpkg.cfg.d/test"
# dpkg.cfg may name the action
printf 'unpack\n' >"$UNPKG_CONFDIR/dpkg.cfg"
rc=0
"$UNPKG" --root="$r" "$D/alpha1.deb" >"$D/cfgact.out" 2>&1 || rc=$?
assert_status 0 "$rc" "an action from dpkg.cfg"
assert_grep '^Unpacking alpha' "$D/cfgact.out" "action from dpkg.cfg"
rm "$UNPKG_CONFDIR/dpkg.cfg"

section "hooks and the environment"
r=$D/hook
mkroot "$r"
HOOKLOG=$D/hook.log
export HOOKLOG
rc=0
"$UNPKG" --root="$r" --pre-invoke='echo "pre $DPKG_HOOK_ACTION $DPKG_ROOT" >>"$HOOKLOG"' \
	--post-invoke='echo "post $DPKG_HOOK_ACTION" >>"$HOOKLOG"' \
	--unpack "$D/beta.deb" >/dev/null 2>&1 || rc=$?
assert_status 0 "$rc" "hooks"
printf 'pre unpack %s\npost unpack\n' "$r" >"$D/hook.want"
assert_same_file "$D/hook.want" "$D/hook.log" "hook order and environment"
rc=0
"$UNPKG" --root="$r" --pre-invoke=false --unpack "$D/alpha1.deb" >/dev/null 2>&1 || rc=$?
assert_status 2 "$rc" "a failing pre-invoke hook"
dpkg-query --root="$r" -W alpha >/dev/null 2>&1 && check_fail "a failing hook did not stop the run"

section "options only dpkg implements hand the run to dpkg"
r=$D/deleg
mkroot "$r"
"$UNPKG" --root="$r" -i "$D/alpha1.deb" >/dev/null
cp "$r/var/lib/dpkg/status" "$D/deleg.before"
rc=0
"$UNPKG" --root="$r" --no-act -i "$D/alpha2.deb" >/dev/null 2>&1 || rc=$?
assert_status 0 "$rc" "--no-act"
assert_same_file "$D/deleg.before" "$r/var/lib/dpkg/status" "--no-act changes nothing"
rc=0
"$UNPKG" --root="$r" -E -i "$D/alpha1.deb" >"$D/deleg.out" 2>&1 || rc=$?
assert_status 0 "$rc" "-E"
assert_grep 'already installed, skipping' "$D/deleg.out" "-E is dpkg's"
"$UNPKG" --root="$r" -i "$D/alpha2.deb" >/dev/null
rm -rf "$D/deleg-dpkg"
cp -a "$r" "$D/deleg-dpkg"
rc=0 drc=0
"$UNPKG" --root="$r" -G -i "$D/alpha1.deb" >"$D/deleg2.out" 2>&1 || rc=$?
dpkg --root="$D/deleg-dpkg" -G -i "$D/alpha1.deb" >"$D/deleg2.d.out" 2>&1 || drc=$?
assert_status "$drc" "$rc" "-G -i of an older version (dpkg exits $drc)"
assert_grep 'will not downgrade' "$D/deleg2.out" "-G is dpkg's"
compare_trees "$r" "$D/deleg-dpkg" "-G"
compare_dbs "$r" "$D/deleg-dpkg" "-G"
compare_queries "$r" "$D/deleg-dpkg" -G alpha
dpkg-query --root="$r" -W -f '${Version}\n' alpha >"$D/deleg.v"
echo 2.0 >"$D/deleg.want"
assert_same_file "$D/deleg.want" "$D/deleg.v" "-G kept the newer version"

section "apt-get with Dir::Bin::dpkg pointing at unpkg"
if ! command -v apt-get >/dev/null || ! command -v dpkg-scanpackages >/dev/null; then
	skip_part "apt-get" "apt-get or dpkg-scanpackages (dpkg-dev) is missing"
else
	r=$D/apt
	repo=$D/repo
	mkroot "$r"
	mkdir -p "$repo" "$r/etc/apt/apt.conf.d" "$r/etc/apt/preferences.d" \
		"$r/var/lib/apt/lists/partial" "$r/var/cache/apt/archives/partial" \
		"$r/var/log/apt"
	cp "$D/alpha2.deb" "$D/beta.deb" "$D/gamma.deb" "$repo/"
	(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null 2>/dev/null >Packages)
	echo "deb [trusted=yes] file:$repo ./" >"$r/etc/apt/sources.list"
	# the whole configuration in one file, read before any of the host's
	cat >"$D/apt.conf" <<-EOF
	Dir "$r/";
	Dir::State::status "$r/var/lib/dpkg/status";
	Dir::Bin::dpkg "$UNPKG";
	DPkg::Options { "--root=$r"; "--log=$D/apt.dpkg.log"; };
	APT::Architecture "$ARCH";
	APT::Sandbox::User "root";
	Debug::NoLocking "true";
	DPkg::Use-Pty "false";
	Acquire::Languages "none";
	EOF
	export APT_CONFIG=$D/apt.conf
	aptopts=()
	rc=0
	apt-get "${aptopts[@]}" update >"$D/apt.update" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		show_file "$D/apt.update" "apt-get update"
		check_fail "apt-get update of a file: repository failed"
	else
		rc=0
		DEBIAN_FRONTEND=noninteractive apt-get "${aptopts[@]}" -y install \
			alpha beta gamma >"$D/apt.out" 2>&1 || rc=$?
		show_file "$D/apt.out" "apt-get install"
		assert_status 0 "$rc" "apt-get install through unpkg"
		dpkg-query --root="$r" -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' \
			>"$D/apt.q"
		printf 'alpha 2.0 ii \nbeta 3.0-1 ii \ngamma 1 ii \n' >"$D/apt.want"
		assert_same_file "$D/apt.want" "$D/apt.q" "the packages apt installed"
		assert_grep '^[0-9-]+ [0-9:]+ startup archives unpack$' "$D/apt.dpkg.log" \
			"apt ran unpkg --unpack"
		dpkg --root="$r" --audit >"$D/apt.audit" 2>&1
		assert_empty "$D/apt.audit" "dpkg --audit after apt"
		rc=0
		apt-get "${aptopts[@]}" -y purge gamma >"$D/apt.purge" 2>&1 || rc=$?
		assert_status 0 "$rc" "apt-get purge through unpkg (handed to dpkg)"
	fi
fi

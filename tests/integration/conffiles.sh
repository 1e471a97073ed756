#!/bin/bash
# conffiles.sh - dpkg's conffile rules at configuration, compared with
# dpkg: a conffile the administrator deleted stays deleted (but with
# --force-confmiss), one the administrator changed stays when the package
# did not change it, one both changed is kept with the package's as
# .dpkg-dist (--force-confold) or replaced with the local one as .dpkg-old
# (--force-confnew), an unmodified one is replaced.  Where both changed
# (or the administrator deleted one the package changed) and no option
# says what to do, dpkg asks (and fails without a terminal); unpkg never
# asks: it keeps the local state, dpkg's default answer.
TEST_NAME=conffiles
. "${TESTLIB:?}"

# cf_pkg VERSION CONTENT: package cf with conffile /etc/cf.conf.
cf_pkg() {
	local dir=$TESTDIR/src/$1
	new_pkg "$dir" cf "$1"
	mkdir -p "$dir/etc"
	echo "$2" >"$dir/etc/cf.conf"
	echo /etc/cf.conf >"$dir/DEBIAN/conffiles"
	build_deb "$TESTDIR/cf_$1.deb" "$dir"
}
cf_pkg 1.0 'setting = 1'
cf_pkg 1.1 'setting = 1'
cf_pkg 2.0 'setting = 2'
# the same content as 1.0, a file of another time
touch -d @1200000000 "$TESTDIR/src/1.1/etc/cf.conf"
build_deb "$TESTDIR/cf_1.1-newer.deb" "$TESTDIR/src/1.1"

# cf_roots NAME: twin roots TESTDIR/case-NAME/{unpkg,dpkg} holding cf
# 1.0, each installed by its own tool.
cf_roots() {
	local dir=$TESTDIR/case-$1 r
	for r in unpkg dpkg; do
		mkroot "$dir/$r"
	done
	unpkg_in "$dir/unpkg" -i "$TESTDIR/cf_1.0.deb" >/dev/null 2>&1 ||
		check_fail "$1: unpkg -i cf 1.0 failed"
	dpkg_in "$dir/dpkg" -i "$TESTDIR/cf_1.0.deb" >/dev/null 2>&1 ||
		hard_error "$1: dpkg -i cf 1.0 failed"
}

# cf_case NAME CHANGE ARGS...: cf 1.0 in twin roots, CHANGE (a command
# with ROOT for the root) applied to both, then the same run of each tool.
cf_case() {
	local name=$1 change=$2 dir=$TESTDIR/case-$1 r
	shift 2
	section "$name"
	cf_roots "$name"
	for r in unpkg dpkg; do
		ROOT=$dir/$r eval "$change"
	done
	# the change made both files at nearly the same time: make it the
	# same time, which the tree comparison sees
	[ ! -e "$dir/unpkg/etc/cf.conf" ] ||
		touch -r "$dir/unpkg/etc/cf.conf" "$dir/dpkg/etc/cf.conf"
	compare_roots_with_dpkg "$dir/unpkg" "$dir/dpkg" "$@"
	# what each says on its standard output of the conffile it replaces
	for r in unpkg dpkg; do
		grep '^Installing new version of config file' "$dir/$r.$r.out" \
			>"$dir/$r.said" || true
	done
	assert_same_file "$dir/dpkg.said" "$dir/unpkg.said" \
		"$name: the lines of the conffile on stdout (dpkg vs unpkg)"
}

cf_case deleted 'rm "$ROOT/etc/cf.conf"' -i "$TESTDIR/cf_1.1.deb"
[ ! -e "$TESTDIR/case-deleted/unpkg/etc/cf.conf" ] ||
	check_fail "deleted: the conffile came back"
cf_case deleted-confmiss 'rm "$ROOT/etc/cf.conf"' --force-confmiss \
	-i "$TESTDIR/cf_2.0.deb"
cf_case modified-same 'echo local >>"$ROOT/etc/cf.conf"' -i "$TESTDIR/cf_1.1.deb"
[ ! -e "$TESTDIR/case-modified-same/unpkg/etc/cf.conf.dpkg-dist" ] ||
	check_fail "modified-same: a .dpkg-dist for an unchanged conffile"
cf_case modified-confold 'echo local >>"$ROOT/etc/cf.conf"' --force-confold \
	-i "$TESTDIR/cf_2.0.deb"
cf_case modified-confnew 'echo local >>"$ROOT/etc/cf.conf"' --force-confnew \
	-i "$TESTDIR/cf_2.0.deb"
grep -q local "$TESTDIR/case-modified-confnew/unpkg/etc/cf.conf.dpkg-old" ||
	check_fail "modified-confnew: the local version is not cf.conf.dpkg-old"
cf_case unmodified true -i "$TESTDIR/cf_2.0.deb"
[ -s "$TESTDIR/case-unmodified/dpkg.said" ] ||
	hard_error "unmodified: dpkg said nothing of the new conffile (test outdated?)"
# dpkg keeps a conffile identical to the package's (and its time)
cf_case identical true -i "$TESTDIR/cf_1.1-newer.deb"
[ "$(stat -c %Y "$TESTDIR/case-identical/unpkg/etc/cf.conf")" != 1200000000 ] ||
	check_fail "identical: the package's copy replaced the conffile"

section "both changed, no option: unpkg keeps the local file"
r=$TESTDIR/case-noask
mkroot "$r"
unpkg_in "$r" -i "$TESTDIR/cf_1.0.deb" >/dev/null 2>&1 || check_fail "noask: cf 1.0"
echo local >>"$r/etc/cf.conf"
rc=0
unpkg_in "$r" -i "$TESTDIR/cf_2.0.deb" >"$r.out" 2>&1 </dev/null || rc=$?
assert_status 0 "$rc" "noask: unpkg -i cf 2.0"
grep -q local "$r/etc/cf.conf" || check_fail "noask: the local conffile was replaced"
assert_grep '^setting = 2$' "$r/etc/cf.conf.dpkg-dist" "noask: the package's version"
assert_grep 'cf.conf.dpkg-dist' "$r.out" "noask: the notice"

# tty_wait OUT N PID: until the conffile question is on the screen (OUT)
# for the Nth time, or the command (PID) has ended.
tty_wait() {
	local i
	for i in $(seq 600); do
		[ "$(grep -c 'default=N\] ?' "$1")" -lt "$2" ] || return 0
		kill -0 "$3" 2>/dev/null || return 0
		sleep 0.1
	done
}

# tty_run OUT COMMAND ANSWER...: COMMAND on a terminal (script(1)), each
# ANSWER typed once the next conffile question is on the screen (dpkg
# discards what was typed before), then the end of input, once the
# question after the last answer is asked (if the command asks it).  The
# exit status of COMMAND goes to TTY_RC.
tty_run() {
	local out=$1 cmd=$2 fifo=$TESTDIR/tty.fifo n=0 answer pid
	shift 2
	rm -f "$fifo"
	mkfifo "$fifo"
	DPKG_PAGER=cat timeout 300 script -qfec "$cmd" /dev/null \
		<"$fifo" >"$out" 2>&1 &
	pid=$!
	exec 9>"$fifo"
	for answer in "$@"; do
		n=$((n + 1))
		tty_wait "$out" "$n" "$pid"
		# (in a subshell: if the command is gone, SIGPIPE ends only it)
		(printf '%s\n' "$answer" >&9) 2>/dev/null || true
	done
	tty_wait "$out" $((n + 1)) "$pid"
	exec 9>&-
	TTY_RC=0
	wait "$pid" || TTY_RC=$?
}

if command -v script >/dev/null; then
	# Y installs the package's version (the local one as .dpkg-old), N
	# keeps the local one (the package's as .dpkg-dist), D shows the
	# differences and asks again, the end of input fails the package
	# (left unpacked, the new version waiting as .dpkg-new).
	for answers in Y N 'D Y' ''; do
		name=tty-${answers// /}
		name=${name%-}
		section "on a terminal, answers '${answers:-end of input}': as dpkg"
		dir=$TESTDIR/case-$name
		cf_roots "$name"
		for r in unpkg dpkg; do
			echo local >>"$dir/$r/etc/cf.conf"
			touch -d @1100000000 "$dir/$r/etc/cf.conf"
		done
		# shellcheck disable=SC2086 # one answer a word
		tty_run "$dir/unpkg.tty" \
			"$UNPKG --root=$dir/unpkg --refuse-unsafe-io -i $TESTDIR/cf_2.0.deb" \
			$answers
		urc=$TTY_RC
		# shellcheck disable=SC2086
		tty_run "$dir/dpkg.tty" \
			"dpkg --root=$dir/dpkg -i $TESTDIR/cf_2.0.deb" $answers
		show_file "$dir/unpkg.tty" "unpkg on the terminal"
		assert_status "$TTY_RC" "$urc" "$name: unpkg on a terminal (dpkg exits $TTY_RC)"
		grep -q 'cf\.conf (Y/I/N/O/D/Z) \[default=N\] ?' "$dir/unpkg.tty" ||
			check_fail "$name: dpkg's question was not asked"
		compare_trees "$dir/unpkg" "$dir/dpkg" "$name"
		compare_dbs "$dir/unpkg" "$dir/dpkg" "$name"
		compare_queries "$dir/unpkg" "$dir/dpkg" "$name" cf
	done
	grep -q '^+setting = 2' "$TESTDIR/case-tty-DY/unpkg.tty" ||
		check_fail "tty-DY: the differences were not shown"
	grep -q 'end of file on stdin at conffile prompt' "$TESTDIR/case-tty/unpkg.tty" ||
		check_fail "tty: no error at the end of input"
	grep -q 'end of file on stdin at conffile prompt' "$TESTDIR/case-tty/dpkg.tty" ||
		check_fail "tty: dpkg saw no end of input (test outdated?)"
else
	skip_part "the terminal question" "script(1) is missing"
fi

section "deleted by the administrator, changed by the package: stays deleted"
r=$TESTDIR/case-noask-deleted
mkroot "$r"
unpkg_in "$r" -i "$TESTDIR/cf_1.0.deb" >/dev/null 2>&1 || check_fail "noask-deleted: cf 1.0"
rm "$r/etc/cf.conf"
rc=0
unpkg_in "$r" -i "$TESTDIR/cf_2.0.deb" >"$r.out" 2>&1 </dev/null || rc=$?
assert_status 0 "$rc" "noask-deleted: unpkg -i cf 2.0"
[ ! -e "$r/etc/cf.conf" ] || check_fail "noask-deleted: the conffile came back"
assert_no_debris "$r"

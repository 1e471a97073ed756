#!/bin/bash
# trigproc.sh - trigger processing carried out by unpkg, compared with
# stock dpkg's.  For each case two twin roots are brought into the same
# state with stock dpkg; then the same command line runs through unpkg in
# one and through dpkg in the other: the exit statuses, the postinst
# calls in order, the --status-fd lines, the --log actions, the trees,
# the whole databases (triggers/ included) and dpkg's view of them must
# agree.  Cases: explicit and file triggers, the noawait variants, an
# awaiting package set free, a failing "postinst triggered", a trigger
# cycle (dpkg's detection and end state), a package whose dependencies
# are not configured, --triggers-only with names and with -a, the
# processing at the end of --install and --unpack, and that of the
# packages --no-triggers --configure is given.
TEST_NAME=trigproc
. "${TESTLIB:?}"
need_root
need_busybox

# tp_pkg NAME TRIGGERS [POSTINST-BODY [CONTROL-LINES [FILE...]]]: a
# package whose postinst logs its arguments, then runs POSTINST-BODY, and
# whose "triggers" member is TRIGGERS; FILEs are shipped.
tp_pkg() {
	local name=$1 triggers=$2 body=${3:-} extra=${4:-} dir f
	shift $(($# < 4 ? $# : 4))
	dir=$TESTDIR/src/$name
	rm -rf "$dir"
	new_pkg "$dir" "$name" 1.0
	[ -z "$extra" ] || printf '%s\n' "$extra" >>"$dir/DEBIAN/control"
	[ -z "$triggers" ] || printf '%s\n' "$triggers" >"$dir/DEBIAN/triggers"
	printf '#!/bin/sh\necho "%s postinst $*" >>/log\n%s\n' "$name" "$body" \
		>"$dir/DEBIAN/postinst"
	chmod 0755 "$dir/DEBIAN/postinst"
	for f in "$@"; do
		mkdir -p "$dir/${f%/*}"
		echo "$name" >"$dir/$f"
	done
	build_deb "$TESTDIR/$name.deb" "$dir"
}

# What a script's dpkg-trigger does (the roots have no dpkg): the
# activation of trigger $1, awaited by the running package, appended to
# triggers/Unincorp.
unincorp() {
	printf 'echo "%s $DPKG_MAINTSCRIPT_PACKAGE" >>/var/lib/dpkg/triggers/Unincorp' "$1"
}

tp_pkg ta 'interest ta'
tp_pkg tb 'interest tb'
tp_pkg tc 'interest tc'
tp_pkg act "$(printf 'activate ta\nactivate tb\nactivate tc')"
tp_pkg watch 'interest /usr/share/watched'
tp_pkg files '' '' '' usr/share/watched/sub/x
tp_pkg nwatch 'interest-noawait nt'
tp_pkg nact 'activate nt'
tp_pkg nact2 'activate-noawait ta'
tp_pkg bad 'interest tbad' '[ "$1" != triggered ] || exit 1'
tp_pkg kbad 'activate tbad'
tp_pkg cx 'interest tx' "[ \"\$1\" != triggered ] || $(unincorp ty)"
tp_pkg cy 'interest ty' "[ \"\$1\" != triggered ] || $(unincorp tx)"
tp_pkg kick 'activate tx'
tp_pkg dep 'interest td' '' 'Depends: lib'
tp_pkg lib ''
tp_pkg kdep 'activate td'
tp_pkg self 'interest ts' "[ \"\$1\" != configure ] || $(unincorp ts)"
tp_pkg nself '' "[ \"\$1\" != configure ] || $(unincorp nt)"

A=$TESTDIR/unpkg B=$TESTDIR/dpkg

# twins CMD...: fresh twin roots, each brought into its state by stock
# dpkg with the commands given as "dpkg ARGS" separated by ";;".
twins() {
	local r args
	for r in "$A" "$B"; do
		shell_root "$r"
		touch -h -d @1000000000 "$r/bin/busybox" "$r/bin/sh"
		args=()
		for x in "$@" ';;'; do
			if [ "$x" = ';;' ]; then
				[ ${#args[@]} -eq 0 ] ||
					dpkg --root="$r" --refuse-unsafe-io "${args[@]}" \
						>/dev/null 2>&1 || true
				args=()
			else
				args+=("$x")
			fi
		done
		: >"$r/log"
	done
}

# msgs PROGRAM FILE: the lines of FILE about triggers and errors, with
# PROGRAM's name for itself taken out and the indentation of an error's
# lines squeezed (dpkg indents the first one, unpkg each).
msgs() {
	grep -E 'rigger|cycle|chain|rror|depend|^ ' "$2" |
		sed -e "s/^$1:/X:/" -e 's/^  */ /' || true
}

# step WHAT ARGS...: the same command line through unpkg in A and stock
# dpkg in B, then every comparison.
step() {
	local what=$1 urc=0 drc=0 r
	shift
	section "$what: $*"
	rm -f "$A.log" "$B.log"
	"$UNPKG" --root="$A" --refuse-unsafe-io --status-fd 3 --log="$A.log" \
		"$@" >"$A.out" 2>&1 3>"$A.sf" || urc=$?
	dpkg --root="$B" --refuse-unsafe-io --status-fd 3 --log="$B.log" \
		"$@" >"$B.out" 2>&1 3>"$B.sf" || drc=$?
	show_file "$A.out" "unpkg output"
	show_file "$B.out" "dpkg output"
	assert_status "$drc" "$urc" "$what (dpkg exits $drc)"
	assert_same_file "$B/log" "$A/log" "$what: postinst calls"
	for r in "$A" "$B"; do
		# the actions and states, without the time stamps and the
		# startup line
		cut -d' ' -f3- "$r.log" | grep -v '^startup ' >"$r.acts" || true
	done
	case " $* " in
	*" -i "* | *" --unpack "*)
		# unpkg records the activations of an unpack after its
		# half-installed state, dpkg before it, and the states of the
		# package unpacked are the unpack's business: the same
		# activations, and the same lines from the trigger processing
		# on
		for r in "$A" "$B"; do
			grep 'triggers-pending' "$r.sf" | sort >"$r.sf.act" || true
			sed -n '/trigproc/,$p' "$r.sf" >"$r.sf.trig"
			grep 'triggers-pending' "$r.acts" | sort >"$r.acts.act" || true
			sed -n '/trigproc/,$p' "$r.acts" >"$r.acts.trig"
		done
		assert_same_file "$B.sf.act" "$A.sf.act" "$what: status-fd activations"
		assert_same_file "$B.sf.trig" "$A.sf.trig" "$what: status-fd lines from trigproc"
		assert_same_file "$B.acts.act" "$A.acts.act" "$what: --log activations"
		assert_same_file "$B.acts.trig" "$A.acts.trig" "$what: --log lines from trigproc"
		;;
	*)
		assert_same_file "$B.sf" "$A.sf" "$what: status-fd lines"
		assert_same_file "$B.acts" "$A.acts" "$what: --log lines"
		;;
	esac
	grep -q 'Processing triggers for' "$B.out" &&
		! grep -q 'Processing triggers for' "$A.out" &&
		check_fail "$what: unpkg said nothing of processing triggers"
	# the messages of trigger processing, dpkg's name for itself aside
	diff <(msgs dpkg "$B.out") <(msgs unpkg "$A.out") >"$TESTDIR/.msgs" ||
		{ check_fail "$what: messages differ:"; cat "$TESTDIR/.msgs" >&2; }
	CMP_OWNED_MTIMES=1 compare_trees "$A" "$B" "$what" log
	compare_dbs "$A" "$B" "$what"
	compare_queries "$A" "$B" "$what" ta tb tc act watch files nwatch \
		nact nact2 bad kbad cx cy kick dep lib kdep self nself
}

D=$TESTDIR
twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb" ';;' --no-triggers -i "$D/act.deb"
step "explicit, by name (dpkg's order)" --triggers-only ta tb tc

twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb" ';;' --no-triggers -i "$D/act.deb"
step "explicit, one of three by name" --triggers-only tc
step "the rest, -a" --triggers-only -a

twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb" ';;' --no-triggers -i "$D/act.deb"
step "a package with no triggers pending, by name" --triggers-only act ta
step "--pending" --triggers-only --pending

twins -i "$D/watch.deb" ';;' --no-triggers -i "$D/files.deb"
step "file trigger" --triggers-only -a

twins -i "$D/nwatch.deb" "$D/ta.deb" ';;' --no-triggers -i "$D/nact.deb" \
	"$D/nact2.deb"
step "interest-noawait and activate-noawait" --triggers-only -a

twins -i "$D/bad.deb" ';;' --no-triggers -i "$D/kbad.deb"
step "a failing postinst triggered" --triggers-only -a
step "again, half-configured now" --triggers-only -a

twins -i "$D/cx.deb" "$D/cy.deb" ';;' --no-triggers -i "$D/kick.deb"
step "a trigger cycle" --triggers-only -a

twins -i "$D/lib.deb" "$D/dep.deb" ';;' --unpack "$D/lib.deb"
step "dependencies not configured at the end of --unpack: left pending" \
	--unpack "$D/kdep.deb"
step "dependencies not configured, -a" --triggers-only -a
step "dependencies not configured, by name" --triggers-only dep
step "configured, then processed" --configure lib

twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb" ';;' --no-triggers -i "$D/act.deb"
step "at the end of --install, triggers pending before" -i "$D/act.deb"

# dpkg processes the triggers of the packages --configure queues even
# with --no-triggers (apt's --no-triggers --configure --pending after a
# removal that activated ldconfig)
twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb" ';;' --no-triggers -i "$D/act.deb"
step "--no-triggers --configure of a package with triggers pending" \
	--no-triggers --configure tc
step "--no-triggers --configure --pending" --no-triggers --configure --pending

twins -i "$D/nwatch.deb" "$D/ta.deb" ';;' --unpack "$D/nself.deb" \
	';;' --no-triggers -i "$D/nact2.deb"
step "--no-triggers --configure -a: what a postinst activates stays pending" \
	--no-triggers --configure -a

twins -i "$D/bad.deb" ';;' --no-triggers -i "$D/kbad.deb"
step "--no-triggers --configure -a, a failing postinst triggered" \
	--no-triggers --configure -a

twins -i "$D/cx.deb" "$D/cy.deb" ';;' --no-triggers -i "$D/kick.deb"
step "--no-triggers --configure -a, a trigger cycle" --no-triggers --configure -a

twins -i "$D/ta.deb" "$D/tb.deb" "$D/tc.deb"
step "at the end of --install" -i "$D/act.deb"
step "at the end of --install, file trigger" -i "$D/watch.deb" "$D/files.deb"
step "a script's dpkg-trigger at the end of --install" -i "$D/self.deb"
step "... of an interest-noawait" -i "$D/nwatch.deb" "$D/nself.deb"
step "at the end of --unpack" --unpack "$D/act.deb"
step "--unpack --no-triggers" --no-triggers --unpack "$D/act.deb" "$D/files.deb"
step "then --triggers-only -a" --triggers-only -a


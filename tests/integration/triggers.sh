#!/bin/bash
# triggers.sh - dpkg's triggers: interests recorded when a package is
# unpacked, file triggers and declared activations, processed at the end
# of the run (by unpkg itself, as dpkg does) or, with --no-triggers, by a
# later dpkg --configure --pending, as apt runs it.  Each step is done with
# unpkg in one root and with dpkg in its twin; the postinst calls, the
# trees, the whole databases and dpkg's view of them must agree.
TEST_NAME=triggers
. "${TESTLIB:?}"
need_root
need_busybox

# trig_pkg DIR NAME VERSION TRIGGERS [FILE...]: a package whose postinst
# logs its arguments and whose "triggers" member is TRIGGERS.
trig_pkg() {
	local dir=$1 name=$2 version=$3 triggers=$4 f
	shift 4
	new_pkg "$dir" "$name" "$version"
	[ -z "$triggers" ] || printf '%s\n' "$triggers" >"$dir/DEBIAN/triggers"
	printf '#!/bin/sh\necho "%s postinst $*" >>/log\n' "$name" \
		>"$dir/DEBIAN/postinst"
	chmod 0755 "$dir/DEBIAN/postinst"
	for f in "$@"; do
		mkdir -p "$dir/${f%/*}"
		echo "$name $version" >"$dir/$f"
	done
	build_deb "$TESTDIR/$name-$version.deb" "$dir"
}
trig_pkg "$TESTDIR/s/watch1" watch 1.0 "$(printf '%s\n' \
	'interest /usr/share/watched' 'interest-noawait named-trig')"
trig_pkg "$TESTDIR/s/watch2" watch 2.0 'interest /usr/share/other'
trig_pkg "$TESTDIR/s/files" files 1.0 '' usr/share/watched/sub/x
trig_pkg "$TESTDIR/s/named" named 1.0 'activate-noawait named-trig' \
	usr/share/named/y
trig_pkg "$TESTDIR/s/quiet" quiet 1.0 '' usr/share/quiet/z
# interested in an explicit trigger only: no triggers/File for it
trig_pkg "$TESTDIR/s/solo" solo 1.0 'interest-noawait solo-trig'

A=$TESTDIR/unpkg B=$TESTDIR/dpkg
for r in "$A" "$B"; do
	shell_root "$r"
	# the same time in both twins: the tree comparison covers them
	touch -h -d @1000000000 "$r/bin/busybox" "$r/bin/sh"
done

# step WHAT ARGS...: the same dpkg command line through unpkg in A and
# stock dpkg in B, then compare the exit statuses, the postinst calls in
# order, the trees (but /log, written at run time and compared before),
# the whole databases (status, info/*.triggers, triggers/File, Unincorp
# and each trigger's file included) and dpkg's view of every package.
step() {
	local what=$1 urc=0 drc=0
	shift
	section "$what: $*"
	"$UNPKG" --root="$A" --refuse-unsafe-io "$@" >"$A.out" 2>&1 || urc=$?
	dpkg --root="$B" --refuse-unsafe-io "$@" >"$B.out" 2>&1 || drc=$?
	show_file "$A.out" "unpkg output"
	assert_status "$drc" "$urc" "$what (dpkg exits $drc)"
	assert_same_file "$B/log" "$A/log" "$what: postinst calls"
	compare_trees "$A" "$B" "$what" log
	compare_dbs "$A" "$B" "$what"
	compare_queries "$A" "$B" "$what" watch files named quiet solo
}

: >"$A/log"
: >"$B/log"
step "explicit interest only" -i "$TESTDIR/solo-1.0.deb"
step "interests" -i "$TESTDIR/watch-1.0.deb"
step "file trigger" -i "$TESTDIR/files-1.0.deb"
step "declared activation" -i "$TESTDIR/named-1.0.deb"
step "no trigger" -i "$TESTDIR/quiet-1.0.deb"
# apt's way: unpack without processing triggers, then configure with dpkg
step "reinstall, --no-triggers" --no-triggers --unpack "$TESTDIR/files-1.0.deb" \
	"$TESTDIR/named-1.0.deb"
step "pending triggers processed" --configure --pending
step "interests replaced" -i "$TESTDIR/watch-2.0.deb"
[ ! -e "$A/var/lib/dpkg/triggers/named-trig" ] ||
	check_fail "triggers/named-trig stays after the last interest in it went"
# dpkg removes File with the last interest in a file trigger
step "the last file trigger's interest removed" --purge watch
[ ! -e "$A/var/lib/dpkg/triggers/File" ] ||
	check_fail "triggers/File stays after the last interest in a file trigger went"

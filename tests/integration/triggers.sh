#!/bin/bash
# triggers.sh - dpkg's triggers: interests recorded when a package is
# unpacked, file triggers and declared activations, processed at the end
# of the run (by stock dpkg's --triggers-only) or, with --no-triggers, by a
# later dpkg --configure --pending, as apt runs it.  Each step is done with
# unpkg in one root and with dpkg in its twin; the postinst calls, the
# status files and triggers/File and its neighbours must agree.
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

A=$TESTDIR/unpkg B=$TESTDIR/dpkg
shell_root "$A"
shell_root "$B"

# step WHAT ARGS...: the same dpkg command line through unpkg in A and
# stock dpkg in B, then compare.
step() {
	local what=$1 urc=0 drc=0 f
	shift
	section "$what: $*"
	"$UNPKG" --root="$A" --refuse-unsafe-io "$@" >"$A.out" 2>&1 || urc=$?
	dpkg --root="$B" --refuse-unsafe-io "$@" >"$B.out" 2>&1 || drc=$?
	show_file "$A.out" "unpkg output"
	assert_status "$drc" "$urc" "$what (dpkg exits $drc)"
	assert_same_file "$B/log" "$A/log" "$what: postinst calls"
	grep -v '^$' "$A/var/lib/dpkg/status" >"$A.status" || true
	grep -v '^$' "$B/var/lib/dpkg/status" >"$B.status" || true
	assert_same_file "$B.status" "$A.status" "$what: status file"
	for f in File named-trig; do
		if [ -e "$B/var/lib/dpkg/triggers/$f" ] ||
			[ -e "$A/var/lib/dpkg/triggers/$f" ]; then
			assert_same_file "$B/var/lib/dpkg/triggers/$f" \
				"$A/var/lib/dpkg/triggers/$f" "$what: triggers/$f"
		fi
	done
}

: >"$A/log"
: >"$B/log"
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

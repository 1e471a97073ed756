#!/bin/bash
# notroot.sh - --force-not-root, run as an unprivileged user (nobody,
# through setpriv) on a root that user owns, compared with dpkg
# --force-not-root run the same way in a twin root: the tree (every path
# owned by the user, modes as the package gives them), the database and
# dpkg's view of it, the exit statuses.
#
#   install     a new package: directories, files (setuid included),
#               a symlink, a hard link, a conffile, a file of another
#               owner in the archive
#   upgrade     a second version over it: files replaced (their backups
#               made and dropped), one removed, the conffile changed
#   strategies  each commit strategy (--sync=dpkg, batch, uring, syncfs)
#               as the user: same tree, and the strategy's syncs made
#   script      a package with a postinst: neither can chroot as the user
#               (both fail, the package half-configured)
#   refused     without --force-not-root both refuse the user (exit 2)
. "${TESTLIB:?TESTLIB is not set}"

need_cmd setpriv
id nobody >/dev/null 2>&1 || skip "no user nobody"
AS_USER=(setpriv --reuid=nobody --regid=nogroup --clear-groups
	env HOME=/nonexistent)
# the user must reach the packages and its roots
chmod 0755 "$TESTDIR"

# user_root DIR: an empty root that the user owns.
user_root() {
	mkdir -p "$1"
	chown nobody:nogroup "$1"
}

# as_user PREFIX CMD...: CMD run as the user, its output in PREFIX.out
# and PREFIX.err, its exit status in RUN_RC.
as_user() {
	local prefix=$1
	shift
	run_logged "$prefix" "${AS_USER[@]}" "$@"
}

# nr_pkg VERSION: package nr.  Staged as root, with the owners and modes
# the archive keeps.
nr_pkg() {
	local d=$TESTDIR/src/$1
	new_pkg "$d" nr "$1"
	mkdir -p "$d/usr/bin" "$d/usr/share/nr/sub" "$d/etc"
	echo "tool $1" >"$d/usr/bin/nr-tool"
	chmod 0755 "$d/usr/bin/nr-tool"
	echo "suid $1" >"$d/usr/bin/nr-suid"
	chmod 04755 "$d/usr/bin/nr-suid"
	echo "data $1" >"$d/usr/share/nr/data"
	ln -f "$d/usr/share/nr/data" "$d/usr/share/nr/sub/hardlink"
	ln -s ../bin/nr-tool "$d/usr/share/nr/tool-link"
	echo "owned $1" >"$d/usr/share/nr/owned"
	chown 1234:1234 "$d/usr/share/nr/owned"
	chmod 0750 "$d/usr/share/nr/sub"
	echo "setting = $1" >"$d/etc/nr.conf"
	echo /etc/nr.conf >"$d/DEBIAN/conffiles"
	if [ "$1" = 1.0 ]; then
		echo 'only in 1.0' >"$d/usr/share/nr/old"
	fi
	build_deb "$TESTDIR/nr_$1.deb" "$d"
}
nr_pkg 1.0
nr_pkg 2.0

# nr_run A B WHAT ARG...: the same run as the user, unpkg in A, dpkg in B,
# compared.
nr_run() {
	local a=$1 b=$2 what=$3
	shift 3
	as_user "$a.unpkg" "$UNPKG" --root="$a" "$@"
	local urc=$RUN_RC
	as_user "$b.dpkg" dpkg --root="$b" "$@"
	note "$what: unpkg exit $urc, dpkg exit $RUN_RC"
	show_file "$a.unpkg.err" "unpkg stderr"
	assert_status "$RUN_RC" "$urc" "$what: unpkg $* as the user"
	compare_trees "$a" "$b" "$what"
	compare_dbs "$a" "$b" "$what"
}

# ---------------------------------------------------------------------------
section "install and upgrade as the user"

A=$TESTDIR/nr/unpkg B=$TESTDIR/nr/dpkg
user_root "$A"
user_root "$B"
nr_run "$A" "$B" install --force-not-root --refuse-unsafe-io -i "$TESTDIR/nr_1.0.deb"
[ "$(stat -c %U "$A/usr/share/nr/owned")" = nobody ] ||
	check_fail "install: the file is not the user's"
[ "$(stat -c %a "$A/usr/bin/nr-suid")" = 4755 ] ||
	check_fail "install: the setuid mode was not kept"
compare_queries "$A" "$B" -i nr
nr_run "$A" "$B" upgrade --force-not-root --refuse-unsafe-io -i "$TESTDIR/nr_2.0.deb"
[ ! -e "$A/usr/share/nr/old" ] || check_fail "upgrade: the old file stayed"
compare_queries "$A" "$B" -i nr
assert_no_debris "$A" "upgrade as the user"

# ---------------------------------------------------------------------------
section "strategies as the user"

dpkg_ref=$TESTDIR/strat/dpkg
user_root "$dpkg_ref"
as_user "$dpkg_ref" dpkg --root="$dpkg_ref" --force-not-root -i "$TESTDIR/nr_1.0.deb"
[ "$RUN_RC" -eq 0 ] || hard_error "dpkg --force-not-root as the user failed"
for s in dpkg batch uring syncfs; do
	r=$TESTDIR/strat/$s
	user_root "$r"
	as_user "$r" "$UNPKG" --root="$r" --force-not-root --sync="$s" --stats \
		-i "$TESTDIR/nr_1.0.deb"
	assert_status 0 "$RUN_RC" "--sync=$s as the user"
	show_file "$r.err" "unpkg --sync=$s stderr"
	compare_trees "$r" "$dpkg_ref" "--sync=$s"
	compare_dbs "$r" "$dpkg_ref" "--sync=$s"
	want=fdatasync
	[ "$s" != syncfs ] || want=syncfs
	assert_grep "^stats: sync mode: $s " "$r.out" "--sync=$s as the user"
	assert_grep "^stats: calls .* $want=[1-9]" "$r.out" "--sync=$s syncs as the user"
done

# ---------------------------------------------------------------------------
section "a postinst as the user: no chroot for the user, both fail"

d=$TESTDIR/src/nrscript
new_pkg "$d" nrscript 1.0
printf '#!/bin/sh\necho "postinst $*"\n' >"$d/DEBIAN/postinst"
chmod 0755 "$d/DEBIAN/postinst"
build_deb "$TESTDIR/nrscript_1.0.deb" "$d"
A=$TESTDIR/script/unpkg B=$TESTDIR/script/dpkg
user_root "$A"
user_root "$B"
nr_run "$A" "$B" script --force-not-root -i "$TESTDIR/nrscript_1.0.deb"
assert_status 1 "$RUN_RC" "dpkg as the user, a postinst"

# ---------------------------------------------------------------------------
section "refused: not root, no --force-not-root"

A=$TESTDIR/refused/unpkg B=$TESTDIR/refused/dpkg
user_root "$A"
user_root "$B"
nr_run "$A" "$B" refused -i "$TESTDIR/nr_1.0.deb"
assert_status 2 "$RUN_RC" "dpkg as the user without --force-not-root"

exit $((TEST_FAILURES > 0))

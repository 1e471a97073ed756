#!/bin/bash
# configure.sh - unpkg --configure against stock dpkg --configure.
#
# Each case unpacks the same packages with dpkg --unpack into twin roots
# (a static busybox as /bin/sh: the scripts run chrooted), changes both
# the same way, then configures with unpkg in one root and with dpkg in
# the other, and compares the exit statuses, the --status-fd lines, the
# postinst calls in order (/log), the tree, the whole database and
# dpkg's view of it.  Cases: packages named in an order dpkg reorders
# by Depends, a dependency cycle, a missing and a too old dependency,
# --pending, a failing postinst and the run after it, a package whose
# dependency's postinst fails, --force-depends, conffiles (new, changed
# by the administrator with --force-confold and --force-confnew, kept
# over an earlier NAME.dpkg-dist as a killed run left it), a
# package already configured and a name not installed.
TEST_NAME=configure
. "${TESTLIB:?}"
need_root
need_busybox

# cfg_pkg NAME VERSION [DEPENDS [CONFFILE_CONTENT]]: TESTDIR/NAME_VERSION.deb,
# whose postinst appends "NAME VERSION postinst ARGS" to /log and fails
# (exit 3) when the root holds /fail-NAME; with CONFFILE_CONTENT it ships
# the conffile /etc/NAME.conf; with NOPOSTINST=1 it has no postinst.
cfg_pkg() {
	local name=$1 version=$2 dir=$TESTDIR/src/$1-$2
	new_pkg "$dir" "$name" "$version"
	[ -z "${3:-}" ] || echo "Depends: $3" >>"$dir/DEBIAN/control"
	mkdir -p "$dir/usr/share/$name"
	echo "$version" >"$dir/usr/share/$name/v"
	if [ -n "${4:-}" ]; then
		mkdir -p "$dir/etc"
		echo "$4" >"$dir/etc/$name.conf"
		echo "/etc/$name.conf" >"$dir/DEBIAN/conffiles"
	fi
	cat >"$dir/DEBIAN/postinst" <<-EOF
	#!/bin/sh
	echo "$name $version postinst \$*" >>/log
	[ ! -e /fail-$name ] || exit 3
	EOF
	chmod 0755 "$dir/DEBIAN/postinst"
	[ "${NOPOSTINST:-0}" = 0 ] || rm "$dir/DEBIAN/postinst"
	build_deb "$TESTDIR/${name}_$version.deb" "$dir"
}
cfg_pkg a 1.0 b
cfg_pkg b 1.0
cfg_pkg c 1.0 d
cfg_pkg d 1.0 c
cfg_pkg e 1.0 zz
cfg_pkg f 1.0 'b (>= 2)'
cfg_pkg g 1.0 a
cfg_pkg x 1.0 y
NOPOSTINST=1 cfg_pkg y 1.0 z
cfg_pkg z 1.0 x
cfg_pkg cf 1.0 '' 'setting = 1'
cfg_pkg cf 2.0 '' 'setting = 2'

# cfg_roots NAME DEB...: twin roots TESTDIR/NAME/{unpkg,dpkg} with the
# DEBs unpacked by dpkg (a DEB "-i:X" is installed instead).
cfg_roots() {
	local dir=$TESTDIR/$1 r d
	shift
	for r in "$dir/unpkg" "$dir/dpkg"; do
		shell_root "$r"
		for d in "$@"; do
			case $d in
			-i:*) dpkg_in "$r" -i "$TESTDIR/${d#-i:}.deb" ;;
			*) dpkg_in "$r" --unpack "$TESTDIR/$d.deb" ;;
			esac >/dev/null 2>&1 || hard_error "dpkg setup of $d failed"
		done
		touch -h -d @1000000000 "$r/bin/busybox" "$r/bin/sh"
	done
}

# cfg_run NAME ARG...: unpkg --configure ARGs in TESTDIR/NAME/unpkg, dpkg
# in TESTDIR/NAME/dpkg, compared.
cfg_run() {
	local dir=$TESTDIR/$1 a b r urc=0 drc=0
	shift
	a=$dir/unpkg b=$dir/dpkg
	section "${dir##*/}: --configure $*"
	rm -f "$a.log" "$b.log"
	"$UNPKG" --root="$a" --refuse-unsafe-io --status-fd 3 --log="$a.log" \
		--configure "$@" 3>"$a.sf" >"$a.out" 2>"$a.err" </dev/null || urc=$?
	dpkg --root="$b" --refuse-unsafe-io --status-fd 3 --log="$b.log" \
		--configure "$@" 3>"$b.sf" >"$b.out" 2>"$b.err" </dev/null || drc=$?
	# the conffile-prompt line names the file in its root
	sed -i "s|$a/|ROOT/|g" "$a.sf"
	sed -i "s|$b/|ROOT/|g" "$b.sf"
	show_file "$a.out" "unpkg stdout"
	show_file "$a.err" "unpkg stderr"
	assert_status "$drc" "$urc" "unpkg --configure $* (dpkg exits $drc)"
	assert_same_file "$b.sf" "$a.sf" "status lines (dpkg vs unpkg)"
	# the --log lines without their time
	for r in "$a" "$b"; do
		cut -d' ' -f3- "$r.log" >"$r.log.cut"
	done
	assert_same_file "$b.log.cut" "$a.log.cut" "--log lines (dpkg vs unpkg)"
	if [ -e "$b/log" ] || [ -e "$a/log" ]; then
		assert_same_file "$b/log" "$a/log" "postinst calls (dpkg vs unpkg)"
	fi
	# dpkg's words for the errors, and its empty line after them
	for r in "$a" "$b"; do
		awk '/^ +(package|no package|dependency problems|installed|Package|Version|[a-z]+ depends)/ { print; w = 1; next }
			/^$/ && w { print } { w = 0 }' "$r.err" >"$r.why"
	done
	assert_same_file "$b.why" "$a.why" "error messages"
	compare_trees "$a" "$b" "--configure $*" log
	compare_dbs "$a" "$b" "--configure $*"
	compare_queries "$a" "$b" "--configure" \
		$(sed -n 's/^Package: //p' "$b/var/lib/dpkg/status")
}

# Named in an order dpkg changes: b before a (Depends), e and f fail (zz
# missing, b too old), the cycle c <-> d broken at c.
cfg_roots order a_1.0 c_1.0 e_1.0 f_1.0 d_1.0 b_1.0
cfg_run order a c e f d b
grep -q 'f depends on b (>= 2); however:' "$TESTDIR/order/unpkg.err" ||
	check_fail "order: no reason given for f"
cfg_run order a
cfg_run order nosuch
# names that cannot be configured fail at their turn in the queue
cfg_roots queue a_1.0 b_1.0 c_1.0
cfg_run queue b nosuch a c

# A cycle through a package without a postinst: dpkg breaks it there.
cfg_roots cycle x_1.0 y_1.0 z_1.0
cfg_run cycle x y z

# --no-triggers: tf ships a file watch is interested in; configured, it
# awaits the trigger, which stays pending in watch.
cfg_pkg watch 1.0
echo "interest /usr/share/tf" >"$TESTDIR/src/watch-1.0/DEBIAN/triggers"
build_deb "$TESTDIR/watch_1.0.deb" "$TESTDIR/src/watch-1.0"
cfg_pkg tf 1.0
cfg_roots triggers -i:watch_1.0
for r in unpkg dpkg; do
	dpkg_in "$TESTDIR/triggers/$r" --no-triggers --unpack "$TESTDIR/tf_1.0.deb" \
		>/dev/null 2>&1 || hard_error "dpkg --unpack tf failed"
done
cfg_run triggers --no-triggers tf
grep -q '^Status: install ok triggers-awaited$' "$TESTDIR/triggers/unpkg/var/lib/dpkg/status" ||
	check_fail "triggers: tf does not await its trigger"

# --pending: the same packages, none named, in the order of dpkg's
# package table.
cfg_roots pending a_1.0 b_1.0 c_1.0 d_1.0 e_1.0 f_1.0
cfg_run pending -a

# A failing postinst: b half-configured, a (Depends: b) and g (Depends:
# a) left unpacked; then the run after it, once b's postinst works.
cfg_roots failing a_1.0 b_1.0 g_1.0
touch "$TESTDIR/failing/unpkg/fail-b" "$TESTDIR/failing/dpkg/fail-b"
touch -d @1000000000 "$TESTDIR"/failing/*/fail-b
cfg_run failing g a b
rm "$TESTDIR"/failing/*/fail-b
cfg_run failing b a g

# --abort-after: the run stops at the first failure, the rest unpacked.
cfg_roots abort e_1.0 f_1.0 b_1.0
cfg_run abort --abort-after=1 e f b

# --force-depends: e configured in spite of zz.
cfg_roots forced e_1.0
cfg_run forced --force-depends e

# Conffiles: new to the system, then changed by the administrator and
# by the package, with --force-confold and --force-confnew.
cfg_roots conffile-new cf_1.0
cfg_run conffile-new cf
for how in confold confnew; do
	cfg_roots conffile-$how -i:cf_1.0
	for r in unpkg dpkg; do
		echo local >>"$TESTDIR/conffile-$how/$r/etc/cf.conf"
		touch -d @1000000000 "$TESTDIR/conffile-$how/$r/etc/cf.conf"
		dpkg_in "$TESTDIR/conffile-$how/$r" --unpack "$TESTDIR/cf_2.0.deb" \
			>/dev/null 2>&1 || hard_error "dpkg --unpack cf 2.0 failed"
	done
	cfg_run conffile-$how --force-$how cf
done
# A kept conffile over an earlier NAME.dpkg-dist, in unpkg's root as a
# re-run killed inside its resumption of a kept conffile left it: the
# package's version back as NAME.dpkg-new, the earlier NAME.dpkg-dist
# still the commit's backup NAME.dpkg-dist.dpkg-tmp.  It must end as
# dpkg's run from the state before (no backup left).
cfg_roots conffile-distresume -i:cf_1.0
for r in unpkg dpkg; do
	echo local >>"$TESTDIR/conffile-distresume/$r/etc/cf.conf"
	echo earlier >"$TESTDIR/conffile-distresume/$r/etc/cf.conf.dpkg-dist"
	touch -d @1000000000 "$TESTDIR/conffile-distresume/$r/etc/cf.conf"*
	dpkg_in "$TESTDIR/conffile-distresume/$r" --unpack "$TESTDIR/cf_2.0.deb" \
		>/dev/null 2>&1 || hard_error "dpkg --unpack cf 2.0 failed"
done
mv "$TESTDIR/conffile-distresume/unpkg/etc/cf.conf.dpkg-dist" \
	"$TESTDIR/conffile-distresume/unpkg/etc/cf.conf.dpkg-dist.dpkg-tmp"
cfg_run conffile-distresume --force-confold cf
# The same configuration killed after its half-configured record, before
# the commit's backups went: cf half-configured, the new hash recorded,
# the earlier NAME.dpkg-dist still its backup in unpkg's root.  The run
# after it (postinst again, in both roots) must not leave the backup.
for r in unpkg dpkg; do
	sed -i '/^Package: cf$/,/^$/s/^Status: install ok installed$/Status: install ok half-configured/' \
		"$TESTDIR/conffile-distresume/$r/var/lib/dpkg/status"
	grep -q '^Status: install ok half-configured$' "$TESTDIR/conffile-distresume/$r/var/lib/dpkg/status" ||
		hard_error "cf is not half-configured in $r's root"
done
echo earlier >"$TESTDIR/conffile-distresume/unpkg/etc/cf.conf.dpkg-dist.dpkg-tmp"
cfg_run conffile-distresume cf
grep -q local "$TESTDIR/conffile-confnew/unpkg/etc/cf.conf.dpkg-old" ||
	check_fail "confnew: the local version is not cf.conf.dpkg-old"
grep -q local "$TESTDIR/conffile-confold/unpkg/etc/cf.conf" ||
	check_fail "confold: the local version is not kept"

#!/bin/bash
# existing.sh - what is already in the root or the database changes how
# dpkg unpacks a package, and unpkg must follow: dpkg-statoverride entries
# give a path their owner, group and mode whatever the archive says (a
# symlink only its owner and group); a symlink the package ships where a
# symlink already leads to the same directory is left as it is, and so is
# any directory where it ships a symlink.  Each case runs unpkg and dpkg on twin roots and compares
# (compare_roots_with_dpkg).
TEST_NAME=existing
. "${TESTLIB:?}"

# --- dpkg-statoverride -----------------------------------------------------
so=$TESTDIR/so
new_pkg "$so" so 1.0
mkdir -p "$so/usr/bin" "$so/var/spool/so"
printf '#!/bin/sh\n' >"$so/usr/bin/tool"
chmod 0755 "$so/usr/bin/tool"
ln -s tool "$so/usr/bin/tool-link"
build_deb "$TESTDIR/so.deb" "$so"

section "statoverride: a file, a directory and a symlink (owner and group only)"
a=$TESTDIR/so-unpkg b=$TESTDIR/so-dpkg
for r in "$a" "$b"; do
	mkroot "$r"
	printf '%s\n' 'root daemon 4750 /usr/bin/tool' \
		'#1 #2 0770 /var/spool/so' 'root daemon 0700 /usr/bin/tool-link' \
		>"$r/var/lib/dpkg/statoverride"
done
compare_roots_with_dpkg "$a" "$b" -i "$TESTDIR/so.deb"
[ "$(stat -c '%a %U %G' "$a/usr/bin/tool")" = '4750 root daemon' ] ||
	check_fail "statoverride: /usr/bin/tool is $(stat -c '%a %U %G' "$a/usr/bin/tool")"
[ "$(stat -c '%U %G' "$a/usr/bin/tool-link")" = 'root daemon' ] ||
	check_fail "statoverride: the symlink /usr/bin/tool-link is $(stat -c '%U %G' "$a/usr/bin/tool-link")"

section "statoverride: an unknown user is refused, as by dpkg"
r=$TESTDIR/so-bad
mkroot "$r"
echo 'no-such-user-x root 0755 /usr/bin/tool' >"$r/var/lib/dpkg/statoverride"
rc=0
unpkg_in "$r" -i "$TESTDIR/so.deb" >"$r.out" 2>&1 || rc=$?
assert_status 2 "$rc" "unknown user in statoverride"
assert_grep 'unknown user or group' "$r.out" "the message"

# upgrade_vs_dpkg PKG: PKG_1.0.deb installed by each on twin roots
# ($TESTDIR/PKG-unpkg and PKG-dpkg), then PKG_2.0.deb compared
upgrade_vs_dpkg() {
	local a=$TESTDIR/$1-unpkg b=$TESTDIR/$1-dpkg
	mkroot "$a"
	mkroot "$b"
	unpkg_in "$a" -i "$TESTDIR/$1_1.0.deb" >/dev/null 2>&1 || check_fail "unpkg -i $1 1.0"
	dpkg_in "$b" -i "$TESTDIR/$1_1.0.deb" >/dev/null 2>&1 || hard_error "dpkg -i $1 1.0"
	compare_roots_with_dpkg "$a" "$b" -i "$TESTDIR/$1_2.0.deb"
}

# --- a symlink to the same directory -----------------------------------------
# sl 1.0 and 2.0 ship a directory and two symlinks to it; 2.0's entries
# are newer: dpkg keeps the symlinks of 1.0, with their times.
for v in 1.0 2.0; do
	d=$TESTDIR/sl-$v
	new_pkg "$d" sl "$v"
	mkdir -p "$d/usr/share/z/Africa" "$d/usr/share/z/posix"
	echo "$v" >"$d/usr/share/z/Africa/f"
	ln -s Africa "$d/usr/share/z/link"
	ln -s ../Africa "$d/usr/share/z/posix/Africa"
	find "$d/usr" -exec touch -h -d "@$((1000000000 + ${v%%.*} * 1000))" {} +
	build_deb "$TESTDIR/sl_$v.deb" "$d"
done
section "a symlink leading to the same directory is kept"
upgrade_vs_dpkg sl
[ "$(stat -c %Y "$TESTDIR/sl-unpkg/usr/share/z/posix/Africa")" = 1000001000 ] ||
	check_fail "the symlink of 1.0 was replaced"

# --- a symlink where a directory is -------------------------------------------
# dr 1.0 ships the empty directory d and the directory e with a file;
# 2.0 ships d as a symlink to a file and e as a symlink to another
# directory: dpkg keeps both directories (it never replaces a directory
# with a symlink) and lists the paths as 2.0's.
for v in 1.0 2.0; do
	d=$TESTDIR/dr-$v
	new_pkg "$d" dr "$v"
	mkdir -p "$d/usr/share/dr/other"
	echo "$v" >"$d/usr/share/dr/file"
	if [ "$v" = 1.0 ]; then
		mkdir -p "$d/usr/share/dr/d" "$d/usr/share/dr/e"
		echo in-e >"$d/usr/share/dr/e/f"
	else
		ln -s file "$d/usr/share/dr/d"
		ln -s other "$d/usr/share/dr/e"
	fi
	build_deb "$TESTDIR/dr_$v.deb" "$d"
done
section "a directory stays where the package now ships a symlink"
upgrade_vs_dpkg dr
[ -d "$TESTDIR/dr-unpkg/usr/share/dr/d" ] && [ ! -L "$TESTDIR/dr-unpkg/usr/share/dr/d" ] ||
	check_fail "the empty directory was replaced by the symlink"

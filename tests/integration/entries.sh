#!/bin/bash
# entries.sh - every kind of tar entry a binary package can carry, installed
# by unpkg and by dpkg into twin roots, with --unpack and with -i.
#
# Fixture "entries" (built with dpkg-deb, so it is what real packages look
# like):
#   regular, empty and large (50 MB, non-zero, non-repeating) files;
#   nested directories, one 40 levels deep, and an empty directory;
#   absolute, relative, dangling symlinks and a symlink to a directory;
#   a hardlinked pair and a hardlink group of three across directories;
#   a fifo, a character and a block device;
#   setuid/setgid files, setgid and sticky directories, 0600/0700/0444/0000;
#   numeric owners without a name (1234:4321), named owners (daemon, mail);
#   names with spaces, tabs, UTF-8, shell metacharacters and a leading dash;
#   chosen mtimes (past, epoch+1) on files and on a symlink (dpkg-deb
#   clamps later ones to the build time);
#   a conffile (stays NAME.dpkg-new after --unpack, renamed by -i).
# Then an upgrade to 2.0-1 that changes each kind of entry (-i and
# --unpack), and a reinstall of 2.0-1 over itself.
# Fixture "tarquirks" (data.tar written by hand with GNU tar): a member
# whose user/group names disagree with its numeric ids, one whose names
# exist nowhere (dpkg resolves names first and falls back to the ids; unpkg
# must do the same), and a file with an mtime in 2099.

. "${TESTLIB:?TESTLIB is not set}"

stage=$TESTDIR/stage
new_pkg "$stage" entries 1.0-1 all
s=$stage/usr/share/entries
mkdir -p "$s" "$stage/usr/bin" "$stage/etc/entries" "$stage/dev"

# --- contents --------------------------------------------------------------
echo 'a regular file' >"$s/regular"
: >"$s/empty"
# 50 MB of distinct lines: no zero runs (nothing a sparse-file writer could
# skip) and no period a misplaced buffer could hide behind.
# Each line is 32 bytes: 1638400 lines make exactly 50 MiB.
seq -f '%015.0f large file line' 1 1638400 >"$s/large"
[ "$(stat -c %s "$s/large")" -eq 52428800 ] || hard_error "large file not 50 MB"

# --- directories -----------------------------------------------------------
deep=$s/deep
for i in $(seq -w 1 40); do
	deep=$deep/d$i
done
mkdir -p "$deep" "$s/empty-dir"
echo 'at the bottom' >"$deep/leaf"

# --- symlinks and hardlinks ------------------------------------------------
ln -s /usr/share/entries/regular "$s/link-absolute"
ln -s regular "$s/link-relative"
ln -s does/not/exist "$s/link-dangling"
ln -s deep/d01/d02 "$s/link-to-dir"
ln -s ../../share/entries/regular "$s/link-dotdot"
echo 'two names' >"$s/hardlink-a"
ln "$s/hardlink-a" "$s/hardlink-b"
mkdir -p "$s/group"
echo 'three names' >"$s/group/one"
ln "$s/group/one" "$s/group/two"
ln "$s/group/one" "$s/hardlink-three"

# --- special files ---------------------------------------------------------
mkfifo "$s/fifo"
mknod "$stage/dev/entries-null" c 1 3
mknod "$stage/dev/entries-loop" b 7 0

# --- modes and owners (chown before chmod: chown clears setuid bits) -------
printf '#!/bin/sh\necho setuid\n' >"$stage/usr/bin/entries-suid"
chmod 4755 "$stage/usr/bin/entries-suid"
printf '#!/bin/sh\necho setgid\n' >"$stage/usr/bin/entries-sgid"
chown root:mail "$stage/usr/bin/entries-sgid"
chmod 2755 "$stage/usr/bin/entries-sgid"
echo 'daemon owns me' >"$s/owned-daemon"
chown daemon:daemon "$s/owned-daemon"
chmod 4750 "$s/owned-daemon"
echo 'no name' >"$s/owned-numeric"
chown 1234:4321 "$s/owned-numeric"
mkdir "$s/dir-numeric"
chown 1234:4321 "$s/dir-numeric"
mkdir "$s/dir-mail"
chown mail:mail "$s/dir-mail"
chmod 2775 "$s/dir-mail"
mkdir "$s/dir-sticky"
chmod 1777 "$s/dir-sticky"
mkdir "$s/dir-private"
chmod 0700 "$s/dir-private"
echo secret >"$s/dir-private/mode-0600"
chmod 0600 "$s/dir-private/mode-0600"
echo exec >"$s/mode-0700"
chmod 0700 "$s/mode-0700"
echo ro >"$s/mode-0444"
chmod 0444 "$s/mode-0444"
echo none >"$s/mode-0000"
chmod 0000 "$s/mode-0000"

# --- names -----------------------------------------------------------------
echo spaces >"$s/name with  spaces "
echo tab >"$s/name	with	tabs"
echo utf8 >"$s/ünïcødé-日本語-😀"
echo meta >"$s/meta ;&|<>\$\`'\"*?[]{}()!#~%\\"
echo dash >"$s/-leading-dash"
mkdir "$s/dir with space"
echo inner >"$s/dir with space/é file"

# --- timestamps ------------------------------------------------------------
touch -d '2001-02-03 04:05:06 UTC' "$s/regular"
touch -d '@1' "$s/mode-0444"
touch -h -d '2010-10-10 10:10:10 UTC' "$s/link-relative"

# --- a conffile ------------------------------------------------------------
echo 'setting = 1' >"$stage/etc/entries/entries.conf"
echo 'dropped in 2.0' >"$stage/etc/entries/dropped.conf"
printf '%s\n' /etc/entries/entries.conf /etc/entries/dropped.conf \
	>"$stage/DEBIAN/conffiles"

deb=$TESTDIR/entries_1.0-1_all.deb
build_deb "$deb" "$stage"
note "fixture: $(dpkg-deb -c "$deb" | wc -l) entries, $(stat -c %s "$deb") bytes"

conf=etc/entries/entries.conf

section "--unpack"
compare_with_dpkg --unpack "$deb"
[ -f "$CMP_A/$conf.dpkg-new" ] || check_fail "--unpack: $conf.dpkg-new missing"
[ ! -e "$CMP_A/$conf" ] || check_fail "--unpack: $conf installed before configure"
[ "$(stat -c %s "$CMP_A/usr/share/entries/large" 2>/dev/null)" = 52428800 ] ||
	check_fail "--unpack: large file has the wrong size"

section "-i"
compare_with_dpkg -i "$deb"
[ -f "$CMP_A/$conf" ] || check_fail "-i: $conf missing"
[ ! -e "$CMP_A/$conf.dpkg-new" ] || check_fail "-i: $conf.dpkg-new left behind"
assert_no_debris "$CMP_A"
if ! grep -q '^Status: install ok installed$' "$CMP_A/var/lib/dpkg/status"; then
	check_fail "-i: status is not 'install ok installed'"
fi

# --- upgrade to 2.0-1, then reinstall ----------------------------------------
# Version 2.0-1 changes every kind of entry: removed files, a removed
# directory tree, new content, file <-> symlink swaps, a split hardlink
# pair, new modes and owners, a changed conffile (unmodified on disk, so no
# prompt).  Each side installs 1.0-1 with its own tool first.
stage2=$TESTDIR/stage2
cp -a "$stage" "$stage2"
s2=$stage2/usr/share/entries
sed -i 's/^Version: .*/Version: 2.0-1/' "$stage2/DEBIAN/control"
rm -r "$s2/empty" "$s2/fifo" "$s2/deep" "$s2/empty-dir"
echo 'a regular file, version 2' >"$s2/regular"
rm "$s2/link-relative"
echo 'was a symlink' >"$s2/link-relative"
rm "$s2/mode-0444"
ln -s regular "$s2/mode-0444"
rm "$s2/hardlink-b"
echo 'split from hardlink-a' >"$s2/hardlink-b"
chmod 0755 "$s2/mode-0700"
chown 2345:5432 "$s2/owned-numeric"
mkdir -p "$s2/new-dir"
echo 'new in 2.0' >"$s2/new-dir/file"
echo 'setting = 2' >"$stage2/etc/entries/entries.conf"
# a conffile dropped: kept on disk, listed, and marked obsolete
rm "$stage2/etc/entries/dropped.conf"
echo /etc/entries/entries.conf >"$stage2/DEBIAN/conffiles"
deb2=$TESTDIR/entries_2.0-1_all.deb
build_deb "$deb2" "$stage2"

# upgrade_roots MODE: twin roots with 1.0-1 installed by each tool; the
# roots are left in UP_A and UP_B.
upgrade_roots() {
	local dir
	dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
	UP_A=$dir/unpkg UP_B=$dir/dpkg
	mkroot "$UP_A"
	mkroot "$UP_B"
	unpkg_in "$UP_A" -i "$deb" >"$dir/unpkg-v1.log" 2>&1 ||
		check_fail "unpkg -i 1.0-1 before the upgrade failed: $(cat "$dir/unpkg-v1.log")"
	dpkg_in "$UP_B" -i "$deb" >"$dir/dpkg-v1.log" 2>&1 || hard_error "dpkg -i 1.0-1 failed"
}

section "upgrade 1.0-1 -> 2.0-1: -i"
upgrade_roots
compare_roots_with_dpkg "$UP_A" "$UP_B" -i "$deb2"
assert_no_debris "$UP_A"
[ ! -e "$UP_A/usr/share/entries/deep" ] || check_fail "upgrade: the dropped directory tree is still there"
assert_grep '^ /etc/entries/dropped.conf [0-9a-f]* obsolete$' "$UP_A/var/lib/dpkg/status" \
	"upgrade: the dropped conffile is recorded as obsolete"

section "reinstall 2.0-1 over itself: -i"
compare_roots_with_dpkg "$UP_A" "$UP_B" -i "$deb2"

section "upgrade 1.0-1 -> 2.0-1: --unpack"
upgrade_roots
compare_roots_with_dpkg "$UP_A" "$UP_B" --unpack "$deb2"

# --- tar details dpkg-deb does not produce ----------------------------------
qstage=$TESTDIR/tarquirks
q=usr/share/tarquirks
new_pkg "$qstage" tarquirks 1.0 all
mkdir -p "$qstage/$q"
echo 'named' >"$qstage/$q/by-name"
echo 'unnamed' >"$qstage/$q/no-such-name"
echo 'from the future' >"$qstage/$q/future"
touch -d '2099-12-31 23:59:59 UTC' "$qstage/$q/future"
make_control_tar "$qstage" "$TESTDIR/control.tar"
tar -C "$qstage" --format=gnu --owner=root:0 --group=root:0 --no-recursion \
	-cf "$TESTDIR/data.tar" ./ ./usr ./usr/share "./$q" "./$q/future"
tar -C "$qstage" --format=gnu --owner=mail:555 --group=daemon:556 \
	-rf "$TESTDIR/data.tar" "./$q/by-name"
tar -C "$qstage" --format=gnu --owner=unpkg-no-such-user:4444 \
	--group=unpkg-no-such-group:4445 -rf "$TESTDIR/data.tar" "./$q/no-such-name"
gzip -9n "$TESTDIR/control.tar"
xz "$TESTDIR/data.tar"
qdeb=$TESTDIR/tarquirks_1.0_all.deb
assemble_deb "$qdeb" "$TESTDIR/control.tar.gz" "$TESTDIR/data.tar.xz"

section "tarquirks: -i"
compare_with_dpkg -i "$qdeb"
expect="$(id -u mail):$(getent group daemon | cut -d: -f3)"
got=$(stat -c %u:%g "$CMP_A/$q/by-name" 2>/dev/null || echo missing)
[ "$got" = "$expect" ] ||
	check_fail "by-name: owner $got, expected $expect (names win over ids)"
got=$(stat -c %u:%g "$CMP_A/$q/no-such-name" 2>/dev/null || echo missing)
[ "$got" = 4444:4445 ] ||
	check_fail "no-such-name: owner $got, expected 4444:4445 (ids as fallback)"
got=$(stat -c %Y "$CMP_A/$q/future" 2>/dev/null || echo missing)
[ "$got" = 4102444799 ] || check_fail "future: mtime $got, expected 4102444799"

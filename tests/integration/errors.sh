#!/bin/bash
# errors.sh - runs that must fail without leaving a trace.
#
# Every case starts from a root that dpkg prepared (database initialised,
# package "base" installed), takes a snapshot (tree_manifest + db_manifest),
# runs unpkg -i on something broken and requires:
#   - the documented exit status (1; 2 for a missing file, as dpkg),
#   - a message on stderr starting "unpkg: " that names the package file
#     (or the path at fault) and the cause,
#   - the root exactly as in the snapshot, files and database, and no
#     *.dpkg-new / *.dpkg-tmp left anywhere.
# What stock dpkg does with the same input is logged as a note: dpkg is not
# the reference here (it records a "not-installed" stanza after a conflict,
# writes outside the root on "../" members, ...).
#
# Cases:
#   truncated      the victim package cut in the control member, in the
#                  data member's ar header, in the middle of data.tar.xz
#                  and one byte before its end
#   corrupted      bytes inverted in the middle of data.tar.xz, and in the
#                  middle of a later block of a data.tar.xz of several
#                  blocks (the message names the block); a byte of the
#                  CRC-32 and of the length in a data.tar.gz's trailer
#   not-a-deb      a text file, an empty file, an ar archive of other members;
#                  the text file in a fresh root (an empty directory, and one
#                  with var/lib), where the database skeleton unpkg makes
#                  must go again
#   missing        a file that does not exist (exit 2 like dpkg)
#   escape         a data.tar member "../escaped"
#   enospc         a 2 MB tmpfs as the root: a new package, and an upgrade of
#                  an installed one, both bigger than the free space
#   conflict       a file already owned by another package (installed by
#                  dpkg, and installed by unpkg)
#   mixed          a non-package between two good packages: compared with
#                  dpkg (both good ones installed, exit 1)
#   preinst        a package with a preinst: unpkg runs it and ends up
#                  exactly where dpkg does (exit 0)

. "${TESTLIB:?TESTLIB is not set}"

LOGS=$TESTDIR/logs
mkdir -p "$LOGS"

# --- fixtures ---------------------------------------------------------------

stage=$TESTDIR/base
new_pkg "$stage" base 1.0 all
mkdir -p "$stage/usr/share/base" "$stage/usr/bin" "$stage/etc"
echo 'base data' >"$stage/usr/share/base/data"
printf '#!/bin/sh\necho base\n' >"$stage/usr/bin/base-tool"
chmod 0755 "$stage/usr/bin/base-tool"
echo 'base = 1' >"$stage/etc/base.conf"
echo /etc/base.conf >"$stage/DEBIAN/conffiles"
BASE=$TESTDIR/base_1.0_all.deb
build_deb "$BASE" "$stage"

# The victim is big enough (about 3 MB unpacked, several files) for a
# streaming extractor to have written some files before it meets damage.
stage=$TESTDIR/victim
new_pkg "$stage" victim 1.0 all
v=$stage/usr/share/victim
mkdir -p "$v/sub" "$stage/etc" "$stage/usr/share/base"
for i in 1 2 3; do
	seq -f "victim file $i line %.0f" 1 40000 >"$v/part$i"
done
head -c 300000 /dev/urandom >"$v/sub/noise"
ln -s part1 "$v/link"
echo 'shared directory, new file' >"$stage/usr/share/base/from-victim"
echo 'victim = 1' >"$stage/etc/victim.conf"
echo /etc/victim.conf >"$stage/DEBIAN/conffiles"
VICTIM=$TESTDIR/victim_1.0_all.deb
build_deb "$VICTIM" "$stage"

# --- helpers ----------------------------------------------------------------

# error_root DIR: a primed root with base installed by dpkg.
error_root() {
	prime_root "$1"
	dpkg_in "$1" -i "$BASE" >/dev/null
}

# snapshot ROOT: the state a failed run must leave untouched.
snapshot() {
	tree_manifest "$1"
	db_manifest "$1"
}

# dpkg_note NAME ROOT SETUP_FN ARG...: run dpkg -i ARG... on ROOT prepared
# by SETUP_FN and log its exit status, whether the root stayed the same and
# its first error lines.
dpkg_note() {
	local name=$1 root=$2 setup=$3 before rc=0 same=no
	shift 3
	"$setup" "$root"
	before=$(snapshot "$root")
	dpkg_in "$root" -i "$@" >"$LOGS/$name.dpkg.out" 2>&1 || rc=$?
	if [ "$(snapshot "$root")" = "$before" ]; then
		same=yes
	fi
	note "dpkg (reference only): exit $rc, root unchanged: $same; it said:"
	grep -E 'error|warning' "$LOGS/$name.dpkg.out" | head -4 | sed 's/^/    dpkg| /' || true
}

# expect_failure NAME ROOT RC CAUSE_REGEX NAME_REGEX UNPKG_ARG...: run unpkg
# with UNPKG_ARGs on ROOT (prepared by the caller) and check the outcome
# described at the top.  CAUSE_REGEX and NAME_REGEX are extended regular
# expressions matched case-insensitively against stderr.
expect_failure() {
	local name=$1 root=$2 rc=$3 cause=$4 what=$5
	shift 5
	snapshot "$root" >"$LOGS/$name.before"
	run_logged "$LOGS/$name.unpkg" unpkg_in "$root" "$@"
	note "unpkg: exit $RUN_RC"
	show_file "$LOGS/$name.unpkg.out" "unpkg stdout"
	show_file "$LOGS/$name.unpkg.err" "unpkg stderr"
	assert_status "$rc" "$RUN_RC" "$name: unpkg"
	assert_grep '^unpkg: ' "$LOGS/$name.unpkg.err" "$name: message prefix"
	if ! grep -Eiq -- "$cause" "$LOGS/$name.unpkg.err"; then
		check_fail "$name: the message does not give the cause (/$cause/)"
	fi
	if ! grep -Eiq -- "$what" "$LOGS/$name.unpkg.err"; then
		check_fail "$name: the message does not name the file (/$what/)"
	fi
	snapshot "$root" >"$LOGS/$name.after"
	assert_same_file "$LOGS/$name.before" "$LOGS/$name.after" "$name: root before and after"
	assert_no_debris "$root"
}

# regex_quote STRING: STRING as a literal extended regular expression.
regex_quote() {
	printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}

CAUSE_TRUNC='trunc|end of (file|archive|data|stream|input)|eof|short read|premature|incomplete|unexpected|corrupt|damaged'
CAUSE_CORRUPT='corrupt|damaged|invalid|checksum|crc|data error|format|unexpected|trunc'

# --- truncated packages -----------------------------------------------------

read -r c_off c_size < <(ar_member_range "$VICTIM" control.tar)
read -r d_off d_size < <(ar_member_range "$VICTIM" data.tar)
note "victim: control.tar at $c_off (+$c_size), data.tar at $d_off (+$d_size), $(stat -c %s "$VICTIM") bytes"

for cut in \
	"in-control:$((c_off + c_size / 2))" \
	"in-data-header:$((d_off - 30))" \
	"in-data:$((d_off + d_size / 2))" \
	"at-end:$((d_off + d_size - 1))"; do
	where=${cut%%:*} len=${cut#*:}
	deb=$TESTDIR/truncated-$where.deb
	truncate_copy "$VICTIM" "$deb" "$len"
	section "truncated $where (first $len bytes)"
	dpkg_note "trunc-$where" "$TESTDIR/trunc-$where.dpkg" error_root "$deb"
	root=$TESTDIR/trunc-$where.unpkg
	error_root "$root"
	expect_failure "trunc-$where" "$root" 1 "$CAUSE_TRUNC" \
		"$(regex_quote "$(basename "$deb")")" -i "$deb"
done

# --- corrupted data.tar.xz ----------------------------------------------------

section "corrupted: 16 bytes inverted at 60% of data.tar.xz"
deb=$TESTDIR/corrupted.deb
cp "$VICTIM" "$deb"
flip_bytes "$deb" $((d_off + d_size * 6 / 10)) 16
dpkg_note corrupted "$TESTDIR/corrupted.dpkg" error_root "$deb"
error_root "$TESTDIR/corrupted.unpkg"
expect_failure corrupted "$TESTDIR/corrupted.unpkg" 1 "$CAUSE_CORRUPT" \
	"$(regex_quote "$(basename "$deb")")" -i "$deb"

# --- a damaged later block of a data.tar.xz of several blocks ------------------
# The victim's data.tar recompressed by xz -T2 in blocks of 256 KiB, which
# unpkg decodes with two threads; 16 bytes inverted in the middle of a
# later block.  The blocks before it are decoded and extracted first, so
# this is a failure in mid-extraction; the message must name the block
# (unpkg counts from 0 as the index does, xz --list from 1), which only the
# threaded decoder can.

work=$TESTDIR/blocks
mkdir -p "$work"
(cd "$work" && ar x "$VICTIM")
xz -dc "$work/data.tar.xz" >"$work/data.tar"
rm "$work/data.tar.xz"
xz -T2 --block-size=256KiB "$work/data.tar"
deb=$TESTDIR/corrupted-block.deb
assemble_deb "$deb" "$work"/control.tar* "$work/data.tar.xz"
nblocks=$(xz --robot --list "$work/data.tar.xz" | awk -F'\t' '$1 == "file" { print $3 }')
[ "$nblocks" -ge 6 ] || hard_error "data.tar.xz has $nblocks blocks, 6 or more expected"
k=$((nblocks / 2 + 1))
read -r b_off b_size < <(xz --robot --list -vv "$work/data.tar.xz" |
	awk -F'\t' -v k="$k" '$1 == "block" && $4 == k { print $5, $7 }')
read -r m_off _ < <(ar_member_range "$deb" data.tar)
section "corrupted: block $k of $nblocks of a data.tar.xz of several blocks"
flip_bytes "$deb" $((m_off + b_off + b_size / 2)) 16
dpkg_note corrupted-block "$TESTDIR/corrupted-block.dpkg" error_root "$deb"
error_root "$TESTDIR/corrupted-block.unpkg"
expect_failure corrupted-block "$TESTDIR/corrupted-block.unpkg" 1 "$CAUSE_CORRUPT" \
	"$(regex_quote "$(basename "$deb")")" -i "$deb"
# On one CPU unpkg decodes the stream sequentially, which cannot say where.
if [ "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -ge 2 ]; then
	assert_grep "block $((k - 1))([^0-9]|\$)" "$LOGS/corrupted-block.unpkg.err" \
		"corrupted-block: the damaged block named"
else
	skip_part "corrupted-block: the damaged block named" \
		"one CPU: unpkg decodes the stream sequentially, which cannot say where"
fi

# --- a damaged gzip trailer ---------------------------------------------------
# The victim's data.tar recompressed by gzip; a byte of the trailer's
# CRC-32, then of its length, inverted.  Only the trailer can tell: every
# entry decompresses, so the package must be refused at the end of
# data.tar, as dpkg-deb refuses it.

work=$TESTDIR/gz
mkdir -p "$work"
(cd "$work" && ar x "$VICTIM")
xz -dc "$work/data.tar.xz" | gzip -9n >"$work/data.tar.gz"
rm "$work/data.tar.xz"
gz_size=$(stat -c %s "$work/data.tar.gz")
for damage in crc:8 length:4; do
	what=${damage%%:*} back=${damage#*:}
	deb=$TESTDIR/gz-$what.deb
	assemble_deb "$deb" "$work"/control.tar* "$work/data.tar.gz"
	read -r m_off _ < <(ar_member_range "$deb" data.tar)
	section "corrupted: the $what in data.tar.gz's trailer"
	flip_bytes "$deb" $((m_off + gz_size - back)) 1
	dpkg_note "gz-$what" "$TESTDIR/gz-$what.dpkg" error_root "$deb"
	error_root "$TESTDIR/gz-$what.unpkg"
	expect_failure "gz-$what" "$TESTDIR/gz-$what.unpkg" 1 "$CAUSE_CORRUPT" \
		"$(regex_quote "$(basename "$deb")")" -i "$deb"
done

# --- not a package ------------------------------------------------------------

printf 'This is not a Debian package.\n' >"$TESTDIR/text.deb"
: >"$TESTDIR/empty.deb"
mkdir -p "$TESTDIR/other-ar"
echo one >"$TESTDIR/other-ar/one.txt"
echo two >"$TESTDIR/other-ar/two.txt"
(cd "$TESTDIR/other-ar" && ar rc "$TESTDIR/other-ar.deb" one.txt two.txt)
for f in text empty other-ar; do
	section "not a package: $f.deb"
	dpkg_note "notdeb-$f" "$TESTDIR/notdeb-$f.dpkg" error_root "$TESTDIR/$f.deb"
	error_root "$TESTDIR/notdeb-$f.unpkg"
	expect_failure "notdeb-$f" "$TESTDIR/notdeb-$f.unpkg" 1 \
		'not a (debian|deb|binary)|format|archive|magic|invalid|debian-binary|empty|trunc|end of file' \
		"$f\\.deb" -i "$TESTDIR/$f.deb"
done

# A fresh root, where unpkg makes the database's skeleton: a run that
# accepts no package removes it again (dpkg leaves it).
fresh_root() {
	rm -rf "$1"
	mkdir -p "$1"
}
half_fresh_root() {
	fresh_root "$1"
	mkdir -p "$1/var/lib"
}
for setup in fresh_root half_fresh_root; do
	section "not a package, in a fresh root ($setup)"
	dpkg_note "notdeb-$setup" "$TESTDIR/notdeb-$setup.dpkg" "$setup" \
		"$TESTDIR/text.deb"
	"$setup" "$TESTDIR/notdeb-$setup.unpkg"
	expect_failure "notdeb-$setup" "$TESTDIR/notdeb-$setup.unpkg" 1 \
		'not a (debian|deb|binary)|format|archive' 'text\.deb' \
		-i "$TESTDIR/text.deb"
done

# --- missing file -------------------------------------------------------------

section "missing file"
missing=$TESTDIR/no-such-package_1.0_all.deb
dpkg_note missing "$TESTDIR/missing.dpkg" error_root "$missing"
error_root "$TESTDIR/missing.unpkg"
expect_failure missing "$TESTDIR/missing.unpkg" 2 'no such file' \
	'no-such-package_1\.0_all\.deb' -i "$missing"

# --- a member escaping the root ---------------------------------------------

section "escape: data.tar member ../escaped"
etar=$TESTDIR/escape-data.tar
tar_member "$etar" ./ 5
tar_member "$etar" ./usr/ 5
tar_member "$etar" ./usr/share/ 5
tar_member "$etar" ./usr/share/escape 0 '' 'inside'
tar_member "$etar" ../escaped 0 '' 'outside'
tar_end "$etar"
new_pkg "$TESTDIR/escape" escape 1.0 all
make_control_tar "$TESTDIR/escape" "$TESTDIR/escape-control.tar"
deb=$TESTDIR/escape_1.0_all.deb
assemble_deb "$deb" "$TESTDIR/escape-control.tar" "$etar"
mkdir -p "$TESTDIR/esc-dpkg" "$TESTDIR/esc-unpkg"
dpkg_note escape "$TESTDIR/esc-dpkg/root" error_root "$deb"
if [ -e "$TESTDIR/esc-dpkg/escaped" ]; then
	note "(dpkg wrote the file outside its root)"
fi
error_root "$TESTDIR/esc-unpkg/root"
expect_failure escape "$TESTDIR/esc-unpkg/root" 1 \
	'outside|escap|\.\.|unsafe|invalid|illegal|forbidden|not allowed' \
	'escape_1\.0_all\.deb|\.\./escaped' -i "$deb"
[ ! -e "$TESTDIR/esc-unpkg/escaped" ] || check_fail "escape: unpkg wrote $TESTDIR/esc-unpkg/escaped"

# --- full filesystem ----------------------------------------------------------

stage=$TESTDIR/big
new_pkg "$stage" big 1.0 all
mkdir -p "$stage/usr/share/big"
for i in 1 2 3; do
	seq -f "big file $i line %.0f" 1 45000 >"$stage/usr/share/big/part$i"
done
BIG=$TESTDIR/big_1.0_all.deb
build_deb "$BIG" "$stage"

stage=$TESTDIR/small
new_pkg "$stage" small 1.0 all
mkdir -p "$stage/usr/share/small" "$stage/etc"
echo 'small, version 1' >"$stage/usr/share/small/data"
echo 'small only in 1.0' >"$stage/usr/share/small/only-v1"
echo 'small = 1' >"$stage/etc/small.conf"
echo /etc/small.conf >"$stage/DEBIAN/conffiles"
SMALL1=$TESTDIR/small_1.0_all.deb
build_deb "$SMALL1" "$stage"
# Version 2.0 of small: the same names with new content, plus 3 MB more.
rm "$stage/usr/share/small/only-v1"
echo 'small, version 2' >"$stage/usr/share/small/data"
echo 'small = 2' >"$stage/etc/small.conf"
for i in 1 2 3; do
	seq -f "small 2.0 file $i line %.0f" 1 45000 >"$stage/usr/share/small/bulk$i"
done
sed -i 's/^Version: .*/Version: 2.0/' "$stage/DEBIAN/control"
SMALL2=$TESTDIR/small_2.0_all.deb
build_deb "$SMALL2" "$stage"

# full_root DIR: a 2 MB tmpfs at DIR, primed, with small 1.0 installed.
full_root() {
	mkdir -p "$1"
	mount -t tmpfs -o size=2m,mode=0755 unpkg-test "$1"
	register_mount "$1"
	prime_root "$1"
	dpkg_in "$1" -i "$SMALL1" >/dev/null
}

mkdir -p "$TESTDIR/mount-probe"
if mount -t tmpfs -o size=2m unpkg-test "$TESTDIR/mount-probe" 2>"$TESTDIR/mount-probe.err"; then
	umount "$TESTDIR/mount-probe"
	for case in new:$BIG upgrade:$SMALL2; do
		kind=${case%%:*} deb=${case#*:}
		section "full filesystem: $kind package bigger than the free space"
		dpkg_note "enospc-$kind" "$TESTDIR/enospc-$kind.dpkg" full_root "$deb"
		root=$TESTDIR/enospc-$kind.unpkg
		full_root "$root"
		note "free space before: $(df -k --output=avail "$root" | tail -1) KiB"
		expect_failure "enospc-$kind" "$root" 1 'no space left on device|ENOSPC' \
			"$(regex_quote "$(basename "$deb")")|$(deb_field "$deb" Package)" -i "$deb"
		if [ "$(cat "$root/usr/share/small/data" 2>&1)" != 'small, version 1' ]; then
			check_fail "enospc-$kind: small 1.0's file lost its content"
		fi
	done
else
	skip_part "the full-filesystem cases" "cannot mount a tmpfs here: $(cat "$TESTDIR/mount-probe.err")"
fi

# --- file conflict ------------------------------------------------------------

for n in owner-a owner-b; do
	stage=$TESTDIR/$n
	new_pkg "$stage" "$n" 1.0 all
	mkdir -p "$stage/usr/bin" "$stage/usr/share/$n"
	echo "x from $n" >"$stage/usr/bin/x"
	echo "$n data" >"$stage/usr/share/$n/data"
	build_deb "$TESTDIR/${n}_1.0_all.deb" "$stage"
done
OWNER_A=$TESTDIR/owner-a_1.0_all.deb
OWNER_B=$TESTDIR/owner-b_1.0_all.deb
CONFLICT="trying to overwrite '/usr/bin/x', which is also in package owner-a"

conflict_root_dpkg() {
	error_root "$1"
	dpkg_in "$1" -i "$OWNER_A" >/dev/null
}

section "conflict: /usr/bin/x owned by owner-a (installed by dpkg)"
dpkg_note conflict "$TESTDIR/conflict.dpkg" conflict_root_dpkg "$OWNER_B"
conflict_root_dpkg "$TESTDIR/conflict-dpkg-a.unpkg"
expect_failure conflict-dpkg-a "$TESTDIR/conflict-dpkg-a.unpkg" 1 \
	"$(regex_quote "$CONFLICT")" 'owner-b' -i "$OWNER_B"

section "conflict: /usr/bin/x owned by owner-a (installed by unpkg)"
root=$TESTDIR/conflict-unpkg-a.unpkg
error_root "$root"
if unpkg_in "$root" -i "$OWNER_A" >"$LOGS/owner-a.out" 2>&1; then
	expect_failure conflict-unpkg-a "$root" 1 \
		"$(regex_quote "$CONFLICT")" 'owner-b' -i "$OWNER_B"
else
	check_fail "conflict: unpkg could not install owner-a: $(cat "$LOGS/owner-a.out")"
fi

# --- a broken package among good ones ------------------------------------------

# Here dpkg is the reference again: with a file that is not a package
# between two good ones, dpkg installs both good ones, reports the bad one
# and exits 1, leaving no trace of it.  unpkg must end up identical.
section "a non-package between two good packages (compared with dpkg)"
compare_with_dpkg -i "$OWNER_A" "$TESTDIR/text.deb" "$SMALL1"
assert_grep 'text\.deb' "$CMP_A.unpkg.err" "mixed run: the message names the bad file"

# --- a package with a preinst -------------------------------------------------

# shell_root DIR: a primed root holding /bin/sh and the libraries it needs,
# so that dpkg (and unpkg, if it runs scripts) can run a script chrooted.
shell_root() {
	local f
	prime_root "$1"
	mkdir -p "$1/bin" "$1/var/log"
	for f in $(ldd /bin/sh | grep -o '/[^ ]*'); do
		cp --parents -L "$f" "$1/"
	done
	cp -L /bin/sh "$1/bin/sh"
	# Fixed times, so the twin roots compare equal.
	find "$1" -newer "$1/var/lib/dpkg/status" ! -type d -exec touch -h -d @1000000000 {} +
}

stage=$TESTDIR/withpreinst
new_pkg "$stage" withpreinst 1.0 all
mkdir -p "$stage/usr/share/withpreinst"
echo 'payload' >"$stage/usr/share/withpreinst/data"
# The script leaves its trace under var/log, which the manifests skip
# (its mtime would differ); the trace is compared by content below.
cat >"$stage/DEBIAN/preinst" <<'EOF'
#!/bin/sh
echo "preinst ran with: $*" >>/var/log/withpreinst.trace
exit 0
EOF
chmod 0755 "$stage/DEBIAN/preinst"
PREINST=$TESTDIR/withpreinst_1.0_all.deb
build_deb "$PREINST" "$stage"

section "preinst: run as dpkg runs it"
a=$TESTDIR/preinst.unpkg b=$TESTDIR/preinst.dpkg
shell_root "$a"
shell_root "$b"
dpkg_in "$b" -i "$PREINST" >"$LOGS/preinst.dpkg.out" 2>&1 ||
	hard_error "dpkg could not install withpreinst: $(cat "$LOGS/preinst.dpkg.out")"
run_logged "$LOGS/preinst.unpkg" unpkg_in "$a" -i "$PREINST"
show_file "$LOGS/preinst.unpkg.out" "unpkg stdout"
show_file "$LOGS/preinst.unpkg.err" "unpkg stderr"
# (unpkg runs maintainer scripts: refusing the package is a failure)
assert_status 0 "$RUN_RC" "preinst: unpkg -i"
compare_trees "$a" "$b" "preinst"
compare_dbs "$a" "$b" "preinst"
compare_queries "$a" "$b" -i withpreinst
assert_same_file "$b/var/log/withpreinst.trace" "$a/var/log/withpreinst.trace" "preinst: script trace"

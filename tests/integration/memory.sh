#!/bin/bash
# memory.sh - peak memory of a run does not grow with the number of packages
# or with the size of a package.
#
# An installer opens every package of a run (to read its control.tar)
# before it extracts the first one.  If each open package kept its data.tar
# reader, every one would hold a decompressor (an xz decoder reserves an
# 8 MiB dictionary) and read buffers until its turn came, and a run of a
# hundred packages would need hundreds of MiB.  Peak RSS (GNU time's %M) is
# measured for:
#   - one small package, the reference;
#   - 80 such packages in one run: at most 24 MiB above the reference
#     (what is legitimately kept per file until the rename pass is a few
#     hundred bytes);
#   - one package with a 96 MiB file: at most 24 MiB above the reference
#     (data is streamed, never held whole);
#   - the same package with its data.tar.xz in blocks of 24 MiB, as
#     dpkg-deb's threaded xz makes it: such a stream is decoded by two
#     threads, each with its 8 MiB dictionary, through a bounded pool of
#     decoded data (more than 24 MiB above the reference, but never a whole
#     block per thread).
# Every run must also stay under 64 MiB.  No timings are asserted.
#
# AddressSanitizer keeps freed memory in quarantine and maps shadow memory,
# so RSS says nothing about unpkg there: the test skips under it.

. "${TESTLIB:?TESTLIB is not set}"
need_cmd dpkg-deb
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) not found"
if grep -aq __asan_init "$UNPKG" 2>/dev/null; then
	skip "unpkg is built with AddressSanitizer: its RSS is not unpkg's own"
fi

NPKGS=80
MiB=1024

# peak_kib ROOT DEB...: install the packages in one run into ROOT (created
# empty) without syncs, and print unpkg's peak RSS in KiB.
peak_kib() {
	local root=$1 rc=0
	shift
	mkdir -p "$root"
	/usr/bin/time -f %M -o "$root.rss" "$UNPKG" --root="$root" \
		--sync=none -i "$@" >"$root.out" 2>"$root.err" || rc=$?
	[ "$rc" -eq 0 ] || {
		cat "$root.err" >&2
		fail "unpkg -i of $# package(s) into $root: exit $rc"
	}
	tail -n 1 "$root.rss"
}

# A package of 32 files, one of them 384 KiB of text that xz cannot make
# trivial (decoding it fills part of the dictionary).
make_small_pkg() {
	local i=$1 dir=$TESTDIR/stage-$1 f
	new_pkg "$dir" "memtest$i" 1.0 all
	mkdir -p "$dir/usr/share/memtest/$i"
	seq -f "package $i line %.0f" 1 14000 >"$dir/usr/share/memtest/$i/text"
	for f in $(seq 1 31); do
		printf 'file %d of package %d\n' "$f" "$i" >"$dir/usr/share/memtest/$i/f$f"
	done
	build_deb "$TESTDIR/memtest$i.deb" "$dir"
	rm -rf "$dir"
}

section "building $NPKGS packages"
debs=()
for i in $(seq 1 "$NPKGS"); do
	make_small_pkg "$i"
	debs+=("$TESTDIR/memtest$i.deb")
done

section "one package: the reference"
ref=$(peak_kib "$TESTDIR/one" "${debs[0]}")
note "peak RSS of 1 package: $ref KiB"

section "$NPKGS packages in one run"
many=$(peak_kib "$TESTDIR/many" "${debs[@]}")
note "peak RSS of $NPKGS packages: $many KiB ($(((many - ref) / NPKGS)) KiB per package above the reference)"
n=$(dpkg-query --root="$TESTDIR/many" -W -f='${db:Status-Abbrev}\n' 'memtest*' | grep -c '^ii')
[ "$n" -eq "$NPKGS" ] || check_fail "$n of $NPKGS packages installed"
[ "$many" -le $((ref + 24 * MiB)) ] ||
	check_fail "peak RSS grows with the number of packages: $ref KiB for 1, $many KiB for $NPKGS"
[ "$many" -lt $((64 * MiB)) ] || check_fail "peak RSS of $NPKGS packages is $many KiB (64 MiB or more)"

section "one package with a 96 MiB file"
dir=$TESTDIR/stage-big
new_pkg "$dir" memtest-big 1.0 all
mkdir -p "$dir/usr/share/memtest-big"
# (head ends seq early: the pipeline's status is head's.)
(set +o pipefail; seq -f 'line %.0f of a big file' 1 4200000 | head -c $((96 << 20))) \
	>"$dir/usr/share/memtest-big/big"
build_deb "$TESTDIR/big.deb" "$dir" -Zzstd
# The twin for the last case: data.tar.xz in blocks of 24 MiB with an 8 MiB
# dictionary, as xz -T2 makes them at dpkg-deb's level 6, but at level 0's
# speed.
make_control_tar "$dir" "$TESTDIR/big-control.tar"
make_data_tar "$dir" "$TESTDIR/big-data.tar"
gzip -9n "$TESTDIR/big-control.tar"
xz -T2 --block-size=24MiB --lzma2=preset=0,dict=8MiB "$TESTDIR/big-data.tar"
assemble_deb "$TESTDIR/big-xz.deb" "$TESTDIR/big-control.tar.gz" "$TESTDIR/big-data.tar.xz"
big_md5=$(md5sum <"$dir/usr/share/memtest-big/big")
rm -rf "$dir"
big=$(peak_kib "$TESTDIR/big" "$TESTDIR/big.deb")
note "peak RSS of the 96 MiB package: $big KiB"
size=$(stat -c %s "$TESTDIR/big/usr/share/memtest-big/big")
[ "$size" -eq $((96 << 20)) ] || check_fail "big file installed with $size bytes"
[ "$big" -le $((ref + 24 * MiB)) ] ||
	check_fail "peak RSS grows with the size of a package: $ref KiB for a small one, $big KiB for 96 MiB"
[ "$big" -lt $((64 * MiB)) ] || check_fail "peak RSS of the 96 MiB package is $big KiB (64 MiB or more)"

section "one package with a 96 MiB file, data.tar.xz in blocks of 24 MiB"
nblocks=$(xz --robot --list "$TESTDIR/big-data.tar.xz" | awk -F'\t' '$1 == "file" { print $3 }')
[ "$nblocks" -ge 4 ] || hard_error "data.tar.xz has $nblocks blocks, 4 or more expected"
rm -f "$TESTDIR/big-data.tar.xz" "$TESTDIR/big-control.tar.gz"
xzbig=$(peak_kib "$TESTDIR/xzbig" "$TESTDIR/big-xz.deb")
note "peak RSS of the 96 MiB package, data.tar.xz of $nblocks blocks: $xzbig KiB"
[ "$(md5sum <"$TESTDIR/xzbig/usr/share/memtest-big/big")" = "$big_md5" ] ||
	check_fail "big file of the xz package installed with other contents"
[ "$xzbig" -lt $((64 * MiB)) ] ||
	check_fail "peak RSS of the 96 MiB package in xz blocks is $xzbig KiB (64 MiB or more)"

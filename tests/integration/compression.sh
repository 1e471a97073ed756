#!/bin/bash
# compression.sh - every pair of control.tar and data.tar compressions.
#
# One fixture, packed 25 ways by hand (build_deb_manual): control.tar and
# data.tar each uncompressed, gzip, xz, zstd or bzip2.  Each package is
# installed (-i) with unpkg and with dpkg into twin roots and compared.
#
# dpkg 1.21 refuses control.tar.bz2 ("uses unknown compression for member
# 'control.tar.bz2'"); deb(5) does not list bzip2 for the control member,
# only for data.tar.  For those five packages unpkg is required to install
# them all the same, and its root is compared with a dpkg root made from
# the twin package that differs only by a gzip control member: same files,
# same database, same query output.  If unpkg chose dpkg's stricter
# behaviour instead, this test would report it as a difference to decide on.
#
# The fixture is big enough (a 3 MB file, many small ones) for every
# decompressor to refill its buffers many times, and carries a symlink, a
# hardlink and a conffile.
#
# Last, the fixture with 4 MB more, its data.tar.xz a stream of several blocks
# (xz -T2, as dpkg-deb makes for large packages), which unpkg decodes with
# two threads: four block sizes and integrity checks, each compared with
# dpkg the same way.

. "${TESTLIB:?TESTLIB is not set}"
need_cmd zstd bzip2

stage=$TESTDIR/stage
new_pkg "$stage" compressed 2.0 all
d=$stage/usr/share/compressed
mkdir -p "$d/many" "$stage/etc"
seq -f 'line %.0f of the big file' 1 120000 >"$d/big"
for i in $(seq 1 200); do
	printf 'small file %d\n' "$i" >"$d/many/f$i"
done
ln -s big "$d/big-link"
ln "$d/many/f1" "$d/many/f1-hardlink"
echo 'compressed = yes' >"$stage/etc/compressed.conf"
echo /etc/compressed.conf >"$stage/DEBIAN/conffiles"

comps=(none gz xz zst bz2)
for c in "${comps[@]}"; do
	for x in "${comps[@]}"; do
		build_deb_manual "$TESTDIR/control-$c.data-$x.deb" "$c" "$x" "$stage"
	done
done

for c in "${comps[@]}"; do
	for x in "${comps[@]}"; do
		deb=$TESTDIR/control-$c.data-$x.deb
		members=$(ar t "$deb" | tr '\n' ' ')
		if [ "$c" != bz2 ]; then
			section "control.tar.$c + data.tar.$x: -i ($members)"
			compare_with_dpkg -i "$deb"
			continue
		fi

		section "control.tar.bz2 + data.tar.$x: -i, against dpkg on the gzip-control twin"
		twin=$TESTDIR/control-gz.data-$x.deb
		dir=$(mktemp -d "$TESTDIR/cmp.XXXXXX")
		a=$dir/unpkg b=$dir/dpkg
		mkroot "$a"
		mkroot "$b"
		run_logged "$a.unpkg" unpkg_in "$a" -i "$deb"
		note "unpkg -i: exit $RUN_RC"
		show_file "$a.unpkg.out" "unpkg stdout"
		show_file "$a.unpkg.err" "unpkg stderr"
		assert_status 0 "$RUN_RC" "unpkg -i $(basename "$deb")"
		dpkg_in "$b" -i "$twin" >"$b.dpkg.out" 2>&1 ||
			hard_error "dpkg could not install the twin $twin"
		compare_trees "$a" "$b" "bz2 control"
		compare_dbs "$a" "$b" "bz2 control"
		compare_queries "$a" "$b" -i compressed
	done
done

# --- data.tar.xz of several blocks ---------------------------------------------
# xz -T writes a stream of blocks compressed independently of each other
# (dpkg-deb does, blocks of 24 MiB at its default level), which unpkg
# decodes with two threads.  The fixture above plus 4 MB of text that xz
# cannot make small (so that data.tar.xz is well above the size from which
# unpkg decodes in threads), packed in blocks of 100 KiB to 1 MiB with each
# integrity check xz offers.
bstage=$TESTDIR/stage-blocks
cp -a "$stage" "$bstage"
head -c 3000000 /dev/urandom | base64 >"$bstage/usr/share/compressed/text"

# build_deb_blocks OUT XZ_OPTION...: the package of $bstage with its
# data.tar compressed by xz -T2 XZ_OPTION...; fails unless that made a
# stream of several blocks of over 1 MiB in all.
build_deb_blocks() {
	local out=$1 work info
	shift
	work=$(mktemp -d "$TESTDIR/blocks.XXXXXX")
	make_control_tar "$bstage" "$work/control.tar"
	make_data_tar "$bstage" "$work/data.tar"
	gzip -9n "$work/control.tar"
	xz -T2 "$@" "$work/data.tar"
	info=$(xz --robot --list "$work/data.tar.xz" | grep '^file')
	note "$(basename "$out"): data.tar.xz ($*): $(cut -f3 <<<"$info") blocks, $(cut -f4 <<<"$info") bytes"
	if [ "$(cut -f3 <<<"$info")" -lt 2 ] || [ "$(cut -f4 <<<"$info")" -lt $((1 << 20)) ]; then
		hard_error "xz $* did not make a stream of several blocks over 1 MiB"
	fi
	assemble_deb "$out" "$work/control.tar.gz" "$work/data.tar.xz"
	rm -rf -- "$work"
}

n=0
for opts in "--block-size=256KiB" "--check=crc32 --block-size=1MiB" \
	"--check=sha256 --block-size=100KiB" "--check=none --block-size=512KiB"; do
	n=$((n + 1))
	deb=$TESTDIR/blocks-$n.deb
	read -ra xzopts <<<"$opts"
	build_deb_blocks "$deb" "${xzopts[@]}"
	section "data.tar.xz of several blocks (xz -T2 $opts): -i"
	compare_with_dpkg -i "$deb"
done

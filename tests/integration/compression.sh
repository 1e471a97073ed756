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

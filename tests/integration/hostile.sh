#!/bin/bash
# hostile.sh - hostile and malformed packages.
#
# A corpus of broken and malicious .deb files is built at test time (bash,
# printf, tar, ar, compressors), then each one is handed to unpkg -i on a
# root where dpkg installed "victim 1.0" (files, a conffile, a directory
# tree).  Each case asserts its outcome:
#   refused  exit 1, a message starting "unpkg: " that matches the case's
#            cause, the root (files and database) exactly as before, victim
#            1.0 still installed, no *.dpkg-new / *.dpkg-tmp anywhere, and
#            nothing changed beside the root (each root lives in a case
#            directory next to a sentinel directory, compared before and
#            after);
#   accepted exit 0, and the same tree and database as stock dpkg makes
#            from the same package (compare_roots_with_dpkg), or a stated
#            result where dpkg is no reference.
# What stock dpkg does with each package is run and logged as a note (not
# an assertion) and summed up in a table at the end; doc/reliability.md
# keeps that table.  Cases whose dpkg run would write to the host outside
# the test directory are not run with dpkg.
#
# Size cases (decompression bomb, huge sizes) run on a 20 MB tmpfs root and
# are left out, with a note, where no tmpfs can be mounted.  Cases that
# show a bug reported but not yet fixed are listed in KNOWN_BUGS: their
# failures are shown as notes and not counted.
#
# With HOSTILE_CORPUS=DIR the script only builds the packages, copies them
# to DIR and exits 0 (the fuzzing seed corpus uses them).
. "${TESTLIB:?}"
need_cmd zstd bzip2 cmp

LOGS=$TESTDIR/logs
CASES=$TESTDIR/cases
mkdir -p "$LOGS" "$CASES"
NOTES=$LOGS/dpkg-notes

# --------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------

# ar_start OUT: the ar magic.
ar_start() {
	printf '!<arch>\n' >"$1"
}

# ar_add OUT NAME FILE [SIZEFIELD [NOPAD]]: one ar member with the data of
# FILE.  SIZEFIELD replaces the decimal size in the header (any 10 bytes);
# NOPAD leaves out the padding byte after data of odd length.
ar_add() {
	local out=$1 name=$2 file=$3 size
	size=${4:-$(stat -c %s "$file")}
	printf '%-16s%-12s%-6s%-6s%-8s%-10s`\n' "$name" 0 0 0 100644 "$size" >>"$out"
	cat -- "$file" >>"$out"
	if [ -z "${5:-}" ] && [ $(($(stat -c %s "$file") % 2)) -eq 1 ]; then
		printf '\n' >>"$out"
	fi
}

# tar_set_field TARFILE HEADER_OFFSET FIELD_OFFSET BYTES...: overwrite bytes
# (given as octal escapes for printf) of the header at HEADER_OFFSET and
# recompute its checksum.
tar_set_field() {
	local f=$1 h=$2 off=$3 bytes=$4 sum
	printf '%b' "$bytes" | dd of="$f" bs=1 seek=$((h + off)) conv=notrunc status=none
	printf '        ' | dd of="$f" bs=1 seek=$((h + 148)) conv=notrunc status=none
	sum=$(dd if="$f" bs=1 skip="$h" count=512 status=none | od -An -v -tu1 |
		tr -s ' ' '\n' | awk '{ s += $1 } END { print s }')
	printf '%06o\0 ' "$sum" | dd of="$f" bs=1 seek=$((h + 148)) conv=notrunc status=none
}

# pax_member OUT NAME TYPE [LINK [CONTENT]] [KEY=VALUE...]: a member whose
# real name (and link target, and extra keys) come from a pax extended
# header, so they can be longer than ustar allows.
pax_member() {
	local out=$1 name=$2 type=$3 link=${4:-} content=${5:-} rec recs='' kv
	shift 3
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] && shift
	recs=$(pax_record "path=$name"; printf x)
	recs=${recs%x}
	if [ -n "$link" ]; then
		rec=$(pax_record "linkpath=$link"; printf x)
		recs+=${rec%x}
	fi
	for kv in "$@"; do
		rec=$(pax_record "$kv"; printf x)
		recs+=${rec%x}
	done
	tar_pax_header "$out" "$recs"
	# libarchive ignores a pax linkpath when the ustar one is empty.
	tar_member "$out" "./pax-placeholder" "$type" "${link:0:100}" "$content"
}

# gnu_long_member OUT NAME TYPE [CONTENT]: a member whose NAME is held in a
# GNU long-name record (typeflag L, the name and its NUL), as GNU tar and
# dpkg-deb write names over 100 bytes.
gnu_long_member() {
	local out=$1 name=$2 type=$3 content=${4:-} h=0
	[ -e "$out" ] && h=$(stat -c %s "$out")
	tar_member "$out" ././@LongLink L '' "${name}X"
	printf '\0' | dd of="$out" bs=1 seek=$((h + 512 + ${#name})) conv=notrunc status=none
	tar_member "$out" "${name:0:99}" "$type" '' "$content"
}

# pax_record KEY=VALUE: one pax record, "LEN KEY=VALUE\n", where LEN counts
# the whole record including its own digits.
pax_record() {
	local body=" $1"$'\n' n
	n=$((${#body} + 1))
	while [ $((${#n} + ${#body})) -ne "$n" ]; do
		n=$((${#n} + ${#body}))
	done
	printf '%s' "$n$body"
}

# tar_pax_header OUT RECORDS: a pax extended header (typeflag x).
tar_pax_header() {
	local out=$1 recs=$2 h
	h=$(mktemp "$TESTDIR/pax.XXXXXX")
	tar_member "$h" ./PaxHeaders/x x '' "$recs"
	cat "$h" >>"$out"
	rm -f "$h"
}

# victim_control VERSION [EXTRA_CONTROL_LINES]: a control.tar for
# "victim", printed as its path.
victim_control() {
	local version=$1 extra=${2:-} d
	d=$(mktemp -d "$TESTDIR/ctl.XXXXXX")
	new_pkg "$d" victim "$version" all
	if [ -n "$extra" ]; then
		printf '%s\n' "$extra" >>"$d/DEBIAN/control"
	fi
	make_control_tar "$d" "$d/control.tar"
	printf '%s\n' "$d/control.tar"
}

# data_begin: start a data.tar in $DATA with the usual directories.
data_begin() {
	DATA=$(mktemp "$TESTDIR/data.XXXXXX")
	tar_member "$DATA" ./ 5
	tar_member "$DATA" ./usr/ 5
	tar_member "$DATA" ./usr/share/ 5
	tar_member "$DATA" ./usr/share/victim/ 5
	tar_member "$DATA" ./usr/share/victim/data 0 '' 'victim 2.0 data'
}

# deb_victim NAME [CONTROL_TAR]: victim 2.0 with data.tar $DATA (ended
# here), as $CASES/NAME.deb.
deb_victim() {
	local name=$1 control=${2:-}
	[ -n "$control" ] || control=$(victim_control 2.0)
	tar_end "$DATA"
	mv "$DATA" "$DATA.tar"
	assemble_deb "$CASES/$name.deb" "$control" "$DATA.tar"
}

# control_deb NAME CONTROL_TEXT_FILE [EXTRA_MEMBER_FILE...]: victim 2.0 whose
# control file is CONTROL_TEXT_FILE verbatim.
control_deb() {
	local name=$1 text=$2 d
	shift 2
	d=$(mktemp -d "$TESTDIR/ctl.XXXXXX")
	mkdir -p "$d/DEBIAN"
	cp "$text" "$d/DEBIAN/control"
	for f in "$@"; do
		cp "$f" "$d/DEBIAN/"
	done
	make_control_tar "$d" "$d/control.tar"
	data_begin
	deb_victim "$name" "$d/control.tar"
}

# --------------------------------------------------------------------------
# The packages
# --------------------------------------------------------------------------

# victim 1.0 (installed before every case) and a good victim 2.0.
stage=$TESTDIR/victim1
new_pkg "$stage" victim 1.0 all
mkdir -p "$stage/usr/share/victim/sub" "$stage/usr/bin"
echo 'victim 1.0 data' >"$stage/usr/share/victim/data"
echo 'victim 1.0 sub' >"$stage/usr/share/victim/sub/file"
printf '#!/bin/sh\necho victim\n' >"$stage/usr/bin/victim"
chmod 0755 "$stage/usr/bin/victim"
VICTIM1=$CASES/victim_1.0.deb
build_deb "$VICTIM1" "$stage"
sed -i 's/^Version: .*/Version: 2.0/' "$stage/DEBIAN/control"
echo 'victim 2.0 data' >"$stage/usr/share/victim/data"
GOOD=$TESTDIR/good_2.0.deb
build_deb "$GOOD" "$stage" -Zgzip
GOOD_CONTROL=$TESTDIR/good-control
mkdir -p "$GOOD_CONTROL"
(cd "$GOOD_CONTROL" && ar x "$GOOD")
printf '2.0\n' >"$TESTDIR/debian-binary"
DB=$TESTDIR/debian-binary
GC=$GOOD_CONTROL/control.tar.gz
GD=$GOOD_CONTROL/data.tar.gz

# --- the ar container ---

truncate_copy "$GOOD" "$CASES/ar-truncated-header.deb" 100
truncate_copy "$GOOD" "$CASES/ar-truncated-control.deb" $((8 + 60 + 4 + 60 + 20))
c=$CASES/ar-no-control.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-no-data.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
c=$CASES/ar-no-debian-binary.deb
ar_start "$c"; ar_add "$c" control.tar.gz "$GC"; ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-dup-control.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" control.tar.gz "$GC"; ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-dup-data.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" data.tar.gz "$GD"; ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-misordered.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" data.tar.gz "$GD"
ar_add "$c" control.tar.gz "$GC"
c=$CASES/ar-extra-between.deb
echo 'extra' >"$TESTDIR/extra"
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" extra "$TESTDIR/extra"; ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-extra-after.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" data.tar.gz "$GD"; ar_add "$c" extra "$TESTDIR/extra"
c=$CASES/ar-underscore-member.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" _signature "$TESTDIR/extra"
ar_add "$c" control.tar.gz "$GC"; ar_add "$c" data.tar.gz "$GD"
: >"$TESTDIR/zero"
c=$CASES/ar-size-zero.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$TESTDIR/zero"
ar_add "$c" data.tar.gz "$GD"
# An odd-sized member with its padding byte is valid; without it, the next
# header is one byte off.
odd=$TESTDIR/odd.tar.gz
cp "$GC" "$odd"
[ $(($(stat -c %s "$odd") % 2)) -eq 1 ] || printf '\0' >>"$odd"
c=$CASES/ar-size-odd-padded.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$odd"
ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-size-odd-unpadded.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$odd" "" nopad
ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-size-overflow.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" data.tar.gz "$GD" 9999999999
c=$CASES/ar-size-garbage.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC" 12ab
ar_add "$c" data.tar.gz "$GD"
c=$CASES/ar-size-negative.deb
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC" -1
ar_add "$c" data.tar.gz "$GD"

# --- compression ---

c=$CASES/comp-unknown.deb
cp "$GD" "$TESTDIR/data.tar.lz4"
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" data.tar.lz4 "$TESTDIR/data.tar.lz4"
c=$CASES/comp-mislabelled.deb
gzip -dc "$GD" | xz -c >"$TESTDIR/mislabelled"
ar_start "$c"; ar_add "$c" debian-binary "$DB"; ar_add "$c" control.tar.gz "$GC"
ar_add "$c" data.tar.gz "$TESTDIR/mislabelled"

# A decompression bomb: a few hundred KB of zstd holding 8 files of 8 MB
# and one of 1 GB, all zeros, for a 20 MB filesystem.
bomb=$TESTDIR/bomb
mkdir -p "$bomb/usr/share/victim"
for i in 1 2 3 4 5 6 7 8; do
	truncate -s 8M "$bomb/usr/share/victim/zeros$i"
done
truncate -s 1G "$bomb/usr/share/victim/zeros-big"
tar -C "$bomb" --format=gnu --owner=0 --group=0 -cf - . | zstd -q -19 --long=27 -o "$TESTDIR/bomb.tar.zst"
assemble_deb "$CASES/bomb-data.deb" "$(victim_control 2.0)" "$TESTDIR/bomb.tar.zst"
# The same in control.tar: a 1 GB "postinst".
cb=$TESTDIR/cbomb
mkdir -p "$cb"
cp "$(dirname "$(victim_control 2.0)")/DEBIAN/control" "$cb/control"
truncate -s 1G "$cb/postinst"
tar -C "$cb" --format=gnu --owner=0 --group=0 -cf - . | zstd -q -19 --long=27 -o "$TESTDIR/cbomb.tar.zst"
data_begin
tar_end "$DATA"
mv "$DATA" "$DATA.tar"
assemble_deb "$CASES/bomb-control.deb" "$TESTDIR/cbomb.tar.zst" "$DATA.tar"

# --- the control file ---

ctl=$TESTDIR/ctl-text
mkdir -p "$ctl"
base_control() {
	cat <<-EOF
	Package: victim
	Version: 2.0
	Architecture: all
	Maintainer: unpkg test suite <unpkg-tests@example.invalid>
	Description: victim, a hostile fixture
	EOF
}
{ base_control; echo 'Status: install ok installed'; } >"$ctl/status"
base_control | sed 's|^Package: .*|Package: ../x|' >"$ctl/dotdot-name"
{ base_control; echo 'Version: 3.0'; } >"$ctl/duplicate"
{ base_control; echo 'version: 3.0'; } >"$ctl/duplicate-case"
base_control | sed 's/$/\r/' >"$ctl/cr"
{ base_control; printf 'X-Field: a\0b\n'; } >"$ctl/nul"
# A blank line in a value would end the stanza in the status file.
{ base_control; printf ' first line\n\nPackage: evil\nStatus: install ok installed\n'; } >"$ctl/newline-value"
{ base_control; printf ' \n'; } >"$ctl/blank-continuation"
{ base_control; echo 'Conffiles:'; echo ' /etc/passwd 0123456789abcdef0123456789abcdef'; } >"$ctl/conffiles-field"
for f in status dotdot-name duplicate duplicate-case cr nul newline-value \
	blank-continuation conffiles-field; do
	control_deb "control-$f" "$ctl/$f"
done

# --- control.tar members ---

ctar_case() {
	local name=$1 c
	shift
	c=$(mktemp "$TESTDIR/ctar.XXXXXX")
	tar_member "$c" ./ 5
	base_control >"$TESTDIR/ctl-text/plain"
	tar_member "$c" ./control 0 '' "$(cat "$TESTDIR/ctl-text/plain")
"
	"$@" "$c"
	tar_end "$c"
	mv "$c" "$c.tar"
	data_begin
	deb_victim "ctar-$name" "$c.tar"
}
ctar_symlink() { tar_member "$1" ./postinst 2 /etc/passwd; }
ctar_subdir() { tar_member "$1" ./sub/ 5; tar_member "$1" ./sub/postinst 0 '' 'exit 0'; }
ctar_dotdot() { tar_member "$1" ../postinst 0 '' 'exit 0'; }
ctar_absolute() { tar_member "$1" /postinst 0 '' 'exit 0'; }
ctar_hardlink() { tar_member "$1" ./postinst 1 ./control; }
ctar_duplicate() { tar_member "$1" ./control 0 '' 'Package: other'; }
ctar_case symlink ctar_symlink
ctar_case subdir ctar_subdir
ctar_case dotdot ctar_dotdot
ctar_case absolute ctar_absolute
ctar_case hardlink ctar_hardlink
ctar_case duplicate ctar_duplicate

# --- conffiles lists ---

conffiles_case() {
	local name=$1 list=$2 d
	d=$(mktemp -d "$TESTDIR/cf.XXXXXX")
	new_pkg "$d" victim 2.0 all
	printf '%s' "$list" >"$d/DEBIAN/conffiles"
	make_control_tar "$d" "$d/control.tar"
	data_begin
	tar_member "$DATA" ./etc/ 5
	tar_member "$DATA" ./etc/victim.conf 0 '' 'victim = 2'
	deb_victim "conffiles-$name" "$d/control.tar"
}
conffiles_case relative $'etc/victim.conf\n'
conffiles_case duplicate $'/etc/victim.conf\n/etc/victim.conf\n'
conffiles_case not-in-package $'/etc/victim.conf\n/etc/absent.conf\n'
conffiles_case directory $'/etc/victim.conf\n/etc\n'

# --- data.tar paths ---

data_begin; tar_member "$DATA" ../../etc/x 0 '' 'escaped'; deb_victim path-dotdot
data_begin; tar_member "$DATA" ./usr/../../x 0 '' 'escaped'; deb_victim path-dotdot-inner
data_begin; tar_member "$DATA" /etc/ 5; tar_member "$DATA" /etc/x 0 '' 'absolute'; deb_victim path-absolute
data_begin; tar_member "$DATA" ./l 2 /; tar_member "$DATA" ./l/etc/ 5
tar_member "$DATA" ./l/etc/x 0 '' 'through l'; deb_victim path-symlink-same-pkg
# Two packages: "linker" ships l -> / (and esc -> ../..); "victim" 2.0 ships
# files through them.
d=$(mktemp -d "$TESTDIR/linker.XXXXXX")
new_pkg "$d" linker 1.0 all
make_control_tar "$d" "$d/control.tar"
lt=$d/data.tar
tar_member "$lt" ./ 5
tar_member "$lt" ./l 2 /
tar_member "$lt" ./esc 2 ../../sentinel
tar_end "$lt"
LINKER=$CASES/linker_1.0.deb
assemble_deb "$LINKER" "$d/control.tar" "$lt"
data_begin; tar_member "$DATA" ./l/ 5; tar_member "$DATA" ./l/etc/ 5
tar_member "$DATA" ./l/etc/x 0 '' 'through l'; deb_victim path-symlink-other-pkg
data_begin; tar_member "$DATA" ./esc/pwned 0 '' 'through esc'; deb_victim path-symlink-escape
data_begin; tar_member "$DATA" ./usr/share/victim/$'new\nline' 0 '' 'x'; deb_victim path-newline
data_begin; tar_member "$DATA" ./usr/share/victim/x.dpkg-new 0 '' 'the .dpkg-new file'
tar_member "$DATA" ./usr/share/victim/x 0 '' 'the real file'; deb_victim path-dpkg-new-name

# --- hard links ---

data_begin; tar_member "$DATA" ./usr/share/victim/h 1 ../../etc/passwd; deb_victim hardlink-dotdot
data_begin; tar_member "$DATA" ./usr/share/victim/h 1 /etc/passwd; deb_victim hardlink-absolute
data_begin; tar_member "$DATA" ./usr/share/victim/h 1 ./usr/share/victim/absent; deb_victim hardlink-missing
data_begin; tar_member "$DATA" ./usr/share/victim/h 1 ./usr/share/victim/h; deb_victim hardlink-self
data_begin; tar_member "$DATA" ./usr/share/victim/h 1 ./usr/share/victim; deb_victim hardlink-directory
data_begin; tar_member "$DATA" ./usr/share/victim/s 2 data
tar_member "$DATA" ./usr/share/victim/h 1 ./usr/share/victim/s; deb_victim hardlink-symlink
data_begin; tar_member "$DATA" ./usr/share/victim/h 1 ./usr/share/victim/later
tar_member "$DATA" ./usr/share/victim/later 0 '' 'later'; deb_victim hardlink-forward

# --- one path twice ---

data_begin; tar_member "$DATA" ./usr/share/victim/d/ 5
tar_member "$DATA" ./usr/share/victim/d 2 /etc; deb_victim twice-dir-symlink
data_begin; tar_member "$DATA" ./usr/share/victim/d 2 /etc
tar_member "$DATA" ./usr/share/victim/d/ 5; deb_victim twice-symlink-dir
data_begin; tar_member "$DATA" ./usr/share/victim/f 0 '' 'one'
tar_member "$DATA" ./usr/share/victim/f 0 '' 'two'; deb_victim twice-file

# --- special files (installed as dpkg installs them) ---

stage=$TESTDIR/special
new_pkg "$stage" special 1.0 all
mkdir -p "$stage/usr/bin" "$stage/dev" "$stage/var/spool/special" "$stage/var/tmp-special"
printf '#!/bin/sh\n' >"$stage/usr/bin/suid"
chmod 4755 "$stage/usr/bin/suid"
printf '#!/bin/sh\n' >"$stage/usr/bin/sgid"
chown 0:8 "$stage/usr/bin/sgid"
chmod 2755 "$stage/usr/bin/sgid"
chmod 2775 "$stage/var/spool/special"
chmod 1777 "$stage/var/tmp-special"
mknod "$stage/dev/null-like" c 1 3
mknod "$stage/dev/block-like" b 7 200
mkfifo "$stage/var/spool/special/fifo"
chmod 0620 "$stage/var/spool/special/fifo"
ln "$stage/usr/bin/suid" "$stage/usr/bin/suid-hardlink"
build_deb "$CASES/special_1.0.deb" "$stage"

# --- tar header tricks ---

# A size of 2^62 in base-256 (GNU extension): no such data follows.
data_begin
h=$(stat -c %s "$DATA")
tar_member "$DATA" ./usr/share/victim/huge 0 '' 'x'
tar_set_field "$DATA" "$h" 124 '\200\0\0\0\100\0\0\0\0\0\0\0'
deb_victim tar-base256-huge
# A 30 MB file, its size in base-256, with its data (for a 20 MB root).
data_begin
h=$(stat -c %s "$DATA")
tar_member "$DATA" ./usr/share/victim/big 0 '' 'x'
tar_set_field "$DATA" "$h" 124 '\200\0\0\0\0\0\0\0\001\340\0\0'
head -c $((30 * 1024 * 1024 - 512)) /dev/zero >>"$DATA"
tar_end "$DATA"
xz -0 -T1 -c "$DATA" >"$DATA.tar.xz"
assemble_deb "$CASES/tar-base256-big.deb" "$(victim_control 2.0)" "$DATA.tar.xz"
rm -f "$DATA" "$DATA.tar.xz"

# GNU sparse files (old GNU format and pax 1.0), made by GNU tar: a legal
# sparse file, compared with dpkg.
sp=$TESTDIR/sparse
new_pkg "$sp" sparse 1.0 all
mkdir -p "$sp/usr/share/sparse"
printf 'head' >"$sp/usr/share/sparse/file"
truncate -s 3M "$sp/usr/share/sparse/file"
printf 'tail' >>"$sp/usr/share/sparse/file"
for fmt in gnu posix; do
	make_control_tar "$sp" "$TESTDIR/sparse-control.tar"
	tar -C "$sp" --format=$fmt --sparse --sort=name --owner=0 --group=0 \
		--numeric-owner --exclude=./DEBIAN -cf "$TESTDIR/sparse-data.tar" .
	assemble_deb "$CASES/tar-sparse-$fmt.deb" "$TESTDIR/sparse-control.tar" "$TESTDIR/sparse-data.tar"
done
# A GNU sparse header whose real size says 2^62.
sh=$(mktemp -d "$TESTDIR/sparsehuge.XXXXXX")
truncate -s 1M "$sh/f"
printf 'x' >>"$sh/f"
tar -C "$sh" --format=gnu --sparse --owner=0 --group=0 -cf "$sh/t.tar" ./f
# ./f is the only member: its header is at 0; realsize at 483.
tar_set_field "$sh/t.tar" 0 483 '\200\0\0\0\100\0\0\0\0\0\0\0'
data_begin
head -c $(($(stat -c %s "$sh/t.tar") - 1024)) "$sh/t.tar" >>"$DATA"
deb_victim tar-sparse-huge

# pax extended headers.
data_begin; pax_member "$DATA" ../pax-escape 0 '' 'x'; deb_victim pax-path-dotdot
data_begin; pax_member "$DATA" ./usr/share/victim/p 0 '' 'x' uid=4294967295; deb_victim pax-uid-invalid
data_begin; pax_member "$DATA" ./usr/share/victim/p 0 '' 'x' size=99999999999; deb_victim pax-size-huge
data_begin; pax_member "$DATA" ./usr/share/victim/p 2 "$(printf '%05000d' 0)"; deb_victim pax-linkpath-long
# rep CHAR N: CHAR repeated N times.
rep() {
	local s
	printf -v s '%*s' "$2" ''
	printf '%s' "${s// /$1}"
}
data_begin
gnu_long_member "$DATA" "./usr/share/victim/$(rep n 300)" 0 'x'
deb_victim name-component-300
# Directories of 240-byte names, nested past PATH_MAX (4096 bytes).
data_begin
p=./usr/share/victim
for i in $(seq 10 31); do
	p=$p/$i$(rep d 238)
	gnu_long_member "$DATA" "$p/" 5
done
gnu_long_member "$DATA" "$p/file" 0 'deep'
deb_victim name-path-5000
# Long names: a 246-byte file name is the longest that still leaves room
# for ".dpkg-new"; with 255 bytes (NAME_MAX) that temporary name cannot
# exist, for dpkg as for unpkg.
for n in 246 255; do
	stage=$TESTDIR/longname-$n
	new_pkg "$stage" "longname$n" 1.0 all
	mkdir -p "$stage/usr/share/longname"
	echo ok >"$stage/usr/share/longname/$(rep L "$n")"
	build_deb "$CASES/longname-$n.deb" "$stage"
done

# --- files of other packages ---

stage=$TESTDIR/owner
new_pkg "$stage" owner 1.0 all
mkdir -p "$stage/usr/share/owner"
echo 'owner file' >"$stage/usr/share/owner/file"
OWNER=$CASES/owner_1.0.deb
build_deb "$OWNER" "$stage"
data_begin; tar_member "$DATA" ./usr/share/owner/ 5
tar_member "$DATA" ./usr/share/owner/file 0 '' 'stolen'; deb_victim owned-by-other

if [ -n "${HOSTILE_CORPUS:-}" ]; then
	cp "$CASES"/*.deb "$HOSTILE_CORPUS"/
	note "copied $(find "$CASES" -name '*.deb' | wc -l) packages to $HOSTILE_CORPUS"
	exit 0
fi

# --------------------------------------------------------------------------
# Running the cases
# --------------------------------------------------------------------------

# The template root: primed, victim 1.0 installed by dpkg.
TEMPLATE=$TESTDIR/template
prime_root "$TEMPLATE"
dpkg_in "$TEMPLATE" -i "$VICTIM1" >/dev/null

# The cases about sizes run on a 20 MB tmpfs root; without the right to
# mount one each is skipped (skip_part).
TMPFS_OK=0
mkdir -p "$TESTDIR/mount-probe"
if mount -t tmpfs -o size=1m unpkg-hostile "$TESTDIR/mount-probe" 2>"$TESTDIR/mount-probe.err"; then
	umount "$TESTDIR/mount-probe"
	TMPFS_OK=1
fi
TMPFS_WHY="needs a 20 MB tmpfs root: cannot mount a tmpfs here: $(cat "$TESTDIR/mount-probe.err")"

# with_rss FILE CMD...: run CMD, its maximum RSS in KiB written to FILE
# (empty if /usr/bin/time is missing).
with_rss() {
	local file=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$file" "$@"
	else
		: >"$file"
		"$@"
	fi
}

# check_rss WHAT FILE: the RSS in FILE is below 64 MiB.
check_rss() {
	local rss
	rss=$(tail -1 "$2")
	if [ -z "$rss" ]; then
		skip_part "$1: the maximum RSS" "/usr/bin/time is missing"
	elif [ "$rss" -ge 65536 ]; then
		check_fail "$1: maximum RSS $rss KiB, expected < 64 MiB"
	else
		note "$1: maximum RSS $rss KiB"
	fi
}

# new_case NAME TOOL [tmpfs] [SETUP_DEB...]: CASE=$TESTDIR/run/NAME.TOOL with
# the root at CASE/a/root (a copy of the template, on a 20 MB tmpfs if
# asked), so that "../" from the root reaches CASE/a and "../../" CASE,
# which holds sentinel/keep, an empty etc/ and cwd/ (the working directory
# of the run).  The SETUP_DEBs are installed with dpkg.
new_case() {
	local name=$1 tool=$2
	shift 2
	CASE=$TESTDIR/run/$name.$tool
	ROOT=$CASE/a/root
	mkdir -p "$ROOT" "$CASE/sentinel" "$CASE/cwd" "$CASE/etc"
	echo 'sentinel content' >"$CASE/sentinel/keep"
	if [ "${1:-}" = tmpfs ]; then
		shift
		mount -t tmpfs -o size=20m,mode=0755 unpkg-hostile "$ROOT"
		register_mount "$ROOT"
	fi
	cp -a "$TEMPLATE/." "$ROOT/"
	if [ $# -gt 0 ]; then
		dpkg_in "$ROOT" -i "$@" >"$LOGS/$name.$tool.setup" 2>&1 ||
			hard_error "$name: dpkg could not install the setup packages"
	fi
}

outside_state() {
	tree_manifest "$CASE" a/root
}

root_state() {
	tree_manifest "$ROOT"
	db_manifest "$ROOT"
}

# dpkg_note NAME DEB [tmpfs] [SETUP_DEB...]: what stock dpkg does with DEB,
# logged and added to the table.
dpkg_note() {
	local name=$1 deb=$2 out_before root_before rc=0 root=same outside=same msg
	shift 2
	new_case "$name" dpkg "$@"
	out_before=$(outside_state)
	root_before=$(root_state)
	(cd "$CASE/cwd" && dpkg_in "$ROOT" -i "$deb") >"$LOGS/$name.dpkg.out" 2>&1 || rc=$?
	[ "$(root_state)" = "$root_before" ] || root=changed
	[ "$(outside_state)" = "$out_before" ] || outside=CHANGED
	# The cause: dpkg-deb's error, else the line after "error processing
	# ...", else the first error or warning.
	msg=$(grep -m1 '^dpkg-deb: error: ' "$LOGS/$name.dpkg.out" || true)
	[ -n "$msg" ] || msg=$(grep -A1 'error processing' "$LOGS/$name.dpkg.out" | sed -n 2p || true)
	[ -n "$msg" ] || msg=$(grep -E 'error|warning' "$LOGS/$name.dpkg.out" |
		grep -v 'Errors were encountered' | head -1 || true)
	msg=$(printf '%s' "$msg" | sed "s|$TESTDIR/[a-z]*/||g; s/^dpkg[^:]*: //; s/^error: //; s/^ *//; s/[[:space:]]\{1,\}/ /g" |
		cut -c1-120 || true)
	note "dpkg (reference only): exit $rc, root $root, outside the root $outside: ${msg:-no message}"
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$root" "$outside" "${msg:--}" >>"$NOTES"
}

# dpkg_skip NAME WHY: a case not run with dpkg.
dpkg_skip() {
	note "dpkg not run: $2"
	printf '%s\t-\t-\t-\tnot run: %s\n' "$1" "$2" >>"$NOTES"
}

# refused NAME REGEX [tmpfs] [SETUP_DEB...]: $CASES/NAME.deb must be refused
# with a message matching REGEX (extended, case-insensitive), leaving
# everything as it was.
refused() {
	local name=$1 re=$2 deb=$CASES/$1.deb
	shift 2
	if [ "${1:-}" = tmpfs ] && [ "$TMPFS_OK" = 0 ]; then
		skip_part "$name" "$TMPFS_WHY"
		return 0
	fi
	case_begin "$name"
	section "$name: refused"
	new_case "$name" unpkg "$@"
	local out_before root_before
	out_before=$(outside_state)
	root_before=$(root_state)
	RUN_RC=0
	(cd "$CASE/cwd" && unpkg_in "$ROOT" -i "$deb") \
		</dev/null >"$LOGS/$name.unpkg.out" 2>"$LOGS/$name.unpkg.err" || RUN_RC=$?
	note "unpkg: exit $RUN_RC"
	show_file "$LOGS/$name.unpkg.err" "unpkg stderr"
	assert_status 1 "$RUN_RC" "$name: unpkg"
	assert_grep '^unpkg: ' "$LOGS/$name.unpkg.err" "$name: message prefix"
	grep -Eiq -- "$re" "$LOGS/$name.unpkg.err" ||
		check_fail "$name: the message does not give the cause (/$re/)"
	[ "$(outside_state)" = "$out_before" ] ||
		check_fail "$name: something changed outside the root"
	assert_same_file <(printf '%s\n' "$root_before") <(root_state) "$name: root before and after"
	assert_no_debris "$ROOT"
	[ "$(dpkg-query --root="$ROOT" -W -f='${Version} ${Status}' victim)" = "1.0 install ok installed" ] ||
		check_fail "$name: victim 1.0 is no longer installed"
	[ "$(cat "$ROOT/usr/share/victim/data")" = 'victim 1.0 data' ] ||
		check_fail "$name: victim 1.0's file changed"
	case $name in
	path-symlink-other-pkg | path-symlink-same-pkg) dpkg_skip "$name" "it would write to the host's /etc" ;;
	*) dpkg_note "$name" "$deb" "$@" ;;
	esac
	case_end
}

# accepted_like_dpkg NAME DEB...: unpkg and dpkg on twin roots (copies of
# the template) give the same exit status (0), tree and database.
accepted_like_dpkg() {
	local name=$1 a b
	shift
	case_begin "$name"
	section "$name: accepted, as dpkg does"
	a=$TESTDIR/run/$name.cmp/unpkg
	b=$TESTDIR/run/$name.cmp/dpkg
	mkdir -p "$a" "$b"
	cp -a "$TEMPLATE/." "$a/"
	cp -a "$TEMPLATE/." "$b/"
	compare_roots_with_dpkg "$a" "$b" -i "$@"
	assert_status 0 "$CMP_UNPKG_RC" "$name: unpkg"
	assert_no_debris "$a"
	ROOT=$a
	printf '%s\t%s\tinstalled\tsame\t%s\n' "$name" "$CMP_DPKG_RC" \
		"$([ "$CMP_OK" = 1 ] && echo 'same tree and database as unpkg' || echo 'DIFFERS from unpkg')" >>"$NOTES"
	case_end
}

# accepted NAME STAGED:INSTALLED...: $CASES/NAME.deb installs (exit 0) and
# each STAGED file (from the staging tree) equals INSTALLED (relative to
# the root); dpkg refuses these packages, so it is no reference.
accepted() {
	local name=$1 pair
	shift
	case_begin "$name"
	section "$name: accepted (dpkg refuses it)"
	new_case "$name" unpkg
	RUN_RC=0
	unpkg_in "$ROOT" -i "$CASES/$name.deb" </dev/null >"$LOGS/$name.unpkg.out" \
		2>"$LOGS/$name.unpkg.err" || RUN_RC=$?
	show_file "$LOGS/$name.unpkg.err" "unpkg stderr"
	assert_status 0 "$RUN_RC" "$name: unpkg"
	for pair in "$@"; do
		cmp -s "${pair%%:*}" "$ROOT/${pair#*:}" ||
			check_fail "$name: /${pair#*:} differs from the packaged file"
	done
	assert_no_debris "$ROOT"
	dpkg_note "$name" "$CASES/$name.deb"
	case_end
}

# Cases that show a bug reported but not fixed yet: their failures are
# reported as notes and not counted.  Remove a name once the bug is fixed.
# (None at present.)
KNOWN_BUGS=" "

case_begin() {
	CASE_NAME=$1
	CASE_FAILURES=$TEST_FAILURES
}

case_end() {
	case $KNOWN_BUGS in
	*" $CASE_NAME "*)
		if [ "$TEST_FAILURES" -gt "$CASE_FAILURES" ]; then
			note "KNOWN BUG: $CASE_NAME: $((TEST_FAILURES - CASE_FAILURES)) failure(s) above not counted"
			TEST_FAILURES=$CASE_FAILURES
		else
			note "$CASE_NAME passes now: remove it from KNOWN_BUGS"
		fi
		;;
	esac
}

CAUSE_TRUNC='truncat|end of file|unexpected end'

# --- the ar container ---
refused ar-truncated-header "$CAUSE_TRUNC|damaged"
refused ar-truncated-control "$CAUSE_TRUNC"
refused ar-no-control "unexpected member 'data\.tar\.gz' before control\.tar"
refused ar-no-data 'missing data\.tar member'
refused ar-no-debian-binary "first member is 'control\.tar\.gz', not debian-binary"
refused ar-dup-control "duplicate control\.tar member"
refused ar-dup-data "unexpected member 'data\.tar\.gz' after data\.tar\.gz"
refused ar-misordered "unexpected member 'data\.tar\.gz' before control\.tar"
refused ar-extra-between "unexpected member 'extra' before data\.tar"
refused ar-extra-after "unexpected member 'extra' after data\.tar\.gz"
accepted_like_dpkg ar-underscore-member "$CASES/ar-underscore-member.deb"
refused ar-size-zero 'control\.tar\.gz: .*(trunc|empty|unrecognized|eof|end of file)'
accepted_like_dpkg ar-size-odd-padded "$CASES/ar-size-odd-padded.deb"
refused ar-size-odd-unpadded 'damaged|header|trunc'
refused ar-size-overflow "data\.tar\.gz.*($CAUSE_TRUNC)"
refused ar-size-garbage 'damaged ar member header|invalid|trunc'
refused ar-size-negative 'damaged ar member header|invalid|trunc|control\.tar\.gz: Unrecognized archive format'

# --- compression ---
refused comp-unknown "data\.tar\.lz4: unsupported compression"
refused comp-mislabelled 'data\.tar\.gz.*(corrupt|unrecognized|damaged|gzip|format)'

section "bomb-data: 1 GB of zeros in a few KB of zstd, on a 20 MB root"
if [ "$TMPFS_OK" = 1 ]; then
	note "bomb: $(stat -c %s "$CASES/bomb-data.deb") bytes of package"
	new_case bomb-data unpkg tmpfs
	out_before=$(outside_state)
	root_before=$(root_state)
	RUN_RC=0
	with_rss "$LOGS/bomb.rss" "$UNPKG" --root="$ROOT" --refuse-unsafe-io \
		-i "$CASES/bomb-data.deb" </dev/null >"$LOGS/bomb.out" 2>"$LOGS/bomb.err" || RUN_RC=$?
	show_file "$LOGS/bomb.err" "unpkg stderr"
	note "unpkg: exit $RUN_RC"
	assert_status 1 "$RUN_RC" "bomb-data: unpkg"
	assert_grep 'No space left on device' "$LOGS/bomb.err" "bomb-data: ENOSPC"
	check_rss bomb-data "$LOGS/bomb.rss"
	assert_same_file <(printf '%s\n' "$root_before") <(root_state) "bomb-data: root before and after"
	[ "$(outside_state)" = "$out_before" ] || check_fail "bomb-data: something changed outside the root"
	assert_no_debris "$ROOT"
	dpkg_note bomb-data "$CASES/bomb-data.deb" tmpfs
else
	skip_part bomb-data "$TMPFS_WHY"
fi

section "bomb-control: a 1 GB postinst in control.tar.zst"
new_case bomb-control unpkg
root_before=$(root_state)
RUN_RC=0
with_rss "$LOGS/cbomb.rss" "$UNPKG" --root="$ROOT" --refuse-unsafe-io \
	-i "$CASES/bomb-control.deb" </dev/null >"$LOGS/cbomb.out" 2>"$LOGS/cbomb.err" || RUN_RC=$?
show_file "$LOGS/cbomb.err" "unpkg stderr"
note "unpkg: exit $RUN_RC"
assert_status 1 "$RUN_RC" "bomb-control: unpkg"
assert_grep 'control members exceed 64 MiB' "$LOGS/cbomb.err" "bomb-control: the limit"
check_rss bomb-control "$LOGS/cbomb.rss"
assert_same_file <(printf '%s\n' "$root_before") <(root_state) "bomb-control: root before and after"
dpkg_skip bomb-control "dpkg-deb would unpack 1 GB into a temporary directory of the host"

# --- the control file ---
refused control-status "Status"
refused control-dotdot-name "Package.*'\.\./x'|invalid.*name|package name"
refused control-duplicate "duplicate field 'Version'"
refused control-duplicate-case "duplicate field 'version'"
refused control-cr 'carriage return'
refused control-nul 'NUL byte'
refused control-newline-value 'second paragraph'
refused control-blank-continuation 'blank line in value'
refused control-conffiles-field 'Conffiles'

# --- control.tar members ---
refused ctar-symlink "'\./postinst' is not a regular file"
refused ctar-subdir "'\./sub/' is not directly under"
refused ctar-dotdot "unsafe member name '\.\./postinst'"
refused ctar-absolute "unsafe member name '/postinst': absolute"
refused ctar-hardlink "'\./postinst' is not a regular file"
refused ctar-duplicate "duplicate member 'control'"

# --- conffiles ---
refused conffiles-relative "'etc/victim\.conf' is not an absolute path"
refused conffiles-duplicate "'/etc/victim\.conf' listed twice"
accepted_like_dpkg conffiles-not-in-package "$CASES/conffiles-not-in-package.deb"
refused conffiles-directory "/etc.*(directory|not a (plain|regular) file)"

# --- paths ---
refused path-dotdot "unsafe path '\.\./\.\./etc/x'"
refused path-dotdot-inner "unsafe path '\./usr/\.\./\.\./x'"
accepted_like_dpkg path-absolute "$CASES/path-absolute.deb"
[ "$(cat "$ROOT/etc/x")" = absolute ] || check_fail "path-absolute: /etc/x is not ROOT/etc/x"
refused path-symlink-same-pkg '/l/etc.*No such file or directory'

section "path-symlink-other-pkg: linker ships l -> /, victim 2.0 ships l/etc/x"
new_case path-symlink-other-pkg unpkg "$LINKER"
out_before=$(outside_state)
RUN_RC=0
unpkg_in "$ROOT" -i "$CASES/path-symlink-other-pkg.deb" </dev/null \
	>"$LOGS/psop.out" 2>"$LOGS/psop.err" || RUN_RC=$?
show_file "$LOGS/psop.err" "unpkg stderr"
assert_status 0 "$RUN_RC" "path-symlink-other-pkg: unpkg"
[ "$(cat "$ROOT/etc/x" 2>&1)" = 'through l' ] ||
	check_fail "path-symlink-other-pkg: l/etc/x did not land at ROOT/etc/x (l resolved inside the root)"
[ "$(readlink "$ROOT/l")" = / ] || check_fail "path-symlink-other-pkg: l is no longer -> /"
[ "$(outside_state)" = "$out_before" ] || check_fail "path-symlink-other-pkg: something changed outside the root"
assert_no_debris "$ROOT"
dpkg_skip path-symlink-other-pkg "dpkg follows l -> / on the host: it would write the host's /etc/x"

refused path-symlink-escape "esc" "$LINKER"
[ ! -e "$TESTDIR/run/path-symlink-escape.unpkg/sentinel/pwned" ] ||
	check_fail "path-symlink-escape: unpkg wrote into the sentinel directory"
refused path-newline 'name contains a newline'
accepted_like_dpkg path-dpkg-new-name "$CASES/path-dpkg-new-name.deb"

# --- hard links ---
refused hardlink-dotdot "unsafe hardlink target '\.\./\.\./etc/passwd'"
refused hardlink-absolute "hard link target /etc/passwd is not an earlier file"
refused hardlink-missing "hard link target /usr/share/victim/absent is not an earlier file"
refused hardlink-self "hard link.*/usr/share/victim/h.*(itself|not an earlier file)"
refused hardlink-directory "hard link target /usr/share/victim is not an earlier file"
refused hardlink-symlink "hard link target /usr/share/victim/s is a symlink"
refused hardlink-forward "hard link target /usr/share/victim/later is not an earlier file"

# --- one path twice ---
refused twice-dir-symlink "'/usr/share/victim/d' appears twice"
refused twice-symlink-dir "'/usr/share/victim/d' appears twice"
refused twice-file "'/usr/share/victim/f' appears twice"

# --- special files ---
accepted_like_dpkg special "$CASES/special_1.0.deb"
for p in usr/bin/suid:4755 usr/bin/sgid:2755 var/spool/special:2775 var/tmp-special:1777; do
	m=$(stat -c %a "$ROOT/${p%%:*}")
	[ "$m" = "${p#*:}" ] || check_fail "special: /${p%%:*} has mode $m, expected ${p#*:}"
done
if ! [ -c "$ROOT/dev/null-like" ] || ! [ -b "$ROOT/dev/block-like" ] ||
	! [ -p "$ROOT/var/spool/special/fifo" ]; then
	check_fail "special: device nodes or the fifo missing"
fi

# --- tar header tricks ---
refused tar-base256-huge 'huge.*(too large|No space|trunc|allocate)' tmpfs
refused tar-base256-big 'No space left on device' tmpfs
accepted tar-sparse-gnu "$TESTDIR/sparse/usr/share/sparse/file:usr/share/sparse/file"
accepted tar-sparse-posix "$TESTDIR/sparse/usr/share/sparse/file:usr/share/sparse/file"
refused tar-sparse-huge '/f.*(too large|No space|allocate|trunc|corrupt)' tmpfs
refused pax-path-dotdot "unsafe path '\.\./pax-escape'"
refused pax-uid-invalid 'invalid owner'
refused pax-size-huge "$CAUSE_TRUNC|too large|No space|allocate" tmpfs
refused pax-linkpath-long 'File name too long|too long'
refused name-component-300 'too long'
refused name-path-5000 'too long'
accepted_like_dpkg longname-246 "$CASES/longname-246.deb"
refused longname-255 'too long'

# --- files of other packages ---
refused owned-by-other "trying to overwrite '/usr/share/owner/file', which is also in package owner 1\.0" "$OWNER"

# --------------------------------------------------------------------------
section "stock dpkg on the same packages (notes, not assertions)"
printf '%-28s %-5s %-9s %-9s %s\n' case exit root outside message
while IFS=$'\t' read -r n rc root outside msg; do
	printf '%-28s %-5s %-9s %-9s %s\n' "$n" "$rc" "$root" "$outside" "$msg"
done <"$NOTES"

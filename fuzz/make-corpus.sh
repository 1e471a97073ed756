#!/bin/bash
# make-corpus.sh - build the seed corpora of the fuzz targets.
#
# Usage: fuzz/make-corpus.sh OUTDIR [HOSTILE_SH]
#
# Writes:
#   OUTDIR/deb/      .deb files: for fuzz_deb and fuzz_extract
#   OUTDIR/control/  control and status files: for fuzz_control
#
# The .deb seeds are real packages built with dpkg-deb from small staging
# trees (every compression dpkg-deb offers, and bzip2 and uncompressed
# members assembled by hand), with every entry type: files, directories,
# symlinks, hard links, a fifo, conffiles, maintainer scripts.  If
# HOSTILE_SH (tests/integration/hostile.sh) is given and the environment
# it needs is there (UNPKG and TESTLIB set, running as root), the hostile
# packages it builds are added too; otherwise they are left out with a
# note.  The control seeds are the control files of those packages, a few
# written here to reach every relationship and version form, and the
# first paragraphs of this system's dpkg status file, if it has one.
# Small seeds keep libFuzzer's default maximum input length useful.
set -euo pipefail
export LC_ALL=C
umask 022

out=${1:?usage: make-corpus.sh OUTDIR [HOSTILE_SH]}
hostile=${2:-}
mkdir -p "$out/deb" "$out/control"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/unpkg-corpus.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

for cmd in dpkg-deb tar ar gzip xz zstd bzip2; do
	command -v "$cmd" >/dev/null || {
		echo "make-corpus.sh: $cmd not found" >&2
		exit 1
	}
done

# stage NAME [VERSION]: a staging tree with a control file.
stage() {
	local d=$work/$1
	mkdir -p "$d/DEBIAN"
	cat >"$d/DEBIAN/control" <<-EOF
	Package: $1
	Version: ${2:-1.0-1}
	Architecture: all
	Maintainer: unpkg fuzzing <fuzz@example.invalid>
	Description: seed $1
	 A seed for the fuzz targets.
	EOF
	printf '%s\n' "$d"
}

# A package with one of everything.
d=$(stage every 2:1.2.3~rc1-4)
cat >>"$d/DEBIAN/control" <<-EOF
Depends: libc6 (>= 2.36), foo:any | bar (<< 3), baz:amd64 (= 1:0)
Pre-Depends: dpkg (>= 1.19.1)
Provides: virt (= 1.0), other
Conflicts: old (<= 0.9)
Multi-Arch: foreign
EOF
mkdir -p "$d/usr/bin" "$d/usr/share/doc/every" "$d/etc" "$d/var/lib/every"
printf '#!/bin/sh\necho every\n' >"$d/usr/bin/every"
chmod 0755 "$d/usr/bin/every"
echo 'setting = 1' >"$d/etc/every.conf"
echo /etc/every.conf >"$d/DEBIAN/conffiles"
echo 'docs' >"$d/usr/share/doc/every/README"
ln -s every "$d/usr/bin/every-link"
ln -s /etc/every.conf "$d/usr/share/doc/every/abs-link"
ln "$d/usr/bin/every" "$d/usr/bin/every-hard"
mkfifo "$d/var/lib/every/fifo"
chmod 4755 "$d/usr/bin/every-hard"
printf '#!/bin/sh\nexit 0\n' >"$d/DEBIAN/postinst"
chmod 0755 "$d/DEBIAN/postinst"
for z in gzip xz zstd; do
	dpkg-deb --root-owner-group -Z"$z" --build "$d" "$out/deb/every-$z.deb" >/dev/null
done

# Tiny packages: one file, one directory, an empty data.tar.
d=$(stage tiny)
mkdir -p "$d/usr"
echo x >"$d/usr/x"
dpkg-deb --root-owner-group -Zgzip --build "$d" "$out/deb/tiny.deb" >/dev/null
d=$(stage empty)
dpkg-deb --root-owner-group -Zgzip --build "$d" "$out/deb/empty.deb" >/dev/null

# bzip2 and mixed compressions, assembled by hand.
d=$work/every
for pair in bz2:bz2 none:xz gz:zst none:none; do
	c=${pair%%:*} z=${pair#*:} m=$work/manual-$c-$z
	mkdir -p "$m"
	# -b1: no padding to tar's default 10 KiB records.
	tar -C "$d/DEBIAN" -b1 --format=gnu --owner=0 --group=0 -cf "$m/control.tar" .
	tar -C "$d" -b1 --format=gnu --owner=0 --group=0 --exclude=./DEBIAN -cf "$m/data.tar" .
	for f in control data; do
		want=$c
		[ "$f" = data ] && want=$z
		case $want in
		none) ;;
		gz) gzip -9n "$m/$f.tar" ;;
		xz) xz "$m/$f.tar" ;;
		zst) zstd -q --rm "$m/$f.tar" ;;
		bz2) bzip2 "$m/$f.tar" ;;
		esac
	done
	printf '2.0\n' >"$m/debian-binary"
	(cd "$m" && ar rc "$out/deb/manual-$c-$z.deb" debian-binary control.tar* data.tar*)
done

# Other tar dialects for the data member: POSIX pax with a long name and
# a sparse file, and ustar with a path split into prefix and name.
d=$(stage dialects)
long=$d/usr/share/$(printf 'd%.0s' $(seq 1 120))
mkdir -p "$long"
echo long >"$long/file"
truncate -s 1M "$d/usr/share/sparse"
printf 'tail' >>"$d/usr/share/sparse"
for fmt in pax gnu; do
	m=$work/dialect-$fmt
	mkdir -p "$m"
	tar -C "$d/DEBIAN" -b1 --format=gnu --owner=0 --group=0 -cf "$m/control.tar" .
	tar -C "$d" -b1 --format="$fmt" --sparse --owner=0 --group=0 --exclude=./DEBIAN -cf "$m/data.tar" .
	xz "$m/data.tar"
	printf '2.0\n' >"$m/debian-binary"
	(cd "$m" && ar rc "$out/deb/dialect-$fmt.deb" debian-binary control.tar data.tar.xz)
done

# The hostile packages of the integration tests.
if [ -n "$hostile" ]; then
	if [ -n "${UNPKG:-}" ] && [ -n "${TESTLIB:-}" ] && [ "$(id -u)" -eq 0 ]; then
		mkdir -p "$work/hostile"
		if HOSTILE_CORPUS=$work/hostile bash "$hostile" >"$work/hostile.log" 2>&1; then
			for f in "$work"/hostile/*.deb; do
				[ -e "$f" ] || continue
				# The decompression bombs and big seeds would
				# only slow the fuzzers down.
				case $f in *bomb*) continue ;; esac
				[ "$(stat -c %s "$f")" -le 32768 ] || continue
				cp "$f" "$out/deb/hostile-$(basename "$f")"
			done
		else
			echo "make-corpus.sh: $hostile failed; its packages are left out:" >&2
			tail -5 "$work/hostile.log" >&2
		fi
	else
		echo "make-corpus.sh: hostile packages left out (need UNPKG, TESTLIB and root)" >&2
	fi
fi

# Control seeds: the control file of every .deb seed ...
n=0
for f in "$out"/deb/*.deb; do
	n=$((n + 1))
	dpkg-deb -I "$f" control >"$out/control/deb-$n" 2>/dev/null ||
		rm -f "$out/control/deb-$n"
done
# ... a few that reach every field form ...
cat >"$out/control/relations" <<-'EOF'
Package: rel
Version: 1:2.3+dfsg-1~bpo11+1
Architecture: any
Maintainer: x <x@example.invalid>
Depends: a, b (>= 1), c (<< 2:1.0-1~), d:any (= 3), e:native | f (>> 0) | g (<= 9)
Pre-Depends: h (> 1), i (< 2)
Recommends: j [amd64], k <!nocheck>
Breaks: l (<< 1.0)
Provides: m (= 1.0), n
Replaces: o
Essential: yes
Protected: no
Multi-Arch: same
Priority: extra
Description: relations
 .
 every form
EOF
cat >"$out/control/status" <<-'EOF'
Package: one
Status: install ok installed
Priority: optional
Version: 1.0
Architecture: all
Conffiles:
 /etc/one.conf 0123456789abcdef0123456789abcdef
 /etc/gone.conf 0123456789abcdef0123456789abcdef obsolete
Config-Version: 0.9
Description: one

Package: two
Status: deinstall ok config-files
Version: 0:2-0
Architecture: amd64
Triggers-Pending: foo
Description: two
 line
  
EOF
printf 'Package: bad\r\nVersion: 1\n' >"$out/control/crlf"
printf 'Package: a\nPackage: b\n' >"$out/control/duplicate"
# ... and real ones from this system's database.
if [ -r /var/lib/dpkg/status ]; then
	awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 40 { print > (dir "/status-" NR) }' \
		dir="$out/control" /var/lib/dpkg/status
fi

echo "make-corpus.sh: $(find "$out/deb" -type f | wc -l) .deb seeds," \
	"$(find "$out/control" -type f | wc -l) control seeds in $out"

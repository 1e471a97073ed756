#!/bin/bash
# selections.sh - unpkg --set-selections compared with stock dpkg.
#
# Twin roots get the same packages from dpkg; then the same input goes to
# unpkg --set-selections in one and to dpkg --set-selections in the
# other.  Compared: the exit status, the output and the whole database.
# Checked too: which input unpkg carried out itself and which it handed
# to stock dpkg (a wrapper as UNPKG_DPKG notes each call) -- the input apt
# gives before a purge must not reach stock dpkg.
TEST_NAME=selections
. "${TESTLIB:?}"
need_root

native=$(dpkg --print-architecture)
foreign=i386
[ "$native" != i386 ] || foreign=amd64

# aa (native), cc (arch all, with a conffile: config-files once removed),
# mm (Multi-Arch: same, native and foreign)
new_pkg "$TESTDIR/src-aa" aa 1.0 "$native"
build_deb "$TESTDIR/aa.deb" "$TESTDIR/src-aa"
new_pkg "$TESTDIR/src-cc" cc
mkdir -p "$TESTDIR/src-cc/etc"
echo cc >"$TESTDIR/src-cc/etc/cc.conf"
echo /etc/cc.conf >"$TESTDIR/src-cc/DEBIAN/conffiles"
build_deb "$TESTDIR/cc.deb" "$TESTDIR/src-cc"
for arch in "$native" "$foreign"; do
	new_pkg "$TESTDIR/src-mm-$arch" mm 1.0 "$arch"
	echo "Multi-Arch: same" >>"$TESTDIR/src-mm-$arch/DEBIAN/control"
	build_deb "$TESTDIR/mm-$arch.deb" "$TESTDIR/src-mm-$arch"
done

T=$TESTDIR/template
mkroot "$T"
dpkg --root="$T" --add-architecture "$foreign"
dpkg --root="$T" -i "$TESTDIR/aa.deb" "$TESTDIR/cc.deb" \
	"$TESTDIR/mm-$native.deb" "$TESTDIR/mm-$foreign.deb" >/dev/null
dpkg --root="$T" -r cc >/dev/null
# hh: a selection without a package, as a hold of a package never
# installed leaves it
printf 'Package: hh\nStatus: hold ok not-installed\nArchitecture: all\n\n' \
	>>"$T/var/lib/dpkg/status"

cat >"$TESTDIR/dpkg-wrap" <<EOF
#!/bin/sh
echo "\$*" >>"$TESTDIR/handed"
exec dpkg "\$@"
EOF
chmod 0755 "$TESTDIR/dpkg-wrap"

A=$TESTDIR/case/unpkg B=$TESTDIR/case/dpkg

# compare_sel HANDED INPUT [ARG...]: INPUT (printf's format) set in
# fresh twin roots, with $AVAILABLE (printf's format) as their available
# file if set; HANDED 1 if unpkg must hand it to stock dpkg.
compare_sel() {
	local handed=$1 input=$2 urc=0 drc=0 r
	shift 2
	section "$(printf '%q' "$(printf "$input")") $* ${AVAILABLE:+(available: $(printf '%q' "$(printf "$AVAILABLE")"))}"
	rm -rf "$TESTDIR/case" "$TESTDIR/handed"
	mkdir -p "$TESTDIR/case"
	for r in "$A" "$B"; do
		cp -a "$T" "$r"
		if [ -n "${AVAILABLE:-}" ]; then
			# shellcheck disable=SC2059
			printf "$AVAILABLE" >"$r/var/lib/dpkg/available"
		fi
	done
	# (printf's format: the cases are literal)
	# shellcheck disable=SC2059
	printf "$input" | UNPKG_DPKG=$TESTDIR/dpkg-wrap \
		"$UNPKG" --root="$A" --log="$A.log" --set-selections "$@" \
		>"$A.out" 2>&1 ||
		urc=$?
	# shellcheck disable=SC2059
	printf "$input" | dpkg --root="$B" --log="$B.log" --set-selections \
		"$@" >"$B.out" 2>&1 || drc=$?
	show_file "$A.out" "unpkg output"
	assert_status "$drc" "$urc" "unpkg's exit status (dpkg's $drc)"
	# (dpkg's messages name the root)
	sed -i "s|$A/|ROOT/|g" "$A.out"
	sed -i "s|$B/|ROOT/|g" "$B.out"
	assert_same_file "$B.out" "$A.out" "output (dpkg vs unpkg)"
	for r in "$A" "$B"; do
		sed 's/^[0-9-]* [0-9:]* //' "$r.log" >"$r.log.lines" 2>/dev/null ||
			: >"$r.log.lines"
	done
	assert_same_file "$B.log.lines" "$A.log.lines" "--log lines (dpkg vs unpkg)"
	compare_dbs "$A" "$B" "--set-selections"
	if [ "$handed" = 1 ]; then
		[ -s "$TESTDIR/handed" ] ||
			check_fail "carried out by unpkg, which must hand it to dpkg"
	elif [ -e "$TESTDIR/handed" ]; then
		check_fail "handed to dpkg ($(cat "$TESTDIR/handed"))"
	fi
}

# carried out by unpkg
compare_sel 0 "aa purge\ncc:all deinstall\nmm:$native hold\n"
compare_sel 0 "aa:$native deinstall\nmm:$foreign purge\n"
compare_sel 0 "# a comment\n\n  aa\thold \r\naa install\ncc purge"
compare_sel 0 "aa hold\n"
compare_sel 0 ""
# stock dpkg's warnings, errors and package table
compare_sel 1 "zz purge\n"
compare_sel 1 "aa purge\nzz purge\n"
compare_sel 1 "mm purge\n"
compare_sel 1 "aa:$foreign purge\n"
compare_sel 1 "cc:$native purge\n"
compare_sel 1 "hh purge\n"
compare_sel 1 "AA purge\n"
compare_sel 1 "aa bogus\n"
compare_sel 1 "aa unknown\n"
compare_sel 1 "aa purge extra\n"
compare_sel 1 "aa\n"
compare_sel 1 "aa purge "
compare_sel 1 "aa purge\n" extra-argument
# dpkg's write takes Section and Priority from the available file: the
# one installed instance's whatever the architecture named, the
# instance of the architecture named for Multi-Arch: same
md="Maintainer: m <m@example.invalid>\nDescription: d\n"
AVAILABLE="Package: aa\nVersion: 2\nArchitecture: $foreign\nPriority: important\nSection: admin\n$md\n"
AVAILABLE+="Package: mm\nVersion: 2\nArchitecture: $foreign\nMulti-Arch: same\nSection: libs\n$md\n"
AVAILABLE+="Package: zz\nVersion: 2\nArchitecture: all\nPriority: required\n$md"
compare_sel 0 "aa hold\n"
compare_sel 0 ""
AVAILABLE="Package: aa\nVersion: 2\nArchitecture: $native\nPriority: Important\n$md"
compare_sel 1 "aa hold\n"
AVAILABLE="Package: hh\nVersion: 2\nArchitecture: all\nPriority: required\n$md"
compare_sel 1 "aa hold\n"
AVAILABLE="Package: aa\nArchitecture: $native\nPriority: required\n$md"
compare_sel 1 "aa hold\n"
unset AVAILABLE

exit $((TEST_FAILURES > 0))

#!/bin/bash
# layering.sh - lib/ is layered: no file calls a file that calls it back.
#
# The graph has an edge A -> B between two files of lib/ when
#   - A's object uses a symbol B's object defines (nm: undefined in A,
#     defined in B), or
#   - A.c (or A.h) includes B.h and B.c exists (B.h is B's interface; a
#     header without a .c of its own, such as commit-impl.h, belongs to
#     no file and adds no edge).
# Every strongly connected component of more than one file is a cycle and
# fails the test, unless it is listed, with exactly the same files, in
# ALLOWED_CYCLES below (cycles not untangled yet; the list only shrinks,
# and an entry that no longer matches a cycle fails too, so that it is
# removed).  The test also fails when lib/install.c has more than 700
# lines or any file of lib/ more than 2000 (ALLOWED_SIZES lists the ones
# still over).
#
# Run on its own: make check TESTS=tests/integration/layering.sh
# or, from the build directory: LAYERING_BUILDDIR=. LAYERING_SRCDIR=..
#   bash ../tests/integration/layering.sh
. "${TESTLIB:?}"

ALLOWED_CYCLES=()
ALLOWED_SIZES=()

builddir=${LAYERING_BUILDDIR:-$(dirname "$(dirname "${UNPKG:?}")")}
srcdir=${LAYERING_SRCDIR:-$(dirname "$(dirname "$(dirname "$TESTLIB")")")}
objdir=$builddir/lib
[ -d "$srcdir/lib" ] || fail "no source directory lib/ at $srcdir"
command -v nm >/dev/null || skip "nm is missing"

# The objects of the sources of lib/ (an object left from a file that was
# moved away is not looked at); each must be newer than its source, or a
# stale object would hide edges.
objs=()
for c in "$srcdir"/lib/*.c; do
	m=$(basename "$c" .c)
	o=$objdir/libunpkg_la-$m.o
	[ -f "$o" ] || fail "lib/$m.c has no object $o (not built?)"
	[ "$o" -nt "$c" ] ||
		fail "the object of lib/$m.c is older than its source: run make first"
	objs+=("$o")
done

edges=$TESTDIR/edges
: >"$edges"

# Symbol edges.
defs=$TESTDIR/defs
: >"$defs"
for o in "${objs[@]}"; do
	m=$(basename "$o" .o)
	m=${m#libunpkg_la-}
	nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print $3, m }' >>"$defs"
done
for o in "${objs[@]}"; do
	m=$(basename "$o" .o)
	m=${m#libunpkg_la-}
	nm -u "$o" | awk '{ print $NF }' |
		awk -v m="$m" 'NR == FNR { def[$1] = $2; next }
			($1 in def) && def[$1] != m { print m, def[$1], "calls" }' \
			"$defs" - >>"$edges"
done

# Include edges: lib/X.{c,h} including "Y.h" where lib/Y.c exists.
for f in "$srcdir"/lib/*.c "$srcdir"/lib/*.h; do
	m=$(basename "$f")
	m=${m%.?}
	sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)\.h".*/\1/p' "$f" |
		while read -r inc; do
			[ -f "$srcdir/lib/$inc.c" ] && [ "$inc" != "$m" ] &&
				echo "$m $inc includes"
		done >>"$edges" || true
done
sort -u -o "$edges" "$edges"
note "$(wc -l <"$edges") edges between $(ls "$srcdir"/lib/*.c | wc -l) files"

# Strongly connected components (transitive closure; lib/ is small).
cycles=$TESTDIR/cycles
awk 'BEGIN { n = 0 }
	{ if (!($1 in id)) { id[$1] = n; name[n++] = $1 }
	  if (!($2 in id)) { id[$2] = n; name[n++] = $2 }
	  r[id[$1], id[$2]] = 1; why[$1, $2] = why[$1, $2] " " $3 }
	END {
		for (k = 0; k < n; k++)
			for (i = 0; i < n; i++)
				if (r[i, k])
					for (j = 0; j < n; j++)
						if (r[k, j]) r[i, j] = 1
		for (i = 0; i < n; i++) {
			if (done[i]) continue
			c = name[i]; cnt = 1
			for (j = i + 1; j < n; j++)
				if (r[i, j] && r[j, i]) { c = c " " name[j]; cnt++; done[j] = 1 }
			if (cnt > 1) print c
		}
	}' "$edges" |
	while read -r line; do
		tr ' ' '\n' <<<"$line" | sort | tr '\n' ' ' | sed 's/ $//'
		echo
	done | sort >"$cycles"

# The edges inside each cycle, for the log.
show_cycle() {
	local members=" $1 "
	while read -r a b why; do
		case $members in *" $a "*) ;; *) continue ;; esac
		case $members in *" $b "*) ;; *) continue ;; esac
		printf '    %s -> %s (%s)\n' "$a" "$b" "$why"
	done < <(awk '{ w[$1 " " $2] = w[$1 " " $2] (w[$1 " " $2] ? "," : "") $3 }
		END { for (k in w) print k, w[k] }' "$edges" | sort)
}

allowed=" "
for c in "${ALLOWED_CYCLES[@]}"; do
	allowed="$allowed[$c] "
done
while read -r c; do
	[ -n "$c" ] || continue
	case $allowed in
	*"[$c]"*)
		note "cycle still allowed: $c"
		show_cycle "$c"
		;;
	*)
		check_fail "cycle between files of lib/: $c"
		show_cycle "$c" >&2
		;;
	esac
done <"$cycles"
for c in "${ALLOWED_CYCLES[@]}"; do
	grep -qxF "$c" "$cycles" ||
		check_fail "allowed cycle \"$c\" is gone: remove it from ALLOWED_CYCLES"
done

# Sizes.
for f in "$srcdir"/lib/*.c "$srcdir"/lib/*.h; do
	b=$(basename "$f")
	lines=$(wc -l <"$f")
	limit=2000
	[ "$b" = install.c ] && limit=700
	[ "$lines" -le "$limit" ] && continue
	if [[ " ${ALLOWED_SIZES[*]} " == *" $b "* ]]; then
		note "size still allowed: lib/$b has $lines lines (limit $limit)"
	else
		check_fail "lib/$b has $lines lines, more than $limit"
	fi
done
for b in "${ALLOWED_SIZES[@]}"; do
	lines=$(wc -l <"$srcdir/lib/$b")
	limit=2000
	[ "$b" = install.c ] && limit=700
	[ "$lines" -gt "$limit" ] ||
		check_fail "lib/$b is within its limit now: remove it from ALLOWED_SIZES"
done

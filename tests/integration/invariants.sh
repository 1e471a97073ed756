# invariants.sh - the crash-safety contract (DESIGN.md section 3, I1-I8)
# shellcheck shell=bash
# checked on a root that a crash or a fault left behind, and on the root a
# re-run made of it.  Shared by tests/integration/faults.sh (SIGKILL and
# failing system calls) and tests/crash/powerloss.sh (power cuts).
#
# Sourced after lib.sh:
#
#     . "$(dirname "$TESTLIB")/invariants.sh"
#
# A case (one scenario: a root before an install and the packages the
# install brings) keeps its reference in a directory REF:
#   old.fp old.status old.tree old.db   the root before the install
#   new.fp new.status new.tree new.db   after the crash-free install
#   paths     "PKG TAB PATH TAB conf|-": every path the packages of the run
#             own before or after it, "conf" for conffiles
#   versions  "PKG OLD NEW" per package of the run ("-" for none)
#   action    what the run does (inv_reference writes INV_ACTION there):
#             unpack (-i, --unpack: I1-I8, the default), configure,
#             triggers, remove or purge (I1-I3, I6-I8 and S1, S2, S3 of
#             doc/design.md instead of I4 and I5; triggers: T1 too, see
#             inv_check_triggers)
#   old.trig new.trig old.ran new.ran
#             the trigger states (trig_states) and the log of triggered
#             postinsts (var/log/triggered, see inv_check_triggers)
# made with inv_snapshot (old, then new) and inv_reference.
#
# Scratch files go to INV_WORK (default: the test's scratch directory); a
# test that wants them on a tmpfs sets INV_WORK to a directory there.  Some
# are documented as results (inv_check_state, inv_check_converged).
#
# Paths must not contain white space (true of the fixtures of both tests).

# statuses ROOT: "PACKAGE VERSION WANT EFLAG STATE" for every package.
statuses() {
	dpkg-query --root="$1" -W -f='${Package} ${Version} ${Status}\n'
}

# fingerprint ROOT [db]: what tree_manifest says about ROOT, one line per
# path (PATH TYPE MODE UID:GID [size=N md5=HEX] [-> TARGET] [mtime=T]
# [hardlink=FIRST]), sorted, made with a few processes instead of a shell
# loop (the fault tests need it thousands of times).  var/log is left out.
# With "db", the database's files are included, with their content hash
# but without their times, except dpkg's private files that db_manifest
# leaves out too (lock files, status-old, an empty triggers/Unincorp).
# A file or directory that cannot be read (EIO, or EUCLEAN in a damaged
# crash state) does not stop it: a file's line says md5=UNREADABLE and the
# errors go to INV_WORK/fp.err (emptied first), for inv_read_errors.
fingerprint() {
	local root=${1%/} db=${2:-} w=${INV_WORK:-$TESTDIR}
	local md5=$w/fp.md5 err=$w/fp.err
	: >"$err"
	(cd "$root" && { find . -path ./var/log -prune -o -type f -print0 2>>"$err" || true; } |
		{ xargs -0r md5sum 2>>"$err" || true; }) >"$md5"
	{ find "$root" -path "$root/var/log" -prune -o \
		-printf '%y %n %D:%i %m %U:%G %s %T@ %P\t%l\n' 2>>"$err" || true; } |
		awk -v md5="$md5" -v db="$db" '
	BEGIN {
		while ((getline l <md5) > 0) {
			p = substr(l, 35)
			sub(/^\.\//, "", p)
			sum[p] = substr(l, 1, 32)
		}
		split("lock lock-frontend status-old triggers/Lock", x, " ")
		for (i in x) skip["var/lib/dpkg/" x[i]] = 1
	}
	{
		tab = index($0, "\t")
		target = substr($0, tab + 1)
		split(substr($0, 1, tab - 1), f, " ")
		p = f[8]
		if (p == "") p = "."
		isdb = p == "var/lib/dpkg" || substr(p, 1, 13) == "var/lib/dpkg/"
		if (isdb && (db == "" || p in skip)) next
		if (p == "var/lib/dpkg/triggers/Unincorp" && f[6] == 0) next
		line = p " " f[1] " " sprintf("%04d", f[4]) " " f[5]
		if (f[1] == "f") line = line " size=" f[6] " md5=" ((p in sum) ? sum[p] : "UNREADABLE")
		if (f[1] == "l") line = line " -> " target
		if (f[1] != "d" && !isdb) line = line " mtime=" f[7]
		n++
		L[n] = line; T[n] = f[1]; I[n] = f[3]; K[n] = f[2]
		if (f[1] != "d" && f[2] > 1 && (!(f[3] in first) || p < first[f[3]]))
			first[f[3]] = p
	}
	END {
		for (i = 1; i <= n; i++) {
			if (T[i] != "d" && K[i] > 1) L[i] = L[i] " hardlink=" first[I[i]]
			print L[i]
		}
	}' | sort
}

# inv_read_errors OUT WHAT FILE...: the read errors (EIO, EUCLEAN, ...) in
# the standard error FILEs of commands that read a crash or fault state,
# appended to OUT as one finding of class FS: a state that cannot be read
# is file-system damage reported with the state, never a reason for the
# test to stop.  The shell's warning about NUL bytes in a torn database
# file is not a read error (the checks report such a file themselves).
inv_read_errors() {
	local out=$1 what=$2 errs
	shift 2
	errs=$(cat -- "$@" 2>/dev/null | grep -v 'ignored null byte' | head -n 3 | tr '\n' ' ') || true
	[ -z "$errs" ] || echo "FS: cannot read $what: $errs" >>"$out"
}

# pkg_paths ROOT PKG...: "PKG TAB PATH TAB conf|-" for each PKG that ROOT
# has (the paths dpkg -L lists, without the leading slash, a diverted one
# at its divert-to path, and the conffiles tagged "conf").
pkg_paths() {
	local root=$1 pkg
	shift
	for pkg in "$@"; do
		case $(dpkg-query --root="$root" -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true) in
		"" | not-installed) continue ;;
		esac
		dpkg-query --root="$root" -L "$pkg" | awk -v pkg="$pkg" '
			function flush() { if (p != "" && p != "/.") print pkg "\t" substr(p, 2) "\t-" }
			/^(locally diverted|diverted by [^ ]+) to: \// { sub(/^[^\/]*/, ""); p = $0; next }
			/^package diverts others to: \// { next }
			{ flush(); p = $0 }
			END { flush() }'
		dpkg-query --root="$root" -W -f='${Conffiles}\n' "$pkg" |
			awk -v pkg="$pkg" 'NF >= 2 { sub(/^\//, "", $1); print pkg "\t" $1 "\tconf" }'
	done
}

# inv_snapshot ROOT REF old|new PKG...: record what ROOT looks like before
# (old) or after (new) the crash-free install of the case in REF.
inv_snapshot() {
	local root=$1 ref=$2 which=$3
	shift 3
	statuses "$root" >"$ref/$which.status"
	fingerprint "$root" db >"$ref/$which.fp"
	tree_manifest "$root" >"$ref/$which.tree"
	db_manifest "$root" >"$ref/$which.db"
	pkg_paths "$root" "$@" >"$ref/paths.$which"
	trig_states "$root" >"$ref/$which.trig"
	cat "$root/var/log/triggered" >"$ref/$which.ran" 2>/dev/null || : >"$ref/$which.ran"
}

# trig_states ROOT: "PKG TAB STATE TAB PENDING TAB AWAITED" for every
# package, the trigger names and awaited packages separated by one space.
trig_states() {
	dpkg-query --root="$1" -W \
		-f='${Package}\t${db:Status-Status}\t${Triggers-Pending}\t${Triggers-Awaited}\n' |
		awk -F'\t' -v OFS='\t' '{
			for (i = 3; i <= 4; i++) { gsub(/^ +| +$/, "", $i); gsub(/ +/, " ", $i) }
			print }'
}

# inv_reference REF PKG...: after both snapshots, the paths, versions and
# action (INV_ACTION, default unpack) of the case.
inv_reference() {
	local ref=$1 pkg old new
	shift
	echo "${INV_ACTION:-unpack}" >"$ref/action"
	sort -u "$ref/paths.old" "$ref/paths.new" >"$ref/paths"
	for pkg in "$@"; do
		old=$(awk -v p="$pkg" '$1 == p { print $2 }' "$ref/old.status")
		new=$(awk -v p="$pkg" '$1 == p { print $2 }' "$ref/new.status")
		echo "$pkg ${old:--} ${new:--}"
	done >"$ref/versions"
}

# The checker reads PATHS, VERSIONS, the fingerprints (with the database)
# OLD and NEW of the crash-free run and CURRENT, and the statuses now and
# before the run.  It prints one line per violation, "INVARIANT: what",
# with a " [known bug: TAG]" suffix where the state is the signature of a
# bug once found (doc/reliability.md).  A path of a package of the run must
# be in its old or its new state (absent counts as a state), every other
# path as before, but the in-flight run's NAME.dpkg-new / NAME.dpkg-tmp
# (and what lies in a directory so named) for a NAME of the run or of the
# old tree; the states of a package's paths must agree with its status,
# and so must its info/ files.  With -v newness=FILE it also writes "PKG
# NEWPATH" per package of the run to FILE (- when no path is new).
# With -v action=configure|triggers|remove|purge the statuses are judged
# by S1, S2 and S3 instead of I4 and I5 (doc/design.md); the NAME.dpkg-new
# of a conffile, waiting in the old or the new state, is a path of the
# conffile's package (old or new, like the others); and the info/ files of
# the packages of the run are judged by S1 and S2, not as old or new
# database files (a removal rewrites info/P.list as it goes).
# shellcheck disable=SC2016
INV_CHECKER='
function key(l,  i) { i = index(l, " "); return i ? substr(l, 1, i - 1) : l }
function v(inv, msg) { print inv ": " msg }
function known(tag) { return "[known bug: " tag "]" }
# put(ARR, DB, L): a line of a fingerprint; the files of the database go
# to DB too (see dbfile)
function put(arr, db, l,  k) {
	k = key(l)
	# (a database file linked to its backup is the same file to a reader)
	sub(/ hardlink=[^ ]*$/, "", l)
	if (substr(k, 1, 13) == "var/lib/dpkg/") {
		if (k ~ /^var\/lib\/dpkg\/info\/[^\/]+$/ && k !~ /\.dpkg-(new|tmp)$/)
			arr[k] = l
		if (dbfile(k, l)) db[k] = l
		return
	}
	arr[k] = l
}
# same_info(ARR, P): "" if info/P.* in CURRENT is what ARR has, else the
# first file that is not
function same_info(arr, P,  k, pre, n) {
	pre = "var/lib/dpkg/info/" P "."
	n = length(pre)
	for (k in C) if (substr(k, 1, n) == pre && (!(k in arr) || arr[k] != C[k])) return k
	for (k in arr) if (substr(k, 1, n) == pre && !(k in C)) return k " (missing)"
	return ""
}
# staged(P): P is NAME.dpkg-new or NAME.dpkg-tmp, or lies in a directory
# so named, for a NAME of a package of the run or of the old tree
function staged(p,  parts, n, i, b) {
	n = split(p, parts, "/")
	b = ""
	for (i = 1; i <= n; i++) {
		b = (i == 1) ? parts[1] : b "/" parts[i]
		if (b ~ /\.dpkg-(new|tmp)$/) {
			sub(/\.dpkg-(new|tmp)$/, "", b)
			return (b in own || b in O)
		}
	}
	return 0
}
# dbfile(K, L): K is a file of the database that a reader takes
# information from and that is old or new as a whole: not status and
# updates/ (each run rewrites them several times; I3 and I8 check that
# they parse and what they say), not the temporary names of a write in
# flight (NAME-new, NAME.dpkg-new, NAME.dpkg-tmp, NAME.dpkg-old,
# triggers/NAME.new), not the scratch space of dpkg (tmp.ci/, the control
# area of the package being unpacked, and reassemble.deb)
function dbfile(k, l) {
	if (l !~ /^[^ ]+ f /) return 0
	if (k == "var/lib/dpkg/status" || k ~ /^var\/lib\/dpkg\/updates\//) return 0
	if (k ~ /^var\/lib\/dpkg\/(tmp\.ci\/|reassemble\.deb$|triggers\/.*\.new$)/) return 0
	return k !~ /(-new|\.dpkg-(new|tmp|old))$/
}
# infoof(K): the package whose info/ file K is ("" for another file)
function infoof(k) {
	if (k !~ /^var\/lib\/dpkg\/info\//) return ""
	k = substr(k, 19)
	sub(/[.:].*/, "", k)
	return k
}
function newpath(P) { return (P in hnew) ? hnew[P] : cnew[P] }
FILENAME == ARGV[1] { split($0, a, "\t"); own[a[2]] = a[1]; if (a[3] == "conf") conf[a[2]] = 1; next }
FILENAME == ARGV[2] { oldv[$1] = $2; newv[$1] = $3; inrun[$1] = 1; next }
FILENAME == ARGV[3] { put(O, DO, $0); next }
FILENAME == ARGV[4] { put(N, DN, $0); next }
FILENAME == ARGV[5] { put(C, DC, $0); next }
FILENAME == ARGV[6] { ver[$1] = $2; eflag[$1] = $4; state[$1] = $5; cur[$1] = $0; next }
FILENAME == ARGV[7] { before[$1] = $0; next }
# the rules of the actions other than unpacking (action != "unpack")
function action_rules(P,  st, ef, desc, p, c, o, n, k, files, gone) {
	st = (P in state) ? state[P] : "absent"
	ef = (P in eflag) ? eflag[P] : "-"
	desc = P " (status " ef " " st " " ver[P] ")"
	files = st == "installed" || st == "unpacked" || st == "half-configured" || st ~ /^triggers-/
	gone = st == "config-files" || st == "not-installed" || st == "absent"
	if (!files && !gone && !(st == "half-installed" && (action == "remove" || action == "purge"))) {
		v("I3", desc ": unexpected state for " action)
		return
	}
	if (st != "absent" && st != "not-installed" && ver[P] != oldv[P] && ver[P] != newv[P]) {
		v("I3", desc ": a version this run neither started from nor ends at")
		return
	}
	for (p in own) {
		if (own[p] != P) continue
		c = (p in C) ? C[p] : "ABSENT"
		o = (p in O) ? O[p] : "ABSENT"
		n = (p in N) ? N[p] : "ABSENT"
		# S1: recorded without files, none of them left (conffiles
		# stay under config-files); directories may be shared
		if (gone && c != "ABSENT" && c !~ /^[^ ]+ d / && (st != "config-files" || !(p in conf) && !(p in waiting)))
			v("S1", desc ": " p " is still there: [" c "]")
		# S2: recorded with files, all of them there (a waiting
		# NAME.dpkg-new goes at configuration, a NAME.dpkg-dist comes)
		if (files && c == "ABSENT" && !(p in waiting) && !(p in dist) &&
		    (o != "ABSENT" && o !~ /^[^ ]+ d / || n != "ABSENT" && n !~ /^[^ ]+ d /))
			v("S2", desc ": " p " is missing")
		# S3: recorded configured, its conffiles in place and none
		# waiting as NAME.dpkg-new
		if (st == "installed" || st ~ /^triggers-/) {
			if ((p in waiting) && c != "ABSENT")
				v("S3", desc ": " p " still waits")
			else if ((p in conf) && ver[P] == newv[P] && c != n)
				v("S3", desc ": conffile " p " is [" c "], not the new [" n "]")
		}
	}
	if (files && (k = same_info(O, P)) != "" && (action == "remove" || action == "purge" || same_info(N, P) != ""))
		v("S2", desc ": " k " is neither the old nor the new version'"'"'s")
	if (st == "absent" || st == "not-installed")
		for (k in C)
			if (index(k, "var/lib/dpkg/info/" P ".") == 1)
				v("S1", desc ": " k " is still there")
}
# I4 and I5 for the trigger interests (triggers/File, triggers/NAME):
# every package of the run recorded as the run leaves it (unpacked or later
# at its new version; removed) means the interest files of after the run,
# every one recorded as before the run those of before
function interest_rules(  P, st, p, c, o, n, alldone, allold, seen) {
	alldone = allold = 1
	for (P in inrun) {
		st = (P in state) ? state[P] : "absent"
		if (cur[P] != before[P]) allold = 0
		if (action == "unpack" ? !(ver[P] == newv[P] && (st == "unpacked" || st == "half-configured" || st == "installed" || st ~ /^triggers-/)) \
		    : !(st == "config-files" || st == "not-installed" || st == "absent"))
			alldone = 0
	}
	for (p in DO) seen[p] = 1
	for (p in DN) seen[p] = 1
	for (p in DC) seen[p] = 1
	for (p in seen) {
		if (p !~ /^var\/lib\/dpkg\/triggers\// || p ~ /\/(Unincorp|Lock)$/) continue
		c = (p in DC) ? DC[p] : "ABSENT"
		o = (p in DO) ? DO[p] : "ABSENT"
		n = (p in DN) ? DN[p] : "ABSENT"
		if (alldone && c != n) v("I4", "every package of the run is recorded as the run leaves it, but " p " is [" c "], not its new [" n "]")
		if (allold && c != o) v("I5", "every package of the run is recorded as before the run, but " p " is [" c "], not its old [" o "]")
	}
}
END {
	# a conffile NAME.dpkg-new the run starts or ends with belongs to the
	# conffile'"'"'s package (configure renames it away), and so does the
	# NAME.dpkg-dist a configuration that keeps a changed conffile leaves
	for (p in conf) {
		if ((p ".dpkg-new") in O || (p ".dpkg-new") in N) {
			own[p ".dpkg-new"] = own[p]
			waiting[p ".dpkg-new"] = 1
		}
		if (action == "configure" && (p ".dpkg-dist") in N) {
			own[p ".dpkg-dist"] = own[p]
			dist[p ".dpkg-dist"] = 1
		}
	}
	for (p in C) {
		if (p in own || substr(p, 1, 13) == "var/lib/dpkg/") continue
		if (p in O) {
			if (C[p] != O[p]) v("I7", "a path no package of the run owns changed: [" O[p] "] -> [" C[p] "]")
			continue
		}
		if (staged(p)) continue
		v("I2", "unexpected path: [" C[p] "]")
	}
	for (p in O)
		if (!(p in own) && !(p in C) && substr(p, 1, 13) != "var/lib/dpkg/")
			v("I7", "a path no package of the run owns disappeared: [" O[p] "]")
	for (p in own) {
		P = own[p]
		c = (p in C) ? C[p] : "ABSENT"
		o = (p in O) ? O[p] : "ABSENT"
		n = (p in N) ? N[p] : "ABSENT"
		if (c != o && c != n) {
			v("I1", P ": " p " is [" c "], neither old [" o "] nor new [" n "]" \
				(c ~ /^[^ ]+ d 0000 / ? " " known("dir-mode") : ""))
			continue
		}
		if (o == n) continue
		if (c == o) { if (p in conf) cold[P] = p; else hold[P] = p }
		else {
			if (p in conf) cnew[P] = p; else hnew[P] = p
			# new states other than "an old file is gone"
			if (n != "ABSENT") kept[P] = p
		}
	}
	# I8 (every mode): the entry and info/ files of a package that is
	# not part of the run, and every database file as a whole
	for (P in before) {
		if (P in inrun) continue
		if (cur[P] != before[P]) v("I8", P " is not part of the run; its status was [" before[P] "], now [" cur[P] "]")
		if ((k = same_info(O, P)) != "") v("I8", P " is not part of the run; its " k " changed")
	}
	for (p in DC)
		if (!((p in DO) && DC[p] == DO[p]) && !((p in DN) && DC[p] == DN[p]) && !(action != "unpack" && infoof(p) in inrun))
			v("I8", "database file " p " is [" DC[p] "], neither its old [" \
				((p in DO) ? DO[p] : "ABSENT") "] nor its new [" ((p in DN) ? DN[p] : "ABSENT") "]")
	for (p in DO)
		if ((p in DN) && !(p in DC) && !(action != "unpack" && infoof(p) in inrun))
			v("I8", "database file " p " is missing, neither its old [" DO[p] "] nor its new [" DN[p] "]")
	for (P in inrun) {
		if (newness != "") print P, ((P in hnew) || (P in cnew) ? newpath(P) : "-") >newness
		if (action != "unpack") {
			action_rules(P)
			continue
		}
		st = (P in state) ? state[P] : "absent"
		ef = (P in eflag) ? eflag[P] : "-"
		desc = P " (status " ef " " st " " ver[P] ")"
		# unpacked, a new version keeps its new conffiles as .dpkg-new
		unpacked_new = st == "unpacked" && ver[P] == newv[P]
		anyold = (P in hold) || ((P in cold) && !unpacked_new)
		anynew = (P in hnew) || (P in cnew)
		# the known bugs these states point to
		tag = ""
		if (!(P in kept)) tag = " " known("obsolete-not-restored")
		else if (!(P in hold) && st == "installed" && ver[P] == newv[P]) tag = " " known("conffile-rollback")
		if (anyold && anynew && !(st == "half-installed" && ef == "reinstreq"))
			v("I5", desc ": old " ((P in hold) ? hold[P] : cold[P]) " and new " newpath(P) " side by side" tag)
		if (st == "half-installed") {
			if (ef != "reinstreq") v("I5", desc ": half-installed without reinstreq")
		} else if (st == "unpacked" || st == "installed" || st == "half-configured" || st ~ /^triggers-/) {
			if (ver[P] == newv[P]) {
				if (P in hold) v("I4", desc ": " hold[P] " still old")
				if (st != "unpacked" && st != "half-configured" && (P in cold))
					v("I4", desc ": conffile " cold[P] " still old " known("conffile-rollback"))
				if ((k = same_info(N, P)) != "") v("I4", desc ": " k " is not that version'"'"'s")
			} else if (ver[P] == oldv[P]) {
				if (anynew) v("I5", desc ": recorded at the old version, " newpath(P) " new" tag)
				if ((k = same_info(O, P)) != "") v("I5", desc ": recorded at the old version, " k " changed")
			} else
				v("I3", desc ": a version this run neither started from nor installs")
		} else if (st == "absent" || st == "not-installed") {
			if (anynew) v("I5", desc ": not recorded, " newpath(P) " new")
		} else
			v("I3", desc ": unexpected state")
	}
	if (action == "unpack" || action == "remove" || action == "purge")
		interest_rules()
}'

# inv_check_state ROOT REF OUT: check the state a crash or fault left in
# ROOT against the case in REF (I1-I5, I7, I8: the database parses, the
# paths and statuses agree with the contract); one line per violation is
# appended to OUT, "FS: ..." for files that cannot be read.  Left in
# INV_WORK: cur.status (statuses ROOT), cur.fp (fingerprint ROOT db) and
# cur.newness ("PKG NEWPATH", see INV_CHECKER).
#
# I8 holds in every mode, --force-unsafe-io included, where I1-I7 need not
# (DESIGN.md section 3): status and updates/ parse, a package that is not
# part of the run keeps its exact status entry and info/ files, and each
# other database file is its old or its new content.  A database that
# does not parse is reported as I3 and as I8.
inv_check_state() {
	local root=$1 ref=$2 out=$3 w=${INV_WORK:-$TESTDIR} rc=0 msg
	# I3, I8: the database parses.
	statuses "$root" >"$w/cur.status" 2>"$w/cur.status.err" || rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$w/cur.status.err" ]; then
		msg="dpkg-query -W exit $rc: $(head -c 300 "$w/cur.status.err" | tr '\n' ' ')"
		printf 'I3: %s\nI8: %s\n' "$msg" "$msg" >>"$out"
	fi
	rc=0
	dpkg --root="$root" --audit >/dev/null 2>"$w/audit.err" || rc=$?
	if [ "$rc" -ne 0 ] || grep -qi 'error' "$w/audit.err"; then
		msg="dpkg --audit exit $rc: $(head -c 300 "$w/audit.err" | tr '\n' ' ')"
		printf 'I3: %s\nI8: %s\n' "$msg" "$msg" >>"$out"
	fi
	fingerprint "$root" db >"$w/cur.fp"
	inv_read_errors "$out" "the state" "$w/fp.err"
	awk -v newness="$w/cur.newness" -v action="$(cat "$ref/action" 2>/dev/null || echo unpack)" \
		"$INV_CHECKER" "$ref/paths" "$ref/versions" \
		"$ref/old.fp" "$ref/new.fp" "$w/cur.fp" "$w/cur.status" \
		"$ref/old.status" >>"$out"
	[ "$(cat "$ref/action" 2>/dev/null)" != triggers ] || inv_check_triggers "$root" "$ref" "$out"
}

# The rule T1 of trigger processing (doc/design.md: pending until done),
# as a crash or fault state shows it.  Reads VERSIONS (the packages of the
# run), the trigger states (trig_states) before the run, after it and now,
# and the logs of triggered postinsts before, after and now: a fixture's
# postinst may append "PKG postinst triggered NAMES" to var/log/triggered
# and fsync it (the fingerprints leave var/log out).
# - each package of the run has its state, Triggers-Pending and
#   Triggers-Awaited of before or of after the run, never a mix, never
#   a trigger name dropped while the state stays;
# - a package recorded processed (its state after the run, its triggers
#   pending before) whose postinst logs has run "triggered" since;
# - a package that no longer awaits Q had Q's triggers processed: Q has
#   none pending.
# shellcheck disable=SC2016
INV_TRIGGERS='
function cnt(arr, l,  f) { split(l, f, " "); if (f[2] == "postinst" && f[3] == "triggered") arr[f[1]]++ }
function tuple(arr, P) { return (P in arr) ? arr[P] : "ABSENT" }
FILENAME == ARGV[1] { split($0, f, " "); inrun[f[1]] = 1; next }
FILENAME == ARGV[2] { O[$1] = $2 " [" $3 "] [" $4 "]"; opend[$1] = $3; oaw[$1] = $4; next }
FILENAME == ARGV[3] { N[$1] = $2 " [" $3 "] [" $4 "]"; next }
FILENAME == ARGV[4] { C[$1] = $2 " [" $3 "] [" $4 "]"; cpend[$1] = $3; caw[$1] = $4; next }
FILENAME == ARGV[5] { cnt(oran, $0); next }
FILENAME == ARGV[6] { cnt(nran, $0); next }
FILENAME == ARGV[7] { cnt(cran, $0); next }
END {
	for (P in inrun) {
		c = tuple(C, P); o = tuple(O, P); n = tuple(N, P)
		if (c != o && c != n)
			print "T1: " P " is " c ", neither its " o " before nor its " n " after the processing"
		else if (c != o && opend[P] != "" && nran[P] > oran[P] && cran[P] <= oran[P])
			print "T1: " P " is recorded " c " (was " o "), but its postinst never ran triggered"
	}
	for (P in oaw) {
		k = split(oaw[P], q, " ")
		for (i = 1; i <= k; i++)
			if (index(" " caw[P] " ", " " q[i] " ") == 0 && cpend[q[i]] != "")
				print "T1: " P " no longer awaits " q[i] ", whose triggers [" cpend[q[i]] "] are pending"
	}
}'

# inv_check_triggers ROOT REF OUT: the rule T1 (INV_TRIGGERS) on the
# state a crash or fault left in ROOT; violations appended to OUT.
# inv_check_state calls it for the action triggers.
inv_check_triggers() {
	local root=$1 ref=$2 out=$3 w=${INV_WORK:-$TESTDIR}
	# (a database that does not parse is reported as I3 already)
	trig_states "$root" >"$w/cur.trig" 2>/dev/null || true
	cat "$root/var/log/triggered" >"$w/cur.ran" 2>/dev/null || : >"$w/cur.ran"
	awk -F'\t' "$INV_TRIGGERS" "$ref/versions" "$ref/old.trig" "$ref/new.trig" \
		"$w/cur.trig" "$ref/old.ran" "$ref/new.ran" "$w/cur.ran" >>"$out"
}

# inv_converge_tag DIFF OLDTREE: the known bug a difference between the
# crash-free tree and a re-run's (unified diff DIFF of tree manifests)
# points to, if every changed line does: files of the old version left
# over (obsolete-left), directories with mode 0000 (dir-mode), a conffile
# kept as modified (conffile-rollback); prints " [known bug: TAG]" or
# nothing.
inv_converge_tag() {
	awk -v old="$2" '
	BEGIN { while ((getline l <old) > 0) { split(l, f, " "); O[f[1]] = 1 } }
	NR <= 2 || !/^[-+]/ { next }
	{
		p = substr($1, 2)
		if (/^\+/) plus[p] = $0; else minus[p] = 1
	}
	END {
		for (p in plus) {
			if (plus[p] ~ / d 0000 /) d++
			else if (p in minus) { if (p ~ /^etc\//) c++; else other++ }
			else if (p in O) o++
			else if (p ~ /\.dpkg-dist$/) c++
			else other++
		}
		for (p in minus) if (!(p in plus)) other++
		if (other || d + o + c == 0) exit
		if (d && !o && !c) print " [known bug: dir-mode]"
		else if (o && !d && !c) print " [known bug: obsolete-left]"
		else if (c && !d && !o) print " [known bug: conffile-rollback]"
	}' "$1"
}

# inv_check_converged ROOT REF OUT: after a re-run of the install without
# fault, ROOT must be exactly the crash-free result (I6: tree and database
# as in REF, no *.dpkg-new / *.dpkg-tmp left); differences are appended to
# OUT.  Left in INV_WORK: conv.fp (fingerprint ROOT db).
inv_check_converged() {
	local root=$1 ref=$2 out=$3 w=${INV_WORK:-$TESTDIR} debris
	fingerprint "$root" db >"$w/conv.fp"
	inv_read_errors "$out" "the re-run's root" "$w/fp.err"
	if cmp -s "$ref/new.fp" "$w/conv.fp"; then
		return 0
	fi
	# The fingerprints differ: the manifests of the test library decide
	# and show how.  (Called in a condition, they go on past a file that
	# cannot be read; what they could not read is reported as FS.  A
	# database file torn by a crash may hold NUL bytes, which the shell
	# warns about: the diff shows them.)
	(trap - ERR; set +e; tree_manifest "$root") >"$w/conv.tree" 2>"$w/conv.tree.err" || true
	(trap - ERR; set +e; db_manifest "$root") >"$w/conv.db" 2>"$w/conv.db.err" || true
	inv_read_errors "$out" "the re-run's root" "$w/conv.tree.err" "$w/conv.db.err"
	if ! diff -u "$ref/new.tree" "$w/conv.tree" >"$w/conv.diff"; then
		echo "I6: the tree differs from the crash-free run's:$(inv_converge_tag "$w/conv.diff" "$ref/old.tree")" >>"$out"
		sed -n '3,12s/^/  /p' "$w/conv.diff" >>"$out"
	fi
	if ! diff -u "$ref/new.db" "$w/conv.db" >"$w/conv.diff"; then
		echo "I6: the database differs from the crash-free run's:" >>"$out"
		sed -n '3,12s/^/  /p' "$w/conv.diff" >>"$out"
	fi
	debris=$(find "$root" \( -name '*.dpkg-new' -o -name '*.dpkg-tmp' \) -printf '%P ' 2>/dev/null) || true
	[ -z "$debris" ] || echo "I2: debris after the re-run: $debris" >>"$out"
	return 0
}

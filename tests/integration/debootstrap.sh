#!/bin/bash
# debootstrap.sh - unpkg as apt's dpkg in a real Debian 12 system.
#
# A Debian 12 (bookworm) minbase root is made with debootstrap from the
# Debian archive of the host's apt sources and kept in a cache directory,
# so later runs on the same machine reuse it:
#   $UNPKG_TEST_CACHE (default /var/cache/unpkg-tests)/bookworm-minbase
# Two twin roots are copied from it.  In each, chrooted, apt-get installs
# the same packages: in one with unpkg as its dpkg (-o Dir::Bin::dpkg=...),
# in the other with stock dpkg.  The steps:
#   1. apt-get upgrade       the base's packages that bookworm-updates and
#                            bookworm-security have newer (may be none)
#   2. apt-get install SET   ~25 packages and their dependencies: conffiles,
#                            maintainer scripts (adduser, ucf,
#                            update-alternatives, deb-systemd-helper),
#                            triggers (ldconfig, man-db, ca-certificates,
#                            install-info) and Pre-Depends (cron, sudo,
#                            rsync, gawk)
#   3. a local package built here, unpkg-twin-demo, in two versions, with
#      conffiles (one dropped by 2.0), every maintainer script, a file
#      trigger, Pre-Depends and a log of its maintainer scripts' calls:
#      installed (1.0), upgraded (2.0), triggered by a second local package,
#      reinstalled (2.0) and downgraded (1.0) with apt-get
#   4. apt-get install --reinstall of real packages (cron, ca-certificates,
#      sudo)
#   5. apt-get remove of the local packages (one without conffiles, one
#      with), apt-get purge of what is left, and apt-get purge --autoremove
#      of real packages (curl, wget) with the libraries only they needed
# Both roots are configured like Debian's slim container images (dpkg's
# path filters in /etc/dpkg/dpkg.cfg.d/slim) and have a local diversion of
# /usr/bin/tree (a package of the set) before the steps.
# After each step both roots must have the same exit status, apt must
# not have missed a status line of unpkg's (its warning "APT had planned
# for dpkg to do more than it reported back"), unpkg must have handed
# no action that changes the system (--unpack, --configure,
# --triggers-only, --remove, --purge, --install, and --set-selections,
# which apt runs before a purge) to stock dpkg (a wrapper
# in the unpkg root logs what it hands over), and at the end
# the same file tree (see TREE_EXCLUDE and the mtime rule below), the same
# dpkg database (db_manifest: status, info/, triggers/, alternatives/),
# every package "ii", dpkg --audit printing nothing and dpkg -V the same
# on both sides, reporting only the paths the filters left out missing.
#
# unpkg runs inside the chroot: its binary and every shared library it
# needs on this machine (ldd), the dynamic loader included, are copied to
# /opt/unpkg-test in both roots, and /usr/local/sbin/unpkg starts it through
# that loader, so no package has to be added to the roots for it.
#
# The archive: the host's apt sources (/etc/apt/sources.list, *.list and
# deb822 *.sources in sources.list.d) name the URIs of bookworm,
# bookworm-updates and bookworm-security (lib.sh, debian_archive), and the
# roots' sources.list is written from them on every run; the host's
# Acquire settings (proxies, Check-Valid-Until) go into the roots too.
# When the host has the archive configured and it cannot be reached
# (debootstrap or apt-get update fails), the test fails.  It is skipped
# only when debootstrap or chroot is missing, when not root, or when the
# host's apt sources have no Debian archive at all; a suite the host does
# not have (-updates, -security) is a skipped part.
#
# Optional environment:
#   UNPKG_TEST_CACHE            the cache directory (see above)
#   UNPKG_TEST_MIRROR           the Debian archive, instead of the host's
#   UNPKG_TEST_SECURITY_MIRROR  its security archive, instead of the host's
# In a sanitizer build, the test's report directory (UNPKG_SAN_DIR) is
# bound into both roots, so that unpkg's reports from inside the chroot
# land there too.
#
# It takes a few minutes (the first run longer: debootstrap and the
# downloads).

. "${TESTLIB:?TESTLIB is not set}"
need_cmd debootstrap chroot flock mount umount ldd cp

CACHE=${UNPKG_TEST_CACHE:-/var/cache/unpkg-tests}
SUITE=bookworm
MIRROR=${UNPKG_TEST_MIRROR:-$(debian_archive "$SUITE" || true)}
[ -n "$MIRROR" ] ||
	skip "the host's apt sources have no Debian archive (no $SUITE, nor the host's own release, with main)"
UPDMIRROR=${UNPKG_TEST_MIRROR:-$(debian_archive "$SUITE-updates" || true)}
SECMIRROR=${UNPKG_TEST_SECURITY_MIRROR:-$(debian_archive "$SUITE-security" || true)}
note "archive: $MIRROR; $SUITE-updates: ${UPDMIRROR:-none}; $SUITE-security: ${SECMIRROR:-none}"
[ -n "$UPDMIRROR" ] ||
	skip_part "$SUITE-updates" "the host's apt sources do not have it: its newer packages are not installed"
[ -n "$SECMIRROR" ] ||
	skip_part "$SUITE-security" "the host's apt sources do not have it: its newer packages are not installed"
BASE=$CACHE/$SUITE-minbase
ARCHIVES=$CACHE/$SUITE-archives

# The packages of step 2 (their dependencies come along).
SET=(cron logrotate sudo procps less nano vim-tiny ca-certificates openssl
	netbase iproute2 file xz-utils bzip2 zstd tree psmisc rsync wget curl
	man-db gawk info bash-completion kmod ucf)

# Left out of the file tree comparison, in both roots:
#   var/lib/dpkg        compared on its own (db_manifest)
#   var/log             logs (dpkg.log, apt/, alternatives.log)
#   var/cache/apt       apt's binary caches and the downloaded packages
#   var/lib/apt/lists   apt's package lists (same copy in both)
#   var/cache/man       man-db's index: holds the time it was built
#   var/cache/ldconfig  ldconfig's aux-cache: holds inode numbers and times
#   var/cache/debconf/*-old, var/lib/dpkg-less backups: debconf's
#                       previous copies, written or not depending on timing
#   proc                mounted during the test
#   run/unpkg-san       sanitizer build: the report directory, bound in
TREE_EXCLUDE=(var/cache/apt var/lib/apt/lists var/cache/man var/cache/ldconfig
	var/cache/debconf/config.dat-old var/cache/debconf/templates.dat-old
	var/cache/debconf/passwords.dat-old proc run/unpkg-san)
# Times: a file unpacked from a package has the time the package gives it
# in both roots, and that is compared; files made by maintainer scripts or
# by apt (caches, /etc/ld.so.cache, certificates, users) have the time they
# were written, which is not compared (their contents are).

# --- preconditions --------------------------------------------------------------

mkdir -p "$CACHE" "$ARCHIVES/partial"
exec 9>"$CACHE/.$SUITE.lock"
flock 9

# (lib.sh releases the registered mounts on any way out, and leaves the
# scratch directory in place, with an error, if one stays mounted.)

# chroot_mounts ROOT [san]: /proc inside ROOT, the shared download cache,
# and with "san" in a sanitizer build the report directory.
chroot_mounts() {
	mount -t proc proc "$1/proc"
	register_mount "$1/proc"
	mkdir -p "$1/var/cache/apt/archives"
	mount --bind "$ARCHIVES" "$1/var/cache/apt/archives"
	register_mount "$1/var/cache/apt/archives"
	if [ "${2:-}" = san ] && [ -n "${UNPKG_SAN_DIR:-}" ]; then
		mkdir -p "$1/run/unpkg-san"
		mount --bind "$UNPKG_SAN_DIR" "$1/run/unpkg-san"
		register_mount "$1/run/unpkg-san"
	fi
}
# chroot_umounts ROOT: undo chroot_mounts (lib.sh does it too, on any way
# out).
chroot_umounts() {
	local m
	for m in "$1/run/unpkg-san" "$1/var/cache/apt/archives" "$1/proc"; do
		release_mount "$m" || hard_error "cannot unmount $m"
	done
}

# in_root ROOT CMD...: CMD chrooted into ROOT, with a clean environment
# (the test's own, such as UNPKG_CONFDIR, must not reach inside).
in_root() {
	local root=$1
	shift
	local -a envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true)
	local v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		if [ -n "${!v:-}" ]; then
			# Reports go to the report directory bound into the root.
			envs+=("$v=${!v}${UNPKG_SAN_DIR:+:log_path=/run/unpkg-san/report}")
		fi
	done
	chroot "$root" /usr/bin/env -i "${envs[@]}" "$@" </dev/null
}

# --- the cached base root ----------------------------------------------------------

# Bumped when the way the base is made changes: an older base is made anew.
CACHE_FORMAT=2
if [ "$(cat "$BASE/.complete" 2>/dev/null)" != "$CACHE_FORMAT" ]; then
	note "debootstrap --variant=minbase $SUITE into $BASE (once per machine)"
	rm -rf -- "$BASE"
	if ! debootstrap --variant=minbase "$SUITE" "$BASE" "$MIRROR" \
		>"$TESTDIR/debootstrap.log" 2>&1; then
		tail -n 20 "$TESTDIR/debootstrap.log" >&2
		rm -rf -- "$BASE"
		if grep -qiE 'Failed getting release file|Couldn.t download|Unable to fetch|Temporary failure|Could not resolve|Connection refused|Network is unreachable|No route' \
			"$TESTDIR/debootstrap.log"; then
			fail "the host's Debian archive $MIRROR cannot be reached (debootstrap failed, see above)"
		fi
		hard_error "debootstrap failed (see above)"
	fi
	# No service is started in a chroot.
	printf '#!/bin/sh\nexit 101\n' >"$BASE/usr/sbin/policy-rc.d"
	chmod 755 "$BASE/usr/sbin/policy-rc.d"
	echo "$CACHE_FORMAT" >"$BASE/.complete"
fi

# The sources as the host has them now (the base may be older than a
# change of mirror), and the host's settings for reaching them.
{
	printf 'deb %s %s main\n' "$MIRROR" "$SUITE"
	[ -z "$UPDMIRROR" ] || printf 'deb %s %s-updates main\n' "$UPDMIRROR" "$SUITE"
	[ -z "$SECMIRROR" ] || printf 'deb %s %s-security main\n' "$SECMIRROR" "$SUITE"
} >"$BASE/etc/apt/sources.list"
apt-config dump | grep -E '^Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date) ' \
	>"$BASE/etc/apt/apt.conf.d/00unpkg-test-host" || true
show_file "$BASE/etc/apt/sources.list" "sources.list of the roots"
show_file "$BASE/etc/apt/apt.conf.d/00unpkg-test-host" "the host's Acquire settings, in the roots"

note "apt-get update in the cached root"
chroot_mounts "$BASE"
if ! in_root "$BASE" apt-get -o Acquire::Retries=2 update >"$TESTDIR/update.log" 2>&1 ||
	grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$TESTDIR/update.log"; then
	cat "$TESTDIR/update.log" >&2
	chroot_umounts "$BASE"
	fail "the host's Debian archive cannot be reached: apt-get update failed in the cached root (see above)"
fi
chroot_umounts "$BASE"

# --- the twin roots ----------------------------------------------------------------

A=$TESTDIR/unpkg
B=$TESTDIR/dpkg
note "copying the base into $A and $B"
cp -a --reflink=auto "$BASE" "$A"
cp -a --reflink=auto "$BASE" "$B"
rm -f "$A/.complete" "$B/.complete"

# unpkg and its libraries, the same in both roots.
bundle=$TESTDIR/bundle
mkdir -p "$bundle/lib"
cp -- "$UNPKG" "$bundle/unpkg"
loader=
while read -r lib; do
	cp -L -- "$lib" "$bundle/lib/"
	case $lib in */ld-linux*) loader=$(basename "$lib") ;; esac
done < <(ldd "$UNPKG" | grep -oE '/[^ ]+' | sort -u)
[ -n "$loader" ] || hard_error "no dynamic loader among the libraries of $UNPKG"
for r in "$A" "$B"; do
	mkdir -p "$r/opt/unpkg-test" "$r/usr/local/sbin"
	cp -a -- "$bundle/." "$r/opt/unpkg-test/"
	# What unpkg hands to stock dpkg goes through a wrapper that logs
	# it: no state-changing action may be among it.
	cat >"$r/usr/local/sbin/unpkg" <<-EOF
	#!/bin/sh
	UNPKG_DPKG=/usr/local/sbin/dpkg-handed exec /opt/unpkg-test/lib/$loader --library-path /opt/unpkg-test/lib /opt/unpkg-test/unpkg "\$@"
	EOF
	cat >"$r/usr/local/sbin/dpkg-handed" <<-'EOF'
	#!/bin/sh
	echo "$*" >>/var/log/unpkg-handed
	exec /usr/bin/dpkg "$@"
	EOF
	chmod 755 "$r/usr/local/sbin/unpkg" "$r/usr/local/sbin/dpkg-handed"
	# configured like Debian's slim container images: dpkg's path
	# filters leave out documentation (but copyrights), manuals, info
	# and locales; and a local diversion of a file of the set
	cat >"$r/etc/dpkg/dpkg.cfg.d/slim" <<-'EOF'
	path-exclude /usr/share/doc/*
	path-include /usr/share/doc/*/copyright
	path-exclude /usr/share/groff/*
	path-exclude /usr/share/info/*
	path-exclude /usr/share/linda/*
	path-exclude /usr/share/lintian/overrides/*
	path-exclude /usr/share/locale/*
	path-exclude /usr/share/man/*
	EOF
	chroot_mounts "$r" san
	in_root "$r" dpkg-divert --local --divert /usr/bin/tree.distrib \
		--add /usr/bin/tree >/dev/null ||
		hard_error "dpkg-divert in $r failed"
done
in_root "$A" unpkg --version >"$TESTDIR/version" 2>&1 ||
	{ cat "$TESTDIR/version" >&2; hard_error "unpkg does not start inside the chroot"; }
note "inside the chroot: $(head -n1 "$TESTDIR/version")"

# --- steps -----------------------------------------------------------------------

STEP=0
# apt_both TITLE APT-GET-ARGS...: run apt-get -y ARGS in both roots, with
# unpkg in A and stock dpkg in B; compare the exit statuses and show the
# unpkg side's output (and dpkg's when they differ).
apt_both() {
	local title=$1 t0 t1 t2
	shift
	STEP=$((STEP + 1))
	section "step $STEP: $title: apt-get $*"
	t0=$(date +%s)
	run_logged "$TESTDIR/step$STEP.unpkg" in_root "$A" apt-get -y \
		-o Dpkg::Use-Pty=0 -o Dir::Bin::dpkg=/usr/local/sbin/unpkg "$@"
	local rc_a=$RUN_RC
	t1=$(date +%s)
	run_logged "$TESTDIR/step$STEP.dpkg" in_root "$B" apt-get -y \
		-o Dpkg::Use-Pty=0 "$@"
	local rc_b=$RUN_RC
	t2=$(date +%s)
	note "apt-get with unpkg: exit $rc_a, $((t1 - t0)) s; with dpkg: exit $rc_b, $((t2 - t1)) s"
	# The lines of the output that differ (progress and timing lines aside).
	local strip='/^(Get:|Fetched|Reading database|Preparing to unpack|\(Reading)/d'
	sed -E "$strip" "$TESTDIR/step$STEP.unpkg.out" >"$TESTDIR/step$STEP.a"
	sed -E "$strip" "$TESTDIR/step$STEP.dpkg.out" >"$TESTDIR/step$STEP.b"
	if ! diff -u "$TESTDIR/step$STEP.b" "$TESTDIR/step$STEP.a" >"$TESTDIR/step$STEP.diff"; then
		note "apt-get output, dpkg side vs unpkg side (for information):"
		# (sed stops by itself: head closing the pipe would kill it
		# with SIGPIPE, an error under pipefail)
		sed -n '1,80s/^/    | /p' "$TESTDIR/step$STEP.diff"
	fi
	# dpkg's count of the paths it knows, on a real system (its
	# diversions, statoverrides and file triggers among them)
	grep '^(Reading database' "$TESTDIR/step$STEP.unpkg.out" >"$TESTDIR/step$STEP.a.reading" || true
	grep '^(Reading database' "$TESTDIR/step$STEP.dpkg.out" >"$TESTDIR/step$STEP.b.reading" || true
	assert_same_file "$TESTDIR/step$STEP.b.reading" "$TESTDIR/step$STEP.a.reading" \
		"step $STEP ($title): dpkg's (Reading database ...) lines"
	show_file "$TESTDIR/step$STEP.unpkg.err" "apt-get with unpkg: stderr"
	if [ "$rc_a" -ne "$rc_b" ] || [ "$rc_b" -ne 0 ]; then
		show_file "$TESTDIR/step$STEP.unpkg.out" "apt-get with unpkg: stdout"
		show_file "$TESTDIR/step$STEP.dpkg.out" "apt-get with dpkg: stdout"
		show_file "$TESTDIR/step$STEP.dpkg.err" "apt-get with dpkg: stderr"
	fi
	[ "$rc_b" -eq 0 ] || hard_error "step $STEP failed with stock dpkg (exit $rc_b): the test's setup is wrong"
	[ "$rc_a" -eq 0 ] || check_fail "step $STEP ($title): apt-get with unpkg exited $rc_a, with dpkg 0"
	# apt follows each package through the status lines it expects of
	# dpkg, and warns where one is missing
	if grep -q 'APT had planned for dpkg to do more' "$TESTDIR/step$STEP.unpkg.err" &&
		! grep -q 'APT had planned for dpkg to do more' "$TESTDIR/step$STEP.dpkg.err"; then
		check_fail "step $STEP ($title): apt missed status lines of unpkg's"
	fi
	handed_check "step $STEP ($title)"
}

# handed_check WHAT: unpkg handed no action that changes the system to
# stock dpkg (queries may go there).
handed_check() {
	local log=$A/var/log/unpkg-handed
	[ -e "$log" ] || return 0
	awk '{ for (i = 1; i <= NF; i++)
		if ($i ~ /^(--configure|--triggers-only|--remove|-r|--purge|-P|--install|-i|--unpack|--set-selections)$/) {
			print; next } }' "$log" >"$TESTDIR/handed.$STEP"
	note "$1: handed to stock dpkg: $(wc -l <"$log") call(s), $(wc -l <"$TESTDIR/handed.$STEP") changing the system"
	assert_empty "$TESTDIR/handed.$STEP" "$1: actions unpkg handed to stock dpkg"
	rm -f -- "$log"
}

apt_both "upgrade the base" upgrade
apt_both "install the set" install "${SET[@]}"

# --- the local two-version package --------------------------------------------------

# demo_pkg VERSION: build unpkg-twin-demo VERSION into the roots' /root.
demo_pkg() {
	local v=$1 d=$TESTDIR/demo-$1 s
	new_pkg "$d" unpkg-twin-demo "$v" all
	cat >>"$d/DEBIAN/control" <<-EOF
	Pre-Depends: dpkg (>= 1.19.1)
	Depends: ucf, man-db
	EOF
	mkdir -p "$d/etc/unpkg-twin-demo" "$d/usr/bin" "$d/usr/share/unpkg-twin-demo/hooks" \
		"$d/usr/share/man/man1" "$d/usr/share/doc/unpkg-twin-demo"
	printf 'setting = %s\n' "$v" >"$d/etc/unpkg-twin-demo/main.conf"
	printf '/etc/unpkg-twin-demo/main.conf\n' >"$d/DEBIAN/conffiles"
	if [ "$v" = 1.0 ]; then
		# A conffile that 2.0 drops (it becomes obsolete there).
		printf 'old\n' >"$d/etc/unpkg-twin-demo/old.conf"
		printf '/etc/unpkg-twin-demo/old.conf\n' >>"$d/DEBIAN/conffiles"
		printf 'one\n' >"$d/usr/share/unpkg-twin-demo/data-1"
	else
		printf 'two\n' >"$d/usr/share/unpkg-twin-demo/data-2"
		printf 'hook\n' >"$d/usr/share/unpkg-twin-demo/hooks/h"
	fi
	printf '#!/bin/sh\necho unpkg-twin-demo %s\n' "$v" >"$d/usr/bin/unpkg-twin-demo"
	chmod 755 "$d/usr/bin/unpkg-twin-demo"
	printf '.TH UNPKG-TWIN-DEMO 1\n.SH NAME\nunpkg-twin-demo \\- version %s\n' "$v" |
		gzip -9n >"$d/usr/share/man/man1/unpkg-twin-demo.1.gz"
	touch -d @978307200 "$d/usr/share/man/man1/unpkg-twin-demo.1.gz"
	printf 'unpkg-twin-demo %s\n' "$v" >"$d/usr/share/doc/unpkg-twin-demo/README"
	# It wants to hear about its hooks directory, and pulls the ldconfig
	# trigger as libraries do.
	printf 'interest-noawait /usr/share/unpkg-twin-demo/hooks\nactivate-noawait ldconfig\n' \
		>"$d/DEBIAN/triggers"
	for s in preinst postinst prerm postrm; do
		cat >"$d/DEBIAN/$s" <<-EOF
		#!/bin/sh
		set -e
		mkdir -p /var/lib/unpkg-twin-demo
		echo "$v $s \$*" >>/var/lib/unpkg-twin-demo/calls
		EOF
		chmod 755 "$d/DEBIAN/$s"
	done
	build_deb "$TESTDIR/unpkg-twin-demo_${v}_all.deb" "$d"
	for r in "$A" "$B"; do
		cp -p "$TESTDIR/unpkg-twin-demo_${v}_all.deb" "$r/root/"
	done
}
demo_pkg 1.0
demo_pkg 2.0
# A second package with a file in unpkg-twin-demo's hooks directory, so
# that its file trigger fires (a package's own files do not trigger it).
new_pkg "$TESTDIR/hook" unpkg-twin-hook 1.0 all
mkdir -p "$TESTDIR/hook/usr/share/unpkg-twin-demo/hooks"
printf 'extra\n' >"$TESTDIR/hook/usr/share/unpkg-twin-demo/hooks/extra"
build_deb "$TESTDIR/unpkg-twin-hook_1.0_all.deb" "$TESTDIR/hook"
for r in "$A" "$B"; do
	cp -p "$TESTDIR/unpkg-twin-hook_1.0_all.deb" "$r/root/"
done

apt_both "install a local package" install /root/unpkg-twin-demo_1.0_all.deb
apt_both "upgrade it" install /root/unpkg-twin-demo_2.0_all.deb
# (A package about to be configured anyway is not triggered: this needs a
# step of its own.)
apt_both "install a package that triggers it" install /root/unpkg-twin-hook_1.0_all.deb
apt_both "reinstall it" install --reinstall /root/unpkg-twin-demo_2.0_all.deb
apt_both "downgrade it" install --allow-downgrades /root/unpkg-twin-demo_1.0_all.deb
apt_both "reinstall real packages" install --reinstall cron ca-certificates sudo
apt_both "remove a package without conffiles" remove unpkg-twin-hook
apt_both "remove a package with conffiles" remove unpkg-twin-demo
apt_both "purge what it left" purge unpkg-twin-demo
apt_both "purge real packages and what only they needed" purge --autoremove curl wget

for r in "$A" "$B"; do
	chroot_umounts "$r"
	rm -f "$r"/root/unpkg-twin-*.deb
done

# --- comparison -------------------------------------------------------------------

section "comparison of the two roots"

# Times only of the paths the packages own (lib.sh, owned_mtimes_only).
CMP_OWNED_MTIMES=1 compare_trees "$A" "$B" "end" "${TREE_EXCLUDE[@]}"
note "file tree: $(wc -l <"$B.tree") paths"
compare_dbs "$A" "$B" "end"

for r in "$A" "$B"; do
	side=$(basename "$r")
	dpkg-query --root="$r" -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' \
		>"$TESTDIR/l.$side"
	awk '$1 != "ii"' "$TESTDIR/l.$side" >"$TESTDIR/notii.$side"
	assert_empty "$TESTDIR/notii.$side" "$side root: packages not in state ii"
	run_logged "$TESTDIR/audit.$side" dpkg --root="$r" --audit
	cat "$TESTDIR/audit.$side.err" >>"$TESTDIR/audit.$side.out"
	assert_empty "$TESTDIR/audit.$side.out" "$side root: dpkg --audit"
	assert_status 0 "$RUN_RC" "$side root: dpkg --audit"
	run_logged "$TESTDIR/verify.$side" dpkg --root="$r" -V
	cat "$TESTDIR/verify.$side.err" >>"$TESTDIR/verify.$side.out"
	# the paths the filters left out are missing, as dpkg reports them
	grep -vE '^missing +/usr/share/(doc|groff|info|linda|lintian/overrides|locale|man)/' \
		"$TESTDIR/verify.$side.out" >"$TESTDIR/verify.$side.other" || true
	assert_empty "$TESTDIR/verify.$side.other" "$side root: dpkg -V, but for filtered paths"
	grep -qE '^missing +/usr/share/doc/tree/README' "$TESTDIR/verify.$side.out" ||
		check_fail "$side root: dpkg -V does not report tree's filtered README missing"
done
assert_same_file "$TESTDIR/verify.dpkg.out" "$TESTDIR/verify.unpkg.out" "dpkg -V (dpkg vs unpkg)"
note "packages: $(wc -l <"$TESTDIR/l.dpkg") in each root"
# dpkg-statoverride entries (cron's postinst adds one for /usr/bin/crontab)
# hold on the unpkg side too, also after a reinstall.
while read -r owner group mode path; do
	[ -e "$B$path" ] || continue
	want="$owner $group $mode"
	# Names as the roots' own user and group databases give them.
	got=$(in_root "$A" stat -c '%U %G %a' -- "$path" 2>&1 || true)
	have=$(in_root "$B" stat -c '%U %G %a' -- "$path")
	[ "$have" = "$want" ] ||
		note "statoverride $path: the dpkg root has $have, not $want"
	[ "$got" = "$have" ] ||
		check_fail "statoverride of $path ($want) not applied: the unpkg root has '$got', the dpkg root '$have'"
done < <(in_root "$B" dpkg-statoverride --list)
assert_same_file "$TESTDIR/l.dpkg" "$TESTDIR/l.unpkg" "dpkg-query -W (dpkg vs unpkg)"
# the filters and the diversion did their work on the unpkg side too
[ -e "$A/usr/share/doc/tree/copyright" ] && [ ! -e "$A/usr/share/doc/tree/README.gz" ] &&
	[ ! -e "$A/usr/share/man/man1/tree.1.gz" ] ||
	check_fail "the path filters: tree's copyright missing, or its README or manual unpacked"
[ -x "$A/usr/bin/tree.distrib" ] && [ ! -e "$A/usr/bin/tree" ] ||
	check_fail "the local diversion: tree is not at /usr/bin/tree.distrib"
assert_same_file "$B/var/lib/unpkg-twin-demo/calls" "$A/var/lib/unpkg-twin-demo/calls" \
	"maintainer script calls of unpkg-twin-demo"
show_file "$A/var/lib/unpkg-twin-demo/calls" "maintainer script calls (unpkg side)"

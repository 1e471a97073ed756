#!/bin/bash
# submount.sh - --sync=auto with a file system mounted below the root.
#
# auto picks one strategy for the run from the root's (and the admin
# directory's) file system.  When that is syncfs, a file system below the
# root on which syncfs is not a full barrier (ext2 here; vfat, FUSE and
# NFS alike) must still get what I1-I7 need: each staged file there is
# fdatasync'ed before the renames, and each touched directory there is
# fsync'ed after them, while syncfs keeps serving the other file systems.
# An explicit --sync=syncfs keeps its plain meaning.  Where auto would
# take syncfs, other programs' unwritten data on the root's own file system
# (ext4, btrfs, an overlayfs's upper layer) makes it sync file by file,
# and theirs on another file system does not; on a tmpfs, which writes
# nothing back, it never does.
#
# The calls are traced with strace -y, which names each descriptor's path,
# so the calls on the ext2 file system are those naming a path below its
# mount point.
TEST_NAME=submount
. "${TESTLIB:?}"
need_cmd strace mkfs.ext2 mkfs.ext4 mountpoint truncate awk blkid findmnt unshare

need_mounts

# LeakSanitizer cannot work under ptrace (see sync.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# Mounts nest here, so they are taken down innermost first (lib.sh's
# register_mount unmounts in the order of registration).
MOUNTS=()
unmount_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		mountpoint -q "${MOUNTS[i]}" && umount "${MOUNTS[i]}"
	done
	MOUNTS=()
}
trap 'rc=$?; unmount_all; (exit $rc); on_exit' EXIT

# mount_img TYPE DIR [mkfs option...]: a fresh file system of TYPE (16 MB,
# or IMG_SIZE) on a loop device, mounted on DIR (the loop device goes with
# the mount).
mount_img() {
	local type=$1 dir=$2 img force=-F
	shift 2
	[ "$type" != btrfs ] && [ "$type" != xfs ] || force=-f
	img=$TESTDIR/img-$(echo "$dir" | md5sum | cut -c1-8).img
	rm -f "$img"
	truncate -s "${IMG_SIZE:-16M}" "$img"
	"mkfs.$type" -q "$force" "$@" "$img" >/dev/null
	mkdir -p "$dir"
	mount -o "loop${MOUNT_OPTS:+,$MOUNT_OPTS}" -t "$type" "$img" "$dir" ||
		hard_error "cannot mount the $type image on $dir"
	MOUNTS+=("$dir")
}

mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size=16m,mode=0755 unpkg-test "$1" ||
		hard_error "cannot mount a tmpfs on $1"
	MOUNTS+=("$1")
}

# The package: files on the root's file system and on the one below.
# SUB is where the sub-mount is, relative to the root.
make_pkg() {
	local name=$1 sub=$2 dir=$TESTDIR/pkg-$1
	new_pkg "$dir" "$name"
	mkdir -p "$dir/usr/share/$name" "$dir/$sub/$name/deep"
	for i in 1 2 3 4; do
		echo "root data $i" >"$dir/usr/share/$name/r$i"
	done
	for i in 1 2 3; do
		echo "sub data $i" >"$dir/$sub/$name/s$i"
	done
	echo "deep data" >"$dir/$sub/$name/deep/s4"
	ln -s s1 "$dir/$sub/$name/link"
	build_deb "$TESTDIR/$name.deb" "$dir"
}
make_pkg smboot boot
make_pkg smlocal usr/local
# files on the sub-mount: s1 s2 s3 deep/s4; directories touched there:
# the mount point (NAME made), NAME (s*, link and deep), NAME/deep
nsub_files=4
nsub_dirs=3

# trace_install ROOT MODE DEB: install DEB under strace -y into ROOT with
# --sync=MODE (auto: no option) and --stats; unpkg run through the command
# in the array TRACE_WRAP, if any.
TRACE_WRAP=()
trace_install() {
	local root=$1 mode=$2 deb=$3 opt=()
	[ "$mode" = auto ] || opt=(--sync="$mode")
	strace -f -y -qq -o "$TESTDIR/trace" \
		-e trace=fdatasync,fsync,syncfs,sync_file_range,ioctl,rename,renameat,renameat2 \
		"${TRACE_WRAP[@]}" \
		"$UNPKG" --root="$root" "${opt[@]}" --stats --unpack "$deb" \
		>"$TESTDIR/out" 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg --sync=$mode failed"; }
}

# calls CALL UNDER [TRACE]: the number of successful CALLs (fdatasync,
# fsync, syncfs) on a descriptor whose path is UNDER or below it, in the
# trace of the last run or TRACE.
calls() {
	awk -v call="$1" -v under="$2" '
	/ = -1 / { next }
	$2 ~ "^" call "\\(" {
		if (match($0, /<[^>]*>/)) {
			p = substr($0, RSTART + 1, RLENGTH - 2)
			if (p == under || index(p, under "/") == 1)
				n++
		}
	}
	END { print n + 0 }' "${3:-$TESTDIR/trace}"
}

# waits UNDER: the number of waits for a file's writeback
# (sync_file_range with WAIT_AFTER, or through an overlayfs FS_IOC_FIEMAP
# with FIEMAP_FLAG_SYNC) on a file UNDER or below it.
waits() {
	echo $(($( { grep 'WAIT_AFTER' "$TESTDIR/trace" || true; } | calls sync_file_range "$1" /dev/stdin) +
		$( { grep 'FS_IOC_FIEMAP.*FIEMAP_FLAG_SYNC' "$TESTDIR/trace" || true; } | calls ioctl "$1" /dev/stdin)))
}

# expect_count WHAT ACTUAL EXPECTED
expect_count() {
	if [ "$2" -eq "$3" ]; then
		note "$1: $2"
	else
		check_fail "$1: $2, expected $3"
	fi
}

# check_order ROOT SUBDIR NAME [commit]: every file fdatasync'ed (or
# through an overlayfs waited for with FIEMAP_FLAG_SYNC) below ROOT/SUBDIR
# is renamed after that, and each directory with renames there is
# fsync'ed after the last of them; with "commit" (where the commits are
# ordered), a directory under ROOT is fsync'ed after the last rename.
check_order() {
	awk -v root="$1" -v subd="$1/$2" -v commit="${4:-}" '
	/ = -1 / { next }
	($2 ~ /^fdatasync\(/ || ($2 ~ /^ioctl\(/ && /FIEMAP_FLAG_SYNC/)) &&
	match($0, /<[^>]*>/) {
		p = substr($0, RSTART + 1, RLENGTH - 2)
		if (index(p, subd "/") == 1 && !(p in synced)) synced[p] = NR
		next
	}
	$2 ~ /^rename/ {
		lastrename = NR
		# renameat(3</dir>, "x.dpkg-new", 3</dir>, "x", ...)
		if (match($0, /<[^>]*>, "[^"]*\.dpkg-new"/)) {
			s = substr($0, RSTART + 1, RLENGTH - 2)
			split(s, a, ">, \"")
			f = a[1] "/" a[2]
			if (index(f, subd "/") != 1) next
			renamed[f] = NR
			last[a[1]] = NR
		}
		next
	}
	$2 ~ /^fsync\(/ && match($0, /<[^>]*>/) {
		p = substr($0, RSTART + 1, RLENGTH - 2)
		if (p in last && NR > last[p]) done[p] = 1
		if (p == root || index(p, root "/") == 1) lastfsync = NR
	}
	END {
		if (commit != "") {
			if (lastfsync < lastrename) {
				print "no fsync under " root " after the last rename"
				bad = 1
			}
			for (d in last)
				done[d] = 1
		}
		for (f in synced)
			if (!(f in renamed) || renamed[f] < synced[f]) {
				print "not renamed after its sync: " f
				bad = 1
			}
		for (d in last)
			if (!(d in done)) {
				print "no fsync after the renames in " d
				bad = 1
			}
		exit bad
	}' "$TESTDIR/trace" >"$TESTDIR/order" ||
		{ show_file "$TESTDIR/order"; check_fail "$3: order of the syncs on the sub-mount"; }
}

section "auto, tmpfs root, ext2 /boot: fdatasync and fsync on ext2, syncfs for the rest"
root=$TESTDIR/root-tmpfs
mount_tmpfs "$root"
mkroot "$root"
mount_img ext2 "$root/boot"
trace_install "$root" auto "$TESTDIR/smboot.deb"
assert_grep '^stats: sync mode: syncfs \(auto for tmpfs and ext2/ext4 without a journal,' "$TESTDIR/out" \
	"--stats names both file systems"
expect_count "fdatasync on ext2" "$(calls fdatasync "$root/boot")" $nsub_files
expect_count "fsync on ext2" "$(calls fsync "$root/boot")" $nsub_dirs
expect_count "syncfs on ext2" "$(calls syncfs "$root/boot")" 0
# the barrier and the renames' sync; the database's own syncs come on top
[ "$(calls syncfs "$root")" -ge 2 ] ||
	check_fail "syncfs on the root: $(calls syncfs "$root"), expected at least 2"
# everything outside the sub-mount is served by syncfs alone
expect_count "fdatasync elsewhere" \
	$(($(calls fdatasync "$root") - $(calls fdatasync "$root/boot"))) 0
# (the database fsyncs the admin directory itself, whatever the strategy)
expect_count "fsync elsewhere" $(($(calls fsync "$root") - \
	$(calls fsync "$root/boot") - $(calls fsync "$root/var/lib/dpkg"))) 0
check_order "$root" boot "tmpfs root"
assert_grep "^stats: calls .* fdatasync=$nsub_files fsync=$((nsub_dirs + $(calls fsync "$root/var/lib/dpkg"))) " \
	"$TESTDIR/out" "--stats counts the ext2 syncs"
cmp -s "$root/boot/smboot/deep/s4" "$TESTDIR/pkg-smboot/boot/smboot/deep/s4" ||
	check_fail "boot/smboot/deep/s4 not installed"
assert_no_debris "$root"

section "auto, the same again: an upgrade replaces the files, with backups"
trace_install "$root" auto "$TESTDIR/smboot.deb"
expect_count "fdatasync on ext2, upgrade" "$(calls fdatasync "$root/boot")" $nsub_files
# the mount point itself is not touched by an upgrade
expect_count "fsync on ext2, upgrade" "$(calls fsync "$root/boot")" $((nsub_dirs - 1))
check_order "$root" boot "upgrade"
assert_no_debris "$root"
unmount_all

section "--sync=syncfs asked for: syncfs on both file systems, nothing per file"
root=$TESTDIR/root-plain
mount_tmpfs "$root"
mkroot "$root"
mount_img ext2 "$root/boot"
trace_install "$root" syncfs "$TESTDIR/smboot.deb"
expect_count "fdatasync, explicit syncfs" "$(calls fdatasync "$root")" 0
expect_count "fsync, explicit syncfs" \
	$(($(calls fsync "$root") - $(calls fsync "$root/var/lib/dpkg"))) 0
[ "$(calls syncfs "$root/boot")" -ge 2 ] ||
	check_fail "syncfs on ext2: $(calls syncfs "$root/boot"), expected at least 2"
unmount_all

section "auto, ext4 root with a journal, ext2 /usr/local"
root=$TESTDIR/root-ext4
mount_img ext4 "$root"
mkroot "$root"
mount_img ext2 "$root/usr/local"
trace_install "$root" auto "$TESTDIR/smlocal.deb"
assert_grep '^stats: sync mode: syncfs \(auto for ext4 with a journal and ext2/ext4 without a journal,' "$TESTDIR/out" \
	"--stats names both file systems"
assert_grep '^stats: file systems recognised by: /sys/dev/block, /sys/fs/ext4/DEV/(journal_task|options)' \
	"$TESTDIR/out" "--stats says /sys told the classes"

# As in a chroot without /sys: the device's name from /proc/partitions,
# the journal from the ext4 driver's options under /proc.
unshare -m sh -c 'mount -t tmpfs nosys /sys && exec "$@"' sh \
	"$UNPKG" --root="$root" --stats --unpack "$TESTDIR/smlocal.deb" \
	>"$TESTDIR/out" 2>"$TESTDIR/err" ||
	{ show_file "$TESTDIR/err"; fail "unpkg without /sys failed"; }
assert_grep '^stats: sync mode: syncfs \(auto for ext4 with a journal and ext2/ext4 without a journal,' "$TESTDIR/out" \
	"without /sys, both file systems still recognised"
assert_grep '^stats: file systems recognised by: /proc/partitions, /proc/fs/ext4/DEV/options$' \
	"$TESTDIR/out" "--stats says /proc told the classes"
expect_count "fdatasync on ext2" "$(calls fdatasync "$root/usr/local")" $nsub_files
expect_count "fsync on ext2" "$(calls fsync "$root/usr/local")" $nsub_dirs
expect_count "fdatasync elsewhere" \
	$(($(calls fdatasync "$root") - $(calls fdatasync "$root/usr/local"))) 0
check_order "$root" usr/local "ext4 root"
cmp -s "$root/usr/local/smlocal/s2" "$TESTDIR/pkg-smlocal/usr/local/smlocal/s2" ||
	check_fail "usr/local/smlocal/s2 not installed"
assert_no_debris "$root"

section "auto: a failed fdatasync on ext2 aborts the run, the root as before"
tree_manifest "$root" >"$TESTDIR/before"
db_manifest "$root/var/lib/dpkg" >"$TESTDIR/before-db"
rc=0
strace -f -qq -o /dev/null -e trace=fdatasync \
	-e inject=fdatasync:error=EIO:when=1 \
	"$UNPKG" --root="$root" --unpack "$TESTDIR/smlocal.deb" \
	>"$TESTDIR/out-eio" 2>"$TESTDIR/err-eio" || rc=$?
assert_status 1 $rc "unpkg with fdatasync EIO on ext2"
assert_grep 'cannot fdatasync .*usr/local/smlocal.*Input/output error' \
	"$TESTDIR/err-eio" "EIO message"
tree_manifest "$root" >"$TESTDIR/after"
db_manifest "$root/var/lib/dpkg" >"$TESTDIR/after-db"
assert_same_file "$TESTDIR/before" "$TESTDIR/after" "tree after EIO"
assert_same_file "$TESTDIR/before-db" "$TESTDIR/after-db" "database after EIO"
assert_no_debris "$root"
unmount_all

section "auto, ext4 root and ext4 /usr/local, both with a journal"
# Where the commits are ordered the record's fsync of the admin directory
# commits the renames made before it, so the root's file system needs no
# sync after them; /usr/local, another file system, is not carried by
# that fsync: its directories touched are fsync'ed after the renames (a
# syncfs would write out other programs' data there too).
root=$TESTDIR/root-ext4x2
mount_img ext4 "$root"
mkroot "$root"
mount_img ext4 "$root/usr/local"
trace_install "$root" auto "$TESTDIR/smlocal.deb"
assert_grep '^stats: sync mode: syncfs \(auto for ext4 with a journal, default\)' "$TESTDIR/out" \
	"auto takes syncfs on two ext4s"
expect_count "syncfs" "$(calls syncfs "$root")" 0
[ "$(calls fsync "$root/usr/local")" -ge 1 ] ||
	check_fail "no directory of /usr/local fsync'ed after the renames"
expect_count "waits on /usr/local" "$(waits "$root/usr/local")" $nsub_files
expect_count "fdatasync" "$(calls fdatasync "$root")" 0
cmp -s "$root/usr/local/smlocal/s2" "$TESTDIR/pkg-smlocal/usr/local/smlocal/s2" ||
	check_fail "usr/local/smlocal/s2 not installed"
assert_no_debris "$root"
unmount_all

# dirty_on_disk: 8 MiB of another program's left unwritten in a file on the
# disk of $TESTDIR (not on a tmpfs, whose pages are never dirty), and the
# machine's data waiting to be written (/proc/meminfo) above 2 MiB; 1 (a
# part skipped, named by $1) if it is not.
dirty_on_disk() {
	local dirty
	dd if=/dev/zero of="$TESTDIR/neighbour" bs=1M count=8 status=none
	dirty=$(awk '/^(Dirty|Writeback):/ { n += $2 } END { print n + 0 }' /proc/meminfo)
	[ "$dirty" -gt 2048 ] && return 0
	skip_part "$1" \
		"$TESTDIR is not on a disk whose pages stay dirty (${dirty} KiB dirty after writing 8 MiB)"
	return 1
}

section "auto beside other programs' unwritten data, without debugfs: the whole machine's figure"
# (without barriers an ext4 does not order its commits: auto counts the
# data that waits where it would take syncfs)
root=$TESTDIR/root-dirty
MOUNT_OPTS=nobarrier mount_img ext4 "$root"
mkroot "$root"
# Without debugfs (hidden by an empty tmpfs in a mount namespace of its
# own) the kernel gives no figure per file system, so auto goes by the
# whole machine's data waiting to be written (/proc/meminfo), which holds
# the other program's: the bound brought down to 1 MiB.
TRACE_WRAP=(unshare -m sh -c \
	'[ ! -d /sys/kernel/debug ] || mount -t tmpfs nodebugfs /sys/kernel/debug || exit 99; exec "$@"' sh)
if dirty_on_disk "auto by the whole machine's figure"; then
	UNPKG_AUTO_DIRTY_MAX_MIB=1 trace_install "$root" auto "$TESTDIR/smboot.deb"
	assert_grep '^stats: sync mode: uring \(auto for ext4 with a journal, default\)' "$TESTDIR/out" \
		"auto takes uring beside unwritten data"
	assert_grep '^stats: data waiting to be written before the run: [0-9]+ MiB on the whole machine \(/proc/meminfo\), more than auto lets syncfs write out' \
		"$TESTDIR/out" "--stats says what auto saw"
	expect_count "syncfs beside unwritten data" "$(calls syncfs "$root")" 0
	# below the bound: syncfs, and --stats says how much it saw
	rm -rf "${root:?}"/* && mkroot "$root"
	UNPKG_AUTO_DIRTY_MAX_MIB=1000000 trace_install "$root" auto "$TESTDIR/smboot.deb"
	assert_grep '^stats: sync mode: syncfs \(auto for ext4 with a journal, default\)' "$TESTDIR/out" \
		"auto keeps syncfs below the bound"
	assert_grep '^stats: data waiting to be written before the run: [0-9]+ MiB on the whole machine \(/proc/meminfo\)$' \
		"$TESTDIR/out" "--stats says what auto saw below the bound"
fi
TRACE_WRAP=()
rm -f "$TESTDIR/neighbour"
unmount_all

section "auto on a tmpfs root beside other programs' unwritten data: syncfs, nothing to write back"
root=$TESTDIR/root-dirty
mount_tmpfs "$root"
mkroot "$root"
# A tmpfs writes nothing back: syncfs neither waits for the other
# program's data on the disk nor forces it out, so auto keeps it, however
# much the machine has waiting and however low the bound.
if dirty_on_disk "auto on a tmpfs root beside unwritten data"; then
	UNPKG_AUTO_DIRTY_MAX_MIB=1 trace_install "$root" auto "$TESTDIR/smboot.deb"
	assert_grep '^stats: sync mode: syncfs \(auto for tmpfs, default\)' "$TESTDIR/out" \
		"auto keeps syncfs on a tmpfs beside unwritten data"
	assert_grep '^stats: data waiting to be written before the run: 0 MiB on its file systems \(nothing to write back on tmpfs\)$' \
		"$TESTDIR/out" "--stats says why"
	[ "$(calls syncfs "$root")" -ge 1 ] ||
		check_fail "no syncfs on the tmpfs root beside unwritten data"
fi
rm -f "$TESTDIR/neighbour"
unmount_all

# dirty_beside FILE: 64 MiB written into the new file FILE and left
# unwritten (a new file: ext4 writes a truncated and rewritten one back
# when it is closed).
dirty_beside() {
	rm -f "$1"
	dd if=/dev/zero of="$1" bs=1M count=64 status=none
}

# bdi_dirty_mib BDI: the data waiting to be written back to the backing
# device BDI (MAJ:MIN, btrfs-N) by its writeback statistics (debugfs), in
# MiB.
bdi_dirty_mib() {
	awk '/^Bdi(Reclaimable|Writeback):/ { n += $2 } END { print int(n / 1024) }' \
		"$DEBUGFS/bdi/$1/stats"
}

# bdi_of DIR: the name of the backing device of DIR's file system: a
# btrfs's own (btrfs-N, by the /sys/fs/btrfs/FSID/bdi link; its fsid is
# the UUID blkid reads from its device), else the mount's device, MAJ:MIN.
bdi_of() {
	local fsid link
	if [ "$(stat -f -c %T "$1")" != btrfs ]; then
		mountpoint -d "$1"
		return
	fi
	fsid=$(blkid -p -o value -s UUID "$(findmnt -n -o SOURCE -T "$1")") &&
		link=$(readlink "/sys/fs/btrfs/$fsid/bdi") ||
		hard_error "no bdi link for the btrfs of $1 (fsid ${fsid:-unknown})"
	basename "$link"
}

# auto_beside ROOT WHERE DEVICE MODE: install smboot into ROOT with auto
# right after 64 MiB were left unwritten in the file WHERE, with a bound of
# 16 MiB: MODE (syncfs or uring) expected, and --stats naming the
# writeback statistics of DEVICE as the figure.  The machine's figure
# (/proc/meminfo) then holds those 64 MiB, so going by it would always
# give uring.  MODE ordered: the root's commits are ordered, auto keeps
# syncfs without counting and calls no syncfs.
auto_beside() {
	local root=$1 where=$2 dev=$3 mode=$4 cls=$5 tail=
	dirty_beside "$where"
	[ "$(bdi_dirty_mib "$(bdi_of "$(dirname "$where")")")" -ge 32 ] || {
		skip_part "auto beside $where" "the data was written back before the run"
		return 0
	}
	UNPKG_AUTO_DIRTY_MAX_MIB=16 trace_install "$root" auto "$TESTDIR/smboot.deb"
	rm -f "$where"
	note "beside $where: $(grep '^stats: data waiting' "$TESTDIR/out")"
	if [ "$mode" = ordered ]; then
		assert_grep "^stats: sync mode: syncfs \\(auto for $cls, default\\)" "$TESTDIR/out" \
			"auto keeps syncfs where the commits are ordered, beside 64 MiB unwritten in $where"
		assert_grep "^stats: data waiting to be written before the run: not counted: its file systems order their commits" \
			"$TESTDIR/out" "--stats: nothing counted where the commits are ordered"
		expect_count "syncfs where the commits are ordered" "$(calls syncfs "$root")" 0
		[ "$(waits "$root")" -ge 1 ] || check_fail "no wait on $root beside $where"
		return 0
	fi
	assert_grep "^stats: sync mode: $mode \\(auto for $cls, default\\)" "$TESTDIR/out" \
		"auto takes $mode beside 64 MiB unwritten in $where"
	if [ "$mode" = uring ]; then
		tail=", more than auto lets syncfs write out: file by file instead"
	fi
	assert_grep "^stats: data waiting to be written before the run: [0-9]+ MiB on its file systems \\(the writeback statistics of device $dev\\)$tail\$" \
		"$TESTDIR/out" "--stats: the figure of $dev, beside 64 MiB unwritten in $where"
	# syncfs, or where the commits are ordered its waits for each file
	if [ "$mode" = uring ]; then
		expect_count "syncfs beside $where" "$(calls syncfs "$root")" 0
	elif [ "$(($(calls syncfs "$root") + $(waits "$root")))" -lt 1 ]; then
		check_fail "no syncfs nor wait on $root beside $where"
	fi
}

# overlay_on FS NAME: mount an overlayfs whose upper layer is on the file
# system mounted on FS (FS/NAME-upper), its lower layer on fs-other, on
# $ov ($TESTDIR/NAME) with a fresh root in it (0), or skip (1).
overlay_on() {
	ov=$TESTDIR/$2
	mkdir -p "$TESTDIR/fs-other/lower" "$1/$2-upper" "$1/$2-work" "$ov"
	if ! mount -t overlay overlay -o "lowerdir=$TESTDIR/fs-other/lower,upperdir=$1/$2-upper,workdir=$1/$2-work" "$ov" 2>/dev/null; then
		skip_part "auto on an overlayfs on $(basename "$1")" "cannot mount an overlayfs here"
		return 1
	fi
	MOUNTS+=("$ov")
	mkroot "$ov"
	sync -f "$ov"
}

# overlay_beside FS BDI: an overlayfs root (overlay_on) whose upper
# layer's commits are not ordered (FS, whose backing device is BDI): its
# pages wait on FS's, so auto_beside gives syncfs beside the neighbour on
# fs-other and uring beside the one on FS, both by BDI's figure.
overlay_beside() {
	local ov
	overlay_on "$1" "ov-$(basename "$1")" || return 0
	auto_beside "$ov" "$TESTDIR/fs-other/neighbour" "$2" syncfs overlayfs
	auto_beside "$ov" "$1/neighbour" "$2" uring overlayfs
}

# overlay_ordered FS: an overlayfs root (overlay_on) whose upper layer's
# commits are ordered (FS: ext4 with barriers): auto counts nothing and
# waits for each file through the overlay, which sync_file_range does not
# reach: with FIEMAP_FLAG_SYNC, no fdatasync and no syncfs; the fsync of
# the directories after the renames commits it all.
overlay_ordered() {
	local ov
	overlay_on "$1" "ov-ordered-$(basename "$1")" || return 0
	auto_beside "$ov" "$1/neighbour" "" ordered overlayfs
	assert_grep '^stats: data waiting to be written before the run: not counted: its file systems order their commits \(an overlayfs through its upper layer.s\)' \
		"$TESTDIR/out" "--stats: an overlayfs orders its commits through its upper layer"
	expect_count "fdatasync on the overlay whose commits are ordered" "$(calls fdatasync "$ov")" 0
	[ "$(calls fsync "$ov")" -ge 1 ] || check_fail "no fsync of a directory on the overlay"
	check_order "$ov" usr smboot commit

	# From inside a container the upper directory is out of sight: here
	# a tmpfs over FS in unpkg's own mount namespace.  A file of FS
	# bind-mounted in view, as a container's /etc/hosts is, tells the
	# upper layer's file system by its uuid (Linux 6.8); with nothing of
	# FS in view the overlay does not count, and beside the neighbour's
	# data auto syncs file by file.
	local kv
	kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
	echo "127.0.0.1 localhost" >"$1/hosts"
	: >"$TESTDIR/hosts"
	mount --bind "$1/hosts" "$TESTDIR/hosts"
	MOUNTS+=("$TESTDIR/hosts")
	# shellcheck disable=SC2016
	TRACE_WRAP=(unshare -m sh -c 'mount -t tmpfs hide "$0" || exit 99; exec "$@"' "$1")
	if [ "$kv" -lt 6008 ]; then
		skip_part "an overlay's upper layer told by its uuid" "Linux $(uname -r) has no FS_IOC_GETFSUUID (6.8)"
	else
		UNPKG_AUTO_DIRTY_MAX_MIB=16 trace_install "$ov" auto "$TESTDIR/smboot.deb"
		assert_grep '^stats: data waiting to be written before the run: not counted: its file systems order their commits \(an overlayfs through its upper layer.s\)' \
			"$TESTDIR/out" "the upper directory out of sight, a file of its file system in view: the overlay orders its commits"
		[ "$(waits "$ov")" -ge 1 ] || check_fail "no wait on $ov with its upper directory out of sight"
		expect_count "syncfs with the upper directory out of sight" "$(calls syncfs "$ov")" 0
	fi
	umount "$TESTDIR/hosts"
	dirty_beside "$1/neighbour"
	UNPKG_AUTO_DIRTY_MAX_MIB=16 trace_install "$ov" auto "$TESTDIR/smboot.deb"
	rm -f "$1/neighbour"
	TRACE_WRAP=()
	assert_grep '^stats: sync mode: uring \(auto for overlayfs, default\)' "$TESTDIR/out" \
		"nothing of the upper layer's file system in view, beside 64 MiB unwritten: uring"
}

# btrfs_beside: auto_beside on a btrfs root and on an overlayfs whose upper
# layer is on the btrfs, beside the ext4 fs-other.  A btrfs's st_dev is an
# anonymous device of each subvolume (the root is one of its own here),
# without statistics: the figure is the file system's own bdi's, btrfs-N.
btrfs_beside() {
	local bdi root ov
	if ! command -v mkfs.btrfs >/dev/null; then
		skip_part "auto on a btrfs root" "mkfs.btrfs is missing (btrfs-progs)"
		return 0
	fi
	if ! grep -qw btrfs /proc/filesystems && ! modprobe btrfs 2>/dev/null; then
		skip_part "auto on a btrfs root" "the kernel has no btrfs"
		return 0
	fi
	IMG_SIZE=320M mount_img btrfs "$TESTDIR/fs-btrfs"
	bdi=$(bdi_of "$TESTDIR/fs-btrfs")
	if [ ! -e "$DEBUGFS/bdi/$bdi/wb_stats" ]; then
		skip_part "auto on a btrfs root" "no $DEBUGFS/bdi/$bdi/wb_stats"
		return 0
	fi
	root=$TESTDIR/fs-btrfs/root
	if command -v btrfs >/dev/null; then
		btrfs subvolume create "$root" >/dev/null
		[ "$(stat -c %d "$root")" != "$(stat -c %d "$TESTDIR/fs-btrfs")" ] ||
			hard_error "the subvolume $root has its file system's st_dev"
	fi
	mkroot "$root"
	sync -f "$root"
	auto_beside "$root" "$TESTDIR/fs-other/neighbour" "$bdi" syncfs btrfs
	auto_beside "$root" "$TESTDIR/fs-btrfs/neighbour" "$bdi" uring btrfs
	overlay_beside "$TESTDIR/fs-btrfs" "$bdi"
}

section "auto beside unwritten data on another file system: syncfs; on its own: uring"
# The figure auto goes by is the data waiting to be written back to the
# run's own file systems, from their devices' writeback statistics in
# debugfs (mounted here if it is not; Linux 6.10 and later, whose
# statistics count every cgroup's writeback, show wb_stats beside them).
DEBUGFS=/sys/kernel/debug
if [ ! -d "$DEBUGFS/bdi" ] && mount -t debugfs debugfs "$DEBUGFS" 2>/dev/null; then
	MOUNTS+=("$DEBUGFS")
fi
if [ ! -d "$DEBUGFS/bdi" ]; then
	skip_part "auto by the devices' writeback statistics" "debugfs cannot be mounted on $DEBUGFS"
else
	# ext4 writes delayed allocations back by itself once its free space
	# is less than twice what waits for them: room for 64 MiB; without
	# barriers, for a root whose commits are not ordered
	IMG_SIZE=320M MOUNT_OPTS=nobarrier mount_img ext4 "$TESTDIR/fs-root"
	IMG_SIZE=320M mount_img ext4 "$TESTDIR/fs-other"
	rootdev=$(mountpoint -d "$TESTDIR/fs-root")
	if [ ! -e "$DEBUGFS/bdi/$rootdev/wb_stats" ]; then
		skip_part "auto by the devices' writeback statistics" \
			"no $DEBUGFS/bdi/$rootdev/wb_stats (a kernel before 6.10): auto counts the whole machine"
	else
		root=$TESTDIR/fs-root/root
		mkroot "$root"
		sync -f "$root"
		auto_beside "$root" "$TESTDIR/fs-other/neighbour" "$rootdev" syncfs "ext4 with a journal"
		auto_beside "$root" "$TESTDIR/fs-root/neighbour" "$rootdev" uring "ext4 with a journal"
		# with barriers its commits are ordered: auto counts nothing,
		# keeps the syncfs strategy and calls no syncfs
		mount -o remount,barrier "$TESTDIR/fs-root"
		auto_beside "$root" "$TESTDIR/fs-root/neighbour" "$rootdev" ordered "ext4 with a journal"
		overlay_ordered "$TESTDIR/fs-root"
		mount -o remount,nobarrier "$TESTDIR/fs-root"

		overlay_beside "$TESTDIR/fs-root" "$rootdev"
		btrfs_beside
	fi
fi
unmount_all

section "auto's database writes: waited for where the commits are ordered"
# A --configure without scripts writes the database once, and so does
# --set-selections.  On ext2 (auto:
# uring) status-new is fdatasync'ed before its rename and the admindir
# fsync'ed after it; on ext4 with a journal and xfs status-new is only
# waited for (sync_file_range), and the fsync after the rename is the one
# commit, with the flush, that makes both durable.
# A removal that drops an interest renames triggers/'s files before the
# status: triggers/ is fsync'ed on ext2, and where the commits are ordered
# the admindir's fsync after the status's rename carries it.
new_pkg "$TESTDIR/pkg-smint" smint
echo "interest smint-trigger" >"$TESTDIR/pkg-smint/DEBIAN/triggers"
build_deb "$TESTDIR/smint.deb" "$TESTDIR/pkg-smint"
fss="ext2 ext4"
command -v mkfs.xfs >/dev/null && fss="$fss xfs" ||
	skip_part "database writes on xfs" "mkfs.xfs is missing (xfsprogs)"
for fs in $fss; do
	root=$TESTDIR/dbw-$fs
	IMG_SIZE=320M mount_img "$fs" "$root"
	mkroot "$root"
	adm=$root/var/lib/dpkg
	"$UNPKG" --root="$root" --unpack "$TESTDIR/smlocal.deb" \
		>/dev/null 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg --unpack on $fs failed"; }
	strace -f -y -qq -o "$TESTDIR/trace" \
		-e trace=fsync,sync_file_range,rename,renameat,renameat2 \
		"$UNPKG" --root="$root" --stats --configure smlocal \
		>"$TESTDIR/out" 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg --configure on $fs failed"; }
	waits=1
	if [ "$fs" = ext2 ]; then
		waits=0
		calls='sync_file_range=0 fdatasync=0 fsync=2 syncfs=0'
	else
		calls='sync_file_range=1 fdatasync=0 fsync=1 syncfs=0'
		# status-new waited for (WAIT_AFTER) before its rename, the
		# admindir fsync'ed after it
		awk -v adm="$adm" '
		/ = -1 / { next }
		$2 ~ /^sync_file_range\(/ && index($0, "<" adm "/status-new>") &&
			/SYNC_FILE_RANGE_WAIT_AFTER/ { waited = NR }
		$2 ~ /^rename/ && index($0, "\"status-new\"") { renamed = NR }
		$2 ~ /^fsync\(/ && index($0, "<" adm ">") && renamed { synced = NR }
		END { exit !(waited && renamed > waited && synced > renamed) }' \
			"$TESTDIR/trace" ||
			{ show_file "$TESTDIR/trace"; check_fail "$fs: order of the database write"; }
	fi
	assert_grep "^stats: calls $calls " "$TESTDIR/out" "$fs: the database write's syncs"
	note "$fs: $calls"
	# apt's --set-selections: the same one database write
	echo "smlocal hold" | "$UNPKG" --root="$root" --stats --set-selections \
		>"$TESTDIR/out" 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg --set-selections on $fs failed"; }
	assert_grep "^stats: calls $calls " "$TESTDIR/out" "$fs: --set-selections's syncs"
	grep -q '^Status: hold ok installed$' "$adm/status" ||
		check_fail "$fs: --set-selections did not set smlocal's selection"

	"$UNPKG" --root="$root" -i "$TESTDIR/smint.deb" \
		>/dev/null 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg -i smint on $fs failed"; }
	[ -f "$adm/triggers/smint-trigger" ] ||
		fail "$fs: no interest file triggers/smint-trigger"
	strace -f -y -qq -o "$TESTDIR/trace" -e trace=fsync \
		"$UNPKG" --root="$root" --remove smint \
		>/dev/null 2>"$TESTDIR/err" ||
		{ show_file "$TESTDIR/err"; fail "unpkg --remove on $fs failed"; }
	[ ! -e "$adm/triggers/smint-trigger" ] ||
		check_fail "$fs: triggers/smint-trigger left after the removal"
	expect_count "$fs: fsync of triggers/ by the removal" \
		"$(calls fsync "$adm/triggers")" $((1 - waits))
done
unmount_all

section "the commit object's and auto's own tests, on ext2, tmpfs, ext4 and xfs"
# run_case PROG CASE FS: PROG's test case CASE with $TMPDIR on the scratch
# file system FS; it must pass, say it ran on FS, and (with a fourth
# argument "ran") not skip any part of it.
run_case() {
	local prog out
	prog=$(dirname "$UNPKG")/../tests/$1
	out=$TESTDIR/$1-$2-$3
	[ -x "$prog" ] || hard_error "$prog is not built (make check builds it)"
	if TMPDIR=$scratch/$3 CK_RUN_CASE=$2 "$prog" >"$out" 2>&1; then
		note "$1 $2 on $3: passed"
	else
		show_file "$out"
		check_fail "$1 $2 on $3"
	fi
	assert_grep "^$2: scratch directory on $3\$" "$out" "$1 ran on $3"
	if [ "${4:-}" = ran ] && grep -q "SKIP PART" "$out"; then
		show_file "$out"
		check_fail "$1 $2 skipped a part on $3"
	fi
}

scratch=$TESTDIR/scratch
fss="ext2 tmpfs ext4"
mount_img ext2 "$scratch/ext2"
mount_tmpfs "$scratch/tmpfs"
mount_img ext4 "$scratch/ext4"
if command -v mkfs.xfs >/dev/null; then
	IMG_SIZE=320M mount_img xfs "$scratch/xfs"
	fss="$fss xfs"
else
	skip_part "check_commit per_fs on xfs" "mkfs.xfs is missing (xfsprogs)"
fi
for fs in $fss; do
	# tests/check_commit.c, test case per_fs: the counts it expects
	# follow the class of $TMPDIR's file system, which it prints (on ext4
	# with a journal and xfs the barrier waits for each file's writeback
	# instead of a syncfs)
	run_case check_commit per_fs "$fs"
	# tests/check_strategy.c, test case devices: auto's whole choice
	# beside its own device's dirty data, which needs a file system with
	# a device where auto takes syncfs: ext4 with a journal and xfs
	case $fs in
	ext4 | xfs) run_case check_strategy devices "$fs" ran ;;
	*) run_case check_strategy devices "$fs" ;;
	esac
done
unmount_all

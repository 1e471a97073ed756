#!/bin/bash
# imgfs.sh - the slow-flush disk of the benchmarks (bench/slowdisk,
# bench/imgfs, bench/imgfs-log; doc/benchmarks.md).
#
# A 64 MB ext4 disk with 2 ms flushes is brought up with a write log, then:
#  - fsync of a new file costs at least one flush counted by imgfs and takes
#    at least 2 ms (a functional check of the latency, not a benchmark);
#  - where tracefs is available, the flush requests the block layer issues
#    to the loop device are exactly the flushes imgfs counts;
#  - data the disk has flushed does not stay dirty in this machine's page
#    cache as pages of the image (they would count as other programs' dirty
#    data for --sync=auto), where the kernel has cachestat(2);
#  - after "down", the log is complete, agrees with the counters, has the
#    data of a file written before the flush that its fsync caused (and not
#    before its write record), and replays into the final image;
#  - nothing stays mounted or attached, imgfs has exited and said nothing
#    unexpected (sanitizer reports included);
#  - an "up" that fails half-way takes down what it had set up.
TEST_NAME=imgfs
. "${TESTLIB:?}"
need_cmd losetup mkfs.ext4 mountpoint setsid truncate cmp grep awk sync
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE is not available)"
{ exec 3<>/dev/fuse; } 2>/dev/null || skip "cannot open /dev/fuse here"
exec 3>&-
need_mounts

BENCH=${BENCHDIR:-$(dirname "$UNPKG")/../bench}
SLOWDISK=$(dirname "$TESTLIB")/../../bench/slowdisk
export IMGFS=$BENCH/imgfs
for p in "$IMGFS" "$BENCH/imgfs-log" "$BENCH/fsync-time" "$SLOWDISK"; do
	[ -x "$p" ] || hard_error "$p is not built or not executable"
done

DISK=$TESTDIR/disk
TRACE=
cleanup_imgfs() {
	local rc=$?
	set +e
	trap - ERR
	if [ -d "$DISK" ]; then
		"$SLOWDISK" down "$DISK" >/dev/null 2>&1
	fi
	if [ -n "$TRACE" ] && [ -d "$TRACE" ]; then
		echo 0 >"$TRACE/events/block/block_rq_issue/enable"
		rmdir "$TRACE"
	fi
	(exit "$rc")
	on_exit
}
trap cleanup_imgfs EXIT

# counter NAME: a counter of the running disk.
counter() {
	awk -v k="$1" '$1 == k { print $2 }' "$DISK/stats"
}

# nothing_left DIR WHAT: nothing of slowdisk DIR is mounted, attached or
# running.
nothing_left() {
	local dir=$1 what=$2 pid
	! mountpoint -q "$dir/mnt" || check_fail "$what: $dir/mnt still mounted"
	! mountpoint -q "$dir/fuse" || check_fail "$what: $dir/fuse still mounted"
	if losetup -a | grep -qF "$dir/"; then
		check_fail "$what: a loop device is still attached:"
		losetup -a | grep -F "$dir/" >&2
	fi
	if [ -f "$dir/imgfs.pid" ]; then
		pid=$(cat "$dir/imgfs.pid")
		check_fail "$what: imgfs.pid left behind (pid $pid)"
	fi
	if pgrep -f "imgfs .*$dir/image" >/dev/null; then
		check_fail "$what: an imgfs of $dir is still running"
	fi
}

# ---------------------------------------------------------------------------
section "up"
# commit=300: no timed journal commit should fall across the boundaries of
# the window in which flushes are counted both ways.
mnt=$("$SLOWDISK" up "$DISK" --latency-ms 2 --size 64M --log "$DISK/log" \
	--mount-opts commit=300) ||
	fail "slowdisk up failed"
[ "$mnt" = "$DISK/mnt" ] || check_fail "up printed '$mnt', expected $DISK/mnt"
mountpoint -q "$mnt" || fail "$mnt is not mounted"
dev=$(cat "$DISK/loop")
note "disk on $dev, mounted on $mnt"
[ "$(cat "/sys/block/${dev#/dev/}/queue/nomerges")" = 2 ] ||
	check_fail "request merging is not disabled on $dev"
"$SLOWDISK" stats "$DISK" >"$TESTDIR/stats.out"
assert_grep '^flushes [0-9]+$' "$TESTDIR/stats.out" "slowdisk stats"
assert_grep '^flush_latency_us 2000$' "$TESTDIR/stats.out" "slowdisk stats"

# Block-layer view of the flushes, where tracefs is there (a trace instance
# of our own, filtered on the loop device).  Where it is not mounted, the
# test mounts it in its scratch directory (unmounted when it ends, after
# the instance is removed).
sync -f "$mnt"
tracing=/sys/kernel/tracing
if [ ! -d "$tracing/instances" ] && grep -qw tracefs /proc/filesystems; then
	tracing=$TESTDIR/tracing
	mkdir -p "$tracing"
	if mount -t tracefs unpkg-imgfs "$tracing" 2>"$TESTDIR/tracefs.err"; then
		register_mount "$tracing"
	fi
fi
if [ -d "$tracing/instances" ] &&
	mkdir "$tracing/instances/unpkg-imgfs-$$" 2>"$TESTDIR/tracefs.err"; then
	TRACE=$tracing/instances/unpkg-imgfs-$$
	IFS=: read -r major minor <"/sys/block/${dev#/dev/}/dev"
	echo "dev == $(((major << 20) | minor))" >"$TRACE/events/block/block_rq_issue/filter"
	echo 1 >"$TRACE/events/block/block_rq_issue/enable"
else
	skip_part "block-layer cross-check of the flushes" \
		"no tracefs instances: $(cat "$TESTDIR/tracefs.err" 2>/dev/null)"
fi
flushes0=$(counter flushes)

# ---------------------------------------------------------------------------
section "fsync of a 4 KiB file: counted, and at least 2 ms"
"$BENCH/fsync-time" -n 3 -S "$DISK/stats" "$mnt" >"$TESTDIR/fsync.out" ||
	fail "fsync-time failed"
show_file "$TESTDIR/fsync.out" "fsync-time"
read -r min_us min_fl < <(awk '$1 == "summary" { print $5, $14 }' "$TESTDIR/fsync.out")
[ "${min_us:-0}" -ge 2000 ] ||
	check_fail "an fsync took ${min_us:-?} us with 2 ms flushes (expected >= 2000)"
[ "${min_fl:-0}" -ge 1 ] ||
	check_fail "an fsync caused ${min_fl:-?} device flushes counted by imgfs (expected >= 1)"

# ---------------------------------------------------------------------------
section "a file written and fsynced"
token="IMGFS-TEST-$$-$RANDOM$RANDOM-"
{
	printf '%s' "$token"
	head -c $((4096 - ${#token})) /dev/zero | tr '\0' 'x'
} >"$TESTDIR/marker"
before=$(counter flushes)
cp "$TESTDIR/marker" "$mnt/marker"
sync "$mnt/marker"	# fsync(2) of the file
after=$(counter flushes)
note "flushes: $before before the fsync, $after after"
[ "$after" -gt "$before" ] ||
	check_fail "fsync of a new file did not increase the flush counter"

flushes1=$(counter flushes)
if [ -n "$TRACE" ]; then
	echo 0 >"$TRACE/events/block/block_rq_issue/enable"
	traced=$(awk '{
		for (i = 1; i < NF; i++)
			if ($i == "block_rq_issue:") { if ($(i + 2) ~ /F/) n++; break }
	} END { print n + 0 }' "$TRACE/trace")
	note "flush requests issued to $dev: $traced; flushes counted by imgfs: $((flushes1 - flushes0))"
	[ "$traced" -eq $((flushes1 - flushes0)) ] ||
		check_fail "the block layer issued $traced flushes, imgfs counted $((flushes1 - flushes0))"
	[ "$traced" -gt 0 ] || check_fail "no flush request traced at all"
fi

# ---------------------------------------------------------------------------
section "flushed data is not left dirty on this machine"
CACHESTAT=$(dirname "$(dirname "$UNPKG")")/tests/cachestat
[ -x "$CACHESTAT" ] || hard_error "$CACHESTAT is not built"
head -c $((8 << 20)) /dev/urandom >"$mnt/eight"
sync -f "$mnt/eight"	# syncfs(2): the disk's flushes come last
rc=0
"$CACHESTAT" "$DISK/image" >"$TESTDIR/cachestat" 2>"$TESTDIR/cachestat.err" || rc=$?
if [ "$rc" -eq 77 ]; then
	skip_part "the image's dirty pages" "$(cat "$TESTDIR/cachestat.err")"
elif [ "$rc" -ne 0 ]; then
	fail "cachestat of the image: $(cat "$TESTDIR/cachestat.err")"
else
	dirty=$(awk '$1 == "dirty" { print $2 }' "$TESTDIR/cachestat")
	note "pages of the image dirty after the flush: $dirty ($(awk '$1 == "writeback" { print $2 }' "$TESTDIR/cachestat") under writeback)"
	# 8 MiB are 2048 pages; a few may be dirtied after the last flush
	# (the journal's superblock, the loop device's own writes).
	[ "$dirty" -lt 256 ] ||
		check_fail "$dirty pages of the image are still dirty after the disk flushed 8 MiB"
fi

# ---------------------------------------------------------------------------
section "down"
"$SLOWDISK" down "$DISK" || check_fail "slowdisk down failed"
nothing_left "$DISK" "after down"
if grep -v 'warning: PR_SET_IO_FLUSHER' "$DISK/imgfs.err" >"$TESTDIR/imgfs.err"; then
	check_fail "imgfs printed unexpected messages:"
	sed 's/^/    | /' "$TESTDIR/imgfs.err" >&2
fi
"$SLOWDISK" stats "$DISK" >"$TESTDIR/stats.final" || check_fail "stats after down"

# ---------------------------------------------------------------------------
section "the log"
"$BENCH/imgfs-log" dump "$DISK/log" >"$TESTDIR/dump" ||
	fail "imgfs-log dump: the log is invalid or incomplete"
head -n 1 "$TESTDIR/dump"
tail -n 1 "$TESTDIR/dump"
assert_grep '^# imgfs log version 1, image size 67108864, zero start yes$' \
	"$TESTDIR/dump" "log header"
assert_grep '^[0-9]+ E 0 0$' "$TESTDIR/dump" "END record"
# The log and the final counters tell the same story.
while read -r rec key; do
	n=$(awk -v t="$rec" '$2 == t { n++ } END { print n + 0 }' "$TESTDIR/dump")
	want=$(awk -v k="$key" '$1 == k { print $2 }' "$TESTDIR/stats.final")
	[ "$n" = "$want" ] || check_fail "log has $n $rec records, counter $key is $want"
done <<-EOF
	W writes
	F flushes
	D discards
	Z zeroouts
EOF

# Where the file's data is on the disk.
grep -obaF "$token" "$DISK/image" >"$TESTDIR/where" || true
[ "$(wc -l <"$TESTDIR/where")" -eq 1 ] ||
	fail "the file's data is on the disk $(wc -l <"$TESTDIR/where") times, expected once"
moff=$(cut -d: -f1 "$TESTDIR/where")
note "file data at byte $moff of the disk"
# Its last write record, the first flush after it, and that flush's number.
read -r wseq fseq fnum < <(awk -v m="$moff" '
	/^#/ { next }
	$2 == "W" && m >= $3 && m < $3 + $4 { w = $1; f = ""; k = "" }
	$2 == "F" { nf++; if (w != "" && f == "") { f = $1; k = nf } }
	END { print (w == "" ? "-" : w), (f == "" ? "-" : f), (k == "" ? "-" : k) }
' "$TESTDIR/dump")
note "write record $wseq, next flush record $fseq (flush number $fnum)"
if [ "$wseq" = - ]; then
	check_fail "no write record covers the file's data"
elif [ "$fseq" = - ]; then
	check_fail "no flush record after the write of the file's data"
else
	if [ "$fnum" -le "$before" ] || [ "$fnum" -gt "$after" ]; then
		check_fail "the flush after the data write is flush number $fnum, not one of the fsync's ($before, $after]"
	fi

	# Replays: the data is there after the flush, not before its write.
	truncate -s 64M "$TESTDIR/replay"
	"$BENCH/imgfs-log" apply "$DISK/log" "$TESTDIR/replay" "$fseq" ||
		fail "imgfs-log apply up to $fseq failed"
	cmp -s -i "$moff:0" -n 4096 "$TESTDIR/replay" "$TESTDIR/marker" ||
		check_fail "replayed up to the flush of the fsync, the file's data is missing"
	rm -f "$TESTDIR/replay"
	truncate -s 64M "$TESTDIR/replay"
	"$BENCH/imgfs-log" apply "$DISK/log" "$TESTDIR/replay" $((wseq - 1)) ||
		fail "imgfs-log apply up to $((wseq - 1)) failed"
	! cmp -s -i "$moff:0" -n 4096 "$TESTDIR/replay" "$TESTDIR/marker" ||
		check_fail "replayed up to just before the write record, the data is already there"
fi
rm -f "$TESTDIR/replay"
truncate -s 64M "$TESTDIR/replay"
"$BENCH/imgfs-log" apply "$DISK/log" "$TESTDIR/replay" || fail "imgfs-log apply failed"
cmp "$TESTDIR/replay" "$DISK/image" ||
	check_fail "the whole log replayed on zeros is not the final image"
rm -f "$TESTDIR/replay"

# A log cut short is refused.
head -c -1 "$DISK/log" >"$TESTDIR/cut.log"
if "$BENCH/imgfs-log" dump "$TESTDIR/cut.log" >/dev/null 2>"$TESTDIR/cut.err"; then
	check_fail "imgfs-log accepted a truncated log"
fi

# ---------------------------------------------------------------------------
section "a failed up cleans up"
BAD=$TESTDIR/bad
if "$SLOWDISK" up "$BAD" --latency-ms 0 --size 64M \
	--mkfs-opts "-b 12345" >"$TESTDIR/bad.out" 2>"$TESTDIR/bad.err"; then
	check_fail "slowdisk up with a bad mkfs option succeeded"
	"$SLOWDISK" down "$BAD" || true
fi
show_file "$TESTDIR/bad.err" "slowdisk up stderr"
assert_grep 'setup failed, cleaning up' "$TESTDIR/bad.err" "failed up"
nothing_left "$BAD" "after a failed up"

# The disk is down: the EXIT trap has nothing left to do.
rm -rf "$DISK"

#!/bin/bash
# faults-ordered.sh - faults.sh's failing syncs (its part 2, EIO at every
# sync of the run) with the runs on ext4 with a journal and on xfs.
#
# There auto's barrier before the renames waits for each file's writeback
# (sync_file_range with WAIT_AFTER) instead of a syncfs, and the
# database's new files are only waited for before the fsync of their
# directory: faults.sh's usual tmpfs never takes that path.  Every sync of
# the install, the upgrade, the configuration, the trigger processing, the
# removal and the purge fails once, the waits among them, and what each
# failure leaves must keep the contract (faults.sh's fault_at).
#
# Run on its own: make check TESTS=tests/integration/faults-ordered.sh
. "${TESTLIB:?}"
need_root
need_mounts
need_cmd strace mkfs.ext4

fss=ext4
if command -v mkfs.xfs >/dev/null; then
	fss="$fss xfs"
else
	skip_part "xfs" "mkfs.xfs is missing (xfsprogs)"
fi
parts=
for scen in fresh upgrade configure triggers remove purge; do
	parts+=" $scen/auto/eio"
done
for fs in $fss; do
	section "EIO at every sync, on $fs"
	out=$TESTDIR/faults-$fs.log
	rc=0
	UNPKG_FAULTS_FS=$fs UNPKG_FAULTS_ONLY=${parts# } \
		bash "$(dirname "$TESTLIB")/faults.sh" >"$out" 2>&1 || rc=$?
	grep -E '^faults: (work directory|.* runs with eio)' "$out" |
		sed "s/^faults: /$fs: /" | while read -r line; do note "$line"; done
	if [ "$rc" -ne 0 ]; then
		show_file "$out"
		check_fail "$fs: faults.sh exited $rc"
	fi
	assert_grep "^faults: work directory on $fs\$" "$out" "$fs: the runs were on $fs"
	# the waits were among the failing calls, for the packages' files
	# and for the database's
	assert_grep '^faults: fault run: fresh-auto	EIO at sync_file_range #[0-9]+	sync_file_range\([0-9]+</usr/' \
		"$out" "$fs: a package file's wait failed"
	assert_grep '^faults: fault run: remove-auto	EIO at sync_file_range #[0-9]+	sync_file_range\([0-9]+</var/lib/dpkg/status-new>' \
		"$out" "$fs: the database's wait failed"
done

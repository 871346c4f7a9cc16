#!/usr/bin/env bash
# capture-ftrace.sh — capture a real scheduler trace from this machine in the ftrace text
# format (what `cat /sys/kernel/tracing/trace` prints), the same format schedlab's
# simulator writes, so that one parser (crates/schedlab-sim/src/trace/parse.rs) and
# Perfetto read both.
#
# Usage: sudo scripts/capture-ftrace.sh [-o OUT] [-n MAX_EVENT_LINES] [-b BUFFER_KB]
#                                       [--top-level] [-- WORKLOAD...]
#   -o OUT         output file (default: tests/data/traces/host-capture.txt)
#   -n N           keep the header and the first N event lines (default 4000; 0 = all)
#   -b KB          per-CPU ring buffer size in KiB (default 8192)
#   --top-level    use the top-level trace buffer instead of a private instance
#   WORKLOAD       command to trace (default: `hackbench -g 1 -l 50` when installed,
#                  else a few shell, sleep and yes processes)
#
# What it records: sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
# sched_migrate_task, sched_process_fork, sched_process_exit, and trace_marker writes
# (a `C|<tgid>|demo|<v>` counter and a `B|<tgid>|workload` / `E|<tgid>` slice around the
# workload), with the tgid column (options/record-tgid) and CLOCK_MONOTONIC timestamps
# (trace_clock=mono) so that captures line up with the host runner's clock_gettime().
#
# It leaves the machine as it found it: by default it records into a private ftrace
# instance (instances/schedlab-<pid>), which is removed on exit; with --top-level it
# saves tracing_on, buffer_size_kb, current_tracer, trace_clock, options/record-tgid and
# the enabled-event list first and writes them back on exit. tracefs is mounted if it is
# not, and unmounted again if this script mounted it. Cleanup runs from an EXIT trap, so
# it also happens after an error or Ctrl-C.
set -euo pipefail

ARGS="$*"
OUT=tests/data/traces/host-capture.txt
MAX_LINES=4000
BUF_KB=8192
TOP_LEVEL=0
WORKLOAD=()
while [ $# -gt 0 ]; do
	case "$1" in
	-o) OUT=$2; shift 2 ;;
	-n) MAX_LINES=$2; shift 2 ;;
	-b) BUF_KB=$2; shift 2 ;;
	--top-level) TOP_LEVEL=1; shift ;;
	-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
	--) shift; WORKLOAD=("$@"); break ;;
	*) echo "capture-ftrace: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "capture-ftrace: must run as root (tracefs is root-only)" >&2
	exit 1
fi

TRACEFS=/sys/kernel/tracing
EVENTS="sched_switch sched_waking sched_wakeup sched_wakeup_new sched_migrate_task sched_process_fork sched_process_exit"
MOUNTED=0
INST=""
SAVED=""
TMP=$(mktemp -d)

cleanup() {
	local rc=$?
	set +e
	if [ -n "$INST" ] && [ -d "$INST" ]; then
		echo 0 >"$INST/tracing_on"
		for e in $EVENTS; do echo 0 >"$INST/events/sched/$e/enable" 2>/dev/null; done
		rmdir "$INST" || echo "capture-ftrace: could not remove $INST" >&2
	fi
	if [ -n "$SAVED" ]; then
		# Restore the top-level buffer exactly as it was.
		echo 0 >"$TRACEFS/tracing_on"
		: >"$TRACEFS/set_event"
		while IFS= read -r ev; do
			[ -n "$ev" ] && echo "$ev" >>"$TRACEFS/set_event"
		done <"$SAVED/set_event"
		echo "$(cat "$SAVED/current_tracer")" >"$TRACEFS/current_tracer"
		echo "$(cat "$SAVED/trace_clock")" >"$TRACEFS/trace_clock"
		echo "$(cat "$SAVED/record-tgid")" >"$TRACEFS/options/record-tgid"
		echo "$(cat "$SAVED/buffer_size_kb")" >"$TRACEFS/buffer_size_kb"
		echo "$(cat "$SAVED/tracing_on")" >"$TRACEFS/tracing_on"
	fi
	if [ "$MOUNTED" = 1 ]; then
		umount "$TRACEFS" || echo "capture-ftrace: could not unmount $TRACEFS" >&2
	fi
	rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -e "$TRACEFS/trace" ]; then
	mount -t tracefs nodev "$TRACEFS"
	MOUNTED=1
fi

if [ "$TOP_LEVEL" = 0 ] && mkdir "$TRACEFS/instances/schedlab-$$" 2>/dev/null; then
	INST="$TRACEFS/instances/schedlab-$$"
	T=$INST
else
	T=$TRACEFS
	SAVED="$TMP/saved"
	mkdir "$SAVED"
	cat "$T/tracing_on" >"$SAVED/tracing_on"
	# buffer_size_kb reads "7 (expanded: 1408)" before first use: keep the number only.
	awk '{print $1}' "$T/buffer_size_kb" >"$SAVED/buffer_size_kb"
	cat "$T/current_tracer" >"$SAVED/current_tracer"
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$T/trace_clock" >"$SAVED/trace_clock"
	cat "$T/options/record-tgid" >"$SAVED/record-tgid"
	cat "$T/set_event" >"$SAVED/set_event"
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	: >"$T/set_event"
fi

echo "$BUF_KB" >"$T/buffer_size_kb"
if grep -qw mono "$T/trace_clock"; then echo mono >"$T/trace_clock"; fi
echo 1 >"$T/options/record-tgid"
for e in $EVENTS; do
	if [ -e "$T/events/sched/$e/enable" ]; then
		echo 1 >"$T/events/sched/$e/enable"
	else
		echo "capture-ftrace: event sched/$e not available on this kernel, skipped" >&2
	fi
done
: >"$T/trace" # clear the buffer

if [ ${#WORKLOAD[@]} -eq 0 ]; then
	if command -v hackbench >/dev/null; then
		WORKLOAD=(hackbench -g 1 -l 50)
	else
		WORKLOAD=(sh -c 'yes >/dev/null & y=$!; for i in 1 2 3 4 5; do sleep 0.01; done; kill $y; wait')
	fi
fi

echo 1 >"$T/tracing_on"
echo "C|$$|demo|5" >"$T/trace_marker"
echo "B|$$|workload" >"$T/trace_marker"
"${WORKLOAD[@]}" >"$TMP/workload.out" 2>&1 || echo "capture-ftrace: workload exited with $?" >&2
echo "E|$$" >"$T/trace_marker"
echo "C|$$|demo|0" >"$T/trace_marker"
sleep 0.05
echo 0 >"$T/tracing_on"

cat "$T/trace" >"$TMP/full.txt"
mkdir -p "$(dirname "$OUT")"
if [ "$MAX_LINES" -gt 0 ]; then
	# Keep the '#' header block, then the first MAX_LINES event lines (whole lines only).
	awk -v max="$MAX_LINES" 'hdr && /^#/ { print; next } { hdr = 0; if (n++ < max) print; else exit }
		BEGIN { hdr = 1 }' "$TMP/full.txt" >"$OUT"
else
	cp "$TMP/full.txt" "$OUT"
fi

total=$(grep -vc '^#' "$TMP/full.txt" || true)
kept=$(grep -vc '^#' "$OUT" || true)
{
	echo "capture-ftrace: wrote $OUT ($kept of $total event lines, $(wc -c <"$OUT") bytes)"
	echo "  command:  $0 $ARGS"
	echo "  workload: ${WORKLOAD[*]}"
	echo "  date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "  kernel:   $(uname -srvm)"
	echo "  cpus:     $(nproc)   trace_clock: $(sed -n 's/.*\[\(.*\)\].*/\1/p' "$T/trace_clock")"
	echo "  buffer:   $([ -n "$INST" ] && echo "private instance $INST (removed)" || echo "top-level (settings restored)")"
	sed -n '1,2p' "$TMP/workload.out" | sed 's/^/  workload output: /'
} >&2

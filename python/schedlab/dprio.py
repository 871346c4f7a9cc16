"""Dynamic-priority counters from a trace (seed 000's "DPRIO against time per PID").

The simulator writes each policy's notion of dynamic priority as ``tracing_mark_write``
counters (``C|pid|name|value``: "prio", "vruntime", "deadline"); a real ftrace capture
may carry such counters too. :func:`series` turns parsed trace columns into the
``counter → label → (times, values)`` mapping that :func:`schedlab.plots.counter_timeline`
draws.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

Series = dict[str, dict[str, tuple[list[float], list[float]]]]


def series(cols: Mapping[str, Sequence[Any]], pids: Collection[int] = ()) -> Series:
    """Counters per name and PID (label ``"<pid> (<comm>)"``), times in seconds; only
    ``pids`` if given. Empty if the trace has no counters. A counter is written only when
    it changes, so each line is held at its last value up to the end of the trace."""
    wanted = set(pids)
    comm: dict[int, str] = {}
    raw: dict[str, dict[int, tuple[list[float], list[float]]]] = {}
    for kind, pid, name, value, ts, wpid, wcomm in zip(
        cols["mark_kind"], cols["mark_tgid"], cols["mark_name"], cols["mark_value"],
        cols["ts_ns"], cols["pid"], cols["comm"], strict=True,
    ):
        if kind != "C" or pid is None or value is None or name is None:
            continue
        if wpid == pid and pid not in comm:
            comm[pid] = wcomm
        if wanted and pid not in wanted:
            continue
        xs, ys = raw.setdefault(name, {}).setdefault(pid, ([], []))
        xs.append(ts / 1e9)
        ys.append(float(value))
    end = max(cols["ts_ns"], default=0) / 1e9
    for per in raw.values():
        for xs, ys in per.values():
            if xs[-1] < end:
                xs.append(end)
                ys.append(ys[-1])
    return {
        name: {(f"{pid} ({comm[pid]})" if pid in comm else str(pid)): per[pid]
               for pid in sorted(per)}
        for name, per in sorted(raw.items())
    }

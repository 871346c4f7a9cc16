"""Costs measured on this host, for the simulator's cost model.

The probe is Rust (``schedlab_host::probe``, via ``_core.host_pipe_costs``): two processes
pinned to one CPU bounce a message over two pipes, as ``perf bench sched pipe`` does.
It yields the cost of one uncontended pipe call and of one *hop* (block, wake-up and
context switch), from which a spec's ``machine.context_switch_ns`` and its pipes'
``op_cost_ns`` are set — measured, not guessed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class HostCosts:
    """Medians of ``reps`` runs of ``messages`` messages of ``bytes`` bytes (ns)."""

    call_ns: float
    hop_ns: float
    round_trip_ns: float
    cpu: int
    bytes: int
    messages: int
    reps: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return (f"pipe call {self.call_ns:,.0f} ns, hop (block + wake-up + switch) "
                f"{self.hop_ns:,.0f} ns, round trip {self.round_trip_ns:,.0f} ns — medians of "
                f"{self.reps} runs of {self.messages:,} {self.bytes}-byte messages bounced "
                f"between two processes pinned to CPU {self.cpu}")


HostCostsFn = Callable[[bool], HostCosts]


def measure(quick: bool = False) -> HostCosts:
    """Measure this host's pipe call and hop costs (≈ 0.5 s; quick ≈ 0.1 s)."""
    from schedlab import _core

    d = _core.host_pipe_costs(messages=4_000 if quick else 20_000, bytes=100, reps=5)
    return HostCosts(**d)


def apply(spec: dict, costs: HostCosts) -> dict:
    """A copy of ``spec`` whose machine charges a hop per context switch and whose pipes
    charge the measured call cost per read or write.

    The probe measures 100-byte calls as a whole, so the per-byte cost is folded into the
    call (``byte_cost_ps`` = 0); sockets keep their calibrated costs. A hop includes the
    wake-up and the sleep, so ``wakeup_ns`` stays 0 rather than being charged twice.
    """
    out = copy.deepcopy(spec)
    sl = out.setdefault("schedlab", {})
    sl.setdefault("machine", {})["context_switch_ns"] = round(costs.hop_ns)
    for chan in (sl.get("pipes") or {}).values():
        chan["op_cost_ns"] = round(costs.call_ns)
        chan["byte_cost_ps"] = 0
    return out

"""Costs measured on this host, for the simulator's cost model.

The probe is Rust (``schedlab_host::probe``, via ``_core.host_channel_costs``): two
processes pinned to one CPU bounce a message over two pipes — or two AF_UNIX stream
socketpairs, hackbench's default — as ``perf bench sched pipe`` does. It yields the cost of
one uncontended call and of one *hop* (block, wake-up and context switch), from which a
spec's ``machine.context_switch_ns`` and its channels' ``op_cost_ns`` are set — measured,
not guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ChannelCost:
    """Medians of ``reps`` runs of ``messages`` messages of ``bytes`` bytes (ns)."""

    kind: str
    call_ns: float
    hop_ns: float
    round_trip_ns: float
    cpu: int
    bytes: int
    messages: int
    reps: int

    def describe(self) -> str:
        return (f"{self.kind} call {self.call_ns:,.0f} ns, hop {self.hop_ns:,.0f} ns, round "
                f"trip {self.round_trip_ns:,.0f} ns")


@dataclass(frozen=True)
class HostCosts:
    """This host's pipe and socket costs; a context switch is charged one pipe hop."""

    pipe: ChannelCost
    socket: ChannelCost

    @property
    def switch_ns(self) -> float:
        return self.pipe.hop_ns

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        p = self.pipe
        return (f"{p.describe()}; {self.socket.describe()} (a hop = block + wake-up + "
                f"switch) — medians of {p.reps} runs of {p.messages:,} {p.bytes}-byte "
                f"messages bounced between two processes pinned to CPU {p.cpu}")


HostCostsFn = Callable[[bool], HostCosts]


def measure(quick: bool = False) -> HostCosts:
    """Measure this host's pipe and socket costs (≈ 1 s; quick ≈ 0.2 s)."""
    from schedlab import _core

    n = 4_000 if quick else 20_000

    def one(kind: str) -> ChannelCost:
        return ChannelCost(**_core.host_channel_costs(kind, messages=n, bytes=100, reps=5))

    return HostCosts(pipe=one("pipe"), socket=one("socket"))


def apply(spec_text: str, costs: HostCosts) -> str:
    """A new spec text whose machine charges a pipe hop per context switch and whose pipes
    and sockets charge the measured call cost per read or write; the costs live in the
    spec, so a rerun of the saved spec pays exactly them.

    The probe measures 100-byte calls as a whole, so the per-byte cost is folded into the
    call (``byte_cost_ps`` = 0). A hop includes the wake-up and the sleep, so
    ``wakeup_ns`` stays 0 rather than being charged twice.
    """
    from schedlab.api import edit_spec

    def charge(spec: dict[str, Any]) -> None:
        sl = spec.setdefault("schedlab", {})
        sl.setdefault("machine", {})["context_switch_ns"] = round(costs.switch_ns)
        for key, c in (("pipes", costs.pipe), ("sockets", costs.socket)):
            for chan in (sl.get(key) or {}).values():
                chan["op_cost_ns"] = round(c.call_ns)
                chan["byte_cost_ps"] = 0

    return edit_spec(spec_text, charge)

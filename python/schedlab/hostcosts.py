"""Costs measured on this host, for the simulator's cost model.

The probes are Rust (``schedlab_host``, via ``_core.host_channel_costs``,
``_core.host_syscall_costs`` and ``_core.host_timer_latency``). The channel probe: two
processes pinned to one CPU bounce a message over two pipes — or two AF_UNIX stream
socketpairs, hackbench's default — as ``perf bench sched pipe`` does. It yields the cost of
one uncontended call and of one *hop* (block, wake-up and context switch). The kernel
probes time a sleep to an expiry already past, a futex wake with no waiter and a
fork + exit + wait, and the timer wake-up latency of an absolute 1 ms timer as cyclictest
measures it. :mod:`schedlab.hostprofile` turns them into the inline ``host`` machine
profile a spec carries — measured, not guessed.
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
class SyscallCost:
    """Medians (ns per operation) of ``reps`` runs, pinned to CPU ``cpu``."""

    sleep_setup_ns: float
    """``clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`` to an expiry already past."""
    sleep_blocks_per_call: float
    """Voluntary switches per such sleep: ≈ 0 if it returned without blocking."""
    futex_wake_ns: float
    """``FUTEX_WAKE_PRIVATE`` with no waiter."""
    fork_exit_wait_ns: float
    """fork, the child's ``_exit(0)``, the parent's ``waitpid``, on one CPU."""
    cpu: int
    calls: int
    forks: int
    reps: int
    forker_rss_kb: int = 0
    """Resident size of the process that forked (a fork copies its page tables)."""


@dataclass(frozen=True)
class TimerLatency:
    """Wake-up time − expiry (ns) of ``samples`` absolute sleeps every ``interval_ns``."""

    min_ns: int
    p50_ns: int
    p99_ns: int
    max_ns: int
    samples: int
    interval_ns: int
    policy: str
    """``fifo`` or ``other`` (SCHED_FIFO was refused: ``fifo_refused`` says why)."""
    priority: int
    fifo_refused: str = ""

    def describe(self) -> str:
        return (f"min {self.min_ns:,} ns, p50 {self.p50_ns:,} ns, p99 {self.p99_ns:,} ns, max "
                f"{self.max_ns:,} ns over {self.samples:,} wake-ups every "
                f"{self.interval_ns / 1000:g} µs at {self.policy_text}")

    @property
    def policy_text(self) -> str:
        return f"SCHED_FIFO {self.priority}" if self.policy == "fifo" else "SCHED_OTHER"


@dataclass(frozen=True)
class HostCosts:
    """This host's measured costs; a context switch is charged one pipe hop. The kernel
    probes (``syscalls``, ``timer``) are optional: without them a profile holds the
    channel and switch costs only."""

    pipe: ChannelCost
    socket: ChannelCost
    syscalls: SyscallCost | None = None
    timer: TimerLatency | None = None

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


def from_dict(data: dict[str, Any]) -> HostCosts:
    """:class:`HostCosts` from :meth:`HostCosts.as_dict`'s mapping."""
    syscalls, timer = data.get("syscalls"), data.get("timer")
    return HostCosts(pipe=ChannelCost(**data["pipe"]), socket=ChannelCost(**data["socket"]),
                     syscalls=SyscallCost(**syscalls) if syscalls is not None else None,
                     timer=TimerLatency(**timer) if timer is not None else None)


#: The timer probe's interval: cyclictest's default ``-i 1000`` (µs).
TIMER_INTERVAL_NS = 1_000_000
#: The timer probe's SCHED_FIFO priority (cyclictest ``-p 80``, as the cross-check runs it).
TIMER_PRIORITY = 80


def timer_samples(quick: bool) -> int:
    """Wake-ups the timer probe measures (one per 1 ms interval)."""
    return 100 if quick else 500


def measure(quick: bool = False) -> HostCosts:
    """Measure this host: channels (≈ 1 s; quick ≈ 0.2 s), the kernel paths (≈ 0.5 s) and
    the timer wake-up latency (0.5 s; quick 0.1 s)."""
    from schedlab import _core

    n = 4_000 if quick else 20_000

    def one(kind: str) -> ChannelCost:
        return ChannelCost(**_core.host_channel_costs(kind, messages=n, bytes=100, reps=5))

    calls, forks, reps = (500, 20, 3) if quick else (2_000, 100, 5)
    syscalls = SyscallCost(**_core.host_syscall_costs(calls=calls, forks=forks, reps=reps),
                           forker_rss_kb=_rss_kb())
    timer = TimerLatency(**_core.host_timer_latency(
        interval_ns=TIMER_INTERVAL_NS, samples=timer_samples(quick), priority=TIMER_PRIORITY))
    return HostCosts(pipe=one("pipe"), socket=one("socket"), syscalls=syscalls, timer=timer)


def _rss_kb() -> int:
    """This process's resident set size (kB), 0 where /proc does not say."""
    try:
        for line in open("/proc/self/status", encoding="ascii", errors="replace"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def apply(spec_text: str, costs: HostCosts) -> str:
    """A new spec text whose machine profile is this host's measured costs: a pipe hop per
    context switch, the measured call cost per pipe or socket read or write
    (:func:`schedlab.hostprofile.profile` with :data:`~schedlab.hostprofile.COST_KEYS`:
    the spec keeps its own kernel model). The costs live in the spec, so a rerun of the
    saved spec pays exactly them.

    The probe measures 100-byte calls as a whole, so the per-byte cost is folded into the
    call (``byte_cost_ps`` = 0). A hop includes the wake-up and the sleep, so
    ``wakeup_ns`` stays 0 rather than being charged twice.
    """
    from schedlab import hostprofile

    return hostprofile.apply(spec_text, costs, keys=hostprofile.COST_KEYS)

"""The ``host`` machine profile: this machine's kernel, measured, read and fitted.

A spec's ``schedlab.machine.profile`` is either a built-in profile's name or an inline
profile object ``{"name", "about", "machine": {…}, "provenance": {…}}`` (docs/spec.md,
"The host profile"). This module builds the inline profile of the machine it runs on from
:mod:`schedlab.hostcosts`'s measurements and from what the kernel says about itself, and
records for every key how its value was obtained (``provenance``):

- ``measured``: by a probe, with the probe and its median;
- ``read``: from a file of the running kernel (``/proc/config.gz``, ``/proc/cmdline``, …);
- ``source``: a default cited from the kernel's source;
- ``fitted``: the one free parameter, ``kernel.timer_irq_ns``, fitted so that the simulated
  cyclictest's minimum latency at idle equals the measured one.

The core applies a profile's machine keys first and the spec's own machine keys over them,
so a spec carrying the inline profile reruns with exactly these numbers on any machine.
``"profile": "host"`` in a user's spec is resolved here, before the core sees the spec
(:func:`resolve`), with one measurement per process.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import _core
from schedlab.hostcosts import HostCosts, TimerLatency
from schedlab.preemption import PREEMPT_MODELS

PROFILE_NAME = "host"

#: Linux's default timer slack of a task (``init_task.timer_slack_ns``, 50 µs, since 2.6.28:
#: "hrtimer: add a hrtimer_start_range() function", A. van de Ven, 2008; prctl(2),
#: PR_SET_TIMERSLACK). Since Linux 6.7 real-time tasks get none, as the model has it.
DEFAULT_TIMER_SLACK_NS = 50_000
TIMER_SLACK_SOURCE = ("init/init_task.c: timer_slack_ns = 50000 (50 µs), the default since "
                      "Linux 2.6.28; prctl(2) PR_SET_TIMERSLACK")

#: The machine keys of a profile that only the cost probes set (the report's host-cost
#: runs charge these and keep the spec's own kernel model).
COST_KEYS = ("context_switch_ns", "channel_costs")

#: Loops of the simulated cyclictest the timer fit runs (idle: every cycle is alike).
FIT_LOOPS = 50


# --------------------------------------------------------------------------------------
# What the running kernel says about itself
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A setting read from the running kernel: its value and where it was read."""

    value: Any
    source: str
    """The file (and the line or key) the value came from."""
    note: str = ""


@dataclass(frozen=True)
class KernelFacts:
    """What this host's kernel says about its preemption model, tick and HZ (None: no
    file said)."""

    preempt: Fact | None
    tick: Fact | None
    hz: Fact | None
    release: str
    timers: Fact | None = None


def _read_text(path: Path) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                return f.read()
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, EOFError):
        return None


def _kernel_config(root: Path, release: str) -> tuple[dict[str, str], str] | None:
    """The running kernel's build configuration (``CONFIG_X`` → value, ``n`` for "is not
    set") and the file it came from."""
    for path in (root / "proc/config.gz", root / f"boot/config-{release}"):
        text = _read_text(path)
        if text is None:
            continue
        config: dict[str, str] = {}
        for line in text.splitlines():
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
            if m:
                config[m.group(1)] = m.group(2).strip('"')
            else:
                m = re.match(r"^# (CONFIG_\w+) is not set", line)
                if m:
                    config[m.group(1)] = "n"
        return config, "/" + str(path.relative_to(root))
    return None


def _cmdline(root: Path) -> dict[str, str]:
    text = _read_text(root / "proc/cmdline") or ""
    out: dict[str, str] = {}
    for word in text.split():
        if word == "--":  # what follows is init's
            break
        key, _, value = word.partition("=")
        out.setdefault(key, value)
    return out


def _preempt(root: Path, config: tuple[dict[str, str], str] | None) -> Fact | None:
    """The preemption model in force: debugfs's ``sched/preempt`` (the active one in
    parentheses), else the boot command line's ``preempt=``, else the build's choice
    (with CONFIG_PREEMPT_DYNAMIC, ``preempt_dynamic_init`` in kernel/sched/core.c boots the
    model CONFIG_PREEMPT_NONE / _VOLUNTARY / PREEMPT names)."""
    debugfs = root / "sys/kernel/debug/sched/preempt"
    text = _read_text(debugfs)
    if text:
        m = re.search(r"\((\w+)\)", text)
        if m:
            return _preempt_fact(m.group(1), "/sys/kernel/debug/sched/preempt")
    boot = _cmdline(root).get("preempt")
    if boot:
        return _preempt_fact(boot, f"/proc/cmdline: preempt={boot}")
    if config is None:
        return None
    cfg, where = config
    if cfg.get("CONFIG_PREEMPT_RT") == "y":
        return Fact("rt", f"{where}: CONFIG_PREEMPT_RT=y")
    for key, model in (("CONFIG_PREEMPT_NONE", "none"), ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
                       ("CONFIG_PREEMPT_LAZY", "lazy"), ("CONFIG_PREEMPT", "full")):
        if cfg.get(key) == "y":
            dynamic = cfg.get("CONFIG_PREEMPT_DYNAMIC") == "y"
            how = (" with CONFIG_PREEMPT_DYNAMIC=y and no preempt= on the command line: the "
                   "model kernel/sched/core.c's preempt_dynamic_init boots") if dynamic else ""
            return _preempt_fact(model, f"{where}: {key}=y{how}")
    return None


def _preempt_fact(model: str, source: str) -> Fact:
    if model in PREEMPT_MODELS:
        return Fact(model, source)
    return Fact(None, source, note=f"preempt {model!r} is not one of the simulator's models "
                                   f"({', '.join(PREEMPT_MODELS)}); the default is kept")


def _tick(root: Path, config: tuple[dict[str, str], str] | None) -> Fact | None:
    """The tick mode: ``nohz_full`` if every online CPU is in
    /sys/devices/system/cpu/nohz_full, ``periodic`` if the command line says ``nohz=off``
    or the build is CONFIG_HZ_PERIODIC, else ``nohz_idle`` for a CONFIG_NO_HZ_IDLE or
    _FULL build (NO_HZ_FULL without nohz_full= CPUs stops only idle ticks)."""
    full = (_read_text(root / "sys/devices/system/cpu/nohz_full") or "").strip()
    online = (_read_text(root / "sys/devices/system/cpu/online") or "").strip()
    if full and full != "(null)":
        if full == online:
            return Fact("nohz_full", "/sys/devices/system/cpu/nohz_full")
        return Fact("nohz_idle", "/sys/devices/system/cpu/nohz_full",
                    note=f"nohz_full covers CPUs {full} of {online}; the model's tick mode is "
                         "one for the whole machine")
    if _cmdline(root).get("nohz") == "off":
        return Fact("periodic", "/proc/cmdline: nohz=off")
    if config is None:
        return None
    cfg, where = config
    if cfg.get("CONFIG_HZ_PERIODIC") == "y":
        return Fact("periodic", f"{where}: CONFIG_HZ_PERIODIC=y")
    for key in ("CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ_FULL"):
        if cfg.get(key) == "y":
            return Fact("nohz_idle", f"{where}: {key}=y, no nohz_full CPUs")
    return None


def _hz(config: tuple[dict[str, str], str] | None) -> Fact | None:
    if config is None:
        return None
    cfg, where = config
    value = cfg.get("CONFIG_HZ", "")
    if value.isdigit() and int(value) in _core.HZ_CHOICES:
        return Fact(int(value), f"{where}: CONFIG_HZ={value}")
    return None


def _timers(config: tuple[dict[str, str], str] | None) -> Fact | None:
    """``hrtimer`` for a CONFIG_HIGH_RES_TIMERS build; ``jiffy`` without it (hrtimers then
    expire from the tick, as the model's ``jiffy`` rule has it)."""
    if config is None or "CONFIG_HIGH_RES_TIMERS" not in config[0]:
        return None
    cfg, where = config
    value = cfg["CONFIG_HIGH_RES_TIMERS"]
    return Fact("hrtimer" if value == "y" else "jiffy", f"{where}: CONFIG_HIGH_RES_TIMERS={value}")


def read_kernel(root: Path = Path("/")) -> KernelFacts:
    """What the kernel under ``root`` (``/``: this host's) says about itself."""
    release = os.uname().release if root == Path("/") else \
        (_read_text(root / "proc/sys/kernel/osrelease") or "").strip()
    config = _kernel_config(root, release)
    return KernelFacts(preempt=_preempt(root, config), tick=_tick(root, config),
                       hz=_hz(config), release=release, timers=_timers(config))


# --------------------------------------------------------------------------------------
# The profile
# --------------------------------------------------------------------------------------

#: A simulator run of a spec text: returns the result's JSON (``api.simulate(...).json``).
SimulateFn = Callable[[str], Mapping[str, Any]]


def _simulate(text: str) -> Mapping[str, Any]:
    from schedlab import api

    return api.simulate(text, scheduler=FIT_SCHEDULER).json


#: The policy the fit runs under (the timer thread is SCHED_FIFO or an idle machine's only
#: task: the fair class's choice does not change it).
FIT_SCHEDULER = "linux-eevdf"


def cyclictest_spec(timer: TimerLatency, loops: int, cpus: int, load_groups: int = 0,
                    load_loops: int = 0) -> str:
    """The simulator's cyclictest as the timer probe and the cross-check run it: one
    thread, the probe's interval and policy, ``loops`` cycles; at idle, or under a
    ``hackbench -g load_groups`` load (``load_loops`` > 0: rounds of ``-l load_loops``
    forked anew, as a shell loop runs it; 0: one round that never ends)."""
    from schedlab import api

    opts = [("threads", "1"), ("interval_us", str(max(1, timer.interval_ns // 1000))),
            ("loops", str(loops)), ("cpus", str(cpus)), ("policy", timer.policy)]
    if timer.policy == "fifo":
        opts.append(("priority", str(timer.priority)))
    if load_groups > 0:
        opts += [("load", "hackbench"), ("load_groups", str(load_groups)),
                 ("load_loops", str(load_loops))]
    return api.generate_text("cyclictest", opts)


def host_cpus() -> int:
    """The CPUs this process may run on (the simulated machine's size for the host)."""
    return max(1, min(len(os.sched_getaffinity(0)), 256))


def with_profile(spec_text: str, profile: Mapping[str, Any]) -> str:
    """``spec_text`` with ``profile`` as its ``schedlab.machine.profile``, and without the
    spec's own settings of the keys the profile sets (a spec's machine keys override its
    profile's; generators write channel costs and HZ of their own), so the profile's
    numbers are the ones that apply."""
    from schedlab import api

    machine_keys = set(profile.get("machine", {}))

    def edit(spec: dict[str, Any]) -> None:
        sl = spec.setdefault("schedlab", {})
        machine = sl.setdefault("machine", {})
        for key in machine_keys - {"channel_costs", "kernel"}:
            machine.pop(key, None)
        if "kernel" in machine_keys and isinstance(machine.get("kernel"), dict):
            for key in profile["machine"]["kernel"]:
                machine["kernel"].pop(key, None)
            if not machine["kernel"]:
                machine.pop("kernel")
        if "channel_costs" in machine_keys:
            for key in ("pipes", "sockets"):
                for chan in (sl.get(key) or {}).values():
                    if isinstance(chan, dict):
                        chan.pop("op_cost_ns", None)
                        chan.pop("byte_cost_ps", None)
        machine["profile"] = dict(profile)

    return api.edit_spec(spec_text, edit)


def _measured(probe: str, **figures: Any) -> dict[str, Any]:
    return {"how": "measured", "probe": probe, **figures}


def _cost_machine(costs: HostCosts) -> tuple[dict[str, Any], dict[str, Any]]:
    """The switch and channel keys, and their provenance."""
    machine: dict[str, Any] = {
        "context_switch_ns": round(costs.switch_ns),
        "channel_costs": {
            "pipe": {"op_cost_ns": round(costs.pipe.call_ns), "byte_cost_ps": 0},
            "socket": {"op_cost_ns": round(costs.socket.call_ns), "byte_cost_ps": 0},
        },
    }
    p = costs.pipe
    runs = f"median of {p.reps} runs of {p.messages:,} {p.bytes}-byte messages on CPU {p.cpu}"
    prov: dict[str, Any] = {
        "context_switch_ns": _measured(
            "pipe ping-pong (schedlab_host::probe): one hop = block + wake-up + switch",
            median_ns=p.hop_ns, round_trip_ns=p.round_trip_ns, runs=runs),
        "channel_costs": {
            kind: _measured(
                f"{kind} self-loop: one uncontended {c.bytes}-byte read or write",
                median_ns=c.call_ns,
                note="the per-byte cost is folded into the call (byte_cost_ps = 0)")
            for kind, c in (("pipe", costs.pipe), ("socket", costs.socket))},
    }
    return machine, prov


def profile(costs: HostCosts, *, keys: Sequence[str] | None = None,
            facts: KernelFacts | None = None, simulate: SimulateFn | None = None,
            cpus: int | None = None) -> dict[str, Any]:
    """The inline ``host`` profile from ``costs`` (and ``facts``, read from this kernel if
    not given). ``keys``: only these machine keys (e.g. :data:`COST_KEYS`); without the
    kernel probes in ``costs`` only the switch and channel keys can be given.
    ``simulate`` runs the timer fit (the simulator itself by default)."""
    machine, prov = _cost_machine(costs)
    wanted = set(keys) if keys is not None else None
    full = wanted is None or bool(wanted - set(COST_KEYS))
    if full and costs.syscalls is not None:
        _syscall_keys(costs, machine, prov)
    if full and (wanted is None or "kernel" in wanted or "hz" in wanted):
        _kernel_keys(costs, facts or read_kernel(), machine, prov,
                     simulate or _simulate, cpus or host_cpus())
    if wanted is not None:
        machine = {k: v for k, v in machine.items() if k in wanted}
        prov = {k: v for k, v in prov.items() if k in wanted}
    name = PROFILE_NAME if wanted is None else f"{PROFILE_NAME}-costs"
    about = ("this host's kernel: costs measured, settings read, timer interrupt fitted"
             if wanted is None else
             f"this host's measured {', '.join(sorted(machine))} (the host profile's keys)")
    return {"name": name, "about": about, "machine": machine, "provenance": prov}


def _syscall_keys(costs: HostCosts, machine: dict[str, Any], prov: dict[str, Any]) -> None:
    s = costs.syscalls
    assert s is not None
    runs = f"median of {s.reps} runs on CPU {s.cpu}"
    machine["sleep_ns"] = round(s.sleep_setup_ns)
    prov["sleep_ns"] = _measured(
        "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to an expiry already past "
        "(schedlab_host::kernel_costs)", median_ns=s.sleep_setup_ns,
        blocks_per_call=s.sleep_blocks_per_call, runs=f"{runs}, {s.calls:,} calls each",
        note="the expired timer is armed and fires at once: the figure includes that "
             "timer's interrupt, which a sleep to a future expiry pays at its expiry "
             "(kernel.timer_irq_ns) instead" + (
                 "; the caller blocked in most calls, so it also includes a block and a "
                 "wake-up" if s.sleep_blocks_per_call >= 0.5 else ""))
    switch = machine["context_switch_ns"]
    machine["fork_ns"] = max(0, round(s.fork_exit_wait_ns) - 2 * switch)
    machine["exit_ns"] = 0
    prov["fork_ns"] = _measured(
        "fork + the child's _exit + the parent's waitpid, both on one CPU "
        "(schedlab_host::kernel_costs)", median_ns=s.fork_exit_wait_ns,
        runs=f"{runs}, {s.forks:,} forks each", forker_rss_kb=s.forker_rss_kb,
        note="fork, exit and wait charged together to fork_ns, less the two context "
             f"switches of that path (parent → child → parent: 2 × {switch:,} ns, "
             "which the simulator charges as context_switch_ns); a fork copies the forking "
             "process's page tables, so the figure grows with its size")
    prov["exit_ns"] = {"how": "measured", "probe": "in fork_ns",
                       "note": "0: the child's exit is measured within fork_ns"}
    machine["wakeup_ns"] = 0
    prov["wakeup_ns"] = _measured(
        "FUTEX_WAKE_PRIVATE with no waiter (schedlab_host::kernel_costs), for reference",
        futex_wake_no_waiter_ns=s.futex_wake_ns,
        note="0: the context_switch_ns charged when the woken task runs is a pipe hop, which "
             "already includes the waker's try_to_wake_up; charging a wake-up as well would "
             "count it twice")


def _kernel_keys(costs: HostCosts, facts: KernelFacts, machine: dict[str, Any],
                 prov: dict[str, Any], simulate: SimulateFn, cpus: int) -> None:
    kernel: dict[str, Any] = {}
    kprov: dict[str, Any] = {}
    if facts.hz is not None:
        machine["hz"] = facts.hz.value
        prov["hz"] = {"how": "read", "from": facts.hz.source}
    for key, fact in (("preempt", facts.preempt), ("tick", facts.tick),
                      ("timers", facts.timers)):
        if fact is None:
            kprov[key] = {"how": "unknown", "note": "no file of this kernel says; the "
                                                    "simulator's default is kept"}
        elif fact.value is None:
            kprov[key] = {"how": "read", "from": fact.source, "note": fact.note}
        else:
            kernel[key] = fact.value
            kprov[key] = {"how": "read", "from": fact.source,
                          **({"note": fact.note} if fact.note else {})}
    kernel["timer_slack_ns"] = DEFAULT_TIMER_SLACK_NS
    kprov["timer_slack_ns"] = {"how": "source", "from": TIMER_SLACK_SOURCE}
    machine["kernel"] = kernel
    prov["kernel"] = kprov
    if costs.timer is not None:
        fitted, simulated_min = fit_timer_irq(machine, costs.timer, simulate, cpus)
        kernel["timer_irq_ns"] = fitted
        t = costs.timer
        kprov["timer_irq_ns"] = {
            "how": "fitted", "to": "the measured minimum timer latency at idle",
            "measured_min_ns": t.min_ns,
            "probe": f"absolute {t.interval_ns / 1000:g} µs timer, {t.samples} wake-ups at "
                     f"{t.policy_text} (schedlab_host::kernel_costs::timer_latency)",
            "simulated_min_ns_without": simulated_min,
            "note": "measured min − the simulated cyclictest's min at idle with "
                    "timer_irq_ns = 0, never negative"}


def fit_timer_irq(machine: Mapping[str, Any], timer: TimerLatency, simulate: SimulateFn,
                  cpus: int) -> tuple[int, int]:
    """``kernel.timer_irq_ns`` such that the simulated cyclictest at idle (under
    ``machine`` with timer_irq_ns 0) has the measured minimum latency; and that run's own
    minimum. Never negative."""
    base = json.loads(json.dumps(dict(machine)))
    base.setdefault("kernel", {})["timer_irq_ns"] = 0
    probe_profile = {"name": "host-fit", "about": "the host profile with timer_irq_ns 0",
                     "machine": base}
    text = with_profile(cyclictest_spec(timer, FIT_LOOPS, cpus), probe_profile)
    stats = headline_stats(simulate(text))
    simulated_min = int(stats["min"])
    return max(0, timer.min_ns - simulated_min), simulated_min


def headline_stats(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The headline's statistics (ns) of a result."""
    return result["summary"]["headline"]["stats_ns"]


def apply(spec_text: str, costs: HostCosts, *, keys: Sequence[str] | None = None) -> str:
    """``spec_text`` with the inline host profile built from ``costs`` (only ``keys``, if
    given) as its machine profile."""
    return with_profile(spec_text, profile(costs, keys=keys))


# --------------------------------------------------------------------------------------
# "profile": "host" in a user's spec
# --------------------------------------------------------------------------------------


@functools.cache
def measured_profile() -> dict[str, Any]:
    """This host's profile, measured once per process."""
    from schedlab import hostcosts

    return profile(hostcosts.measure())


def names_host(spec_text: str) -> bool:
    """Whether ``spec_text`` may name the host profile (a cheap test before parsing)."""
    return '"profile"' in spec_text and f'"{PROFILE_NAME}"' in spec_text


def resolve(spec_text: str, measure: Callable[[], Mapping[str, Any]] | None = None) -> str:
    """``spec_text`` with ``"profile": "host"`` replaced by this host's inline profile
    (``measure()``, by default :func:`measured_profile`: once per process); any other spec
    unchanged, byte for byte."""
    if not names_host(spec_text):
        return spec_text
    from schedlab import api

    view = api.spec_view(spec_text)
    sl = view.get("schedlab") if isinstance(view, dict) else None
    machine = sl.get("machine") if isinstance(sl, dict) else None
    if not isinstance(machine, dict) or machine.get("profile") != PROFILE_NAME:
        return spec_text
    host = dict((measure or measured_profile)())

    def edit(spec: dict[str, Any]) -> None:
        spec["schedlab"]["machine"]["profile"] = host

    return api.edit_spec(spec_text, edit)

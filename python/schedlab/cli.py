"""The ``schedlab`` command line.

Exit status: 0 success; 1 a run failed for another reason than its input; 2 bad input (a
broken spec, an unknown scheduler or tunable, a bad argument, a missing file); 70 an
internal error (a bug: please report it). Every error is one line on stderr,
``error: <where>: <what>``; set ``SCHEDLAB_DEBUG=1`` for the Python traceback.

Output files (``--trace``, ``--parquet``, ``--output``) are written under temporary names
and renamed into place only when the whole command has succeeded, so a failed run never
clobbers an earlier result.

Durations take a unit: ``10s``, ``500ms``, ``20us``, ``1000ns``, ``2min``; a plain number is
seconds (as rt-app's ``global.duration``; times *inside* a spec are rt-app microseconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedlab import _core, api, hostprofile, runner
from schedlab._core import SimError, SpecError
from schedlab.result import Result, _tmp_path, fmt_ns, replace_named, write_named

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERNAL = 70  # EX_SOFTWARE

#: `schedlab cost --decisions`: a bound that keeps one point within minutes.
MAX_DECISIONS = 1_000_000_000


class CliError(Exception):
    """An error reported as one line, ``error: <message>``, with an exit status."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


# --- argument types ------------------------------------------------------------------


class DurationType(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            ns = api.parse_duration(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)
        assert ns is not None
        return ns


class NameValueType(click.ParamType):
    name = "name=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        name, sep, val = str(value).partition("=")
        if not sep or not name.strip():
            self.fail(f"expected NAME=VALUE, got {value!r}", param, ctx)
        return name.strip(), val.strip()


class SeedType(click.ParamType):
    name = "seed"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            seed = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not an integer", param, ctx)
        if not 0 <= seed < 2**64:
            self.fail(f"{value!r} is not in 0..2^64-1", param, ctx)
        return seed


class TickRateType(click.ParamType):
    """A tick rate. The core checks which rates it models (and says so); this only keeps
    numbers it could not even be handed from reaching it."""

    name = "hz"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            hz = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not an integer", param, ctx)
        if not 1 <= hz <= api.U32_MAX:
            self.fail(f"{hz} is not a tick rate (expected 100, 128, 250, 300 or 1000)", param, ctx)
        return hz


class ByteSizeType(click.ParamType):
    """A size in bytes: a number with an optional binary unit (K, M, G, T; `KiB` and `KB`
    read alike), e.g. `512M` or `8GiB`."""

    name = "size"
    UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        digits = text.rstrip("KMGT")
        unit = text[len(digits):]
        try:
            n = float(digits) * self.UNITS[unit]
        except (KeyError, ValueError):
            self.fail(f"{value!r} is not a size (e.g. 512M, 8G)", param, ctx)
        if not 1 <= n <= api.U64_MAX:
            self.fail(f"{value!r} is not a size between 1 byte and 16 EiB", param, ctx)
        return int(n)


class OutputPathType(click.Path):
    """A file or directory a command writes: an empty name is refused (it would write
    nothing and say nothing)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("empty file name", param, ctx)
        return super().convert(value, param, ctx)


DURATION = DurationType()
SEED = SeedType()
NAME_VALUE = NameValueType()
TICK_RATE = TickRateType()
BYTE_SIZE = ByteSizeType()
#: Machine sizes the simulator models (its CpuMask's width).
CPUS = click.IntRange(1, _core.MAX_CPUS)
OUTPUT_FILE = OutputPathType(dir_okay=False)
OUTPUT_DIR = OutputPathType(file_okay=False)


def sim_options(f: F) -> F:
    """Options shared by ``run`` and ``compare``."""
    options = [
        click.option("--cpus", type=CPUS, metavar="N",
                     help="Number of CPUs (overrides the spec's machine)."),
        click.option("--hz", type=TICK_RATE, metavar="HZ",
                     help="Tick rate: 100, 128, 250, 300 or 1000 (overrides the spec's machine)."),
        click.option("--seed", type=SEED, metavar="K",
                     help="PRNG seed (overrides the spec's; default 1)."),
        click.option("--duration", type=DURATION, metavar="D",
                     help="Simulated time to cover: 10s, 500ms, 20us, 1000ns (plain = s)."),
        click.option("-p", "--param", "params", type=NAME_VALUE, multiple=True,
                     metavar="NAME=VALUE",
                     help="Scheduler tunable (repeatable; see `schedlab schedulers`)."),
        click.option("--check", is_flag=True,
                     help="Check the engine's invariants after every scheduler hook."),
        click.option("--memory-budget", type=BYTE_SIZE, metavar="SIZE",
                     help="Memory a run may hold, e.g. 8G (default 4G): past it the run "
                          "stops with a partial result and exit status 1."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print the result JSON instead of tables."),
        click.option("--parquet", type=OUTPUT_DIR, metavar="DIR",
                     help="Write tasks/samples/cpus Parquet files and result.json to DIR."),
        click.option("-o", "--output", type=OUTPUT_FILE, metavar="FILE",
                     help="Also write the result JSON to FILE."),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


# --- helpers -------------------------------------------------------------------------


def _stdout() -> Console:
    c = Console(highlight=False)
    if not c.is_terminal:
        c = Console(highlight=False, width=200)
    return c


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


@contextlib.contextmanager
def _busy(message: str) -> Iterator[None]:
    """A spinner on stderr while something runs (only on a terminal)."""
    err = _stderr()
    if err.is_terminal:
        with err.status(message):
            yield
    else:
        yield


class Outputs:
    """Files a command writes, staged under temporary names and renamed into place by
    :meth:`commit` (or removed by :meth:`discard`). Errors name the file the user gave,
    never its temporary stand-in."""

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []
        self._made: list[Path] = []

    def make_dir(self, directory: Path) -> None:
        """Create ``directory`` (and missing parents); :meth:`discard` removes the ones it
        created if they are still empty."""
        missing = [d for d in (directory, *directory.parents) if not d.exists()]
        directory.mkdir(parents=True, exist_ok=True)
        self._made += reversed(missing)

    def stage(self, final: str | os.PathLike[str]) -> Path:
        final_p = Path(final)
        parent = final_p.parent
        if not parent.is_dir():
            raise CliError(f"{final_p}: directory {parent} does not exist")
        try:
            tmp = Path(_tmp_path(parent, final_p.name))
        except OSError as e:
            raise OSError(e.errno, e.strerror or str(e), str(final_p)) from None
        self._staged.append((tmp, final_p))
        return tmp

    def write_text(self, final: str | os.PathLike[str], text: str) -> None:
        """Stage ``final`` and write ``text`` to it (UTF-8)."""
        write_named(Path(final), self.stage(final),
                    lambda p: p.write_text(text, encoding="utf-8"))

    def name_files(self, text: str) -> str:
        """``text`` with every staged temporary name replaced by its final name."""
        for tmp, final in self._staged:
            text = text.replace(str(tmp), str(final))
        return text

    def commit(self) -> None:
        while self._staged:
            tmp, final = self._staged[0]
            replace_named(tmp, final)
            self._staged.pop(0)

    def discard(self) -> None:
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        self._staged.clear()
        for d in reversed(self._made):
            with contextlib.suppress(OSError):
                d.rmdir()
        self._made.clear()


@contextlib.contextmanager
def _outputs() -> Iterator[Outputs]:
    out = Outputs()
    try:
        yield out
        out.commit()
    except BaseException as e:
        if isinstance(e, SimError):
            e.message = out.name_files(e.message)
        elif isinstance(e, OSError) and isinstance(e.filename, str):
            e.filename = out.name_files(e.filename)
        out.discard()
        raise


def _write_parquet(result: Result, directory: str | os.PathLike[str], outs: Outputs) -> None:
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CliError(f"{d}: not a directory")
    outs.make_dir(d)
    result.to_parquet(d, stage=outs.stage)


def _check_outputs(inputs: Sequence[str], outputs: dict[str, str | None],
                   parquet: str | None = None, parquet_names: Sequence[str] = ("",)) -> None:
    """Refuse two outputs that name the same file (one would silently replace the other)
    and an output that names an input (it would be replaced by the output)."""
    files = {name: path for name, path in outputs.items() if path}
    if parquet:
        for sub in parquet_names:
            for f in Result.PARQUET_FILES:
                files[f"--parquet {Path(parquet, sub, f)}"] = str(Path(parquet, sub, f))
    seen: dict[str, str] = {}
    for spec in inputs:
        if spec != "-":
            seen[os.path.realpath(spec)] = f"the spec {spec}"
    for name, path in files.items():
        key = os.path.realpath(path)
        if key in seen:
            raise CliError(f"{name.split()[0]} {path}: the same file as {seen[key]}; give "
                           "each output a file of its own")
        seen[key] = name.split()[0]


def _load(spec: str) -> api.SpecSource:
    return api.load_spec(spec)


def _split_schedulers(values: Sequence[str]) -> list[str]:
    names = [s.strip() for v in values for s in v.split(",") if s.strip()]
    return list(dict.fromkeys(names))


def _policy(t: dict[str, Any]) -> str:
    pol = str(t.get("policy", "?")).removeprefix("SCHED_")
    if pol in ("FIFO", "RR"):
        return f"{pol} {t.get('priority')}"
    if pol in ("OTHER", "NORMAL", "BATCH", "IDLE"):
        return f"{pol} nice {t.get('nice', t.get('priority'))}"
    return pol


def _stat(t: dict[str, Any], metric: str, key: str) -> Any:
    s = t.get(metric) or {}
    return s.get(key)


def _headline(r: Result) -> str:
    h = r.headline
    if not h:
        return "–"
    return f"{h.get('name')} = {_headline_value(h)}"


def _headline_value(h: dict[str, Any] | None) -> str:
    if not h or h.get("value") is None:
        return "–"
    v, unit = h["value"], h.get("unit") or ""
    scale = {"s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1.0}.get(unit)
    if isinstance(v, (int, float)) and scale is not None:
        return fmt_ns(v * scale)
    text = f"{v:.4g}" if isinstance(v, float) else str(v)
    return f"{text} {unit}".strip()


def _task_table(r: Result, rows: int) -> Table:
    tasks = r.json.get("tasks", [])
    t = Table(title=f"{escape(r.scheduler)} — {len(tasks)} tasks", title_justify="left")
    for name, justify in [
        ("task", "left"), ("policy", "left"), ("cpu", "right"), ("wait", "right"),
        ("act", "right"), ("wake mean", "right"), ("wake p99", "right"),
        ("wake max", "right"), ("resp p99", "right"), ("misses", "right"),
    ]:
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    shown = tasks if rows == 0 else tasks[:rows]
    for task in shown:
        t.add_row(
            escape(str(task.get("name"))),
            _policy(task),
            fmt_ns(task.get("cpu_ns")),
            fmt_ns(task.get("wait_ns")),
            str(task.get("activations", "–")),
            fmt_ns(_stat(task, "wakeup_latency_ns", "mean")),
            fmt_ns(_stat(task, "wakeup_latency_ns", "p99")),
            fmt_ns(_stat(task, "wakeup_latency_ns", "max")),
            fmt_ns(_stat(task, "response_ns", "p99")),
            str(task.get("deadline_misses", "–")),
        )
    if len(shown) < len(tasks):
        t.caption = f"… {len(tasks) - len(shown)} more tasks (--rows 0 shows all)"
    return t


def _print_run(out: Console, r: Result, rows: int, cut: bool = False) -> None:
    """The summary of one run; ``cut``: the command line gave the run a duration."""
    out.print(_task_table(r, rows))
    run = r.run
    out.print(f"headline: {escape(_headline(r))}")
    ms = r.makespan_ns
    blocked = _blocked(r)
    if ms is not None:
        out.print(f"makespan: {fmt_ns(ms)}")
    elif blocked:
        out.print("makespan: – (not every task exited)")
    else:
        out.print("makespan: – (the workload does not end)")
    if blocked:
        out.print(f"[bold]blocked at end: {_blocked_text(r, cut)}[/bold]")
    cpus = r.json.get("cpus", [])
    if cpus:
        busy = [
            f"{c.get('cpu')}:{100 * c['busy_ns'] / max(1, c['busy_ns'] + c['idle_ns']):.0f}%"
            for c in cpus[:32]
            if isinstance(c.get("busy_ns"), int) and isinstance(c.get("idle_ns"), int)
        ]
        out.print("cpu busy: " + " ".join(busy) + (" …" if len(cpus) > 32 else ""))
    io = (r.json.get("summary") or {}).get("io")
    if io:
        out.print("io: " + _io_text(io))
    params = run.get("params") or {}
    ptxt = " ".join(f"{k}={v}" for k, v in params.items())
    for note in run.get("notes") or []:
        out.print(f"note: {escape(note)}")
    out.print(
        f"[dim]{escape(r.scheduler)}{' ' + escape(ptxt) if ptxt else ''} · seed {run.get('seed')}"
        f" · {run.get('cpus')} cpus · HZ {run.get('hz')}{escape(_kernel_text(run))}"
        f" · {'ran' if run.get('engine') == 'host' else 'simulated'} {fmt_ns(run.get('sim_ns'))}"
        f" · {run.get('events')} events in {run.get('wall_s', 0):.3f} s[/dim]"
    )


def _kernel_text(run: Mapping[str, Any]) -> str:
    """The kernel model in a run's footer: its profile, preemption model and timers (nothing
    for a result without ``run.kernel``)."""
    k = run.get("kernel")
    if not isinstance(k, Mapping):
        return ""
    profile = f" · profile {k.get('profile')}" if k.get("profile") else ""
    timers, tick = k.get("timers"), k.get("tick")
    return f"{profile} · preempt {k.get('preempt')} · {timers} timers · tick {tick}"


def _blocked(r: Result) -> int:
    """Tasks still blocked when the run stopped (the core's ``summary.blocked_at_end``)."""
    n = r.summary.get("blocked_at_end")
    return n if isinstance(n, int) else 0


def _blocked_text(r: Result, cut: bool) -> str:
    n = _blocked(r)
    tasks = "task" if n == 1 else "tasks"
    at = fmt_ns(r.run.get("sim_ns"))
    if cut:
        return f"{n} {tasks} still blocked when --duration ended the run at {at}"
    return (f"{n} {tasks} still blocked when the run stopped at {at} (a deadlock if the "
            "workload has no duration)")


def _compare_table(results: list[Result]) -> Table:
    t = Table()
    show_blocked = any(_blocked(r) for r in results)
    columns = [
        ("scheduler", "left"), ("headline", "right"), ("makespan", "right"),
        ("wake mean", "right"), ("wake p99", "right"), ("switches", "right"),
        ("migrations", "right"), ("misses", "right"),
    ]
    if show_blocked:
        columns.append(("blocked at end", "right"))
    for name, justify in columns:
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in results:
        w = r.summary.get("wakeup_latency_ns") or {}
        totals = r.totals
        row = [
            escape(r.scheduler),
            _headline_value(r.headline),
            fmt_ns(r.makespan_ns),
            fmt_ns(w.get("mean")),
            fmt_ns(w.get("p99")),
            str(totals["switches"]),
            str(totals["migrations"]),
            str(totals["deadline_misses"]),
        ]
        if show_blocked:
            row.append(str(_blocked(r)))
        t.add_row(*row)
    captions = []
    names = {r.headline.get("name") for r in results if r.headline}
    if len(names) == 1:
        captions.append(f"headline: {escape(str(names.pop()))}")
    if show_blocked:
        captions.append("blocked at end: tasks still blocked when the run stopped (a "
                        "deadlock if the workload has no duration)")
    if captions:
        t.caption = "\n".join(captions)
    return t


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


# --- commands ------------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.version(), "-V", "--version", prog_name="schedlab")
def cli() -> None:
    """schedlab — a scheduler laboratory: one workload spec, many CPU schedulers, a
    deterministic simulator, one result schema.

    SPEC arguments are rt-app JSON files (a superset); `-` reads standard input.
    Exit status: 0 ok, 1 run failed, 2 bad input, 70 internal error.
    """


@cli.command()
@click.argument("spec")
@click.option("-s", "--scheduler", metavar="NAME",
              help="CPU scheduler (default: the spec's choice; see `schedlab schedulers`).")
@sim_options
@click.option("--trace", type=OUTPUT_FILE, metavar="FILE",
              help="Write an ftrace-format trace (Perfetto loads it).")
@click.option("--samples", "samples_file", type=OUTPUT_FILE, metavar="FILE",
              help="Stream every activation's sample to FILE (Arrow IPC) instead of keeping "
                   "them in memory.")
@click.option("--rows", type=click.IntRange(min=0), default=40, show_default=True, metavar="N",
              help="Tasks shown in the table (0 = all).")
def run(
    spec: str,
    scheduler: str | None,
    cpus: int | None,
    hz: int | None,
    seed: int | None,
    duration: int | None,
    params: tuple[tuple[str, str], ...],
    check: bool,
    memory_budget: int | None,
    as_json: bool,
    parquet: str | None,
    output: str | None,
    trace: str | None,
    samples_file: str | None,
    rows: int,
) -> None:
    """Simulate SPEC under one scheduler and print a summary per task."""
    _check_outputs([spec], {"--trace": trace, "--samples": samples_file, "--output": output},
                   parquet)
    src = _load(spec)
    under = scheduler or "the spec’s scheduler"
    with _outputs() as outs:
        trace_tmp = outs.stage(trace) if trace else None
        samples_tmp = outs.stage(samples_file) if samples_file else None
        with _busy(f"simulating under {under}…"), _stopped_by_signals(f"{spec} under {under}"):
            r = runner.execute(runner.Job(
                spec=src, scheduler=scheduler, params=tuple(params), seed=seed, cpus=cpus,
                hz=hz, duration_ns=duration, trace=trace_tmp, check=check,
                samples_path=samples_tmp, memory_budget=memory_budget))
        if samples_file and samples_tmp is not None:
            # The core streams to a staged name, renamed into place when all is written:
            # the result names the final file, and reads the staged one until then.
            r.run["samples"]["path"] = samples_file
            r.read_samples_from(samples_tmp)
        if output:
            outs.write_text(output, r.to_json() + "\n")
        if parquet:
            _write_parquet(r, parquet, outs)
    if samples_file:
        r.read_samples_from(Path(samples_file))
    if as_json:
        click.echo(r.to_json())
    else:
        _print_run(_stdout(), r, rows, cut=duration is not None)
    _fail_if_stopped([r])


@cli.command()
@click.argument("spec")
@click.option("-s", "--scheduler", "schedulers", multiple=True,
              metavar="A[,B…]", help="Schedulers to compare (repeatable or comma-separated).")
@sim_options
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Runs in parallel (default: one per CPU).")
@click.option("--host", "on_host", is_flag=True,
              help="Run SPEC on this machine's kernel too and compare it, metric by metric, "
                   "with its simulation under the model of this kernel's scheduler (or the "
                   "one scheduler given) on this machine's number of CPUs.")
def compare(
    spec: str,
    schedulers: tuple[str, ...],
    cpus: int | None,
    hz: int | None,
    seed: int | None,
    duration: int | None,
    params: tuple[tuple[str, str], ...],
    check: bool,
    memory_budget: int | None,
    as_json: bool,
    parquet: str | None,
    output: str | None,
    jobs: int | None,
    on_host: bool,
) -> None:
    """Simulate SPEC under several schedulers (same seed) and compare them, one row each.

    --param applies to every scheduler; --parquet DIR writes DIR/<scheduler>/.
    """
    names = _split_schedulers(schedulers)
    if on_host:
        _compare_host(spec, names, seed, duration, params, as_json)
        return
    if not names:
        raise click.BadParameter("no scheduler given", param_hint="'--scheduler'")
    _check_outputs([spec], {"--output": output}, parquet, names)
    src = _load(spec)
    jobs_ = [runner.Job(spec=src, scheduler=name, params=tuple(params), seed=seed, cpus=cpus,
                        hz=hz, duration_ns=duration, check=check, memory_budget=memory_budget)
             for name in names]
    with runner.progress_bar(f"simulating {len(names)} schedulers", len(names)) as on_done, \
            _stopped_by_signals(f"{spec} under {', '.join(names)}"):
        results = runner.results(runner.run_jobs(jobs_, workers=jobs, on_done=on_done))
    with _outputs() as outs:
        if output:
            outs.write_text(output, _dump([r.json for r in results]) + "\n")
        if parquet:
            for r in results:
                _write_parquet(r, Path(parquet) / r.scheduler, outs)
    if as_json:
        click.echo(_dump([r.json for r in results]))
    else:
        out = _stdout()
        out.print(_compare_table(results))
        r0 = results[0].run
        out.print(f"[dim]seed {r0.get('seed')} · {r0.get('cpus')} cpus · HZ {r0.get('hz')}"
                  f"{escape(_kernel_text(r0))} · simulated {fmt_ns(r0.get('sim_ns'))}[/dim]")
    _fail_if_stopped(results)


def _compare_host(spec: str, names: list[str], seed: int | None, duration: int | None,
                  params: tuple[tuple[str, str], ...], as_json: bool) -> None:
    """`compare --host`: the same spec simulated and run on this machine."""
    if len(names) > 1:
        raise click.BadParameter("--host compares one simulated scheduler with the host",
                                 param_hint="'--scheduler'")
    facts = _core.host_doctor()["kernel"]
    model = names[0] if names else facts["model_scheduler"]
    src = _load(spec)
    with _busy(f"simulating under {model}…"):
        sim = runner.execute(runner.Job(spec=src, scheduler=model, params=tuple(params),
                                        seed=seed, cpus=facts["cpus"], duration_ns=duration))
    with _busy("running on this machine…"):
        host = runner.execute_on_host(src, duration_ns=duration)
    if as_json:
        click.echo(_dump({"sim": sim.json, "host": host.json}))
        return
    out = _stdout()
    out.print(_host_table(sim, host))
    out.print(f"[dim]host: Linux {escape(str(facts['release']))} · {facts['cpus']} cpus · "
              f"HZ {facts['hz']} · preempt {escape(str(facts['preempt']))} · simulated: "
              f"{escape(model)} on {sim.run.get('cpus')} cpus[/dim]")


#: What `compare --host` sets side by side per task: (label, key, statistic or None, format).
HOST_METRICS: tuple[tuple[str, str, str | None, Callable[[Any], str]], ...] = (
    ("cpu", "cpu_ns", None, fmt_ns),
    ("activations", "activations", None, str),
    ("wake p50", "wakeup_latency_ns", "p50", fmt_ns),
    ("wake p99", "wakeup_latency_ns", "p99", fmt_ns),
    ("switches vol", "switches_voluntary", None, str),
    ("switches invol", "switches_involuntary", None, str),
    ("migrations", "migrations", None, str),
)


def _host_table(sim: Result, host: Result) -> Table:
    t = Table(title="simulated against this machine's kernel", title_justify="left")
    for col in ("task", "metric", "simulated", "host", "host / simulated"):
        t.add_column(col, justify="left" if col in ("task", "metric") else "right")
    by_name = {task["name"]: task for task in host.json["tasks"]}
    for st in sim.json["tasks"]:
        ht = by_name.get(st["name"])
        if ht is None:
            continue
        for label, key, stat, fmt in HOST_METRICS:
            a = st[key] if stat is None else (st[key] or {}).get(stat)
            b = ht[key] if stat is None else (ht[key] or {}).get(stat)
            ratio = f"{b / a:.2f}" if isinstance(a, int | float) and a and b is not None else "–"
            t.add_row(escape(st["name"]), label, fmt(a) if a is not None else "–",
                      fmt(b) if b is not None else "–", ratio)
    t.add_row("(run)", "makespan", fmt_ns(sim.makespan_ns), fmt_ns(host.makespan_ns), "")
    return t


def _fail_if_stopped(results: Sequence[Result]) -> None:
    """A run that stopped before its end (its memory budget) has written its partial
    result; the command still fails, saying why."""
    for r in results:
        if r.run.get("stopped"):
            raise CliError(f"{r.scheduler}: {r.run['stopped']}", EXIT_FAILED)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the generators and their options.")
@click.pass_context
def gen(ctx: click.Context, name: str | None, list_: bool) -> None:
    """Write the spec made by generator NAME to stdout; its options follow as
    `--option value` (e.g. `schedlab gen hackbench --groups 10 --loops 100 --mode pipe`).
    A bare `--flag` means `true`. `schedlab gen --list` lists generators and options."""
    if list_:
        _print_generators(_stdout())
        return
    if not name:
        raise click.UsageError("missing generator NAME (see `schedlab gen --list`)")
    opts = _generic_options(ctx.args)
    click.echo(api.generate_text(name, opts))


def _generic_options(args: Sequence[str]) -> list[tuple[str, str]]:
    opts: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or a == "--":
            raise click.UsageError(f"unexpected argument {a!r} (options are `--name value`)")
        key, eq, val = a[2:].partition("=")
        if not key:
            raise click.UsageError(f"bad option {a!r}")
        if not eq:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                val = args[i + 1]
                i += 1
            else:
                val = "true"
        opts.append((key, val))
        i += 1
    return opts


def _print_generators(out: Console) -> None:
    t = Table(show_lines=True)
    t.add_column("generator")
    t.add_column("description")
    t.add_column("options (default)")
    for g in api.generators():
        opts = "\n".join(
            f"--{escape(o['name'])} [dim]({escape(str(o.get('default')))})[/dim] "
            f"{escape(o.get('help') or '')}"
            for o in g.get("options", [])
        )
        t.add_row(escape(g["name"]), escape(g.get("description") or ""), opts)
    out.print(t)


@cli.command("profiles")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def profiles_cmd(name: str | None, as_json: bool) -> None:
    """List the built-in machine profiles; with NAME, print that profile (its machine and
    where each value comes from) as JSON, ready for `schedlab.machine.profile`. NAME
    `host` measures this machine and prints its profile (what `"profile": "host"` in a
    spec becomes)."""
    profiles = api.profiles()
    if name == hostprofile.PROFILE_NAME:
        click.echo(_dump(hostprofile.measured_profile()))
        return
    if name is not None:
        found = [p for p in profiles if p["name"] == name]
        if not found:
            known = ", ".join(p["name"] for p in profiles)
            raise CliError(f"no built-in machine profile {name!r} (known: {known})",
                           EXIT_BAD_INPUT)
        click.echo(_dump(found[0]))
        return
    if as_json:
        click.echo(_dump(profiles))
        return
    t = Table()
    t.add_column("profile")
    t.add_column("about")
    for p in profiles:
        t.add_row(escape(p["name"]), escape(p.get("about") or ""))
    _stdout().print(t)


@cli.command("schedulers")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def schedulers_cmd(as_json: bool) -> None:
    """List the CPU scheduling policies, their sources and tunables."""
    scheds = api.schedulers()
    if as_json:
        click.echo(_dump(scheds))
        return
    t = Table(show_lines=True)
    t.add_column("scheduler")
    t.add_column("summary / source")
    t.add_column("tunables (--param NAME=VALUE, default)")
    for s in scheds:
        about = escape(s.get("summary") or "")
        if s.get("source"):
            about += f"\n[dim]{escape(s['source'])}[/dim]"
        if not s.get("available", True):
            about += f"\n[red]unavailable: {escape(s.get('reason') or 'unknown reason')}[/red]"
        params = "\n".join(
            f"{escape(p['name'])} = {escape(str(p.get('default')))}"
            + (f" [dim]{escape(p['description'])}[/dim]" if p.get("description") else "")
            for p in s.get("params", [])
        )
        name = escape(s["name"]) if s.get("available", True) else f"[dim]{escape(s['name'])}[/dim]"
        t.add_row(name, about, params or "[dim]–[/dim]")
    _stdout().print(t)


@cli.command()
@click.argument("specs", nargs=-1, required=True, metavar="SPEC...")
@click.option("-s", "--scheduler", "schedulers", multiple=True, metavar="A[,B…]",
              help="Check against these schedulers (repeatable or comma-separated). "
                   "Default: the spec's own scheduler, else every available one.")
@click.option("--duration", type=DURATION, metavar="D",
              help="The duration the run will be given (as `run --duration`).")
def validate(specs: tuple[str, ...], schedulers: tuple[str, ...], duration: int | None) -> None:
    """Check SPEC files; print one line per file (`ok` or the error with its JSON path).

    A file passes when `schedlab run` would accept it: the spec is valid and a run would
    start under the scheduler it names (or each --scheduler given); a spec that names no
    scheduler is checked against every available one.
    """
    names = _split_schedulers(schedulers)
    failed = 0
    for spec in specs:
        try:
            src = _load(spec)
            _core.validate(src.text, names, duration)
        except SpecError as e:
            failed += 1
            _error(f"{spec}: {e.path}: {e.message}")
        except SimError as e:
            failed += 1
            _error(f"{spec}: {e.message}")
        except OSError as e:
            failed += 1
            _error(_os_message(e))
        else:
            click.echo(f"ok: {spec}")
    if failed:
        raise SystemExit(EXIT_BAD_INPUT)


@cli.command()
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
def analyze(spec: str, as_json: bool) -> None:
    """Schedulability analysis of SPEC's periodic tasks beside their simulated worst cases.

    Fixed priority (for `fp`): exact response-time analysis per CPU with blocking from
    mutexes where it can be bounded, Liu & Layland's and the hyperbolic utilisation bounds.
    EDF (for `edf`, partitioned): the processor-demand test per CPU. Each task's simulated
    worst job response under fp and edf is printed beside its bound; a simulated case
    above a bound is flagged (a bug in one of them, or costs the analysis leaves out).
    Tasks the periodic model cannot describe are listed with the reason.
    """
    src = _load(spec)
    with _busy("analysing and simulating under fp and edf…"):
        a = _core.analyze(src.text)
    if as_json:
        click.echo(_dump(a))
        return
    _print_analysis(_stdout(), a)


def _yes_no(v: bool | None) -> str:
    return "–" if v is None else ("yes" if v else "[red]no[/red]")


def _print_analysis(out: Console, a: Mapping[str, Any]) -> None:
    model = a["model"]
    t = Table(title=f"periodic tasks ({a['cpus']} CPU{'s' if a['cpus'] != 1 else ''})")
    for col in ("task", "policy", "prio", "CPUs", "C ms", "T ms", "D ms", "U"):
        t.add_column(col, justify="left" if col in ("task", "policy") else "right")
    for m in model["tasks"]:
        t.add_row(escape(m["name"]), m["policy"], str(m["prio"]),
                  ",".join(map(str, m["cpus"])), _ms(m["c_ns"]), _ms(m["t_ns"]),
                  _ms(m["d_ns"]), f"{m['utilisation']:.3f}")
    out.print(t)
    for u in model["unmodelled"]:
        out.print(f"not modelled: {escape(u['path'])}: {escape(u['reason'])}")
    fp = a["fp"]
    t = Table(title="fixed priority (fp): response-time analysis")
    for col in ("task", "CPU", "B ms", "R ms", "sim max ms", "meets D", "note"):
        t.add_column(col, justify="left" if col in ("task", "note") else "right")
    for r in fp["tasks"]:
        sim = _ms(r["simulated_max_ns"])
        if r["exceeds"]:
            sim = f"[red]{sim} > R[/red]"
        t.add_row(escape(r["name"]), "–" if r["cpu"] is None else str(r["cpu"]),
                  _ms(r["blocking_ns"]), _ms(r["response_ns"]), sim,
                  _yes_no(r["schedulable"]), escape(r["note"] or ""))
    out.print(t)
    for c in fp["cpus"]:
        if c["not_applicable"]:
            bounds = f"utilisation bounds not applicable: {escape(c['not_applicable'])}"
        else:
            ll, hb = c["liu_layland"], c["hyperbolic"]
            bounds = (f"Liu & Layland U ≤ {ll['bound']:.4f}: {_yes_no(ll['passes'])}; "
                      f"hyperbolic Π(U+1) = {hb['product']:.4f} ≤ 2: {_yes_no(hb['passes'])}")
        out.print(f"CPU {c['cpu']}: U = {c['utilisation']:.4f}; {bounds}")
    edf = a["edf"]
    t = Table(title="EDF (edf, partitioned): processor demand")
    for col in ("CPU", "U", "test", "L ms", "points", "schedulable", "note"):
        t.add_column(col, justify="left" if col in ("test", "note") else "right")
    for c in edf["cpus"]:
        note = c["note"] or ""
        if c["first_failure_ns"] is not None:
            note = f"dbf(t) > t at t = {_ms(c['first_failure_ns'])} ms"
        t.add_row(str(c["cpu"]), f"{c['utilisation']:.4f}", c["test"] or "–",
                  _ms(c["horizon_ns"]), str(c["points"]), _yes_no(c["schedulable"]),
                  escape(note))
    out.print(t)
    t = Table(title="EDF: deadlines against the simulated worst case")
    for col in ("task", "CPU", "bound (D) ms", "sim max ms"):
        t.add_column(col, justify="left" if col == "task" else "right")
    for r in edf["tasks"]:
        sim = _ms(r["simulated_max_ns"])
        if r["exceeds"]:
            sim = f"[red]{sim} > D[/red]"
        t.add_row(escape(r["name"]), "–" if r["cpu"] is None else str(r["cpu"]),
                  _ms(r["bound_ns"]), sim)
    out.print(t)
    for key in ("fp", "edf"):
        s = a[key]["simulation"]
        if s["ran"]:
            out.print(f"simulated under {s['scheduler']}: {_ms(s['sim_ns'])} ms, overhead "
                      f"{_ms(s['overhead_ns'])} ms, {s['deadline_misses']} deadline misses")
        else:
            out.print(f"[yellow]not simulated under {s['scheduler']}: "
                      f"{escape(s['error'])}[/yellow]")
    if a["simulated_ns_cap"] is not None:
        out.print(f"(the spec never ends by itself: simulated for "
                  f"{_ms(a['simulated_ns_cap'])} ms)")
    for f in a["flags"]:
        out.print(f"[bold red]FLAG[/bold red] {escape(f['message'])}")
    if not a["flags"]:
        out.print("no simulated worst case exceeds an analytic bound")


@cli.command()
@click.option("--quick", is_flag=True, help="Smaller runs, for a fast check.")
@click.option("--out", "out_dir", type=OUTPUT_DIR, default="report",
              show_default=True, help="Directory for the HTML report, plots and specs.")
@click.option("--from-results", "from_results", type=click.Path(file_okay=False, exists=True),
              metavar="DIR", help="Rebuild the sections declared as sweeps from the datasets "
                                  "of the report in DIR (its sweeps/), running only what they "
                                  "lack.")
@click.option("--scheduler", "address", metavar="ADDRESS",
              help="Run the sections' sweeps on the Dask cluster whose scheduler is at "
                   "ADDRESS.")
@click.option("--host", "on_host", is_flag=True,
              help="Also run the host sections on this machine's kernel (root): seed 000's "
                   "wake-up test and seed 003's cgroup settings for real, beside their "
                   "simulations, seed 004's question with real block I/O on loop devices, "
                   "and the runner against cyclictest, hackbench, rt-app and fio. "
                   "What they change is journalled and put back; without --host nothing on "
                   "the machine is changed.")
def reproduce(quick: bool, out_dir: str, from_results: str | None, address: str | None,
              on_host: bool) -> None:
    """Regenerate every seed experiment into an HTML report."""
    try:
        from schedlab import reproduce as rep
    except ImportError as e:
        if e.name in ("schedlab.reproduce", None):
            raise CliError(f"reproduce: not available in this build ({e})", EXIT_FAILED) from e
        raise
    from schedlab.sweep.execute import ClusterUnreachable

    try:
        index = rep.main(quick=quick, out=Path(out_dir),
                         from_results=Path(from_results) if from_results else None,
                         scheduler=address, host=on_host)
    except rep.DestinationError as e:
        raise CliError(f"--out {e}") from None
    except ClusterUnreachable as e:
        raise CliError(f"--scheduler: {e}") from None
    click.echo(f"report written to {index}")


@cli.command("sweep")
@click.argument("file")
@click.option("--out", "out_dir", type=OUTPUT_DIR, metavar="DIR",
              help="The dataset directory (default: sweeps/NAME); a sweep run again into it "
                   "resumes, running only what it does not hold.")
@click.option("--scheduler", "address", metavar="ADDRESS",
              help="Run on an existing Dask cluster: its scheduler's address "
                   "(tcp://host:8786). Default: a local cluster sized to this machine.")
@click.option("-j", "--workers", type=click.IntRange(min=1), metavar="N",
              help="Workers of the local cluster (default: one per CPU), or threads with "
                   "--threads.")
@click.option("--threads", is_flag=True,
              help="Run in threads of this process instead of a Dask cluster.")
@click.option("--memory-limit", type=BYTE_SIZE, metavar="SIZE",
              help="Memory of each local worker (default: this machine's, divided among them).")
@click.option("--retry-failed", is_flag=True, help="Run again the runs recorded as failed.")
@click.option("--dry-run", is_flag=True,
              help="Expand and check the description, print what would run, run nothing.")
@click.option("--flush-every", type=click.IntRange(min=1), default=64, show_default=True,
              metavar="N", help="Rows per part file: a crash loses at most N finished "
                                "runs (or --flush-seconds of them), run again on resuming.")
@click.option("--flush-seconds", type=click.FloatRange(min=0), default=5.0, show_default=True,
              metavar="S", help="Write the finished rows at least every S seconds.")
@click.option("--table", "table_metric", metavar="METRIC",
              help="Then print METRIC (a column: summary.headline.value, …) by the --by axes: "
                   "runs, failed, mean and its 95% interval over the other axes (the seeds).")
@click.option("--by", "by_axes", metavar="A[,B]", default="scheduler", show_default=True,
              help="The axes of --table and --plot.")
@click.option("--plot", "plot_dir", type=OUTPUT_DIR, metavar="DIR",
              help="Then draw METRIC into DIR (PNG and SVG): against the last --by axis, a "
                   "line per value of the first, and with two axes a heat map.")
@click.option("--compare", "compare_spec", metavar="AXIS=A,B",
              help="Then compare METRIC between two values of AXIS on runs paired by every "
                   "other axis: mean difference and its interval, paired t-test and Wilcoxon "
                   "p-values, strict wins (lower is better) and ties.")
def sweep_cmd(file: str, out_dir: str | None, address: str | None, workers: int | None,
              threads: bool, memory_limit: int | None, retry_failed: bool,
              dry_run: bool, flush_every: int, flush_seconds: float,
              table_metric: str | None, by_axes: str, plot_dir: str | None,
              compare_spec: str | None) -> None:
    """Run the sweep described in FILE (YAML or JSON, docs/sweeps.md) into a Parquet dataset:
    one row per run, appended as runs finish."""
    from schedlab import sweep as sw
    from schedlab.sweep.execute import ClusterUnreachable

    if (plot_dir is not None or compare_spec is not None) and table_metric is None:
        raise CliError("--plot and --compare need --table METRIC")
    compared = None
    if compare_spec is not None:
        axis, sep, values = compare_spec.partition("=")
        pair = [v.strip() for v in values.split(",")]
        if not sep or not axis.strip() or len(pair) != 2 or not all(pair):
            raise CliError(f"--compare: expected AXIS=A,B, got {compare_spec!r}")
        compared = (axis.strip(), pair[0], pair[1])
    if address is not None and (threads or memory_limit is not None or workers is not None):
        raise CliError("--scheduler runs on an existing cluster: --threads, --workers and "
                       "--memory-limit do not apply")
    try:
        desc = sw.load(file)
        out = Path(out_dir) if out_dir else Path("sweeps") / desc.name
        if dry_run:
            points = sw.plan(desc)
            held = sw.read(out, columns=["key"]) if out.is_dir() else None
            done = set(held["key"].to_list()) if held is not None else set()
            left = sum(p.key not in done for p in points)
            click.echo(f"sweep {desc.name}: {len(points)} runs, {len(points) - left} in {out}, "
                       f"{left} to run")
            return
        with _stopped_by_signals(f"sweep {desc.name}"):
            r = sw.run(desc, out, scheduler=address, workers=workers, threads=threads,
                       memory_limit=memory_limit, retry_failed=retry_failed,
                       flush_rows=flush_every, flush_s=flush_seconds)
    except sw.SweepError as e:
        raise CliError(f"{file}: {e}") from None
    except sw.DatasetBusy as e:
        raise CliError(_os_message(e), EXIT_FAILED) from None
    except ClusterUnreachable as e:
        raise CliError(f"--scheduler: {e}") from None
    failed = f", {r.failed} failed (their error is in the dataset's error column)" \
        if r.failed else ""  # runs stopped by their memory budget included
    click.echo(f"sweep {r.name}: {r.total} runs, {r.skipped} already in {out}, {r.ran} run now"
               f"{failed}")
    if table_metric is not None:
        rows = r.rows()
        _sweep_summary(rows, table_metric, [a.strip() for a in by_axes.split(",")],
                       Path(plot_dir) if plot_dir else None)
        if compared is not None:
            _sweep_compare(rows, table_metric, *compared)


def _sweep_compare(df: Any, metric: str, axis: str, a: str, b: str) -> None:
    """`sweep --compare AXIS=A,B`: the paired comparison of two values of an axis."""
    import polars as pl

    from schedlab.sweep import analysis

    if axis not in df.columns:
        raise CliError(f"--compare: the sweep's rows have no axis {axis!r} (axes: "
                       f"{', '.join(analysis.axis_columns(df))})")
    column = df[axis]

    def typed(v: str) -> Any:
        if column.dtype.is_integer():
            return int(v)
        if column.dtype.is_float():
            return float(v)
        return v

    try:
        va, vb = typed(a), typed(b)
    except ValueError:
        raise CliError(f"--compare: {axis} holds numbers, not {a!r} and {b!r}") from None
    for v in (va, vb):
        if df.filter(pl.col(axis) == v).is_empty():
            raise CliError(f"--compare: no run has {axis} = {v!r}")
    c = analysis.compare(df, metric, axis, va, vb)

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:.6g}"

    ci = "–" if c.ci_low is None else f"{num(c.ci_low)} … {num(c.ci_high)}"
    click.echo(f"{metric}, {axis} = {b} against {a}: {c.n} paired runs ({c.unpaired} "
               f"unpaired); mean {num(c.mean_b)} against {num(c.mean_a)}, difference "
               f"{num(c.diff)} (95% interval {ci}); p = {num(c.p_ttest)} (paired t), "
               f"{num(c.p_wilcoxon)} (Wilcoxon); lower in {c.wins_b} for {b}, {c.wins_a} for "
               f"{a}, {c.ties} ties")


def _sweep_summary(df: Any, metric: str, by: list[str], plot_dir: Path | None) -> None:
    """`sweep --table/--plot`: the metric by the axes, as a table and plots."""
    from schedlab import plots
    from schedlab.sweep import analysis
    from schedlab.sweep import plots as sweep_plots

    for name, what in ((metric, "--table"), *((a, "--by") for a in by)):
        if name not in df.columns:
            metrics = [c for c in df.columns if c.startswith(analysis.METRIC_ROOTS)]
            raise CliError(f"{what}: the sweep's rows have no column {name!r} (axes: "
                           f"{', '.join(analysis.axis_columns(df))}; metrics: "
                           f"{', '.join(metrics[:8])}{', …' if len(metrics) > 8 else ''})")
    if len(by) > 2:
        raise CliError("--by: one or two axes")
    stats = analysis.metric_by(df, metric, by)
    table = Table(title=f"{metric}: mean and 95% interval over the other axes")
    for col in [*by, "runs", "failed", "mean", "95% interval"]:
        table.add_column(col, justify="left" if col in by else "right")
    for row in stats.iter_rows(named=True):
        ci = ("–" if row["ci_low"] is None
              else f"{row['ci_low']:.6g} … {row['ci_high']:.6g}")
        mean = "–" if row["mean"] is None else f"{row['mean']:.6g}"
        table.add_row(*(str(row[a]) for a in by), str(row["n"]), str(row["failed"]), mean, ci)
    _stdout().print(table)
    if plot_dir is not None:
        x, hue = by[-1], (by[0] if len(by) == 2 else None)
        stem = metric.replace(".", "_")
        written = plots.save(sweep_plots.lines(df, metric, x, hue=hue), plot_dir,
                             f"{stem}-by-{x}")
        if hue is not None:
            written += plots.save(sweep_plots.heatmap(df, metric, x, hue), plot_dir,
                                  f"{stem}-{hue}-{x}")
        for p in written:
            click.echo(f"wrote {p}")


@cli.command("cost")
@click.option("-s", "--scheduler", "schedulers", multiple=True, metavar="A[,B…]",
              help="Policies to measure (repeatable or comma-separated; default: every "
                   "available one).")
@click.option("-p", "--param", "params", type=NAME_VALUE, multiple=True, metavar="NAME=VALUE",
              help="Tunable applied to every measured policy (repeatable), e.g. "
                   "readyq=single-list with -s fp.")
@click.option("--max-tasks", type=click.IntRange(1, 1_000_000), metavar="N",
              help="Largest number of runnable tasks: 1, 10, … up to N (default 100000; "
                   "--quick 10000).")
@click.option("--decisions", type=click.IntRange(1, MAX_DECISIONS), metavar="K",
              help="Measured decisions per point (default 50000; --quick 5000; at most "
                   f"{MAX_DECISIONS:,}).")
@click.option("--cpus", type=CPUS, default=1, show_default=True,
              metavar="N", help="CPUs; decisions take turns on them.")
@click.option("--class", "task_class", type=click.Choice(["other", "fifo"]), default="other",
              show_default=True, help="Task class: SCHED_OTHER nice 0, or SCHED_FIFO with "
                                      "priorities spread over 1..99.")
@click.option("--quick", is_flag=True, help="Up to 10000 tasks, fewer decisions (~1 s).")
@click.option("--json", "as_json", is_flag=True, help="Print the schedlab.cost/1 document.")
@click.option("--plot", "plot_dir", type=OUTPUT_DIR, metavar="DIR",
              help="Write the log-log plot of work and ns per decision against N to DIR.")
def cost_cmd(
    schedulers: tuple[str, ...], params: tuple[tuple[str, str], ...], max_tasks: int | None,
    decisions: int | None, cpus: int, task_class: str, quick: bool, as_json: bool,
    plot_dir: str | None,
) -> None:
    """Scheduler cost: the work each policy counts per scheduling decision (exact) and the
    ns its hooks take (this machine), against the number of runnable tasks N. One decision
    = a tick, then every other round the current task blocks while a sleeper wakes (else
    it is preempted), put_prev and pick_next; N tasks are runnable at every pick."""
    from schedlab import cost

    registry = [s["name"] for s in api.schedulers() if s.get("available", True)]
    names = _split_schedulers(schedulers) or registry
    if plot_dir and Path(plot_dir).exists() and not Path(plot_dir).is_dir():
        raise CliError(f"{plot_dir}: not a directory")
    with _busy("measuring scheduler cost…"):
        points = cost.measure(names, params=params, quick=quick, max_tasks=max_tasks,
                              decisions=decisions, cpus=cpus, task_class=task_class)
    written = cost.save_plot(points, Path(plot_dir), registry) if plot_dir else []
    if as_json:
        click.echo(_dump(cost.document(points)))
        return
    cost.print_tables(_stdout(), points)
    if written:
        _stdout().print(f"plot written to {written[0]}")


def _ms(ns: int | None) -> str:
    if ns is None:
        return "–"
    return f"{ns / 1e6:.3f}".rstrip("0").rstrip(".")


@cli.command("timeslice")
@click.option("-s", "--scheduler", "schedulers", multiple=True, metavar="A[,B…]",
              help="Policies to tabulate (repeatable or comma-separated; default: every "
                   "available one).")
@click.option("--hz", type=TICK_RATE, default=1000, show_default=True,
              metavar="HZ", help="Tick rate: 100, 128, 250, 300 or 1000.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"<policy>": {"<nice>": <timeslice_ns or null>, …}, …}.')
@click.option("--plot", "plot_dir", type=OUTPUT_DIR, metavar="DIR",
              help="Write timeslice-vs-nice plots to DIR, one per policy "
                   "(timeslice-<policy>-hz<HZ>.png/.svg).")
@click.option("--dprio", is_flag=True,
              help="nicksched's timeslice against dynamic priority instead, for best "
                   'queued priorities 100/110/120/130 (JSON {"nicksched": {"<best>": '
                   '{"<dprio>": ns}}}; plot timeslice-nicksched-dprio-hz<HZ>).')
def timeslice_cmd(
    schedulers: tuple[str, ...], hz: int, as_json: bool, plot_dir: str | None, dprio: bool
) -> None:
    """The timeslice each policy gives a lone SCHED_OTHER task of each nice level
    (-20..19), computed by the policy's own code (seed 000). Policies with no per-task
    slice (linux-cfs, linux-eevdf: it depends on the load; fp, example-fifo) show – and
    map every nice to null in --json. With --dprio: nicksched's slice against a task's
    dynamic priority and the best priority queued on its CPU (seed 000's formula)."""
    if dprio:
        if any(n != "nicksched" for n in _split_schedulers(schedulers)):
            raise click.BadParameter("--dprio tabulates nicksched only",
                                     param_hint="'--scheduler'")
        _nicksched_dprio(hz, as_json, plot_dir)
        return
    registry = [s["name"] for s in api.schedulers() if s.get("available", True)]
    names = _split_schedulers(schedulers) or registry
    tables = {n: _core.timeslice(n, hz) for n in names}
    if plot_dir:
        from schedlab import plots

        d = _plot_dir(plot_dir)
        for name, table in tables.items():
            # colour by registry position, so a policy's figure is the same whatever -s says
            index = registry.index(name) if name in registry else 0
            fig = plots.timeslice_vs_nice(name, table, hz=hz, index=index)
            plots.save(fig, d, f"timeslice-{name}-hz{hz}")
    if as_json:
        click.echo(_dump({n: {str(nice): ns for nice, ns in t} for n, t in tables.items()}))
        return
    t = Table(title=f"timeslice (ms) of a lone SCHED_OTHER task, HZ {hz}",
              title_justify="left")
    t.add_column("nice", justify="right")
    for n in names:
        t.add_column(escape(n), justify="right")
    for row, nice in enumerate(range(-20, 20)):
        t.add_row(str(nice), *(_ms(tables[n][row][1]) for n in names))
    t.caption = ("– = no per-task timeslice (linux-cfs/linux-eevdf: the slice depends on "
                 "the load; fp/example-fifo: run to completion)")
    _stdout().print(t)
    if plot_dir:
        _stdout().print(f"plots written to {plot_dir}")


def _plot_dir(plot_dir: str) -> Path:
    d = Path(plot_dir)
    if d.exists() and not d.is_dir():
        raise CliError(f"{d}: not a directory")
    return d


def _nicksched_dprio(hz: int, as_json: bool, plot_dir: str | None) -> None:
    table = _core.nicksched_timeslice(hz)
    if plot_dir:
        from schedlab import plots

        fig = plots.timeslice_vs_dprio("nicksched", table, hz=hz)
        plots.save(fig, _plot_dir(plot_dir), f"timeslice-nicksched-dprio-hz{hz}")
    if as_json:
        click.echo(_dump({"nicksched": {str(best): {str(p): ns for p, ns in row}
                                        for best, row in table}}))
        return
    by_best = {best: dict(row) for best, row in table}
    t = Table(title=f"nicksched timeslice (ms) against dynamic priority, HZ {hz}",
              title_justify="left")
    t.add_column("dprio", justify="right")
    for best in by_best:
        t.add_column(f"best queued {best}", justify="right")
    for prio in range(min(by_best), 140):
        t.add_row(str(prio), *(_ms(by_best[b].get(prio)) for b in by_best))
    t.caption = "– = the task is better than the best queued priority (it is the best)"
    _stdout().print(t)


@cli.command("readyq")
@click.option("--quick", is_flag=True, help="Fewer task counts and repetitions (~10 s).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the schedlab.readyq/1 document (docs/readyq.md).")
@click.option("--no-count", is_flag=True,
              help="Skip the instruction counts (valgrind/callgrind).")
@click.option("--tasks", metavar="N[,N…]",
              help="Numbers of ready tasks to measure (ascending, 1..254; default: the plan's).")
@click.option("--platform", type=click.Choice(["x86-host", "sh3-nocache"]), default="x86-host",
              show_default=True,
              help="This machine as measured, or seed 002's SH3 at 133 MHz reckoned from the "
                   "exact counts (cache off and on; one memory wait fitted to the seed's "
                   "figure 4).")
def readyq_cmd(quick: bool, as_json: bool, no_count: bool, tasks: str | None,
               platform: str) -> None:
    """Measure the RTOS ready-queue back ends (seed 002): act_tsk, chg_pri and rot_rdq,
    average and worst case against the number of ready tasks, as ns (warm and cold
    caches) and exact instruction counts, plus code sizes and the crossover point where
    the per-priority lists overtake the single list; with --platform sh3-nocache, the
    same on a cost model of the seed's CPU."""
    from schedlab import readyq

    try:
        ns = readyq.parse_tasks(tasks) if tasks is not None else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--tasks'") from None
    try:
        with _busy("measuring the ready queues…"):
            doc = readyq.measure(quick, count=not no_count, ns=ns, platform=platform)
    except readyq.ProbeError as e:
        raise CliError(f"readyq: {e}", e.code) from None
    if as_json:
        click.echo(_dump(doc))
    else:
        readyq.print_tables(_stdout(), doc)


@cli.group("host")
def host_group() -> None:
    """Schedlab on this machine's real kernel: what it allows, and putting back what a
    host run changed."""


@host_group.command("run")
@click.argument("spec")
@click.option("--duration", type=DURATION, metavar="D",
              help="Stop after D (e.g. 2s, 500ms); default: the spec's global.duration, "
                   "else when every task has exited.")
@click.option("--json", "as_json", is_flag=True, help="Print the result object.")
@click.option("--rows", type=click.IntRange(min=0), default=40, show_default=True, metavar="N",
              help="Tasks shown in the table (0 = all).")
@click.option("--trace", type=OUTPUT_FILE, metavar="FILE",
              help="Capture the run's scheduler events through tracefs (root; a tracing "
                   "instance of its own, removed afterwards) into FILE, in the simulator's "
                   "ftrace text with times from the run's start.")
def host_run(spec: str, duration: int | None, as_json: bool, rows: int,
             trace: str | None) -> None:
    """Run SPEC on this machine's kernel with real threads (policies through
    sched_setattr, read back; absolute CLOCK_MONOTONIC timers; pthread mutexes and
    conditions; pipes and socket pairs; the spec's cgroups as v1 groups, journalled and put
    back) and report it in the simulator's result schema, with the kernel facts of the
    run. Block I/O runs on loop devices over files (direct I/O, the spec's I/O scheduler,
    journalled and put back)."""
    _check_outputs([spec], {"--trace": trace})
    src = _load(spec)
    with _outputs() as outs:
        trace_tmp = outs.stage(trace) if trace else None
        with _busy("running on this machine…"), _stopped_by_signals(f"{spec} on this machine"):
            r = runner.execute_on_host(src, duration_ns=duration, trace=trace_tmp)
        if trace:
            r.run["notes"] = [n.replace(str(trace_tmp), trace) for n in r.run.get("notes", [])]
    if as_json:
        click.echo(r.to_json())
    else:
        _print_run(_stdout(), r, rows, cut=duration is not None)


@host_group.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def host_doctor(as_json: bool) -> None:
    """Report what this kernel and these privileges allow (root, scheduling policies,
    cgroup hierarchies and their bandwidth files, block schedulers, tracefs, the field's
    tools) and the kernel facts every host run records. Changes nothing: a policy is
    tried on a thread that then exits."""
    report = _core.host_doctor()
    if as_json:
        click.echo(_dump(report))
        return
    out = _stdout()
    out.print(_host_facts_table(report["kernel"]))
    t = Table(title="What the host runner can do here", title_justify="left")
    for col in ("area", "check", "", "detail"):
        t.add_column(col)
    for c in report["checks"]:
        mark = "[green]yes[/]" if c["ok"] else "[red]no[/]"
        t.add_row(escape(c["area"]), escape(c["name"]), mark, escape(c["detail"]))
    out.print(t)


def _host_facts_table(k: Mapping[str, Any]) -> Table:
    t = Table(title="Kernel facts", title_justify="left", show_header=False)
    t.add_column("fact")
    t.add_column("value")
    for key, value in k.items():
        t.add_row(key, escape("unknown" if value is None else str(value)))
    return t


@host_group.command("restore")
@click.option("--journal", type=click.Path(dir_okay=False), metavar="FILE",
              help="The restore journal (default: $SCHEDLAB_JOURNAL or "
                   "/run/schedlab/journal.jsonl).")
def host_restore(journal: str | None) -> None:
    """Put back every system setting a host run changed and did not restore (after a
    SIGKILL or a power cut of the runner): the journal's entries are undone newest
    first. Exit status 1 if some could not be undone (they stay in the journal)."""
    try:
        done = _core.host_restore(journal)
    except ValueError as e:
        raise CliError(str(e), EXIT_BAD_INPUT) from None
    out = _stdout()
    if not done["undone"] and not done["failed"]:
        out.print(f"nothing to restore ({escape(done['journal'])} records no change)")
        return
    for e in done["undone"]:
        out.print(f"restored: {escape(_journal_entry_text(e))}")
    for f in done["failed"]:
        _error(f"could not restore {_journal_entry_text(f['entry'])}: {f['error']}")
    if done["failed"]:
        raise CliError(f"{len(done['failed'])} change(s) left in {done['journal']}",
                       EXIT_FAILED)


def _io_text(io: Mapping[str, Any]) -> str:
    """``summary.io`` in fio's words: per direction ios, IOPS and bandwidth; clat."""
    parts = [f"{d} {io[d]['ios']:,} ios, {io[d]['iops']:,.0f} IOPS, "
             f"{io[d]['bw_kib_s'] / 1024:,.1f} MiB/s" for d in ("read", "write") if io[d]["ios"]]
    clat = io.get("clat_ns") or {}
    if clat.get("count"):
        parts.append(f"clat p50 {fmt_ns(clat['p50'])}, p99 {fmt_ns(clat['p99'])}")
    return " · ".join(parts)


def _journal_entry_text(e: Mapping[str, Any]) -> str:
    if e["op"] == "write":
        return f"{e['path']} = {e['old']!r}"
    if e["op"] == "loop":
        return f"released {e['path']} (bound to {e['backing']})"
    if e["op"] == "mount":
        return f"unmounted {e['path']}"
    return f"removed {e['path']}"


@cli.group("plot")
def plot_group() -> None:
    """Draw plots from traces."""


def _pid_list(values: Sequence[str]) -> list[int]:
    pids: list[int] = []
    for v in values:
        for s in v.split(","):
            if not s.strip():
                continue
            try:
                pids.append(int(s))
            except ValueError:
                raise click.BadParameter(f"{s.strip()!r} is not a PID",
                                         param_hint="'--pids'") from None
    return pids


@plot_group.command("dprio")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("-o", "--out", type=OUTPUT_FILE, metavar="FILE",
              help="Output FILE (.png or .svg; both are written). Default: "
                   "<TRACE stem>-dprio.png/.svg next to TRACE.")
@click.option("--pids", multiple=True, metavar="P[,Q…]",
              help="Only these PIDs (repeatable or comma-separated; default: all).")
def plot_dprio(trace: str, out: str | None, pids: tuple[str, ...]) -> None:
    """Draw each task's dynamic priority against time from TRACE's tracing_mark_write
    counters (C|pid|name|value; the simulator writes "prio", "vruntime" or "deadline"),
    one line per PID and one panel per counter name (seed 000: "DPRIO against time per
    PID"). TRACE may be simulated (`schedlab run --trace`) or a real ftrace capture."""
    from schedlab import dprio, plots

    wanted = set(_pid_list(pids))
    try:
        cols = _core.parse_trace(trace)
    except _core.TraceError as e:
        # line 0: the file could not be opened (the message names it)
        raise CliError(f"{trace}: line {e.line}: {e.message}" if e.line else e.message) from None
    labelled = dprio.series(cols, wanted)
    if not labelled:
        which = f" for PIDs {', '.join(map(str, sorted(wanted)))}" if wanted else ""
        raise CliError(f"{trace}: no tracing_mark_write counters (C|pid|name|value){which}")
    if out:
        o = Path(out)
        stem = o.stem if o.suffix.lower() in (".png", ".svg") else o.name
        out_dir = o.parent
    else:
        t = Path(trace)
        stem, out_dir = f"{t.stem}-dprio", t.parent
    if not out_dir.is_dir():
        raise CliError(f"{out}: directory {out_dir} does not exist")
    title = f"dynamic priority against time — {Path(trace).name}"
    fig = plots.counter_timeline(labelled, title=title)
    for p in plots.save(fig, out_dir, stem):
        click.echo(f"wrote {p}")


# --- entry point ---------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _error(message: str) -> None:
    print(f"error: {_one_line(message)}", file=sys.stderr, flush=True)


def _os_message(e: OSError) -> str:
    where = e.filename if e.filename is not None else ""
    what = e.strerror or str(e)
    return f"{where}: {what}" if where else what


class Terminated(BaseException):
    """SIGTERM, raised like an interrupt so that partial outputs are cleaned up."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs, SIGTERM unwinds it as Ctrl-C does (staged outputs removed,
    an existing report kept) instead of killing the process where it stands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _interrupts_stop_runs() -> Iterator[None]:
    """Ctrl-C or SIGTERM also stops the runs other threads are doing (``schedlab compare``'s,
    a sweep's): only this thread hears signals, and the process would otherwise wait for
    those runs to end before it exits."""
    try:
        yield
    except (KeyboardInterrupt, Terminated, Stopped):
        _core.stop_running()
        raise


class Stopped(BaseException):
    """A signal stopped a run (the core polls for signals while it simulates): unwinds
    like an interrupt, so that staged outputs are removed, and names the run."""

    def __init__(self, what: str, signum: int) -> None:
        super().__init__(what, signum)
        self.what = what
        self.signum = signum

    def message(self) -> str:
        word = "terminated" if self.signum == signal.SIGTERM else "interrupted"
        return f"{word}: the run of {self.what}"


@contextlib.contextmanager
def _stopped_by_signals(what: str) -> Iterator[None]:
    """Ctrl-C (KeyboardInterrupt) or SIGTERM (Terminated) during the run of ``what``
    become :class:`Stopped`, naming it."""
    try:
        yield
    except KeyboardInterrupt:
        raise Stopped(what, signal.SIGINT) from None
    except Terminated:
        raise Stopped(what, signal.SIGTERM) from None


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, but for SystemExit)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        args = ["--help"]
    try:
        with _sigterm_unwinds(), _interrupts_stop_runs():
            rv = cli.main(args=args, prog_name="schedlab", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.UsageError as e:
        _error(e.format_message())
        return EXIT_BAD_INPUT
    except click.ClickException as e:
        _error(e.format_message())
        return e.exit_code
    except click.exceptions.Abort:
        _error("interrupted")
        return 130
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Terminated:
        _error("terminated")
        return 128 + signal.SIGTERM
    except Stopped as e:
        _error(e.message())
        return 128 + e.signum
    except CliError as e:
        _error(str(e))
        return e.code
    except SpecError as e:
        _error(f"{e.path}: {e.message}")
        return EXIT_BAD_INPUT
    except SimError as e:
        _error(e.message)
        return EXIT_BAD_INPUT if e.bad_input else EXIT_FAILED
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 141
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as e:
        _error(_os_message(e))
        return EXIT_BAD_INPUT
    except OSError as e:
        _error(_os_message(e))
        return EXIT_FAILED
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 — a panic in Rust or a bug in Python
        if os.environ.get("SCHEDLAB_DEBUG"):
            raise
        kind = "panic in the Rust core" if type(e).__name__ == "PanicException" else type(
            e).__name__
        _error(f"internal error ({kind}): {e} — please report it (SCHEDLAB_DEBUG=1 for details)")
        return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``schedlab`` console script."""
    sys.exit(run_cli(argv))

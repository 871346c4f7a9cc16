"""schedlab: a scheduler laboratory — one workload spec, many CPU schedulers, a
deterministic simulator, one result schema.

>>> import schedlab
>>> r = schedlab.simulate("spec.json", scheduler="linux-cfs", seed=1)  # doctest: +SKIP
>>> r.tasks, r.samples, r.summary                                     # doctest: +SKIP
"""

from __future__ import annotations

from schedlab import sweep  # a package that is also a function: schedlab.sweep(...)
from schedlab._core import SimError, SpecError, TraceError
from schedlab._core import version as core_version
from schedlab.api import (
    compare,
    generate,
    generators,
    load_spec,
    parse_duration,
    parse_trace,
    schedulers,
    simulate,
    validate,
)
from schedlab.result import Result

__version__ = core_version()

__all__ = [
    "Result",
    "SimError",
    "SpecError",
    "TraceError",
    "__version__",
    "compare",
    "generate",
    "generators",
    "load_spec",
    "parse_duration",
    "parse_trace",
    "schedulers",
    "simulate",
    "sweep",
    "validate",
]

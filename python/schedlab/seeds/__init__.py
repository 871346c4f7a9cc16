"""The seed experiments, one module per seed document (docs/seeds.md cites them).

Each seed module reads the figures its seed published from ``data/<seed>.json`` and
defines the experiments as generator calls; a report section
``section(ctx: schedlab.report.context.Context) -> SectionOutput`` renders them
(``section000`` for seed 000, whose parts import ``seed000``; ``seed001``; ``seed002``;
``seed003``, whose parts are ``seed003_model`` and ``seed003_board``; ``seed004``; and
:mod:`schedlab.crosscheck`, this host's cyclictest against its profile). :data:`SECTIONS` lists
them in page order; `schedlab reproduce` renders them. To add a seed, write its module and
add its section here. :data:`HOST_SECTIONS` are the sections that run on this machine's
kernel (``host000``, ``host003``, ``host004`` and :mod:`schedlab.hostcheck`), added by
``schedlab reproduce --host`` only.
"""

from __future__ import annotations

from schedlab import crosscheck, hostcheck
from schedlab.seeds import (
    host000,
    host003,
    host004,
    section000,
    seed001,
    seed002,
    seed003,
    seed004,
)

SECTIONS = (section000.section, seed001.section, seed002.section, seed003.section,
            seed004.section, crosscheck.section)
"""The report's sections, in page order."""

HOST_SECTIONS = (host000.section, host003.section, host004.section, hostcheck.section)
"""The sections ``schedlab reproduce --host`` adds: run on this machine's kernel."""

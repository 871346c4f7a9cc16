"""The seed experiments, one module per seed document (docs/seeds.md cites them).

Each module reads the figures its seed published from ``data/<seed>.json``, defines the
experiments as generator calls, and provides a report section
``section(ctx: schedlab.report.context.Context) -> SectionOutput``. :data:`SECTIONS` lists
them in page order; `schedlab reproduce` renders them. To add a seed, write its module and
append its section here.
"""

from __future__ import annotations

from schedlab.seeds import seed000, seed002

SECTIONS = (seed000.section, seed002.section)
"""The report's sections, in page order."""

"""The seed experiments, one module per seed document (see /work/shared/seeds).

Each module holds the figures its seed published (with the slide or table they come from),
the experiment definitions as generator calls, and a report section
``section(ctx: schedlab.reproduce.Context) -> schedlab.reproduce.SectionOutput``.
"""

"""The HTML report of `schedlab reproduce`: tables as data (:mod:`.table`), Jinja2
templates with autoescaping (:mod:`.render`, ``templates/``), and a reader of rendered
tables (:mod:`.parse`). The page has no external assets (inline CSS, images by relative
path), so the report directory can be copied or opened offline."""

from __future__ import annotations

from schedlab.report.parse import parse_tables
from schedlab.report.render import Markup, render, render_table
from schedlab.report.table import MISSING, Cell, CellView, Column, Table, fmt, parse_number

__all__ = [
    "MISSING",
    "Cell",
    "CellView",
    "Column",
    "Markup",
    "Table",
    "fmt",
    "parse_number",
    "parse_tables",
    "render",
    "render_table",
]

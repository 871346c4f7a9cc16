"""Tables as data: columns with a format kind, rows of values or :class:`Cell` overrides.

Every number the report shows goes through :func:`fmt`, so units and decimals agree:

- ``"us"``: microseconds, 2 decimals, thousands separated (``214,211.99``)
- ``"s"``: seconds, 3 decimals
- ``"ratio"``: ``1.23×``
- ``"int"``: an integer count, thousands separated
- ``"num"``: a number, 2 decimals
- ``"text"``: as is
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MISSING", "Cell", "CellView", "Column", "Table", "fmt", "parse_number"]

MISSING = "—"


def fmt(value: Any, kind: str = "text", decimals: int | None = None) -> str:
    """A value as a table cell's text. ``None`` and NaN give "—"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if kind == "text":
        return str(value)
    x = float(value)
    if kind == "int":
        return f"{round(x):,d}"
    if kind == "ratio":
        return f"{x:.{2 if decimals is None else decimals}f}×"
    default = {"us": 2, "s": 3, "num": 2}.get(kind)
    if default is None:
        raise ValueError(f"unknown format kind {kind!r}")
    return f"{x:,.{default if decimals is None else decimals}f}"


def parse_number(text: str) -> float | None:
    """Inverse of :func:`fmt` for numeric kinds (tests and scripts read tables back)."""
    t = text.strip().replace(",", "").rstrip("×")
    if t in ("", MISSING):
        return None
    return float(t)


@dataclass(frozen=True)
class Cell:
    """A table cell with overrides: its own format kind/decimals, CSS class, tooltip, link
    (a relative path keeps the report self-contained)."""

    value: Any
    kind: str | None = None
    decimals: int | None = None
    cls: str = ""
    title: str = ""
    href: str = ""


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = "text"
    #: Extra CSS class for the header and every cell (e.g. "pub" for published figures).
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class CellView:
    """What the template needs to draw one cell."""

    text: str
    classes: str
    title: str = ""
    href: str = ""


@dataclass
class Table:
    """A table rendered from data: ``rows[i][j]`` is the value for ``columns[j]``."""

    columns: list[Column]
    rows: list[list[Any]]
    caption: str = ""
    #: Optional header row above the column headers: (label, span, css class).
    groups: list[tuple[str, int, str]] = field(default_factory=list)
    id: str = ""

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"row {i} has {len(row)} cells, table has {len(self.columns)} columns")

    def view(self) -> list[list[CellView]]:
        """Every cell formatted, with its CSS classes."""
        return [[_cell_view(v, c) for v, c in zip(row, self.columns, strict=True)]
                for row in self.rows]


def _cell_view(value: Any, col: Column) -> CellView:
    cell = value if isinstance(value, Cell) else Cell(value)
    kind = cell.kind or col.kind
    classes = ["text" if kind == "text" else "num", col.cls, cell.cls]
    if cell.value is None:
        classes.append("missing")
    return CellView(text=fmt(cell.value, kind, cell.decimals),
                    classes=" ".join(dict.fromkeys(c for c in classes if c)),
                    title=cell.title, href=cell.href)

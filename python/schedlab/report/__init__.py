"""HTML rendering for `schedlab reproduce`: tables from data, figures, one self-contained page.

The page has no external assets (inline CSS, images by relative path beside it), so the
report directory can be copied or opened offline. Everything that shows a number goes
through :func:`fmt` so that units and decimals are consistent:

- ``"us"``: microseconds, 2 decimals, thousands separated (``214,211.99``)
- ``"s"``: seconds, 3 decimals
- ``"ratio"``: ``1.23×``
- ``"int"``: an integer count, thousands separated
- ``"text"``: escaped as is

A cell may be a plain value (formatted with its column's kind) or a :class:`Cell`, which
overrides the kind, the number of decimals, the CSS class or adds a tooltip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from schedlab.report.style import CSS

__all__ = [
    "Cell",
    "Column",
    "PageSection",
    "Table",
    "esc",
    "figure",
    "fmt",
    "link_list",
    "note",
    "paragraph",
    "parse_number",
    "parse_tables",
    "render_meta",
    "render_page",
    "render_table",
]

MISSING = "—"


def esc(text: object) -> str:
    """HTML-escape any value's text."""
    return html.escape(str(text), quote=True)


def fmt(value: Any, kind: str = "text", decimals: int | None = None) -> str:
    """Format a value for a table cell (plain text, not escaped). ``None``/NaN give "—"."""
    if value is None:
        return MISSING
    if isinstance(value, float) and math.isnan(value):
        return MISSING
    if kind == "text":
        return str(value)
    x = float(value)
    if kind == "us":
        return f"{x:,.{2 if decimals is None else decimals}f}"
    if kind == "s":
        return f"{x:,.{3 if decimals is None else decimals}f}"
    if kind == "ratio":
        return f"{x:.{2 if decimals is None else decimals}f}×"
    if kind == "int":
        return f"{round(x):,d}"
    if kind == "num":
        return f"{x:,.{2 if decimals is None else decimals}f}"
    raise ValueError(f"unknown format kind {kind!r}")


def parse_number(text: str) -> float | None:
    """Inverse of :func:`fmt` for numeric kinds (used by tests and scripts)."""
    t = text.strip().replace(",", "").rstrip("×")
    if t in ("", MISSING):
        return None
    return float(t)


@dataclass(frozen=True)
class Cell:
    """A table cell with overrides: its own format kind/decimals, CSS class, tooltip."""

    value: Any
    kind: str | None = None
    decimals: int | None = None
    cls: str = ""
    title: str = ""
    #: Make the cell's text a link (relative paths keep the report self-contained).
    href: str = ""


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = "text"
    #: Extra CSS class for the header and every cell (e.g. "pub" for published figures).
    cls: str = ""
    title: str = ""


@dataclass
class Table:
    """A table rendered from data: ``rows[i][j]`` is the value for ``columns[j]``."""

    columns: list[Column]
    rows: list[list[Any]]
    caption: str = ""
    #: Optional header row above the column headers: (label, span, css class).
    groups: list[tuple[str, int, str]] = field(default_factory=list)
    #: Small print under the table (already HTML).
    note_html: str = ""
    id: str = ""


def _cell_html(value: Any, col: Column) -> str:
    cell = value if isinstance(value, Cell) else Cell(value)
    kind = cell.kind or col.kind
    text = fmt(cell.value, kind, cell.decimals)
    classes = ["text" if kind == "text" else "num"]
    if col.cls:
        classes.append(col.cls)
    if cell.cls:
        classes.append(cell.cls)
    if cell.value is None and "missing" not in classes:
        classes.append("missing")
    title = f' title="{esc(cell.title)}"' if cell.title else ""
    body = f'<a href="{esc(cell.href)}">{esc(text)}</a>' if cell.href else esc(text)
    return f'<td class="{" ".join(classes)}"{title}>{body}</td>'


def render_table(table: Table) -> str:
    """The table as HTML (with caption, optional group header row and a note)."""
    for i, row in enumerate(table.rows):
        if len(row) != len(table.columns):
            raise ValueError(
                f"row {i} has {len(row)} cells, table has {len(table.columns)} columns"
            )
    out: list[str] = []
    tid = f' id="{esc(table.id)}"' if table.id else ""
    out.append(f"<table{tid}>")
    if table.caption:
        out.append(f"<caption>{esc(table.caption)}</caption>")
    out.append("<thead>")
    if table.groups:
        out.append("<tr>")
        for label, span, cls in table.groups:
            c = f' class="{esc(cls)}"' if cls else ""
            out.append(f'<th colspan="{span}"{c}>{esc(label)}</th>')
        out.append("</tr>")
    out.append("<tr>")
    for col in table.columns:
        c = f' class="{esc(col.cls)}"' if col.cls else ""
        t = f' title="{esc(col.title)}"' if col.title else ""
        out.append(f"<th{c}{t}>{esc(col.header)}</th>")
    out.append("</tr></thead><tbody>")
    for row in table.rows:
        cells = "".join(_cell_html(v, c) for v, c in zip(row, table.columns, strict=True))
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    if table.note_html:
        out.append(f'<p class="tablenote">{table.note_html}</p>')
    return "\n".join(out)


def paragraph(text: str) -> str:
    """A paragraph of plain text (escaped)."""
    return f"<p>{esc(text)}</p>"


def note(html_text: str, warn: bool = False) -> str:
    """A highlighted note box (``html_text`` is already HTML)."""
    cls = "note warn" if warn else "note"
    return f'<div class="{cls}">{html_text}</div>'


def figure(src_rel: str, caption: str, alt: str = "", svg_rel: str | None = None) -> str:
    """An <img> figure by relative path, with a link to the SVG version if given."""
    extra = f' (<a href="{esc(svg_rel)}">SVG</a>)' if svg_rel else ""
    return (
        f'<figure><img src="{esc(src_rel)}" alt="{esc(alt or caption)}">'
        f"<figcaption>{esc(caption)}{extra}</figcaption></figure>"
    )


def link_list(links: Iterable[tuple[str, str]]) -> str:
    """A list of (href, label) links."""
    items = "".join(f'<li><a href="{esc(h)}">{esc(lab)}</a></li>' for h, lab in links)
    return f"<ul>{items}</ul>"


def render_meta(meta: Mapping[str, str]) -> str:
    """The run metadata as a two-column table."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in meta.items())
    return f'<table class="meta"><tbody>{rows}</tbody></table>'


@dataclass(frozen=True)
class PageSection:
    """A rendered section as the page shows it."""

    id: str
    title: str
    html: str


def render_page(
    title: str,
    meta: Mapping[str, str],
    sections: Sequence[PageSection],
    intro_html: str = "",
) -> str:
    """The whole self-contained HTML document."""
    toc = "".join(f'<li><a href="#{esc(s.id)}">{esc(s.title)}</a></li>' for s in sections)
    body = "\n".join(
        f'<section id="{esc(s.id)}">\n<h2>{esc(s.title)}</h2>\n{s.html}\n</section>'
        for s in sections
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
{intro_html}
{render_meta(meta)}
<nav class="toc"><h3>Sections</h3><ul>{toc}</ul></nav>
</header>
<main>
{body}
</main>
<footer>Generated by <code>schedlab reproduce</code>.
Every table links to the specs that produced it;
rerun them with <code>schedlab run</code> to regenerate any number.</footer>
</body>
</html>
"""


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._id: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_body = False
        self._n = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._n += 1
            self._id = a.get("id") or f"table{self._n}"
            self.tables[self._id] = []
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._id is not None:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._id = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse_tables(page: str) -> dict[str, list[list[str]]]:
    """The body rows of every table in ``page`` as cell texts, keyed by table id (tables
    without one are ``table<N>``). For tests and for scraping a report back into data."""
    p = _TableParser()
    p.feed(page)
    return p.tables

"""Reading a rendered report's tables back into cell texts (tests and scripts)."""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["parse_tables"]


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
        if tag == "table":
            self._n += 1
            self._id = dict(attrs).get("id") or f"table{self._n}"
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
    without one are ``table<N>``)."""
    p = _TableParser()
    p.feed(page)
    return p.tables

"""HTML from Jinja2 templates (``report/templates``), autoescaped: values are text, and
only what a template itself writes is markup."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from schedlab.report.style import CSS
from schedlab.report.table import Table, fmt

__all__ = ["Markup", "render", "render_table"]


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("schedlab.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = fmt
    env.globals["CSS"] = Markup(CSS)
    return env


def render(template: str, **values: Any) -> Markup:
    """Render ``templates/<template>`` with ``values``; the result is markup."""
    return Markup(_environment().get_template(template).render(**values))


def render_table(table: Table, note: str | Markup = "") -> Markup:
    """One table, with an optional note under it (text is escaped, Markup is kept)."""
    return render("table.html.j2", table=table, note=note)

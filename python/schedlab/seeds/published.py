"""The figures the seed documents published, as stored in ``seeds/data/<seed>.json`` with
their provenance (document, slide or section, and how a garbled number was read).
docs/seeds.md cites the documents themselves."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["load"]


@cache
def load(seed: str) -> dict[str, Any]:
    """The published data of seed ``seed`` (e.g. ``"seed000"``)."""
    text = resources.files("schedlab.seeds").joinpath("data", f"{seed}.json").read_text(
        encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data

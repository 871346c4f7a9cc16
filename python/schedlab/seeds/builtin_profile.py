"""What every fitted built-in machine profile shares: where its file lives in a source
tree, its exact text, and the command line that refits it (``python -m
schedlab.seeds.<module> [--write]``).

The profiles themselves are compiled into the simulator from
``crates/schedlab-spec/profiles/<name>.json``; the modules that fit them
(:mod:`.board000`, :mod:`.seed003_board`) rewrite those files with :func:`refit_main`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: The directory of the built-in profiles in a source tree.
PROFILES_DIR = Path(__file__).resolve().parents[3] / "crates/schedlab-spec/profiles"


def builtin_file(name: str) -> Path:
    """Where the built-in profile ``name`` lives in a source tree."""
    return PROFILES_DIR / f"{name}.json"


def profile_text(profile: Mapping[str, Any]) -> str:
    """The built-in file's exact text."""
    return json.dumps(profile, indent=2, ensure_ascii=False) + "\n"


def refit_main(prog: str, description: str, name: str,
               fitted_profile: Callable[[], Mapping[str, Any]],
               argv: list[str] | None = None) -> int:
    """Print the refitted profile, or with ``--write`` rewrite its built-in file."""
    path = builtin_file(name)
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--write", action="store_true",
                    help=f"rewrite {path.relative_to(PROFILES_DIR.parents[1])}")
    args = ap.parse_args(argv)
    text = profile_text(fitted_profile())
    if args.write:
        path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0

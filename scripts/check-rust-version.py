#!/usr/bin/env python3
"""Check that the workspace's `rust-version` is true.

It must be at least every dependency's own `rust-version` (cargo metadata), and every
workspace crate must inherit it, so that clippy's `incompatible_msrv` lint (run by
`make test`) flags any standard-library API newer than it. Exit 1 with the offenders.
"""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def main() -> int:
    declared = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"][
        "rust-version"
    ]
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
    )
    members = set(meta["workspace_members"])
    problems = []
    for p in meta["packages"]:
        rv = p.get("rust_version")
        if p["id"] in members:
            if rv != declared and version(rv or "0") != version(declared):
                problems.append(f"{p['name']}: declares {rv}, not the workspace's {declared}")
        elif rv and version(rv) > version(declared):
            problems.append(f"dependency {p['name']} {p['version']} needs Rust {rv}")
    if problems:
        print(f"rust-version {declared} is not true:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    print(f"rust-version {declared}: every crate inherits it, no dependency needs more")
    return 0


if __name__ == "__main__":
    sys.exit(main())

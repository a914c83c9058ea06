"""The A/B options the completion benchmarks share: ``--set`` for a server setting, ``--body``
for a key of the Embedded Completion agent's request body, and what each writes into the
benchmark's config home.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

AB_AGENT = "Embedded Completion (A/B)"
"""The user agent ``--body`` writes: the bundled one with some body keys changed."""


def add_ab_options(parser: argparse.ArgumentParser, set_example: str) -> None:
    """Add ``--set SECTION.KEY=VALUE`` (``set_example`` in its help) and ``--body KEY=VALUE``."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help=f"a server setting for an A/B, as TOML (e.g. {set_example})",
    )
    parser.add_argument(
        "--body",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a key of the Embedded Completion agent's body for an A/B, as TOML (max_tokens=64)",
    )


def settings_toml(sets: Iterable[str], sections: dict[str, list[str]] | None = None) -> str:
    """Return settings.toml: ``sections``' lines (``name = value`` by section), then ``sets``."""
    sections = {name: list(lines) for name, lines in (sections or {}).items()}
    for item in sets:
        key, _, value = item.partition("=")
        section, _, name = key.strip().rpartition(".")
        if not section or not name or not value:
            raise SystemExit(f"--set {item!r}: expected SECTION.KEY=TOML_VALUE")
        sections.setdefault(section, []).append(f"{name} = {value.strip()}")
    return "".join(f"[{k}]\n" + "".join(v + "\n" for v in vs) for k, vs in sections.items())


def write_ab_agent(config: Path, body: list[str]) -> None:
    """Write a user agent extending Embedded Completion with ``body``'s keys; route to it."""
    lines = []
    for item in body:
        key, _, value = item.partition("=")
        if not key.strip() or not value.strip():
            raise SystemExit(f"--body {item!r}: expected KEY=TOML_VALUE")
        lines.append(f"{key.strip()} = {value.strip()}")
    (config / "agents").mkdir(exist_ok=True)
    (config / "agents" / "ab.toml").write_text(
        f'schema_version = 1\nextends = "Embedded Completion"\nname = "{AB_AGENT}"\n'
        'model = "gemma3-270m"\n[body]\n' + "\n".join(lines) + "\n"
    )
    (config / "pipelines.toml").write_text(f'[pipelines]\ncode_completion = ["{AB_AGENT}"]\n')

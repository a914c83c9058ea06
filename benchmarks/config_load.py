"""Time loading and validating the bundled configuration (not part of the test run).

Run: .venv/bin/python benchmarks/config_load.py [--runs N]
Prints a table: median and p90 of a full load (read, extends, dry-render of every agent), and
of building one agent request from the loaded snapshot.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.core.agent import AgentFactory


def timed(fn, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        paths = ConfigPaths(Path(tmp) / "c", Path(tmp) / "d", bundled_root())
        config = load_configuration(paths)
        load = timed(lambda: load_configuration(paths), runs)
        factory = AgentFactory(config)
        name = "Claude Chat — Sonnet"
        agent = factory.create(name)
        ctx = synthetic_context(agent.model)
        build = timed(lambda: agent.build_request(ctx, None), runs * 50)
    rows = [
        (f"load bundled config ({len(config.agents)} agents)", load),
        (f"build one request ({name}, synthetic ctx)", build),
    ]
    print(f"{'measurement':<52} {'median ms':>10} {'p90 ms':>8}")
    for label, samples in rows:
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{label:<52} {statistics.median(samples):>10.2f} {p90:>8.2f}")


if __name__ == "__main__":
    main()

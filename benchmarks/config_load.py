"""Time loading and validating the bundled configuration (not part of the test run).

Run: .venv/bin/python benchmarks/config_load.py [--runs N] [--processes N]
Prints a table: median and p90 of a full load (read, extends, dry-render of every agent) without
and with a warm body-template code cache, of building one agent request from the loaded snapshot,
and of the first load in a fresh process (what a server start pays) without the code cache, cold
(compiling and writing it) and warm, with the time spent compiling body templates.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.core.agent import AgentFactory

# One load in a fresh process: its time and the part spent in BodyCompiler.compile, in ms.
CHILD = """
import json, tempfile, time
from pathlib import Path
from qodeassist_lsp.config import templating
from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.lsp.sections import SECTIONS

spent = [0.0]
real = templating.BodyCompiler.compile

def timed(self, source):
    start = time.perf_counter()
    try:
        return real(self, source)
    finally:
        spent[0] += time.perf_counter() - start

templating.BodyCompiler.compile = timed
tmp = Path(tempfile.mkdtemp())
start = time.perf_counter()
config = load_configuration(
    ConfigPaths(tmp / "c", tmp / "d", bundled_root()), (), None, SECTIONS,
    templating.default_code_cache_path(),
)
load = (time.perf_counter() - start) * 1000
print(json.dumps({"load": load, "compile": spent[0] * 1000}))
"""


def timed(fn, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def fresh_loads(processes: int) -> dict[str, tuple[list[float], list[float]]]:
    """Return (load ms, body compile ms) per fresh process: uncached, cold and warm."""
    found: dict[str, tuple[list[float], list[float]]] = {
        kind: ([], []) for kind in ("uncached", "cold", "warm")
    }
    with tempfile.TemporaryDirectory() as cache:
        base = {**os.environ, "QODEASSIST_CACHE_DIR": cache}
        base.pop("QODEASSIST_NO_STARTUP_CACHE", None)
        for _ in range(processes):
            for kind in found:
                env = dict(base)
                if kind == "uncached":
                    env["QODEASSIST_NO_STARTUP_CACHE"] = "1"
                if kind == "cold":
                    for file in Path(cache).iterdir():
                        file.unlink()
                out = subprocess.run(
                    [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True
                )
                if out.returncode:
                    raise SystemExit(out.stderr)
                report = json.loads(out.stdout)
                found[kind][0].append(report["load"])
                found[kind][1].append(report["compile"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--processes", type=int, default=7, help="fresh processes per kind")
    args = parser.parse_args()
    runs = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        paths = ConfigPaths(Path(tmp) / "c", Path(tmp) / "d", bundled_root())
        code_cache = Path(tmp) / "jinja.marshal"
        config = load_configuration(paths, code_cache=code_cache)
        load = timed(lambda: load_configuration(paths), runs)
        warm = timed(lambda: load_configuration(paths, code_cache=code_cache), runs)
        factory = AgentFactory(config)
        name = "Claude Chat — Sonnet"
        agent = factory.create(name)
        ctx = synthetic_context(agent.model)
        build = timed(lambda: agent.build_request(ctx, None), runs * 50)
    rows = [
        (f"load bundled config ({len(config.agents)} agents)", load),
        ("load bundled config, code cache warm", warm),
        (f"build one request ({name}, synthetic ctx)", build),
    ]
    if args.processes > 1:
        for kind, (loads, compiles) in fresh_loads(args.processes).items():
            rows.append((f"fresh process, first load, {kind}", loads))
            rows.append((f"  of which body templates compile, {kind}", compiles))
    print(f"{'measurement':<52} {'median ms':>10} {'p90 ms':>8}")
    for label, samples in rows:
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{label:<52} {statistics.median(samples):>10.2f} {p90:>8.2f}")


if __name__ == "__main__":
    main()

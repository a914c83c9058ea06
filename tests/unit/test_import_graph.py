"""The package's modules import each other without a circle (``TYPE_CHECKING`` imports too).

import-linter's layers keep the packages in order; inside a package nothing did, and circles
came back (issue 44): a module that imports one which imports it back can only work through a
lazy import or a ``TYPE_CHECKING`` block, and breaks as soon as someone moves a line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import grimp

import qodeassist_lsp


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Return the strongly connected groups of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            targets = edges[module]
            if position < len(targets):
                work.append((module, position + 1))
                target = targets[position]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def _described(graph: grimp.ImportGraph, group: list[str]) -> str:
    lines = []
    for importer in group:
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported in group:
                details = graph.get_import_details(importer=importer, imported=imported)
                where = ", ".join(str(d["line_number"]) for d in details)
                lines.append(f"  {importer} -> {imported} (line {where})")
    return "\n".join(lines)


def test_the_circle_finder_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.d", imported="p.a")
    assert _circles(graph) == [["p.a", "p.b", "p.c"]]


def test_no_module_of_the_package_imports_itself_back() -> None:
    graph = grimp.build_graph("qodeassist_lsp", cache_dir=None)
    circles = _circles(graph)
    report = "\n".join(f"circle {i + 1}:\n{_described(graph, g)}" for i, g in enumerate(circles))
    assert not circles, (
        "these modules import each other (move the shared piece into the lower module or a new "
        f"small one):\n{report}"
    )


THREAD_SAFE_EXCEPTIONS = {"qodeassist_lsp.cli": "imported by the entry point before any thread"}


def _run_at_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Yield the imports a module runs when imported (not in functions or TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _run_at_import(node.body)
            yield from _run_at_import(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _run_at_import(block)
        elif isinstance(node, ast.With):
            yield from _run_at_import(node.body)


def _own_imports(package: str, init: Path) -> list[str]:
    """Return the modules of ``package`` that its ``__init__`` imports when it runs."""
    own = []
    for node in _run_at_import(ast.parse(init.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:  # relative: inside the package by definition
                own.append("." * node.level + target)
            elif target.startswith(package + "."):
                own.append(target)
        else:
            own.extend(a.name for a in node.names if a.name.startswith(package + "."))
    return own


def test_the_init_rule_sees_imports_at_import_time_only(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        "from typing import TYPE_CHECKING\nfrom p.a import x\nif TYPE_CHECKING:\n"
        "    from p.b import y\ndef f():\n    from p.c import z\ntry:\n    import p.d\n"
        "except ImportError:\n    pass\nfrom . import e\n"
    )
    assert _own_imports("p", init) == ["p.a", "p.d", "."]


def test_no_package_init_imports_its_own_modules() -> None:
    """A package ``__init__`` that imports its modules deadlocks two importing threads.

    Python takes a module's import lock before its parent package's: a worker thread importing
    ``p.m`` while the event loop runs ``p/__init__`` (which imports ``p.m``) waits for ``p``,
    which waits for ``p.m``: ``_DeadlockError`` (a chat sent while the configuration loaded).
    A lazy import inside a function runs after the package is imported, and is fine.
    """
    root = Path(qodeassist_lsp.__file__).parent
    offenders = []
    for init in sorted(root.rglob("__init__.py")):
        relative = init.parent.relative_to(root.parent)
        package = ".".join(relative.parts)
        own = _own_imports(package, init)
        if own and package not in THREAD_SAFE_EXCEPTIONS:
            offenders.append(f"  {package} imports {', '.join(own)}")
    assert not offenders, (
        "these package __init__ modules import their own modules when imported (import from "
        "the module itself instead):\n" + "\n".join(offenders)
    )

"""The package's modules import each other without a circle (``TYPE_CHECKING`` imports too).

import-linter's layers keep the packages in order; inside a package nothing did, and circles
came back (issue 44): a module that imports one which imports it back can only work through a
lazy import or a ``TYPE_CHECKING`` block, and breaks as soon as someone moves a line.
"""

from __future__ import annotations

import grimp


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

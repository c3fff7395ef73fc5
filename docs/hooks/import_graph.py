"""The import graph of kernelindex_sdk, drawn as text for docs/architecture.md.

``python docs/hooks/import_graph.py`` rewrites the drawing between the markers in
docs/architecture.md; tests/test_architecture.py fails when the drawing is out of date
or when any two modules import each other, directly or round a longer circle.
Built with grimp, the graph library import-linter runs on (the [dev] extra).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import grimp

__all__ = ["ARCHITECTURE", "circles", "drawing", "imports_leaving", "module_graph", "update"]

ARCHITECTURE = Path(__file__).resolve().parents[1] / "architecture.md"
_START = "<!-- import-graph:start (docs/hooks/import_graph.py) -->"
_END = "<!-- import-graph:end -->"
_PACKAGE = "kernelindex_sdk"
# Modules drawn as one box: the CLI with its entry.
_BOXES = {"__main__": "_cli"}
_LABELS = {
    "_analysis": "_analysis/ (runs, families, labels, tables, rendering, plots, bench summary)",
    "kernelindex_sdk": "kernelindex_sdk (__init__: the public API)",
    "_base": "_base/ (schemas, files, numbers, timestamps, names, noise, units, display)",
    "errors": "errors/ (the exceptions, their message text)",
}


def module_graph() -> grimp.ImportGraph:
    """The package's modules and the imports between them (type-only ones included)."""
    return grimp.build_graph(_PACKAGE)


def _box(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return _PACKAGE
    return _BOXES.get(parts[1], parts[1])


def _box_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        edges.setdefault(_box(module), set())
        for imported in graph.find_modules_directly_imported_by(module):
            if _box(imported) != _box(module):
                edges[_box(module)].add(_box(imported))
    return edges


def _imports(graph: grimp.ImportGraph, module: str) -> Iterator[str]:
    return iter(sorted(graph.find_modules_directly_imported_by(module)))


def imports_leaving(graph: grimp.ImportGraph, package: str) -> list[tuple[str, str]]:
    """Every (importer, imported) pair where a module of ``package`` imports one of ours
    outside it, type-only imports included."""
    inside = {package, *graph.find_descendants(package)}
    return sorted(
        (module, imported)
        for module in inside
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in inside
    )


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other, round any circle (Tarjan's SCCs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        # Iterative, so a deep graph cannot exhaust the stack.
        work = [(root, _imports(graph, root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _reduced(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each box's imports less those reached through another of them (transitive reduction)."""

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(edges[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(edges[node])
        return seen

    return {
        box: {t for t in targets if not any(t in reach(o) for o in targets - {t})}
        for box, targets in edges.items()
    }


def _ranks(edges: dict[str, set[str]]) -> dict[str, int]:
    rank: dict[str, int] = {}

    def of(box: str, path: tuple[str, ...] = ()) -> int:
        if box in path:
            raise ValueError(f"the boxes import each other: {' -> '.join((*path, box))}")
        if box not in rank:
            rank[box] = 1 + max((of(t, (*path, box)) for t in edges[box]), default=0)
        return rank[box]

    for box in edges:
        of(box)
    return rank


def drawing(graph: grimp.ImportGraph | None = None) -> str:
    """The graph as text: one row per box, highest layer first, with its direct imports."""
    edges = _box_edges(module_graph() if graph is None else graph)
    rank = _ranks(edges)
    reduced = _reduced(edges)
    width = max(len(_LABELS.get(b, b)) for b in edges)
    lines = []
    for box in sorted(edges, key=lambda b: (-rank[b], b)):
        targets = ", ".join(sorted(reduced[box], key=lambda t: (-rank[t], t)))
        arrow = f" --> {targets}" if targets else ""
        lines.append(f"{rank[box]:>2}  {_LABELS.get(box, box):<{width}}{arrow}".rstrip())
    return "\n".join(lines) + "\n"


def _block(text: str) -> str:
    return f"{_START}\n\n```text\n{text}```\n\n{_END}"


def update(path: Path = ARCHITECTURE, text: str | None = None) -> bool:
    """Write the drawing into ``path`` between its markers; whether anything changed."""
    page = path.read_text(encoding="utf-8")
    head, rest = page.split(_START, 1)
    _, tail = rest.split(_END, 1)
    new = head + _block(drawing() if text is None else text) + tail
    if new == page:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def current_block(path: Path = ARCHITECTURE) -> str:
    """The drawing docs/architecture.md holds now."""
    page = path.read_text(encoding="utf-8")
    return page[page.index(_START) : page.index(_END) + len(_END)]


def main(argv: Iterable[str] = ()) -> int:
    del argv
    print("updated" if update() else "up to date", ARCHITECTURE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The package's layout holds: no import circles, the drawing is current, no public name lost.

The layer rules themselves are import-linter contracts (``lint-imports`` in CI).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))

import import_graph  # noqa: E402

# Every public module (no underscore in its path) and its __all__, as main exported them
# (at b4c3122) before the package was regrouped (issue 21), and the names added since.
PUBLIC = json.loads((ROOT / "tests" / "public_names.json").read_text("utf-8"))
# Modules that import torch (the [bench] extra).
_NEEDS_TORCH = "kernelindex_sdk.reference_kernels"


@pytest.fixture(scope="module")
def graph() -> object:
    return import_graph.module_graph()


def test_no_modules_import_each_other(graph: object) -> None:
    """Type-only imports count: a circle makes the order modules load in matter."""
    assert import_graph.circles(graph) == []  # type: ignore[arg-type]


def test_circles_are_found_round_any_length() -> None:
    """The check above can fail: a three-module circle and a two-module one are found."""
    grimp = pytest.importorskip("grimp")
    fake = grimp.ImportGraph()
    for a, b in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "p.e"), ("p.e", "p.d")]:
        fake.add_import(importer=a, imported=b)
    fake.add_import(importer="p.f", imported="p.a")
    assert import_graph.circles(fake) == [["p.a", "p.b", "p.c"], ["p.d", "p.e"]]


def test_errors_import_nothing_of_ours_outside_the_package(graph: object) -> None:
    """Every module may import errors: it is the bottom layer, type-only imports included."""
    assert import_graph.imports_leaving(graph, "kernelindex_sdk.errors") == []  # type: ignore[arg-type]


def test_an_import_leaving_a_package_is_found() -> None:
    """The check above can fail: an import from a package's submodule to a module outside."""
    grimp = pytest.importorskip("grimp")
    fake = grimp.ImportGraph()
    for module in ("p", "p.errors", "p.errors._text", "p._base", "p._base.display"):
        fake.add_module(module)
    fake.add_import(importer="p.errors", imported="p.errors._text")
    fake.add_import(importer="p._base.display", imported="p.errors._text")
    assert import_graph.imports_leaving(fake, "p.errors") == []
    fake.add_import(importer="p.errors._text", imported="p._base.display")
    assert import_graph.imports_leaving(fake, "p.errors") == [("p.errors._text", "p._base.display")]


def test_the_drawing_in_the_docs_is_the_graph(graph: object) -> None:
    """docs/architecture.md shows the graph as it is; `python docs/hooks/import_graph.py`
    redraws it."""
    expected = import_graph._block(import_graph.drawing(graph))  # type: ignore[arg-type]
    assert import_graph.current_block() == expected


def test_the_drawing_puts_every_box_above_what_it_imports(graph: object) -> None:
    rows = import_graph.drawing(graph).splitlines()  # type: ignore[arg-type]
    layer = {}
    for row in rows:
        rank, rest = row.split(None, 1)
        layer[rest.split(" (")[0].split(" -->")[0].strip().rstrip("/")] = int(rank)
    for row in rows:
        rank, rest = row.split(None, 1)
        if "-->" in rest:
            for target in rest.split("-->")[1].split(","):
                assert layer[target.strip()] < int(rank), row


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_still_import(module: str) -> None:
    """Every name a public module exported before the regrouping still imports from it."""
    if module.startswith(_NEEDS_TORCH):
        pytest.importorskip("torch")
    found = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(found, name)]
    assert missing == []
    assert set(PUBLIC[module]) <= set(getattr(found, "__all__", []))


def test_every_name_in_an_all_exists() -> None:
    """No public module lists a name it does not have."""
    for module in PUBLIC:
        if module.startswith(_NEEDS_TORCH) and importlib.util.find_spec("torch") is None:
            continue
        found = importlib.import_module(module)
        assert [n for n in getattr(found, "__all__", []) if not hasattr(found, n)] == [], module


def test_the_package_top_is_the_documented_one() -> None:
    """docs/architecture.md names every entry at the package's top, says why it is there,
    and states their number: a new entry needs a reason written down."""
    top = ROOT / "src" / "kernelindex_sdk"
    entries = sorted(
        p.name + ("/" if p.is_dir() else "")
        for p in top.iterdir()
        if p.name != "__pycache__" and not p.name.startswith(".")
    )
    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    section = page.split("## The package's top", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    assert sorted(row[1].strip().strip("`") for row in rows) == entries
    assert all(row[3].strip() for row in rows)
    assert f"**{len(entries)} entries**" in section
    private = [e for e in entries if e.startswith("_") and not e.startswith("__")]
    assert private == ["_analysis/", "_base/", "_cli/", "_json/", "_version.py"]


def test_test_modules_have_unique_basenames() -> None:
    """tests/ has no __init__.py (pytest imports each file by its basename, `pythonpath =
    ["tests"]`): two test files of one name in two folders would not both be collected."""
    names = [p.name for p in (ROOT / "tests").rglob("*.py") if "__pycache__" not in p.parts]
    assert sorted({n for n in names if names.count(n) > 1} - {"conftest.py"}) == []

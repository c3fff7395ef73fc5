"""The importers' field tables in the docs: every field the fixtures hold is listed with
what it becomes, and the published counts are those of the tables."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _foreign import FIXTURES

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
FORMATS = ("nvbench", "gbench", "pytest-benchmark", "tritonbench")
KINDS = ("mapped", "kept", "dropped")
_ROW = re.compile(r"^\| (?P<cell>[^|]+?) \| (?P<kind>\w+) \|", re.MULTILINE)
_CODE = re.compile(r"`([^`]+)`")


def _table(fmt: str) -> list[tuple[str, str]]:
    """(the field cell, its kind) of each row of a format page's field table."""
    text = (DOCS / "importers" / f"{fmt}.md").read_text("utf-8")
    section = text[text.index("## Fields") :]
    return [(m["cell"], m["kind"]) for m in _ROW.finditer(section) if m["cell"] != "field"]


def _fields(fmt: str) -> set[str]:
    """The field paths the table names (a cell's first code span)."""
    return {found.group(1) for cell, _ in _table(fmt) if (found := _CODE.match(cell))}


def _paths(value: Any, path: str, listed: set[str]) -> Iterator[str]:
    """The field paths of a JSON value (``a.b[].c``), stopping at a listed path."""
    if path in listed:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, f"{path}.{key}" if path else key, listed)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item, f"{path}[]", listed)
    else:
        yield path


def _covered(path: str, listed: set[str]) -> bool:
    """Listed as itself, or under a ``prefix.*`` row one level up."""
    for field in listed:
        if field.endswith(".*") and path.startswith(field[:-1]):
            rest = path[len(field) - 1 :].replace("[]", "")
            if "." not in rest:
                return True
    return False


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_row_says_mapped_kept_or_dropped(fmt: str) -> None:
    rows = _table(fmt)
    assert len(rows) >= 15
    assert {kind for _, kind in rows} <= set(KINDS)
    assert len({field for field, _ in rows}) == len(rows)


@pytest.mark.parametrize("fmt", ["nvbench", "gbench", "pytest-benchmark"])
def test_every_field_of_the_fixtures_is_in_the_table(fmt: str) -> None:
    listed = _fields(fmt)
    missing = set()
    for source in sorted((FIXTURES / fmt).rglob("*.json")):
        for path in _paths(json.loads(source.read_text("utf-8")), "", listed):
            if path not in listed and not _covered(path, listed):
                missing.add(path)
    assert missing == set()


def test_the_published_counts_are_those_of_the_tables() -> None:
    text = (DOCS / "importers.md").read_text("utf-8")
    for fmt in FORMATS:
        counts = Counter(kind for _, kind in _table(fmt))
        row = (
            f"| {fmt} | {sum(counts.values())} | "
            + " | ".join(str(counts[k]) for k in KINDS)
            + " |"
        )
        assert row in text, row

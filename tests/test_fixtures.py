"""The fixture records are in the forms the writers write: tests read what users get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelindex_sdk import dumps
from kernelindex_sdk.documents import json_line

FIXTURES = Path(__file__).parent / "fixtures"
JSON_LINES = sorted(FIXTURES.rglob("*.jsonl"))
PUBLISHED = sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", JSON_LINES, ids=[p.name for p in JSON_LINES])
def test_json_lines_fixture_is_in_the_compact_form(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    assert lines
    for number, line in enumerate(lines, 1):
        assert line == json_line(json.loads(line)), f"{path.name}:{number}"


@pytest.mark.parametrize("path", PUBLISHED, ids=[p.name for p in PUBLISHED])
def test_json_fixture_is_in_the_published_form(path: Path) -> None:
    text = path.read_text("utf-8")
    assert text == dumps(json.loads(text))

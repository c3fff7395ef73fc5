"""Red team: ``history --format markdown`` writes record text as text, never as markup.

A commit, a label or any other record-derived string holding a pipe forged a table
cell; ``*``, ``<`` and backticks became emphasis and HTML in a pull-request comment.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from _history_records import bundle, template, write_jsonl

from kernelindex_sdk._cli import main

HOSTILE = ["a|b", "*em*", "<b>x</b>", "`code`", "[l](http://e)", "x\\|y"]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def _cells(line: str) -> int:
    """The number of cells GitHub sees in a table row: unescaped pipes between them."""
    count, escaped = 0, False
    for char in line:
        if char == "|" and not escaped:
            count += 1
        escaped = char == "\\" and not escaped
    return count - 1


@pytest.mark.parametrize("evil", HOSTILE)
def test_history_markdown_escapes_commits_and_labels(tmp_path: Path, evil: str) -> None:
    base = template()
    docs = []
    for i in range(8):
        doc = bundle(base, i, 1000 if i < 4 else 1900, commit=f"{evil}{i}", branch="main")
        doc["run"]["metadata"].setdefault("labels", {})["team"] = evil if i < 4 else f"{evil}!"
        docs.append(doc)
    records = write_jsonl(tmp_path / "r.jsonl", docs)
    db = str(tmp_path / "ki.sqlite3")
    status, _, err = _run("ingest", str(records), "--db", db)
    assert status == 0, err
    status, out, err = _run("history", "--db", db, "--format", "markdown", "--points", "0")
    assert status == 0, err
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 1 + 2 + 8, out  # a change table and a point table
    widths = [_cells(line) for line in rows]
    assert widths == [8] * 3 + [5] * 10, out
    for line in out.splitlines():
        for raw in ("*em*", "<b>", "`code`", "[l]"):
            assert raw not in line, line

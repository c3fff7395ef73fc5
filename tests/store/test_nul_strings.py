"""A schema-valid record holding U+0000 (NUL) in a string is refused alike by both stores.

PostgreSQL's text and jsonb cannot hold a NUL; SQLite could. The rule is one for both:
the record is a problem of its file (``store-nul``, naming file:line and the pointer),
every such record is reported, the file is refused whole as for any invalid record, and
the next files go in. Storing it escaped instead would store another JSON value than the
record's (a ``"\\\\u0000"`` string is not a NUL), under the record's digest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import run_in_process
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.store import Store


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(dumps(doc, indent=None) + "\n" for doc in docs), encoding="utf-8")
    return path


def _named(name: str, **options: Any) -> dict[str, Any]:
    doc = bundle(params={"tokens": len(name), "dtype": "fp32"}, **options)
    doc["run"]["metadata"]["name"] = name
    return doc


def test_a_nul_in_a_label_refuses_its_file_and_the_next_file_goes_in(
    store: Store, tmp_path: Path
) -> None:
    with_nul = _named("nul-label")
    with_nul["run"]["metadata"]["labels"] = {"note": "a\x00b"}
    in_note = _named("nul-note")
    in_note["run"]["metadata"]["annotations"] = {"example.com/note": "\x00"}
    first = _write(tmp_path / "first.jsonl", [_named("fine-one"), with_nul, in_note])
    second = _write(tmp_path / "second.jsonl", [_named("fine-two")])
    report = store.ingest([first, second])
    assert (report.added, report.refused) == (1, 3)
    why = (
        "a string holding U+0000 (NUL) cannot be stored: PostgreSQL's text and jsonb cannot"
        " hold it, and both stores refuse it alike [store-nul]"
    )
    assert [str(problem) for problem in report.problems] == [
        f"{first}:2: /run/metadata/labels/note: {why}",
        f"{first}:3: /run/metadata/annotations/example.com~1note: {why}",
    ]
    assert [row.name for row in store.rows()] == ["fine-two"]


def test_a_nul_in_a_spec_string_is_refused_from_the_command_line(
    store_url: str, tmp_path: Path
) -> None:
    doc = _named("nul-spec", entry_point="jsd\x00forward")
    refused = _write(tmp_path / "nul.jsonl", [doc])
    fine = _write(tmp_path / "fine.jsonl", [_named("fine")])
    status, _, err = run_in_process("ingest", "--db", store_url, str(refused), str(fine))
    assert status == 1
    assert "Traceback" not in err
    assert f"{refused}:1: /run/spec/implementation/entryPoint: a string holding U+0000" in err
    assert "[store-nul]" in err
    assert "ingested 2 file(s): 1 record(s) added, 0 skipped" in err


def test_an_escaped_backslash_before_u0000_is_no_nul(store: Store, tmp_path: Path) -> None:
    """The text ``\\\\u0000`` is a backslash and ``u0000``: stored as any string."""
    doc = _named("not-nul")
    doc["run"]["metadata"]["labels"] = {"note": "\\u0000"}
    path = _write(tmp_path / "a.jsonl", [doc])
    assert "\\\\u0000" in path.read_text(encoding="utf-8")
    report = store.ingest([path])
    assert (report.added, report.problems) == (1, ())
    (row,) = store.rows()
    assert dict(row.labels) == {"note": "\\u0000"}
    assert json.loads(store.record_text("not-nul")) == doc


@pytest.mark.parametrize("argument", ["commit", "branch"])
def test_provenance_holding_a_nul_is_the_callers_mistake(
    store: Store, tmp_path: Path, argument: str
) -> None:
    path = _write(tmp_path / "a.jsonl", [_named("given")])
    with pytest.raises(ArgumentError, match="U\\+0000"):
        store.ingest([path], **{argument: "a\x00b"})
    assert store.rows() == []
    # The same value without it is provenance as before.
    assert store.ingest([path], **{argument: "ab"}).added == 1
    (row,) = store.rows()
    assert (row.commit if argument == "commit" else row.branch) == "ab"

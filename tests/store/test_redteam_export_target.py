"""Red team: ``export`` writes JSON Lines only where JSON Lines belong.

``export -o out.json`` wrote eight lines into a .json file, which ``validate`` then
refused ("extra data"); ``-o ''`` said ": Is a directory". Both are now refused before
the store is read, as bench and import refuse them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kernelindex_sdk import KernelIndexError
from kernelindex_sdk._cli import main
from kernelindex_sdk.store import open_store

FIXTURE = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "ki.sqlite3")
    status, _, err = _run("ingest", str(FIXTURE), "--db", path)
    assert status == 0, err
    return path


@pytest.mark.parametrize("name", ["out.json", "OUT.JSON", "out.txt", "out"])
def test_export_refuses_a_target_that_is_not_json_lines(db: str, tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    status, stdout, stderr = _run("export", "--db", db, "-o", str(target))
    assert status == 2, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert ".jsonl" in stderr
    assert not target.exists()


def test_export_refuses_an_existing_json_document_and_keeps_it(db: str, tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text('{"kept": true}\n')
    status, _, stderr = _run("export", "--db", db, "-o", str(target))
    assert status == 2, stderr
    assert target.read_text() == '{"kept": true}\n'


def test_export_refuses_an_empty_path_in_one_clear_line(db: str) -> None:
    status, _, stderr = _run("export", "--db", db, "-o", "")
    assert status == 2, stderr
    assert "empty path" in stderr


def test_store_export_refuses_a_json_target(db: str, tmp_path: Path) -> None:
    with open_store(db, create=False) as store, pytest.raises(KernelIndexError):
        store.export(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_export_to_jsonl_still_works(db: str, tmp_path: Path) -> None:
    assert _run("export", "--db", db, "-o", str(tmp_path / "X.JSONL"))[0] == 0
    assert (tmp_path / "X.JSONL").read_text().count("\n") == 64

"""A store edited by hand below its values: a column of the layout dropped, a text column
holding bytes that are not UTF-8 (SQLite keeps any bytes), a run deleted whose text stays
behind. Each is one line naming the store (``damaged store``, exit 1) for every command
that meets it; they were ``sqlite: no such column``, ``Could not decode to UTF-8`` and
``UNIQUE constraint failed: run_texts.seq`` with exit 2, as if the user's input were
wrong.
"""

# The damage is constant SQL of this module.
# ruff: noqa: S608

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _sql import query

from kernelindex_sdk.store import open_store

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _stored(store_url: str) -> str:
    with open_store(store_url) as store:
        assert store.ingest([SWEEP], commit="c1", branch="main").ok
        return store.url.shown


def _says_damaged(shown: str, command: list[str], meaning: str) -> None:
    status, _, err = run_in_process(*command)
    assert status == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"kernelindex: {shown}: damaged store: {meaning}"), err


def test_a_dropped_column_is_a_damaged_store(store_url: str, tmp_path: Path) -> None:
    shown = _stored(store_url)
    query(store_url, "ALTER TABLE runs DROP COLUMN degraded")
    meaning = "a table lacks a column of its layout"
    _says_damaged(shown, ["history", "--db", store_url], meaning)
    _says_damaged(shown, ["site", "--db", store_url, str(tmp_path / "site")], meaning)
    new = tmp_path / "new.jsonl"
    records = [json.loads(line) for line in SWEEP.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["run"]["metadata"]["name"] += "-new"
    new.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    # A PostgreSQL writer checks its columns' types first: its message names the column.
    _says_damaged(shown, ["ingest", "--db", store_url, str(new)], "")


def test_a_text_left_without_its_run_is_a_damaged_store_to_ingest(tmp_path: Path) -> None:
    """SQLite numbers a new run after the largest run left, so the text holds its number
    (PostgreSQL's sequence never gives a number again)."""
    store_url = str(tmp_path / "store.db")
    shown = _stored(store_url)
    query(store_url, "DELETE FROM runs WHERE seq = (SELECT max(seq) FROM runs)")
    _says_damaged(
        shown, ["ingest", "--db", store_url, str(SWEEP)], "a row breaks a key of its layout"
    )


@pytest.mark.parametrize("column", ["name", "record_text"])
def test_a_text_that_is_not_utf8_is_a_damaged_store(tmp_path: Path, column: str) -> None:
    store_url = str(tmp_path / "store.db")
    shown = _stored(store_url)
    table = "runs" if column == "name" else "run_texts"
    query(store_url, f"UPDATE {table} SET {column} = CAST(x'0aff' AS TEXT) WHERE seq = 1")
    meaning = "a text column holds bytes that are not UTF-8"
    _says_damaged(shown, ["export", "--db", store_url, "-o", str(tmp_path / "o.jsonl")], meaning)
    _says_damaged(shown, ["site", "--db", store_url, str(tmp_path / "site")], meaning)
    if column == "name":
        _says_damaged(shown, ["history", "--db", store_url], meaning)


def test_a_layout_version_below_the_first_is_a_damaged_store_to_every_command(
    store_url: str, tmp_path: Path
) -> None:
    """A reader told the user to migrate a layout 0 store, and migrate then said it cannot."""
    shown = _stored(store_url)
    query(store_url, "UPDATE kernelindex_layout SET value = '0'")
    meaning = "store layout version 0 cannot be migrated (layouts start at 1)"
    for command in (["history"], ["migrate"], ["ingest", str(SWEEP)]):
        _says_damaged(shown, [*command, "--db", store_url], meaning)

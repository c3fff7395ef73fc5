"""A store edited by hand (its layout is a public contract, so people do) into what the
layout forbids: every command says so in one line naming the store and what is wrong
(``StoreDamagedError``, exit 1), never a traceback, never a wrong answer.

Each case damages a store of both kinds in its dialect (a SQLite column holds any value;
a PostgreSQL one must be altered first) and runs every command that reads it.
"""

# The damage is constant SQL of this module.
# ruff: noqa: S608

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _sql import query

from kernelindex_sdk.store import StoreDamagedError, open_store

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
ENVIRONMENT = "sha256:" + "0" * 64


def _sqlite_unconstrained(table: str) -> list[str]:
    """SQLite: ``table`` made again without its constraints (NOT NULL among them)."""
    return [
        f"ALTER TABLE {table} RENAME TO {table}_old",
        f"CREATE TABLE {table} AS SELECT * FROM {table}_old",
        f"DROP TABLE {table}_old",
    ]


# name: (SQLite statements, PostgreSQL statements, what the message says, the commands
# that must refuse it; the others may answer).
CASES: dict[str, tuple[list[str], list[str], str, set[str]]] = {
    "a layout version that is not a number": (
        ["UPDATE kernelindex_layout SET value = '4a'"],
        ["UPDATE kernelindex_layout SET value = '4a'"],
        "kernelindex_layout's layout_version is '4a', not a number",
        {"history", "export", "site", "compare", "ingest"},
    ),
    "a layout version in other digits": (
        ["UPDATE kernelindex_layout SET value = '\u0664'"],
        ["UPDATE kernelindex_layout SET value = '\u0664'"],
        "kernelindex_layout's layout_version is '\u0664', not a number",
        {"history", "export", "site", "compare", "ingest"},
    ),
    "no layout version": (
        ["DELETE FROM kernelindex_layout"],
        ["DELETE FROM kernelindex_layout"],
        "kernelindex_layout has no 'layout_version' row",
        {"history", "export", "site", "compare", "ingest"},
    ),
    "a missing table": (
        ["DROP TABLE run_texts"],
        ["DROP TABLE run_texts"],
        "without its table run_texts",
        {"history", "export", "site", "compare", "ingest"},
    ),
    "labels that are not JSON": (
        ["UPDATE run_groups SET labels = '{labels'"],
        [
            "ALTER TABLE run_groups ALTER COLUMN labels TYPE text",
            "UPDATE run_groups SET labels = '{labels'",
        ],
        "run_groups.labels of group",
        {"history", "site", "compare"},
    ),
    "labels that are not an object": (
        ["UPDATE run_groups SET labels = '[1]'"],
        ["UPDATE run_groups SET labels = '[1]'"],
        "expected an object of text",
        {"history", "site", "compare"},
    ),
    "a run whose group row is gone": (
        ["DELETE FROM run_groups"],
        ["DELETE FROM run_groups"],
        "names run_groups id",
        {"history", "site", "compare"},
    ),
    "a text median": (
        ["UPDATE runs SET median_ns = 'fast'"],
        ["ALTER TABLE runs ALTER COLUMN median_ns TYPE text", "UPDATE runs SET median_ns = 'fast'"],
        "'fast', expected an integer or NULL",
        {"history", "site", "compare"},
    ),
    "a NULL where the layout says NOT NULL": (
        [*_sqlite_unconstrained("runs"), "UPDATE runs SET observed_at = NULL"],
        [
            "ALTER TABLE runs ALTER COLUMN observed_at DROP NOT NULL",
            "UPDATE runs SET observed_at = NULL",
        ],
        "runs.observed_at of run",
        {"history", "site", "compare"},
    ),
    "a NULL in a group": (
        [*_sqlite_unconstrained("run_groups"), "UPDATE run_groups SET status = NULL"],
        [
            "ALTER TABLE run_groups ALTER COLUMN status DROP NOT NULL",
            "UPDATE run_groups SET status = NULL",
        ],
        "run_groups.status of group",
        {"history", "site", "compare"},
    ),
    "a spec that is not JSON": (
        ["UPDATE workloads SET spec = '{spec'"],
        [
            "ALTER TABLE workloads ALTER COLUMN spec TYPE text",
            "UPDATE workloads SET spec = '{spec'",
        ],
        "workloads.spec of",
        {"history", "site", "compare", "ingest"},
    ),
    "a run without its text": (
        ["DELETE FROM run_texts WHERE seq = (SELECT min(seq) FROM run_texts)"],
        ["DELETE FROM run_texts WHERE seq = (SELECT min(seq) FROM run_texts)"],
        "has no text in run_texts (None)",
        {"export", "ingest"},
    ),
}


def _renamed(out: Path) -> Path:
    """The sweep's runs under new names: NEW records that are not the stored ones, so that
    ``compare --history`` reads the stored series (it leaves NEW's own records out)."""
    lines = []
    for line in SWEEP.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["run"]["metadata"]["name"] += "-new"
        lines.append(json.dumps(record))
    path = out / "new.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _commands(db: str, out: Path) -> dict[str, list[str]]:
    return {
        "history": ["history", "--db", db],
        "export": ["export", "--db", db, "-o", str(out / "export.jsonl")],
        "site": ["site", "--db", db, str(out / "site")],
        "compare": ["compare", "--history", "main", str(_renamed(out)), "--db", db],
        "ingest": ["ingest", "--db", db, str(SWEEP)],
    }


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_store_is_one_line_and_exit_1_for_every_command(
    store_url: str, case: str, tmp_path: Path
) -> None:
    sqlite, postgres, message, refusing = CASES[case]
    statements = sqlite if store_url.startswith("sqlite") else postgres
    with open_store(store_url) as store:
        assert store.ingest([SWEEP], commit="c1", branch="main").ok
        shown = store.url.shown
    for statement in statements:
        query(store_url, statement)
    for name, command in _commands(store_url, tmp_path).items():
        status, _, err = run_in_process(*command)
        assert "Traceback" not in err
        if name not in refusing and status == 0:
            continue
        assert (status, name) == (1, name), err
        assert err.count("\n") == 1, err
        assert err.startswith(f"kernelindex: {shown}: damaged store: ")
        if name != "ingest":
            # A writer meets the damage where it writes: its message says what it met.
            assert message in err, err


def test_the_library_raises_store_damaged_error_where_it_reads(
    store_url: str, tmp_path: Path
) -> None:
    with open_store(store_url) as store:
        assert store.ingest([SWEEP]).ok
        (digest,) = {row.environment_digest for row in store.rows()}
    query(store_url, "DELETE FROM run_groups")
    with open_store(store_url, create=False) as store, pytest.raises(StoreDamagedError) as caught:
        store.rows()
    assert "names run_groups id" in str(caught.value)
    assert caught.value.source == store.url.shown
    if store_url.startswith("sqlite"):
        query(store_url, "UPDATE environments SET spec = '{spec'")
        with open_store(store_url, create=False) as store, pytest.raises(StoreDamagedError):
            store.spec("environment", digest)


def test_an_export_that_cannot_give_a_run_back_says_which_and_keeps_the_old_file(
    store_url: str, tmp_path: Path
) -> None:
    """Never a run dropped silently with exit 0: the export names the run, exits 1, and
    leaves the file it would have replaced as it was."""
    with open_store(store_url) as store:
        assert store.ingest([SWEEP]).added == 64
        first = store.rows()[0].name
    query(
        store_url,
        "DELETE FROM run_texts WHERE seq = (SELECT seq FROM runs WHERE name = '" + first + "')",
    )
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n", encoding="utf-8")
    status, _, err = run_in_process("export", "--db", store_url, "-o", str(out))
    assert status == 1
    assert f"run {first!r} has no text in run_texts (None), so it cannot be exported" in err
    assert out.read_text(encoding="utf-8") == "earlier\n"
    status, _, err = run_in_process("export", "--db", store_url)
    assert status == 1
    assert f"run {first!r}" in err
    with open_store(store_url, create=False) as store, pytest.raises(StoreDamagedError):
        list(store.export_lines())


def test_a_missing_object_row_reads_as_an_object_the_store_lacks(
    store_url: str, tmp_path: Path
) -> None:
    """The layout keeps a run's objects when some record carried them (the published
    example carries only its workload's and implementation's digests): a run whose object
    rows are gone is such a run, read without them, never a traceback."""
    with open_store(store_url) as store:
        assert store.ingest([SWEEP], commit="c1", branch="main").ok
    for table in ("environments", "implementations", "workloads", "protocols"):
        query(store_url, f"DELETE FROM {table}")
    with open_store(store_url, create=False) as store:
        rows = store.rows()
        assert len(rows) == 64
        unknown = {(row.hardware, row.provider, row.operation) for row in rows}
        assert unknown == {(None, None, None)}
        assert store.spec("environment", rows[0].environment_digest) is None
    for name, command in _commands(store_url, tmp_path).items():
        status, _, err = run_in_process(*command)
        assert (status, name) == (0, name), err
    # The records ingested again carry the objects: the store holds them again.
    with open_store(store_url, create=False) as store:
        assert {row.hardware for row in store.rows()} == {"NVIDIA H200"}

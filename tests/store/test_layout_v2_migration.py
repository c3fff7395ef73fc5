"""Layout 2 to 3: real version-2 stores, made by the code of layout 2, migrated.

The fixtures (tests/fixtures/README.md) hold 18 runs of the H200 sweep (8 with a branch,
10 without, two of them copies of others under new names whose labels are the same
value in the other key order, and one unverified), the published example bundle and a
protocol document on its own: the SQLite file as that code left it, and the PostgreSQL
store as ``pg_dump`` wrote it.
"""

# The queries name constant tables and columns only.
# ruff: noqa: S608

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import pytest

from kernelindex_sdk.store import LAYOUT_VERSION, RunRow, StoreLayoutError, open_store
from kernelindex_sdk.store._export import export_line
from kernelindex_sdk.store.history import history, render_history

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
# The columns layout 2 keeps in runs.
RUN_COLUMNS = (
    "seq, name, status, observed_at, commit_id, branch, commit_time, median_ns, p20_ns,"
    " p80_ns, workload_digest, implementation_digest, protocol_digest, environment_digest,"
    " labels, annotations, source, ingested_at"
)
# A RunRow as layout 2 gave it: the runs' columns and their objects', joined.
V2_ROWS = (
    "SELECT r.name, r.status, r.observed_at, r.workload_digest, r.implementation_digest,"
    " r.protocol_digest, r.environment_digest, r.commit_id, r.branch, r.commit_time,"
    " r.median_ns, r.p20_ns, r.p80_ns, w.operation, w.pass, i.provider, i.entry_point,"
    " e.hardware, {labels} FROM runs r"
    " LEFT JOIN workloads w ON w.digest = r.workload_digest"
    " LEFT JOIN implementations i ON i.digest = r.implementation_digest"
    " LEFT JOIN environments e ON e.digest = r.environment_digest ORDER BY r.seq"
)
SHARED = (
    "status",
    "branch",
    "workload_digest",
    "implementation_digest",
    "protocol_digest",
    "environment_digest",
    "labels",
)

Query = Callable[[str], list[tuple[Any, ...]]]


def _sqlite_query(path: str) -> Iterator[Query]:
    db = sqlite3.connect(path)
    try:
        yield lambda sql: db.execute(sql).fetchall()
    finally:
        db.close()


def _postgres_query(url: str) -> Iterator[Query]:
    import psycopg

    db = psycopg.connect(url, autocommit=True)
    try:
        yield lambda sql: db.execute(sql).fetchall()
    finally:
        db.close()


@attrs.frozen
class Stores:
    """A layout-2 store and an empty place for a new one, each with direct queries."""

    url: str
    connect: Callable[[], Iterator[Query]]
    fresh_url: str
    fresh_connect: Callable[[], Iterator[Query]]

    @property
    def postgres(self) -> bool:
        return self.url.startswith("postgresql")


def _sqlite_v2(tmp_path: Path) -> str:
    path = tmp_path / "v2.sqlite3"
    with gzip.open(FIXTURES / "store-v2.sqlite3.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return str(path)


@pytest.fixture(params=["sqlite", "postgresql"])
def v2(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    """A layout-2 store, queried directly (not through the package), and a new one."""
    if request.param == "sqlite":
        path = _sqlite_v2(tmp_path)
        fresh = str(tmp_path / "fresh.sqlite3")
        return Stores(
            f"sqlite:///{path}",
            lambda: _sqlite_query(path),
            f"sqlite:///{fresh}",
            lambda: _sqlite_query(fresh),
        )
    psycopg = pytest.importorskip("psycopg")
    url = str(request.getfixturevalue("postgres_url"))
    schema = parse_qs(urlsplit(url).query)["options"][0].split("=")[1]
    dump = (FIXTURES / "store-v2-postgresql.sql").read_text(encoding="utf-8")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA {schema}")
        db.execute(dump.replace("kernelindex_v2", schema))
    fresh = str(request.getfixturevalue("postgres_server").new_database())
    return Stores(url, lambda: _postgres_query(url), fresh, lambda: _postgres_query(fresh))


def _one(connect: Callable[[], Iterator[Query]], sql: str) -> list[tuple[Any, ...]]:
    for query in connect():
        return query(sql)
    raise AssertionError("unreachable")


def _columns(stores: Stores, connect: Callable[[], Iterator[Query]], table: str) -> list[Any]:
    if not stores.postgres:
        return [row[1:] for row in _one(connect, f"PRAGMA table_info({table})")]
    return _one(
        connect,
        "SELECT column_name, data_type, is_nullable, column_default, is_identity"
        " FROM information_schema.columns WHERE table_schema = current_schema()"
        f" AND table_name = '{table}' ORDER BY ordinal_position",
    )


def _v2_rows(stores: Stores) -> list[RunRow]:
    """The runs as layout 2's columns give them, read with SQL (not by the package)."""
    labels = "r.labels::text" if stores.postgres else "r.labels"
    found = _one(stores.connect, V2_ROWS.format(labels=labels))
    return [
        RunRow(*row[:-1], labels=MappingProxyType(json.loads(row[-1])))  # type: ignore[misc]
        for row in found
    ]


def _samples_of(text: str) -> int | None:
    """``timing.samples`` of a stored run's text (a bundle or a run), None without."""
    value = json.loads(text)
    timing = value.get("run", value)["spec"].get("timing") or {}
    found: int | None = timing.get("samples")
    return found


def test_fixture_is_layout_two(v2: Stores) -> None:
    assert _one(v2.connect, "SELECT value FROM kernelindex_layout") == [("2",)]
    assert _one(v2.connect, "SELECT count(*) FROM runs") == [(19,)]
    labels = "labels::text" if v2.postgres else "labels"
    # The same labels in two key orders (one value), and one run unverified.
    found = {row[0] for row in _one(v2.connect, f"SELECT {labels} FROM runs")}
    assert len(found) == (4 if v2.postgres else 5)
    assert _one(v2.connect, "SELECT count(*) FROM runs WHERE status = 'unverified'") == [(1,)]


def test_v2_store_is_migrated_with_every_value_kept(v2: Stores) -> None:
    url, connect = v2.url, v2.connect
    runs = _one(connect, f"SELECT {RUN_COLUMNS} FROM runs ORDER BY seq")
    texts = _one(connect, "SELECT seq, record_text, record_form FROM run_texts ORDER BY seq")
    documents = _one(connect, "SELECT record_text, record_form FROM documents ORDER BY seq")
    expected_export = [export_line(t, f) for t, f in documents] + [
        export_line(t, f) for _, t, f in texts
    ]
    # Layout 2's columns, and layout 4's runs.samples from each run's text (runs and
    # their texts share a seq, both read in its order).
    counts = [_samples_of(text) for _, text, _ in texts]
    assert any(n is not None for n in counts)
    before = [row._replace(samples=n) for row, n in zip(_v2_rows(v2), counts, strict=True)]
    order = sorted(before, key=lambda r: (r.order_key, r.name))

    with open_store(url) as store:
        assert list(store.export_lines()) == expected_export
        rows = store.rows()
        assert rows == order
        # The same history, as layout 2's columns give it, in every format.
        for fmt in ("json", "text", "markdown"):
            assert render_history(history(rows, spec=store.spec), fmt) == render_history(
                history(before, spec=store.spec), fmt
            )

    assert _one(connect, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    assert _one(connect, f"SELECT {RUN_COLUMNS} FROM runs ORDER BY seq") == runs
    assert (
        _one(connect, "SELECT seq, record_text, record_form FROM run_texts ORDER BY seq") == texts
    )

    # The migrated tables are those a new store of this version gets.
    with open_store(v2.fresh_url):
        pass
    for table in ("run_groups", "runs", "run_texts"):
        assert _columns(v2, connect, table) == _columns(v2, v2.fresh_connect, table)
    if v2.postgres:
        index = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1"
        assert _one(connect, index) == _one(v2.fresh_connect, index)


def _groups(connect: Callable[[], Iterator[Query]], postgres: bool) -> dict[int, tuple[Any, ...]]:
    labels = "labels::text" if postgres else "labels"
    shared = ", ".join(SHARED).replace("labels", labels)
    return {
        row[0]: (*row[1:-1], json.loads(row[-1]))
        for row in _one(connect, f"SELECT id, {shared} FROM run_groups")
    }


def test_each_run_names_the_group_of_its_own_values(v2: Stores) -> None:
    with open_store(v2.url):
        pass
    groups = _groups(v2.connect, v2.postgres)
    labels = "labels::text" if v2.postgres else "labels"
    shared = ", ".join(SHARED).replace("labels", labels)
    runs = _one(v2.connect, f"SELECT group_id, {shared} FROM runs ORDER BY seq")
    for group_id, *values, text in runs:
        assert groups[group_id] == (*values, json.loads(text))
    # One group per distinct combination: the labels in two key orders are one.
    combos = {(*values, json.dumps(json.loads(text), sort_keys=True)) for _, *values, text in runs}
    assert len(groups) == len(combos)
    texts = {(*values, text) for _, *values, text in runs}
    assert len(combos) < len(texts) if not v2.postgres else len(combos) == len(texts)


def test_migrated_store_takes_new_runs_into_its_groups(v2: Stores, tmp_path: Path) -> None:
    lines = SWEEP.read_text(encoding="utf-8").splitlines(keepends=True)
    # The sweep's first run again under a new name (its shared values those of a stored
    # run), then runs the store has not seen.
    again = json.loads(lines[0])
    again["run"]["metadata"]["name"] += "-later"
    path = tmp_path / "later.jsonl"
    path.write_text(json.dumps(again) + "\n" + "".join(lines[24:32]), encoding="utf-8")
    with open_store(v2.url) as store:
        before = _groups(v2.connect, v2.postgres)
        report = store.ingest(
            [path], commit="ffea882", branch="main", commit_time="2026-11-30T11:00:00.000Z"
        )
        assert (report.added, report.ok) == (9, True)
        assert len(store.rows()) == 19 + 9
    after = _groups(v2.connect, v2.postgres)
    assert {k: after[k] for k in before} == before
    name = json.loads(lines[0])["run"]["metadata"]["name"]
    ((first,),) = _one(v2.connect, f"SELECT group_id FROM runs WHERE name = '{name}'")
    ((later,),) = _one(v2.connect, f"SELECT group_id FROM runs WHERE name = '{name}-later'")
    assert later == first
    labels = "labels::text" if v2.postgres else "labels"
    shared = ", ".join(SHARED).replace("labels", labels)
    runs = _one(v2.connect, f"SELECT group_id, {shared} FROM runs")
    for group_id, *values, text in runs:
        assert after[group_id] == (*values, json.loads(text))
    combos = {(*values, json.dumps(json.loads(text), sort_keys=True)) for _, *values, text in runs}
    assert len(after) == len(combos) == len(before) + 8


def test_a_failing_migration_leaves_the_v2_store_as_it_was(tmp_path: Path) -> None:
    path = _sqlite_v2(tmp_path)
    with sqlite3.connect(path) as db:
        # Someone's own table in the way of the migration's.
        db.execute("CREATE TABLE runs_v3 (x INTEGER)")
    with pytest.raises(
        StoreLayoutError,
        match=r"cannot migrate store layout version 2 to 4 \(the store is unchanged\):"
        r" sqlite: table runs_v3 already exists",
    ):
        open_store(path)
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT value FROM kernelindex_layout").fetchall() == [("2",)]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "run_groups" not in tables
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        assert "group_id" not in columns
    finally:
        db.close()

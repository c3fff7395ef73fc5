"""The SQLite store's tables (layout 4) and the steps that migrate an older store.

Each step runs inside the opener's one write transaction (``_backend.open_layout``): a
store is all of one layout or all of the next. Statements here are SQLite's own.
"""

# The statements are constants of this module; the values go as parameters.
# ruff: noqa: S608

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Final

from ._layout import GROUP_COLUMNS, group_key, marks_of_text

__all__ = ["CREATE", "MIGRATIONS", "StepError"]

#: The statements that create layout 4.
CREATE: Final = (
    """CREATE TABLE kernelindex_layout (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE TABLE workloads (
    digest TEXT PRIMARY KEY,
    operation TEXT,
    pass TEXT,
    spec TEXT NOT NULL
)""",
    """CREATE TABLE implementations (
    digest TEXT PRIMARY KEY,
    provider TEXT,
    entry_point TEXT,
    spec TEXT NOT NULL
)""",
    """CREATE TABLE protocols (
    digest TEXT PRIMARY KEY,
    name TEXT,
    spec TEXT NOT NULL
)""",
    """CREATE TABLE environments (
    digest TEXT PRIMARY KEY,
    name TEXT,
    hardware TEXT,
    spec TEXT NOT NULL
)""",
    """CREATE TABLE documents (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line')),
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    UNIQUE (kind, name)
)""",
    """CREATE TABLE run_groups (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    branch TEXT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels TEXT NOT NULL
)""",
    """CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    commit_id TEXT,
    branch TEXT,
    commit_time TEXT,
    median_ns BIGINT,
    p20_ns BIGINT,
    p80_ns BIGINT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    group_id BIGINT NOT NULL,
    degraded TEXT,
    samples BIGINT
)""",
    """CREATE TABLE run_texts (
    seq INTEGER PRIMARY KEY,
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line'))
)""",
    "INSERT INTO kernelindex_layout (key, value) VALUES ('layout_version', '4')",
)

# The columns layouts 2 and 3 keep in runs before group_id, in their order.
_RUN_COLUMNS_V2: Final = (
    "seq, name, status, observed_at, commit_id, branch, commit_time, median_ns, p20_ns,"
    " p80_ns, workload_digest, implementation_digest, protocol_digest, environment_digest,"
    " labels, annotations, source, ingested_at"
)
# Layout 2's runs and layout 3's, each made under another name and then renamed.
_V2_RUNS: Final = """CREATE TABLE runs_v2 (
    seq INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    commit_id TEXT,
    branch TEXT,
    commit_time TEXT,
    median_ns BIGINT,
    p20_ns BIGINT,
    p80_ns BIGINT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL
)"""
_V3_RUNS: Final = """CREATE TABLE runs_v3 (
    seq INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    commit_id TEXT,
    branch TEXT,
    commit_time TEXT,
    median_ns BIGINT,
    p20_ns BIGINT,
    p80_ns BIGINT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    group_id BIGINT NOT NULL
)"""
_RUN_TEXTS: Final = """CREATE TABLE run_texts (
    seq INTEGER PRIMARY KEY,
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line'))
)"""
_RUN_GROUPS: Final = """CREATE TABLE run_groups (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    branch TEXT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels TEXT NOT NULL
)"""
# A run's group found by its exact values (an absent branch in both: SQLite's IS).
_SAME_GROUP: Final = (
    "g.status = r.status AND g.branch IS r.branch AND g.workload_digest = r.workload_digest"
    " AND g.implementation_digest = r.implementation_digest"
    " AND g.protocol_digest = r.protocol_digest AND g.environment_digest = r.environment_digest"
    " AND g.labels = r.labels"
)
# Runs whose marks a migration computes at once (their texts are in memory).
_PAGE: Final = 1000


class StepError(Exception):
    """A step that cannot apply to this store, for a reason that is no SQLite error."""


def _set_aside(db: sqlite3.Connection) -> list[str]:
    """Before ``runs`` is built again: set aside what refers to it.

    SQLite's procedure for a change ALTER TABLE cannot make
    (https://www.sqlite.org/lang_altertable.html#otheralter): remember the statements
    that made the indexes and triggers on ``runs`` (dropping the old table drops them)
    and every view and every other trigger (their text may name ``runs``, and renaming
    the new table checks them all, failing on one that names the dropped table); drop
    those views and triggers. :func:`_restore` makes them all again afterwards.

    Returns:
        The statements, in the order they were first made.
    """
    kept = db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
        " AND (type IN ('view', 'trigger') OR (type = 'index' AND tbl_name = 'runs'))"
        " ORDER BY rowid"
    ).fetchall()
    for kind, name, table, _ in kept:
        if kind == "view" or (kind == "trigger" and table != "runs"):
            quoted = name.replace('"', '""')
            db.execute(f'DROP {"VIEW" if kind == "view" else "TRIGGER"} "{quoted}"')
    return [sql for *_, sql in kept]


def _restore(db: sqlite3.Connection, kept: Sequence[str]) -> None:
    """Make again, in their order, what :func:`_set_aside` set aside.

    Raises:
        sqlite3.Error: when one no longer applies, say an index on a column the step
            removed; the migration then rolls back whole.
    """
    for sql in kept:
        db.execute(sql)


def _v1_to_v2(db: sqlite3.Connection) -> None:
    """Layout 1 to 2: each run's record text and form move to run_texts, by its seq.

    SQLite (one writer at a time, and no ``DROP COLUMN`` of a column with a CHECK)
    builds ``runs`` again without them, its rows copied in their seq, following SQLite's
    documented procedure: a team's indexes, triggers and views are made again
    (:func:`_set_aside`); nothing else changes.
    """
    db.execute(_RUN_TEXTS)
    db.execute(
        "INSERT INTO run_texts (seq, record_text, record_form)"
        " SELECT seq, record_text, record_form FROM runs ORDER BY seq"
    )
    kept = _set_aside(db)
    db.execute(_V2_RUNS)
    db.execute(
        f"INSERT INTO runs_v2 ({_RUN_COLUMNS_V2}) SELECT {_RUN_COLUMNS_V2} FROM runs ORDER BY seq"
    )
    db.execute("DROP TABLE runs")
    db.execute("ALTER TABLE runs_v2 RENAME TO runs")
    _restore(db, kept)


def _v2_to_v3(db: sqlite3.Connection) -> None:
    """Layout 2 to 3: run_groups is made from the distinct combinations of the runs'
    status, branch, digests and labels, and each run names its own in ``group_id``.

    The keys are computed as ingest computes them (:func:`group_key`), so that a run
    ingested later joins the group of its combination; two texts of the same labels are
    two combinations of one group. ``runs`` is built again with the column, its rows
    copied in their seq, a team's indexes, triggers and views made again. Not ``ALTER
    TABLE ADD COLUMN``: SQLite adds a NOT NULL column only with a non-null default,
    which would let a writer leave a run without its group unnoticed.
    """
    db.execute(_RUN_GROUPS)
    values = ", ".join(GROUP_COLUMNS)
    found = db.execute(f"SELECT DISTINCT {values} FROM runs").fetchall()
    db.execute(
        f"CREATE TEMPORARY TABLE kernelindex_v3_groups ({values}, group_id INTEGER NOT NULL)"
    )
    for *own, labels in found:
        key = group_key(own, json.loads(labels))
        db.execute(
            f"INSERT INTO run_groups (key, {values}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (key) DO NOTHING",
            (key, *own, labels),
        )
        db.execute(
            f"INSERT INTO kernelindex_v3_groups ({values}, group_id)"
            " SELECT ?, ?, ?, ?, ?, ?, ?, id FROM run_groups WHERE key = ?",
            (*own, labels, key),
        )
    kept = _set_aside(db)
    db.execute(_V3_RUNS)
    own_columns = ", ".join(f"r.{column.strip()}" for column in _RUN_COLUMNS_V2.split(","))
    db.execute(
        f"INSERT INTO runs_v3 ({_RUN_COLUMNS_V2}, group_id)"
        f" SELECT {own_columns}, g.group_id FROM runs r"
        f" JOIN kernelindex_v3_groups g ON {_SAME_GROUP} ORDER BY r.seq"
    )
    db.execute("DROP TABLE kernelindex_v3_groups")
    db.execute("DROP TABLE runs")
    db.execute("ALTER TABLE runs_v3 RENAME TO runs")
    _restore(db, kept)


def _v3_to_v4(db: sqlite3.Connection) -> None:
    """Layout 3 to 4: ``runs.degraded`` and ``runs.samples``, each run's computed from its
    stored text as ingest computes them (:func:`~._layout.marks_of_text`).

    Nullable columns are added in place (``ALTER TABLE ADD COLUMN``: a team's indexes,
    triggers and views stay), then filled a page of runs at a time in seq order. Layout 4
    was never released without ``samples``: no store needs it added on its own.

    Raises:
        StepError: for a run without its text, or a text that is not JSON.
    """
    db.execute("ALTER TABLE runs ADD COLUMN degraded TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN samples BIGINT")
    last = 0
    while True:
        page = db.execute(
            "SELECT r.seq, r.name, t.record_text FROM runs r"
            " LEFT JOIN run_texts t ON t.seq = r.seq WHERE r.seq > ? ORDER BY r.seq LIMIT ?",
            (last, _PAGE),
        ).fetchall()
        if not page:
            return
        marks = []
        for seq, name, text in page:
            if not isinstance(text, str):
                raise StepError(f"run {name!r} has no text in run_texts")
            try:
                reason, samples = marks_of_text(text)
            except ValueError:
                raise StepError(f"run {name!r}'s text in run_texts is not JSON") from None
            if reason is not None or samples is not None:
                marks.append((reason, samples, seq))
        db.executemany("UPDATE runs SET degraded = ?, samples = ? WHERE seq = ?", marks)
        last = page[-1][0]


#: Steps from one layout version to the next: ``MIGRATIONS[n]`` turns version n into
#: n + 1. Version 1 is the first.
MIGRATIONS: Final[dict[int, Callable[[sqlite3.Connection], None]]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
}

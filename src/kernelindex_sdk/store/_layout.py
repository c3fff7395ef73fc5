"""The store's tables: a public, versioned contract (docs/store.md describes each column).

:data:`LAYOUT_VERSION` is recorded in the table ``kernelindex_layout``. A store of an
older layout is migrated on opening (each step in :data:`_MIGRATIONS`, in one
transaction); one of a newer layout, or a database holding our table names without
that record, is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["LAYOUT_VERSION", "OBJECT_TABLES", "TABLES", "create_statements", "migrations"]

#: The layout version this package reads and writes.
LAYOUT_VERSION: Final = 2

#: The object tables by kind, as :meth:`Store.spec` names them.
OBJECT_TABLES: Final = {
    "workload": "workloads",
    "implementation": "implementations",
    "protocol": "protocols",
    "environment": "environments",
}
#: Every table of the layout, the version table first.
TABLES: Final = ("kernelindex_layout", *OBJECT_TABLES.values(), "documents", "runs", "run_texts")

# {json}: jsonb in PostgreSQL (queried with ->, ->>), text holding JSON in SQLite (json_extract).
# {seq}: the order of arrival (a file's records in the file's order).
# No secondary index: three (series digests, branch, commit) took 40% of a run's insert
# time in SQLite (17 of 41 us per Liger bundle, measured), and the queries of a history
# read whole series anyway.
# An index a team adds for its own queries does not change the layout.
# Version 2 keeps each run's record text in run_texts, beside its run: a history reads
# every run's columns, and with the texts (a few KiB each) in the runs table that scan
# read them all (10,000 runs: 31 ms of fetching, against a few without).
_DDL: Final = (
    """CREATE TABLE kernelindex_layout (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE TABLE workloads (
    digest TEXT PRIMARY KEY,
    operation TEXT,
    pass TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE implementations (
    digest TEXT PRIMARY KEY,
    provider TEXT,
    entry_point TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE protocols (
    digest TEXT PRIMARY KEY,
    name TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE environments (
    digest TEXT PRIMARY KEY,
    name TEXT,
    hardware TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE documents (
    seq {seq},
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line')),
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    UNIQUE (kind, name)
)""",
    """CREATE TABLE runs (
    seq {seq},
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
    labels {json} NOT NULL,
    annotations {json} NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL
)""",
    """CREATE TABLE run_texts (
    seq {run_seq},
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line'))
)""",
)

_TYPES: Final = {
    "sqlite": {"json": "TEXT", "seq": "INTEGER PRIMARY KEY", "run_seq": "INTEGER PRIMARY KEY"},
    "postgresql": {
        "json": "JSONB",
        "seq": "BIGINT PRIMARY KEY DEFAULT nextval('kernelindex_arrival')",
        "run_seq": "BIGINT PRIMARY KEY",
    },
}

#: Runs one statement (a migration step's only way to the database).
Execute = Callable[[str], object]
#: A step from one layout version to the next: ``step(execute, dialect)``.
Migration = Callable[[Execute, str], None]

# The columns layout 2 keeps in runs, in their order.
_RUN_COLUMNS_V2: Final = (
    "seq, name, status, observed_at, commit_id, branch, commit_time, median_ns, p20_ns,"
    " p80_ns, workload_digest, implementation_digest, protocol_digest, environment_digest,"
    " labels, annotations, source, ingested_at"
)


def _runs_statement(dialect: str) -> str:
    return next(s for s in create_statements(dialect) if s.startswith("CREATE TABLE runs ("))


def _texts_statement(dialect: str) -> str:
    return next(s for s in create_statements(dialect) if s.startswith("CREATE TABLE run_texts"))


def _v1_to_v2(execute: Execute, dialect: str) -> None:
    """Layout 1 to 2: each run's record text and form move to run_texts, by the run's seq.

    PostgreSQL: the runs table is locked first, so no writer of layout 1 (a 0.4.0 client)
    can commit a run between the copy of the texts and the change of the table: such a
    run would be left without its text. The two columns are then dropped in place, which
    keeps a team's own indexes, grants and views on runs (their space is reclaimed at the
    table's next rewrite). SQLite (one writer at a time, and no ``DROP COLUMN`` of a
    column with a CHECK) builds the table again without them, its rows copied in their
    seq; nothing else changes.
    """
    if dialect == "postgresql":
        execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
    execute(_texts_statement(dialect))
    execute(
        "INSERT INTO run_texts (seq, record_text, record_form)"
        " SELECT seq, record_text, record_form FROM runs ORDER BY seq"
    )
    if dialect == "postgresql":
        execute("ALTER TABLE runs DROP COLUMN record_text, DROP COLUMN record_form")
        return
    execute(_runs_statement(dialect).replace("CREATE TABLE runs (", "CREATE TABLE runs_v2 (", 1))
    execute(
        f"INSERT INTO runs_v2 ({_RUN_COLUMNS_V2})"  # noqa: S608 (constant text)
        f" SELECT {_RUN_COLUMNS_V2} FROM runs ORDER BY seq"
    )
    execute("DROP TABLE runs")
    execute("ALTER TABLE runs_v2 RENAME TO runs")


#: Steps from one layout version to the next: ``_MIGRATIONS[n]`` turns version n into
#: n + 1. Version 1 is the first.
_MIGRATIONS: Final[dict[int, Migration]] = {1: _v1_to_v2}


def create_statements(dialect: str) -> list[str]:
    """The statements that create the current layout in ``dialect`` (sqlite, postgresql)."""
    types = _TYPES[dialect]
    # PostgreSQL: one sequence numbers every arrival; a writer takes a file's numbers
    # in the file's order (SQLite's rowid does the same in its one writer).
    first = ["CREATE SEQUENCE kernelindex_arrival"] if dialect == "postgresql" else []
    return first + [statement.format(**types) for statement in _DDL]


def migrations(found: int) -> list[Migration]:
    """The steps from layout ``found`` to :data:`LAYOUT_VERSION`, in order.

    Raises:
        KeyError: when a step is missing (the caller refuses such a store).
    """
    return [_MIGRATIONS[version] for version in range(found, LAYOUT_VERSION)]

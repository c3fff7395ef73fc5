"""Layout 3's bugs found by red-teaming it (branch redteam6), kept as regression tests.

- A run's group key (``run_groups.key``) is a SHA-256, not the combination's JSON text:
  PostgreSQL's unique btree index takes at most 2704 bytes an entry, and a branch or a
  label value may be 4096 characters (schema StringMap). A layout-2 store holding such
  a run migrates.
- A run seen again with other provenance (skipped, the first arrival keeps its own)
  leaves no group behind: ``run_groups`` holds the combinations of stored runs only,
  with 8 PostgreSQL writers at once too.
- SQLite's migration builds ``runs`` again (SQLite's documented procedure): a team's own
  indexes, triggers and views, on ``runs`` or naming it, are made again, in both steps.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import sqlite3
import string
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from _layout3_corpus import (
    OLD_COMMIT,
    V1_COMMIT,
    old_code,
    run_cli,
    sweep_bundles,
    variant,
    write_jsonl,
)

from kernelindex_sdk.store import LAYOUT_VERSION

# Valid values: a label value and a branch may be 4096 characters (StringMap).
# (Seeded for a stable test, not for secrecy.)
_VARIED = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=4096))  # noqa: S311


@pytest.fixture(scope="module")
def old_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout-2 code (main when layout 3 branched)."""
    return old_code(OLD_COMMIT, tmp_path_factory.mktemp("layout2-code"))


@pytest.fixture(scope="module")
def v1_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout-1 code (kernelindex-sdk 0.4.0)."""
    return old_code(V1_COMMIT, tmp_path_factory.mktemp("layout1-code"))


@pytest.mark.parametrize("field", ["labels", "branch"])
def test_a_run_with_a_long_varied_label_or_branch_is_stored(
    store_url: str, tmp_path: Path, field: str
) -> None:
    """The key of its group is past PostgreSQL's btree limit (2704 bytes an entry)."""
    base = sweep_bundles()[0]
    run = (
        variant(base, "long-labels", labels={"note": _VARIED})
        if field == "labels"
        else variant(base, "long-branch", branch=_VARIED)
    )
    path = write_jsonl(tmp_path / "long.jsonl", [run, sweep_bundles()[1]])
    ((status, _, err), (shown, out, _)) = run_cli(
        None,
        [
            ["ingest", "--db", store_url, str(path)],
            ["history", "--db", store_url, "--format", "json"],
        ],
    )
    assert status == 0
    assert err.startswith(
        "ingested 1 file(s): 2 record(s) added, 0 skipped"
        " (0 already stored, 0 differing only in provenance)\n"
    )
    assert shown == 0
    assert run["run"]["metadata"]["name"] in out


def test_a_layout_2_postgres_store_with_a_long_varied_label_migrates(
    old_src: Path, postgres_url: str, tmp_path: Path
) -> None:
    run = variant(sweep_bundles()[0], "long-labels", labels={"note": _VARIED})
    path = write_jsonl(tmp_path / "long.jsonl", [run])
    out = tmp_path / "out.jsonl"
    ((filled, _, _),) = run_cli(old_src, [["ingest", "--db", postgres_url, str(path)]])
    assert filled == 0
    ((status, _, err),) = run_cli(
        None,
        [["migrate", "--db", postgres_url], ["export", "--db", postgres_url, "-o", str(out)]],
    )[1:]
    assert (status, err) == (0, f"exported 1 record(s) to {out}\n")
    assert out.read_bytes() == path.read_bytes()


def test_a_run_seen_again_with_other_provenance_adds_no_group(
    store_url: str, tmp_path: Path
) -> None:
    """run_groups holds the combinations that runs have, not those of runs skipped."""
    bundles = sweep_bundles()[:4]
    path = write_jsonl(tmp_path / "runs.jsonl", bundles)
    results = run_cli(
        None,
        [
            ["ingest", "--db", store_url, str(path)],
            # The same runs with a branch (provenance only): skipped, their first
            # arrival keeps its own provenance.
            ["ingest", "--db", store_url, "--branch", "later", str(path)],
        ],
    )
    assert [s for s, _, _ in results] == [0, 0]
    assert "4 differing only in provenance" in results[1][2]
    combos = (
        "SELECT count(*) FROM (SELECT DISTINCT status, branch, workload_digest,"
        " implementation_digest, protocol_digest, environment_digest, {labels} FROM runs) c"
    )
    if store_url.startswith("sqlite"):
        db = sqlite3.connect(store_url.removeprefix("sqlite:///"))
        try:
            groups = db.execute("SELECT count(*) FROM run_groups").fetchall()
            assert groups == db.execute(combos.format(labels="labels")).fetchall()
            orphans = db.execute(
                "SELECT count(*) FROM run_groups g"
                " WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.group_id = g.id)"
            ).fetchall()
        finally:
            db.close()
    else:
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as pg:
            groups = pg.execute("SELECT count(*) FROM run_groups").fetchall()
            assert groups == pg.execute(combos.format(labels="labels")).fetchall()
            orphans = pg.execute(
                "SELECT count(*) FROM run_groups g"
                " WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.group_id = g.id)"
            ).fetchall()
    assert orphans == [(0,)]


def test_sqlite_migration_keeps_a_teams_index_trigger_and_view_on_runs(
    old_src: Path, tmp_path: Path
) -> None:
    """docs/store.md: "An index you add for your own queries does not change the layout";
    people query the store with SQL (a view is how they keep a query)."""
    path = write_jsonl(tmp_path / "runs.jsonl", sweep_bundles()[:4])
    db_path = tmp_path / "v2.sqlite3"
    ((filled, _, _),) = run_cli(old_src, [["ingest", "--db", str(db_path), str(path)]])
    assert filled == 0
    db = sqlite3.connect(db_path)
    with db:
        db.execute("CREATE INDEX team_runs_commit ON runs (commit_id)")
        db.execute("CREATE TABLE team_audit (name TEXT)")
        db.execute(
            "CREATE TRIGGER team_audit_runs AFTER INSERT ON runs"
            " BEGIN INSERT INTO team_audit VALUES (new.name); END"
        )
        db.execute("CREATE VIEW team_main AS SELECT name, median_ns FROM runs")
    db.close()
    ((status, _, err),) = run_cli(
        None,
        [
            ["migrate", "--db", str(db_path)],
            ["export", "--db", str(db_path), "-o", str(tmp_path / "out.jsonl")],
        ],
    )[1:]
    assert (status, err) == (0, f"exported 4 record(s) to {tmp_path / 'out.jsonl'}\n")
    db = sqlite3.connect(db_path)
    try:
        version = db.execute("SELECT value FROM kernelindex_layout").fetchall()
        assert version == [(str(LAYOUT_VERSION),)]
        kept = db.execute(
            "SELECT type, name FROM sqlite_master WHERE name LIKE 'team_%' ORDER BY name"
        ).fetchall()
        assert kept == [
            ("table", "team_audit"),
            ("trigger", "team_audit_runs"),
            ("view", "team_main"),
            ("index", "team_runs_commit"),
        ]
        assert len(db.execute("SELECT * FROM team_main").fetchall()) == 4
    finally:
        db.close()


def _groups_and_orphans(url: str) -> tuple[int, int, int]:
    """(groups, distinct combinations of the runs' grouped columns, groups no run names)."""
    combos = (
        "SELECT count(*) FROM (SELECT DISTINCT status, branch, workload_digest,"
        " implementation_digest, protocol_digest, environment_digest, labels FROM runs) c"
    )
    orphans = (
        "SELECT count(*) FROM run_groups g"
        " WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.group_id = g.id)"
    )
    queries = ["SELECT count(*) FROM run_groups", combos, orphans]
    if url.startswith("sqlite"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            found = [db.execute(q).fetchone()[0] for q in queries]
        finally:
            db.close()
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as pg:
            found = [pg.execute(q).fetchone()[0] for q in queries]  # type: ignore[index]
    return found[0], found[1], found[2]


def test_a_group_shared_by_a_new_run_and_a_run_seen_again_stays(
    store_url: str, tmp_path: Path
) -> None:
    """In one file: a stored run seen again on a branch, and a new run of the same values
    on that branch. The group both name is the new run's: it stays."""
    base = sweep_bundles()[0]
    old = write_jsonl(tmp_path / "old.jsonl", [variant(base, "seen")])
    both = write_jsonl(
        tmp_path / "both.jsonl",
        [variant(base, "seen", branch="dev"), variant(base, "new", branch="dev")],
    )
    results = run_cli(
        None, [["ingest", "--db", store_url, str(old)], ["ingest", "--db", store_url, str(both)]]
    )
    assert [s for s, _, _ in results] == [0, 0]
    assert "1 record(s) added" in results[1][2]
    assert "1 differing only in provenance" in results[1][2]
    assert _groups_and_orphans(store_url) == (2, 2, 0)


def test_a_group_dropped_in_one_batch_is_made_again_by_a_later_one(
    store_url: str, tmp_path: Path
) -> None:
    """A file of more than one batch (2,000 records): its first batch's runs are all seen
    again (their group dropped), a run of the same values in the last batch is new."""
    base = sweep_bundles()[0]
    seen = [variant(base, f"seen-{i:05d}", median=1_000_000 + i) for i in range(2_100)]
    old = write_jsonl(tmp_path / "old.jsonl", seen)
    again = [
        variant(base, f"seen-{i:05d}", median=1_000_000 + i, branch="dev") for i in range(2_100)
    ]
    later = write_jsonl(
        tmp_path / "later.jsonl", [*again, variant(base, "new", median=900_000, branch="dev")]
    )
    results = run_cli(
        None,
        [
            ["ingest", "--db", store_url, str(old)],
            ["ingest", "--db", store_url, str(later)],
            ["export", "--db", store_url, "--branch", "dev", "-o", str(tmp_path / "dev.jsonl")],
        ],
    )
    assert [s for s, _, _ in results] == [0, 0, 0], results
    assert "2100 differing only in provenance" in results[1][2]
    assert _groups_and_orphans(store_url) == (2, 2, 0)
    exported = (tmp_path / "dev.jsonl").read_text().splitlines()
    assert [json.loads(line)["run"]["metadata"]["name"] for line in exported] == ["new"]


def test_eight_postgres_ingesters_of_runs_seen_again_leave_no_spare_group(
    postgres_url: str, tmp_path: Path
) -> None:
    """8 writers start at one moment, each ingesting the same overlapping files with a
    branch of its own for runs without one: each run is stored once, with its first
    writer's branch; the others' groups (made, then found to be needed by no run) are
    gone, and no writer waits forever on a group another dropped."""
    from _layout3_workers import ingest_at

    files, size = 8, 30
    base = sweep_bundles()
    pool = [
        variant(base[i % 3], f"again-{i:04d}", median=1_000_000 + i, commit=f"{i:08x}")
        for i in range(files * 10)
    ]
    paths = [
        str(
            write_jsonl(
                tmp_path / f"again-{k}.jsonl", [pool[(k * 10 + j) % len(pool)] for j in range(size)]
            )
        )
        for k in range(files)
    ]
    run_cli(None, [["history", "--db", postgres_url]])  # layout made before the race
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(files, mp_context=context) as executor:
        start = time.time() + 6
        writers = [
            executor.submit(ingest_at, postgres_url, paths[w:] + paths[:w], start, f"writer-{w}")
            for w in range(files)
        ]
        results = [w.result(timeout=300) for w in writers]
    assert [r["problems"] for r in results] == [[]] * files
    assert sum(r["added"] for r in results) == len(pool)
    # Every other sighting of a run differs from the stored one in its branch only, or
    # (the same writer again, in another file) not at all.
    assert sum(r["provenance_only"] + r["identical"] for r in results) == (
        files * files * size - len(pool)
    )
    assert sum(r["provenance_only"] for r in results) > 0
    groups, combos, orphans = _groups_and_orphans(postgres_url)
    assert (groups, orphans) == (combos, 0)


def test_sqlite_migration_from_layout_1_keeps_a_teams_objects_through_both_steps(
    v1_src: Path, tmp_path: Path
) -> None:
    """Both rebuilding steps (1 to 2, 2 to 3) keep an index and a trigger on runs, a
    trigger on another table that writes into runs, a view on runs and a view on it."""
    path = write_jsonl(tmp_path / "runs.jsonl", sweep_bundles()[:4])
    db_path = tmp_path / "v1.sqlite3"
    ((filled, _, _),) = run_cli(v1_src, [["ingest", "--db", str(db_path), str(path)]])
    assert filled == 0
    db = sqlite3.connect(db_path)
    with db:
        assert db.execute("SELECT value FROM kernelindex_layout").fetchall() == [("1",)]
        db.execute("CREATE INDEX team_runs_commit ON runs (commit_id)")
        db.execute("CREATE TABLE team_audit (name TEXT)")
        db.execute(
            "CREATE TRIGGER team_audit_runs AFTER INSERT ON runs"
            " BEGIN INSERT INTO team_audit VALUES (new.name); END"
        )
        db.execute("CREATE TABLE team_notes (run TEXT)")
        db.execute(
            "CREATE TRIGGER team_notes_check BEFORE INSERT ON team_notes"
            " WHEN NOT EXISTS (SELECT 1 FROM runs WHERE name = new.run)"
            " BEGIN SELECT RAISE(ABORT, 'no such run'); END"
        )
        db.execute("CREATE VIEW team_main AS SELECT name, median_ns FROM runs")
        db.execute("CREATE VIEW team_fast AS SELECT name FROM team_main WHERE median_ns > 0")
    db.close()
    more = write_jsonl(tmp_path / "more.jsonl", [variant(sweep_bundles()[4], "after")])
    ((status, _, err),) = run_cli(None, [["ingest", "--db", str(db_path), str(more)]])
    assert (status, err.count("1 record(s) added")) == (0, 1), err
    db = sqlite3.connect(db_path)
    try:
        version = db.execute("SELECT value FROM kernelindex_layout").fetchall()
        assert version == [(str(LAYOUT_VERSION),)]
        kept = db.execute(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name LIKE 'team_%' ORDER BY name"
        ).fetchall()
        assert kept == [
            ("table", "team_audit", "team_audit"),
            ("trigger", "team_audit_runs", "runs"),
            ("view", "team_fast", "team_fast"),
            ("view", "team_main", "team_main"),
            ("table", "team_notes", "team_notes"),
            ("trigger", "team_notes_check", "team_notes"),
            ("index", "team_runs_commit", "runs"),
        ]
        # The trigger on runs ran for the run ingested after the migration.
        assert db.execute("SELECT name FROM team_audit").fetchall() == [("after",)]
        assert len(db.execute("SELECT * FROM team_fast").fetchall()) == 5
        plan = db.execute("EXPLAIN QUERY PLAN SELECT name FROM runs WHERE commit_id = 'x'")
        assert "team_runs_commit" in str(plan.fetchall())
        with pytest.raises(sqlite3.IntegrityError, match="no such run"):
            db.execute("INSERT INTO team_notes VALUES ('nobody')")
        db.execute("INSERT INTO team_notes VALUES ('after')")
    finally:
        db.close()


def test_a_teams_index_on_a_column_layout_2_removes_refuses_the_sqlite_migration(
    v1_src: Path, tmp_path: Path
) -> None:
    """An index on runs.record_form (gone from runs in layout 2) cannot be made again: the
    opening is refused with one line and the layout-1 store is left as it was."""
    path = write_jsonl(tmp_path / "runs.jsonl", sweep_bundles()[:2])
    db_path = tmp_path / "v1.sqlite3"
    ((filled, _, _),) = run_cli(v1_src, [["ingest", "--db", str(db_path), str(path)]])
    assert filled == 0
    db = sqlite3.connect(db_path)
    with db:
        db.execute("CREATE INDEX team_runs_form ON runs (record_form)")
    db.close()
    before = db_path.read_bytes()
    ((status, _, err),) = run_cli(None, [["migrate", "--db", str(db_path)]])
    assert status == 2
    assert err.count("\n") == 1
    assert f"cannot migrate store layout version 1 to {LAYOUT_VERSION} (the store is" in err
    assert "record_form" in err
    assert db_path.read_bytes() == before

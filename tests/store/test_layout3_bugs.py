"""Layout 3's bugs found by red-teaming it: each test here fails on the layout-3 code it
was written against (layout3 at 71233f8) and passes once the bug is fixed.

- PostgreSQL refuses a valid run whose labels or branch are long and varied: the unique
  btree index on ``run_groups.key`` (the whole combination as JSON text) takes at most
  2704 bytes an entry, and a label value may be 4096 characters (schema StringMap). The
  same store refuses to migrate from layout 2 if it holds such a run.
- A run seen again with other provenance (skipped, the first arrival keeps its own)
  still inserts the group of its new values: ``run_groups`` gets rows no run names.
- SQLite's migration builds ``runs`` again and drops the old table: a team's own index
  and trigger on ``runs`` are gone without a word, and a team's view on ``runs`` makes
  every opening fail (the renamed table breaks the view) until the view is dropped.
"""

from __future__ import annotations

import random
import sqlite3
import string
from pathlib import Path

import pytest
from _layout3_corpus import (
    OLD_COMMIT,
    old_code,
    run_cli,
    sweep_bundles,
    variant,
    write_jsonl,
)

# Valid values: a label value and a branch may be 4096 characters (StringMap).
# (Seeded for a stable test, not for secrecy.)
_VARIED = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=4096))  # noqa: S311


@pytest.fixture(scope="module")
def old_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout-2 code (main when layout 3 branched)."""
    return old_code(OLD_COMMIT, tmp_path_factory.mktemp("layout2-code"))


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
    assert (status, err) == (
        0,
        "ingested 1 file(s): 2 record(s) added, 0 skipped"
        " (0 already stored, 0 differing only in provenance)\n",
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
    ((status, _, err),) = run_cli(None, [["export", "--db", postgres_url, "-o", str(out)]])
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
        None, [["export", "--db", str(db_path), "-o", str(tmp_path / "out.jsonl")]]
    )
    assert (status, err) == (0, f"exported 4 record(s) to {tmp_path / 'out.jsonl'}\n")
    db = sqlite3.connect(db_path)
    try:
        assert db.execute("SELECT value FROM kernelindex_layout").fetchall() == [("3",)]
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

"""Layout 3 to 4: ``runs.degraded`` and ``runs.samples``, each stored run's mark and
sample count computed from its record's text (``conditions.degraded_reason`` of its
``spec``, its ``timing.samples``) in one transaction, by a command that writes
(``kernelindex migrate``, or ingest), never by a reader.

The layout-3 stores are written by kernelindex-sdk 0.6.1's own code (``src/`` of main
when layout 4 branched, from the repository's history), SQLite and PostgreSQL.
"""

# The statements name constant tables and columns only.
# ruff: noqa: S608

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import run_in_process
from _layout3_corpus import old_code, run_cli, sweep_bundles, write_jsonl
from _layout3_store import layout3_store, snapshot
from _sql import query

from kernelindex_sdk.conditions import degraded_reason
from kernelindex_sdk.store import (
    LAYOUT_VERSION,
    Store,
    StoreDamagedError,
    migrate_store,
    open_store,
)

#: The last commit of layout 3 (main's head when layout 4 branched from it).
LAYOUT3_COMMIT = "1c4cc2ee9ead5d26b7d8f687dfca8c7fc68ed282"


def _gpu(throttle: list[str], low: float, high: float) -> dict[str, Any]:
    return {
        "gpu": {
            "samples": 12,
            "throttleReasons": throttle,
            "smClockMhz": {"min": low, "median": high, "max": high},
        }
    }


def _corpus() -> list[dict[str, Any]]:
    """Runs without conditions, fit ones, and degraded ones (throttled, clocks dropped);
    one without a sample count."""
    runs = sweep_bundles()[:6]
    del runs[4]["run"]["spec"]["timing"]["samples"]
    runs[1]["run"]["spec"]["conditions"] = _gpu([], 1980, 1980)
    runs[2]["run"]["spec"]["conditions"] = _gpu(["HwSlowdown"], 1980, 1980)
    runs[3]["run"]["spec"]["conditions"] = _gpu(["GpuIdle"], 1000, 1980)
    return runs


@pytest.fixture(scope="module")
def layout3_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kernelindex-sdk 0.6.1's code (layout 3)."""
    return old_code(LAYOUT3_COMMIT, tmp_path_factory.mktemp("layout3-code"))


def _expected(runs: list[dict[str, Any]]) -> dict[str, str | None]:
    return {run["run"]["metadata"]["name"]: degraded_reason(run["run"]["spec"]) for run in runs}


def _samples(runs: list[dict[str, Any]]) -> dict[str, int | None]:
    return {
        run["run"]["metadata"]["name"]: run["run"]["spec"]["timing"].get("samples") for run in runs
    }


def test_a_layout_3_store_of_0_6_1_migrates_with_each_runs_degraded_mark(
    layout3_src: Path, store_url: str, tmp_path: Path
) -> None:
    runs = _corpus()
    path = write_jsonl(tmp_path / "runs.jsonl", runs)
    ((filled, _, err),) = run_cli(layout3_src, [["ingest", "--db", store_url, str(path)]])
    assert filled == 0, err
    assert query(store_url, "SELECT value FROM kernelindex_layout") == [("3",)]
    before = snapshot(store_url)
    # A reader refuses it and leaves it as it was.
    status, _, err = run_in_process("history", "--db", store_url)
    assert status == 2
    assert "needs migrating" in err
    assert snapshot(store_url) == before

    status, _, err = run_in_process("migrate", "--db", store_url)
    assert status == 0, err
    assert err.endswith(f"migrated from layout version 3 to {LAYOUT_VERSION}\n")
    assert query(store_url, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    expected = _expected(runs)
    assert sum(reason is not None for reason in expected.values()) == 2
    assert dict(query(store_url, "SELECT name, degraded FROM runs")) == expected
    counts = _samples(runs)
    # Every run its own count, but the one that recorded none.
    assert [type(n) for n in counts.values()] == [int] * 4 + [type(None), int]
    assert dict(query(store_url, "SELECT name, samples FROM runs")) == counts
    with open_store(store_url, create=False) as store:
        assert {row.name: row.degraded for row in store.rows()} == expected
        assert {row.name: row.samples for row in store.rows()} == counts
    out = tmp_path / "out.jsonl"
    assert run_in_process("export", "--db", store_url, "-o", str(out))[0] == 0
    assert out.read_bytes() == path.read_bytes()
    # Its tables are those of a new store of this version.
    fresh = tmp_path / "fresh.sqlite3"
    with open_store(fresh) as store:
        assert store.ingest([path]).added == len(runs)
        assert {row.name: row.degraded for row in store.rows()} == expected
    if store_url.startswith("sqlite"):
        columns = "SELECT name, type, \"notnull\" FROM pragma_table_info('runs')"
        assert query(store_url, columns) == query(str(fresh), columns)
    # Nothing to do the second time.
    assert migrate_store(store_url) == LAYOUT_VERSION


def test_ingest_migrates_a_layout_3_store_and_keeps_a_teams_index_and_view(
    store_url: str, tmp_path: Path
) -> None:
    runs = _corpus()
    layout3_store(store_url, [write_jsonl(tmp_path / "old.jsonl", runs[:4])])
    query(store_url, "CREATE INDEX team_runs_branch ON runs (branch)")
    query(store_url, "CREATE VIEW team_medians AS SELECT name, median_ns FROM runs")
    with open_store(store_url) as store:
        report = store.ingest([write_jsonl(tmp_path / "new.jsonl", runs[4:])])
        assert {row.name: row.degraded for row in store.rows()} == _expected(runs)
        assert {row.name: row.samples for row in store.rows()} == _samples(runs)
    assert report.added == 2
    assert len(query(store_url, "SELECT * FROM team_medians")) == 6
    if store_url.startswith("sqlite"):
        found = "SELECT name FROM sqlite_master WHERE name LIKE 'team_%' ORDER BY name"
    else:
        found = (
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexname LIKE 'team_%' UNION ALL SELECT table_name FROM"
            " information_schema.views WHERE table_schema = current_schema() ORDER BY 1"
        )
    assert [row[0] for row in query(store_url, found)] == ["team_medians", "team_runs_branch"]


def test_a_run_whose_text_is_gone_refuses_the_migration_and_leaves_the_store(
    store_url: str, tmp_path: Path
) -> None:
    runs = _corpus()
    layout3_store(store_url, [write_jsonl(tmp_path / "old.jsonl", runs)])
    name = runs[2]["run"]["metadata"]["name"]
    query(
        store_url,
        f"DELETE FROM run_texts WHERE seq = (SELECT seq FROM runs WHERE name = '{name}')",
    )
    before = snapshot(store_url)
    status, _, err = run_in_process("migrate", "--db", store_url)
    assert status == 1
    assert err.count("\n") == 1
    assert f"damaged store: run {name!r} has no text in run_texts" in err
    assert snapshot(store_url) == before
    with pytest.raises(StoreDamagedError):
        migrate_store(store_url)


def test_a_degraded_run_is_marked_from_its_first_ingest(store: Store, tmp_path: Path) -> None:
    runs = _corpus()
    assert store.ingest([write_jsonl(tmp_path / "runs.jsonl", runs)]).added == len(runs)
    marks = {row.name: row.degraded for row in store.rows()}
    assert marks == _expected(runs)
    throttled = marks[runs[2]["run"]["metadata"]["name"]]
    assert throttled is not None
    assert "HwSlowdown" in throttled
    assert json.loads(store.record_text(runs[2]["run"]["metadata"]["name"])) == runs[2]

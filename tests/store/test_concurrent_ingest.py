"""Eight processes ingest overlapping files into one PostgreSQL store at once.

Every record is stored exactly once, a file with a clash is refused whole, nobody
deadlocks (each worker must finish in time), and nothing is lost.
"""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from _ingest_worker import ingest
from _records import bundle
from _sql import query

from kernelindex_sdk import dumps
from kernelindex_sdk.store import open_store

WORKERS = 8
FILES = 6
PER_FILE = 150
STEP = 100
DEADLINE_S = 300


def _write(path: Path, docs: list[dict[str, Any]]) -> str:
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    return str(path)


def test_eight_concurrent_ingesters_store_each_record_once(
    postgres_url: str, tmp_path: Path
) -> None:
    pool = [
        bundle(median=1000 + i, params={"tokens": i, "dtype": "fp32"})
        for i in range(STEP * (FILES - 1) + PER_FILE)
    ]
    # Overlapping files: each shares a third of its records with the next.
    good = [
        _write(tmp_path / f"good-{k}.jsonl", pool[k * STEP : k * STEP + PER_FILE])
        for k in range(FILES)
    ]
    # Stored before the race, so that the clash files below always meet it first.
    settled = bundle(median=5, params={"tokens": 999_999, "dtype": "fp32"})
    with open_store(postgres_url) as store:
        assert store.ingest([_write(tmp_path / "settled.jsonl", [settled])]).added == 1
    changed = json.loads(json.dumps(settled))
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    fresh = [bundle(params={"tokens": -1 - i, "dtype": "fp32"}) for i in range(20)]
    clash = [
        _write(tmp_path / f"clash-{k}.jsonl", [*fresh[k * 10 : k * 10 + 10], changed])
        for k in range(2)
    ]
    # Each worker takes every good file, starting at its own one, and some take a clash.
    plans = [good[w % FILES :] + good[: w % FILES] for w in range(WORKERS)]
    plans[1].insert(2, clash[0])
    plans[5].insert(3, clash[1])
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(WORKERS, mp_context=context) as executor:
        futures = [executor.submit(ingest, postgres_url, plan) for plan in plans]
        results = [future.result(timeout=DEADLINE_S) for future in futures]

    added = sum(int(r["added"]) for r in results)
    identical = sum(int(r["identical"]) for r in results)
    refused = sum(int(r["refused"]) for r in results)
    problems = [p for r in results for p in r["problems"]]
    assert added == len(pool)
    assert identical == WORKERS * FILES * PER_FILE - len(pool)
    assert refused == 2 * 11
    assert sorted(problems) == sorted((path, "store-clash") for path in clash)
    with open_store(postgres_url) as store:
        rows = store.rows()
        names = [row.name for row in rows]
        assert len(names) == len(set(names)) == len(pool) + 1
        expected = {d["run"]["metadata"]["name"]: d for d in [*pool, settled]}
        assert set(names) == set(expected)
        for name, text in store.records(names):
            assert text == dumps(expected[name], indent=None)
        # One protocol and one environment shared by all, each stored once.
        count = query(store, "SELECT count(*) FROM protocols")[0][0]
        assert count == 1
        # Each combination of a run's shared columns is one group (run_groups' key is
        # unique), every run names the group of its own values, and no group is left
        # without a run (a refused file's groups went with it).
        assert query(
            store,
            "SELECT count(*) FROM runs r JOIN run_groups g ON g.id = r.group_id"
            " WHERE g.status = r.status AND g.branch IS NOT DISTINCT FROM r.branch"
            " AND g.workload_digest = r.workload_digest"
            " AND g.implementation_digest = r.implementation_digest"
            " AND g.protocol_digest = r.protocol_digest"
            " AND g.environment_digest = r.environment_digest AND g.labels = r.labels",
        ) == [(len(pool) + 1,)]
        combos = query(
            store,
            "SELECT count(*) FROM (SELECT DISTINCT status, branch, workload_digest,"
            " implementation_digest, protocol_digest, environment_digest, labels FROM runs) c",
        )
        assert query(store, "SELECT count(*) FROM run_groups") == combos

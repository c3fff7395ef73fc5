"""Red team of 0.6.1's ingest shortcuts: the store's answers do not depend on them.

Checked against 0.6.0 (57e24a3) by ingesting the same files through both and comparing
every table, the reports and the export: no difference was found (SQLite, batches of
1, 3, 7, 64 and 2000). These tests pin the properties that held, on SQLite and a real
PostgreSQL: a mixed corpus (bundles, runs alone, protocol and environment documents
alone, None patterns that alternate and that run long, labels in two key orders,
latencies from timing and from measurements in several units) gives the same reports,
export and rows whatever the batch size and the backend; re-ingesting it, with
provenance changed or given on the command line, counts as 0.6.0 did.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from _sql import query

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.store import Store, open_store


def _corpus(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)  # noqa: S311 (test data, not a secret)
    lines = []
    for i in range(count):
        kwargs: dict[str, Any] = {}
        # Long runs of one None pattern, then alternating ones (the two NULL paths).
        if ((i // 20) % 2 and i % 2) or rnd.random() < 0.1:
            kwargs["p20"] = kwargs["p80"] = None
        if rnd.random() < 0.1:
            kwargs["median"] = None
        doc = bundle(
            params={"tokens": rnd.randrange(3), "dtype": "fp32"},
            provider=rnd.choice(["torch", "triton"]),
            timer=rnd.choice(["cuda_events", "cuda_graph"]) if i % 9 == 0 else "cuda_events",
            failed="boom" if rnd.random() < 0.05 else None,
            **kwargs,
        )
        run = doc["run"]
        run["metadata"]["name"] = f"r-{seed}-{i:04d}"
        spec = run["spec"]
        if spec.get("measurements") and rnd.random() < 0.2:
            # The same p20 in microseconds, as a float: rounded to whole ns once.
            first = spec["measurements"][0]
            first["unit"], first["value"] = "us", first["value"] / 1000 - 0.0004
        if rnd.random() < 0.3:
            provenance.annotate(
                doc,
                provenance.Provenance(
                    commit=f"{rnd.randrange(3):040x}",
                    branch=rnd.choice([None, "main", "dev"]),
                    commit_time=rnd.choice([None, "2026-01-01T00:00:00Z"]),
                ),
            )
        if rnd.random() < 0.15:
            labels = {"b": "1", "a": rnd.choice(["x", "é"])}
            run["metadata"]["labels"] = (
                labels if rnd.random() < 0.5 else dict(reversed(labels.items()))
            )
        kind = rnd.random()
        if kind < 0.1:
            lines.append(json.dumps(run, ensure_ascii=False, separators=(",", ":")))
        elif kind < 0.13:
            lines.append(dumps(doc["protocol"], indent=None, validate=False))
            lines.append(dumps(doc, indent=None, validate=False))
        else:
            lines.append(dumps(doc, indent=None, validate=False))
    return lines


def _changed(lines: list[str], seed: int) -> list[str]:
    rnd = random.Random(seed)  # noqa: S311 (test data, not a secret)
    out = []
    for line in lines:
        doc = json.loads(line)
        if doc.get("kind") != "BenchmarkProtocol" and rnd.random() < 0.3:
            provenance.annotate(doc, provenance.Provenance(commit="f" * 40, branch="other"))
        out.append(dumps(doc, indent=None, validate=False))
    return out


def _steps(tmp_path: Path) -> list[tuple[list[Path], dict[str, str]]]:
    first = _corpus(7, 150)
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join(first) + "\n", encoding="utf-8")
    b = tmp_path / "b.jsonl"
    b.write_text("\n".join(_changed(first, 8)) + "\n", encoding="utf-8")
    c = tmp_path / "c.jsonl"
    c.write_text("\n".join(_corpus(9, 70)) + "\n", encoding="utf-8")
    given = {"commit": "a" * 40, "branch": "given"}
    # A clash past a batch boundary, and a latency past 64 bits: each file refused whole.
    clash = [json.loads(line) for line in first[:12]]
    run = clash[11].get("run", clash[11])
    run["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    d = tmp_path / "d.jsonl"
    d.write_text("".join(json.dumps(doc) + "\n" for doc in clash), encoding="utf-8")
    big = bundle(p20=1, p80=2**63, median=2)
    big["run"]["metadata"]["name"] = "big"
    e = tmp_path / "e.jsonl"
    e.write_text("\n".join([*_corpus(10, 9), dumps(big, indent=None)]) + "\n", encoding="utf-8")
    return [
        ([a], {}),
        ([a], {}),
        ([b], {}),
        ([b], given),
        ([c], given),
        ([a, c], {}),
        ([d], {}),
        ([e], {}),
    ]


def _state(store: Store, tmp_path: Path, reports: list[Any]) -> dict[str, Any]:
    shown, url = str(tmp_path), store._backend.url.shown
    rows = query(
        store,
        "SELECT r.name, r.observed_at, r.commit_id, r.commit_time, r.branch, r.median_ns,"
        " r.p20_ns, r.p80_ns, r.status, r.source, g.status, g.branch, g.workload_digest,"
        " g.implementation_digest, g.protocol_digest, g.environment_digest"
        " FROM runs r JOIN run_groups g ON g.id = r.group_id ORDER BY r.seq",
    )
    ((groups,),) = query(store, "SELECT count(*) FROM run_groups")
    ((unused,),) = query(
        store,
        "SELECT count(*) FROM run_groups g WHERE NOT EXISTS"
        " (SELECT 1 FROM runs r WHERE r.group_id = g.id)",
    )
    return {
        "reports": [
            (
                r.files,
                r.added,
                r.identical,
                r.provenance_only,
                r.refused,
                r.clashes,
                [str(p).replace(url, "<store>").replace(shown, "") for p in r.problems],
            )
            for r in reports
        ],
        "rows": [
            tuple(None if v is None else str(v).replace(shown, "") for v in row) for row in rows
        ],
        "groups": groups,
        "unused": unused,
        "export": list(store.export_lines()),
    }


def _run(store: Store, tmp_path: Path) -> dict[str, Any]:
    reports = [store.ingest(paths, **given) for paths, given in _steps(tmp_path)]
    return _state(store, tmp_path, reports)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The corpus ingested into SQLite with the default batch."""
    where = tmp_path_factory.mktemp("reference")
    with open_store(where / "s.sqlite3") as store:
        return _run(store, where)


@pytest.mark.parametrize("batch", [1, 7, 64])
def test_a_mixed_corpus_gives_the_same_store_whatever_the_batch_and_backend(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reference: dict[str, Any],
    batch: int,
) -> None:
    from kernelindex_sdk.store import _ingest

    monkeypatch.setattr(_ingest, "BATCH", batch)
    state = _run(store, tmp_path)
    assert state["reports"] == reference["reports"]
    assert state["rows"] == reference["rows"]
    assert state["export"] == reference["export"]
    assert (state["groups"], state["unused"]) == (reference["groups"], 0)


def test_the_reference_counts_are_0_6_0s(reference: dict[str, Any]) -> None:
    """The counts 0.6.0 (57e24a3) gave for the same steps."""
    counts = [report[:6] for report in reference["reports"]]
    assert counts == EXPECTED_COUNTS
    assert reference["groups"] == EXPECTED_GROUPS


EXPECTED_COUNTS = [
    (1, 151, 10, 0, 0, 0),
    (1, 0, 161, 0, 0, 0),
    (1, 0, 119, 42, 0, 0),
    (1, 0, 52, 109, 0, 0),
    (1, 70, 2, 0, 0, 0),
    (2, 0, 173, 60, 0, 0),
    (1, 0, 0, 0, 12, 1),
    (1, 0, 0, 0, 10, 0),
]
EXPECTED_GROUPS = 63


def test_sqlite_with_a_999_parameter_limit_ingests_as_0_6_0_did(tmp_path: Path) -> None:
    """FINDING: SQLite's parameter limit is a setting of the library's build
    (SQLITE_MAX_VARIABLE_NUMBER) and of each connection (sqlite3_limit), not of its
    version: 0.6.1 takes 32766 for any SQLite from 3.32 on and sends 64 runs of 21
    values (1,344 parameters) a statement, so a library built with the former default
    of 999 refuses the ingest ("too many SQL variables") that 0.6.0 (one run a
    statement) stored. The connection's limit is lowered here as such a build has it."""
    lines = []
    for i in range(130):
        doc = bundle(params={"tokens": i, "dtype": "fp32"})
        doc["run"]["metadata"]["name"] = f"limit-{i:03d}"
        if i % 3 == 0:
            provenance.annotate(doc, provenance.Provenance(commit="a" * 40))
        lines.append(dumps(doc, indent=None))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_store(tmp_path / "s.sqlite3") as store:
        store._backend._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # type: ignore[attr-defined]
        report = store.ingest([path])
        assert (report.added, report.ok) == (130, True)
        out = tmp_path / "out.jsonl"
        store.export(out)
    assert out.read_bytes() == path.read_bytes()

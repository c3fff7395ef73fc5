"""``kernelindex history`` and ``compare --history`` against a SQLite store."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _history_records import bundle, template, write_jsonl

from kernelindex_sdk import digest
from kernelindex_sdk._cli import main
from kernelindex_sdk.store import open_store


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def with_triton(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The bundle with another triton package: a new implementation digest."""
    spec = doc["run"]["spec"]
    spec["implementation"]["packages"]["triton"] = version
    spec["implementationDigest"] = digest.implementation_digest(spec["implementation"])
    return doc


@pytest.fixture
def store_path(store_url: str, tmp_path: Path) -> str:
    """A store (SQLite, then PostgreSQL) with a 40-point series on main: 5% slower from
    point 20, where triton moved."""
    rng = np.random.default_rng(5)
    base = template()
    docs = []
    for i in range(40):
        median = round(300_000 * (1.05 if i >= 20 else 1.0) * (1 + 0.01 * rng.standard_normal()))
        doc = bundle(base, i, median, commit=f"{i:040x}", branch="main")
        docs.append(with_triton(doc, "3.7.0") if i >= 20 else doc)
    db = store_url
    with open_store(db) as store:
        report = store.ingest([write_jsonl(tmp_path / "main.jsonl", docs)])
    assert report.ok
    return db


def test_history_json_names_the_step_and_its_cause(store_path: str) -> None:
    status, out, _ = run("history", "--db", store_path, "--format", "json")
    assert status == 0
    [series] = json.loads(out)["series"]
    assert series["hardware"] == "NVIDIA H200"
    assert len(series["points"]) == 40
    [change] = series["changes"]
    assert change["index"] == 20
    assert change["cause"] == "implementation"
    assert change["direction"] == "slower"
    assert change["differences"] == [
        {
            "object": "implementation",
            "field": "packages.triton",
            "before": "3.6.0",
            "after": "3.7.0",
        }
    ]
    assert series["points"][20]["commit"] == f"{20:040x}"


def test_history_filters_and_text(store_path: str) -> None:
    status, out, _ = run("history", "--db", store_path, "--provider", "nobody")
    assert (status, out.splitlines()[0]) == (0, "0 series, 0 with change points")
    status, out, _ = run("history", "--db", store_path, "--points", "2", "--changed")
    assert status == 0
    assert "packages.triton '3.6.0' -> '3.7.0'" in out
    assert "(latest 2 of 40 points)" in out


def test_history_of_a_missing_store_is_one_line(tmp_path: Path) -> None:
    status, out, err = run("history", "--db", str(tmp_path / "none.sqlite3"))
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_compare_history_flags_a_regression(store_path: str, tmp_path: Path) -> None:
    """NEW 10% slower than main's latest point: significant, and the gate trips."""
    base = with_triton(template(), "3.7.0")
    new = write_jsonl(tmp_path / "new.jsonl", [bundle(base, 99, 347_000, name="pr-run")])
    status, out, err = run(
        "compare", "--history", "main", str(new), "--db", store_path,
        "--format", "markdown", "--fail-on-regression", "5",
    )  # fmt: skip
    assert status == 1
    assert out.startswith("**1 pair(s)**, 0 not paired.")
    assert "main: latest of 40 point(s), commit " + f"{39:040x}"[:12] in out
    assert "regression:" in err


def test_compare_history_window_takes_the_median(store_path: str, tmp_path: Path) -> None:
    base = with_triton(template(), "3.7.0")
    new = write_jsonl(tmp_path / "new.jsonl", [bundle(base, 99, 315_000, name="pr-run")])
    status, out, _ = run(
        "compare", "--history", "main", str(new), "--db", store_path,
        "--window", "20", "--format", "json",
    )  # fmt: skip
    assert status == 0
    [pair] = json.loads(out)
    with open_store(store_path) as store:
        last = [r.median_ns for r in store.rows(branch="main")][-20:]
    assert pair["base"]["median"] == float(np.median(last))
    assert pair["notes"][0].startswith("main: median of its last 20 point(s)")


def test_compare_history_leaves_out_other_series_and_says_why(
    store_path: str, tmp_path: Path
) -> None:
    other = template()
    other["run"]["spec"]["workloadDigest"] = "sha256:" + "0" * 64
    del other["run"]["spec"]["workload"]
    new = write_jsonl(tmp_path / "new.jsonl", [bundle(other, 99, 300_000, name="pr-other")])
    status, out, _ = run("compare", "--history", "main", str(new), "--db", store_path)
    assert status == 0
    assert "only in NEW" in out
    assert "pr-other" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("compare", "--history", "main", "a.jsonl", "b.jsonl"),
        ("compare", "a.jsonl"),
        ("compare", "--history", "main", "a.jsonl", "--window", "0"),
        ("history", "--points", "-1"),
        ("compare", "a.jsonl", "b.jsonl", "--window", "3"),
        ("compare", "a.jsonl", "b.jsonl", "--db", "x.sqlite3"),
        ("compare", "--history", "main", "a.jsonl", "--across-protocols"),
        ("compare", "--history", "main", "a.jsonl", "--base-provider", "torch"),
    ],
)
def test_usage_errors_exit_2(argv: tuple[str, ...]) -> None:
    status, out, err = run(*argv)
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1


def with_harness(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The bundle under another protocol (another harness version)."""
    doc["protocol"]["spec"]["harness"]["version"] = version
    doc["protocol"]["metadata"]["name"] += "-" + version.replace(".", "-")
    doc["run"]["spec"]["protocolDigest"] = digest.protocol_digest(doc["protocol"]["spec"])
    return doc


def test_compare_history_picks_the_series_of_news_protocol(tmp_path: Path) -> None:
    """main measured under an old protocol, then a new one: NEW under the new one pairs
    with its series alone; NEW under a third protocol meets the latest, which says so."""
    old = with_harness(template(), "9.0.0")
    new = with_harness(template(), "9.1.0")
    docs = [bundle(old, i, 300_000, commit=f"{i:040x}", branch="main") for i in range(5)]
    docs += [bundle(new, i, 200_000, commit=f"{i:040x}", branch="main") for i in range(5, 10)]
    db = str(tmp_path / "p.sqlite3")
    with open_store(db) as store:
        assert store.ingest([write_jsonl(tmp_path / "main.jsonl", docs)]).ok
    pr = write_jsonl(tmp_path / "pr.jsonl", [bundle(new, 99, 201_000, name="pr-run")])
    status, out, _ = run("compare", "--history", "main", str(pr), "--db", db, "--format", "json")
    assert status == 0
    [pair] = json.loads(out)
    assert pair["base"]["median"] == 200_000
    other = with_harness(template(), "9.2.0")
    pr = write_jsonl(tmp_path / "pr2.jsonl", [bundle(other, 99, 201_000, name="pr-other")])
    status, out, _ = run("compare", "--history", "main", str(pr), "--db", db, "--format", "json")
    assert status == 0
    rows = json.loads(out)
    assert len(rows) == 2
    [base_only] = [r for r in rows if r["new"] is None]
    assert base_only["base"]["median"] == 200_000
    assert "harness.version '9.1.0' vs '9.2.0'" in base_only["unpaired"]

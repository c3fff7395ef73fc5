"""History on held-out series: other noise, several steps, every cause, hostile input."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _history_records import bundle, template, write_jsonl
from _history_rows import row

from kernelindex_sdk import digest
from kernelindex_sdk._cli import main
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.changepoints import find_change_points
from kernelindex_sdk.store.history import history, history_as_json, render_history

IMPL_A, IMPL_B = "sha256:" + "1" * 64, "sha256:" + "3" * 64
ENV_A, ENV_B = "sha256:" + "e" * 64, "sha256:" + "d" * 64
SPECS: dict[tuple[str, str], Mapping[str, Any]] = {
    ("implementation", IMPL_A): {"provider": "triton", "sourceDigest": "sha256:" + "5" * 64},
    ("implementation", IMPL_B): {"provider": "triton", "sourceDigest": "sha256:" + "6" * 64},
    ("environment", ENV_A): {
        "hardware": {"product": "NVIDIA H200"},
        "driver": "570.1",
        "software": {"torch": "2.10.0"},
    },
    ("environment", ENV_B): {
        "hardware": {"product": "NVIDIA H200"},
        "driver": "575.2",
        "software": {"torch": "2.11.0"},
    },
}
CHANGE_KEYS = {
    "index", "commit", "run", "ratio", "direction", "cause", "differences", "before", "after",
    "pValue", "tested", "verdict", "evidence", "causes", "movedWith",
}  # fmt: skip


def spec(kind: str, digest: str) -> Mapping[str, Any] | None:
    return SPECS.get((kind, digest))


def heavy(n: int, steps: list[tuple[int, float]], seed: int) -> list[float]:
    """Student t (3 degrees of freedom) noise of 1% standard deviation around 2 ms."""
    rng = np.random.default_rng(seed)
    level = np.full(n, 2e6)
    for at, factor in steps:
        level[at:] *= factor
    return list(level * (1 + 0.01 * rng.standard_t(3, n) / np.sqrt(3)))


def rows_of(values: list[float], at: int, **after: Any) -> list[Any]:
    return [row(i, m, **(after if i >= at else {})) for i, m in enumerate(values)]


@pytest.mark.parametrize(
    ("fields", "cause", "differences"),
    [
        (
            {"implementation_digest": IMPL_B},
            "implementation",
            [["implementation", "sourceDigest", "sha256:" + "5" * 64, "sha256:" + "6" * 64]],
        ),
        (
            {"environment_digest": ENV_B},
            "environment",
            [
                ["environment", "driver", "570.1", "575.2"],
                ["environment", "software.torch", "2.10.0", "2.11.0"],
            ],
        ),
        ({"labels": {"v": "2"}}, "labels", [["labels", "v", None, "2"]]),
        ({}, "unexplained", []),
    ],
)
@pytest.mark.parametrize("offset", [0, -1, 1])
def test_json_change_names_its_cause_exactly(
    fields: dict[str, Any], cause: str, differences: list[list[Any]], offset: int
) -> None:
    """A 6% step at 30 of 50, the recorded change at the step or one point beside it."""
    values = heavy(50, [(30, 0.94)], seed=40 + offset)
    rows = rows_of(values, 30 + offset, **fields)
    [series] = history_as_json(history(rows, spec=spec))["series"]
    assert [p["run"] for p in series["points"]] == [r.name for r in rows]
    [change] = series["changes"]
    assert set(change) == CHANGE_KEYS
    # A recorded change one point away is where the step is placed.
    assert change["index"] == (30 + offset if cause != "unexplained" else 30)
    assert change["run"] == rows[change["index"]].name
    assert change["commit"] == rows[change["index"]].commit
    assert (change["cause"], change["direction"], change["tested"]) == (cause, "faster", True)
    assert change["causes"] == [cause]
    # 6% faster, well past the noise: an improvement by the one verdict.
    assert change["verdict"] == "improvement"
    assert change["ratio"] == pytest.approx(0.94, abs=0.01)
    got = [[d["object"], d["field"], d["before"], d["after"]] for d in change["differences"]]
    assert got == differences


def test_a_protocol_change_is_a_new_series_never_a_regression() -> None:
    values = heavy(40, [(20, 1.3)], seed=9)
    rows = rows_of(values, 20, protocol_digest="sha256:" + "c" * 64)
    found = history(rows, spec=spec)
    assert [len(h.series.points) for h in found] == [20, 20]
    assert [h.changes for h in found] == [(), ()]
    assert found[1].follows is not None
    assert found[1].follows.protocol_digest == "sha256:" + "b" * 64


def test_a_step_there_and_back_is_found_at_both_ends() -> None:
    """No single split of a 3% bump shows it; the two-split test does."""
    hits = 0
    for seed in range(40):
        values = heavy(60, [(20, 1.03), (40, 1 / 1.03)], seed=seed)
        at = [c.index for c in find_change_points(values)]
        hits += any(abs(i - 20) <= 1 for i in at) + any(abs(i - 40) <= 1 for i in at)
    assert hits >= 0.9 * 80


def test_an_outlying_run_hides_no_step_and_makes_none() -> None:
    rng = np.random.default_rng(3)
    values = list(
        1e6 * np.r_[np.ones(20), np.full(20, 1.04)] * (1 + 0.01 * rng.standard_normal(40))
    )
    values[10] *= 1.3
    assert [c.index for c in find_change_points(values)] == [20]
    flat = list(1e6 * (1 + 0.01 * rng.standard_normal(200)))
    flat[50] *= 1.5
    flat[51] *= 1.4
    assert find_change_points(flat) == []


def test_heavy_tailed_noise_keeps_false_alarms_under_the_goal() -> None:
    alarms = sum(len(find_change_points(heavy(100, [], seed=s))) for s in range(100))
    assert alarms / 10_000 * 1000 <= 0.5


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def ingest(db: str, path: Path, docs: list[dict[str, Any]]) -> None:
    with open_store(db) as store:
        assert store.ingest([write_jsonl(path, docs)]).ok


def test_an_empty_store_has_no_series(tmp_path: Path) -> None:
    db = str(tmp_path / "empty.sqlite3")
    with open_store(db):
        pass
    assert run("history", "--db", db) == (0, "0 series, 0 with change points\n", "")
    found = json.loads(run("history", "--db", db, "--format", "json")[1])
    assert found == {"series": [], "relative": []}


@pytest.mark.parametrize("command", ["history", "compare"])
def test_a_read_never_creates_a_store(tmp_path: Path, command: str) -> None:
    db = tmp_path / "none.sqlite3"
    argv = ["history"] if command == "history" else ["compare", "--history", "main", "x.jsonl"]
    status, out, err = run(*argv, "--db", str(db))
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert not db.exists()


@pytest.mark.parametrize(
    "url", ["foo://x", "", "postgresql://nobody@127.0.0.1:1/none", "sqlite:///"]
)
def test_bad_store_urls_are_one_line(url: str, tmp_path: Path) -> None:
    status, out, err = run("history", "--db", url)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_a_file_that_is_not_a_store_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database\n")
    status, _, err = run("history", "--db", str(junk))
    assert status == 2
    assert len(err.splitlines()) == 1


def test_failed_runs_only_zero_and_huge_medians_and_no_spread(tmp_path: Path) -> None:
    base = template()
    docs = []
    for i in range(3):
        doc = bundle(base, i, 300_000, commit=f"{i:040x}", branch="main")
        doc["run"]["spec"]["status"] = "failed"
        del doc["run"]["spec"]["timing"]
        del doc["run"]["spec"]["measurements"]
        doc["run"]["spec"]["failure"] = {"reason": "error", "message": "boom"}
        docs.append(doc)
    zero = bundle(base, 5, 0, commit="f" * 40, branch="main", name="zero-median")
    huge = bundle(base, 6, 2**53 - 1, commit="e" * 40, branch="main", name="huge-median")
    bare = bundle(base, 7, 400_000, commit="d" * 40, branch="main", name="no-spread")
    bare["run"]["spec"]["measurements"] = []
    db = str(tmp_path / "odd.sqlite3")
    ingest(db, tmp_path / "failed.jsonl", docs)
    status, out, err = run("history", "--db", db)
    assert (status, err) == (0, "")
    assert "0 point(s), 3 failed run(s)" in out
    ingest(db, tmp_path / "odd.jsonl", [zero, huge, bare])
    status, out, err = run("history", "--db", db, "--format", "json")
    # The 0 ns run is no point (no ratio compares it), and is said so, not dropped.
    assert status == 0
    assert err.splitlines() == [
        "kernelindex: run 'zero-median' left out of series jsd forward beta=0.5 dtype=fp32"
        " inputGrad=False tokens=1024 vocab=128256 · torch-compile"
        " (kernelindex_sdk.reference_kernels.jsd.reference:jsd_torch) · NVIDIA H200:"
        " a latency median of 0 ns, which no ratio can compare"
    ]
    [series] = json.loads(out)["series"]
    assert [p["run"] for p in series["points"]] == ["huge-median", "no-spread"]
    assert series["points"][1]["p20"] is None
    assert len(series["failed"]) == 3
    assert [(r["run"], r["median"]) for r in series["skipped"]] == [("zero-median", 0)]
    status, out, _ = run("history", "--db", db)
    assert status == 0
    assert "3 failed run(s) (no timing; not in the points), 1 run(s) left out" in out


def test_control_characters_are_escaped_in_text_and_markdown() -> None:
    rows = [
        row(
            i,
            1e6 * (1.2 if i >= 2 else 1.0),
            labels={"v\x1b[31m": f"{i >= 2}\n"},
            # One commit per run: runs of one commit would be replicates of one point.
            commit=f"c\r{i}",
            hardware="GPU\x07\u2028",
            provider="t\x00",
        )
        for i in range(4)
    ]
    found = history(rows, spec=spec)
    for fmt in ("text", "markdown"):
        text = render_history(found, fmt)
        assert "\x1b" not in text
        assert "\r" not in text
        assert "\x07" not in text
        assert "\x00" not in text
        assert "\u2028" not in text
        assert "\\x1b" in text
        # Markdown escapes the escape's backslash too: it renders as GPU\x07\u2028.
        shown = text if fmt == "text" else text.replace("\\\\", "\\")
        assert "GPU\\x07\\u2028" in shown
    assert json.loads(render_history(found, "json"))["series"][0]["points"][0]["commit"] == "c\r0"


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
def test_window_must_be_a_positive_integer(value: str) -> None:
    status, out, err = run("compare", "--history", "main", "x.jsonl", "--window", value)
    assert (status, out) == (2, "")
    assert f"expected an integer >= 1, got {value!r}" in err


def test_a_huge_window_takes_every_point_and_a_branch_without_runs_pairs_nothing(
    tmp_path: Path,
) -> None:
    base = template()
    docs = [
        bundle(base, i, 300_000 + 1_000 * i, commit=f"{i:040x}", branch="main") for i in range(5)
    ]
    db = str(tmp_path / "main.sqlite3")
    ingest(db, tmp_path / "main.jsonl", docs)
    new = write_jsonl(tmp_path / "new.jsonl", [bundle(base, 99, 302_000, name="pr-run")])
    status, out, _ = run(
        "compare", "--history", "main", str(new), "--db", db, "--window", "9" * 30,
        "--format", "json",
    )  # fmt: skip
    assert status == 0
    [pair] = json.loads(out)
    assert pair["base"]["median"] == 302_000
    status, out, _ = run("compare", "--history", "dev", str(new), "--db", db)
    assert status == 0
    assert "only in NEW" in out


def with_software(doc: dict[str, Any], driver: str, torch: str) -> dict[str, Any]:
    """The bundle on the same GPU with another driver and torch: a new environment."""
    env = doc["environment"]
    env["spec"]["software"].update(driver=driver, torch=torch)
    env["metadata"]["name"] += "-" + driver.replace(".", "-")
    doc["run"]["spec"]["environmentDigest"] = digest.environment_digest(env["spec"])
    return doc


def test_stored_records_name_an_environment_step_and_a_labels_step(
    store_url: str, tmp_path: Path
) -> None:
    """Held-out through the store: t-distributed noise, a 6% step where the driver and
    torch moved, then a 7% step where only a label moved (steps the threshold counts)."""
    rng = np.random.default_rng(77)
    base = template()
    docs = []
    for i in range(70):
        level = 500_000 * (1.06 if i >= 25 else 1.0) * (1.07 if i >= 50 else 1.0)
        median = round(level * (1 + 0.01 * rng.standard_t(3) / np.sqrt(3)))
        doc = bundle(base, i, median, commit=f"{i:040x}", branch="main")
        if i >= 25:
            doc = with_software(doc, "590.1", "2.12.0")
        if i >= 50:
            doc["run"]["metadata"]["labels"]["flavour"] = "new"
        docs.append(doc)
    ingest(store_url, tmp_path / "main.jsonl", docs)
    status, out, err = run("history", "--db", store_url, "--format", "json")
    assert (status, err) == (0, "")
    [series] = json.loads(out)["series"]
    first, second = series["changes"]
    assert (first["index"], first["cause"], first["direction"]) == (25, "environment", "slower")
    assert [(d["field"], d["before"], d["after"]) for d in first["differences"]] == [
        ("software.driver", "580.159.04", "590.1"),
        ("software.torch", "2.11.0+cu130", "2.12.0"),
    ]
    assert (second["index"], second["cause"]) == (50, "labels")
    assert [(d["field"], d["before"], d["after"]) for d in second["differences"]] == [
        ("flavour", None, "new")
    ]
    assert second["run"] == series["points"][50]["run"]

"""History's points and causes: replicates pooled, steps placed where found, shared shifts,
degraded points, and the PR check that never compares NEW with itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _history_records import bundle, template, write_jsonl
from _history_rows import row

from kernelindex_sdk.compare import load_runs
from kernelindex_sdk.store import RunRow, open_store
from kernelindex_sdk.store.branch_compare import compare_to_branch
from kernelindex_sdk.store.history import history, history_as_json

TRITON = "sha256:" + "1" * 64
TRITON_2 = "sha256:" + "2" * 64
TORCH = "sha256:" + "3" * 64


class _Degraded(RunRow):
    """A RunRow with the store's ``degraded`` column (layout 4) until RunRow carries it."""


def degraded(r: RunRow, reason: str) -> RunRow:
    """``r`` marked degraded, whichever RunRow this tree has."""
    if "degraded" in RunRow._fields:
        return r._replace(degraded=reason)
    found = _Degraded(*r)
    found.degraded = reason  # type: ignore[attr-defined]
    return found


def test_reruns_of_one_commit_on_a_busy_machine_are_one_point_never_a_step() -> None:
    """The README's job run twice on one commit, the second 268 times slower with its own
    p80 265 times its p20: one point of two replicates, no change, nothing for Health."""
    quiet = row(0, 180_000, commit="c" * 40, name="first")
    busy = row(
        0, 48_000_000, commit="c" * 40, name="again", p20_ns=2_900_000, p80_ns=770_000_000
    )._replace(observed_at="2026-02-01T00:05:00.000Z")
    [h] = history([quiet, busy])
    assert h.changes == ()
    assert h.groups == ((0, 2),)
    assert history_as_json([h])["series"][0]["replicates"] == [[0, 2]]


def test_replicates_are_pooled_and_their_noise_judges_the_next_commit() -> None:
    """Three commits, the middle one run three times 10% apart: the pooled point is their
    median, and a 12% move to the next commit is within the noise they show."""
    rows = [row(0, 1e6)]
    rows += [row(1, m, name=f"r{i}") for i, m in enumerate((0.95e6, 1.0e6, 1.05e6))]
    rows += [row(2, 1.12e6)]
    [h] = history(rows)
    assert h.groups == ((0, 1), (1, 4), (4, 5))
    assert h.noise is not None
    assert h.noise.df == 2
    assert h.changes == ()


def test_a_step_the_verdict_found_between_neighbours_stays_where_it_was_found() -> None:
    """A short series steps 20% at its third point; its labels change one point later.
    The step is placed at the third point, unexplained: the label is not its cause."""
    rows = [
        row(i, 1e6 * (0.8 if i >= 2 else 1.0), labels={"v": "2"} if i >= 3 else {})
        for i in range(4)
    ]
    [h] = history(rows)
    [change] = h.changes
    assert (change.index, change.cause, change.tested) == (2, "unexplained", False)
    assert change.verdict is not None
    assert change.verdict.kind == "improvement"


def _sweep(step: float, triton_code_changes: bool, torch_step: float) -> list[RunRow]:
    rows = []
    for i in range(4):
        after = i >= 2
        rows.append(
            row(
                i,
                1e6 * (step if after else 1.0),
                name=f"triton-{i}",
                implementation_digest=TRITON_2 if after and triton_code_changes else TRITON,
            )
        )
        rows.append(
            row(
                i,
                2e6 * (torch_step if after else 1.0),
                name=f"torch-{i}",
                provider="torch",
                entry_point="torch:jsd",
                implementation_digest=TORCH,
            )
        )
    return rows


def test_a_shift_every_co_measured_line_shares_is_the_environment() -> None:
    """Both implementations of one sweep 14% slower at one commit, the triton code changed
    there too: the machine moved, and each line names the other."""
    found = {h.key.provider: h for h in history(_sweep(1.14, True, 1.14))}
    triton, torch = found["triton"], found["torch"]
    [t] = triton.changes
    assert (t.cause, t.moved_with) == ("environment", ("torch (torch:jsd)",))
    assert t.causes == ("environment", "implementation")
    [c] = torch.changes
    assert (c.cause, c.moved_with) == ("environment", ("triton (pkg.mod:jsd)",))
    assert c.causes == ("environment",)


def test_a_code_change_its_baseline_did_not_share_is_the_implementation() -> None:
    found = {h.key.provider: h for h in history(_sweep(1.20, True, 1.0))}
    [t] = found["triton"].changes
    assert (t.cause, t.moved_with) == ("implementation", ())
    assert found["torch"].changes == ()


def test_lines_that_moved_apart_are_no_shared_shift() -> None:
    """triton 30% slower, torch 10%: each moved, not by the same factor."""
    found = {h.key.provider: h for h in history(_sweep(1.30, False, 1.10))}
    [t] = found["triton"].changes
    assert (t.cause, t.moved_with) == ("unexplained", ())


def test_a_degraded_point_is_listed_and_no_change_is_drawn_from_it() -> None:
    rows = [row(i, 1e6) for i in range(4)]
    rows[2] = degraded(row(2, 2e6), "throttled (HwSlowdown)")
    [h] = history(rows)
    assert h.changes == ()
    [mark] = history_as_json([h])["series"][0]["degraded"]
    assert mark == {"index": 2, "run": rows[2].name, "reason": "throttled (HwSlowdown)"}
    [asked] = history(rows, include_degraded=True)
    assert [c.index for c in asked.changes] == [2, 3]


def _records(tmp_path: Path, name: str, commit: str, at: int, median: int) -> Path:
    """One run of the project's H200 bundle at commit ``commit``, made at minute ``at``."""
    doc: dict[str, Any] = bundle(template(), at, median, commit=commit, branch="main")
    doc["run"]["metadata"]["name"] += f"-{name}"
    return write_jsonl(tmp_path / f"{name}.jsonl", [doc])


@pytest.mark.parametrize("rerun", [False, True])
def test_compare_history_never_compares_new_with_itself(tmp_path: Path, rerun: bool) -> None:
    """NEW (20% slower) ingested before the check, or its CI job run again and ingested: the
    base is still main's previous commit, and the regression is found."""
    db = str(tmp_path / "ki.sqlite3")
    with open_store(db) as store:
        for c in range(3):
            assert store.ingest([_records(tmp_path, f"main{c}", f"{c:040x}", c, 1_000_000)]).ok
        new = _records(tmp_path, "new", "f" * 40, 3, 1_200_000)
        assert store.ingest([new]).ok
        if rerun:
            assert store.ingest([_records(tmp_path, "again", "f" * 40, 3, 1_190_000)]).ok
        result = compare_to_branch(
            store.rows(branch="main"), load_runs([new]), spec=store.spec, branch="main"
        )
    [pair] = result.pairs
    assert pair.verdict is not None
    assert pair.verdict.kind == "regression"
    assert pair.base is not None
    assert pair.base.commit == f"{2:040x}"
    left = 2 if rerun else 1
    assert f"{left} run(s) of NEW itself left out" in pair.notes[0]
    assert len(result.regressions(5)) == 1
    assert json.dumps(pair.notes)

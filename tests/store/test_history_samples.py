"""A stored run's sample count reaches the verdict of ``history`` and ``compare --history``.

Two runs 8% apart, each with a p20-p80 of 2%: from 1,000 samples each that spread is
known and 8% is a regression; from 5 samples each it may be 2.4 times wider, and 8% is
within the noise (tests/test_verdict.py has the rule's own numbers). A store that kept no
count (None) judges as 0.6.1 did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk.store import Store
from kernelindex_sdk.store.branch_compare import compare_to_branch
from kernelindex_sdk.store.history import history


def _run(median: int, samples: int | None, at: int) -> dict[str, Any]:
    doc = bundle(
        median=median,
        p20=median * 99 // 100,
        p80=median * 101 // 100,
        observed=f"2026-11-30T00:00:0{at}.000Z",
    )
    if samples is not None:
        doc["run"]["spec"]["timing"]["samples"] = samples
    return doc


def _ingest(store: Store, path: Path, docs: list[dict[str, Any]]) -> None:
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    assert store.ingest([path]).added == len(docs)


@pytest.mark.parametrize(
    ("samples", "kind"), [(1000, "regression"), (5, "same"), (None, "regression")]
)
def test_history_judges_a_step_by_the_runs_sample_counts(
    store: Store, tmp_path: Path, samples: int | None, kind: str
) -> None:
    _ingest(store, tmp_path / "runs.jsonl", [_run(100_000, samples, 1), _run(108_000, samples, 2)])
    assert [row.samples for row in store.rows()] == [samples, samples]
    (found,) = history(store.rows())
    assert not found.tested
    assert [c.verdict.kind for c in found.changes if c.verdict] == (
        [] if kind == "same" else [kind]
    )


@pytest.mark.parametrize(("samples", "kind"), [(1000, "regression"), (5, "same")])
def test_compare_history_judges_the_base_by_its_stored_sample_count(
    store: Store, tmp_path: Path, samples: int, kind: str
) -> None:
    """NEW carries 1,000 samples: the base's own count decides."""
    _ingest(store, tmp_path / "base.jsonl", [_run(100_000, samples, 1)])
    new = json.loads(json.dumps(_run(108_000, 1000, 2)))
    (pair,) = compare_to_branch(store.rows(), [new]).pairs
    assert pair.verdict is not None
    assert pair.verdict.kind == kind

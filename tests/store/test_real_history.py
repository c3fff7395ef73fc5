"""Real histories: Liger-Kernel's kto_loss rows at four commits, imported and ingested
oldest first; the step at liger 0.5.4 is found, with its cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelindex_sdk.importers import liger
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import history, render_history

HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "liger" / "history"
# Oldest first. Two commits share 2025-02-28: their rows' timestamps order them
# (d63b888d68ff ran at 22:34, 636813534168 at 01:34 the next day).
COMMITS = ("022a7947bf6b", "d63b888d68ff", "636813534168", "ee5aaf26b934")


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("liger-history")
    url = str(tmp / "liger.sqlite3")
    with open_store(url) as store:
        for commit in COMMITS:
            [csv] = HISTORY.glob(f"*-{commit}.csv")
            day = csv.name[:10]
            out = tmp / f"{commit}.jsonl"
            given = Provenance(commit=commit, branch="main", commit_time=f"{day}T00:00:00Z")
            summary = liger.import_files([csv], out, provenance=given)
            assert summary.rejected == 0
            assert store.ingest([out]).ok
    return url


def test_liger_0_5_4_step_with_its_cause(store_url: str) -> None:
    with open_store(store_url) as store:
        found = history(
            store.rows(operation="kto_loss", provider="liger", hardware="NVIDIA H100 80GB HBM3"),
            spec=store.spec,
        )
    assert len(found) == 10  # forward and full, five batch sizes
    for h in found:
        assert [p.commit for p in h.series.points] == list(COMMITS[1:])
        assert not h.tested
        step = [c for c in h.changes if c.index == 2]
        assert len(step) == 1, h.label
        change = step[0]
        # About 2.5x faster.
        assert 0.35 < change.ratio < 0.45
        assert (change.direction, change.cause, change.commit) == (
            "faster",
            "implementation",
            "ee5aaf26b934",
        )
        assert not change.tested
        shown = {str(d) for d in change.differences}
        assert "packages.liger-kernel '0.5.3' -> '0.5.4'" in shown
        assert "liger_version '0.5.3' -> '0.5.4'" in shown


def test_other_gpus_are_other_series(store_url: str) -> None:
    """The oldest commit's rows were measured on an A100: a series of their own."""
    with open_store(store_url) as store:
        found = history(store.rows(operation="kto_loss", hardware="NVIDIA A100-SXM4-80GB"))
    assert found
    for h in found:
        assert [p.commit for p in h.series.points] == ["022a7947bf6b"]
        assert h.changes == ()


def test_huggingface_has_no_step_at_0_5_4(store_url: str) -> None:
    """The reference implementation did not change: its series stays flat."""
    with open_store(store_url) as store:
        found = history(
            store.rows(
                operation="kto_loss", provider="huggingface", hardware="NVIDIA H100 80GB HBM3"
            ),
            spec=store.spec,
        )
    assert len(found) == 10
    assert all(c.index != 2 or c.ratio > 0.9 for h in found for c in h.changes)


def test_short_series_say_so(store_url: str) -> None:
    with open_store(store_url) as store:
        text = render_history(
            history(store.rows(operation="kto_loss", provider="liger"), spec=store.spec)
        )
    assert "too short to test: the verdict between neighbours" in text

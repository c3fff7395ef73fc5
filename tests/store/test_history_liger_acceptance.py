"""Liger-Kernel's real history: the changes issue 33 names, found with the right causes.

The rows are cut from Liger's benchmark/data/all_benchmark_data.csv at the commits where
they changed (tests/fixtures/liger/real/, by its cut.py; the kto_loss rows of
tests/fixtures/liger/history/), imported with each commit and ingested oldest first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelindex_sdk.importers import liger
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import SeriesHistory, series_history
from kernelindex_sdk.store.relative import RelativeHistory, relative_history
from kernelindex_sdk.store.series import group_series

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "liger"


@pytest.fixture(scope="module")
def found(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[SeriesHistory], list[RelativeHistory]]:
    tmp = tmp_path_factory.mktemp("liger-real")
    files = sorted([*FIXTURES.glob("real/*.csv"), *FIXTURES.glob("history/*.csv")], key=_name)
    with open_store(str(tmp / "liger.sqlite3")) as store:
        for csv in files:
            day, commit = csv.stem[:10], csv.stem[11:]
            out = tmp / f"{csv.stem}.jsonl"
            given = Provenance(commit=commit, branch="main", commit_time=f"{day}T00:00:00Z")
            assert liger.import_files([csv], out, provenance=given).rejected == 0
            assert store.ingest([out]).ok
        grouped = group_series(store.rows())
        return (
            series_history(grouped, spec=store.spec),
            relative_history(grouped, spec=store.spec),
        )


def _name(path: Path) -> str:
    return path.name


def _relative(found: list[RelativeHistory], operation: str) -> Iterator[RelativeHistory]:
    return (h for h in found if h.label.startswith(operation + " "))


def test_group_norm_on_a_b200_is_a_code_change_measured_on_new_hardware(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """#1112: Liger over huggingface x0.41-0.46 at dea3a772, where Liger's code and the GPU
    (A100 to B200) both changed: both are named. Its absolute series start anew."""
    absolute, relative = found
    lines = list(_relative(relative, "group_norm"))
    assert len(lines) == 3
    for h in lines:
        assert h.series.hardware == ("NVIDIA A100-SXM4-40GB", "NVIDIA B200")
        [change] = h.changes
        assert change.commit == "dea3a772e18b"
        assert 0.40 < change.ratio < 0.47
        assert change.causes[:2] == ("implementation", "hardware")
        assert change.verdict is not None
        assert change.verdict.kind == "improvement"
    assert not [c for h in absolute if h.label.startswith("group_norm") for c in h.changes]


def test_layer_norm_a100_to_h100_is_found_on_the_relative_series(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """#815: Liger over huggingface x0.70 at N=2048 (x0.26 at 16384) from the A100 to the
    H100 at 6a2c4913, with Liger 0.3.1 to 0.6.0."""
    _, relative = found
    by_n = {h.label.split("N=")[1].split()[0]: h for h in _relative(relative, "layer_norm")}
    assert set(by_n) == {"2048", "16384"}
    last = {n: h.changes[-1] for n, h in by_n.items()}
    assert all(c.commit == "6a2c49130ed2" for c in last.values())
    assert last["2048"].ratio == pytest.approx(0.705, abs=0.01)
    assert last["16384"].ratio == pytest.approx(0.263, abs=0.01)
    for change in last.values():
        assert change.causes[:2] == ("implementation", "hardware")
        assert change.verdict is not None
        assert change.verdict.kind == "improvement"
        fields = {str(d) for d in change.differences}
        assert "hardware.product 'NVIDIA A100-SXM4-40GB' -> 'NVIDIA H100 80GB HBM3'" in fields


def test_kto_loss_regression_589_and_its_fix(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """Liger over huggingface 0.76-1.22 on the A100, 1.67-2.94 on the H100 (a regression
    named with the GPU and the code), then the fix at ee5aaf2: the code alone."""
    _, relative = found
    lines = list(_relative(relative, "kto_loss"))
    assert len(lines) == 10
    for h in lines:
        worse = [c for c in h.changes if c.commit == "d63b888d68ff"]
        fixed = [c for c in h.changes if c.commit == "ee5aaf26b934"]
        assert len(worse) == len(fixed) == 1, h.label
        assert 0.75 < worse[0].before_ns < 1.25
        assert 1.6 < worse[0].after_ns < 3.0
        assert worse[0].causes[:2] == ("implementation", "hardware")
        assert worse[0].verdict is not None
        assert worse[0].verdict.kind == "regression"
        assert fixed[0].cause == "implementation"
        assert "hardware" not in fixed[0].causes
        assert fixed[0].verdict is not None
        assert fixed[0].verdict.kind == "improvement"


def test_megatron_cross_entropy_1260_carries_on_across_a_new_config_key(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """80f19ad added TP=1 to the workload (a new digest): Liger over Megatron's unfused
    cross-entropy went from 0.13 to 0.19 (x1.41) and 0.16 to 0.20 (x1.25)."""
    _, relative = found
    liger_lines = [
        h for h in _relative(relative, "megatron_cross_entropy") if h.key.provider == "liger"
    ]
    assert len(liger_lines) == 2
    ratios = []
    for h in liger_lines:
        assert h.key.baseline == "megatron-unfused"
        assert [p.run.commit for p in h.series.points] == ["0400d313579a", "80f19ad74114"]
        [change] = h.changes
        assert "workload" in change.causes
        assert "parameters.TP absent -> 1" in {str(d) for d in change.differences}
        assert change.verdict is not None
        assert change.verdict.kind == "regression"
        ratios.append(round(change.ratio, 2))
    assert sorted(ratios) == [1.25, 1.41]


def test_jsd_shift_every_provider_shared_is_the_environment(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """At 6817c2d3 eager torch got 14% slower at every size and Liger 10-12%: the machine
    moved, not the code. Each names the line that moved with it; Liger's relative series
    does not step."""
    absolute, relative = found
    changes = {
        (h.key.provider, h.label): h.changes
        for h in absolute
        if h.label.startswith("jsd ") and h.key.hardware.startswith("NVIDIA H100")
    }
    assert len(changes) == 4
    for (provider, _), found_changes in changes.items():
        [change] = found_changes
        assert change.commit == "6817c2d34d66"
        assert change.cause == "environment"
        assert change.moved_with == (("liger",) if provider == "torch" else ("torch",))
        assert change.verdict is not None
        assert change.verdict.kind == "regression"
    torch = [c[0].ratio for (p, _), c in changes.items() if p == "torch"]
    assert all(1.13 < r < 1.15 for r in torch)
    assert not [c for h in _relative(relative, "jsd") for c in h.changes]


def test_huggingface_kto_loss_is_not_blamed_on_liger_0_5_4(
    found: tuple[list[SeriesHistory], list[RelativeHistory]],
) -> None:
    """huggingface's kto_loss moved -5.8% between d63b888 and 6368135 (runs spanning 5-7%
    each: within their noise). Nothing of it is placed at ee5aaf2, where Liger 0.5.4 came,
    and no huggingface line names an implementation change: its code never carried Liger's
    version."""
    absolute, _ = found
    hf = [h for h in absolute if h.label.startswith("kto_loss") and h.key.provider == "huggingface"]
    assert hf
    for h in hf:
        for change in h.changes:
            assert change.commit != "ee5aaf26b934"
            assert "implementation" not in change.causes
        implementations = {p.implementation_digest for p in h.series.points}
        assert len(implementations) == 1

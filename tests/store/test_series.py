"""Series: which runs belong together, and in what order."""

from __future__ import annotations

from _history_rows import row

from kernelindex_sdk.store.series import group_series, series_key


def test_new_code_and_new_software_stay_in_the_series() -> None:
    rows = [
        row(0, 100),
        row(1, 100, implementation_digest="sha256:" + "2" * 64),
        row(2, 100, environment_digest="sha256:" + "f" * 64),
        row(3, 100, labels={"liger_version": "0.5.4"}),
    ]
    [series] = group_series(rows)
    assert [p.name for p in series.points] == [r.name for r in rows]


def test_protocol_gpu_provider_and_entry_point_split_series() -> None:
    rows = [
        row(0, 100),
        row(1, 100, protocol_digest="sha256:" + "c" * 64),
        row(2, 100, hardware="NVIDIA B200"),
        row(3, 100, provider="torch"),
        row(4, 100, entry_point="pkg.mod:other"),
        row(5, 100, workload_digest="sha256:" + "d" * 64),
    ]
    found = group_series(rows)
    assert len(found) == 6
    assert {len(s.points) for s in found} == {1}
    assert len({series_key(r) for r in rows}) == 6


def test_runs_without_provider_or_gpu_key_on_their_digests() -> None:
    a = row(0, 100, provider=None, entry_point=None, hardware=None)
    key = series_key(a)
    assert key.provider == a.implementation_digest
    assert key.hardware == a.environment_digest


def test_order_is_commit_time_as_instants_then_observed_at() -> None:
    """+02:00 is two hours earlier than the same clock in UTC; a run without a commit
    time takes its observedAt."""
    late = row(0, 100, name="late", commit_time="2026-01-01T10:30:00+00:00")
    early = row(1, 100, name="early", commit_time="2026-01-01T11:00:00+02:00")
    middle = row(2, 100, name="middle", commit_time=None, observed_at="2026-01-01T10:00:00.000Z")
    tie_b = row(3, 100, name="tie-b", commit_time="2026-01-02T00:00:00Z")
    tie_a = row(4, 100, name="tie-a", commit_time="2026-01-02T00:00:00Z")
    [series] = group_series([late, tie_b, early, middle, tie_a])
    names = [p.name for p in series.points]
    assert names[:3] == ["early", "middle", "late"]
    # Same commit time: observedAt decides (tie-b ran first, at second 3).
    assert names[3:] == ["tie-b", "tie-a"]


def test_failed_runs_are_listed_apart_and_memory_only_runs_left_out() -> None:
    rows = [
        row(0, 100),
        row(1, None, status="failed"),
        row(2, 100),
        row(3, None, status="passed"),
        row(4, 0, median_ns=0),
    ]
    [series] = group_series(rows)
    assert [p.name for p in series.points] == ["run-00000", "run-00002"]
    assert [r.name for r in series.failed] == ["run-00001"]


def test_a_series_of_failures_only_is_shown() -> None:
    [series] = group_series([row(0, None, status="failed")])
    assert series.points == ()
    assert series.first.name == "run-00000"

"""Runs that cannot be points (no positive latency median) are reported, never lost."""

from __future__ import annotations

import io
import json
from pathlib import Path

import attrs
import pytest
from _history_rows import row

from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import history, render_history, skipped_notices
from kernelindex_sdk.store.series import SKIP_REASONS, group_series, skip_notice, skip_text

FIXTURE = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _series_with_bad_runs() -> list:  # type: ignore[type-arg]
    rows = [row(i, 1000.0) for i in range(6)]
    rows.append(row(6, None, median_ns=0, p20_ns=0, p80_ns=0, name="zero-run"))
    rows.append(row(7, None, name="no-median-run"))
    return rows


def test_runs_without_a_positive_median_are_the_series_skipped_runs() -> None:
    [series] = group_series(_series_with_bad_runs())
    assert [r.name for r in series.points] == [f"run-{i:05d}" for i in range(6)]
    assert [r.name for r in series.skipped] == ["zero-run", "no-median-run"]


def test_a_series_only_of_runs_without_latency_is_no_latency_series() -> None:
    """A memory benchmark's runs carry no latency median: not a latency series at all."""
    memory = [row(i, None, protocol_digest="sha256:" + "c" * 64) for i in range(3)]
    zero = [row(i, None, median_ns=0, workload_digest="sha256:" + "d" * 64) for i in range(2)]
    found = group_series(memory + zero)
    assert [len(s.skipped) for s in found] == [2]
    assert found[0].key.workload_digest == "sha256:" + "d" * 64


def test_history_json_lists_each_skipped_run_with_why() -> None:
    found = history(_series_with_bad_runs())
    [series] = json.loads(render_history(found, "json"))["series"]
    assert len(series["points"]) == 6
    assert series["skipped"] == [
        {
            "commit": f"{6:040x}",
            "observedAt": "2026-02-01T00:00:06.000Z",
            "run": "zero-run",
            "median": 0,
            "reason": "a latency median of 0 ns, which no ratio can compare",
        },
        {
            "commit": f"{7:040x}",
            "observedAt": "2026-02-01T00:00:07.000Z",
            "run": "no-median-run",
            "median": None,
            "reason": "no latency median recorded",
        },
    ]


def test_history_text_and_markdown_show_the_skipped_runs() -> None:
    found = history(_series_with_bad_runs())
    for fmt in ("text", "markdown"):
        shown = render_history(found, fmt)
        assert "2 run(s) left out (no positive median; below)" in shown
        assert "zero-run" in shown
        assert "a latency median of 0 ns, which no ratio can compare" in shown
        assert "no-median-run" in shown


def test_skipped_notices_name_run_series_and_why() -> None:
    notices = skipped_notices(history(_series_with_bad_runs()))
    assert notices == [
        "run 'zero-run' left out of series jsd forward · triton (pkg.mod:jsd) · NVIDIA H200:"
        " a latency median of 0 ns, which no ratio can compare",
        "run 'no-median-run' left out of series jsd forward · triton (pkg.mod:jsd)"
        " · NVIDIA H200: no latency median recorded",
    ]


def _zero_median_file(tmp_path: Path) -> Path:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    spec = record["run"]["spec"]
    spec["timing"]["latencyNs"]["median"] = 0
    for m in spec["measurements"]:
        if m["metric"] == "latency":
            m["value"] = 0
    record["run"]["metadata"]["name"] = "zero-median-run"
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join([*lines, json.dumps(record)]) + "\n", encoding="utf-8")
    return path


def test_history_command_reports_a_zero_median_run(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite3")
    with open_store(db) as store:
        assert store.ingest([_zero_median_file(tmp_path)]).ok
    for fmt in ("text", "markdown", "json"):
        out, err = io.StringIO(), io.StringIO()
        assert main(["history", "--db", db, "--format", fmt], stdout=out, stderr=err) == 0
        assert err.getvalue().count("left out of series") == 1
        assert "run 'zero-median-run' left out of series jsd forward" in err.getvalue()
        assert "zero-median-run" in out.getvalue()
    out, err = io.StringIO(), io.StringIO()
    # --changed drops the series (no change points) from the output, not the notice.
    assert main(["history", "--db", db, "--changed"], stdout=out, stderr=err) == 0
    assert "zero-median-run" in err.getvalue()


def test_a_series_only_of_zero_medians_is_shown_with_its_runs_left_out() -> None:
    rows = [row(i, None, median_ns=0, name=f"zero-{i}") for i in range(3)]
    found = history(rows)
    assert [len(h.series.points) for h in found] == [0]
    [series] = json.loads(render_history(found, "json"))["series"]
    assert (series["points"], [r["run"] for r in series["skipped"]]) == (
        [],
        ["zero-0", "zero-1", "zero-2"],
    )
    assert "0 point(s), 3 run(s) left out" in render_history(found, "text")
    assert len(skipped_notices(found)) == 3


def test_a_point_put_among_the_skipped_by_hand_is_refused_not_given_a_reason() -> None:
    [h] = history(_series_with_bad_runs())
    point = h.series.points[0]
    bad = attrs.evolve(h, series=attrs.evolve(h.series, skipped=(point,)))
    message = (
        r"skipped: run 'run-00000' has a positive latency median \(1000 ns\): expected a run"
        r" that cannot be a point"
    )
    with pytest.raises(ArgumentError, match=message):
        skipped_notices([bad])
    for fmt in ("text", "markdown", "json"):
        with pytest.raises(ArgumentError, match=message):
            render_history([bad], fmt)


def test_skip_text_and_notice_say_why_for_each_reason() -> None:
    negative = row(0, None, median_ns=-5, name="neg\x1brun")
    assert skip_text(negative) == "a negative latency median"
    assert skip_text(row(1, None)) == SKIP_REASONS["no-median"]
    assert skip_notice(negative, "jsd\nforward") == (
        "run 'neg\\x1brun' left out of series jsd\\nforward: a negative latency median"
    )

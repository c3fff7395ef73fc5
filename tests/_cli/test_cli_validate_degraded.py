"""``kernelindex validate`` says which valid records are degraded: a notice, never a problem."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from _records import bundle

from kernelindex_sdk._cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(b""))
    return status, out.getvalue(), err.getvalue()


def _with_state(record: dict[str, Any], **gpu: Any) -> dict[str, Any]:
    record["run"]["spec"]["conditions"] = {"gpu": {"samples": 12, **gpu}}
    return record


def _write(tmp_path: Path) -> Path:
    records = [
        bundle(),
        _with_state(bundle(), throttleReasons=["HwSlowdown"]),
        _with_state(bundle(), throttleReasons=["GpuIdle"]),
        _with_state(bundle(), smClockMhz={"min": 990, "median": 1980, "max": 1980}),
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_each_degraded_record_gets_one_line_and_the_status_stays_valid(tmp_path: Path) -> None:
    path = _write(tmp_path)
    status, out, err = run("validate", "--verify-digests", str(path))
    assert status == 0
    assert out == ""
    assert err.splitlines() == [
        f"kernelindex: {path}:2: degraded: throttled (HwSlowdown)",
        f"kernelindex: {path}:4: degraded: SM clock 990-1980 MHz, its smallest 50% of its"
        " largest (below 90%)",
        "kernelindex: 4 document(s): 4 valid, 0 invalid, 2 degraded",
    ]


def test_json_output_stays_the_problems_alone(tmp_path: Path) -> None:
    path = _write(tmp_path)
    status, out, err = run("validate", "--format", "json", "--quiet", str(path))
    assert status == 0
    assert json.loads(out) == []
    assert err.count("degraded:") == 2


def test_an_invalid_record_is_a_problem_not_a_degraded_notice(tmp_path: Path) -> None:
    record = _with_state(bundle(), throttleReasons=["HwSlowdown"])
    record["run"]["spec"]["conditions"]["gpu"]["samples"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    status, out, err = run("validate", str(path))
    assert status == 1
    assert "/run/spec/conditions/gpu/samples" in out
    assert "degraded" not in err

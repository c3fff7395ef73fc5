"""``kernelindex bench jsd`` on the CPU: what the summary warns about, what --input-grad times."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk._cli import main

pytest.importorskip("torch", reason="the [bench] extra (torch, Triton) is not installed")

from kernelindex_sdk._analysis.bench_summary import CPU_NOTE, NOISY_MARK, noisy_legend
from kernelindex_sdk._base.noise import NOISY_ANNOTATION
from kernelindex_sdk.reference_kernels import harness


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(b""))
    return status, out.getvalue(), err.getvalue()


def _bench(tmp_path: Path, *extra: str) -> tuple[list[dict[str, Any]], str]:
    out = tmp_path / "runs.jsonl"
    argv = ("bench", "jsd", "--tokens", "4", "--vocab", "64", "--no-progress", "-o", str(out))
    status, _, err = run(*argv, *extra)
    assert status == 0, err
    return [json.loads(line) for line in out.read_text().splitlines()], err


def _fake_timer(spreads: Sequence[tuple[float, float]]) -> Callable[..., harness.Measured]:
    """A wall clock giving each timed run in turn 101 samples with the given (p20, p80) ms."""
    calls = iter(spreads)

    def timer(fn: Any, n: int, grad_to_none: Any = (), around: Any = None) -> harness.Measured:
        # `around` (the CPU-state sampler) is never entered: the fake loop met no state.
        fn()
        p20, p80 = next(calls)
        # Linear quantiles of 101 samples: p20 is the 21st smallest, p80 the 81st.
        return harness.Measured(samples_ms=[p20 / 2] * 20 + [p20] * 60 + [p80] * 21)

    return timer


def test_the_summary_marks_the_noisy_run_and_says_the_cpu_timed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # torch first, then triton: torch's spread is the (46 us to 26.6 ms).
    monkeypatch.setattr(harness, "time_wall_clock", _fake_timer([(0.046, 26.6), (1.0, 1.05)]))
    records, err = _bench(tmp_path, "--timer", "cuda-events")
    notes = {
        r["run"]["spec"]["implementation"]["provider"]: r["run"]["metadata"]["annotations"]
        for r in records
    }
    assert notes["torch"][NOISY_ANNOTATION] == "578.261"
    assert NOISY_ANNOTATION not in notes["triton"]
    lines = err.splitlines()
    row = lines[next(i for i, line in enumerate(lines) if line.startswith("point ")) + 1]
    cells = [c.strip() for c in row.split("  ") if c.strip()]
    assert cells[1].endswith(f" {NOISY_MARK}")
    assert not cells[2].endswith(NOISY_MARK)
    assert noisy_legend() in lines
    assert CPU_NOTE in lines


def test_a_clean_cpu_run_has_no_mark_but_still_says_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "time_wall_clock", _fake_timer([(1.0, 1.01), (2.0, 2.1)]))
    records, err = _bench(tmp_path)
    assert all(NOISY_ANNOTATION not in r["run"]["metadata"]["annotations"] for r in records)
    assert f" {NOISY_MARK}" not in err
    assert noisy_legend() not in err
    assert CPU_NOTE in err.splitlines()


def test_input_grad_on_records_a_training_step_under_its_own_workload(tmp_path: Path) -> None:
    """Every provider's gradient run is pass full (forward + backward), checked for dL/dinput;
    the loss-only runs of the same shapes keep pass forward and another workload digest."""
    records, err = _bench(tmp_path, "--input-grad", "both")
    by_pass: dict[str, dict[str, str]] = {}
    for r in records:
        spec = r["run"]["spec"]
        assert spec["status"] == "passed"
        by_pass.setdefault(spec["workload"]["pass"], {})[spec["implementation"]["provider"]] = spec[
            "workloadDigest"
        ]
        if spec["workload"]["parameters"]["inputGrad"]:
            assert spec["workload"]["pass"] == "full"  # noqa: S105 - a pass
            assert "dL/dinput" in spec["correctness"]["reference"]
    assert set(by_pass) == {"forward", "full"}
    assert set(by_pass["forward"]) == set(by_pass["full"]) == {"torch", "triton"}
    # One workload per pass, shared by the providers that computed it.
    assert len(set(by_pass["full"].values())) == 1
    assert set(by_pass["full"].values()).isdisjoint(by_pass["forward"].values())
    assert "jsd full" in err


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each validation of a record from now on: the full path, or the quick reader's yes."""
    from kernelindex_sdk.validation import _document, _fast

    seen: list[str] = []
    full = _document.document_problems
    quick = _fast.BundleReader.read

    def counted_full(*args: Any, **kwargs: Any) -> Any:
        seen.append("full")
        return full(*args, **kwargs)

    def counted_quick(self: Any, data: Any) -> Any:
        value = quick(self, data)
        if value is not None:
            seen.append("quick")
        return value

    monkeypatch.setattr(_document, "document_problems", counted_full)
    monkeypatch.setattr(_fast.BundleReader, "read", counted_quick)
    return seen


def test_each_record_is_validated_once_from_bench_to_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness validates a record as it makes it, with the provenance the command finds
    too; neither the writer nor the summary validates it again; compare validates each
    record it reads once."""
    seen = _count_validations(monkeypatch)
    records, _ = _bench(tmp_path)
    assert len(records) >= 2
    assert len(seen) == len(records)
    seen.clear()
    runs = str(tmp_path / "runs.jsonl")
    status, _, err = run("compare", runs, runs)
    assert status == 0, err
    assert len(seen) == 2 * len(records)


def test_a_record_given_provenance_after_the_harness_is_validated_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Annotations added by the CLI make a record the harness never saw: the writer checks it."""
    seen = _count_validations(monkeypatch)
    records, _ = _bench(tmp_path, "--commit", "0123456789abcdef", "--branch", "main")
    assert all(r["run"]["metadata"]["annotations"]["kernelindex.dev/branch"] for r in records)
    assert len(seen) == 2 * len(records)


def test_the_records_name_the_commit_measured_and_a_given_commit_wins(tmp_path: Path) -> None:
    """The harness finds git's HEAD itself (issue 33); --commit replaces what it found."""
    import subprocess

    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if not head:
        pytest.skip("not run inside a git work tree")
    records, _ = _bench(tmp_path)
    assert {r["run"]["metadata"]["annotations"]["kernelindex.dev/commit"] for r in records} == {
        head
    }
    (tmp_path / "given").mkdir()
    given, _ = _bench(tmp_path / "given", "--commit", "0123456789abcdef")
    notes = [r["run"]["metadata"]["annotations"] for r in given]
    assert {n["kernelindex.dev/commit"] for n in notes} == {"0123456789abcdef"}
    # HEAD's branch and time are not carried over to a commit git was not asked about.
    assert not any("kernelindex.dev/branch" in n for n in notes)


def test_a_state_notice_is_the_commands_own_line_and_others_pass_through() -> None:
    import warnings

    from kernelindex_sdk._cli.bench import _state_notices
    from kernelindex_sdk.conditions import CpuStateWarning, GpuStateWarning

    err = io.StringIO()
    with warnings.catch_warnings(record=True) as other:
        warnings.simplefilter("always")
        with _state_notices(err):
            warnings.warn("GPU state not recorded: no NVML", GpuStateWarning, stacklevel=1)
            warnings.warn("CPU state not recorded: bad", CpuStateWarning, stacklevel=1)
            warnings.warn("something else", UserWarning, stacklevel=1)
    assert err.getvalue() == (
        "kernelindex: GPU state not recorded: no NVML\nkernelindex: CPU state not recorded: bad\n"
    )
    assert [str(w.message) for w in other] == ["something else"]

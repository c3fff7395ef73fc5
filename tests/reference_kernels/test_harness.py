"""The harness on the CPU: checked, timed, digest-stable records; failures recorded, not raised."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk._cli import main
from kernelindex_sdk.reference_kernels import harness
from kernelindex_sdk.reference_kernels.jsd import reference, sweep

CPU = torch.device("cpu")
CASE = sweep.JSDCase(tokens=4, vocab=256, dtype="fp32")
DIGESTS = ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")


def implementation(provider: str = "test") -> dict[str, Any]:
    return {"provider": provider, "sourceDigest": harness.source_digest(reference)}


def bench(fn: Any, reference_fn: Any = None, **kw: Any) -> dict[str, Any]:
    bundle = harness.bench(
        fn,
        workload=CASE.workload(),
        implementation=implementation(),
        reference=reference_fn,
        device=CPU,
        min_samples=kw.pop("min_samples", 20),
        **kw,
    )
    return ki.dump(bundle)  # type: ignore[no-any-return]


def _xy() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (
        torch.randn(4, 256, generator=g).log_softmax(-1),
        torch.randn(4, 256, generator=g).log_softmax(-1),
    )


def test_a_correct_kernel_passes_with_evidence_and_statistics() -> None:
    x, y = _xy()
    doc = bench(
        lambda: reference.jsd_torch(x, y), lambda: reference.jsd_torch(x.double(), y.double())
    )
    assert ki.validate(doc, verify_digests=True) == []
    spec = doc["run"]["spec"]
    assert spec["status"] == "passed"
    assert spec["timing"]["samples"] == 20
    p20, p80 = (m["value"] for m in spec["measurements"][:2])
    assert p20 <= spec["timing"]["latencyNs"]["median"] <= p80
    assert spec["correctness"]["maxAbsError"] < 1e-6
    assert spec["measurements"][2]["metric"] == "bandwidth"
    assert doc["protocol"]["spec"]["measurement"]["timer"] == "wall_clock"


def test_a_wrong_kernel_fails_and_gets_no_timing() -> None:
    x, y = _xy()
    doc = bench(lambda: reference.jsd_torch(x, y) * 1.01, lambda: reference.jsd_torch(x, y))
    spec = doc["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"]["reason"] == "mismatch"
    assert "timing" not in spec
    assert "measurements" not in spec
    assert spec["correctness"]["maxRelError"] == pytest.approx(0.01, rel=1e-3)
    assert ki.validate(doc, verify_digests=True) == []


def test_without_a_reference_the_run_is_unverified() -> None:
    x, y = _xy()
    assert bench(lambda: reference.jsd_torch(x, y))["run"]["spec"]["status"] == "unverified"


def test_out_of_memory_becomes_a_failed_record() -> None:
    def exhausted() -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")

    spec = bench(exhausted)["run"]["spec"]
    assert spec["failure"] == {
        "reason": "out_of_memory",
        "message": "OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB",
    }


def test_any_exception_becomes_a_failed_record() -> None:
    spec = bench(lambda: 1 / 0)["run"]["spec"]
    assert spec["failure"]["reason"] == "error"
    assert spec["failure"]["message"].startswith("ZeroDivisionError")


def test_two_runs_give_the_same_four_digests_and_different_names() -> None:
    x, y = _xy()
    first = bench(lambda: reference.jsd_torch(x, y), lambda: reference.jsd_torch(x, y))
    second = bench(lambda: reference.jsd_torch(x, y), lambda: reference.jsd_torch(x, y))
    assert [first["run"]["spec"][d] for d in DIGESTS] == [second["run"]["spec"][d] for d in DIGESTS]
    assert first["run"]["metadata"]["name"] != second["run"]["metadata"]["name"]


def test_volatile_facts_stay_in_annotations() -> None:
    x, y = _xy()
    doc = bench(lambda: reference.jsd_torch(x, y))
    assert "kernelindex.dev/host" in doc["run"]["metadata"]["annotations"]
    assert "host" not in json.dumps(doc["environment"]["spec"])


def test_sweep_cases_are_data() -> None:
    cases = sweep.cases([1024, 2048], [128256], ["fp32", "bf16"], input_grad=(False, True))
    assert len(cases) == 8
    assert cases[0].slug() == "tokens1024-vocab128256-fp32"
    assert cases[-1].slug() == "tokens2048-vocab128256-bf16-grad"
    assert cases[0].workload()["bytesMoved"] == 2 * 1024 * 128256 * 4


def test_sweep_runs_triton_through_the_interpreter_and_records_its_config() -> None:
    bundle = ki.dump(sweep.run_case("triton", CASE, CPU))
    spec = bundle["run"]["spec"]
    assert spec["status"] == "passed"
    assert spec["implementation"]["config"]["BLOCK_V"] > 0
    assert bundle["run"]["metadata"]["name"].startswith("kernelindex-jsd-forward-triton-cpu-")


def test_an_interrupted_sweep_keeps_the_records_already_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sweep.run_case
    calls = 0

    def interrupted(name: str, case: sweep.JSDCase, device: torch.device, **kw: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt
        return real(name, case, device, **kw)

    monkeypatch.setattr(sweep, "run_case", interrupted)
    out = tmp_path / "runs.jsonl"
    err = io.StringIO()
    status = main(
        ["bench", "jsd", "--tokens", "4", "--vocab", "256", "--no-progress", "-o", str(out)],
        stdout=io.StringIO(),
        stderr=err,
    )
    assert status == 130
    assert "interrupted" in err.getvalue()
    [line] = out.read_text().splitlines()
    assert ki.validate(line, verify_digests=True) == []


def test_an_oom_point_is_recorded_and_the_sweep_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_provider = sweep._provider

    def flaky(name: str, case: sweep.JSDCase) -> Any:
        fn, impl = real_provider(name, case)
        if name == "torch":

            def exhausted(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

            return exhausted, impl
        return fn, impl

    monkeypatch.setattr(sweep, "_provider", flaky)
    out = tmp_path / "runs.jsonl"
    status = main(
        ["bench", "jsd", "--tokens", "4", "--vocab", "256", "--no-progress", "-o", str(out)],
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert status == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["run"]["spec"]["status"] for r in records] == ["failed", "passed"]
    assert records[0]["run"]["spec"]["failure"]["reason"] == "out_of_memory"

"""The harness on the CPU: checked, timed, digest-stable records; failures recorded, not raised."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk._base import noise as _noise
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


def test_sweep_runs_triton_through_the_interpreter_and_annotates_its_config() -> None:
    bundle = ki.dump(sweep.run_case("triton", CASE, CPU))
    spec = bundle["run"]["spec"]
    assert spec["status"] == "passed"
    # Chosen by the code, not the user: annotated, never in the digested implementation.
    assert "config" not in spec["implementation"]
    assert "block_v=128" in bundle["run"]["metadata"]["annotations"]["kernelindex.dev/config"]
    assert bundle["run"]["metadata"]["name"].startswith("kernelindex-jsd-forward-triton-cpu-")


def test_a_gradient_run_checks_the_gradient_too() -> None:
    case = sweep.JSDCase(tokens=4, vocab=300, dtype="fp32", beta=0.37, input_grad=True)
    doc = ki.dump(sweep.run_case("triton", case, CPU))
    spec = doc["run"]["spec"]
    assert spec["status"] == "passed", spec.get("failure")
    errors = {m["metric"]: m["value"] for m in spec["measurements"]}
    assert 0 < errors["grad_input_max_rel_error"] < 1e-5
    assert "dL/dinput" in spec["correctness"]["reference"]
    tolerance = doc["run"]["metadata"]["annotations"]["kernelindex.dev/grad-input-tolerance"]
    assert tolerance == "atol=1e-05 x max|reference| rtol=0.0001"


def test_a_wrong_gradient_fails_with_the_right_loss() -> None:
    x, y = _xy()
    x = x.requires_grad_()

    def loss_and_grad() -> tuple[torch.Tensor, torch.Tensor]:
        loss = reference.jsd_torch(x, y)
        (grad,) = torch.autograd.grad(loss, x)
        return loss, grad * 1.01

    def expected() -> tuple[torch.Tensor, torch.Tensor]:
        x64 = x.detach().double().requires_grad_()
        loss = reference.jsd_torch(x64, y.double())
        return loss, torch.autograd.grad(loss, x64)[0]

    doc = bench(
        lambda: reference.jsd_torch(x, y),
        expected,
        output=loss_and_grad,
        further=[harness.Check(name="grad_input", atol=0.0, rtol=1e-3)],
        atol=1e-7,
        rtol=1e-6,
    )
    spec = doc["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"]["message"].startswith("grad_input differs from the reference")
    assert spec["correctness"]["maxRelError"] < 1e-6
    [rel] = [m for m in spec["measurements"] if m["metric"] == "grad_input_max_rel_error"]
    assert rel["value"] == pytest.approx(0.01, rel=1e-3)


def test_a_raising_reference_is_not_blamed_on_the_kernel() -> None:
    x, y = _xy()

    def broken() -> torch.Tensor:
        raise RuntimeError("reference exploded")

    spec = bench(lambda: reference.jsd_torch(x, y), broken)["run"]["spec"]
    assert spec["failure"]["reason"] == "error"
    assert spec["failure"]["message"] == (
        "reference reference raised RuntimeError: reference exploded"
    )


def test_a_comparison_that_breaks_is_reported_as_the_harness_s() -> None:
    x, y = _xy()
    spec = bench(lambda: reference.jsd_torch(x, y), lambda: "not a tensor")["run"]["spec"]
    assert spec["failure"]["message"].startswith("harness error while comparing outputs")


def test_statistics_are_the_quantiles_of_the_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    samples = [float(ms) for ms in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5)]
    monkeypatch.setattr(
        harness,
        "time_wall_clock",
        lambda fn, n, grads=(), around=None: harness.Measured(samples_ms=samples),
    )
    x, y = _xy()
    # Ten samples: a protocol asking for more would contradict the record (min-samples).
    spec = bench(lambda: reference.jsd_torch(x, y), min_samples=10)["run"]["spec"]
    # Linear interpolation over 1..10 ms: median 5.5, p20 2.8, p80 8.2.
    assert spec["timing"]["latencyNs"]["median"] == 5_500_000
    assert spec["timing"]["samples"] == 10
    stats = {m["statistic"]: m["value"] for m in spec["measurements"] if m["metric"] == "latency"}
    assert stats == {"p20": 2_800_000, "p80": 8_200_000}
    [bandwidth] = [m for m in spec["measurements"] if m["metric"] == "bandwidth"]
    moved = CASE.workload()["bytesMoved"]
    assert bandwidth == {
        "metric": "bandwidth",
        "statistic": "median",
        "unit": "GB/s",
        "value": float(f"{moved / 5_500_000:.6g}"),
    }
    # Bytes over seconds, in units of 1e9: not MB/s, not TB/s.
    assert bandwidth["value"] == pytest.approx(moved / 5.5e-3 / 1e9, rel=1e-5)


def test_an_unknown_timer_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown timer 'stopwatch'"):
        harness.protocol_spec(CPU, timer="stopwatch")
    assert harness.timer_for(CPU, "cuda-graph") == "wall_clock"


def test_a_point_that_cannot_be_set_up_becomes_a_failed_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(case: sweep.JSDCase, device: torch.device, seed: int) -> Any:
        raise RuntimeError("cannot allocate on the host")

    monkeypatch.setattr(sweep, "_inputs", broken)
    records = list(sweep.run_sweep(["torch", "triton"], [CASE], CPU))
    specs = [ki.dump(r)["run"]["spec"] for r in records]
    assert [s["status"] for s in specs] == ["failed", "failed"]
    assert specs[1]["failure"]["message"] == "RuntimeError: cannot allocate on the host"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--beta", "2"],
            "kernelindex bench jsd: argument --beta: expected a number from 0 to 1, got '2'"
            " (see 'kernelindex bench jsd --help')",
        ),
        (
            ["--beta", "nan"],
            "kernelindex bench jsd: argument --beta: expected a number in ASCII digits such as"
            " 5 or 0.5, got 'nan' (see 'kernelindex bench jsd --help')",
        ),
        (
            ["--tokens", "4,-4"],
            "kernelindex bench jsd: argument --tokens: expected comma-separated integers"
            " in ASCII digits 0-9 up to 9007199254740991, got '-4'"
            " (see 'kernelindex bench jsd --help')",
        ),
        (["--tokens", "0"], "kernelindex: --tokens: expected integers in [1, 2^53 - 1], got 0"),
        (
            ["--vocab", "-3"],
            "kernelindex bench jsd: argument --vocab: expected comma-separated integers"
            " in ASCII digits 0-9 up to 9007199254740991, got '-3'"
            " (see 'kernelindex bench jsd --help')",
        ),
        (
            ["--tokens", ""],
            "kernelindex bench jsd: argument --tokens: expected comma-separated integers"
            " without empty items, got '' (see 'kernelindex bench jsd --help')",
        ),
        (
            ["--impl", ""],
            "kernelindex bench jsd: argument --impl: expected comma-separated names"
            " without empty items, got '' (see 'kernelindex bench jsd --help')",
        ),
        (["--dtype", "fp8"], "kernelindex: --dtype: expected some of fp32, bf16, fp16, got 'fp8'"),
        # jsd_torch takes float64, the sweep does not (JSDCase refuses it too).
        (
            ["--dtype", "fp64"],
            "kernelindex: --dtype: expected some of fp32, bf16, fp16, got 'fp64'",
        ),
    ],
)
def test_bad_sweep_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    out, err = tmp_path / "runs.jsonl", io.StringIO()
    status = main(["bench", "jsd", *args, "--no-progress", "-o", str(out)], stderr=err)
    assert status == 2
    assert err.getvalue().splitlines() == [message]
    assert not out.exists()


def test_the_cli_passes_the_timer_to_the_protocol(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    status = main(
        ["bench", "jsd", "--impl", "torch", "--tokens", "4", "--vocab", "64", "--timer",
         "cuda-graph", "--no-progress", "-o", str(out)],
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )  # fmt: skip
    assert status == 0
    [line] = out.read_text().splitlines()
    # No GPU here: the CPU's wall clock, whatever the GPU timer asked for.
    assert json.loads(line)["protocol"]["spec"]["measurement"]["timer"] == "wall_clock"


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


@pytest.mark.parametrize("hostile", ["NVIDIA GeForce RTX 4090 Ti (Éd.)", "@@@", "x" * 250])
def test_names_from_hostile_device_names_are_valid(
    monkeypatch: pytest.MonkeyPatch, hostile: str
) -> None:
    """Run and environment names come from kernelindex_sdk._base.names: ASCII and schema-valid."""
    real = harness.environment_spec

    def hostile_spec(device: Any) -> dict[str, Any]:
        spec = real(device)
        spec["hardware"]["product"] = hostile
        return spec

    monkeypatch.setattr(harness, "environment_spec", hostile_spec)
    x, y = _xy()
    record = bench(lambda: reference.jsd_torch(x, y))
    assert ki.validate(record) == []
    for part in ("run", "environment"):
        assert record[part]["metadata"]["name"].isascii()


def test_device_names_that_differ_only_in_symbols_get_distinct_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = harness.environment_spec
    names = set()
    for product in ("NVIDIA GeForce (Éd.)", "NVIDIA GeForce (Ed.)"):

        def spec_for(device: Any, product: str = product) -> dict[str, Any]:
            spec = real(device)
            spec["hardware"]["product"] = product
            return spec

        monkeypatch.setattr(harness, "environment_spec", spec_for)
        x, y = _xy()
        record = bench(lambda x=x, y=y: reference.jsd_torch(x, y))
        names.add(record["environment"]["metadata"]["name"])
    assert len(names) == 2


class _FrozenClock:
    """``datetime`` as the harness sees it, stopped: every run starts in one millisecond."""

    @staticmethod
    def now(tz: Any = None) -> Any:
        import datetime as dt

        return dt.datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=tz)


def test_runs_started_in_one_millisecond_get_different_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two identical sweeps started at once (two processes, two hosts) must not share names."""
    monkeypatch.setattr(harness, "datetime", _FrozenClock)
    x, y = _xy()
    runs = [bench(lambda: reference.jsd_torch(x, y)) for _ in range(2)]
    stamps = {r["run"]["spec"]["observedAt"] for r in runs}
    assert stamps == {"2026-12-01T12:00:00.123Z"}
    first, second = (r["run"]["metadata"]["name"] for r in runs)
    assert first != second
    assert first.rsplit("-", 1)[0] == second.rsplit("-", 1)[0]
    assert [r["run"]["spec"][d] for d in DIGESTS for r in runs[:1]] == [
        r["run"]["spec"][d] for d in DIGESTS for r in runs[1:]
    ]


def test_a_test_can_fix_run_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random part is one function: replaced, the same run gets the same name."""
    from kernelindex_sdk._base import names as _names

    monkeypatch.setattr(harness, "datetime", _FrozenClock)
    monkeypatch.setattr(_names, "unique_suffix", lambda: "fixed")
    x, y = _xy()
    names = {bench(lambda: reference.jsd_torch(x, y))["run"]["metadata"]["name"] for _ in "ab"}
    assert len(names) == 1
    assert names.pop().endswith("-2026-12-01-12-00-00-123-fixed")


# Issue 24 item 5: a noisy run says so, in an annotation no digest covers.


def _six(p20_ms: float, p80_ms: float) -> list[float]:
    """Six samples whose linear p20 and p80 are exactly ``p20_ms`` and ``p80_ms``."""
    # q * (6 - 1): p20 is the 2nd smallest sample, p80 the 5th.
    return [p20_ms / 2, p20_ms, p20_ms, p80_ms, p80_ms, p80_ms * 2]


@pytest.mark.parametrize(
    ("p20_ms", "p80_ms", "annotation"),
    [
        (1.0, 1.0, None),
        (1.0, 1.1, None),  # p80/p20 = 1.10 exactly: the rule is "above 1.10"
        (1.0, 1.100001, "1.101"),  # rounded up: never reads as 1.100
        (2.0, 2.846, "1.423"),
        (0.046, 26.6, "578.261"),  # the CPU run: 46 us to 26.6 ms
    ],
)
def test_the_noisy_annotation_appears_exactly_when_the_rule_says(
    monkeypatch: pytest.MonkeyPatch, p20_ms: float, p80_ms: float, annotation: str | None
) -> None:
    samples = _six(p20_ms, p80_ms)
    monkeypatch.setattr(
        harness,
        "time_wall_clock",
        lambda fn, n, grads=(), around=None: harness.Measured(samples_ms=samples),
    )
    x, y = _xy()
    doc = bench(lambda: reference.jsd_torch(x, y), min_samples=6)
    spec = doc["run"]["spec"]
    stats = {m["statistic"]: m["value"] for m in spec["measurements"] if m["metric"] == "latency"}
    assert (stats["p20"], stats["p80"]) == (round(p20_ms * 1e6), round(p80_ms * 1e6))
    assert _noise.is_noisy(stats["p20"], stats["p80"]) is (annotation is not None)
    notes = doc["run"]["metadata"]["annotations"]
    assert notes.get(_noise.NOISY_ANNOTATION) == annotation
    assert ki.validate(doc, verify_digests=True) == []


def test_a_noisy_run_keeps_the_digests_of_a_clean_one(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = _xy()
    docs = []
    for samples in (_six(1.0, 1.0), _six(1.0, 3.0)):
        monkeypatch.setattr(
            harness,
            "time_wall_clock",
            lambda fn, n, grads=(), around=None, s=samples: harness.Measured(samples_ms=s),
        )
        docs.append(bench(lambda: reference.jsd_torch(x, y), min_samples=6))
    clean, noisy = docs
    assert _noise.NOISY_ANNOTATION not in clean["run"]["metadata"]["annotations"]
    assert noisy["run"]["metadata"]["annotations"][_noise.NOISY_ANNOTATION] == "3.000"
    assert [clean["run"]["spec"][d] for d in DIGESTS] == [noisy["run"]["spec"][d] for d in DIGESTS]


def test_failed_runs_carry_no_noise_annotation() -> None:
    doc = bench(lambda: 1 / 0)
    assert _noise.NOISY_ANNOTATION not in doc["run"]["metadata"]["annotations"]


def test_the_wall_clock_resets_grads_before_every_call() -> None:
    x = torch.zeros(3, requires_grad=True)
    seen: list[bool] = []

    def step() -> None:
        seen.append(x.grad is None)
        x.sum().backward()

    harness.time_wall_clock(step, 7, [x])
    assert seen == [True] * (7 + harness.CPU_WARMUP_CALLS)


@pytest.mark.parametrize(
    "error",
    [ValueError("bad shape\nsecond line"), torch.cuda.OutOfMemoryError("out of memory")],
    ids=["error", "out-of-memory"],
)
def test_failed_record_is_the_record_bench_makes_of_a_raising_call(error: Exception) -> None:
    """harness.failed_record needs no function that raises: same failure, same digests."""
    workload = {"operation": "jsd", "pass": "forward", "parameters": {"BT": 4, "V": 64}}
    implementation = {"provider": "torch", "packages": {"torch": str(torch.__version__)}}

    def raises() -> None:
        raise error

    made = [
        ki.dump(
            harness.bench(raises, workload=workload, implementation=implementation, device=CPU)
        ),
        ki.dump(
            harness.failed_record(
                error, workload=workload, implementation=implementation, device=CPU
            )
        ),
    ]
    for record in made:
        record["run"]["spec"].pop("observedAt")
        record["run"]["metadata"].pop("name")
    assert made[0] == made[1]
    assert made[1]["run"]["spec"]["status"] == "failed"
    assert "timing" not in made[1]["run"]["spec"]

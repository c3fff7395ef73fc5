"""The harness records the GPU's state over the timed loop (a fake GPU and a fake NVML here;
test_gpu_state_gpu.py reads a real one), and the provenance of the code it measured."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from _fake_gpu import FakeGpu
from _fake_nvml import (
    APPLICATIONS_CLOCKS,
    GPU_IS_LOST,
    SW_POWER_CAP,
    UUID,
    FakeNvml,
    NVMLError,
    install,
)

import kernelindex_sdk as ki
from kernelindex_sdk._analysis.bench_summary import DEGRADED_LEGEND, bench_summary
from kernelindex_sdk.conditions import GpuStateWarning, record_degraded_reason
from kernelindex_sdk.provenance import BRANCH, COMMIT, COMMIT_TIME, Provenance
from kernelindex_sdk.reference_kernels import device as device_module
from kernelindex_sdk.reference_kernels import harness, timing

CUDA = torch.device("cuda", 0)
CPU = torch.device("cpu")
# The variables provenance.detect reads before git: cleared, so only git (or nothing) speaks.
CI_COMMITS = (
    "GITHUB_SHA",
    "CI_COMMIT_SHA",
    "BUILDKITE_COMMIT",
    "CIRCLE_SHA1",
    "TRAVIS_COMMIT",
    "BUILD_SOURCEVERSION",
    "GIT_COMMIT",
)


def _bench(gpu: FakeGpu, **kwargs: Any) -> ki.RecordBundle:
    return harness.bench(
        gpu.call,
        reference=lambda: torch.ones(3),
        workload={"operation": "ones", "pass": "forward", "parameters": {"n": 3}},
        implementation={"provider": "torch"},
        device=CUDA,
        min_samples=10,
        provenance=Provenance(),
        **kwargs,
    )


def test_a_gpu_run_records_its_state_and_keeps_its_digests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = FakeGpu(monkeypatch)
    fake = install(monkeypatch, FakeNvml())
    record = _bench(gpu)
    off = _bench(gpu, gpu_state=False)
    gpu_state = ki.dump(record)["run"]["spec"]["conditions"]["gpu"]
    assert gpu_state["samples"] >= 2
    assert gpu_state["smClockMhz"] == {"min": 1980, "median": 1980, "max": 1980}
    assert gpu_state["throttleReasons"] == []
    assert off.run.spec.conditions is None
    # An observation: the four digests are those of the run that sampled nothing.
    for key in ("protocol", "environment", "workload", "implementation"):
        assert getattr(record.run.spec, f"{key}_digest") == getattr(off.run.spec, f"{key}_digest")
    # NVML found the GPU by its UUID, not by CUDA's index.
    assert fake is not None
    assert set(fake.lookups) == {UUID}
    assert record_degraded_reason(ki.dump(record)) is None
    # The clocks read once before the run are gone from the annotations.
    assert not any("clock" in key for key in record.run.metadata.annotations or {})


def test_the_state_covers_the_timed_calls_and_not_the_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = FakeGpu(monkeypatch)

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        gpu.log.append("enter")
        yield
        gpu.log.append("exit")

    timing.time_cuda_events(gpu.call, [], 10, flush=lambda: None, around=watched())
    first = gpu.log.index("enter")
    # Warm-up calls come before; then the timed calls, the synchronize, and the exit.
    assert gpu.log[first - 1] == "call"
    assert gpu.log[first + 1 :] == ["call"] * 200 + ["sync", "exit"]


def test_the_graph_timer_samples_around_every_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    import triton.testing

    log: list[str] = []

    def replays(fn: Any, **kwargs: Any) -> list[float]:
        log.append("replays")
        return [1.0] * 10

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        log.append("enter")
        yield
        log.append("exit")

    monkeypatch.setattr(triton.testing, "do_bench_cudagraph", replays)
    monkeypatch.setattr(torch.cuda, "Stream", lambda: None)
    monkeypatch.setattr(torch.cuda, "stream", lambda stream: contextlib.nullcontext())
    measured = timing.time_cuda_graph(lambda: None, [], 25, around=watched())
    assert len(measured.samples_ms) == 30
    assert log == ["enter", "replays", "replays", "replays", "exit"]


def test_a_throttled_run_is_valid_degraded_and_marked_in_the_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = FakeGpu(monkeypatch)
    install(monkeypatch, FakeNvml(reasons=[SW_POWER_CAP | APPLICATIONS_CLOCKS], sm=[1980, 1500]))
    record = ki.dump(_bench(gpu))
    assert ki.validate(record, verify_digests=True) == []
    reason = record_degraded_reason(record)
    assert reason == (
        "throttled (SwPowerCap); SM clock 1500-1980 MHz, its smallest 76% of its largest"
        " (below 90%)"
    )
    assert record["run"]["spec"]["conditions"]["gpu"]["throttleReasons"] == [
        "ApplicationsClocksSetting",
        "SwPowerCap",
    ]
    text = bench_summary([record])
    assert " degraded" in next(line for line in text.splitlines() if line.startswith("-"))
    assert DEGRADED_LEGEND in text
    title = "ones forward · n=3 · NVIDIA H100 80GB HBM3"
    assert f"degraded: torch ({title}): {reason}" in text.splitlines()


@pytest.mark.parametrize(
    ("fake", "said"),
    [
        (None, "not installed"),
        (FakeNvml(init_error=NVMLError(9)), "could not start"),
        (FakeNvml(sm=[1980, NVMLError(GPU_IS_LOST)], temperature=[50]), "stopped answering"),
    ],
    ids=["missing", "refused", "gpu-lost"],
)
def test_a_gpu_run_without_a_state_still_passes(
    monkeypatch: pytest.MonkeyPatch, fake: FakeNvml | None, said: str
) -> None:
    gpu = FakeGpu(monkeypatch)
    install(monkeypatch, fake)
    with pytest.warns(GpuStateWarning, match=said):
        record = _bench(gpu)
    assert record.run.spec.status == "passed"
    assert record.run.spec.conditions is None
    if fake is None:
        # Without NVML the driver is unknown, as before.
        assert "driver" not in record.environment.spec.software
    assert record_degraded_reason(ki.dump(record)) is None


def test_a_gpu_nvml_cannot_name_is_said_once_and_runs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """No UUID from torch and hidden GPUs: CUDA's index 0 may be any of NVML's GPUs."""
    gpu = FakeGpu(monkeypatch, uuid=None)
    fake = install(monkeypatch, FakeNvml())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        first, second = _bench(gpu), _bench(gpu)
    notices = [str(w.message) for w in said if issubclass(w.category, GpuStateWarning)]
    assert notices == [
        "GPU state not recorded: NVML's device for cuda:0 cannot be told"
        " (torch gives no UUID and CUDA_VISIBLE_DEVICES hides GPUs)"
    ]
    assert first.run.spec.conditions is None
    assert second.run.spec.status == "passed"
    assert fake is not None
    assert fake.lookups == []


def test_without_hidden_gpus_the_cuda_index_names_the_nvml_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    FakeGpu(monkeypatch, uuid=None)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert device_module.nvml_device(CUDA) == 0
    FakeGpu(monkeypatch, uuid="3f5b2e0a-1111-2222-3333-444455556666")
    assert device_module.nvml_device(CUDA) == UUID
    assert device_module.nvml_device(CPU) is None


def test_the_cpu_timer_records_no_gpu_state_and_asks_no_nvml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wall clock records the CPUs' state (tests/reference_kernels/test_cpu_state.py),
    never the GPU's."""
    fake = install(monkeypatch, FakeNvml())
    record = harness.bench(
        lambda: torch.ones(2),
        workload={"operation": "ones", "pass": "forward", "parameters": {"n": 2}},
        implementation={"provider": "torch"},
        device=CPU,
        min_samples=5,
        provenance=Provenance(),
    )
    assert record.run.spec.conditions is None or record.run.spec.conditions.gpu is None
    assert fake is not None
    assert fake.inits == 0


def test_settings_at_their_defaults_leave_the_environment_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = FakeGpu(monkeypatch)
    install(monkeypatch, FakeNvml())
    at_defaults = _bench(gpu)
    assert at_defaults.environment.spec.settings is None
    install(monkeypatch, FakeNvml(limit_mw=500000))
    capped = _bench(gpu)
    settings = ki.dump(capped)["environment"]["spec"]["settings"]
    assert settings == {"powerLimitW": 500}
    # A setting that lasts is identity: a capped GPU is another environment.
    assert capped.run.spec.environment_digest != at_defaults.run.spec.environment_digest


# Provenance (issue 33): bench() records where the measured code came from.


def _cpu_record(**kwargs: Any) -> ki.RecordBundle:
    return harness.bench(
        lambda: torch.ones(2),
        workload={"operation": "ones", "pass": "forward", "parameters": {"n": 2}},
        implementation={"provider": "torch"},
        device=CPU,
        min_samples=3,
        **kwargs,
    )


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for name in CI_COMMITS:
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "kernels")
    (repo / "kernel.py").write_text("x = 1\n")
    _git(repo, "add", "kernel.py")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one")
    monkeypatch.chdir(repo)
    return repo


def test_a_run_made_in_a_repository_names_its_commit(repository: Path) -> None:
    notes = _cpu_record().run.metadata.annotations or {}
    assert notes[COMMIT] == _git(repository, "rev-parse", "HEAD")
    assert notes[BRANCH] == "kernels"
    assert notes[COMMIT_TIME].endswith("Z")
    failed = harness.failed_record(
        RuntimeError("no"),
        workload={"operation": "ones", "pass": "forward", "parameters": {"n": 2}},
        implementation={"provider": "torch"},
        device=CPU,
    )
    assert (failed.run.metadata.annotations or {})[COMMIT] == notes[COMMIT]


def test_given_provenance_and_the_callers_annotations_win(repository: Path) -> None:
    given = _cpu_record(provenance=Provenance(commit="abc123", branch="main"))
    notes = given.run.metadata.annotations or {}
    assert (notes[COMMIT], notes[BRANCH]) == ("abc123", "main")
    mine = _cpu_record(annotations={COMMIT: "fedcba"})
    assert (mine.run.metadata.annotations or {})[COMMIT] == "fedcba"
    none = _cpu_record(provenance=Provenance())
    assert COMMIT not in (none.run.metadata.annotations or {})


def test_a_run_made_outside_a_repository_has_no_provenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in CI_COMMITS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    notes = _cpu_record().run.metadata.annotations or {}
    assert not {COMMIT, BRANCH, COMMIT_TIME} & notes.keys()

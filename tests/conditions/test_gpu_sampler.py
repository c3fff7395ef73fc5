"""The GPU-state sampler against a fake NVML: what it records, and that it never fails a run."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import pytest
from _fake_nvml import (
    APPLICATIONS_CLOCKS,
    GPU_IDLE,
    GPU_IS_LOST,
    HW_SLOWDOWN,
    NOT_SUPPORTED,
    SW_POWER_CAP,
    UNKNOWN,
    UUID,
    FakeNvml,
    NVMLError,
    install,
)
from _records import bundle

from kernelindex_sdk import validation
from kernelindex_sdk.conditions import (
    GpuStateWarning,
    degraded_reason,
    record_degraded_reason,
    sample_gpu,
)
from kernelindex_sdk.errors import ArgumentError, KernelIndexError, StateError

# Long enough that the thread never reads on its own: the readings are entry and exit.
NEVER = 3600.0
FAST = 0.0005


def _sampled(fake: FakeNvml | None, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> Any:
    install(monkeypatch, fake)
    with sample_gpu(UUID, interval_s=kwargs.pop("interval_s", NEVER)) as state:
        wait = kwargs.pop("wait", None)
        if wait is not None and fake is not None:
            fake.wait_reads(*wait)
    return state


def test_a_steady_run_records_every_field_and_is_not_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = _sampled(FakeNvml(power_mw=[400000, 410500, 420000]), monkeypatch)
    assert state.unavailable is None
    assert state.result == {
        "gpu": {
            "samples": 2,
            "smClockMhz": {"min": 1980, "median": 1980, "max": 1980},
            "memoryClockMhz": {"min": 2619, "median": 2619, "max": 2619},
            "powerW": {"min": 400, "median": 405.25, "max": 410.5},
            "temperatureC": {"min": 41, "median": 41, "max": 41},
            "applicationsSmClockMhz": 1980,
            "applicationsMemoryClockMhz": 2619,
            "maxSmClockMhz": 1980,
            "maxMemoryClockMhz": 2619,
            "powerLimitW": 700,
            "throttleReasons": [],
        }
    }
    assert degraded_reason({"conditions": state.result}) is None


def test_the_thread_samples_while_the_block_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()
    state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 5))
    # Entry, at least three thread readings, exit.
    assert state.result["gpu"]["samples"] >= 5
    assert state.result["gpu"]["samples"] == fake.reads["sm"]


def test_a_throttled_run_names_its_reasons_and_is_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reasons = [0, SW_POWER_CAP | GPU_IDLE, HW_SLOWDOWN, 0]
    fake = FakeNvml(reasons=reasons)
    state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("reasons", 4))
    gpu = state.result["gpu"]
    # The union over the loop, sorted, idle left out.
    assert gpu["throttleReasons"] == ["HwSlowdown", "SwPowerCap"]
    assert degraded_reason({"conditions": state.result}) == "throttled (HwSlowdown, SwPowerCap)"


def test_an_applications_clocks_setting_is_recorded_but_not_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Clocks held by a setting are the steady state benchmarks want, not a throttle."""
    fake = FakeNvml(sm=[1410], reasons=[APPLICATIONS_CLOCKS])
    state = _sampled(fake, monkeypatch)
    assert state.result["gpu"]["throttleReasons"] == ["ApplicationsClocksSetting"]
    assert degraded_reason({"conditions": state.result}) is None


def test_a_clock_drop_during_the_loop_is_degraded_with_its_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeNvml(sm=[1980, 1980, 1410, 1980])
    state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 4))
    clock = state.result["gpu"]["smClockMhz"]
    assert (clock["min"], clock["max"]) == (1410, 1980)
    assert degraded_reason({"conditions": state.result}) == (
        "SM clock 1410-1980 MHz, its smallest 71% of its largest (below 90%)"
    )


def test_the_result_is_a_valid_record_value_and_changes_no_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeNvml(sm=[1980, 1500], reasons=[SW_POWER_CAP], power_mw=[650123])
    state = _sampled(fake, monkeypatch)
    plain, record = bundle(), bundle()
    record["run"]["spec"]["conditions"] = state.result
    assert validation.validate(record, verify_digests=True) == []
    assert record["run"]["spec"] == {**plain["run"]["spec"], "conditions": state.result}
    assert record_degraded_reason(record) is not None
    assert record_degraded_reason(record["run"]) == record_degraded_reason(record)
    assert record_degraded_reason(plain) is None


def _twice(fake: FakeNvml | None, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Two samplers in one process, and the warnings they gave."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        first = _sampled(fake, monkeypatch)
        with sample_gpu(UUID) as second:
            pass
    assert first.result is None
    assert second.result is None
    assert second.unavailable == first.unavailable
    return [w for w in said if issubclass(w.category, GpuStateWarning)]


def test_missing_nvml_records_nothing_and_says_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    said = _twice(None, monkeypatch)
    assert [str(w.message) for w in said] == [
        "GPU state not recorded: NVML's Python bindings are not installed"
        " (pip install nvidia-ml-py)"
    ]


def test_nvml_that_refuses_to_start_records_nothing_and_is_tried_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeNvml(init_error=NVMLError(9))
    said = _twice(fake, monkeypatch)
    assert [str(w.message) for w in said] == [
        "GPU state not recorded: NVML could not start (Driver Not Loaded)"
    ]
    assert fake.inits == 1


def test_a_gpu_nvml_does_not_know_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml())
    sampler = sample_gpu("GPU-0000")
    with pytest.warns(GpuStateWarning, match=r"does not find GPU 'GPU-0000'"), sampler:
        pass
    assert sampler.result is None


def test_a_reading_nvml_does_not_support_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml(power_mw=[NVMLError(NOT_SUPPORTED)], enforced_limit_mw=NVMLError(NOT_SUPPORTED))
    state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 4))
    gpu = state.result["gpu"]
    assert "powerW" not in gpu
    assert "powerLimitW" not in gpu
    assert gpu["smClockMhz"]["max"] == 1980
    # Not asked again once NVML said it does not have it.
    assert fake.reads["power"] == 1


def test_nvml_errors_mid_run_skip_those_readings_only(monkeypatch: pytest.MonkeyPatch) -> None:
    error = NVMLError(UNKNOWN)
    fake = FakeNvml(sm=[1980, error, error, 1950, 1970], reasons=[0, error, SW_POWER_CAP])
    with warnings.catch_warnings():
        warnings.simplefilter("error", GpuStateWarning)
        state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 5))
    gpu = state.result["gpu"]
    assert gpu["smClockMhz"]["min"] == 1950
    # A sample that read anything counts; the failed SM readings left the others.
    assert gpu["samples"] == fake.reads["sm"]
    assert gpu["throttleReasons"] == ["SwPowerCap"]


def test_a_gpu_that_disappears_mid_run_records_nothing_and_ends_the_sampling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeNvml(sm=[1980, 1980, NVMLError(GPU_IS_LOST)])
    with pytest.warns(GpuStateWarning, match=r"stopped answering NVML"):
        state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 3))
    assert state.result is None
    assert "stopped answering" in (state.unavailable or "")
    reads = fake.reads["sm"]
    # No reading after the GPU was lost, not even the exit's.
    assert reads == 3


def test_no_reading_at_all_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    unsupported = NVMLError(NOT_SUPPORTED)
    fake = FakeNvml(
        sm=[unsupported],
        memory=[unsupported],
        power_mw=[unsupported],
        temperature=[unsupported],
        reasons=[unsupported],
    )
    with pytest.warns(GpuStateWarning, match=r"NVML gave no reading"):
        state = _sampled(fake, monkeypatch)
    assert state.result is None


def test_an_exception_in_the_timed_block_still_stops_the_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = install(monkeypatch, FakeNvml())
    sampler = sample_gpu(UUID, interval_s=FAST)
    with pytest.raises(RuntimeError, match="kernel"), sampler:
        raise RuntimeError("kernel failed")
    assert sampler._thread is not None
    assert not sampler._thread.is_alive()
    assert fake is not None


def test_a_sampler_is_used_once(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml())
    sampler = sample_gpu(UUID)
    with sampler:
        pass
    with pytest.raises(StateError, match="used once"), sampler:
        pass


@pytest.mark.parametrize(
    ("device", "interval"),
    [(-1, 0.01), (True, 0.01), ("", 0.01), (0, 0), (0, -1.0), (0, float("nan")), (0, True)],
)
def test_bad_arguments_are_refused_with_a_kernelindex_error(device: Any, interval: Any) -> None:
    with pytest.raises(ArgumentError) as caught:
        sample_gpu(device, interval_s=interval)
    assert isinstance(caught.value, KernelIndexError)


def test_a_mig_uuid_given_as_gpu_is_found_as_mig(monkeypatch: pytest.MonkeyPatch) -> None:
    mig = "MIG-3f5b2e0a-1111-2222-3333-444455556666"
    fake = FakeNvml(devices=[mig])
    state = _sampled(fake, monkeypatch)
    assert state.result is not None
    assert fake.lookups == [mig]


def test_importing_the_package_and_the_conditions_imports_no_nvml() -> None:
    code = (
        "import sys, kernelindex_sdk, kernelindex_sdk.conditions;"
        " assert 'pynvml' not in sys.modules, 'pynvml imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_reading_that_breaks_otherwise_never_reaches_the_timed_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not an NVML error (a bindings bug, a value of the wrong type): that reading is skipped."""
    fake = FakeNvml(
        sm=[RuntimeError("bindings bug")], memory=["not a number"], max_clocks=(None, 1)
    )
    state = _sampled(fake, monkeypatch, interval_s=FAST, wait=("sm", 3))
    gpu = state.result["gpu"]
    assert "smClockMhz" not in gpu
    assert "memoryClockMhz" not in gpu
    assert "maxSmClockMhz" not in gpu
    assert gpu["maxMemoryClockMhz"] == 1
    assert gpu["samples"] >= 3

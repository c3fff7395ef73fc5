"""The settings that join the environment: only those changed away from their defaults."""

from __future__ import annotations

import warnings

import pytest
from _fake_nvml import NO_PERMISSION, NOT_SUPPORTED, UUID, FakeNvml, NVMLError, install

from kernelindex_sdk.conditions import GpuStateWarning, gpu_settings
from kernelindex_sdk.conditions.nvml import driver_version, reason_names


def test_a_gpu_at_its_defaults_has_no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml())
    assert gpu_settings(UUID) is None


def test_changed_applications_clocks_are_both_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml(applications=(1410, 2619)))
    assert gpu_settings(UUID) == {
        "applicationsSmClockMhz": 1410,
        "applicationsMemoryClockMhz": 2619,
    }


def test_a_changed_power_limit_is_recorded_in_watts(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml(limit_mw=450500))
    assert gpu_settings(0) == {"powerLimitW": 450.5}


@pytest.mark.parametrize("code", [NOT_SUPPORTED, NO_PERMISSION, 999])
def test_a_setting_nvml_cannot_read_is_absent_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    fake = FakeNvml(
        applications=(NVMLError(code), 2619),
        default_applications=(1980, 2619),
        limit_mw=NVMLError(code),
    )
    install(monkeypatch, fake)
    assert gpu_settings(UUID) is None


def test_without_nvml_there_are_no_settings_and_no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuStateWarning)
        assert gpu_settings(UUID) is None
        assert driver_version() is None


def test_an_unknown_gpu_has_no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml(limit_mw=1))
    assert gpu_settings("GPU-unknown") is None


def test_the_driver_version_is_text(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, FakeNvml(driver=b"580.159.04"))
    assert driver_version() == "580.159.04"


def test_reason_bits_are_named_as_nvml_names_them() -> None:
    assert reason_names(0) == []
    assert reason_names(0x1 | 0x4 | 0x40) == ["GpuIdle", "SwPowerCap", "HwThermalSlowdown"]
    assert reason_names(0x800) == ["Unknown0x800"]
    assert reason_names(1 << 63) == ["Unknown"]

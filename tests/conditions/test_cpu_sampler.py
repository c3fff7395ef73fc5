"""The CPU-state sampler against a fake /proc/stat: what it records, and that it never fails."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kernelindex_sdk.conditions import (
    DEFAULT_MIN_WINDOW_S,
    CpuStateWarning,
    degraded_reason,
    sample_cpu,
)
from kernelindex_sdk.conditions import cpu as cpu_module
from kernelindex_sdk.errors import ArgumentError, KernelIndexError, StateError

HEADER = "cpu  9000 0 1000 40000 100 0 10 0 0 0\n"
TAIL = "intr 1 2 3\nctxt 42\nbtime 1700000000\nprocesses 7\n"


def _stat(*idle_ticks: int, busy: int = 5000) -> str:
    """A /proc/stat whose cpuN line has ``idle_ticks[N]`` idle ticks (and 0 iowait)."""
    lines = [f"cpu{n} {busy} 0 100 {idle} 0 0 0 0 0 0\n" for n, idle in enumerate(idle_ticks)]
    return HEADER + "".join(lines) + TAIL


class FakeMachine:
    """A /proc/stat file, a clock, this process's CPU time, its affinity and a load average,
    each changed by the test between the sampler's entry and exit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        self.path = tmp_path / "stat"
        self.now = 100.0
        self.own = 10.0
        self.cpus: set[int] | None = None
        self.load = 0.5
        self.slept: list[float] = []
        monkeypatch.setattr(cpu_module, "_PROC_STAT", str(self.path))
        monkeypatch.setattr(cpu_module, "_own_cpu_s", lambda: self.own)
        monkeypatch.setattr(cpu_module, "_affinity", lambda: self.cpus)
        monkeypatch.setattr(cpu_module, "_load_1m", lambda: self.load)
        monkeypatch.setattr(
            cpu_module,
            "time",
            SimpleNamespace(perf_counter=lambda: self.now, sleep=self._sleep),
        )
        monkeypatch.setattr(cpu_module, "_said", set())

    def _sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds

    def write(self, text: str) -> None:
        self.path.write_text(text, encoding="ascii")


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeMachine:
    return FakeMachine(monkeypatch, tmp_path)


@pytest.fixture
def no_warnings() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield seen


def test_others_busy_is_the_cpus_busy_time_less_this_process_own(machine: FakeMachine) -> None:
    """Over 1 s on 2 CPUs: CPU0 idle 0.2 s, CPU1 idle 0.9 s, so 0.9 CPU-seconds busy, of
    which this process used 0.5: others used 0.4 of 2 CPU-seconds."""
    machine.write(_stat(1000, 1000))
    with sample_cpu() as state:
        machine.write(_stat(1020, 1090))
        machine.now += 1.0
        machine.own += 0.5
        machine.load = 1.75
    assert state.unavailable is None
    assert state.result == {
        "cpu": {
            "availableCpus": 2,
            "onlineCpus": 2,
            "windowMs": 1000,
            "othersBusyFraction": 0.2,
            "ownBusyFraction": 0.25,
            "loadAverage1mAtStart": 0.5,
            "loadAverage1mAtEnd": 1.75,
        }
    }
    assert machine.slept == []
    assert degraded_reason({"conditions": state.result}) == (
        "CPU shared: other processes used 20% of 2 CPUs during the timed loop (limit 10%)"
    )


def test_a_quiet_machine_is_not_degraded(machine: FakeMachine) -> None:
    machine.write(_stat(1000, 1000))
    with sample_cpu(min_window_s=0) as state:
        # Only this process ran: every busy tick is its own.
        machine.write(_stat(1050, 1100))
        machine.now += 1.0
        machine.own += 0.5
    assert state.result is not None
    assert state.result["cpu"]["othersBusyFraction"] == 0
    assert degraded_reason({"conditions": state.result}) is None


def test_only_the_cpus_the_process_may_run_on_are_counted(machine: FakeMachine) -> None:
    """Pinned to CPU 1 of 4 by its affinity: the other CPUs' work is nobody's contention."""
    machine.cpus = {1}
    machine.write(_stat(0, 0, 0, 0))
    with sample_cpu() as state:
        # CPUs 0, 2 and 3 fully busy with others' work; CPU 1 idle half the second.
        machine.write(_stat(0, 50, 0, 0))
        machine.now += 1.0
        machine.own += 0.4
    assert state.result is not None
    cpu = state.result["cpu"]
    assert (cpu["availableCpus"], cpu["onlineCpus"]) == (1, 4)
    assert (cpu["othersBusyFraction"], cpu["ownBusyFraction"]) == (0.1, 0.4)
    assert degraded_reason({"conditions": state.result}) is None


def test_an_affinity_of_cpus_the_counters_do_not_list_records_nothing(
    machine: FakeMachine,
) -> None:
    machine.cpus = {7}
    machine.write(_stat(0, 0))
    with sample_cpu() as state:
        machine.now += 1.0
    assert state.result is None
    assert state.unavailable == f"{machine.path} lists none of the CPUs this process may run on"


def test_a_short_loop_is_watched_on_until_the_shortest_window(machine: FakeMachine) -> None:
    """The counters tick every 10 ms: a 10 ms loop is read over 0.25 s, by waiting after it."""
    machine.write(_stat(1000, 1000))
    with sample_cpu() as state:
        machine.now += 0.01
        machine.write(_stat(1010, 1025))
    assert machine.slept == [pytest.approx(DEFAULT_MIN_WINDOW_S - 0.01)]
    assert state.result is not None
    assert state.result["cpu"]["windowMs"] == 250


def test_a_zero_window_records_nothing(machine: FakeMachine) -> None:
    machine.write(_stat(1000, 1000))
    with sample_cpu(min_window_s=0) as state:
        pass
    assert state.result is None
    assert state.unavailable == "the window took no measurable time"


def test_counters_that_read_past_the_window_are_held_within_0_and_1(machine: FakeMachine) -> None:
    """Ticks of 10 ms over a 20 ms window can say a CPU idled longer than the window, or
    this process used more than the CPUs were busy: the shares stay within [0, 1]."""
    machine.write(_stat(1000, 1000))
    with sample_cpu(min_window_s=0) as state:
        machine.write(_stat(1003, 1003))
        machine.now += 0.02
        machine.own += 0.05
    assert state.result is not None
    assert state.result["cpu"]["othersBusyFraction"] == 0
    assert state.result["cpu"]["ownBusyFraction"] == 1


def test_without_proc_stat_nothing_is_recorded_or_said(
    machine: FakeMachine, no_warnings: list[warnings.WarningMessage]
) -> None:
    """macOS and Windows have no /proc/stat: the run goes on and records no state."""
    ran = False
    with sample_cpu() as state:
        ran = True
    assert ran
    assert state.result is None
    assert state.unavailable == f"{machine.path} does not exist here (not Linux)"
    assert machine.slept == []
    assert no_warnings == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "cpu  1 2 3 4\nintr 5\n",
        "cpu0 1 2 3\n",
        "cpu0 1 2 3 four 5 6 7 8\n",
    ],
    ids=["empty", "no-cpuN-line", "too-few-columns", "not-a-number"],
)
def test_a_proc_stat_that_cannot_be_parsed_is_said_once_and_records_nothing(
    machine: FakeMachine, text: str
) -> None:
    machine.write(text)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for _ in range(3):
            with sample_cpu() as state:
                pass
            assert state.result is None
            assert state.unavailable is not None
    assert [(w.category, str(w.message)) for w in said] == [
        (CpuStateWarning, f"CPU state not recorded: {state.unavailable}")
    ]


def test_a_proc_stat_that_breaks_during_the_loop_records_nothing(machine: FakeMachine) -> None:
    machine.write(_stat(1000, 1000))
    sampler = sample_cpu()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with sampler:
            machine.write("garbage\n")
            machine.now += 1.0
    assert [w.category for w in said] == [CpuStateWarning]
    # The warning points at the caller's block, not at the sampler's inside.
    assert said[0].filename == __file__
    assert sampler.result is None
    assert sampler.unavailable == f"{machine.path} lists no cpuN line"


def test_an_unreadable_proc_stat_records_nothing(machine: FakeMachine) -> None:
    machine.path.mkdir()
    with pytest.warns(CpuStateWarning, match="cannot be read"), sample_cpu() as state:
        pass
    assert state.result is None


def test_a_block_that_raises_records_nothing_and_does_not_wait(machine: FakeMachine) -> None:
    machine.write(_stat(1000, 1000))
    with pytest.raises(ZeroDivisionError), sample_cpu() as state:
        _ = 1 / 0
    assert state.result is None
    assert machine.slept == []


def test_a_sampler_is_used_once(machine: FakeMachine) -> None:
    machine.write(_stat(1000, 1000))
    sampler = sample_cpu()
    with sampler:
        machine.now += 1.0
    with pytest.raises(StateError) as raised, sampler:
        pass
    assert isinstance(raised.value, KernelIndexError)


@pytest.mark.parametrize("window", [-0.1, float("nan"), float("inf"), True, "1"])
def test_a_bad_window_is_refused(window: Any) -> None:
    with pytest.raises(ArgumentError, match="min_window_s"):
        sample_cpu(min_window_s=window)


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads the real /proc/stat")
def test_on_this_machine_the_shares_are_fractions_of_the_cpus_it_may_use() -> None:
    end = time.perf_counter() + 0.05
    with sample_cpu(min_window_s=0.1) as state:
        while time.perf_counter() < end:
            pass
    assert state.result is not None, state.unavailable
    cpu = state.result["cpu"]
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    assert cpu["availableCpus"] == (len(allowed) if allowed else cpu["onlineCpus"])
    assert cpu["windowMs"] >= 100
    assert 0 <= cpu["othersBusyFraction"] <= 1
    # This process spun for 50 ms of the window: it shows as its own, not as others'.
    assert cpu["ownBusyFraction"] > 0

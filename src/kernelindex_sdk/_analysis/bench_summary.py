"""The table ``kernelindex bench`` prints at the end: medians, speedups, and what to distrust.

It is :func:`kernelindex_sdk.report.render`'s text table (which marks each median whose
p20-p80 spread passes the one noise rule, :mod:`kernelindex_sdk._base.noise`, with
``noisy``) with what a reader of a fresh benchmark needs before believing a number: the
legend of that mark, naming the run annotation; each median whose run is degraded
(:func:`kernelindex_sdk.conditions.degraded_reason`: the GPU throttled or its clock
dropped, or other processes used the CPUs, while it was timed) marked ``degraded``, with
one line per such run saying why; and a line saying when runs were timed on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from .._base.noise import NOISY_ANNOTATION
from ..conditions import record_degraded_reason
from ..convert import dump
from .compare_render import noise_legend
from .families import Family, families, table_rows
from .runs import run_set
from .tables import text_table

__all__ = [
    "CPU_NOTE",
    "DEGRADED_LEGEND",
    "DEGRADED_MARK",
    "NOISY_MARK",
    "bench_summary",
    "noisy_legend",
]

#: What follows a noisy median (p80 / p20 above the rule's spread): the word that
#: ``report`` and ``compare`` print there, so a run is called noisy in one way everywhere.
NOISY_MARK: Final = "noisy"
#: The summary's last line when any run was timed by the CPU's wall clock.
CPU_NOTE: Final = (
    "timed on the CPU (wall clock, Triton in its interpreter): these numbers check the"
    " records, they do not compare speeds with GPU runs"
)
#: The speedup note of report's text tables, repeated under the bench summary's tables.
_NOTE: Final = (
    "medians with p20-p80; speedup = first implementation's median / this one's"
    " (above 1 is faster); for memory, this one's / the first's"
)
_CPU_TIMER: Final = "wall_clock"
#: What follows a median whose run is degraded.
DEGRADED_MARK: Final = "degraded"
#: The legend of :data:`DEGRADED_MARK`, under the tables when any median carries it.
DEGRADED_LEGEND: Final = (
    f"{DEGRADED_MARK} = the GPU was throttled or its SM clock dropped, or other processes"
    " used the CPUs, while the run was timed (its run.spec.conditions): the number measured"
    " the machine's state, not only the kernel, and no verdict is drawn from it"
)


def noisy_legend() -> str:
    """The legend line of :data:`NOISY_MARK`: report's, naming the run annotation too."""
    return f"{noise_legend()} (the run carries {NOISY_ANNOTATION})"


def _any_noisy(family: Family) -> bool:
    return any(run.noisy for run in family.points.values())


def _degraded(records: list[Any]) -> dict[str, str]:
    """Each degraded run's name and why (models are dumped once only when they hold a state)."""
    found = {}
    for record in records:
        if isinstance(record, Mapping):
            value = record
        elif getattr(getattr(record, "run", None), "spec", None) is not None:
            if record.run.spec.conditions is None:
                continue
            value = dump(record)
        else:
            continue
        reason = record_degraded_reason(value)
        if reason is not None:
            run = value.get("run", value)
            found[run["metadata"]["name"]] = reason
    return found


def _mark_degraded(
    family: Family, rows: list[list[str]], reasons: Mapping[str, str], lines: list[str]
) -> None:
    """Follow each degraded median with the mark; say why on a line of its own."""
    for row, x in zip(rows, family.x_values, strict=True):
        for column, name in enumerate(family.implementations, start=1):
            run = family.run(x, name)
            if run is None or run.name not in reasons:
                continue
            row[column] = f"{row[column]} {DEGRADED_MARK}"
            where = f" at {family.x}={x}" if family.x is not None else ""
            lines.append(f"{DEGRADED_MARK}: {name}{where} ({family.title}): {reasons[run.name]}")


def bench_summary(records: Iterable[Any], *, validated: bool = False) -> str:
    """The text tables of a benchmark's records, with noise and degraded marks and a CPU note.

    Args:
        records: The records the benchmark just wrote (models or JSON values).
        validated: The records come from the harness, which validated each one: the
            summary does not validate them again (one validation per record).

    Returns:
        One titled table per workload family (medians with p20-p80 per implementation,
        speedups against the first), each noisy median followed by :data:`NOISY_MARK`
        and each degraded one by :data:`DEGRADED_MARK`; then the speedup note, the
        legend line of each mark in use, one line per degraded run with its reason, and
        :data:`CPU_NOTE` when any run's protocol timer is the CPU's wall clock. Ends
        with a newline; ``"no runs\\n"`` when there is nothing to show.

    Raises:
        SchemaValidationError: when a record is invalid.
    """
    records = list(records)
    runs = run_set(records, validated=validated)
    reasons = _degraded(records)
    parts: list[str] = []
    degraded: list[str] = []
    any_noisy = False
    for family in families(runs):
        header, rows = table_rows(family)
        any_noisy = any_noisy or _any_noisy(family)
        if reasons:
            _mark_degraded(family, rows, reasons, degraded)
        parts.append(f"{family.title} · {family.metric}\n{text_table(header, rows)}")
    if not parts:
        return "no runs\n"
    notes = [_NOTE]
    if any_noisy:
        notes.append(noisy_legend())
    if degraded:
        notes += [DEGRADED_LEGEND, *degraded]
    cpu = any(
        (runs.spec(run.protocol_digest) or {}).get("measurement", {}).get("timer") == _CPU_TIMER
        for run in runs.runs
    )
    if cpu:
        notes.append(CPU_NOTE)
    return "\n\n".join(parts) + "\n\n" + "\n".join(notes) + "\n"

"""The table ``kernelindex bench`` prints at the end: medians, speedups, and what to distrust.

It is :func:`kernelindex_sdk.report.summary_text`'s table with two warnings a reader of a
fresh benchmark needs before believing a number: a mark on each median whose p20-p80
spread passes the one noise rule (:mod:`kernelindex_sdk._base.noise`), with a legend line
saying what the mark means, and a line saying when runs were timed on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .._base.noise import NOISY_ANNOTATION, NOISY_SPREAD, is_noisy
from ..report import Family, families, table_rows
from .runs import run_set
from .tables import text_table

__all__ = ["CPU_NOTE", "NOISY_MARK", "bench_summary", "noisy_legend"]

#: Appended to a median whose run is noisy (p80 / p20 above :data:`NOISY_SPREAD`).
NOISY_MARK: Final = "~"
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


def noisy_legend() -> str:
    """The legend line of :data:`NOISY_MARK`, naming the rule and the run annotation."""
    return (
        f"{NOISY_MARK} noisy: p80/p20 above {NOISY_SPREAD:.2f}, a step smaller than that"
        f" spread cannot be told from noise (the run carries {NOISY_ANNOTATION})"
    )


def _marked_rows(family: Family) -> tuple[list[str], list[list[str]], bool]:
    """The family's table with :data:`NOISY_MARK` after each noisy median, and whether any."""
    header, rows = table_rows(family)
    marked = False
    for x, row in zip(family.x_values, rows, strict=True):
        for column, name in enumerate(family.implementations, start=1):
            run = family.run(x, name)
            value = None if run is None else run.value
            if value is not None and is_noisy(value.p20, value.p80):
                row[column] = f"{row[column]} {NOISY_MARK}"
                marked = True
    return header, rows, marked


def bench_summary(records: Iterable[Any], *, validated: bool = False) -> str:
    """The text tables of a benchmark's records, with noise marks and a CPU note.

    Args:
        records: The records the benchmark just wrote (models or JSON values).
        validated: The records come from the harness, which validated each one: the
            summary does not validate them again (one validation per record).

    Returns:
        One titled table per workload family (medians with p20-p80 per implementation,
        speedups against the first), each noisy median followed by :data:`NOISY_MARK`;
        then the speedup note, the legend line when any median is marked, and
        :data:`CPU_NOTE` when any run's protocol timer is the CPU's wall clock. Ends
        with a newline; ``"no runs\\n"`` when there is nothing to show.

    Raises:
        SchemaValidationError: when a record is invalid.
    """
    runs = run_set(records, validated=validated)
    parts: list[str] = []
    any_noisy = False
    for family in families(runs):
        header, rows, marked = _marked_rows(family)
        any_noisy = any_noisy or marked
        parts.append(f"{family.title} · {family.metric}\n{text_table(header, rows)}")
    if not parts:
        return "no runs\n"
    notes = [_NOTE]
    if any_noisy:
        notes.append(noisy_legend())
    cpu = any(
        (runs.spec(run.protocol_digest) or {}).get("measurement", {}).get("timer") == _CPU_TIMER
        for run in runs.runs
    )
    if cpu:
        notes.append(CPU_NOTE)
    return "\n\n".join(parts) + "\n\n" + "\n".join(notes) + "\n"

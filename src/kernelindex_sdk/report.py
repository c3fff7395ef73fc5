"""Runs grouped into workload families and shown as tables; plots behind the ``[plot]`` extra.

A family is one operation and pass, every workload parameter but one fixed, on one
environment under one protocol, measuring one metric: the free parameter (the swept
``x``) is the one that varies, or the one the caller names. Each family is a table of
medians, one column per implementation, with each implementation's speedup against
the first one seen. See docs/compare.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ._analysis.compare_render import noise_legend
from ._analysis.families import Family, families, table_rows, x_key
from ._analysis.runs import RunSet
from ._analysis.tables import markdown_table, text_table
from ._base import arguments as _arguments
from ._base.display import markdown_text, printable, short_repr
from .errors import ArgumentError

__all__ = [
    "FORMATS",
    "Family",
    "families",
    "plot",
    "render",
    "summary_text",
    "table_rows",
    "x_key",
]

FORMATS: Final = ("text", "markdown")


def render(found: list[Family], fmt: str = "text") -> str:
    """Every family as a titled table, text or Markdown, ending with a newline.

    Every string a record gave (names, parameters, GPU) is escaped for the format: no
    record can start a line, a heading or a table row of its own.

    Raises:
        ArgumentError: for an unknown format (it is a ValueError too).
    """
    if fmt not in FORMATS:
        raise ArgumentError(
            argument="format", reason=f"expected one of {', '.join(FORMATS)}, got {short_repr(fmt)}"
        )
    _families(found)
    esc = markdown_text if fmt == "markdown" else printable
    parts = []
    noisy = False
    for family in found:
        header, rows = table_rows(family, esc)
        noisy = noisy or any(run.noisy for run in family.points.values())
        title = esc(f"{family.title} · {family.metric}")
        if fmt == "markdown":
            parts.append(f"### {title}\n\n{markdown_table(header, rows)}")
        else:
            parts.append(f"{title}\n{text_table(header, rows)}")
    if not parts:
        return "no runs\n"
    note = (
        "medians with p20-p80; speedup = first implementation's median / this one's"
        " (above 1 is faster); for memory, this one's / the first's"
    )
    if noisy:
        note = f"{note}; {noise_legend()}"
    parts.append(f"_{note}_" if fmt == "markdown" else note)
    return "\n\n".join(parts) + "\n"


def _families(found: Any) -> None:
    """ArgumentError unless ``found`` is a list of Family (what :func:`families` returns)."""
    if not isinstance(found, list) or not all(isinstance(f, Family) for f in found):
        raise ArgumentError(
            argument="found",
            reason=f"expected a list of Family (from families()), got {short_repr(found)}",
        )


def summary_text(records: Iterable[Any] | RunSet, *, x: str | None = None) -> str:
    """The text tables of the points that ran: medians per implementation and speedups.

    For the end of a benchmark run (``kernelindex bench jsd`` prints it on stderr).

    Args:
        records: The records just made (models or JSON values) or a RunSet.
        x: The swept parameter; by default the one that varies most.
    """
    return render(families(records, x=x), "text")


def plot(found: list[Family], path: str | Path) -> None:
    """Draw the families into one PNG or SVG file (small multiples, one row per family).

    Raises:
        MissingDependencyError: when matplotlib (the ``[plot]`` extra) is not installed.
        InputError: when the suffix is not .png or .svg, or the file cannot be written.
    """
    _families(found)
    _arguments.path(path)
    from ._analysis import plot as _plot  # noqa: PLC0415 - matplotlib stays out of `import kernelindex_sdk`

    _plot.save(_plot.figure(found), path)

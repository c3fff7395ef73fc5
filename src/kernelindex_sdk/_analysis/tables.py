"""Numbers and tables as people read them: values with units, aligned text and Markdown."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .._base.display import printable, printable_all
from .._base.units import TIME_UNITS

__all__ = ["markdown_table", "quantity", "spread", "text_table", "time_unit"]


def _digits(value: float) -> str:
    """Four significant digits, fixed point (2.290, 37.44, 128.3, 5921)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    size = abs(value)
    # The common magnitudes by comparison (tables format a cell per run: this is hot);
    # the same decimals as 3 - floor(log10(size)), which decides below 1.
    if size >= 1000:
        return f"{value:.0f}"
    if size >= 1:
        return f"{value:.{1 if size >= 100 else 2 if size >= 10 else 3}f}"
    return f"{value:.{3 - math.floor(math.log10(size))}f}"


def time_unit(ns: float) -> tuple[str, float]:
    """The time unit that shows ``ns`` nanoseconds best, and nanoseconds per that unit."""
    for name, scale in TIME_UNITS:
        if abs(ns) >= scale:
            return name, scale
    return "ns", 1.0


def quantity(value: float, unit: str, scale: tuple[str, float] | None = None) -> str:
    """``2.290 ms`` for 2290080 ns; other units keep their own (``6526 MiB``)."""
    if unit == "ns":
        name, factor = scale or time_unit(value)
        return f"{_digits(value / factor)} {name}"
    return f"{_digits(value)} {unit}"


def spread(median: float, low: float | None, high: float | None, unit: str) -> str:
    """``2.290 ms (2.288-2.291)``: the median with its p20-p80 in the same unit."""
    scale = time_unit(median) if unit == "ns" else ("", 1.0)
    text = quantity(median, unit, scale if unit == "ns" else None)
    if low is None or high is None:
        return text
    return f"{text} ({_digits(low / scale[1])}-{_digits(high / scale[1])})"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart; numbers stay left-aligned.

    Every cell is made :func:`~kernelindex_sdk._base.display.printable`: a newline in a
    record's text cannot start a row of its own.
    """
    if not printable_all([*header, *(c for row in rows for c in row)]):
        header = [printable(c) for c in header]
        rows = [[printable(c) for c in row] for row in rows]
    widths = [max(map(len, column)) for column in zip(header, *rows, strict=True)]
    pattern = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(pattern.format(*r).rstrip() for r in [header, *rows])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table of cells written as given: a cell holding
    record text must come through :func:`~kernelindex_sdk._base.display.markdown_text`
    (which escapes its pipes and controls too)."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *map(line, rows)])

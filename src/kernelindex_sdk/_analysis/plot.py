"""Report figures with matplotlib (the ``[plot]`` extra); imported only when plotting.

One row of panels per family: latency against the swept parameter, achieved bandwidth
where the workload declares bytesMoved, and peak memory where memory was measured.
One line per implementation, with its p20-p80 band.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from .._base.display import printable
from ..errors import InputError, MissingDependencyError
from .runs import Stat
from .tables import time_unit

__all__ = ["figure", "save"]


# What a plot draws, as the structure it reads: kernelindex_sdk.report's Family has it.
# Described here, so that this module imports nothing back from report, which calls it.
class Family(Protocol):
    """Runs of one workload family (:class:`kernelindex_sdk.report.Family`)."""

    @property
    def operation(self) -> str: ...
    @property
    def pass_(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def x(self) -> str | None: ...
    @property
    def fixed(self) -> tuple[tuple[str, Any], ...]: ...
    @property
    def environment(self) -> str: ...
    @property
    def environment_digest(self) -> str: ...
    @property
    def implementations(self) -> tuple[str, ...]: ...
    @property
    def bytes_moved(self) -> dict[Any, int]: ...
    @property
    def x_values(self) -> list[Any]: ...
    def stat(self, x: Any, implementation: str) -> Stat | None: ...
    def moved(self, x: Any) -> int | None: ...


SUFFIXES: Final = (".png", ".svg")
_PANEL_WIDTH, _PANEL_HEIGHT = 5.2, 3.6


def _matplotlib() -> Any:
    try:
        figure_module = importlib.import_module("matplotlib.figure")
        ticker = importlib.import_module("matplotlib.ticker")
    except ImportError:
        raise MissingDependencyError(feature="--plot", package="matplotlib", extra="plot") from None
    return figure_module, ticker


def _log_span(values: Iterable[float], factor: float = 10.0) -> bool:
    """Whether positive values span ``factor`` or more (a decade: a log axis reads better)."""
    positive = [v for v in values if v > 0]
    return len(positive) > 1 and max(positive) / min(positive) >= factor


def _rows(found: Sequence[Family]) -> list[list[tuple[str, Family]]]:
    """Families of one workload (all but the metric) side by side: the panels of one row."""
    rows: dict[tuple[Any, ...], list[tuple[str, Family]]] = {}
    for f in found:
        key = (f.operation, f.pass_, f.x, f.fixed, f.environment_digest)
        panels = rows.setdefault(key, [])
        panels.append((f.metric, f))
        if f.metric == "latency" and f.bytes_moved:
            panels.append(("bandwidth", f))
    order = {"latency": 0, "bandwidth": 1, "memory": 2}
    return [sorted(p, key=lambda m: order.get(m[0], 3)) for p in rows.values()]


def figure(found: Sequence[Family]) -> Any:
    """A matplotlib Figure of the families, not yet saved (tests read its axes).

    Raises:
        MissingDependencyError: when matplotlib is not installed.
    """
    figure_module, ticker = _matplotlib()
    rows = _rows(found) or [[]]
    columns = max(1, *(len(r) for r in rows))
    fig = figure_module.Figure(
        figsize=(_PANEL_WIDTH * columns, _PANEL_HEIGHT * len(rows)), layout="constrained"
    )
    axes = fig.subplots(len(rows), columns, squeeze=False)
    fig.suptitle("median per implementation, p20-p80 band shaded", fontsize=10)
    colours = _colours(found)
    for r, panels in enumerate(rows):
        for c in range(columns):
            ax = axes[r][c]
            if c >= len(panels):
                ax.set_visible(False)
                continue
            kind, family = panels[c]
            _panel(ax, kind, family, ticker, colours)
    return fig


def _colours(found: Sequence[Family]) -> dict[str, str]:
    """One colour per implementation across the figure, in the order first seen (Liger is
    the same colour in every panel), from matplotlib's default cycle."""
    cycle = importlib.import_module("matplotlib").rcParams["axes.prop_cycle"].by_key()["color"]
    names = dict.fromkeys(name for f in found for name in f.implementations)
    return {name: cycle[i % len(cycle)] for i, name in enumerate(names)}


def _text(text: str) -> str:
    """Record text for a title, label or legend: one line, and shown as written (a ``$``
    would start matplotlib's mathtext, and a legend hides labels starting with ``_``)."""
    shown = printable(text).replace("$", r"\$")
    return f" {shown}" if shown.startswith("_") else shown


def _x_positions(family: Family) -> tuple[list[Any], list[float], bool]:
    """The x values, where to draw them, and whether the axis is numeric."""
    values = family.x_values
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if numeric:
        return values, [float(v) for v in values], True
    return values, [float(i) for i in range(len(values))], False


def _panel(ax: Any, kind: str, family: Family, ticker: Any, colours: dict[str, str]) -> None:
    values, positions, numeric = _x_positions(family)
    scale_name, scale = "", 1.0
    if kind == "latency":
        medians = [s.median for s in _stats(family) if s.median > 0]
        # The unit of the geometric middle: a 0.1-100 ms sweep reads in ms.
        middle = math.sqrt(min(medians) * max(medians)) if medians else 1.0
        scale_name, scale = time_unit(middle)
    all_y: list[float] = []
    for name in family.implementations:
        xs, ys, lows, highs = _series(kind, family, name, values, positions, scale)
        if not xs:
            continue
        colour = colours[name]
        ax.plot(xs, ys, marker="o", markersize=4, label=_text(name), color=colour)
        ax.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)
        all_y += ys
    ylabel = {
        "latency": f"latency ({scale_name})",
        "bandwidth": "achieved bandwidth (GB/s)",
        "memory": f"peak memory ({family.unit})",
    }.get(kind, f"{family.metric} ({family.unit})")
    ax.set_ylabel(_text(ylabel))
    ax.set_xlabel(_text(family.x or "point"))
    fixed = _text(" ".join(f"{k}={v}" for k, v in family.fixed))
    head = _text(f"{family.operation} {family.pass_} · {family.environment} · {kind}")
    ax.set_title(f"{head}\n{fixed}" if fixed else head, fontsize=9)
    doubling = len(values) > 2 and all(_power_of_two(v) for v in values)
    if numeric and (doubling or _log_span(positions)):
        # A sweep by doubling is geometric: a log axis spaces its points evenly.
        ax.set_xscale("log", base=2 if doubling else 10)
    if numeric:
        ax.set_xticks(positions)
        ax.xaxis.set_major_formatter(ticker.FixedFormatter([str(v) for v in values]))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    else:
        ax.set_xticks(positions, [_text(str(v)) for v in values])
    log_x = numeric and (doubling or _log_span(positions))
    # Beside a log x, a y that grows with it reads as a line on log axes (4x and up).
    if _log_span(all_y) or (log_x and _log_span(all_y, 4.0)):
        ax.set_yscale("log")
        # Plain numbers (0.5, 2, 10) rather than powers of ten, on major and minor ticks.
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        decades = math.log10(max(all_y) / min(y for y in all_y if y > 0))
        # Within two decades the 3s fit too; beyond, they would crowd the 2s.
        marks = (2, 3, 5) if decades < 2 else (2, 5)
        ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: _minor_label(v, marks)))
    ax.grid(True, which="major", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=8)


def _series(
    kind: str, family: Family, name: str, values: list[Any], positions: list[float], scale: float
) -> tuple[list[float], list[float], list[float], list[float]]:
    """One implementation's points: x, y, and the band's lower and upper edges."""
    xs, ys, lows, highs = [], [], [], []
    for value, pos in zip(values, positions, strict=True):
        stat = family.stat(value, name)
        if stat is None or stat.median <= 0:
            continue
        if kind == "bandwidth":
            moved = family.moved(value)
            if moved is None:
                continue
            # Bytes per nanosecond is GB/s; the slower end of the band is p80. A p20 or
            # p80 of 0 ns gives no bound: the band ends at the median there.
            y = moved / stat.median
            low = moved / stat.high if stat.high > 0 else y
            high = moved / stat.low if stat.low > 0 else y
        else:
            y, low, high = stat.median / scale, stat.low / scale, stat.high / scale
        xs.append(pos)
        ys.append(y)
        lows.append(low)
        highs.append(high)
    return xs, ys, lows, highs


def _minor_label(value: float, marks: tuple[int, ...]) -> str:
    """Label some minor ticks of each decade (2, 5): every one labelled would overlap."""
    if value <= 0:
        return ""
    leading = round(value / 10 ** math.floor(math.log10(value)), 6)
    return f"{value:g}" if leading in marks else ""


def _power_of_two(value: Any) -> bool:
    return isinstance(value, int) and value > 0 and value & (value - 1) == 0


def _stats(family: Family) -> list[Any]:
    return [
        s
        for x in family.x_values
        for name in family.implementations
        if (s := family.stat(x, name)) is not None
    ]


def save(fig: Any, path: str | Path) -> None:
    """Write the figure as PNG or SVG, chosen by the suffix.

    Raises:
        InputError: for another suffix, or when the file cannot be written.
    """
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise InputError(
            source=str(target), reason=f"expected a .png or .svg file, got {target.suffix!r}"
        )
    try:
        fig.savefig(target, dpi=110)
    except OSError as err:
        raise InputError(source=str(target), reason=err.strerror or str(err)) from err

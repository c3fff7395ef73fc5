"""A history as text or Markdown: per series, its change points and its latest points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._tables import markdown_table, quantity, spread, text_table

if TYPE_CHECKING:
    from .history import Change, SeriesHistory

__all__ = ["render_table"]

_CHANGE_HEADER = ("at", "commit", "ratio", "direction", "cause", "what changed", "test")
_POINT_HEADER = ("#", "commit", "observedAt", "median (p20-p80)", "run")


def _commit(commit: str | None) -> str:
    return "-" if commit is None else commit[:12]


def _test(change: Change) -> str:
    if not change.tested:
        return "compare's rule (too short to test)"
    return f"p={change.p_value:.2g}"


def _change_row(h: SeriesHistory, change: Change) -> list[str]:
    levels = f"{quantity(change.before_ns, 'ns')} -> {quantity(change.after_ns, 'ns')}"
    what = "; ".join(str(d) for d in change.differences) or "nothing recorded"
    return [
        f"{change.index}/{len(h.series.points)}",
        _commit(change.commit),
        f"{change.ratio:.3f}",
        f"{change.direction} ({levels})",
        change.cause,
        what,
        _test(change),
    ]


def render_table(found: Sequence[SeriesHistory], *, markdown: bool, points: int) -> str:
    """Text or Markdown of :func:`kernelindex_sdk.store.history.history`'s result."""
    out: list[str] = []
    table = markdown_table if markdown else text_table
    changed = sum(1 for h in found if h.changes)
    summary = f"{len(found)} series, {changed} with change points"
    out += [f"**{summary}**" if markdown else summary, ""]
    for h in found:
        series = h.series
        title = f"{h.label} · {h.implementation} · {h.key.hardware}"
        count = f"{len(series.points)} point(s)"
        if series.failed:
            count += f", {len(series.failed)} failed run(s) (no timing; not in the points)"
        if not h.tested and series.points:
            count += ", too short to test: compare's rule between neighbours"
        out += [f"### {title}" if markdown else title, f"{count}", ""]
        if h.follows is not None:
            what = "; ".join(str(d) for d in h.follows.differences) or "protocol digest"
            out += [
                f"follows a series under another protocol ({what}): a method change,"
                " not compared across",
                "",
            ]
        if h.changes:
            out += [table(_CHANGE_HEADER, [_change_row(h, c) for c in h.changes]), ""]
        else:
            out += ["no change points", ""]
        shown = series.points if points == 0 else series.points[-points:]
        first = len(series.points) - len(shown)
        if first:
            out += [f"(latest {len(shown)} of {len(series.points)} points)", ""]
        rows = [
            [
                str(first + i),
                _commit(p.commit),
                p.observed_at,
                spread(p.median_ns or 0, p.p20_ns, p.p80_ns, "ns"),
                f"`{p.name}`" if markdown else p.name,
            ]
            for i, p in enumerate(shown)
        ]
        if rows:
            out += [table(_POINT_HEADER, rows), ""]
    return "\n".join(out).rstrip("\n") + "\n"

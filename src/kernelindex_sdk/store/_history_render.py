"""A history as text or Markdown: per series, its change points and its latest points."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .._analysis.tables import markdown_table, quantity, spread, text_table
from .._base.display import markdown_text, printable
from .series import skip_text

if TYPE_CHECKING:
    from ._history_types import Change, SeriesHistory

__all__ = ["cause_text", "render_table"]

_CHANGE_HEADER = ("at", "commit", "ratio", "direction", "verdict", "cause", "what changed", "test")
_POINT_HEADER = ("#", "commit", "observedAt", "median (p20-p80)", "run")
_SKIPPED_HEADER = ("left out", "observedAt", "median", "run", "why")


def _commit(commit: str | None, text: Callable[[str], str]) -> str:
    return "-" if commit is None else text(commit[:12])


def _test(change: Change) -> str:
    if not change.tested:
        return "the verdict between neighbours (too short to test)"
    return f"p={change.p_value:.2g}"


def cause_text(change: Change) -> str:
    """The change's causes, with the co-measured lines that moved with it."""
    text = " + ".join(change.causes or (change.cause,))
    if change.moved_with:
        text += f" (shared: moved with {', '.join(change.moved_with)})"
    return text


def _change_row(h: SeriesHistory, change: Change, text: Callable[[str], str]) -> list[str]:
    levels = f"{quantity(change.before_ns, 'ns')} -> {quantity(change.after_ns, 'ns')}"
    what = "; ".join(str(d) for d in change.differences) or "nothing recorded"
    verdict = "-" if change.verdict is None else change.verdict.kind
    return [
        f"{change.index}/{len(h.series.points)}",
        _commit(change.commit, text),
        f"{change.ratio:.3f}",
        f"{change.direction} ({levels})",
        verdict,
        text(cause_text(change)),
        text(what),
        _test(change),
    ]


def _parameters(found: Sequence[SeriesHistory]) -> tuple[set[str] | None, dict[str, str]]:
    """The parameters whose values differ between the series (None: show all), and the
    values every series shares, said once above them."""
    if len(found) < 2:
        return None, {}
    values: dict[str, set[str]] = {}
    for h in found:
        params = {} if h.workload is None else h.workload.get("parameters", {})
        for k, v in params.items():
            values.setdefault(k, set()).add(repr(v))
    every = [h.workload.get("parameters", {}) if h.workload else {} for h in found]
    common = {
        k: str(every[0][k])
        for k, seen in values.items()
        if len(seen) == 1 and all(k in e for e in every)
    }
    return set(values) - set(common), common


def render_table(found: Sequence[SeriesHistory], *, markdown: bool, points: int) -> str:
    """Text or Markdown of :func:`kernelindex_sdk.store.history.history`'s result."""
    out: list[str] = []
    table = markdown_table if markdown else text_table
    # Record text (commits, labels, names, GPUs) as the format shows text: in Markdown a
    # pipe would forge a cell and `*`, `<` or a backtick become markup.
    text = markdown_text if markdown else printable
    changed = sum(1 for h in found if h.changes)
    summary = f"{len(found)} series, {changed} with change points"
    out += [f"**{summary}**" if markdown else summary, ""]
    varying, common = _parameters(found)
    if common:
        # Names and values are other people's text: one line each, control characters escaped.
        shared = text(" ".join(f"{k}={v}" for k, v in sorted(common.items())))
        out += [f"every series: {shared}", ""]
    for h in found:
        series = h.series
        title = text(f"{h.label_with(varying)} · {h.implementation} · {h.key.hardware}")
        count = f"{len(series.points)} point(s)"
        if series.failed:
            count += f", {len(series.failed)} failed run(s) (no timing; not in the points)"
        if series.skipped:
            count += f", {len(series.skipped)} run(s) left out (no positive median; below)"
        pooled = sum(1 for a, b in h.groups if b - a > 1)
        if pooled:
            count += f", {pooled} pooled from replicates (runs of one commit)"
        if not h.tested and len(h.groups or series.points) > 1:
            count += ", too short to test: the verdict between neighbours"
        out += [f"### {title}" if markdown else title, f"{count}", ""]
        if h.follows is not None:
            what = text("; ".join(str(d) for d in h.follows.differences) or "protocol digest")
            out += [
                f"follows a series under another protocol ({what}): a method change,"
                " not compared across",
                "",
            ]
        if h.changes:
            out += [table(_CHANGE_HEADER, [_change_row(h, c, text) for c in h.changes]), ""]
        else:
            out += ["no change points", ""]
        shown = series.points if points == 0 else series.points[-points:]
        first = len(series.points) - len(shown)
        if first:
            out += [f"(latest {len(shown)} of {len(series.points)} points)", ""]
        rows = [
            [
                str(first + i),
                _commit(p.commit, text),
                p.observed_at,
                spread(p.median_ns or 0, p.p20_ns, p.p80_ns, "ns"),
                f"`{printable(p.name)}`" if markdown else printable(p.name),
            ]
            for i, p in enumerate(shown)
        ]
        if rows:
            out += [table(_POINT_HEADER, rows), ""]
        if series.skipped:
            out += [
                table(
                    _SKIPPED_HEADER,
                    [
                        [
                            _commit(r.commit, text),
                            r.observed_at,
                            "-" if r.median_ns is None else f"{r.median_ns} ns",
                            f"`{printable(r.name)}`" if markdown else printable(r.name),
                            skip_text(r),
                        ]
                        for r in series.skipped
                    ],
                ),
                "",
            ]
    return "\n".join(out).rstrip("\n") + "\n"

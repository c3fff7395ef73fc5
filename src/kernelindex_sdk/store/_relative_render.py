"""Relative series as text, Markdown or JSON, beside a history (``kernelindex history``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .._analysis.tables import markdown_table, text_table
from .._base.display import markdown_text, printable
from ._history_json import change_json
from ._history_render import cause_text
from ._relative_types import RelativeHistory

__all__ = ["relative_as_json", "relative_json_text", "relative_table"]

_CHANGE_HEADER = ("at", "commit", "ratio", "verdict", "cause", "what changed", "test")
_POINT_HEADER = ("#", "commit", "GPU", "over the baseline (p20-p80)", "run")


def _ratio(value: float, low: float | None, high: float | None) -> str:
    text = f"{value:.3f}"
    if low is None or high is None:
        return text
    return f"{text} ({low:.3f}-{high:.3f})"


def _commit(commit: str | None, text: Callable[[str], str]) -> str:
    return "-" if commit is None else text(commit[:12])


def relative_table(found: Sequence[RelativeHistory], *, markdown: bool, points: int) -> str:
    """The relative series as text or Markdown (empty when there are none)."""
    if not found:
        return ""
    table = markdown_table if markdown else text_table
    text = markdown_text if markdown else printable
    changed = sum(1 for h in found if h.changes)
    head = (
        f"{len(found)} relative series (each implementation over its baseline, measured"
        f" in the same sweep), {changed} with change points"
    )
    out = [f"**{head}**" if markdown else head, ""]
    for h in found:
        series = h.series
        title = text(f"{h.label} · {h.title} · {', '.join(series.hardware)}")
        out += [f"### {title}" if markdown else title]
        count = f"{len(series.points)} point(s)"
        if not h.tested and len(series.points) > 1:
            count += ", too short to test: the verdict between neighbours"
        out += [count, ""]
        if h.changes:
            rows = []
            for c in h.changes:
                what = "; ".join(str(d) for d in c.differences) or "nothing recorded"
                rows.append(
                    [
                        f"{c.index}/{len(series.points)}",
                        _commit(c.commit, text),
                        f"{c.before_ns:.3f} -> {c.after_ns:.3f} (x{c.ratio:.2f})",
                        "-" if c.verdict is None else c.verdict.kind,
                        text(cause_text(c)),
                        text(what),
                        "the verdict between neighbours" if not c.tested else f"p={c.p_value:.2g}",
                    ]
                )
            out += [table(_CHANGE_HEADER, rows), ""]
        else:
            out += ["no change points", ""]
        shown = series.points if points == 0 else series.points[-points:]
        first = len(series.points) - len(shown)
        rows = [
            [
                str(first + i),
                _commit(p.run.commit, text),
                text(p.hardware or "-"),
                _ratio(p.ratio, p.p20, p.p80) + (" degraded" if p.degraded else ""),
                f"`{printable(p.run.name)}`" if markdown else printable(p.run.name),
            ]
            for i, p in enumerate(shown)
        ]
        if rows:
            out += [table(_POINT_HEADER, rows), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def relative_json_text(history_text: str, found: Sequence[RelativeHistory]) -> str:
    """A history's JSON text (``{"series": [...]}``) with ``"relative"`` added."""
    body = history_text.rstrip("\n")
    if not body.endswith("}"):  # pragma: no cover - history_json_text always ends so
        return history_text
    extra = json.dumps(relative_as_json(found), ensure_ascii=False)
    return f'{body[:-1]}, "relative": {extra}}}\n'


def relative_as_json(found: Sequence[RelativeHistory]) -> list[dict[str, Any]]:
    """The relative series in the JSON form of ``kernelindex history`` (docs/history.md)."""
    out = []
    for h in found:
        k = h.key
        out.append(
            {
                "label": h.label,
                "workloadDigest": k.workload_digest,
                "provider": k.provider,
                "entryPoint": k.entry_point or None,
                "baseline": k.baseline,
                "protocolDigest": k.protocol_digest,
                "hardware": list(h.series.hardware),
                "tested": h.tested,
                "points": [
                    {
                        "commit": p.run.commit,
                        "commitTime": p.run.commit_time,
                        "hardware": p.hardware,
                        "run": p.run.name,
                        "baselineRun": p.baseline.name,
                        "ratio": p.ratio,
                        "p20": p.p20,
                        "p80": p.p80,
                        "runs": p.runs,
                        "degraded": p.degraded,
                    }
                    for p in h.series.points
                ],
                "changes": [change_json(c) for c in h.changes],
            }
        )
    return out

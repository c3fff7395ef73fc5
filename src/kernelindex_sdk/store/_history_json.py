"""The JSON form of a history (docs/history.md), as values and as text.

The text is written point by point: a series of 10,000 points is most of what is
written, and formatting each point's few scalars directly costs half of what json's
encoder takes for 10,000 small objects. The value form and the text parse the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._analysis.runs import without_collection
from .series import skip_text

if TYPE_CHECKING:
    from ._history_types import Change, SeriesHistory
    from ._rows import RunRow

__all__ = ["history_as_json", "history_json_text"]

# json's own string encoder (C): quotes and escapes one string as JSON.
_STRING: Final = json.encoder.encode_basestring


def _points_text(rows: Sequence[RunRow]) -> str:
    """The points' JSON objects, comma-separated: one loop, no call per field."""
    string = _STRING
    parts = []
    for row in rows:
        commit, branch, when = row.commit, row.branch, row.commit_time
        median, p20, p80 = row.median_ns, row.p20_ns, row.p80_ns
        parts.append(
            f'{{"commit": {"null" if commit is None else string(commit)},'
            f' "branch": {"null" if branch is None else string(branch)},'
            f' "commitTime": {"null" if when is None else string(when)},'
            f' "observedAt": {string(row.observed_at)}, "run": {string(row.name)},'
            f' "median": {median if type(median) is int else _number(median)},'
            f' "p20": {p20 if type(p20) is int else _number(p20)},'
            f' "p80": {p80 if type(p80) is int else _number(p80)}}}'
        )
    return ", ".join(parts)


def _number(value: float | None) -> str:
    return "null" if value is None else json.dumps(value)


def _point_json(row: RunRow) -> dict[str, Any]:
    return {
        "commit": row.commit,
        "branch": row.branch,
        "commitTime": row.commit_time,
        "observedAt": row.observed_at,
        "run": row.name,
        "median": row.median_ns,
        "p20": row.p20_ns,
        "p80": row.p80_ns,
    }


def _change_json(change: Change) -> dict[str, Any]:
    return {
        "index": change.index,
        "commit": change.commit,
        "run": change.run,
        "ratio": change.ratio,
        "direction": change.direction,
        "cause": change.cause,
        "differences": [
            {"object": d.object, "field": d.field, "before": d.before, "after": d.after}
            for d in change.differences
        ],
        "before": change.before_ns,
        "after": change.after_ns,
        "pValue": change.p_value,
        "tested": change.tested,
    }


def history_as_json(found: Sequence[SeriesHistory], *, points: bool = True) -> dict[str, Any]:
    """The documented JSON form (docs/history.md): ``{"series": [...]}``.

    Args:
        found: What :func:`~kernelindex_sdk.store.history.history` returned.
        points: Whether each series lists its points (False: the rest only).
    """
    series = []
    for h in found:
        key, row = h.key, h.series.first
        series.append(
            {
                "label": h.label,
                "workloadDigest": key.workload_digest,
                "operation": row.operation,
                "pass": row.pass_,
                "parameters": None if h.workload is None else h.workload.get("parameters"),
                "provider": row.provider,
                "entryPoint": row.entry_point,
                "protocolDigest": key.protocol_digest,
                "hardware": row.hardware,
                "tested": h.tested,
                "follows": None
                if h.follows is None
                else {
                    "protocolDigest": h.follows.protocol_digest,
                    "differences": [
                        {"field": d.field, "before": d.before, "after": d.after}
                        for d in h.follows.differences
                    ],
                },
                "points": [_point_json(p) for p in h.series.points] if points else [],
                "failed": [
                    {
                        "commit": r.commit,
                        "observedAt": r.observed_at,
                        "run": r.name,
                        "status": r.status,
                    }
                    for r in h.series.failed
                ],
                "skipped": [_skipped_json(r) for r in h.series.skipped],
                "changes": [_change_json(c) for c in h.changes],
            }
        )
    return {"series": series}


def _skipped_json(row: RunRow) -> dict[str, Any]:
    return {
        "commit": row.commit,
        "observedAt": row.observed_at,
        "run": row.name,
        "median": row.median_ns,
        "reason": skip_text(row),
    }


def _series_head(h: SeriesHistory) -> dict[str, Any]:
    """A series' JSON object without its points."""
    found = history_as_json([h], points=False)["series"][0]
    return found  # type: ignore[no-any-return]


@without_collection
def history_json_text(found: Sequence[SeriesHistory]) -> str:
    """``json.dumps(history_as_json(found))`` and a newline, written faster."""
    parts = []
    for h in found:
        head = _series_head(h)
        del head["points"]
        tail = {
            "failed": head.pop("failed"),
            "skipped": head.pop("skipped"),
            "changes": head.pop("changes"),
        }
        points = _points_text(h.series.points)
        parts.append(
            json.dumps(head, ensure_ascii=False)[:-1]
            + f', "points": [{points}], '
            + json.dumps(tail, ensure_ascii=False)[1:]
        )
    return '{"series": [' + ", ".join(parts) + "]}\n"

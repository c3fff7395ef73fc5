"""The JSON form of a history (docs/history.md), as values and as text.

The text is written column by column: a series of 10,000 points is most of what is
written, and a Python step per field of each point (or json's encoder on 10,000 small
objects) costs several times what joining the points' texts does. The value form and
the text are the same JSON; tests/store/test_history_json_text.py holds them to
``json.dumps`` of the value form byte for byte.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final

from ._rows import RunRow
from .series import degraded_column, skip_text

if TYPE_CHECKING:
    from ._history_types import Change, SeriesHistory

__all__ = ["change_json", "history_as_json", "history_json_text", "number_text"]

# json's own string encoder (C): quotes and escapes one string as JSON.
_STRING: Final = json.encoder.encode_basestring
# What json's encoder escapes in a str (ensure_ascii=False): the quote, the backslash and
# U+0000 to U+001F. Every other character it writes as it is, so a column of str none of
# which holds one is written as it is between quotes (one search of their joined text).
_ESCAPED: Final = '"\\' + "".join(map(chr, range(0x20)))

_FIELD: Final = RunRow._fields.index
#: A point's keys in the documented order, each with its RunRow field and whether it
#: holds text (else a number).
_POINT: Final = (
    ("commit", _FIELD("commit"), True),
    ("branch", _FIELD("branch"), True),
    ("commitTime", _FIELD("commit_time"), True),
    ("observedAt", _FIELD("observed_at"), True),
    ("run", _FIELD("name"), True),
    ("median", _FIELD("median_ns"), False),
    ("p20", _FIELD("p20_ns"), False),
    ("p80", _FIELD("p80_ns"), False),
)
_MEDIAN: Final = _FIELD("median_ns")
_P20: Final = _FIELD("p20_ns")
_P80: Final = _FIELD("p80_ns")


def number_text(value: Any) -> str:
    """``json.dumps(value)`` for a point's number (an int, a float, None, a bool...).

    An int's text is its decimal digits and a finite float's is its ``repr`` (json's
    encoder calls ``float.__repr__``); the rest (NaN, infinities, bools, subclasses)
    goes through json itself.
    """
    kind = type(value)
    if kind is int:
        return f"{value}"
    if kind is float and math.isfinite(value):
        return repr(value)
    return json.dumps(value)


def _column(values: Sequence[Any], text: bool) -> tuple[str, Sequence[str] | None, str]:
    """One field's values as JSON: ``(before, texts, after)`` where each value's JSON is
    ``before + texts[i] + after``, or ``(json, None, "")`` when it is the same for all."""
    first = values[0] if values else None
    if text and type(first) is str and values[-1] == first and values.count(first) == len(values):
        # One text for every point (a series' branch; the runs of one store group share
        # the object, so the count is mostly identity checks): written once.
        return _STRING(first), None, ""
    if text:
        try:
            joined = "".join(values)
        except TypeError:
            # Not all str: None among them, or a value json refuses below as it would.
            joined = None
        if joined is not None and not any(map(joined.__contains__, _ESCAPED)):
            return '"', values, '"'
    if values.count(None) == len(values):
        return "null", None, ""
    if text:
        return "", ["null" if v is None else _STRING(v) for v in values], ""
    if set(map(type, values)) == {int}:
        return "", [f"{v}" for v in values], ""
    return "", [number_text(v) for v in values], ""


def _statistics(columns: Sequence[Sequence[Any]]) -> list[str] | None:
    """Each point's ``median, "p20": p20, "p80": p80`` text in one piece when all three
    are ints (most of a history's points), else None."""
    medians, lows, highs = columns[_MEDIAN], columns[_P20], columns[_P80]
    if set(map(type, medians)) | set(map(type, lows)) | set(map(type, highs)) != {int}:
        return None
    return [f'{m}, "p20": {a}, "p80": {b}' for m, a, b in zip(medians, lows, highs, strict=True)]


def _points_parts(rows: Sequence[RunRow]) -> list[str]:
    """The points' JSON objects, comma-separated, as ``json.dumps`` writes them, in
    pieces to join.

    The constant text between two values (keys, quotes, a null every point has) and the
    values' texts are interleaved into one list, joined once with the rest of the text:
    a series of 10,000 points is a text of megabytes, and each copy of it costs the pages
    it is written to as well.
    """
    if not rows:
        return []
    columns = tuple(zip(*rows, strict=True))
    constants: list[str] = []
    texts: list[Sequence[str]] = []
    pending = "{"
    statistics = _statistics(columns)
    for key, at, text in _POINT if statistics is None else _POINT[:-3]:
        before, values, after = _column(columns[at], text)
        pending += f'"{key}": {before}'
        if values is not None:
            constants.append(pending)
            texts.append(values)
            pending = after
        pending += ", "
    if statistics is not None:
        constants.append(pending + '"median": ')
        texts.append(statistics)
        pending = ", "
    last = pending[:-2] + "}"
    n, width = len(rows), 2 * len(texts)
    if not texts:
        return [", ".join(repeat(last, n))]
    parts: list[str] = [""] * (width * n)
    # Between two points: the last constant of one, the separator, the first of the next.
    parts[0::width] = repeat(f"{last}, {constants[0]}", n)
    parts[0] = constants[0]
    for i, values in enumerate(texts):
        parts[2 * i + 1 :: width] = values
        if i + 1 < len(texts):
            parts[2 * i + 2 :: width] = repeat(constants[i + 1], n)
    parts.append(last)
    return parts


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


def change_json(change: Change) -> dict[str, Any]:
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
        "verdict": None if change.verdict is None else change.verdict.kind,
        "evidence": None if change.verdict is None else change.verdict.reason,
        "causes": list(change.causes or (change.cause,)),
        "movedWith": list(change.moved_with),
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
                "noise": None
                if h.noise is None
                else {"sd": h.noise.sd, "df": h.noise.df, "source": h.noise.source},
                "replicates": [[a, b - a] for a, b in h.groups if b - a > 1],
                "degraded": _degraded_json(h.series.points),
                "changes": [change_json(c) for c in h.changes],
            }
        )
    return {"series": series}


def _degraded_json(points: Sequence[RunRow]) -> list[dict[str, Any]]:
    marks = degraded_column(points)
    if marks.count(None) == len(marks):
        return []
    return [
        {"index": i, "run": row.name, "reason": reason}
        for i, (row, reason) in enumerate(zip(points, marks, strict=True))
        if reason is not None
    ]


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


def history_json_text(found: Sequence[SeriesHistory]) -> str:
    """``json.dumps(history_as_json(found))`` and a newline, written faster."""
    # One list joined once: the points are most of the text, copied once.
    parts = ['{"series": [']
    for i, h in enumerate(found):
        head = _series_head(h)
        del head["points"]
        tail = {
            key: head.pop(key)
            for key in ("failed", "skipped", "noise", "replicates", "degraded", "changes")
        }
        parts += [", " if i else "", json.dumps(head, ensure_ascii=False)[:-1], ', "points": [']
        parts += _points_parts(h.series.points)
        parts += ["], ", json.dumps(tail, ensure_ascii=False)[1:]]
    parts.append("]}\n")
    return "".join(parts)

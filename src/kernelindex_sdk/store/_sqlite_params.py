"""Rows as parameters that Python's sqlite3 binds without adapting them first.

Python's sqlite3 binds an int, float, str or bytearray (of exactly those types) at once.
Any other parameter, None and bytes among them, first goes through its adapter lookup,
which before Python 3.12 builds and drops an AttributeError on the way (its protocol type
has no ``__adapt__``): about 2,500 instructions a value, a third of the cost of a whole
row of run columns (``benchmarks/sqlite_params.py``). A run's row holds up to six None
values (no commit, no branch) and its text is UTF-8 bytes, so an ingest writes NULL as a
literal of the statement instead, and binds its texts as bytearrays.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["as_bytearrays", "without_nulls"]

# More runs of one pattern than one in this many rows: binding the None values costs
# less than an executemany per run.
_MIN_ROWS_PER_PATTERN: Final = 16


def _picker(keep: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    if len(keep) == 1:
        only = keep[0]
        return lambda row: (row[only],)
    return operator.itemgetter(*keep)


def without_nulls(
    rows: Sequence[Sequence[Any]],
) -> list[tuple[frozenset[int], Sequence[Sequence[Any]]]]:
    """The rows in consecutive parts of one pattern of None values, in their order.

    Args:
        rows: Rows of equal length.

    Returns:
        For each part, the positions that are None in each of its rows (for the
        statement to write NULL there) and its rows without those values; one part of
        every row with its None values kept when the patterns alternate too often.
    """
    if not rows:
        return []
    nones = (None,) * len(rows[0])
    patterns = list(
        map(tuple, map(map, itertools.repeat(operator.is_), rows, itertools.repeat(nones)))
    )
    if patterns.count(patterns[0]) == len(patterns):
        parts: list[tuple[tuple[bool, ...], Sequence[Sequence[Any]]]] = [(patterns[0], rows)]
    else:
        parts = [
            (pattern, [row for _, row in group])
            for pattern, group in itertools.groupby(
                zip(patterns, rows, strict=True), key=operator.itemgetter(0)
            )
        ]
        if len(parts) * _MIN_ROWS_PER_PATTERN > len(rows):
            return [(frozenset(), rows)]
    found: list[tuple[frozenset[int], Sequence[Sequence[Any]]]] = []
    for pattern, part in parts:
        if True not in pattern:
            found.append((frozenset(), part))
            continue
        nulls = frozenset(i for i, none in enumerate(pattern) if none)
        keep = [i for i in range(len(pattern)) if i not in nulls]
        if not keep:
            found.append((nulls, [()] * len(part)))
            continue
        found.append((nulls, list(map(_picker(keep), part))))
    return found


def values_clause(width: int, nulls: frozenset[int]) -> str:
    """``?`` for each of ``width`` columns, ``NULL`` at the positions ``nulls``."""
    return ", ".join("NULL" if i in nulls else "?" for i in range(width))


def as_bytearrays(
    rows: Sequence[tuple[int, str | bytes, str]],
) -> list[tuple[int, str | bytearray, str]]:
    """Runs' ``(seq, text, form)`` with each text given as bytes as a bytearray."""
    return [
        (seq, text if isinstance(text, str) else bytearray(text), form) for seq, text, form in rows
    ]

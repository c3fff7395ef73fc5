"""Rows as parameters that Python's sqlite3 binds without adapting them first.

Python's sqlite3 binds an int, float, str or bytearray (of exactly those types) at once.
Any other parameter, None among them, first goes through its adapter lookup, which
before Python 3.12 builds and drops an AttributeError on the way (its protocol type has
no ``__adapt__``): a row of five values, two of them None, took 2.26 us bound against
0.94 us with NULL literals and 1.00 us for five integers
(``benchmarks/results/sqlite_params.json``). A run's row holds up to six None values (no commit,
no branch), so an ingest writes NULL as a literal of the statement instead. (A text
given as bytes is adapted too, but making a bytearray of it costs more than the lookup
once texts go in 64 a statement, as they do: texts stay bytes.)
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["in_statements", "values_clause", "without_nulls"]

# More runs of one pattern than one in this many rows: binding the None values costs
# less than an executemany per run.
_MIN_ROWS_PER_PATTERN: Final = 16


def _picker(keep: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    if len(keep) == 1:
        only = keep[0]
        return lambda row: (row[only],)
    return operator.itemgetter(*keep)


def without_nulls(
    rows: Sequence[Sequence[Any]], nullable: Sequence[int] | None = None
) -> list[tuple[frozenset[int], Sequence[Sequence[Any]]]]:
    """The rows in consecutive parts of one pattern of None values, in their order.

    Args:
        rows: Rows of equal length.
        nullable: The only positions where a row may hold None (a run's row: its
            commit, branch, commit time and latencies); every position when None. Only
            these are looked at, so a None elsewhere would be bound as it is.

    Returns:
        For each part, the positions that are None in each of its rows (for the
        statement to write NULL there) and its rows without those values; one part of
        every row with its None values kept when the patterns alternate too often.
    """
    if not rows:
        return []
    width = len(rows[0])
    positions = tuple(range(width)) if nullable is None else tuple(nullable)
    nones = (None,) * len(positions)
    # Each row's pattern over the positions that may hold None, in C (a Python test
    # a value cost more): fewer positions, less work a row.
    looked = rows if len(positions) == width else map(_picker(positions), rows)
    patterns = list(
        map(tuple, map(map, itertools.repeat(operator.is_), looked, itertools.repeat(nones)))
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
        nulls = frozenset(at for at, none in zip(positions, pattern, strict=True) if none)
        keep = [i for i in range(width) if i not in nulls]
        if not keep:
            found.append((nulls, [()] * len(part)))
            continue
        found.append((nulls, list(map(_picker(keep), part))))
    return found


def values_clause(width: int, nulls: frozenset[int]) -> str:
    """``?`` for each of ``width`` columns, ``NULL`` at the positions ``nulls``."""
    return ", ".join("NULL" if i in nulls else "?" for i in range(width))


def in_statements(
    rows: Sequence[Sequence[Any]], per_statement: int
) -> tuple[list[list[Any]], Sequence[Sequence[Any]]]:
    """Rows as the parameters of statements of ``per_statement`` rows each (a multi-row
    ``VALUES``), and the rows left over (fewer than one statement's).

    Each row executed costs sqlite3 and SQLite the same again however few its values
    (the statement's reset and run, its cursors opened, the GIL given up and taken
    back): one statement a few dozen rows pays it once for them all.

    Args:
        rows: Rows of equal length.
        per_statement: Rows a statement.

    Returns:
        Each full statement's parameters (its rows' values one after the other), and
        the rows after the last full statement, as given.
    """
    whole = len(rows) - len(rows) % per_statement
    if not whole or not rows[0]:
        return [], rows
    flat = list(itertools.chain.from_iterable(rows[:whole] if whole < len(rows) else rows))
    step = per_statement * len(rows[0])
    return [flat[at : at + step] for at in range(0, len(flat), step)], rows[whole:]

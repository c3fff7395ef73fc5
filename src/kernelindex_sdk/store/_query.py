"""The runs query: the columns of a RunRow, its joins, and the filters of ``Store.rows``."""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from types import MappingProxyType
from typing import Any, Final

from .._base.arguments import optional_text
from ..errors import ArgumentError
from ._rows import RunRow

__all__ = ["CHUNK", "ROW_COLUMNS", "chunks", "run_rows", "where"]

# Names looked up per statement (SQLite limits a statement's parameters).
CHUNK: Final = 500
#: The run's own columns of a RunRow, in its fields' order, then its labels.
ROW_COLUMNS: Final = (
    "r.name",
    "r.status",
    "r.observed_at",
    "r.workload_digest",
    "r.implementation_digest",
    "r.protocol_digest",
    "r.environment_digest",
    "r.commit_id",
    "r.branch",
    "r.commit_time",
    "r.median_ns",
    "r.p20_ns",
    "r.p80_ns",
    "r.labels",
)
# What runs of one series share, by position in the query's row: the status, the four
# digests, the branch and the labels.
_SHARED_AT: Final = tuple(
    map(
        ROW_COLUMNS.index,
        (
            "r.status",
            "r.workload_digest",
            "r.implementation_digest",
            "r.protocol_digest",
            "r.environment_digest",
            "r.branch",
            "r.labels",
        ),
    )
)
_SHARED: Final = operator.itemgetter(*_SHARED_AT)
# What a RunRow takes from the object tables, by the position of the run's digest in
# what it shares.
_OBJECT_COLUMNS: Final = (
    ("workloads", 1, ("operation", "pass")),
    ("implementations", 2, ("provider", "entry_point")),
    ("environments", 4, ("hardware",)),
)
# RunRow fields named otherwise in the tables (a reserved word, an older spelling).
_FIELD_OF: Final = {"pass": "pass_"}
_COLUMN_OF: Final = {"commit": "commit_id"}
# A row of the query followed by its stretch's tail (what the stretch shares but the
# labels' text, what that gives from the objects, the labels as a mapping), and where a
# RunRow's fields are in it, the shared ones taken from the tail: the runs that share a
# value then hold one str object, not one each, and a history that compares them run by
# run (group_series) reads one string, not every run's copy.
_JOINED: Final = (
    *(column.removeprefix("r.") for column in ROW_COLUMNS),
    *(ROW_COLUMNS[at].removeprefix("r.") for at in _SHARED_AT[:-1]),
    *(_FIELD_OF.get(c, c) for _, _, columns in _OBJECT_COLUMNS for c in columns),
    "labels",
)
_IN_FIELD_ORDER: Final = operator.itemgetter(
    *(
        len(_JOINED) - 1 - _JOINED[::-1].index(_COLUMN_OF.get(field, field))
        for field in RunRow._fields
    )
)
_NEW: Final = tuple.__new__
# Filter argument -> condition. The objects' columns are looked up by digest, not joined
# per run: a join costs each of 10,000 runs three lookups, a third of reading them.
_FILTERS: Final = {
    "operation": "r.workload_digest IN (SELECT digest FROM workloads WHERE operation = ?)",
    "pass_": "r.workload_digest IN (SELECT digest FROM workloads WHERE pass = ?)",
    "provider": "r.implementation_digest IN"
    " (SELECT digest FROM implementations WHERE provider = ?)",
    "hardware": "r.environment_digest IN (SELECT digest FROM environments WHERE hardware = ?)",
    "branch": "r.branch = ?",
    "commit": "r.commit_id = ?",
    "workload_digest": "r.workload_digest = ?",
    "protocol_digest": "r.protocol_digest = ?",
    "status": "r.status = ?",
}


def where(filters: Mapping[str, Any], names: Sequence[str] | None) -> tuple[str, list[Any]]:
    clauses = []
    params: list[Any] = []
    for argument, value in filters.items():
        if argument not in _FILTERS:
            raise ArgumentError(
                argument=argument,
                reason=f"expected one of {', '.join(sorted(_FILTERS))} or names",
            )
        # A list or a number would reach SQL as given: filters are text.
        if optional_text(value, argument) is not None:
            clauses.append(_FILTERS[argument])
            params.append(value)
    if names is not None:
        clauses.append(f"r.name IN ({', '.join('?' * len(names))})")
        params.extend(names)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def chunks(names: Sequence[str] | None) -> Iterator[Sequence[str] | None]:
    if names is None:
        yield None
        return
    for start in range(0, len(names), CHUNK):
        yield names[start : start + CHUNK]


def run_rows(
    result: Sequence[tuple[Any, ...]],
    fetch: Callable[[str, str, Sequence[str], Sequence[str]], dict[str, tuple[Any, ...]]],
) -> list[RunRow]:
    """RunRows from result rows of :data:`ROW_COLUMNS` (labels as JSON text).

    Args:
        result: The query's rows.
        fetch: ``Backend.fetch``: the object tables' columns by digest.
    """
    # Runs of one series share their objects, status, branch and labels, and mostly come
    # together: each stretch of rows that share them is built at once, in C, with one
    # tuple of what they share and take from the objects, and one decoded label mapping.
    stretches = [(key, list(rows)) for key, rows in itertools.groupby(result, _SHARED)]
    keys = dict.fromkeys(key for key, _ in stretches)
    works, implementations, environments = (
        fetch(table, "digest", list({key[at] for key in keys}), columns)
        for table, at, columns in _OBJECT_COLUMNS
    )
    tails: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    # Each value, one object: runs with other labels or branch share their digests too.
    one: dict[Any, Any] = {}
    for key in keys:
        tails[key] = (
            *map(one.setdefault, key[:-1], key[:-1]),
            *works.get(key[1], (None, None)),
            *implementations.get(key[2], (None, None)),
            *environments.get(key[4], (None,)),
            MappingProxyType(json.loads(key[-1])),
        )
    built: list[RunRow] = []
    for key, rows in stretches:
        joined = map(operator.add, rows, repeat(tails[key]))
        built += map(_NEW, repeat(RunRow), map(_IN_FIELD_ORDER, joined))
    return built

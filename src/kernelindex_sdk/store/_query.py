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
# What a RunRow takes from the object tables, by the run's digest (fields 13 to 17).
_OBJECT_COLUMNS: Final = (
    ("workloads", 3, ("operation", "pass")),
    ("implementations", 4, ("provider", "entry_point")),
    ("environments", 6, ("hardware",)),
)
# What runs share with the others of their series, by the object tables' digest columns
# then the labels; a run's own columns; a RunRow from its fields' tuple.
_SHARED: Final = operator.itemgetter(*(at for _, at, _ in _OBJECT_COLUMNS), len(ROW_COLUMNS) - 1)
_OWN: Final = operator.itemgetter(slice(0, len(ROW_COLUMNS) - 1))
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
    # Runs of one series share their objects and mostly their labels, and mostly come
    # together: each stretch of rows that share them is built at once, in C, with one
    # tuple of what they take from the objects and one decoded label mapping.
    stretches = [(key, list(rows)) for key, rows in itertools.groupby(result, _SHARED)]
    keys = dict.fromkeys(key for key, _ in stretches)
    objects = [
        fetch(table, "digest", list({key[i] for key in keys}), columns)
        for i, (table, _, columns) in enumerate(_OBJECT_COLUMNS)
    ]
    works, implementations, environments = objects
    tails: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
    for key in keys:
        tails[key] = (
            *works.get(key[0], (None, None)),
            *implementations.get(key[1], (None, None)),
            *environments.get(key[2], (None,)),
            MappingProxyType(json.loads(key[3])),
        )
    built: list[RunRow] = []
    for key, rows in stretches:
        built += map(_NEW, repeat(RunRow), map(operator.add, map(_OWN, rows), repeat(tails[key])))
    return built

"""The runs query: the columns of a RunRow, its joins, and the filters of ``Store.rows``."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    objects: dict[int, dict[str, tuple[Any, ...]]] = {}
    for table, at, columns in _OBJECT_COLUMNS:
        digests = list(set(map(operator.itemgetter(at), result)))
        objects[at] = fetch(table, "digest", digests, columns)
    works, implementations, environments = objects[3], objects[4], objects[6]
    # Runs of one series share their objects and mostly their labels: what they take
    # from them is one tuple per distinct (objects, labels), and each label mapping is
    # decoded once and shared, read-only.
    tails: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
    new = tuple.__new__
    rows: list[RunRow] = []
    key: tuple[str, str, str, str] = ("", "", "", "")
    tail: tuple[Any, ...] = ()
    for values in result:
        # Neighbours mostly share all four: compared before a new key is hashed.
        if (
            values[3] != key[0]
            or values[4] != key[1]
            or values[6] != key[2]
            or values[13] != key[3]
        ):
            key = (values[3], values[4], values[6], values[13])
            found = tails.get(key)
            if found is None:
                found = tails[key] = (
                    *works.get(key[0], (None, None)),
                    *implementations.get(key[1], (None, None)),
                    *environments.get(key[2], (None,)),
                    MappingProxyType(json.loads(key[3])),
                )
            tail = found
        rows.append(new(RunRow, values[:13] + tail))
    return rows

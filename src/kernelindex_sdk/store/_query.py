"""The runs query: the columns of a RunRow, its joins, and the filters of ``Store.rows``."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from types import MappingProxyType
from typing import Any, Final

from .._base.arguments import optional_text
from ..errors import ArgumentError
from ._layout import GROUP_COLUMNS
from ._rows import RunRow

__all__ = ["CHUNK", "JOINED", "ROW_COLUMNS", "chunks", "run_rows", "where"]

# Names looked up per statement (SQLite limits a statement's parameters).
CHUNK: Final = 500
#: The columns of runs that ``Store.rows`` reads: a run's own, then its group's id.
ROW_COLUMNS: Final = (
    "r.name",
    "r.observed_at",
    "r.commit_id",
    "r.commit_time",
    "r.median_ns",
    "r.p20_ns",
    "r.p80_ns",
    "r.group_id",
)
# What a RunRow takes from the object tables, by its group's digest (at that position
# in GROUP_COLUMNS).
_OBJECT_COLUMNS: Final = (
    ("workloads", GROUP_COLUMNS.index("workload_digest"), ("operation", "pass")),
    ("implementations", GROUP_COLUMNS.index("implementation_digest"), ("provider", "entry_point")),
    ("environments", GROUP_COLUMNS.index("environment_digest"), ("hardware",)),
)
# Column -> RunRow field, where they are named apart.
_FIELD_OF: Final = {"commit_id": "commit", "pass": "pass_"}
#: The values a run's tuple is made of, by name: its own columns (the group's id
#: last), then what its group shares: the group's columns but the labels, the objects'
#: columns, the labels.
JOINED: Final = (
    *(_FIELD_OF.get(c[2:], c[2:]) for c in ROW_COLUMNS),
    *GROUP_COLUMNS[:-1],
    *(_FIELD_OF.get(c, c) for _, _, columns in _OBJECT_COLUMNS for c in columns),
    "labels",
)
# A RunRow's fields from the joined tuple, in C (its fields interleave the two parts).
_ARRANGE: Final = operator.itemgetter(*map(JOINED.index, RunRow._fields))
_NEW: Final = tuple.__new__
# For each RunRow field: (True, the own column) or (False, the place in what a group
# shares), as a stretch of one group's runs is zipped from.
_SOURCES: Final = tuple(
    (True, at) if at < len(ROW_COLUMNS) else (False, at - len(ROW_COLUMNS))
    for at in map(JOINED.index, RunRow._fields)
)
# A stretch of runs of one group at least this long is built column by column.
_STRETCH: Final = 16
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
    fetch: Callable[[str, str, Sequence[Any], Sequence[str]], dict[Any, tuple[Any, ...]]],
    json_value: Callable[[Any], Any],
) -> list[RunRow]:
    """RunRows from result rows of :data:`ROW_COLUMNS`.

    Each group the runs name is read once, with its objects' columns, into one tuple
    of what its runs share (the same objects for each of its runs, its labels one
    read-only mapping); each run's RunRow is its own values and that tuple, put in the
    fields' order, in C.

    Args:
        result: The query's rows.
        fetch: ``Backend.fetch``: a table's columns by key.
        json_value: ``Backend.json_value``: a JSON column's value as Python.
    """
    if not result:
        return []
    # The result's columns (zip's transposition costs a fraction of an itemgetter call
    # per run).
    columns = list(zip(*result, strict=True))
    gids = columns[ROW_COLUMNS.index("r.group_id")]
    groups = fetch("run_groups", "id", list(set(gids)), GROUP_COLUMNS)
    values = groups.values()
    objects = [
        fetch(table, "digest", list({group[at] for group in values}), columns)
        for table, at, columns in _OBJECT_COLUMNS
    ]
    works, implementations, environments = objects
    shared: dict[Any, tuple[Any, ...]] = {}
    for gid, group in groups.items():
        shared[gid] = (
            *group[:-1],
            *works.get(group[_OBJECT_COLUMNS[0][1]], (None, None)),
            *implementations.get(group[_OBJECT_COLUMNS[1][1]], (None, None)),
            *environments.get(group[_OBJECT_COLUMNS[2][1]], (None,)),
            MappingProxyType(json_value(group[-1])),
        )
    stretches = 1 + sum(map(operator.ne, gids, gids[1:]))
    if stretches * _STRETCH > len(result):
        # Groups interleaved (a sweep's series, a run of each at a time): run by run, its
        # own values and its group's joined, then put in the fields' order.
        return list(
            map(
                _NEW,
                repeat(RunRow),
                map(_ARRANGE, map(operator.add, result, map(shared.__getitem__, gids))),
            )
        )
    # Long stretches of one group (a series' runs, ingested together): each stretch
    # zipped from its own columns and its group's values repeated (no 19-item
    # rearrangement of each run's tuple).
    built: list[RunRow] = []
    start = 0
    for gid, stretch in itertools.groupby(gids):
        end = start + len(list(stretch))
        common, size = shared[gid], end - start
        own = columns if size == len(gids) else [column[start:end] for column in columns]
        built += map(
            _NEW,
            repeat(RunRow),
            zip(
                *[own[at] if mine else repeat(common[at], size) for mine, at in _SOURCES],
                strict=True,
            ),
        )
        start = end
    return built

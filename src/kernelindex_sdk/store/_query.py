"""The runs query: the filters of ``Store.rows``, and RunRows from what a backend reads.

A backend reads each run's own columns (:data:`ROW_COLUMNS`), its groups and its
objects' columns; this module checks what it read against the layout (a store edited
by hand can hold a text median, a NULL name, a run whose group row is gone: each is a
one-line :class:`StoreDamagedError`, never a traceback) and builds the RunRows.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from itertools import repeat
from types import MappingProxyType
from typing import Any, Final

from .._base.arguments import optional_text
from ..errors import ArgumentError
from ._backend import Backend, damaged
from ._layout import GROUP_COLUMNS
from ._rows import RunRow

__all__ = ["FILTERS", "JOINED", "ROW_COLUMNS", "check_filters", "run_rows"]

#: The filters of ``Store.rows`` and export: argument name -> what it matches.
FILTERS: Final = {
    "operation": "the workload's operation",
    "pass_": "the workload's pass",
    "provider": "the implementation's provider",
    "hardware": "the environment's hardware.product",
    "branch": "the kernelindex.dev/branch annotation",
    "commit": "the kernelindex.dev/commit annotation",
    "workload_digest": "the run's workload digest",
    "protocol_digest": "the run's protocol digest",
    "status": "the run's status",
}
#: The columns of runs that ``Store.rows`` reads, in this order: a run's own, then its
#: group's id.
ROW_COLUMNS: Final = (
    "r.name",
    "r.observed_at",
    "r.commit_id",
    "r.commit_time",
    "r.median_ns",
    "r.p20_ns",
    "r.p80_ns",
    "r.degraded",
    "r.samples",
    "r.group_id",
)
# What a RunRow takes from the object tables (Backend.object_columns), by its group's
# digest (at that position in GROUP_COLUMNS).
_OBJECT_COLUMNS: Final = (
    ("workloads", GROUP_COLUMNS.index("workload_digest"), ("operation", "pass")),
    ("implementations", GROUP_COLUMNS.index("implementation_digest"), ("provider", "entry_point")),
    ("environments", GROUP_COLUMNS.index("environment_digest"), ("hardware",)),
)
_KIND_OF: Final = {
    "workloads": "workload",
    "implementations": "implementation",
    "environments": "environment",
}
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

# The types the layout allows in each column read (SQLite keeps any value in any column,
# and a hand edit can leave one there): what each holds, as a message says it.
_TEXT: Final = (frozenset({str}), "text")
_TEXT_OR_NULL: Final = (frozenset({str, type(None)}), "text or NULL")
_INTEGER_OR_NULL: Final = (frozenset({int, type(None)}), "an integer or NULL")
_INTEGER: Final = (frozenset({int}), "an integer")
_OWN_TYPES: Final = {
    "r.name": _TEXT,
    "r.observed_at": _TEXT,
    "r.commit_id": _TEXT_OR_NULL,
    "r.commit_time": _TEXT_OR_NULL,
    "r.median_ns": _INTEGER_OR_NULL,
    "r.p20_ns": _INTEGER_OR_NULL,
    "r.p80_ns": _INTEGER_OR_NULL,
    "r.degraded": _TEXT_OR_NULL,
    "r.samples": _INTEGER_OR_NULL,
    "r.group_id": _INTEGER,
}
_GROUP_TYPES: Final = tuple(
    _TEXT_OR_NULL if column == "branch" else _TEXT for column in GROUP_COLUMNS[:-1]
)


def check_filters(filters: Mapping[str, Any]) -> dict[str, str]:
    """The filters given (not None), each checked to be text.

    Raises:
        ArgumentError: for an unknown filter, or a value that is not text (a list or a
            number would reach SQL as given).
    """
    chosen: dict[str, str] = {}
    for argument, value in filters.items():
        if argument not in FILTERS:
            raise ArgumentError(
                argument=argument,
                reason=f"expected one of {', '.join(sorted(FILTERS))} or names",
            )
        if optional_text(value, argument) is not None:
            chosen[argument] = value
    return chosen


def _check_column(
    backend: Backend, column: str, values: Sequence[Any], names: Sequence[Any]
) -> None:
    """Refuse a run column holding a value of a type the layout does not allow.

    Raises:
        StoreDamagedError: naming the first such run and its value.
    """
    allowed, expected = _OWN_TYPES[column]
    # One pass in C over the column's types; the rare damaged one is then found in Python.
    if allowed.issuperset(map(type, values)):
        return
    at = next(i for i, value in enumerate(values) if type(value) not in allowed)
    raise damaged(
        backend.url,
        f"runs.{column[2:]} of run {names[at]!r} is {values[at]!r}, expected {expected}",
    )


def _labels(backend: Backend, gid: int, value: Any) -> Mapping[str, str]:
    """A group's labels, checked: an object of strings (the layout's JSON column)."""
    if isinstance(value, dict) and all(
        type(key) is str and type(item) is str for key, item in value.items()
    ):
        return MappingProxyType(value)
    raise damaged(
        backend.url, f"run_groups.labels of group {gid} is {value!r}, expected an object of text"
    )


def _shared(
    backend: Backend, gids: Sequence[int], names: Sequence[Any]
) -> dict[int, tuple[Any, ...]]:
    """What each group's runs share: its columns but the labels, its objects' columns,
    its labels (one read-only mapping), by id.

    Args:
        backend: The store.
        gids: Each run's group id.
        names: Each run's name (for a message).

    Raises:
        StoreDamagedError: for a group row missing, or a value of the wrong type.
    """
    wanted = set(gids)
    groups = backend.groups(list(wanted))
    for gid in wanted - groups.keys():
        name = names[gids.index(gid)]
        raise damaged(backend.url, f"run {name!r} names run_groups id {gid}, which the store lacks")
    for gid, group in groups.items():
        for column, value, (allowed, expected) in zip(
            GROUP_COLUMNS, group, _GROUP_TYPES, strict=False
        ):
            if type(value) not in allowed:
                raise damaged(
                    backend.url,
                    f"run_groups.{column} of group {gid} is {value!r}, expected {expected}",
                )
    values = groups.values()
    objects = []
    for table, at, columns in _OBJECT_COLUMNS:
        found = backend.object_columns(_KIND_OF[table], list({group[at] for group in values}))
        for digest, row in found.items():
            for column, value in zip(columns, row, strict=True):
                if value is not None and type(value) is not str:
                    raise damaged(
                        backend.url,
                        f"{table}.{column} of {digest!r} is {value!r}, expected text or NULL",
                    )
        objects.append(found)
    works, implementations, environments = objects
    return {
        gid: (
            *group[:-1],
            *works.get(group[_OBJECT_COLUMNS[0][1]], (None, None)),
            *implementations.get(group[_OBJECT_COLUMNS[1][1]], (None, None)),
            *environments.get(group[_OBJECT_COLUMNS[2][1]], (None,)),
            _labels(backend, gid, group[-1]),
        )
        for gid, group in groups.items()
    }


def run_rows(backend: Backend, result: Sequence[tuple[Any, ...]]) -> list[RunRow]:
    """RunRows from rows of :data:`ROW_COLUMNS`, each run's group and objects read once.

    Each group the runs name is read once, with its objects' columns, into one tuple
    of what its runs share (the same objects for each of its runs, its labels one
    read-only mapping); each run's RunRow is its own values and that tuple, put in the
    fields' order, in C.

    Args:
        backend: The store, inside one reading snapshot.
        result: The runs' own columns, as :meth:`Backend.run_columns` gives them.

    Raises:
        StoreDamagedError: for a value of a type the layout does not allow, a group row
            missing, or labels that are not an object of text.
    """
    if not result:
        return []
    # The result's columns (zip's transposition costs a fraction of an itemgetter call
    # per run).
    columns = list(zip(*result, strict=True))
    names = columns[0]
    for column, values in zip(ROW_COLUMNS, columns, strict=True):
        _check_column(backend, column, values, names)
    gids = columns[ROW_COLUMNS.index("r.group_id")]
    shared = _shared(backend, gids, names)
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
    # zipped from its own columns and its group's values repeated (no rearrangement of
    # each run's tuple).
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

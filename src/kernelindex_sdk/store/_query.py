"""The runs query: the columns of a RunRow, its joins, and the filters of ``Store.rows``.

A history reads every run of a series, and the runs of a series mostly share their
status, digests, branch and labels: each row of the query carries its own columns and,
instead of the shared ones, the ``seq`` of a run that has the same (a reference run of
the query's own filters when it has them all, else itself). The shared columns are then
read once per such run. Python's sqlite3 pays for each column of each row it returns
(a text column of 10,000 rows cost as much as building 10,000 strings), so a series read
this way costs about half of one read with every column per run.
"""

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

__all__ = ["CHUNK", "ROW_COLUMNS", "SHARED_COLUMNS", "chunks", "run_rows", "where"]

# Names looked up per statement (SQLite limits a statement's parameters).
CHUNK: Final = 500
# A run's own columns, as the query gives them, and their RunRow fields.
_OWN: Final = (
    ("r.name", "name"),
    ("r.observed_at", "observed_at"),
    ("r.commit_id", "commit"),
    ("r.commit_time", "commit_time"),
    ("r.median_ns", "median_ns"),
    ("r.p20_ns", "p20_ns"),
    ("r.p80_ns", "p80_ns"),
)
#: What a run mostly shares with the others of its series: its columns in the runs table
#: (the labels as JSON text in both dialects) and their RunRow fields.
SHARED_COLUMNS: Final = (
    ("status", "status"),
    ("workload_digest", "workload_digest"),
    ("implementation_digest", "implementation_digest"),
    ("protocol_digest", "protocol_digest"),
    ("environment_digest", "environment_digest"),
    ("branch", "branch"),
    ("CAST(labels AS TEXT)", "labels"),
)
# Whether run r shares every shared column with the reference run (branch may be NULL).
_SAME: Final = (
    " AND ".join(
        f"r.{column} = ref.{column}"
        if column != "branch"
        else "(r.branch = ref.branch OR (r.branch IS NULL AND ref.branch IS NULL))"
        for column, _ in SHARED_COLUMNS[:-1]
    )
    + " AND CAST(r.labels AS TEXT) = ref.labels"
)
#: The columns of the runs query: a run's own, then the ``seq`` of the run whose shared
#: columns it has. ``ref`` is the reference run that :func:`where` joins.
ROW_COLUMNS: Final = (
    *(column for column, _ in _OWN),
    f"CASE WHEN {_SAME} THEN ref.seq ELSE r.seq END",
)
# The reference run: the first the query's filters select (any one is right; one of the
# series that most of a one-series history's runs are is best).
_REFERENCE: Final = (
    "SELECT r.seq, "  # noqa: S608 (the columns are constants)
    + ", ".join(f"r.{column}" for column, _ in SHARED_COLUMNS[:-1])
    + ", CAST(r.labels AS TEXT) AS labels FROM runs r"
)
_SHARED_AT: Final = [field for _, field in SHARED_COLUMNS].index
# What a RunRow takes from the object tables, by the position of the run's digest among
# the shared columns.
_OBJECT_COLUMNS: Final = (
    ("workloads", _SHARED_AT("workload_digest"), ("operation", "pass")),
    ("implementations", _SHARED_AT("implementation_digest"), ("provider", "entry_point")),
    ("environments", _SHARED_AT("environment_digest"), ("hardware",)),
)
_WORKLOAD, _IMPLEMENTATION, _ENVIRONMENT = (at for _, at, _ in _OBJECT_COLUMNS)
_FIELD_OF: Final = {"pass": "pass_"}
# A row of the query followed by what it takes from its shared run (the shared columns
# but the labels, the object tables' columns, the labels as a mapping), and the
# positions of a RunRow's fields in it: a RunRow is built from both, in C.
_JOINED: Final = (
    *(field for _, field in _OWN),
    "shared_seq",
    *(field for _, field in SHARED_COLUMNS[:-1]),
    *(_FIELD_OF.get(c, c) for _, _, columns in _OBJECT_COLUMNS for c in columns),
    "labels",
)
_IN_FIELD_ORDER: Final = operator.itemgetter(*map(_JOINED.index, RunRow._fields))
_SHARED_SEQ: Final = operator.itemgetter(_JOINED.index("shared_seq"))
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
    """What follows ``FROM runs r`` in a runs query, and its parameters: the reference
    run that :data:`ROW_COLUMNS` compares with joined as ``ref``, then the conditions.

    Args:
        filters: ``Store.rows``' filters by argument name (None: not filtered).
        names: Only runs of these names (None: any).

    Raises:
        ArgumentError: for an unknown filter or one that is not text.
    """
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
    condition = " WHERE " + " AND ".join(clauses) if clauses else ""
    # The reference run is chosen by the same conditions, so a history of one series in
    # a store of many still reads its shared columns once.
    return f", ({_REFERENCE}{condition} LIMIT 1) AS ref{condition}", params * 2


def chunks(names: Sequence[str] | None) -> Iterator[Sequence[str] | None]:
    if names is None:
        yield None
        return
    for start in range(0, len(names), CHUNK):
        yield names[start : start + CHUNK]


Fetch = Callable[[str, str, Sequence[Any], Sequence[str]], dict[Any, tuple[Any, ...]]]


def run_rows(result: Sequence[tuple[Any, ...]], fetch: Fetch) -> list[RunRow]:
    """RunRows from result rows of :data:`ROW_COLUMNS`.

    Args:
        result: The query's rows.
        fetch: ``Backend.fetch``: a table's columns by a key column.
    """
    # The runs that share a run's columns mostly come together: each stretch of rows that
    # name the same shared run is built at once, in C, with one tuple of what they take
    # from it and from the objects, and one decoded label mapping.
    stretches = [(seq, list(rows)) for seq, rows in itertools.groupby(result, _SHARED_SEQ)]
    seqs = list(dict.fromkeys(seq for seq, _ in stretches))
    shared = fetch("runs", "seq", seqs, [column for column, _ in SHARED_COLUMNS])
    # Runs of several series name several runs, whose columns are mostly alike.
    distinct = dict.fromkeys(shared.values())
    works, implementations, environments = (
        fetch(table, "digest", list({values[at] for values in distinct}), columns)
        for table, at, columns in _OBJECT_COLUMNS
    )
    for values in distinct:
        distinct[values] = (
            *values[:-1],
            *works.get(values[_WORKLOAD], (None, None)),
            *implementations.get(values[_IMPLEMENTATION], (None, None)),
            *environments.get(values[_ENVIRONMENT], (None,)),
            MappingProxyType(json.loads(values[-1])),
        )
    built: list[RunRow] = []
    for seq, rows in stretches:
        tail = distinct[shared[seq]]
        built += map(
            _NEW, repeat(RunRow), map(_IN_FIELD_ORDER, map(operator.add, rows, repeat(tail)))
        )
    return built

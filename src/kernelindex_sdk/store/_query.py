"""The runs query: the columns of a RunRow, its joins, and the filters of ``Store.rows``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from .._base.arguments import optional_text
from ..errors import ArgumentError
from ._rows import RunRow

__all__ = ["CHUNK", "JOINS", "ROW_COLUMNS", "chunks", "run_row", "where"]

# Names looked up per statement (SQLite limits a statement's parameters).
CHUNK: Final = 500
ROW_COLUMNS: Final = (
    "r.name",
    "r.status",
    "r.observed_at",
    "r.commit_id",
    "r.branch",
    "r.commit_time",
    "r.median_ns",
    "r.p20_ns",
    "r.p80_ns",
    "r.workload_digest",
    "r.implementation_digest",
    "r.protocol_digest",
    "r.environment_digest",
    "w.operation",
    "w.pass",
    "i.provider",
    "i.entry_point",
    "e.hardware",
    "r.labels",
)
JOINS: Final = (
    " FROM runs r"
    " LEFT JOIN workloads w ON w.digest = r.workload_digest"
    " LEFT JOIN implementations i ON i.digest = r.implementation_digest"
    " LEFT JOIN environments e ON e.digest = r.environment_digest"
)
# Filter argument -> column.
_FILTERS: Final = {
    "operation": "w.operation",
    "pass_": "w.pass",
    "provider": "i.provider",
    "hardware": "e.hardware",
    "branch": "r.branch",
    "commit": "r.commit_id",
    "workload_digest": "r.workload_digest",
    "protocol_digest": "r.protocol_digest",
    "status": "r.status",
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
            clauses.append(f"{_FILTERS[argument]} = ?")
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


def run_row(
    values: Sequence[Any], labels_seen: dict[str, Mapping[str, str]] | None = None
) -> RunRow:
    """A RunRow from the values of :data:`ROW_COLUMNS`.

    Args:
        values: One result row.
        labels_seen: Labels already decoded, by their stored text: runs of one series
            mostly carry the same labels, and decoding them once per query is a fifth of
            reading 10,000 rows. The rows then share one read-only mapping.
    """
    labels = values[18]
    if isinstance(labels, str):
        if labels_seen is None:
            labels = json.loads(labels)
        else:
            decoded = labels_seen.get(labels)
            if decoded is None:
                decoded = labels_seen[labels] = MappingProxyType(json.loads(labels))
            labels = decoded
    return RunRow(
        name=values[0],
        status=values[1],
        observed_at=values[2],
        commit=values[3],
        branch=values[4],
        commit_time=values[5],
        median_ns=values[6],
        p20_ns=values[7],
        p80_ns=values[8],
        workload_digest=values[9],
        implementation_digest=values[10],
        protocol_digest=values[11],
        environment_digest=values[12],
        operation=values[13],
        pass_=values[14],
        provider=values[15],
        entry_point=values[16],
        hardware=values[17],
        labels=labels,
    )

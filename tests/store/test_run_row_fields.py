"""RunRow is built positionally from the runs query (``tuple.__new__``), not by keyword:
each of its fields must be read from the column that holds it, or every row is silently
shifted."""

from __future__ import annotations

import attrs
import pytest

from kernelindex_sdk.store import RunRow
from kernelindex_sdk.store._query import (
    _IN_FIELD_ORDER,
    _JOINED,
    _OBJECT_COLUMNS,
    _OWN,
    ROW_COLUMNS,
    SHARED_COLUMNS,
)

# Columns whose RunRow field has another name (a reserved word, an older spelling).
_FIELD_OF = {"commit_id": "commit", "pass": "pass_"}


def _field(column: str) -> str:
    # The labels are read as text in both dialects: CAST(labels AS TEXT).
    bare = column.removeprefix("CAST(").removesuffix(" AS TEXT)").rpartition(".")[2]
    return _FIELD_OF.get(bare, bare)


def test_each_own_and_shared_column_names_its_field() -> None:
    for column, field in (*_OWN, *SHARED_COLUMNS):
        assert _field(column) == field
    assert ROW_COLUMNS[: len(_OWN)] == tuple(column for column, _ in _OWN)


def test_every_field_is_read_once_from_the_joined_row() -> None:
    joined = [*_JOINED]
    joined.remove("shared_seq")
    assert sorted(joined) == sorted(RunRow._fields)
    marked = tuple(f"<{name}>" for name in _JOINED)
    assert _IN_FIELD_ORDER(marked) == tuple(f"<{name}>" for name in RunRow._fields)


def test_each_object_table_is_looked_up_by_its_digest_field() -> None:
    digest_of = {
        "workloads": "workload_digest",
        "implementations": "implementation_digest",
        "environments": "environment_digest",
    }
    for table, at, columns in _OBJECT_COLUMNS:
        assert SHARED_COLUMNS[at][1] == digest_of[table]
        assert all(_FIELD_OF.get(c, c) in RunRow._fields for c in columns)


def test_a_row_is_a_plain_tuple_to_compare_and_not_an_attrs_class() -> None:
    row = RunRow(
        name="r",
        status="passed",
        observed_at="2026-01-01T00:00:00Z",
        workload_digest="w",
        implementation_digest="i",
        protocol_digest="p",
        environment_digest="e",
    )
    assert row == tuple(row)
    assert row == ("r", "passed", "2026-01-01T00:00:00Z", "w", "i", "p", "e", *[None] * 11, {})
    assert not attrs.has(RunRow)
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.evolve(row, name="s")
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.asdict(row)
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.fields(RunRow)
    assert row._replace(name="s").name == "s"

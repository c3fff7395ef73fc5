"""RunRow is built positionally from the runs query (``tuple.__new__``), not by keyword:
its fields' order must be the query's columns' order, or every row is silently shifted."""

from __future__ import annotations

import attrs
import pytest

from kernelindex_sdk.store import RunRow
from kernelindex_sdk.store._query import _OBJECT_COLUMNS, ROW_COLUMNS

# Columns whose RunRow field has another name (a reserved word, an older spelling).
_FIELD_OF = {"commit_id": "commit", "pass": "pass_"}


def _field(column: str) -> str:
    bare = column.rpartition(".")[2]
    return _FIELD_OF.get(bare, bare)


def test_the_runs_columns_are_the_first_fields_in_order() -> None:
    own = ROW_COLUMNS[:-1]
    assert len(own) == 13
    assert RunRow._fields[:13] == tuple(map(_field, own))


def test_the_object_columns_then_the_labels_are_the_rest_in_order() -> None:
    tail = [_field(column) for _, _, columns in _OBJECT_COLUMNS for column in columns]
    assert RunRow._fields[13:] == (*tail, "labels")
    assert ROW_COLUMNS[-1] == "r.labels"


def test_each_object_table_is_looked_up_by_its_digest_field() -> None:
    digest_of = {
        "workloads": "workload_digest",
        "implementations": "implementation_digest",
        "environments": "environment_digest",
    }
    for table, at, _ in _OBJECT_COLUMNS:
        assert RunRow._fields[at] == digest_of[table]


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

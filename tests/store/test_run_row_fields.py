"""RunRow is built positionally from the runs query and its group (``tuple.__new__``), not
by keyword: its fields must each come from the value of that name, or every row is
silently shifted."""

from __future__ import annotations

import attrs
import pytest

from kernelindex_sdk.store import RunRow
from kernelindex_sdk.store._layout import GROUP_COLUMNS
from kernelindex_sdk.store._query import _ARRANGE, _OBJECT_COLUMNS, JOINED, ROW_COLUMNS


def test_the_joined_values_hold_every_field_once() -> None:
    assert sorted(set(JOINED) - {"group_id"}) == sorted(RunRow._fields)
    assert len(JOINED) == len(RunRow._fields) + 1


def test_arranging_the_joined_values_gives_each_field_its_own() -> None:
    joined = tuple(f"<{name}>" for name in JOINED)
    assert _ARRANGE(joined) == tuple(f"<{name}>" for name in RunRow._fields)


def test_the_runs_own_columns_come_first_and_the_group_id_last() -> None:
    assert ROW_COLUMNS[-1] == "r.group_id"
    assert JOINED[: len(ROW_COLUMNS)] == (
        "name",
        "observed_at",
        "commit",
        "commit_time",
        "median_ns",
        "p20_ns",
        "p80_ns",
        "degraded",
        "samples",
        "group_id",
    )
    assert JOINED[len(ROW_COLUMNS) : len(ROW_COLUMNS) + 6] == GROUP_COLUMNS[:-1]
    assert GROUP_COLUMNS[-1] == "labels" == JOINED[-1]


def test_each_object_table_is_looked_up_by_its_groups_digest() -> None:
    digest_of = {
        "workloads": "workload_digest",
        "implementations": "implementation_digest",
        "environments": "environment_digest",
    }
    for table, at, _ in _OBJECT_COLUMNS:
        assert GROUP_COLUMNS[at] == digest_of[table]


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
    assert row == (
        "r",
        "passed",
        "2026-01-01T00:00:00Z",
        "w",
        "i",
        "p",
        "e",
        *[None] * 11,
        {},
        None,
        None,
    )
    assert not attrs.has(RunRow)
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.evolve(row, name="s")
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.asdict(row)
    with pytest.raises(attrs.exceptions.NotAnAttrsClassError):
        attrs.fields(RunRow)
    assert row._replace(name="s").name == "s"


def test_ingest_reads_a_runs_group_as_one_slice_of_its_row() -> None:
    from kernelindex_sdk.store._extract import RUN_COLUMNS
    from kernelindex_sdk.store._ingest import _GROUP_OF

    assert _GROUP_OF(RUN_COLUMNS) == GROUP_COLUMNS

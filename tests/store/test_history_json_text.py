"""The JSON text of a history is ``json.dumps`` of its value form, byte for byte.

The text is written column by column (store._history_json): a column of str none of which
json escapes is written as it is between quotes, ints as their digits, finite floats as
their repr. These tests hold every path to json's own output, hostile values included.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex_sdk.store import RunRow
from kernelindex_sdk.store._history_json import _ESCAPED, number_text
from kernelindex_sdk.store.history import history, history_as_json, render_history

# The dashboard tests' synthetic runs (hostile names and labels among them).
_SPEC = importlib.util.spec_from_file_location(
    "_site_fake", Path(__file__).parent.parent / "site" / "_fake.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
_fake = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_fake)

# Characters json escapes, some it writes as they are (non-ASCII, DEL, a surrogate).
_CHARS = list('ab-:"\\/ \x00\x1f\x7f\té😀\u2028\ud800')
_TEXT = st.text(alphabet=st.sampled_from(_CHARS), max_size=5)
_NUMBER = st.one_of(
    st.none(),
    st.integers(min_value=1, max_value=10**20),
    st.floats(min_value=1e-3, max_value=1e12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)


def _expected(found: Any) -> str:
    return json.dumps(history_as_json(found), ensure_ascii=False) + "\n"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_finite_floats_json_text_is_its_repr(value: float) -> None:
    assert json.dumps(value) == repr(value) == number_text(value)


@given(st.integers())
def test_an_ints_json_text_is_its_digits(value: int) -> None:
    assert json.dumps(value) == f"{value}" == number_text(value)


def test_other_numbers_are_written_as_json_writes_them() -> None:
    for value in (math.nan, math.inf, -math.inf, True, False, None, -0.0, 5e-324):
        assert number_text(value) == json.dumps(value)


def test_the_escaped_characters_are_the_ones_json_escapes() -> None:
    """Every character below U+0800 (and a surrogate) is escaped by json exactly when it
    is one of _ESCAPED."""
    for code in [*range(0x800), 0xD800]:
        char = chr(code)
        written = json.encoder.encode_basestring(char)  # type: ignore[attr-defined]
        assert (written != f'"{char}"') == (char in _ESCAPED), repr(char)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            _TEXT, st.one_of(st.none(), _TEXT), st.one_of(st.none(), _TEXT), _NUMBER, _NUMBER
        ),
        min_size=1,
        max_size=9,
    ),
    st.integers(min_value=100, max_value=10**9),
    st.booleans(),
)
def test_points_text_is_json_dumps_of_the_points(
    drawn: list[tuple[str, str | None, str | None, Any, Any]], median: int, timed: bool
) -> None:
    rows = [
        RunRow(
            name=f"r{i}{name}",
            status="passed",
            observed_at=f"2026-01-01T00:00:{i:02d}.000Z",
            commit_time=f"2026-01-02T00:00:{i:02d}.000Z" if timed else None,
            workload_digest="w",
            implementation_digest="i",
            protocol_digest="p",
            environment_digest="e",
            commit=commit,
            branch=branch,
            median_ns=median + i,
            p20_ns=p20,
            p80_ns=p80,
        )
        for i, (name, commit, branch, p20, p80) in enumerate(drawn)
    ]
    found = history(rows)
    assert render_history(found, "json") == _expected(found)


def test_hostile_synthetic_histories_are_json_dumps_byte_for_byte() -> None:
    for hostile in (False, True):
        source = _fake.synthetic(hostile=hostile)
        found = history(source.rows(), spec=source.spec)
        assert render_history(found, "json") == _expected(found)


def test_a_long_series_of_plain_points_is_json_dumps_byte_for_byte() -> None:
    rows = [
        RunRow(
            name=f"run-{i:05d}",
            status="passed",
            observed_at=f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            workload_digest="w",
            implementation_digest="i",
            protocol_digest="p",
            environment_digest="e",
            commit=f"{i:040x}",
            branch="main",
            median_ns=300_000 + i % 7,
            p20_ns=299_000,
            p80_ns=301_000,
        )
        for i in range(2_000)
    ]
    found = history(rows)
    assert render_history(found, "json") == _expected(found)

"""Where a pointer's value or key starts in a text: found by reading only the way to it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk._json import places as _places
from kernelindex_sdk._json.text import escape_token
from kernelindex_sdk.errors import Problem


def _pointers(value: Any, at: str = "") -> list[tuple[str, Any]]:
    """Every pointer of a value, with the value there."""
    found = [(at, value)]
    if isinstance(value, dict):
        for key, member in value.items():
            found += _pointers(member, f"{at}/{escape_token(key)}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _pointers(item, f"{at}/{index}")
    return found


def _index(text: str, line: int, column: int) -> int:
    """The index in ``text`` of a 1-based line and column."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[line - 1] + column - 1


_KEYS = st.sampled_from(["a", "b/c", "~0", "~1/", "é", "", "a\nb", '"', "\\", "kernelindex.dev/x"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_VALUES, indent=st.sampled_from([None, 2, "\t"]), ascii_only=st.booleans())
def test_each_pointer_is_placed_at_its_value_and_key(
    value: Any, indent: int | str | None, ascii_only: bool
) -> None:
    """Read at the place found, the text is the pointer's value; a member's key place is
    where its key is written."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    pointers = _pointers(value)
    found = _places.places(text, [p for p, _ in pointers])
    assert set(found) == {p for p, _ in pointers}
    decoder = json.JSONDecoder()
    for pointer, expected in pointers:
        line, column, key = found[pointer]
        start = _index(text, line, column)
        read, _ = decoder.raw_decode(text, start)
        assert read == expected, pointer
        if key is not None:
            name, _ = decoder.raw_decode(text, key)
            assert escape_token(name) == pointer.rsplit("/", 1)[1]


def test_a_repeated_key_is_placed_at_its_last_member() -> None:
    text = '{"a": 1,\n "a": 2, "b": {"c": 3, "c": 4}}'
    found = _places.places(text, ["/a", "/b/c"])
    second = text.split("\n")[1]
    assert found["/a"][:2] == (2, second.index("2") + 1)
    assert found["/b/c"][:2] == (2, second.index("4") + 1)


def test_a_pointer_the_text_lacks_is_left_out() -> None:
    text = '{"a": [1, 2], "b": {}}'
    assert _places.places(text, ["/a/2", "/c", "/b/x", "a", "/a/-"]) == {}


def test_the_places_of_a_large_line_are_found_without_a_map_of_it() -> None:
    """A 70,000-item array: its first items are placed, and its last, with the items
    between passed over by the scanner (no source map of every pointer is built)."""
    items = [{"unit": "xx", "value": i} for i in range(70_000)]
    text = json.dumps({"m": items, "z": 1}, separators=(",", ":"))
    wanted = [f"/m/{i}/unit" for i in range(100)] + ["/m/69999/value", "/z"]
    found = _places.places(text, wanted)
    assert set(found) == set(wanted)
    at = _index(text, *found["/m/69999/value"][:2])
    assert text[at : at + 6] == "69999}"
    assert found["/z"][:2] == (1, len(text) - 1)


@pytest.mark.parametrize(
    ("code", "at"),
    [("duplicate-key", '"kernel'), ("additionalProperties", '"kernel'), ("type", "2")],
)
def test_a_key_problem_is_placed_at_its_key(code: str, at: str) -> None:
    """A key holding ``/`` is found by its pointer (``~1``)."""
    text = '{"run": {"a": 1, "kernelindex.dev/x": 2}}'
    problem = Problem(pointer="/run/kernelindex.dev~1x", message="m", code=code)
    (placed,) = _places.located([problem], text)
    assert (placed.line, placed.column) == (1, text.index(at) + 1)


def test_a_problem_already_placed_keeps_its_place() -> None:
    problem = Problem(pointer="/a", message="m", code="type", line=5, column=6)
    assert list(_places.located([problem], '{"a": 1}')) == [problem]


def test_text_json_cannot_read_keeps_the_places_found_before_it() -> None:
    text = '{"a": 1, "b": [1, 2'
    assert _places.places(text, ["/a", "/b/5"]) == {"/a": (1, 7, 1)}

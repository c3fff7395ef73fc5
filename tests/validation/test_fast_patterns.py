"""jsonschema-rs's patterns on the fast path: the end anchor's lookahead dropped, same verdicts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex_sdk._base.schemas import load_schemas
from kernelindex_sdk.validation._fast import patterns


def _patterns(node: Any) -> Iterator[str]:
    if isinstance(node, list):
        for v in node:
            yield from _patterns(v)
    elif isinstance(node, dict):
        for k, v in node.items():
            if k == "pattern" and isinstance(v, str):
                yield v
            else:
                yield from _patterns(v)


PATTERNS = sorted({p for schema in load_schemas().values() for p in _patterns(schema)})


def test_every_shipped_pattern_loses_its_lookahead() -> None:
    """The patterns end "$(?!\\n)" for Python's re; jsonschema-rs gets them without."""
    assert len(PATTERNS) >= 5
    for pattern in PATTERNS:
        assert pattern.endswith("$(?!\\n)")
        assert patterns.end_only(pattern) == pattern[: -len("(?!\\n)")]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("^a$(?!\\n)", "^a$"),
        # An escaped dollar is a character: the lookahead stays.
        ("^a\\$(?!\\n)", "^a\\$(?!\\n)"),
        ("^a\\\\$(?!\\n)", "^a\\\\$"),
        # An inline flag could make "$" match before a newline: left as it is.
        ("(?m)^a$(?!\\n)", "(?m)^a$(?!\\n)"),
        ("^a$", "^a$"),
        ("^(?!0000)[0-9]{4}$(?!\\n)", "^(?!0000)[0-9]{4}$"),
    ],
)
def test_only_an_end_anchor_loses_its_lookahead(pattern: str, expected: str) -> None:
    assert patterns.end_only(pattern) == expected


def _validator(pattern: str) -> Any:
    return jsonschema_rs.validator_for({"type": "string", "pattern": pattern})


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_jsonschema_rs_gives_the_same_verdicts(pattern: str, data: st.DataObject) -> None:
    matching = st.from_regex(pattern, fullmatch=False)
    text = data.draw(
        st.one_of(
            matching,
            matching.map(lambda s: s + "\n"),
            matching.map(lambda s: s + "\n\n"),
            matching.map(lambda s: "\n" + s),
            st.text(max_size=20),
        )
    )
    original, fast = _validator(pattern), _validator(patterns.end_only(pattern))
    assert original.is_valid(text) == fast.is_valid(text)


def test_a_trailing_newline_is_refused_by_both() -> None:
    name = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$(?!\\n)"
    for pattern in (name, patterns.end_only(name)):
        assert _validator(pattern).is_valid("liger")
        assert not _validator(pattern).is_valid("liger\n")

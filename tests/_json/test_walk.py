"""The one walk behind validation's scan_value and the writers' check_json_value."""

from __future__ import annotations

import enum
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex_sdk import digest
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk._json import value as _jsonvalue
from kernelindex_sdk._json import walk as _jsonwalk
from kernelindex_sdk.errors import CanonicalizationError

EXACT = _jsonwalk.Rules(exact=True)
LOOSE = _jsonwalk.Rules(exact=False, int_bits=14_000, int_limit=2**53 - 1)


class Name(str, enum.Enum):
    A = "a"


_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=4)
    | st.just(Name.A)
    | st.just(b"x"),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(
            st.text(alphabet=st.characters(exclude_categories=()), max_size=3) | st.integers(),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(value=_ANY, loose=st.booleans())
def test_the_quick_pass_answers_only_what_the_walk_confirms(value: Any, loose: bool) -> None:
    """A plain verdict means the walk finds nothing, and sees the same floats and keys."""
    rules = LOOSE if loose else EXACT
    found = _jsonwalk.quick(value, rules, 1_000)
    walk = _jsonwalk.Walk(rules)
    findings = list(walk.findings(value))
    if found.plain:
        assert findings == []
        assert (found.floats, found.integral, found.beyond_bmp) == (
            walk.floats,
            walk.integral,
            walk.beyond_bmp,
        )
    elif found.plain is False and rules.exact:
        # Only the exact JSON types pass the quick pass; validation finds the rest.
        assert findings


def test_exact_rules_refuse_what_the_loose_ones_take() -> None:
    value = {"a": (1, 2), "b": Name.A}
    found = [f.what for f in _jsonwalk.Walk(EXACT).findings(value)]
    assert found == ["type", "type"]
    assert list(_jsonwalk.Walk(LOOSE).findings(value)) == []


def test_findings_come_in_document_order_with_their_paths() -> None:
    value = {"a": [1, math.nan], "b": {"c\ud800": "x", 3: 4}, "d": "\udfff"}
    findings = list(_jsonwalk.Walk(EXACT).findings(value))
    assert [(f.what, _jsonwalk.path_tokens(f.path)) for f in findings] == [
        ("non-finite", ["a", 1]),
        ("key-surrogate", ["b", "c\ud800"]),
        ("key-type", ["b"]),
        ("surrogate", ["d"]),
    ]


def _shared(levels: int) -> Any:
    value: Any = [1.5]
    for _ in range(levels):
        value = [value, value]
    return value


def test_a_value_shared_at_every_level_is_walked_once_per_container() -> None:
    """2^60 paths, 61 containers: the walk sees each container once."""
    value = _shared(60)
    walk = _jsonwalk.Walk(LOOSE)
    assert list(walk.findings(value)) == []
    assert walk.floats
    # The writers' check, whose quick pass gives up on the expansion, is linear too.
    assert _jsonvalue.check_json_value(value) is True


def test_validation_still_refuses_a_value_too_large_to_expand() -> None:
    [problem] = _jsontext.scan_value(_shared(60)).problems
    assert "too large to check" in problem.message


def test_a_shared_container_reached_too_deep_is_reported() -> None:
    leaf: Any = {"x": 1}
    chain: Any = leaf
    for _ in range(_jsonwalk.MAX_DEPTH - 1):
        chain = [chain]
    value = {"a": leaf, "b": chain}
    # Walked once at depth 1, the object is met again at the limit: still too deep there.
    findings = list(_jsonwalk.Walk(EXACT).findings(value))
    assert [f.what for f in findings] == ["deep"]
    assert _jsonwalk.path_tokens(findings[0].path) == ["b", *[0] * (_jsonwalk.MAX_DEPTH - 1)]
    assert _jsonwalk.quick(value, EXACT, 1_000).plain is False


def _nested_by_sharing(levels: int) -> Any:
    """Each level holds the one below directly and under a chain of 100 lists: the same
    containers met again deeper and deeper, about 100 * levels deep in all."""
    value: Any = 0
    for _ in range(levels):
        chain = value
        for _ in range(100):
            chain = [chain]
        value = [value, chain]
    return value


def test_a_shared_subtree_met_again_deeper_is_walked_again() -> None:
    """Walked first near the top, a container's subtree fits; met deeper, it no longer does."""
    value = _nested_by_sharing(20)
    assert "deep" in {f.what for f in _jsonwalk.Walk(EXACT).findings(value)}
    with pytest.raises(CanonicalizationError, match="nested deeper than 128 levels"):
        _jsonvalue.check_json_value(value)
    with pytest.raises(CanonicalizationError, match="nested deeper than 128 levels"):
        digest.digest("Workload", {"operation": "x", "pass": "forward", "parameters": {"v": value}})
    problems = _jsontext.scan_value(value).problems
    assert problems
    assert all(p.message == "nested deeper than 128 levels" for p in problems)


def test_the_writers_raise_the_first_problem_in_document_order() -> None:
    with pytest.raises(CanonicalizationError) as caught:
        _jsonvalue.check_json_value({"a": math.inf, "b": math.nan})
    assert caught.value.pointer == "/a"
    assert caught.value.reason == "inf is not a JSON number"


@pytest.mark.parametrize(
    ("value", "pointer", "message"),
    [
        ({"k\ud800": 1}, "/k\ud800", "key holds a lone surrogate U+D800 at index 1"),
        ({"a": ["\udc00x"]}, "/a/0", "string holds a lone surrogate U+DC00 at index 0"),
        ({1: 2}, "", "expected string keys, got int 1"),
        ({"a/b": Name.A}, "/a~1b", "expected a JSON value, got Name"),
    ],
)
def test_validation_words_each_finding(value: Any, pointer: str, message: str) -> None:
    [problem] = _jsontext.scan_value(value).problems
    assert problem.pointer == pointer
    assert message in problem.message
    assert problem.code == "json-value"

"""The C-speed reading of plain text gives the strict parser's answer, or none.

``parse_document`` asks ``quick_parse.quick_value`` first; every test here holds it to
what the strict parser alone (the quick reading turned off) gives for the same text:
the same value (types and key order included), the same problems with the same messages
and places, and the same note of integral floats, so every verdict that follows is the
same.
"""

from __future__ import annotations

import json
import marshal
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import validation
from kernelindex_sdk._json import quick_parse
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk._json.published import published_text
from kernelindex_sdk._json.walk import MAX_DEPTH


def strict(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> _jsontext.Parsed:
    """What ``parse_document`` gives without the quick reading."""
    with monkeypatch.context() as patch:
        patch.setattr(_jsontext, "quick_value", lambda _: quick_parse.UNPROVEN)
        return _jsontext.parse_document(data)


def same_parse(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Assert both ways of parsing agree; return whether the quick reading vouched."""
    expected = strict(data, monkeypatch)
    found = _jsontext.parse_document(data)
    assert found.problems == expected.problems, data
    assert found.text == expected.text
    assert found.scan == expected.scan
    assert marshal.dumps(found.value, 0) == marshal.dumps(expected.value, 0), data
    quick = quick_parse.quick_value(data)
    if quick is quick_parse.UNPROVEN:
        return False
    # What it vouches for, the strict parser passes with the same value and no float to note.
    assert not expected.problems, data
    assert expected.scan is not None
    assert not expected.scan.integral_float, data
    assert marshal.dumps(quick, 0) == marshal.dumps(expected.value, 0), data
    assert list(validation.iter_parsed_problems(found)) == list(
        validation.iter_parsed_problems(expected)
    )
    return True


DEEP = MAX_DEPTH + 1
HOSTILE = [
    # Repeated keys at every depth, spaced or not, with colons and quotes in the dropped
    # strings or in the kept ones (the count of colons must not be fooled).
    '{"a":1,"a":2}',
    '{"a":1, "a":2}',
    '{"a" :1,"a" :2}',
    '{"a":1,"b":{"c":2,"c":3}}',
    '{"a":[{"c":2},{"c":2,"c":2}]}',
    '{"a":"x:y","a":"x:y"}',
    '{"a":":","a":1}',
    '{"a":1,"a":":"}',
    '{"a:b":1,"a:b":1}',
    '{"a":"\\":","a":"\\":"}',
    '{"a":"\\u003a","a":"\\u003a","b":"::"}',
    '{"a":"\\u0022:","a":"\\u0022:"}',
    '{"k":{"k":{"k":1,"k":1}}}',
    '{"a":1,"a":1,"b":"::"}',
    '{"":1,"":1}',
    '{"a":1,"\\u0061":1}',
    # Numbers: signs, zeros, integral floats, exponents, the edges of 64 bits, length.
    '{"a":-0}',
    '{"a":-0.0}',
    '{"a":0.0}',
    '{"a":1.0}',
    '{"a":1}',
    '{"a":1.00}',
    '{"a":1e0}',
    '{"a":1E2}',
    '{"a":100e-2}',
    '{"a":1.5}',
    '{"a":0.000001}',
    '{"a":1e-7}',
    '{"a":1e15}',
    '{"a":1e16}',
    '{"a":1e21}',
    '{"a":12345678901234567.0}',
    '{"a":1e308}',
    '{"a":1e309}',
    '{"a":-1e400}',
    '{"a":1e-400}',
    '{"a":5e-324}',
    '{"a":9007199254740993}',
    '{"a":9223372036854775807}',
    '{"a":9223372036854775808}',
    '{"a":-9223372036854775808}',
    '{"a":-9223372036854775809}',
    '{"a":18446744073709551615}',
    '{"a":18446744073709551616}',
    '{"a":123456789012345678901234567890}',
    '{"a":' + "9" * 4300 + "}",
    '{"a":' + "9" * 4301 + "}",
    '{"a":0.' + "0" * 400 + "1}",
    '{"a":1' + "0" * 400 + ".5}",
    "[1.0]",
    "1.0",
    "2",
    "-0",
    # Literals Python's json takes and JSON does not.
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":-Infinity}',
    "NaN",
    # Escapes: surrogates lone and paired, control characters, a solidus, NUL.
    '{"a":"\\ud800"}',
    '{"a":"\\udc00\\ud800"}',
    '{"\\ud800":1}',
    '{"a":"\\ud83d\\ude00"}',
    '{"a":"\\u0000"}',
    '{"a":"\\/"}',
    '{"a":"\\n\\t\\"\\\\"}',
    '{"a":"\\x"}',
    '{"a":"a\x01b"}',
    '{"a":"a\x7fb"}',
    '{"a":"é😀"}',
    # Byte order marks, trailing text, whitespace JSON has and has not, syntax.
    '\ufeff{"a":1}',
    '{"a":1} x',
    '{"a":1}}',
    '{"a":1}\n',
    ' \t\r\n{"a":1}\r\n',
    '\x0c{"a":1}',
    '{"a":1,}',
    "[1,]",
    "{'a':1}",
    '{"a":01}',
    '{"a":1.}',
    '{"a":.5}',
    '{"a":+1}',
    "",
    "   ",
    "{}",
    "[]",
    "null",
    # Nesting at the limit, just past it, and far past it.
    "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    "[" * 2000 + "]" * 2000,
    "[" * 100_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_gets_the_strict_answer(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    same_parse(text, monkeypatch)
    same_parse(text.encode("utf-8", "surrogatepass"), monkeypatch)


@pytest.mark.parametrize(
    "data",
    [b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b"\xef\xbb\xbf{}", b'{"a":"\xc3"}'],
)
def test_bytes_that_are_not_utf_8_get_the_strict_answer(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not same_parse(data, monkeypatch)


def test_brackets_past_the_bound_given_are_left_to_the_caller() -> None:
    """A reader of part of a document passes what is left of the bound on nesting."""
    text = '{"a":[{"b":"[{"}]}'
    assert quick_parse.quick_value(text, max_brackets=5) == {"a": [{"b": "[{"}]}
    assert quick_parse.quick_value(text, max_brackets=4) is quick_parse.UNPROVEN


def test_a_str_with_a_raw_lone_surrogate_is_left_to_the_strict_parser() -> None:
    assert quick_parse.quick_value('{"a":"\ud800"}') is quick_parse.UNPROVEN


def test_repeated_keys_are_never_vouched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in HOSTILE[:16]:
        assert quick_parse.quick_value(text) is quick_parse.UNPROVEN, text
        assert strict(text, monkeypatch).problems, text


@pytest.mark.parametrize("exponent", range(-30, 300, 7))
def test_integral_floats_of_every_size_are_left_to_the_strict_parser(exponent: int) -> None:
    for mantissa in (1, 7, 123456789):
        value = float(f"{mantissa}e{exponent}")
        text = json.dumps({"a": value, "b": [value]})
        if value.is_integer():
            assert quick_parse.quick_value(text) is quick_parse.UNPROVEN, text


def test_the_example_and_the_fixtures_are_read_quickly(
    example_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of it: the published forms of real records take the quick reading."""
    assert same_parse(example_text, monkeypatch)
    compact = json.dumps(json.loads(example_text), ensure_ascii=False, separators=(",", ":"))
    assert same_parse(compact, monkeypatch)


# Objects as lists of pairs, so that keys repeat (from a small alphabet, often).
_KEYS = st.sampled_from(["a", "b", ":", 'q"', "a:b", "\\", "é", "", "\x01"])
_STRINGS = st.text(alphabet=st.sampled_from(list('ab:"\\/ \x00\x1fé😀\u2028')), max_size=6)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 1e16, 1e-7, 0.1, 1e300]),
    _STRINGS,
)


def _tree() -> st.SearchStrategy[Any]:
    return st.recursive(
        _SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.lists(st.tuples(st.one_of(_KEYS, _STRINGS), children), max_size=4).map(_Pairs),
        ),
        max_leaves=12,
    )


class _Pairs(list[tuple[str, Any]]):
    """An object written with its pairs as they are, repeats included."""


def _number(value: float, style: int) -> str:
    if style == 1 and value.is_integer() and abs(value) < 1e300:
        return str(int(value))
    if style == 2:
        return f"{value:.17g}"
    if style == 3:
        return f"{value:e}"
    return repr(value)


def _write(node: Any, style: int, sep: tuple[str, str], ascii_only: bool) -> str:
    if isinstance(node, _Pairs):
        members = [
            json.dumps(k, ensure_ascii=ascii_only) + sep[1] + _write(v, style, sep, ascii_only)
            for k, v in node
        ]
        return "{" + sep[0].join(members) + "}"
    if isinstance(node, list):
        return "[" + sep[0].join(_write(v, style, sep, ascii_only) for v in node) + "]"
    if isinstance(node, float):
        return _number(node, style)
    return json.dumps(node, ensure_ascii=ascii_only)


@settings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    tree=_tree(),
    style=st.integers(0, 3),
    sep=st.sampled_from([(",", ":"), (", ", ": "), (",", " : "), (",\n ", ":\t")]),
    ascii_only=st.booleans(),
)
def test_generated_text_gets_the_strict_answer(
    tree: Any,
    style: int,
    sep: tuple[str, str],
    ascii_only: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = _write(tree, style, sep, ascii_only)
    same_parse(text, monkeypatch)
    same_parse(text.encode("utf-8", "surrogatepass"), monkeypatch)


# Numbers of the exponent -6, which the published form spells positionally and orjson
# with an exponent, in every place the proof could mistake for one: whole, in strings,
# beside repeated keys, with and without the count of brackets.
SIX = [
    '{"a":0.000001}',
    '{"a":-0.000001,"b":[0.0000093,0.00000999]}',
    '{"a":0.000001,"a":0.000001}',
    '{"a":0.000001,"b":{"c":1,"c":0.000001}}',
    '{"a":"x:1e-6,","b":0.000001}',
    '{"a":"1e-6","b":0.000001}',
    '{"a":"0.000001","a":1e-6}',
    '{"a":1e-6}',
    '{"a":1.5e-6,"b":"1.5e-6]"}',
    '{"a":[1e-6,0.000001]}',
    '{"a":0.000001,"b":"e-6","c":"e-6","c":":"}',
    '{"a":0.000001,"b":2.0}',
    '{"a":0.000001,"b":1e16}',
    '{"a":0.000001,"a" :0.000001}',
    "0.000001",
    "[0.000001]",
]


@pytest.mark.parametrize("text", SIX, ids=range(len(SIX)))
def test_numbers_of_exponent_minus_six_get_the_strict_answer(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    same_parse(text, monkeypatch)
    expected = strict(text, monkeypatch)
    for bound in (None, MAX_DEPTH):
        quick = quick_parse.quick_value(text.encode("utf-8"), bound)
        if quick is not quick_parse.UNPROVEN:
            assert not expected.problems, text
            assert not expected.scan.integral_float, text  # type: ignore[union-attr]
            assert marshal.dumps(quick, 0) == marshal.dumps(expected.value, 0), text


def test_a_published_number_of_exponent_minus_six_is_read_without_a_count() -> None:
    """The harness's atol (1e-6, published 0.000001) no longer sends its runs to the count."""
    text = b'{"atol":0.000001,"rtol":0.0001,"e":[-0.0000093]}'
    assert quick_parse.quick_value(text, None) == {"atol": 1e-6, "rtol": 1e-4, "e": [-9.3e-6]}


def test_repeated_keys_beside_numbers_of_exponent_minus_six_are_never_vouched_for() -> None:
    for text in SIX[2:4] + SIX[6:7] + SIX[10:11] + SIX[13:14]:
        for bound in (None, MAX_DEPTH):
            assert quick_parse.quick_value(text, bound) is quick_parse.UNPROVEN, text


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e16, max_value=1e16))
def test_orjson_spells_a_non_integral_number_as_published_but_at_exponent_minus_six(
    value: float,
) -> None:
    """The claim quick_parse's respelling rests on: below 1e16 orjson writes every
    non-integral number as the published form does, except those it writes ``de-6``."""
    if value.is_integer():
        return
    written = orjson.dumps(value)
    published = published_text(value, indent=None).encode("ascii")
    if written.endswith(b"e-6"):
        assert published.startswith((b"0.00000", b"-0.00000")), (value, written, published)
    else:
        assert written == published, (value, written, published)


@pytest.mark.parametrize("exponent", range(-8, -4))
def test_every_mantissa_at_the_edge_exponents_is_spelled_as_claimed(exponent: int) -> None:
    for digits in ("1", "9.999999999999999", "5", "1.2345678901234567", "3.35065072354368"):
        value = float(f"{digits}e{exponent}")
        written = orjson.dumps(value)
        published = published_text(value, indent=None).encode("ascii")
        assert written.endswith(b"e-6") or written == published, (value, written, published)
        if written.endswith(b"e-6"):
            text = b'{"a":' + published + b"}"
            assert quick_parse.quick_value(text, None) == {"a": value}

"""The fast reading of a text (orjson and its proof) gives the strict parser's answer.

``_fast.parse`` is held to ``_json.text.parse_document`` (the strict parser alone) on
hostile and generated texts: the same value (types and key order included), the same
problems with the same places, and the same note of integral floats. Where
``quick_value`` vouches for a text, the strict parser finds no problem and no integral
float, and reads the same value.
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
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk._json.published import published_text
from kernelindex_sdk._json.walk import MAX_DEPTH
from kernelindex_sdk.validation import _fast


def same_parse(data: str | bytes) -> bool:
    """Assert both ways of parsing agree; return whether the fast reading vouched."""
    expected = _jsontext.parse_document(data)
    found = _fast.parse(data)
    assert found.problems == expected.problems, data
    assert found.text == expected.text
    assert found.scan == expected.scan
    assert marshal.dumps(found.value, 0) == marshal.dumps(expected.value, 0), data
    try:
        raw = data.encode("utf-8") if isinstance(data, str) else data
    except UnicodeEncodeError:
        return False
    quick = _fast.quick_value(raw)
    if quick is _fast.UNPROVEN:
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


@pytest.mark.parametrize("text", HOSTILE + SIX, ids=range(len(HOSTILE) + len(SIX)))
def test_hostile_text_gets_the_strict_answer(text: str) -> None:
    same_parse(text)
    same_parse(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "data",
    [b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b"\xef\xbb\xbf{}", b'{"a":"\xc3"}'],
)
def test_bytes_that_are_not_utf_8_get_the_strict_answer(data: bytes) -> None:
    assert not same_parse(data)


def test_brackets_past_the_bound_given_are_left_to_the_strict_parser() -> None:
    """A reader of part of a document passes what is left of the bound on nesting."""
    text = b'{"a":[{"b":"[{"}]}'
    assert _fast.quick_value(text, max_brackets=5) == {"a": [{"b": "[{"}]}
    assert _fast.quick_value(text, max_brackets=4) is _fast.UNPROVEN


def test_a_str_with_a_raw_lone_surrogate_is_left_to_the_strict_parser() -> None:
    assert not same_parse('{"a":"\ud800"}')
    assert _fast.parse('{"a":"\ud800"}').problems


def test_repeated_keys_are_never_vouched_for() -> None:
    repeated = [t for t in HOSTILE[:16] + SIX if "duplicate key" in str(_jsontext.parse(t)[2])]
    assert len(repeated) >= 18
    for text in repeated:
        assert _fast.quick_value(text.encode("utf-8")) is _fast.UNPROVEN, text


@pytest.mark.parametrize("exponent", range(-30, 300, 7))
def test_integral_floats_of_every_size_are_left_to_the_strict_parser(exponent: int) -> None:
    for mantissa in (1, 7, 123456789):
        value = float(f"{mantissa}e{exponent}")
        text = json.dumps({"a": value, "b": [value]}).encode()
        if value.is_integer():
            assert _fast.quick_value(text) is _fast.UNPROVEN, text


def test_the_published_records_are_read_fast(example_text: str) -> None:
    """The point of it: the published forms of real records take the fast reading, the
    harness's atol of 0.000001 (which orjson writes 1e-6) included."""
    assert same_parse(example_text)
    compact = json.dumps(json.loads(example_text), ensure_ascii=False, separators=(",", ":"))
    assert same_parse(compact)
    assert same_parse(b'{"atol":0.000001,"rtol":0.0001,"e":[-0.0000093]}')


def test_with_the_switch_on_every_text_takes_the_strict_parser(
    example_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_fast.STRICT_READ, "1")
    calls: list[object] = []
    monkeypatch.setattr(_fast.text, "quick_value", lambda *a: calls.append(a))
    assert _fast.parse(example_text).value == json.loads(example_text)
    assert calls == []


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
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    tree=_tree(),
    style=st.integers(0, 3),
    sep=st.sampled_from([(",", ":"), (", ", ": "), (",", " : "), (",\n ", ":\t")]),
    ascii_only=st.booleans(),
)
def test_generated_text_gets_the_strict_answer(
    tree: Any, style: int, sep: tuple[str, str], ascii_only: bool
) -> None:
    text = _write(tree, style, sep, ascii_only)
    same_parse(text)
    same_parse(text.encode("utf-8", "surrogatepass"))


# Numbers orjson writes with the exponent -6, and strings that look like them.
_SIXES = st.sampled_from([1e-6, 2.5e-6, -9.999999999999999e-6, 3e-6, 1.5e-5, 0.5, 7, -2])
_TRICKY = st.sampled_from(
    ["e-6", "1e-6", "x:1e-6,", "0.000001", "[2e-6]", "a,3e-6}", ":", "-e-6]", "1.2.3e-6,"]
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=st.recursive(
        _SIXES | _TRICKY,
        lambda children: (
            st.lists(children, max_size=4)
            | st.lists(st.tuples(st.one_of(_KEYS, _TRICKY), children), max_size=4).map(_Pairs)
        ),
        max_leaves=10,
    )
)
def test_numbers_of_exponent_minus_six_in_the_published_form_get_the_strict_answer(
    tree: Any,
) -> None:
    """The published form spells them ``0.000001`` where orjson writes ``1e-6``: the text
    is vouched for by its count of colons, never where a key repeats, an ``e-6`` in a
    string or not."""
    text = published_text(_plain(tree), indent=None) if not _repeats(tree) else None
    for data in filter(None, [text, _write(tree, 0, (",", ":"), False)]):
        same_parse(data)


def _plain(node: Any) -> Any:
    if isinstance(node, _Pairs):
        return {k: _plain(v) for k, v in node}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _repeats(node: Any) -> bool:
    if isinstance(node, _Pairs):
        keys = [k for k, _ in node]
        return len(set(keys)) < len(keys) or any(_repeats(v) for _, v in node)
    return isinstance(node, list) and any(_repeats(v) for v in node)


def test_a_harness_run_is_vouched_for_by_its_published_spelling() -> None:
    """The harness's atol (1e-6, published 0.000001): orjson writes it otherwise, so the
    colons are counted, and the text is vouched for, an ``e-6`` in a string or not."""
    run = b'{"atol":0.000001,"rtol":0.0001,"e":[-0.0000093]}'
    assert orjson.dumps(orjson.loads(run)) != run
    assert _fast.quick_value(run) == {"atol": 1e-6, "rtol": 1e-4, "e": [-9.3e-6]}
    in_a_string = run[:-1] + b',"k":"1e-6"}'
    assert _fast.quick_value(in_a_string) == {**orjson.loads(run), "k": "1e-6"}
    repeated = run[:-1] + b',"atol":0.000001}'
    assert _fast.quick_value(repeated) is _fast.UNPROVEN

"""Red-team cases for the quick reading: texts built to make the two paths disagree.

Each case is held to what the strict parser alone gives (``parse_document`` with the
quick reading turned off), through ``parse_document`` and through
:class:`~kernelindex_sdk.validation.BundleReader`, whose quick path reads a line's run
with ``quick_value`` after a tail kept from an earlier line. A disagreement would be a
false pass (text the strict parser refuses, or reads to another value) or a changed
digest.
"""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import validation
from kernelindex_sdk._json import quick_parse
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk.convert import load_record
from kernelindex_sdk.errors import KernelIndexError

FIXTURES = Path(__file__).parent / "fixtures"
SWEEP = (FIXTURES / "h200-jsd-sweep.jsonl").read_text(encoding="utf-8").splitlines()
HEAD = '{"run":'


def strict(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> _jsontext.Parsed:
    """What ``parse_document`` gives without the quick reading."""
    with monkeypatch.context() as patch:
        patch.setattr(_jsontext, "quick_value", lambda _: quick_parse.UNPROVEN)
        return _jsontext.parse_document(data)


def strict_verdict(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    """The strict value and every problem validation finds in it."""
    parsed = strict(data, monkeypatch)
    return parsed.value, list(validation.iter_parsed_problems(parsed))


def assert_same_parse(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = strict(data, monkeypatch)
    found = _jsontext.parse_document(data)
    assert found.problems == expected.problems, data
    assert found.text == expected.text, data
    assert found.scan == expected.scan, data
    assert marshal.dumps(found.value, 0) == marshal.dumps(expected.value, 0), data
    quick = quick_parse.quick_value(data)
    if quick is not quick_parse.UNPROVEN:
        assert not expected.problems, data
        assert marshal.dumps(quick, 0) == marshal.dumps(expected.value, 0), data


# Texts the brief's classes name that tests/test_quick_parse.py does not hold already.
HANDMADE = [
    # Keys that repeat only once escapes are read, or differ only in normal form.
    '{"\\"":1,"\\"":2}',
    '{"\\\\":1,"\\\\":2}',
    '{"\\/":1,"/":2}',
    '{"\\t":1,"\\t":2}',
    '{"\\n:":1,"\\n:":2}',
    '{"\\\\u0061":1,"\\\\u0061":2}',
    '{"\\\\u0061":1,"a":2}',
    '{"é":1,"e\u0301":2}',
    '{"Å":1,"Å":2}',
    '{"a":{"b":1},"a":{"b":1}}',
    '{"a":[],"a":[]}',
    '{"a":{},"a":{}}',
    '{"a":"[{:","b":1}',
    '{"a":"\\":[{","a":"\\":[{"}',
    # A dropped value whose colons a kept string could stand in for.
    '{"a":":","a":"","b":":"}',
    '{"x":{"a":1},"x":"::"}',
    # Numbers at the edges the proof names.
    '{"a":9999999999999999.5}',
    '{"a":1e15}',
    '{"a":9.5e15}',
    '{"a":1.25e16}',
    '{"a":0.5e1}',
    '{"a":5e-1}',
    '{"a":1E-2}',
    '{"a":-0e-0}',
    '{"a":0e0}',
    '{"a":1e-320}',
    '{"a":2.2250738585072011e-308}',
    '{"a":2.4703282292062328e-324}',
    '{"a":1.7976931348623158e308}',
    '{"a":1.7976931348623159e308}',
    '{"a":1.' + "1" * 800 + "}",
    '{"a":0.' + "0" * 30 + "12345678901234567890123456789}",
    '{"a":-01}',
    '{"a":00}',
    '{"a":1.e5}',
    '{"a":-}',
    '{"a":1e}',
    '{"a":18446744073709551615.0}',
    # Whitespace JSON has and has not, inside and around the value.
    '{"a":\x0b1}',
    '{"a":\x0c1}',
    '{"a":\u00a01}',
    '{"a":1}\u00a0',
    '{"a":1}\u3000',
    '{"a":1}\x85',
    '{"a":1}\x00',
    '\x00{"a":1}',
    '{"a":"a\tb"}',
    '{"a":"a\nb"}',
    '{"a\tb":1}',
    '{"a":"\u2028\u2029"}',
    '{"a":"\ufeff"}',
    '{"a":1}\ufeff',
    # Comments and literals some readers take.
    '{"a":1}//x',
    '{"a":1}/*x*/',
    '/*x*/{"a":1}',
    '{"a":1,/*c*/"b":2}',
    '{"a":True}',
    '{"a":tru}',
    '{"a":nul}',
    "[1,2]#",
    # Many keys: the proof counts colons, not keys per object.
    "{" + ",".join(f'"k{i}":{i}' for i in range(2000)) + "}",
    "{" + ",".join(f'"k{i}":{i}' for i in range(2000)) + ',"k0":0}',
    '{"' + "k" * 100_000 + '":1}',
    '{"' + "k" * 100_000 + '":1,"' + "k" * 100_000 + '":1}',
]


@pytest.mark.parametrize("text", HANDMADE, ids=range(len(HANDMADE)))
def test_handmade_text_gets_the_strict_answer(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_parse(text, monkeypatch)
    assert_same_parse(text.encode("utf-8"), monkeypatch)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":"\xc0\x80"}',
        b'{"a":"\xe0\x80\x80"}',
        b'{"a":"\xf4\x90\x80\x80"}',
        b'{"a":"\xf8\x88\x80\x80\x80"}',
        b'{"a":"\xed\xb0\x80"}',
        b'{"a":"\xf0\x9f\x98"}',
        b'{"a":1}\xff',
        b'\xff{"a":1}',
        b'{"a":"\xef\xbf\xbe"}',
    ],
)
def test_overlong_and_broken_utf_8_get_the_strict_answer(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_same_parse(data, monkeypatch)


# What a line's run can be changed by: each snippet replaces or joins the run's text at
# a place the test draws, so that the text stays near a valid bundle.
_SNIPPETS = [
    '"kind":"BenchmarkRun",',
    '"\\u006bind":"BenchmarkRun",',
    '"kin\\u0064":"BenchmarkRun",',
    '"k\\u0069nd":"x",',
    '"kind":"BenchmarkRun" ,',
    '"status":"passed",',
    '"st\\u0061tus":"failed",',
    '"x:y":"{[:",',
    '"\\"":"\\\\",',
    "1.0",
    "-0",
    "-0.0",
    "1e2",
    "1E+2",
    "126.0",
    "1.26e2",
    "12600e-2",
    "18446744073709551616",
    "9223372036854775808",
    "1e400",
    "NaN",
    "\x0c",
    "\x0b",
    "\u00a0",
    "\r",
    "\t",
    "\x00",
    "\ud800",
    "\\ud800",
    "\\u0000",
    "\u2028",
    "😀",
    "[",
    "{",
    "]",
    "}",
    ":",
    ",",
    '"',
    "\\",
]


def _reader_agrees(lines: list[str | bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """Feed ``lines`` to one reader; whatever it vouches for, the strict check passes."""
    reader = validation.BundleReader()
    assert reader.enabled
    for line in lines:
        value = reader.read(line)
        if value is None:
            continue
        expected, problems = strict_verdict(line, monkeypatch)
        assert problems == [], line
        assert marshal.dumps(value, 0) == marshal.dumps(expected, 0), line


def _mutated(line: str, at: float, span: int, snippet: str) -> str:
    """``line`` with ``span`` characters of its run, from ``at`` of the way in, replaced."""
    tail_at = line.rindex(',"protocol"')
    start = len(HEAD) + int(at * (tail_at - len(HEAD)))
    return line[:start] + snippet + line[min(start + span, tail_at) :]


@settings(
    max_examples=800,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    first=st.integers(0, len(SWEEP) - 1),
    second=st.integers(0, len(SWEEP) - 1),
    at=st.floats(0, 1),
    span=st.integers(0, 3),
    snippet=st.sampled_from(_SNIPPETS),
    as_bytes=st.booleans(),
)
def test_a_changed_run_after_a_kept_tail_gets_the_strict_verdict(
    first: int,
    second: int,
    at: float,
    span: int,
    snippet: str,
    as_bytes: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second line ends with the first's tail (the sweep shares it), its run changed."""
    changed = _mutated(SWEEP[second], at, span, snippet)
    lines: list[str | bytes] = [SWEEP[first], changed, SWEEP[second], changed]
    if as_bytes:
        lines = [
            line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
            for line in lines
        ]
    _reader_agrees(lines, monkeypatch)


def test_the_sweep_lines_are_read_quickly_and_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzzer above starts from lines the quick path takes (else it proves nothing)."""
    reader = validation.BundleReader()
    for line in SWEEP[:8]:
        value = reader.read(line.encode("utf-8"))
        assert value is not None
        expected, problems = strict_verdict(line, monkeypatch)
        assert problems == []
        assert marshal.dumps(value, 0) == marshal.dumps(expected, 0)


@pytest.mark.parametrize("ending", ["\r", "\r\n", " ", "\t", "\x0c", "\u00a0", "x", "}", "\x00"])
def test_a_line_with_another_ending_gets_the_strict_verdict(
    ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line like a kept one but for what follows its last brace."""
    _reader_agrees([SWEEP[0], SWEEP[1] + ending, SWEEP[2] + ending, SWEEP[3]], monkeypatch)
    _reader_agrees(
        [SWEEP[0].encode(), (SWEEP[1] + ending).encode(), (SWEEP[2] + ending).encode()],
        monkeypatch,
    )


def test_a_tail_moved_into_the_run_gets_the_strict_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run that itself ends with a kept tail's text, or holds "protocol", is read as it is."""
    tail = SWEEP[0][SWEEP[0].rindex(',"protocol"') :]
    run = SWEEP[1][len(HEAD) : SWEEP[1].rindex(',"protocol"')]
    lines = [
        SWEEP[0],
        HEAD + run[:-1] + ',"x":"' + tail.replace('"', '\\"') + '"}' + tail,
        HEAD + run + tail[:-1] + tail,
        HEAD + run + tail + tail,
        '{"run":{"protocol":1}' + tail,
        HEAD + run + ',"run":' + run + tail,
        HEAD + run + ' , "protocol"' + tail[len(',"protocol"') :],
    ]
    _reader_agrees(lines, monkeypatch)
    _reader_agrees([line.encode("utf-8") for line in lines], monkeypatch)


# A str may hold surrogate code points as characters, which no UTF-8 bytes can: the
# quick reading leaves such text to the strict parser, which must then refuse it as it
# refuses the same string written with a \ud800 escape.
RAW_SURROGATES = [
    ('{"a":"\ud800"}', '{"a":"\\ud800"}'),
    ('{"a":"x\udfffy"}', '{"a":"x\\udfffy"}'),
    ('{"\ud800":1}', '{"\\ud800":1}'),
    ('[1,{"b":["\udc00\ud800"]}]', '[1,{"b":["\\udc00\\ud800"]}]'),
    ('{"a":"\ud83d\ude00"}', None),
]


@pytest.mark.parametrize(("raw", "escaped"), RAW_SURROGATES)
def test_a_str_holding_surrogates_is_refused_as_its_escaped_form(
    raw: str, escaped: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = _jsontext.parse_document(raw)
    assert parsed.value is None
    assert [p.code for p in parsed.problems] == ["json-value"]
    assert "surrogate" in parsed.problems[0].message
    if escaped is not None:
        # The escape is six characters where the raw one is one: columns may differ.
        strip = [(p.pointer, p.message, p.code) for p in parsed.problems]
        other = strict(escaped, monkeypatch).problems
        assert strip == [(p.pointer, p.message, p.code) for p in other]
    assert_same_parse(raw, monkeypatch)


def test_a_record_given_as_str_with_a_raw_surrogate_is_not_valid() -> None:
    """validate, load_record and the bundle reader refuse what a file could not hold."""
    line = SWEEP[0].replace('"title":"', '"title":"x\ud800', 1)
    assert line != SWEEP[0]
    problems = validation.validate(line)
    assert [(p.pointer, p.code) for p in problems] == [("/run/metadata/title", "json-value")]
    with pytest.raises(KernelIndexError, match=r"lone surrogate U[+]D800 .*json-value"):
        load_record(line)
    reader = validation.BundleReader()
    assert reader.read(SWEEP[0]) is not None
    assert reader.read(line) is None
    # The tail too: a fresh reader reads it strictly, a warm one has it kept.
    tail_at = SWEEP[0].rindex(',"protocol"')
    bad_tail = SWEEP[0][:tail_at] + SWEEP[0][tail_at:].replace('"name":"', '"name":"\udc00', 1)
    assert validation.validate(bad_tail)
    assert validation.BundleReader().read(bad_tail) is None

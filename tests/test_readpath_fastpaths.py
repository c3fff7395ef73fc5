"""The read path's shortcuts give what the paths they stand in for give, on every input.

Each test holds one shortcut of ingest's reading (``documents.check_documents(quick=True)``)
to the slower path it replaces: the quick reading to the full check, ``_spelled_as`` given
the first ``e-6`` to its search from the start, ``InputRules._known_bundle``'s written-out
comparison to the full admission, and the first-byte test of a line to stripping it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex_sdk import documents
from kernelindex_sdk._json import quick_parse
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk._json.published import ecmascript_number
from kernelindex_sdk.documents import check_documents, iter_documents
from kernelindex_sdk.validation import InputRules

SWEEP = Path(__file__).parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _spelled_as_from_the_start(written: bytes, raw: bytes) -> bool:
    """``quick_parse._spelled_as`` as it was before it was given where ``e-6`` is: the
    reference the shortcut must answer as."""
    last = 0
    here = 0
    at = written.find(b"e-6")
    while at != -1:
        end = at + 3
        if written[end : end + 1] in (b",", b"]", b"}", b""):
            start = (
                max(
                    written.rfind(b":", last, at),
                    written.rfind(b",", last, at),
                    written.rfind(b"[", last, at),
                )
                + 1
            )
            token = written[start:end]
            spelled = quick_parse._RESPELLED.get(token)
            if (
                spelled is None
                and start > 0
                and re.fullmatch(rb"-?[1-9](?:\.[0-9]+)?e-6", token) is not None
            ):
                spelled = ecmascript_number(float(token)).encode("ascii")
                quick_parse._RESPELLED[token] = spelled
            if spelled is not None:
                before = written[last:start]
                if not raw.startswith(before, here) or not raw.startswith(
                    spelled, here + len(before)
                ):
                    return False
                here += len(before) + len(spelled)
                last = end
                if len(raw) - here == len(written) - last and raw.endswith(written[last:]):
                    return True
        at = written.find(b"e-6", end)
    return raw[here:] == written[last:]


# Numbers orjson writes with the exponent -6, and others; strings that look like them.
_SIXES = st.sampled_from([1e-6, 2.5e-6, -9.999999999999999e-6, 3e-6, 1.5e-5, 0.5, 7, -2])
_TRICKY = st.sampled_from(
    [
        "e-6",
        "1e-6",
        "x:1e-6,",
        "0.000001",
        "[2e-6]",
        "a,3e-6}",
        ":",
        # Runs of number bytes longer than orjson's numbers, or reaching the text's start.
        "1.000000000000000000000000000001e-6,",
        ":1.000000000000000000000000000001e-6]",
        "x" * 30 + "1e-6,",
        "-" * 30 + ",1e-6}",
    ]
)
_LEAVES = _SIXES | _TRICKY | st.text(alphabet="e-6,:[]{}0.1", max_size=8)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="ae-6:,", max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def _respell(written: bytes, choices: list[bool]) -> bytes:
    """``written`` with some ``de-6`` spelled as the published form spells them, those in
    strings included (a hostile text: it reads to another value)."""
    found = iter(choices)

    def one(match: re.Match[bytes]) -> bytes:
        if next(found, False):
            return ecmascript_number(float(match.group())).encode("ascii")
        return match.group()

    return re.sub(rb"-?[1-9](?:\.[0-9]+)?e-6", one, written)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, choices=st.lists(st.booleans(), max_size=8), cut=st.integers(0, 3))
def test_spelled_as_given_the_first_e6_answers_as_its_search_from_the_start(
    value: Any, choices: list[bool], cut: int
) -> None:
    written = orjson.dumps(value)
    raw = _respell(written, choices)
    # A text cut short or lengthened too: the answer may be no, never another one.
    for text in (raw, raw[: len(raw) - cut], raw + b"]" * cut):
        at = written.find(b"e-6")
        # Both from the same table of respelled numbers (it holds what either met).
        kept = dict(quick_parse._RESPELLED)
        expected = _spelled_as_from_the_start(written, text)
        quick_parse._RESPELLED.clear()
        quick_parse._RESPELLED.update(kept)
        assert (at != -1 and quick_parse._spelled_as(written, text, at)) == (
            at != -1 and expected
        ), (written, text)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, choices=st.lists(st.booleans(), max_size=8))
def test_quick_value_of_respelled_texts_is_the_strict_parse(
    value: Any, choices: list[bool]
) -> None:
    """Whatever the respelling (in strings too), a value given is the strict parser's."""
    text = _respell(orjson.dumps(value), choices)
    quick = quick_parse.quick_value(text)
    if quick is not quick_parse.UNPROVEN:
        strict = _jsontext.parse_document(text)
        assert not strict.problems
        assert quick == strict.value


def _sweep_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SWEEP.read_text(encoding="utf-8").splitlines()]


def _published(doc: dict[str, Any]) -> str:
    """As the harness writes a line: compact, atol published as ``0.000001``."""
    return documents.json_line(doc)


def _mixed_lines() -> list[str]:
    """Harness lines, valid and not, as a sweep file may hold them."""
    docs = _sweep_lines()
    lines = [_published(doc) for doc in docs[:8]]
    # Another protocol on every other line: the kept tail changes from line to line.
    other = json.loads(json.dumps(docs[8]))
    other["protocol"]["metadata"]["name"] += "-b"
    other["protocol"]["spec"]["measurement"]["warmupMs"] = 26
    for i, doc in enumerate(docs[8:20]):
        lines.append(_published(doc))
        twin = json.loads(json.dumps(doc))
        twin["run"]["metadata"]["name"] += f"-twin{i}"
        twin["protocol"] = other["protocol"]
        lines.append(_published(twin))
    base = docs[20]
    text = _published(base)
    name = base["run"]["metadata"]["name"]
    spellings = {
        # atol spelled as orjson spells it, as the published form does, and otherwise.
        "orjson": text.replace('"atol":0.000001', '"atol":1e-6'),
        "exponent-zero": text.replace('"atol":0.000001', '"atol":1.0e-6'),
        "longer": text.replace('"atol":0.000001', '"atol":0.0000010'),
        "integral": text.replace('"samples":126', '"samples":126.0'),
        "two-atols": text.replace('"atol":0.000001', '"atol":0.000001,"atol":0.000001'),
        "key-twice": text.replace('"rtol":0.0001', '"rtol":0.0001,"rtol":0.0001'),
        "spaced": text.replace('"atol":0.000001', '"atol": 0.000001'),
        "in-a-string": text.replace('"title":"', '"title":"1e-6,0.000001 '),
        "big": text.replace('"samples":126', '"samples":1e16'),
    }
    for key, spelled in spellings.items():
        lines.append(spelled.replace(name, f"{name}-{key}"))
    # The same workload digest for another workload value: true against 0 and 1.
    clash = json.loads(json.dumps(docs[21]))
    clash["run"]["metadata"]["name"] += "-clash"
    clash["run"]["spec"]["workload"]["parameters"]["inputGrad"] = 0
    lines.append(_published(docs[21]))
    lines.append(_published(clash))
    # The same run name twice.
    lines.append(_published(docs[22]))
    lines.append(_published(docs[22]))
    # Whitespace before a record, blank lines, and a form feed (no JSON whitespace).
    lines += [" " + _published(docs[23]), "\t\r\n", "\n", "\x0c\n", "\r\n"]
    lines.append(_published(docs[24]).rstrip("\n"))
    return lines


def _outcome(results: list[documents.DocumentResult]) -> list[tuple[Any, ...]]:
    return [
        (r.document.line, r.document.text, r.valid, [str(p) for p in r.problems], r.value)
        for r in results
    ]


def test_quick_reading_gives_the_full_checks_verdicts_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(_mixed_lines()), encoding="utf-8")
    quick = list(check_documents([path], quick=True))
    full = list(check_documents([path]))
    assert _outcome(quick) == _outcome(full)
    # The file holds valid lines and invalid ones, so both answers are exercised.
    assert sum(r.valid for r in quick) >= 30
    assert sum(not r.valid for r in quick) >= 6


class _FullRules(InputRules):
    """Input rules that admit every record by the full admission (no shortcut)."""

    def _known_bundle(self, doc: dict[str, Any], where: str) -> bool:
        return False


def test_a_workload_clash_after_its_text_is_kept_is_found() -> None:
    """The written-out comparison of _known_bundle answers as the full admission does,
    once the first workload's text is kept (its second comparison) too."""
    docs = _sweep_lines()
    first, same, other = (json.loads(json.dumps(docs[0])) for _ in range(3))
    same["run"]["metadata"]["name"] += "-same"
    other["run"]["metadata"]["name"] += "-other"
    # One protocol and environment object for all, as the quick reader hands them out:
    # only then does the shortcut compare workloads.
    for doc in (same, other):
        doc["protocol"], doc["environment"] = first["protocol"], first["environment"]
    for flag, expected in ((0, 1), (False, 0), (0.0, 1), (None, 1)):
        other["run"]["spec"]["workload"]["parameters"]["inputGrad"] = flag
        for known in (True, False):
            rules = InputRules() if known else _FullRules()
            assert rules.admit(first, "a").problems == ()
            assert rules.admit(same, "b").problems == ()
            problems = rules.admit(other, "c").problems
            assert len(problems) == expected, (flag, known, problems)
            assert all(p.code == "digest-clash" for p in problems)


def test_a_workload_orjson_cannot_write_is_compared_by_its_canonical_form() -> None:
    docs = _sweep_lines()
    first, big = (json.loads(json.dumps(docs[0])) for _ in range(2))
    big["run"]["metadata"]["name"] += "-big"
    big["protocol"], big["environment"] = first["protocol"], first["environment"]
    big["run"]["spec"]["workload"]["parameters"]["tokens"] = 2**70
    for known in (True, False):
        rules = InputRules() if known else _FullRules()
        assert rules.admit(first, "a").problems == ()
        assert rules.admit(big, "b").problems != ()


@pytest.mark.parametrize(
    "lines",
    [
        [b" \n", b"\t\r\n", b"{}\n"],
        [b"\x0c\n", b" {}\n", b"\n", b"\r\n"],
        [b"\n", b" \n", b"\t{}"],
        [b"{}\r\n", b"\r\n", b" \t \n", b"[]"],
    ],
)
def test_a_line_is_blank_exactly_when_it_strips_to_nothing(
    tmp_path: Path, lines: list[bytes]
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join(lines))
    read = [(d.line, d.text) for d in iter_documents([path])]
    expected = [
        (number, line.rstrip(b"\n"))
        for number, line in enumerate(lines, 1)
        if not _jsontext.is_blank(line)
    ]
    assert read == expected


@pytest.mark.parametrize(
    "text",
    [
        b'{"atol":1e-6,"b":[2.5e-6,-9.999999999999999e-6]}',
        b'["x' + b"1" * 40 + b'e-6",1e-6]',
        b'{"a":"' + b"-" * 30 + b'1e-6,","c":"q1e-6"}',
        b"1e-6",
        b"[1e-6]",
        b'{"a:b,c[d":"x1e-6,","e":"0.1e-6]"}',
        b'{"k":"::::::::::::::::::::::::::::::1.5e-6,"}',
    ],
)
def test_a_numbers_start_is_the_last_separator_before_it(text: bytes) -> None:
    """_number_start answers as the three searches back from ``last`` it stands in for."""
    for found in re.finditer(rb"e-6", text):
        at = found.start()
        for last in range(at + 1):
            expected = (
                max(
                    text.rfind(b":", last, at),
                    text.rfind(b",", last, at),
                    text.rfind(b"[", last, at),
                )
                + 1
            )
            assert quick_parse._number_start(text, last, at) == expected, (text, last, at)

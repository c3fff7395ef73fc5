"""Record text cannot forge output: every format escapes every record-derived string.

Each test renders records whose free-text fields (provider, entry point, parameter
values, GPU product, failure message) hold a hostile string, and the same records with a
benign string of the same place: the output must have the same shape (lines, rows,
cells, headings) and hold no control character, live formula or raw markup.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from _records import bundle, write_jsonl

from kernelindex_sdk import digest, report
from kernelindex_sdk._base.display import csv_cell, markdown_text, printable
from kernelindex_sdk._cli import main
from kernelindex_sdk.compare import compare, render

HOSTILE = (
    '=HYPERLINK("http://e")\n| forged | row |\nkernelindex: 0 regressions, all good\n'
    "# h\r\u2028\u2029\u202e\u2066\x1b[2J\x7f\x85`*_[a](b)<i>~$x$&amp;"
)
BENIGN = "benign"
# What no output may hold: controls other than the newline, separators, bidi controls.
_RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def _on(doc: dict[str, Any], product: str) -> dict[str, Any]:
    """``doc`` run on a GPU of that product name (its environment's name stays plain)."""
    spec = doc["environment"]["spec"]
    spec["hardware"]["product"] = product
    doc["run"]["spec"]["environmentDigest"] = digest.environment_digest(spec)
    return doc


def _records(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """BASE and NEW with ``text`` in every free-text field that compare shows."""

    def one(median: int, tokens: int, **kw: Any) -> dict[str, Any]:
        doc = bundle(
            provider=text,
            median=median,
            p20=median - 1,
            p80=median + 1,
            params={"tokens": tokens, "mode": text},
            entry_point=text,
            **kw,
        )
        return _on(doc, text)

    base = [
        one(100_000, 1),
        one(100_000, 2),
        _on(bundle(provider=text, params={"tokens": 3, "mode": text}, failed=text), text),
        one(100_000, 9),  # only in BASE: its reason quotes the parameters
    ]
    new = [
        one(200_000, 1),
        one(100_000, 2, observed="2026-11-30T00:00:01.000Z"),
        _on(bundle(provider=text, params={"tokens": 3, "mode": text}, failed=text), text),
        one(100_000, 8),
    ]
    return base, new


def _compare_output(text: str, fmt: str) -> str:
    base, new = _records(text)
    return render(compare(base, new), fmt)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_compare_tables_keep_their_shape(fmt: str) -> None:
    hostile, benign = _compare_output(HOSTILE, fmt), _compare_output(BENIGN, fmt)
    assert hostile.count("\n") == benign.count("\n")
    assert not _RAW_CONTROL.search(hostile)
    assert not any(
        line.startswith(("kernelindex:", "#", "| forged")) for line in hostile.split("\n")
    )
    if fmt == "markdown":
        _assert_markdown_shape(hostile, benign)


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


def _assert_markdown_shape(hostile: str, benign: str) -> None:
    for mine, theirs in zip(hostile.split("\n"), benign.split("\n"), strict=True):
        # A record cannot add a cell, a heading or a list item.
        assert _unescaped_pipes(mine) == _unescaped_pipes(theirs), mine
        assert mine[:2] == theirs[:2], mine
    for special in ("*", "`", "[", "<", "~", "$", "&", "_"):
        # Every markup character a record gave is escaped: only the output's own remain.
        raw = rf"(?<!\\)(?:\\\\)*{re.escape(special)}"
        assert len(re.findall(raw, hostile)) == len(re.findall(raw, benign)), special


def test_compare_csv_has_no_formula_and_one_row_per_pair() -> None:
    hostile, benign = _compare_output(HOSTILE, "csv"), _compare_output(BENIGN, "csv")
    rows = list(csv.reader(io.StringIO(hostile)))
    assert len(rows) == len(list(csv.reader(io.StringIO(benign))))
    assert hostile.count("\n") == benign.count("\n")
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
            assert not _RAW_CONTROL.search(cell)
    # The text is still there to read, made inert.
    assert any(cell.startswith("'=HYPERLINK(") for row in rows for cell in row)


def test_compare_json_stays_strict_json_with_the_text_intact() -> None:
    out = _compare_output(HOSTILE, "json")

    def refuse(name: str) -> None:
        raise AssertionError(f"non-JSON constant {name}")

    rows = json.loads(out, parse_constant=refuse)
    assert len(rows) == len(json.loads(_compare_output(BENIGN, "json")))
    # JSON carries the exact text: its reader decides how to show it.
    assert rows[0]["base"]["provider"] == HOSTILE
    assert "\n" not in out.replace(",\n", "").replace("[\n", "").replace("\n]", "").strip()


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_report_tables_keep_their_shape(fmt: str) -> None:
    def records(text: str) -> list[dict[str, Any]]:
        return [
            _on(bundle(provider=p, params={"tokens": t, "mode": text}), text)
            for t in (1, 2)
            for p in (text, "torch")
        ] + [_on(bundle(provider=text, params={"tokens": text, "mode": "x"}), text)]

    hostile = report.render(report.families(records(HOSTILE)), fmt)
    benign = report.render(report.families(records(BENIGN)), fmt)
    assert hostile.count("\n") == benign.count("\n")
    assert not _RAW_CONTROL.search(hostile)
    headings = [line for line in hostile.split("\n") if line.startswith("#")]
    assert len(headings) == len([line for line in benign.split("\n") if line.startswith("#")])
    if fmt == "markdown":
        _assert_markdown_shape(hostile, benign)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_stderr_lines_of_the_gate_cannot_be_forged(tmp_path: Any) -> None:
    lines = {}
    for text in (HOSTILE, BENIGN):
        base, new = _records(text)
        b = write_jsonl(tmp_path / "b.jsonl", base)
        n = write_jsonl(tmp_path / "n.jsonl", new)
        status, _, err = _cli("compare", str(b), str(n), "--fail-on-regression", "5")
        assert status == 1
        lines[text] = err.split("\n")
    assert len(lines[HOSTILE]) == len(lines[BENIGN])
    assert lines[HOSTILE][0].startswith("regression: ")
    assert not any(line.startswith("kernelindex: 0") for line in lines[HOSTILE])
    assert not _RAW_CONTROL.search("\n".join(lines[HOSTILE]))


def test_the_helpers_escape_each_class() -> None:
    for char in ["\x00", "\x1b", "\x7f", "\x85", "\x9f", "\u2028", "\u2029", "\u202e", "\u2067"]:
        assert char not in printable(f"a{char}b")
        assert char not in markdown_text(f"a{char}b")
        cell = csv_cell(f"a{char}b")
        assert isinstance(cell, str)
        assert char not in cell
    assert markdown_text("a|b") == "a\\|b"
    assert markdown_text("vocab_size") == "vocab_size"
    assert markdown_text("_x_") == "\\_x\\_"
    for lead in "=+-@":
        assert csv_cell(f"{lead}1+1") == f"'{lead}1+1"
    # A tab or carriage return is made visible first: the cell starts with a backslash.
    assert csv_cell("\t=1") == "\\t=1"
    assert csv_cell("\r=1") == "\\r=1"
    assert csv_cell(-1.5) == -1.5
    assert csv_cell(None) is None

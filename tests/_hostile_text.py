"""Record text that tries to forge output, and the checks that it did not.

Shared by the tests that render records (compare's and report's forms): each renders
records whose free-text fields hold :data:`HOSTILE`, and the same records with
:data:`BENIGN` in its place; the output must keep the same shape (lines, rows, cells,
headings) and hold no control character, live formula or raw markup.
"""

from __future__ import annotations

import re
from typing import Any

from _records import bundle

from kernelindex_sdk import digest

HOSTILE = (
    '=HYPERLINK("http://e")\n| forged | row |\nkernelindex: 0 regressions, all good\n'
    "# h\r\u2028\u2029\u202e\u2066\x1b[2J\x7f\x85`*_[a](b)<i>~$x$&amp;"
)
BENIGN = "benign"
# What no output may hold: controls other than the newline, separators, bidi controls.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def on_gpu(doc: dict[str, Any], product: str) -> dict[str, Any]:
    """``doc`` run on a GPU of that product name (its environment's name stays plain)."""
    spec = doc["environment"]["spec"]
    spec["hardware"]["product"] = product
    doc["run"]["spec"]["environmentDigest"] = digest.environment_digest(spec)
    return doc


def compare_records(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
        return on_gpu(doc, text)

    base = [
        one(100_000, 1),
        one(100_000, 2),
        on_gpu(bundle(provider=text, params={"tokens": 3, "mode": text}, failed=text), text),
        one(100_000, 9),  # only in BASE: its reason quotes the parameters
    ]
    new = [
        one(200_000, 1),
        one(100_000, 2, observed="2026-11-30T00:00:01.000Z"),
        on_gpu(bundle(provider=text, params={"tokens": 3, "mode": text}, failed=text), text),
        one(100_000, 8),
    ]
    return base, new


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


def assert_markdown_shape(hostile: str, benign: str) -> None:
    for mine, theirs in zip(hostile.split("\n"), benign.split("\n"), strict=True):
        # A record cannot add a cell, a heading or a list item.
        assert _unescaped_pipes(mine) == _unescaped_pipes(theirs), mine
        assert mine[:2] == theirs[:2], mine
    for special in ("*", "`", "[", "<", "~", "$", "&", "_"):
        # Every markup character a record gave is escaped: only the output's own remain.
        raw = rf"(?<!\\)(?:\\\\)*{re.escape(special)}"
        assert len(re.findall(raw, hostile)) == len(re.findall(raw, benign)), special

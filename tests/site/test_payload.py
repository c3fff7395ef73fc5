"""Data files: JSON wrapped in a register call, escaped so record text cannot break out."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import zlib

import pytest
from _fake import HOSTILE

from kernelindex_sdk.site._payload import pack, script_text

NASTY = [
    HOSTILE,
    "</SCRIPT>",
    "<!--",
    "]]>",
    "\u2028\u2029",
    "a & b > c",
    '"); alert(1); ("',
    "\\u003c",
    "\U0001f600 \ud7ff",
]


def _payload_of(text: str, key: str) -> object:
    prefix = f"window.KI.register({json.dumps(key)},"
    assert text.startswith(prefix)
    assert text.endswith(");\n")
    return json.loads(text[len(prefix) : -3])


@pytest.mark.parametrize("value", NASTY)
def test_payload_round_trips_as_json(value: str) -> None:
    payload = {value: [value, {"k": value}], "n": 1.5}
    assert (
        _payload_of(script_text("series/0123456789abcdef", payload), "series/0123456789abcdef")
        == payload
    )


@pytest.mark.parametrize("value", NASTY)
def test_script_text_holds_no_markup_or_line_separator(value: str) -> None:
    text = script_text("site", {"v": value})
    assert not re.search("[<>&\u2028\u2029]", text), text


def test_non_finite_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        script_text("site", {"v": float("nan")})


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the JS")
def test_node_reads_back_every_hostile_value() -> None:
    """A JS engine, not only a JSON parser, reads the file as the same values."""
    payload = {"values": NASTY}
    program = (
        "let got; window = {KI: {register: (k, v) => { got = [k, v]; }}};\n"
        + script_text("records/0123456789abcdef", payload)
        + "process.stdout.write(JSON.stringify(got));"
    )
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["records/0123456789abcdef", payload]


@pytest.mark.parametrize("value", NASTY)
def test_packed_payload_inflates_to_the_same_value(value: str) -> None:
    payload = {value: value * 50}
    packed = pack(payload)
    assert set(packed) == {"deflate"}
    assert re.fullmatch(r"[A-Za-z0-9+/=]*", packed["deflate"])
    assert json.loads(zlib.decompress(base64.b64decode(packed["deflate"]))) == payload

"""Regenerates tests/vectors/digests.json and published.json: `python tests/make_digest_vectors.py`.

Every vector's canonical JSON text below is written out by hand from RFC 8785 (sorted
keys by UTF-16 code units, ECMAScript number forms, minimal string escapes, no
whitespace); the script refuses to write a vector whose computed bytes differ from it.

published.json pairs input JSON texts with their published and compact forms
(docs/format.md); the number texts below are ECMAScript's, written out by hand, and the
script refuses to write a vector whose computed text differs from them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import kernelindex_sdk as ki
from kernelindex_sdk import digest

PREFIX = '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"%s","spec":'
# (description, kind, spec, canonical text of the spec as RFC 8785 writes it)
CASES: list[tuple[str, str, Any, str]] = [
    ("empty object", "Workload", {}, "{}"),
    ("empty array", "Workload", [], "[]"),
    ("key order", "Workload", {"b": 1, "a": 2, "c": 3}, '{"a":2,"b":1,"c":3}'),
    (
        "nested key order",
        "Implementation",
        {"z": {"y": 1, "x": [{"b": 0, "a": 0}]}, "a": {}},
        '{"a":{},"z":{"x":[{"a":0,"b":0}],"y":1}}',
    ),
    (
        "shorter key first only by code units",
        "Workload",
        {"ab": 1, "b": 2, "a": 3},
        '{"a":3,"ab":1,"b":2}',
    ),
    ("1.0 is 1", "Workload", {"v": 1.0}, '{"v":1}'),
    ("1 and 1.0 hash the same", "Workload", {"v": 1}, '{"v":1}'),
    ("1e21 in exponent form", "Workload", {"v": 1e21}, '{"v":1e+21}'),
    ("1e20 written out", "Workload", {"v": 1e20}, '{"v":100000000000000000000}'),
    ("1e-7 in exponent form", "Workload", {"v": 1e-7}, '{"v":1e-7}'),
    ("0.000001 written out", "Workload", {"v": 0.000001}, '{"v":0.000001}'),
    ("negative zero is 0", "Workload", {"v": -0.0}, '{"v":0}'),
    (
        "shortest round-trip digits",
        "Workload",
        {"v": 0.1, "w": 2.2883904933929444},
        '{"v":0.1,"w":2.2883904933929444}',
    ),
    ("largest safe integer", "Workload", {"v": 9007199254740991}, '{"v":9007199254740991}'),
    (
        "booleans and null",
        "Workload",
        {"t": True, "f": False, "n": None},
        '{"f":false,"n":null,"t":true}',
    ),
    (
        "escapes: quote, backslash, controls",
        "Workload",
        {"s": 'q"b\\n\nt\tc\u001f'},
        '{"s":"q\\"b\\\\n\\nt\\tc\\u001f"}',
    ),
    (
        "DEL and non-ASCII stay raw",
        "Workload",
        {"s": "\u007f\u00e9\u20ac"},
        '{"s":"\u007f\u00e9\u20ac"}',
    ),
    ("NFC e-acute", "Workload", {"s": "\u00e9"}, '{"s":"\u00e9"}'),
    ("NFD e + combining acute: another digest", "Workload", {"s": "e\u0301"}, '{"s":"e\u0301"}'),
    (
        "non-BMP character raw as 4 UTF-8 bytes",
        "Workload",
        {"s": "\U0001f600"},
        '{"s":"\U0001f600"}',
    ),
    (
        "keys sorted by UTF-16 units: U+1F600 (D83D) before U+FB33",
        "Workload",
        {"\ufb33": 1, "\U0001f600": 2},
        '{"\U0001f600":2,"\ufb33":1}',
    ),
    (
        "RFC 8785 3.2.3 sorting example",
        "Workload",
        {
            "\u20ac": "Euro Sign",
            "\r": "Carriage Return",
            "\ufb33": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\U0001f600": "Emoji: Grinning Face",
            "\u0080": "Control",
            "\u00f6": "Latin Small Letter O With Diaeresis",
        },
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ),
    ("the example's protocol spec", "BenchmarkProtocol", None, None),
    (
        "the example's environment spec",
        "ExecutionEnvironment",
        {
            "hardware": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"},
            "software": {},
        },
        '{"hardware":{"architecture":"sm_100","product":"NVIDIA B200","vendor":"nvidia"},'
        '"software":{}}',
    ),
    (
        "an environment at its defaults: no settings",
        "ExecutionEnvironment",
        {
            "hardware": {"vendor": "nvidia", "product": "NVIDIA H100 80GB HBM3"},
            "software": {"driver": "580.159.04"},
        },
        '{"hardware":{"product":"NVIDIA H100 80GB HBM3","vendor":"nvidia"},'
        '"software":{"driver":"580.159.04"}}',
    ),
    (
        "the same environment with settings changed from their defaults",
        "ExecutionEnvironment",
        {
            "hardware": {"vendor": "nvidia", "product": "NVIDIA H100 80GB HBM3"},
            "software": {"driver": "580.159.04"},
            "settings": {
                "powerLimitW": 450.5,
                "applicationsSmClockMhz": 1410,
                "applicationsMemoryClockMhz": 2619,
            },
        },
        '{"hardware":{"product":"NVIDIA H100 80GB HBM3","vendor":"nvidia"},'
        '"settings":{"applicationsMemoryClockMhz":2619,"applicationsSmClockMhz":1410,'
        '"powerLimitW":450.5},"software":{"driver":"580.159.04"}}',
    ),
]


# (description, input JSON text, its compact form written out by hand); the published
# form is the same value laid out with two-space indentation.
PUBLISHED: list[tuple[str, str, str]] = [
    ("empty object", "{}", "{}"),
    ("empty array and object as values", r'{"a": [], "b": {}}', r'{"a":[],"b":{}}'),
    ("shorter keys first", r'{"ccc": 1, "bb": 2, "a": 3}', r'{"a":3,"bb":2,"ccc":1}'),
    ("equal length: bytewise", r'{"b": 1, "B": 2, "a": 3}', r'{"B":2,"a":3,"b":1}'),
    ("length in UTF-8 bytes", r'{"\u00e9": 1, "z": 2, "ab": 3}', '{"z":2,"ab":3,"\u00e9":1}'),
    ("key beyond U+FFFF", r'{"\ud83d\ude00": 1, "abcde": 2}', '{"\U0001f600":1,"abcde":2}'),
    ("arrays keep their order", "[3, 1, 2]", "[3,1,2]"),
    # JavaScript objects enumerate integer-like keys first, in numeric order: a producer
    # must sort these itself rather than rely on an object's key order.
    ("integer-like keys sort as text", r'{"10": 1, "9": 2, "a": 3}', r'{"9":2,"a":3,"10":1}'),
    ("integral float has no fraction", r'{"v": 26624.0}', r'{"v":26624}'),
    ("negative zero is 0", r'{"v": -0.0}', r'{"v":0}'),
    ("integer", r'{"v": -5}', r'{"v":-5}'),
    ("largest safe integer", r'{"v": 9007199254740991}', r'{"v":9007199254740991}'),
    ("1e-06 written out", r'{"v": 1e-06}', r'{"v":0.000001}'),
    ("1.5e-06 written out", r'{"v": 1.5e-06}', r'{"v":0.0000015}'),
    ("1e-7 in exponent form", r'{"v": 1e-07}', r'{"v":1e-7}'),
    ("2e16 written out", r'{"v": 2e16}', r'{"v":20000000000000000}'),
    ("1e20 written out", r'{"v": 1E+20}', r'{"v":100000000000000000000}'),
    ("1e21 in exponent form", r'{"v": 1e21}', r'{"v":1e+21}'),
    ("mantissa with exponent", r'{"v": 1.5e300}', r'{"v":1.5e+300}'),
    ("negative with exponent", r'{"v": -2.5e-7}', r'{"v":-2.5e-7}'),
    ("shortest round-trip digits", r'{"v": 0.1}', r'{"v":0.1}'),
    ("shortest digits of a sum", r'{"v": 0.30000000000000004}', r'{"v":0.30000000000000004}'),
    ("smallest subnormal", r'{"v": 5e-324}', r'{"v":5e-324}'),
    ("largest double", r'{"v": 1.7976931348623157e308}', r'{"v":1.7976931348623157e+308}'),
    ("digits beyond 17 rounded", r'{"v": 123456789012345678901}', r'{"v":123456789012345680000}'),
    ("fraction", r'{"v": 2.2900800704956055}', r'{"v":2.2900800704956055}'),
    ("literals", r'{"t": true, "f": false, "n": null}', r'{"f":false,"n":null,"t":true}'),
    (
        "escapes",
        r'{"s": "q\" b\\ n\n r\r t\t b\b f\f \u0001 \u001F \/ \u007f"}',
        r'{"s":"q\" b\\ n\n r\r t\t b\b f\f \u0001 \u001f / ' + "\x7f" + '"}',
    ),
    (
        "non-ASCII as is",
        r'{"s": "\u00e9 \u00b7 \u2028 \u2029 \ud83d\ude00 \ufeff"}',
        '{"s":"\u00e9 \u00b7 \u2028 \u2029 \U0001f600 \ufeff"}',
    ),
    ("nesting", r'{"a": [{"y": 1, "x": [true]}]}', r'{"a":[{"x":[true],"y":1}]}'),
]


def published_vectors(example_text: str) -> list[dict[str, str]]:
    """Return the published-form vectors, each checked against its hand-written text."""
    vectors = []
    for description, given, compact in PUBLISHED:
        value = json.loads(given)
        got = ki.dumps(value, indent=None, validate=False)
        if got != compact:
            raise SystemExit(f"{description}: wrote {got!r}, expected {compact!r}")
        vectors.append(
            {
                "description": description,
                "input": given,
                "published": ki.dumps(value, validate=False),
                "compact": got,
            }
        )
    vectors.append(
        {
            "description": "the published example bundle",
            "input": example_text,
            "published": example_text,
            "compact": ki.dumps(json.loads(example_text), indent=None),
        }
    )
    return vectors


def main() -> None:
    here = Path(__file__).parent
    example = json.loads(
        (here / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text("utf-8")
    )
    vectors = []
    for description, kind, given, canonical in CASES:
        spec, expected_digest = given, None
        if given is None:
            # Its canonical text is long; it is checked through the published digest instead.
            spec = example["protocol"]["spec"]
            expected_digest = example["run"]["spec"]["protocolDigest"]
        data = digest.canonical_bytes(digest.preimage(kind, spec))
        if canonical is not None and data != (PREFIX % kind + canonical + "}").encode():
            raise SystemExit(f"{description}: rfc8785 wrote {data!r}")
        computed = "sha256:" + hashlib.sha256(data).hexdigest()
        if expected_digest is not None and computed != expected_digest:
            raise SystemExit(f"{description}: {computed} != published {expected_digest}")
        vectors.append(
            {
                "description": description,
                "kind": kind,
                "spec": spec,
                "canonicalHex": data.hex(),
                "digest": computed,
            }
        )
    out = here / "vectors" / "digests.json"
    out.write_text(json.dumps(vectors, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {len(vectors)} vectors to {out}")
    published = published_vectors(
        (here / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text("utf-8")
    )
    out = here / "vectors" / "published.json"
    out.write_text(json.dumps(published, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {len(published)} vectors to {out}")


if __name__ == "__main__":
    main()

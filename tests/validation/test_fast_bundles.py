"""Bundles read by their kept tail: the same readings as the plain path, line by line.

Each test reads a file through ``documents.check_documents`` twice, with the fast path on
and with ``KERNELINDEX_STRICT_READ=1``, and holds the two to the same values, problems
(with their places) and verdicts. The lines are built so that the fast path is tried on
each: every hostile line follows a valid one with the same tail.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import documents, dumps
from kernelindex_sdk.documents import check_documents
from kernelindex_sdk.validation import _fast
from kernelindex_sdk.validation._fast import bundles as _bundles

FIXTURES = Path(__file__).parent.parent / "fixtures"
BAD = Path(__file__).parent.parent / "bad"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"

Outcome = list[tuple[Any, ...]]


def readings(path: Path, *, strict: bool, **options: Any) -> tuple[Outcome, int]:
    """Each document's line, text, problems, value and repeat; and how many the fast
    path read."""
    fast = 0
    read = _bundles.BundleReader.read

    def counted(self: _bundles.BundleReader, data: bytes) -> Any:
        nonlocal fast
        value = read(self, data)
        fast += value is not None
        return value

    with pytest.MonkeyPatch.context() as patch:
        if strict:
            patch.setenv(_fast.STRICT_READ, "1")
        else:
            patch.delenv(_fast.STRICT_READ, raising=False)
        patch.setattr(_bundles.BundleReader, "read", counted)
        found = [
            (r.document.line, r.document.text, [str(p) for p in r.problems], r.value, r.repeat)
            for r in check_documents([path], **options)
        ]
    return found, fast


def both_ways(tmp_path: Path, lines: list[str], newline: str = "\n", **options: Any) -> Outcome:
    """The readings of ``lines`` as a file, asserted equal both ways; where a valid line
    follows the first, the fast path must have read it."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(newline.join(lines).encode("utf-8", "surrogatepass") + newline.encode())
    fast, fast_reads = readings(path, strict=False, **options)
    strict, strict_reads = readings(path, strict=True, **options)
    assert fast == strict
    assert strict_reads == 0
    valid_after_first = [found for found in fast[1:] if not found[2]]
    assert fast_reads > 0 or not valid_after_first
    return fast


def line(doc: dict[str, Any]) -> str:
    """As the writers write a line: compact, in the published form."""
    return dumps(doc, indent=None)


def test_the_sweep_is_read_fast_and_alike(tmp_path: Path) -> None:
    lines = SWEEP.read_text("utf-8").splitlines()
    path = tmp_path / "sweep.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    fast, fast_reads = readings(path, strict=False)
    assert fast == readings(path, strict=True)[0]
    # The first line of each tail is read in full, and teaches the tail.
    assert fast_reads == len(lines) - 1
    assert all(not problems for _, _, problems, _, _ in fast)


@pytest.mark.parametrize("options", [{}, {"repeats": True}, {"for_store": True}])
def test_merge_and_ingest_read_alike_both_ways(tmp_path: Path, options: dict[str, Any]) -> None:
    lines = SWEEP.read_text("utf-8").splitlines()
    both_ways(tmp_path, [*lines, lines[3], lines[5].replace('"median":', '"median":9')], **options)


def _named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    # bundle() numbers its runs across the session, which other modules' collection
    # advances: the lines below rename this one's by its name.
    doc["run"]["metadata"]["name"] = name
    return doc


_BASE = dumps(_named(bundle(p20=90000, p80=110000), "test-run-0"), indent=None)
_OBSERVED = '"2026-11-30T00:00:00.000Z"'
_DATES = [
    "2024-02-29", "2023-02-29", "2100-02-29", "2000-02-29", "1900-02-29", "2400-02-29",
    "2026-04-31", "2026-13-01", "2026-00-10", "2026-02-30", "2026-11-31", "2026-09-31",
    "2026-01-32", "2026-11-00", "0000-01-01", "0001-01-01", "9999-12-31", "0004-02-29",
]  # fmt: skip
_TIMES = ["T23:59:60.000Z", "T24:00:00.000Z", "T00:60:00.000Z", "T00:00:00.000Z", "T00:00:00Z"]
_NUMBERS = [
    "1e-6", "0.000001", "1.0e-6", "1E-6", "1e-06", "2.5e-6", "-1e-6", "9.999999999999999e-6",
    "0.0000015", "1e-7", "100000.0", "1e5", "4503599627370496", "4503599627370497",
    "9007199254740993", "9223372036854775807", "9223372036854775808", "9.223372036854776e18",
    "1e19", "1e16", "1e300", "-0", "-0.0", "0.0", "100000.5", "18446744073709551616",
]  # fmt: skip


def _mutations() -> list[str]:
    found = [_BASE.replace(_OBSERVED, f'"{d}{t}"') for d in _DATES for t in _TIMES[:4]]
    found += [_BASE.replace(_OBSERVED, f'"2026-11-30{t}"') for t in _TIMES]
    for n in _NUMBERS:
        found.append(_BASE.replace('"median":100000}', f'"median":{n}}}'))
        found.append(_BASE.replace('"value":90000', f'"value":{n}'))
        found.append(_BASE.replace('"unit":"ns","value":90000', f'"unit":"us","value":{n}'))
    for s in ['"x:1e-6"', '"1e-6"', '":1e-6,"', '"a,1e-6]"', '"\\ud800"', '"t\\u006frch"']:
        found.append(
            _BASE.replace(
                '"metadata":{"name":"test-run-0"}',
                f'"metadata":{{"name":"test-run-0","labels":{{"k":{s},{s}:"v"}}}}',
            )
        )
    found += [
        _BASE.replace('"status":"passed"', '"status":"passed","status":"failed"'),
        _BASE.replace('"status":"passed"', '"status":"failed","status":"passed"'),
        _BASE.replace('"median":100000}', '"median":NaN}'),
        _BASE.replace('"value":90000', '"value":Infinity'),
        _BASE.replace('{"run":', '{ "run":'),
        _BASE.replace('"nvidia-h200"}', '"nvidia-h200" }'),
        _BASE.replace(',"protocol":', ',"extra":1,"protocol":'),
        _BASE.replace('},"protocol":', '},"run":{},"protocol":', 1),
        _BASE.replace('"unit":"ns","value":90000', '"unit":"s","value":1e300'),
        _BASE + "\t",
        _BASE + "\f",
        "  \t",
    ]
    return found


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_hostile_lines_after_a_kept_tail_get_the_plain_answer(tmp_path: Path, newline: str) -> None:
    lines = []
    for i, text in enumerate(_mutations()):
        lines.append(_BASE.replace("test-run-0", f"ok-{i}"))
        lines.append(text.replace("test-run-0", f"m-{i}"))
    found = both_ways(tmp_path, lines, newline)
    assert sum(not problems for _, _, problems, _, _ in found) > len(lines) // 2


def _sweep_lines() -> list[dict[str, Any]]:
    return [json.loads(text) for text in SWEEP.read_text(encoding="utf-8").splitlines()]


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


def test_a_sweep_of_valid_and_invalid_lines_gets_the_plain_answer(tmp_path: Path) -> None:
    found = both_ways(tmp_path, [text.rstrip("\n") for text in _mixed_lines()])
    # The file holds valid lines and invalid ones, so both answers are exercised.
    assert sum(not problems for _, _, problems, _, _ in found) >= 30
    assert sum(bool(problems) for _, _, problems, _, _ in found) >= 6


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.iterdir()))
def test_no_bad_corpus_document_after_a_kept_tail_is_passed(
    name: str, example: dict[str, Any], tmp_path: Path
) -> None:
    data = (BAD / name).read_bytes()
    docs = data.splitlines() if name.endswith(".jsonl") else [data.replace(b"\n", b" ")]
    first = line(example)
    texts = [first, *(doc.decode("utf-8", "surrogateescape") for doc in docs)]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(t.encode("utf-8", "surrogateescape") for t in texts) + b"\n")
    fast, _ = readings(path, strict=False)
    assert fast == readings(path, strict=True)[0]


MUTATIONS: list[tuple[str, Any]] = [
    # (where, new value): each leaves the record invalid.
    ("run.spec.timing.latencyNs.median", 2290080.0),
    ("protocol.spec.measurement.minSamples", 100.0),
    ("environment.spec.hardware.memoryBytes", 1024.0),
    ("run.spec.sourceNative.metrics.big", 1e300),
    ("run.spec.timing.latencyNs.p20", 10**12),
    ("run.spec.timing.primaryStatistic", "p20"),
    ("protocol.spec.measurement.primaryStatistic", "mean"),
    ("run.spec.observedAt", "2026-02-30T00:00:00.000Z"),
    ("run.metadata.name", "liger\n"),
    ("protocol.metadata.name", "Bad Name"),
    ("environment.spec.unknown", 1),
    ("extra", {}),
    ("$schema", 5),
]


def _set(doc: dict[str, Any], where: str, value: Any) -> None:
    *parents, key = where.split(".") if where != "$schema" else ["$schema"]
    for part in parents:
        doc = doc[part]
    doc[key] = value


def _set(doc: dict[str, Any], where: str, value: Any) -> None:
    *parents, key = where.split(".") if where != "$schema" else ["$schema"]
    for part in parents:
        doc = doc[part]
    doc[key] = value


@pytest.mark.parametrize(("where", "value"), MUTATIONS)
def test_a_mutated_record_after_a_kept_tail_gets_the_plain_answer(
    example: dict[str, Any], where: str, value: Any, tmp_path: Path
) -> None:
    changed = copy.deepcopy(example)
    changed["run"]["metadata"]["name"] = "changed"
    _set(changed, where, value)
    texts = [line(example), json.dumps(changed, separators=(",", ":"), ensure_ascii=False)]
    # Twice: a refused tail is not kept as valid.
    found = both_ways(tmp_path, [*texts, texts[1].replace('"changed"', '"again"')])
    assert found[1][2], f"{where} = {value!r} should be invalid"
    assert found[2][2]


@pytest.mark.parametrize(
    "text",
    [
        # Duplicate keys at the top, in the run, in the protocol (kept tail or not).
        '{"run": RUN, "run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTOCOL, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
        '{"run": RUNDUP, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTODUP, "environment": ENVIRONMENT}',
        # NaN, Infinity, a number out of range, an over-long integer.
        '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT, "x": NaN}',
        '{"run": RUN, "protocol": PROTONAN, "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTOBIG, "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTOLONG, "environment": ENVIRONMENT}',
        # A lone surrogate, text after the document, a missing brace, an array.
        '{"run": RUN, "protocol": PROTOSUR, "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT} x',
        '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}}',
        '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT',
        '[{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}]',
        '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT,}',
        '\ufeff{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
        # No value where one must be, an empty document, blank text.
        '{"run": }',
        '{"run": RUN, "protocol": , "environment": ENVIRONMENT}',
        '{"run": RUN, "protocol": PROTOCOL, "environment": ',
        "{}",
        "",
        "   ",
        '{"run" RUN}',
        "{run: RUN}",
    ],
)
def test_bad_json_after_a_kept_tail_gets_the_plain_answer(
    example: dict[str, Any], text: str, tmp_path: Path
) -> None:
    example["run"]["metadata"]["name"] = "first"
    protocol = line(example["protocol"])
    assert protocol.endswith("}")
    parts = {
        "RUNDUP": line(example["run"])[:-1].replace('"first"', '"second"')
        + ', "kind": "BenchmarkRun"}',
        "PROTODUP": protocol[:-1] + ', "kind": "BenchmarkProtocol"}',
        "PROTONAN": protocol[:-1] + ', "x": NaN}',
        "PROTOBIG": protocol[:-1] + ', "x": 1e400}',
        "PROTOLONG": protocol[:-1] + ', "x": ' + "9" * 4301 + "}",
        "PROTOSUR": protocol[:-1] + ', "x": "\\ud800"}',
        "RUN": line(example["run"]).replace('"first"', '"second"'),
        "PROTOCOL": protocol,
        "ENVIRONMENT": line(example["environment"]),
    }
    for name, part in parts.items():
        text = text.replace(name, part)
    lines = [line(example), text.replace("\n", " ")]
    found = both_ways(tmp_path, lines)
    # A blank line is no document of a JSON Lines file; any other is refused.
    assert len(found) == 1 if not text.strip() else found[-1][2], text


def _repeat_key_at(text: str, key: str) -> str:
    """``text`` with the first ``"key":`` written twice (its value once before, once after)."""
    start = text.index(f'"{key}":')
    value_start = start + len(key) + 3
    value, end = json.JSONDecoder().raw_decode(text, value_start)
    del value
    member = text[start:end]
    return text[:end] + "," + member + text[end:]


@pytest.mark.parametrize(
    "key",
    ["kind", "spec", "status", "latencyNs", "median", "statistic", "labels", "name", "metadata"],
)
def test_a_run_repeating_a_key_after_a_kept_tail_gets_the_plain_answer(
    example: dict[str, Any], key: str, tmp_path: Path
) -> None:
    compact = line(example)
    repeated = _repeat_key_at(compact.replace(example["run"]["metadata"]["name"], "b"), key)
    found = both_ways(tmp_path, [compact, repeated])
    assert any("[duplicate-key]" in p for p in found[1][2]), repeated


@pytest.mark.parametrize("limit", [0, 100, 4300])
def test_over_long_integers_get_the_plain_answer_whatever_python_s_limit(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch, limit: int, tmp_path: Path
) -> None:
    monkeypatch.setattr("sys.get_int_max_str_digits", lambda: limit)
    first = line(example)
    example["run"]["metadata"]["name"] = "long"
    example["run"]["spec"]["sourceNative"]["metrics"]["long"] = "LONG"
    text = line(example).replace('"LONG"', "9" * 4301)
    found = both_ways(tmp_path, [first, text])
    assert "[integer-too-long]" in found[1][2][0]


def test_a_tail_is_kept_only_from_a_valid_line(example: dict[str, Any]) -> None:
    reader = _bundles.BundleReader()
    text = line(example).encode()
    assert reader.read(text) is None
    reader.learn(text, json.loads(text))
    example["run"]["metadata"]["name"] = "next"
    assert reader.read(line(example).encode()) == example


def test_the_table_of_tails_is_bounded(example: dict[str, Any]) -> None:
    reader = _bundles.BundleReader()
    for i in range(_bundles.MAX_TAILS + 5):
        example["environment"]["metadata"]["name"] = f"env-{i}"
        text = line(example).encode()
        reader.learn(text, json.loads(text))
    assert len(reader._tails) <= _bundles.MAX_TAILS


def test_a_tail_holding_its_own_head_is_read_in_full(
    example: dict[str, Any], tmp_path: Path
) -> None:
    """Where the environment itself holds ``,"protocol":``, the text before the last one
    is no run: nothing is learnt, every line is read in full, and alike."""
    example["environment"]["metadata"]["labels"] = {"a": "1", "protocol": "p"}
    lines = []
    for i in range(3):
        example["run"]["metadata"]["name"] = f"r{i}"
        lines.append(line(example))
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    fast, fast_reads = readings(path, strict=False)
    assert fast == readings(path, strict=True)[0]
    assert fast_reads == 0

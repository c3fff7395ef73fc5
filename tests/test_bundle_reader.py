"""The quick reader of compare: it passes a record only where the full check passes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import compare, validation
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk.validation import _bundle_reader

BAD = Path(__file__).parent / "bad"


def full_problems(text: str | bytes) -> list[Any]:
    """What compare's full path finds (as ``kernelindex validate``, digests not verified)."""
    return list(validation.iter_parsed_problems(_jsontext.parse_document(text)))


def line(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False)


def primed(example: dict[str, Any]) -> _bundle_reader.BundleReader:
    """A reader that has read the example, so that its protocol and environment are kept."""
    reader = _bundle_reader.BundleReader()
    assert reader.read(line(example)) is not None
    return reader


def test_the_reader_is_on_for_the_shipped_bundle_schema() -> None:
    assert _bundle_reader.BundleReader().enabled


def test_a_valid_bundle_reads_as_the_strict_parser_reads_it(
    example: dict[str, Any], example_text: str
) -> None:
    reader = primed(example)
    text = example_text
    assert reader.read(text) == _jsontext.parse(text)[0]
    assert reader.read(text.encode()) == example
    # Read again, from the kept tails: one per text (the indented file's, the line's).
    assert reader.read(line(example)) == example
    assert len(reader._tails) == 2


def test_the_table_of_tails_is_bounded(example: dict[str, Any]) -> None:
    reader = _bundle_reader.BundleReader()
    for i in range(_bundle_reader.MAX_TAILS + 5):
        example["environment"]["metadata"]["name"] = f"env-{i}"
        assert reader.read(line(example)) is not None
    assert len(reader._tails) <= _bundle_reader.MAX_TAILS


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.iterdir()))
def test_no_bad_corpus_document_is_passed(name: str, example: dict[str, Any]) -> None:
    data = (BAD / name).read_bytes()
    docs = data.splitlines() if name.endswith(".jsonl") else [data]
    reader = primed(example)
    for doc in docs:
        if reader.read(doc) is not None:
            assert full_problems(doc) == [], name


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


@pytest.mark.parametrize(("where", "value"), MUTATIONS)
def test_a_mutated_record_is_left_to_the_full_check(
    example: dict[str, Any], where: str, value: Any
) -> None:
    reader = primed(example)
    _set(example, where, value)
    text = line(example)
    assert full_problems(text), f"{where} = {value!r} should be invalid"
    assert reader.read(text) is None
    # Twice: a refused tail is not kept as valid.
    assert reader.read(text) is None


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
def test_bad_json_is_left_to_the_full_check(example: dict[str, Any], text: str) -> None:
    protocol = line(example["protocol"])
    assert protocol.endswith("}")
    parts = {
        "RUNDUP": line(example["run"])[:-1] + ', "kind": "BenchmarkRun"}',
        "PROTODUP": protocol[:-1] + ', "kind": "BenchmarkProtocol"}',
        "PROTONAN": protocol[:-1] + ', "x": NaN}',
        "PROTOBIG": protocol[:-1] + ', "x": 1e400}',
        "PROTOLONG": protocol[:-1] + ', "x": ' + "9" * 4301 + "}",
        "PROTOSUR": protocol[:-1] + ', "x": "\\ud800"}',
        "RUN": line(example["run"]),
        "PROTOCOL": protocol,
        "ENVIRONMENT": line(example["environment"]),
    }
    for name, part in parts.items():
        text = text.replace(name, part)
    reader = primed(example)
    assert full_problems(text)
    assert reader.read(text) is None
    assert reader.read(text.encode("utf-8", "surrogatepass")) is None


def test_compare_reads_invalid_lines_with_their_places(
    example: dict[str, Any], tmp_path: Path
) -> None:
    bad = json.loads(json.dumps(example))
    bad["run"]["spec"]["timing"]["latencyNs"]["median"] = 2290080.0
    path = tmp_path / "runs.jsonl"
    again = json.loads(json.dumps(example))
    # One input, one namespace: the third run needs a name of its own (validate's rule).
    again["run"]["metadata"]["name"] = "another-run"
    path.write_text("\n".join([line(example), line(bad), line(again)]) + "\n", "utf-8")
    runs = compare.load_runs([path])
    assert [r.source for r in runs.runs] == [f"{path}:1", f"{path}:3"]
    assert runs.invalid == 1
    [problem] = runs.problems
    assert problem.problem.pointer == "/run/spec/timing/latencyNs/median"
    assert problem.problem.line == 2


@pytest.mark.parametrize("limit", [0, 100, 4300])
def test_over_long_integers_are_left_to_the_full_check_whatever_python_s_limit(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    reader = primed(example)
    monkeypatch.setattr("sys.get_int_max_str_digits", lambda: limit)
    example["run"]["spec"]["sourceNative"]["metrics"]["long"] = "LONG"
    text = line(example).replace('"LONG"', "9" * 4301)
    assert full_problems(text)
    assert reader.read(text) is None
    example["run"]["spec"]["sourceNative"]["metrics"]["long"] = 1
    assert reader.read(line(example)) is not None


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
def test_a_run_repeating_a_key_after_a_kept_tail_is_left_to_the_full_check(
    example: dict[str, Any], key: str
) -> None:
    """The run of a line whose protocol and environment are kept is read by the quick
    reading: a key repeated at any depth of it still goes to the full check, which
    refuses it."""
    reader = primed(example)
    compact = json.dumps(example, ensure_ascii=False, separators=(",", ":"))
    assert reader.read(compact) is not None
    repeated = _repeat_key_at(compact, key)
    assert any(p.code == "duplicate-key" for p in full_problems(repeated)), repeated
    assert reader.read(repeated) is None
    assert reader.read(repeated.encode()) is None


def _must_not_run(_: object) -> None:
    raise AssertionError("the strict reader ran")


def test_the_quick_reading_takes_the_lines_that_follow_a_kept_tail(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The common line is read by the quick path, with the strict reader's value."""
    reader = primed(example)
    compact = json.dumps(example, ensure_ascii=False, separators=(",", ":")).encode()
    strict_value = _jsontext.parse(compact)[0]
    # The first read keeps the line's protocol and environment text (the kept tail).
    reader.read(compact)
    # The quick path answers through read(): with the strict reader made to fail, the
    # line still reads, to the strict reader's value.
    with monkeypatch.context() as patched:
        patched.setattr(reader, "_read", _must_not_run)
        assert reader.read(compact) == strict_value
    # And with the quick path off, the strict reader answers the same.
    monkeypatch.setattr(reader, "_quick_read", lambda _: None)
    assert reader.read(compact) == strict_value

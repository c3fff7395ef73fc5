"""Ingest refuses exactly what ``kernelindex validate`` refuses, with the same problems.

Ingest reads valid bundles through the quick reader (a file's repeated protocol and
environment read and validated once); these cases hold each hostile or invalid record
after a valid one, so that the reader has kept its protocol and environment, and
compare ingest's verdict and problems with the full check's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import documents
from kernelindex_sdk.store import open_store

BAD = Path(__file__).parent.parent / "bad"


def validate_problems(path: Path) -> list[str]:
    """What ``kernelindex validate`` reports for a file (the full check, no quick reader)."""
    return [str(p) for p in documents.validate_paths([path])]


def ingest_problems(path: Path, tmp_path: Path) -> tuple[list[str], int]:
    """The problems ingest reports for a file into a fresh store, and the runs stored."""
    with open_store(f"sqlite:///{tmp_path / 'verdicts.sqlite3'}") as store:
        report = store.ingest([path])
        stored = len(store.rows())
    return [str(p) for p in report.problems], stored


def line(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False)


def renamed(example: dict[str, Any], name: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(example))
    copy["run"]["metadata"]["name"] = name
    return copy


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.iterdir()))
def test_the_bad_corpus_gets_validate_s_verdict_and_problems(name: str, tmp_path: Path) -> None:
    path = BAD / name
    expected = validate_problems(path)
    found, stored = ingest_problems(path, tmp_path)
    assert found == expected
    if expected:
        assert stored == 0


# (text of the hostile line): RUN, PROTOCOL, ENVIRONMENT stand for the example's members.
HOSTILE = [
    '{"run": RUN, "run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOCOL, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    '{"run": RUNDUP, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTODUP, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT, "x": NaN}',
    '{"run": RUN, "protocol": PROTONAN, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOBIG, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOLONG, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOSUR, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT} x',
    '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT,}',
    '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT',
    '[{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT}]',
    '{"run": RUNFLOAT, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    '{"run": RUN, "protocol": PROTOFLOAT, "environment": ENVIRONMENT}',
    '{"run": RUNSTAT, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    '{"protocol": PROTOCOL, "environment": ENVIRONMENT, "run": RUN}',
    '{"run": RUN, "protocol": PROTOCOL, "environment": ENVIRONMENT, "extra": {}}',
    # The first line's run again: a duplicate name in one input.
    '{"run": FIRST, "protocol": PROTOCOL, "environment": ENVIRONMENT}',
    # A valid record, spaced differently: the verdict is the same, no problem.
    '{ "run" : RUN ,\t"protocol":PROTOCOL, "environment" : ENVIRONMENT }',
]


@pytest.mark.parametrize("template", HOSTILE)
def test_a_hostile_line_after_a_valid_one_gets_validate_s_verdict(
    template: str, example: dict[str, Any], tmp_path: Path
) -> None:
    first = renamed(example, "first-record")
    run = renamed(example, "hostile-record")["run"]
    protocol = line(example["protocol"])
    float_run = json.loads(json.dumps(run))
    float_run["spec"]["timing"]["latencyNs"]["median"] = 2290080.0
    stat_run = json.loads(json.dumps(run))
    stat_run["spec"]["timing"]["primaryStatistic"] = "p20"
    float_protocol = json.loads(protocol)
    float_protocol["spec"]["measurement"]["minSamples"] = 100.0
    parts = {
        "RUNDUP": line(run)[:-1] + ', "kind": "BenchmarkRun"}',
        "RUNFLOAT": line(float_run),
        "RUNSTAT": line(stat_run),
        "PROTODUP": protocol[:-1] + ', "kind": "BenchmarkProtocol"}',
        "PROTONAN": protocol[:-1] + ', "x": NaN}',
        "PROTOBIG": protocol[:-1] + ', "x": 1e400}',
        "PROTOLONG": protocol[:-1] + ', "x": ' + "9" * 4301 + "}",
        "PROTOSUR": protocol[:-1] + ', "x": "\\ud800"}',
        "PROTOFLOAT": line(float_protocol),
        "FIRST": line(first["run"]),
        "RUN": line(run),
        "PROTOCOL": protocol,
        "ENVIRONMENT": line(example["environment"]),
    }
    text = template
    for name, part in parts.items():
        text = text.replace(name, part)
    last = renamed(example, "last-record")
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join([line(first), text, line(last)]) + "\n", encoding="utf-8")
    expected = validate_problems(path)
    found, stored = ingest_problems(path, tmp_path)
    assert found == expected
    assert stored == (0 if expected else 3)


def test_the_spaced_valid_line_is_valid(example: dict[str, Any], tmp_path: Path) -> None:
    """The cases above include one valid record: the comparison is not all refusals."""
    path = tmp_path / "ok.jsonl"
    records = [renamed(example, f"record-{i}") for i in range(3)]
    path.write_text("".join(line(r) + "\n" for r in records), encoding="utf-8")
    assert validate_problems(path) == []
    assert ingest_problems(path, tmp_path) == ([], 3)

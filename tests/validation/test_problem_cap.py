"""At most MAX_PROBLEMS problems are kept for one document: the first ones, then one that
counts the rest. A 5 MB line with 70,000 problems took 460 MB to report (issue 37)."""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import compare, declared_digests, documents, merge, validation
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk.errors import RecordSetError, SchemaValidationError
from kernelindex_sdk.store import open_store
from kernelindex_sdk.validation import _registry

FIXTURES = Path(__file__).parent.parent / "fixtures"
LIMIT = validation.MAX_PROBLEMS
# Enough problems to be cut, few enough to check in a second or two.
MANY = 3000


def _many_bad_units(count: int = MANY) -> dict[str, Any]:
    """The example bundle with ``count`` latency measurements in a unit that is none."""
    doc: dict[str, Any] = json.loads((FIXTURES / "liger-jsd-forward-torch-b200.json").read_text())
    doc["run"]["spec"]["measurements"] = [
        {"unit": "xx", "value": i, "metric": "latency", "statistic": "p20"} for i in range(count)
    ]
    return doc


def _assert_cut(problems: list[Any], pointer: str = "/run/spec/measurements/{}/unit") -> None:
    """The first LIMIT problems, in the document's order, then the count of the rest."""
    assert len(problems) == LIMIT + 1
    assert [p.pointer for p in problems[:LIMIT]] == [pointer.format(i) for i in range(LIMIT)]
    last = problems[-1]
    assert last.code == "more-problems"
    assert last.message == (
        f"... and {MANY - LIMIT:,} more problems; at most {LIMIT} are kept for one document"
    )


def test_validate_keeps_the_first_problems_and_counts_the_rest() -> None:
    doc = _many_bad_units()
    _assert_cut(validation.validate(doc))
    _assert_cut(list(validation.iter_problems(json.dumps(doc))))
    with pytest.raises(SchemaValidationError) as raised:
        validation.check(doc)
    _assert_cut(list(raised.value.problems))


def test_the_schema_s_errors_are_not_all_held_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each error of python-jsonschema holds what it found: no more than LIMIT of them
    are alive at a time, however many the document has."""
    alive = weakref.WeakSet[Any]()
    most = 0
    reference = _registry.reference_validator

    class Watched:
        def __init__(self, kind: str) -> None:
            self._validator = reference(kind)

        def iter_errors(self, doc: Any) -> Any:
            nonlocal most
            for error in self._validator.iter_errors(doc):
                alive.add(error)
                most = max(most, len(alive))
                yield error

    monkeypatch.setattr(_registry, "reference_validator", Watched)
    _assert_cut(validation.validate(_many_bad_units()))
    assert LIMIT < most <= LIMIT + 2


def test_the_strict_parser_keeps_the_first_problems() -> None:
    members = ",".join(['"a":1'] * (MANY + 1))
    parsed = _jsontext.parse_document("{" + members + "}")
    assert len(parsed.problems) == 1
    many = "{" + ",".join(f'"k{i}":{{"a":1,"a":2}}' for i in range(MANY)) + "}"
    _assert_cut(_jsontext.parse_document(many).problems, "/k{}/a")


def test_a_value_s_problems_are_cut_too() -> None:
    value = {"a": [float("nan")] * MANY}
    _assert_cut(_jsontext.scan_value(value).problems, "/a/{}")


def test_the_semantic_checks_problems_are_cut_too(example: dict[str, Any]) -> None:
    measurements = example["run"]["spec"]["measurements"]
    example["run"]["spec"]["measurements"] = measurements + [measurements[0]] * MANY
    problems = validation.validate(example)
    assert len(problems) == LIMIT + 1
    assert {p.code for p in problems[:LIMIT]} == {"duplicate-measurement"}
    assert problems[-1].message.startswith(f"... and {MANY - LIMIT:,} more problems")


@pytest.fixture
def many_file(tmp_path: Path) -> Path:
    path = tmp_path / "many.jsonl"
    path.write_text(json.dumps(_many_bad_units(), separators=(",", ":")) + "\n", "utf-8")
    return path


def _file_problems(reader: str, path: Path, tmp_path: Path) -> list[Any]:
    if reader == "validate":
        return [p.problem for r in documents.check_documents([path]) for p in r.problems]
    if reader == "compare":
        return [p.problem for p in compare.load_runs([path]).problems]
    if reader == "digest":
        return [p.problem for r in declared_digests.digest_documents([path]) for p in r.problems]
    if reader == "merge":
        with pytest.raises(RecordSetError) as raised:
            merge.merge_paths([path])
        return [p.problem for p in raised.value.problems]
    with open_store(tmp_path / "s.sqlite3") as store:
        return [p.problem for p in store.ingest([path]).problems]


@pytest.mark.parametrize("reader", ["validate", "compare", "digest", "merge", "ingest"])
def test_every_reader_of_files_keeps_the_first_problems(
    reader: str, many_file: Path, tmp_path: Path
) -> None:
    problems = _file_problems(reader, many_file, tmp_path)
    _assert_cut(problems)
    # The kept problems are placed in the line; the count is the document's.
    assert all(p.line == 1 and p.column for p in problems)

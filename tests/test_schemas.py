"""The schema files: well-formed 2020-12 schemas that say what they mean."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from _paths import set_at

from kernelindex_sdk import validate
from kernelindex_sdk._schemas import BASE_URI, SCHEMA_FILES, load_schemas

SCHEMAS = sorted(load_schemas().items())
# Objects that are extension points on purpose: their description says so.
EXTENSION_POINTS = {"StringMap", "ScalarMap"}


def _objects(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield path, node
        for key, value in node.items():
            yield from _objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _objects(value, f"{path}/{i}")


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_schema_is_valid_under_the_2020_12_meta_schema(name: str, schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == BASE_URI + name
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_every_property_has_a_description(name: str, schema: dict[str, Any]) -> None:
    missing = [
        f"{path}/properties/{prop}"
        for path, obj in _objects(schema)
        for prop, sub in obj.get("properties", {}).items()
        if "description" not in sub
        # A bare reference inherits the description of what it points to.
        and not ("$ref" in sub and len(sub) == 1)
    ]
    assert missing == []


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_objects_are_closed_except_documented_extension_points(
    name: str, schema: dict[str, Any]
) -> None:
    for path, obj in _objects(schema):
        if obj.get("additionalProperties") is False:
            continue
        assert path.rsplit("/", 1)[-1] in EXTENSION_POINTS, path
        assert "extension point" in obj["description"]


def test_every_kind_has_a_schema_file() -> None:
    assert set(SCHEMA_FILES) == {
        "BenchmarkRun",
        "BenchmarkProtocol",
        "ExecutionEnvironment",
        "RecordBundle",
    }


def test_schemas_accept_the_published_example(example: dict[str, Any]) -> None:
    assert validate(example) == []


@pytest.mark.parametrize(
    ("pointer_path", "value", "code"),
    [
        (("run", "spec", "observedAt"), "2026-05-27T17:14:29Z", "pattern"),
        (("run", "spec", "observedAt"), "2026-05-27T17:14:29.000+00:00", "pattern"),
        (("run", "spec", "observedAt"), "2026-02-30T17:14:29.000Z", "format"),
        (("run", "spec", "protocolDigest"), "sha256:" + "A" * 64, "pattern"),
        (("run", "metadata", "name"), "Liger_Run", "pattern"),
        (("run", "metadata", "name"), "a" * 254, "maxLength"),
        (("run", "spec", "status"), "ok", "enum"),
        (("run", "spec", "timing", "primaryStatistic"), "average", "enum"),
        (("run", "spec", "measurements", 0, "unit"), "MB", "enum"),
        (("run", "apiVersion"), "kernelindex.dev/v1", "const"),
        (("run", "spec", "timing", "latencyNs", "median"), 2**53, "maximum"),
        (("protocol", "spec", "measurement", "timer"), "stopwatch", "enum"),
    ],
)
def test_schema_rejects_what_is_knowably_wrong(
    example: dict[str, Any], pointer_path: tuple[str | int, ...], value: Any, code: str
) -> None:
    set_at(example, pointer_path, value)
    problems = validate(example)
    pointer = "/" + "/".join(map(str, pointer_path))
    assert [(p.pointer, p.code) for p in problems] == [(pointer, code)]


@pytest.mark.parametrize("stamp", ["2026-02-30T17:14:29.000Z", "2026-04-31T00:00:00.000Z"])
def test_a_bad_timestamp_is_rejected_by_format_checking(
    example: dict[str, Any], stamp: str
) -> None:
    """python-jsonschema skips date-time silently without a checker; ours has one.

    The pattern accepts these days (it knows no month lengths): only format rejects them.
    """
    example["run"]["spec"]["observedAt"] = stamp
    assert [(p.pointer, p.code) for p in validate(example)] == [("/run/spec/observedAt", "format")]


def test_failed_run_needs_a_failure_and_no_timing(example: dict[str, Any]) -> None:
    example["run"]["spec"]["status"] = "failed"
    problems = validate(example)
    assert ("/run/spec", "required") in [(p.pointer, p.code) for p in problems]
    assert ("/run/spec/timing", "not") in [(p.pointer, p.code) for p in problems]


def test_failed_run_with_a_reason_is_valid(example: dict[str, Any]) -> None:
    spec = example["run"]["spec"]
    spec["status"] = "failed"
    del spec["timing"]
    del spec["measurements"]
    spec["failure"] = {"reason": "mismatch", "message": "max abs error 0.5 > atol 1e-05"}
    assert validate(example) == []


def test_a_passed_run_cannot_carry_a_failure(example: dict[str, Any]) -> None:
    example["run"]["spec"]["failure"] = {"reason": "error", "message": "boom"}
    assert [(p.pointer, p.code) for p in validate(example)] == [("/run/spec/failure", "not")]

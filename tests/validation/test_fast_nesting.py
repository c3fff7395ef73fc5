"""The nesting bound of a schema: no valid value nests deeper, and an open schema has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import validation
from kernelindex_sdk._base.schemas import SCHEMA_FILES, load_schemas
from kernelindex_sdk._json import text as validation_text
from kernelindex_sdk._json.walk import MAX_DEPTH
from kernelindex_sdk.validation import _registry
from kernelindex_sdk.validation._fast import bundles
from kernelindex_sdk.validation._fast import nesting as _nesting
from kernelindex_sdk.validation._fast.nesting import _Bounds, nesting_bound

FIXTURES = Path(__file__).parent.parent / "fixtures"


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def test_every_kind_has_a_small_bound() -> None:
    for kind in SCHEMA_FILES:
        bound = nesting_bound(kind)
        assert bound is not None, kind
        assert 1 <= bound < MAX_DEPTH // 2, (kind, bound)


def test_real_records_nest_within_the_bound() -> None:
    runs = [
        json.loads(line)["run"]
        for line in (FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()
    ]
    bound = nesting_bound("BenchmarkRun")
    assert bound is not None
    assert max(depth(run) for run in runs) <= bound


def test_a_run_nested_past_the_bound_is_invalid() -> None:
    """What makes the bound safe to rely on: the schema refuses a deeper run."""
    run = json.loads((FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()[0])["run"]
    bound = nesting_bound("BenchmarkRun")
    assert bound is not None
    places = [
        ("workload", "parameters", "tokens"),
        ("implementation", "packages", "torch"),
        ("timing", "latencyNs", "median"),
    ]
    for path in places:
        deep = json.loads(json.dumps(run))
        node = deep["spec"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = [[[]]]
        assert depth(deep) > bound
        assert not _registry.fast_is_valid("BenchmarkRun", deep), path
        assert validation.validate(deep), path


@pytest.mark.parametrize(
    "schema",
    [
        True,
        {},
        {"type": "object"},
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "array"},
        {"type": "object", "additionalProperties": True},
        {"type": "object", "additionalProperties": {"type": "object"}},
        {"type": ["object", "array"], "additionalProperties": False},
        {"anyOf": [{"type": "string"}, {}]},
        {"$ref": "#/$defs/Loop", "$defs": {"Loop": {"$ref": "#/$defs/Loop"}}},
        {"$ref": "missing.json"},
        # Embedded resources and dynamic references are not followed.
        {"type": "object", "additionalProperties": {"$id": "other.json", "type": "string"}},
        {"$dynamicRef": "#meta", "type": "string"},
    ],
)
def test_an_open_schema_gives_no_bound(schema: Any) -> None:
    assert _Bounds({"x.json": schema}).of(schema, "x.json", frozenset()) is None


@pytest.mark.parametrize(
    ("schema", "bound"),
    [
        (False, 0),
        ({"type": "string"}, 0),
        ({"type": "object", "additionalProperties": False}, 1),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, 1),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "number"}}},
                "additionalProperties": False,
            },
            2,
        ),
        ({"anyOf": [{"type": "string"}, {"const": {"a": [1]}}]}, 2),
        ({"enum": [1, [2]]}, 1),
        ({"allOf": [{}, {"type": "null"}]}, 0),
        # A tree type that refers to itself: bounded only by its other keywords.
        (
            {
                "$ref": "#/$defs/Tree",
                "type": "string",
                "$defs": {
                    "Tree": {
                        "type": "object",
                        "additionalProperties": {"$ref": "#/$defs/Tree"},
                    }
                },
            },
            0,
        ),
    ],
)
def test_a_closed_schema_gives_the_deepest_valid_nesting(schema: Any, bound: int) -> None:
    assert _Bounds({"x.json": schema}).of(schema, "x.json", frozenset()) == bound


def test_the_bound_follows_references_between_files() -> None:
    schemas = load_schemas()
    run = schemas[SCHEMA_FILES["BenchmarkRun"]]
    assert _nesting._Bounds(schemas).of(run, SCHEMA_FILES["BenchmarkRun"], frozenset()) == (
        nesting_bound("BenchmarkRun")
    )


@pytest.mark.parametrize("levels", [3, MAX_DEPTH, MAX_DEPTH + 5])
def test_a_deep_run_after_a_kept_tail_goes_to_the_full_check(levels: int) -> None:
    """The bundle reader counts no brackets in a run: one nested too deep (for the schema,
    or past the parser's limit) is refused by the schema and checked in full."""
    lines = (FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()
    reader = bundles.BundleReader()
    assert reader._run_brackets is None
    reader.learn(lines[0].encode(), json.loads(lines[0]))
    assert reader.read(lines[1].encode()) is not None
    head, _, rest = lines[1].partition('"tokens":')
    digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
    deep = head + '"tokens":' + "[" * levels + digits + "]" * levels + rest[len(digits) :]
    assert reader.read(deep.encode()) is None
    parsed = validation_text.parse_document(deep.encode())
    problems = parsed.problems or list(validation.iter_parsed_problems(parsed))
    assert problems

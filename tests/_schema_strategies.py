"""Hypothesis strategies for documents of each kind, from the packaged schemas.

hypothesis-jsonschema resolves no references to other files, so the schemas are
inlined first. Two shapes are rewritten for the generator only, and the rewritten
schemas admit a subset of what the real ones do:
- observedAt: a pattern-only form whose days stop at 28 (pattern plus format makes
  the generator filter almost every candidate);
- the run spec's if/then/else on status: split into a failed and a not-failed
  variant (the generator's merging of conditionals is very slow).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from kernelindex_sdk._base.schemas import BASE_URI, SCHEMA_FILES, load_schemas
from kernelindex_sdk.validation import registry

GENERATED_TIMESTAMP = (
    "^(19[7-9][0-9]|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
    "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z$"
)
_DROP = ("$defs", "$id", "$schema", "title")


def inline(node: Any, base: str) -> Any:
    """Return ``node`` with every ``$ref`` replaced by what it points to."""
    if isinstance(node, list):
        return [inline(v, base) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        uri = base + ref if ref.startswith("#") else BASE_URI + ref
        target = registry().resolver().lookup(uri).contents
        resolved = {k: v for k, v in inline(target, uri.split("#")[0]).items() if k not in _DROP}
        siblings = {k: v for k, v in node.items() if k not in ("$ref", "description")}
        return {**resolved, **inline(siblings, base)}
    return {k: inline(v, base) for k, v in node.items() if k != "$defs"}


def inlined_schema(kind: str) -> dict[str, Any]:
    name = SCHEMA_FILES[kind]
    return inline(load_schemas()[name], BASE_URI + name)  # type: ignore[no-any-return]


def _run_variants(run: dict[str, Any]) -> list[dict[str, Any]]:
    spec = run["properties"]["spec"]
    spec["properties"]["observedAt"] = {"type": "string", "pattern": GENERATED_TIMESTAMP}
    for key in ("if", "then", "else"):
        spec.pop(key)
    failed, ok = copy.deepcopy(run), copy.deepcopy(run)
    failed_spec = failed["properties"]["spec"]
    failed_spec["properties"]["status"] = {"const": "failed"}
    failed_spec["required"] = [*failed_spec["required"], "failure"]
    del failed_spec["properties"]["timing"]
    ok_spec = ok["properties"]["spec"]
    ok_spec["properties"]["status"] = {"enum": ["passed", "unverified"]}
    del ok_spec["properties"]["failure"]
    return [failed, ok]


def documents(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Documents of ``kind`` (or ``RecordBundle``) that the real schema accepts."""
    if kind == "BenchmarkRun":
        return st.one_of(*(from_schema(s) for s in _run_variants(inlined_schema(kind))))
    if kind == "RecordBundle":
        runs = documents("BenchmarkRun")
        protocols = documents("BenchmarkProtocol")
        environments = documents("ExecutionEnvironment")
        return st.fixed_dictionaries(
            {"run": runs}, optional={"protocol": protocols, "environment": environments}
        )
    return from_schema(inlined_schema(kind))

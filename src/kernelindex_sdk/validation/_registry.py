"""The schemas compiled: the ``referencing`` registry, jsonschema-rs and the strict copies.

jsonschema-rs decides whether a document is valid (it follows ECMA-262 regular
expressions as JSON Schema requires); python-jsonschema, through the registry, gives the
detail of each problem. The strict copies refuse an integral float (``2.0``) in an
integer field, as the published form does. jsonschema-rs runs the patterns as
``_fast.patterns`` writes them, unless the fast paths are off (``_fast.switch``).
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
import jsonschema_rs
import referencing
from referencing.jsonschema import DRAFT202012

from .._base.schemas import BASE_URI, SCHEMA_FILES, load_schemas
from ..errors import Problem
from . import _messages
from ._fast import patterns as _fast_patterns
from ._fast import switch as _fast_switch

__all__ = [
    "fast_is_valid",
    "fast_problems",
    "fast_validator",
    "is_valid",
    "reference_validator",
    "registry",
    "strict_fast_validator",
]


@functools.cache
def registry() -> referencing.Registry[Any]:
    """Return the ``referencing`` registry of the packaged schemas; it never fetches."""
    resources = [
        (BASE_URI + name, DRAFT202012.create_resource(schema))
        for name, schema in load_schemas().items()
    ]
    return referencing.Registry().with_resources(resources).crawl()


@functools.cache
def strict_registry() -> referencing.Registry[Any]:
    # python-jsonschema picks the validator class of each resource it enters from the
    # resource's "$schema", which would swap the strict class for the stock one: these
    # copies leave "$schema" out, so the strict class is kept throughout.
    resources = [
        (
            BASE_URI + name,
            DRAFT202012.create_resource({k: v for k, v in schema.items() if k != "$schema"}),
        )
        for name, schema in load_schemas().items()
    ]
    return referencing.Registry().with_resources(resources).crawl()


@functools.cache
def reference_validator(kind: str) -> jsonschema.protocols.Validator:
    schema = {"$ref": BASE_URI + SCHEMA_FILES[kind]}
    format_checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    validator: jsonschema.protocols.Validator = _StrictValidator(
        schema, registry=strict_registry(), format_checker=format_checker
    )
    return validator


@functools.cache
def _rs_schemas(for_speed: bool) -> dict[str, Any]:
    schemas = load_schemas()
    if not for_speed:
        return schemas
    return {name: _fast_patterns.for_speed(schema) for name, schema in schemas.items()}


def fast_validator(kind: str) -> Any:
    """jsonschema-rs's validator of ``kind`` (its patterns as :mod:`._fast.patterns` makes
    them, unless the fast paths are off)."""
    return _fast_validator(kind, _fast_switch.enabled())


@functools.cache
def _fast_validator(kind: str, for_speed: bool) -> Any:
    schemas = _rs_schemas(for_speed)
    rs_registry = jsonschema_rs.Registry([(BASE_URI + name, s) for name, s in schemas.items()])
    return jsonschema_rs.validator_for(
        schemas[SCHEMA_FILES[kind]], registry=rs_registry, validate_formats=True
    )


# A keyword of our own beside every integer type of the strict copies of the schemas.
_STRICT_INTEGER = "x-kernelindex-strictInteger"


class _StrictInteger:
    """jsonschema-rs keyword: an integer is written without a fraction (``2``, not ``2.0``).

    jsonschema-rs, as JSON Schema allows, takes ``2.0`` for an integer; the published
    form does not. jsonschema-rs calls the keyword only where the schema says integer,
    at a fraction of a microsecond a call.
    """

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        del parent_schema, value, schema_path

    def validate(self, instance: Any) -> None:
        if type(instance) is float:
            raise ValueError(f"{instance!r} is not an integer; write it without a fraction")


def _strict_schema(node: Any) -> Any:
    """A copy of a schema in which every integer type also refuses floats."""
    if isinstance(node, list):
        return [_strict_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    copy = {k: _strict_schema(v) for k, v in node.items()}
    types = node.get("type")
    types = [types] if isinstance(types, str) else types
    if isinstance(types, list) and "integer" in types and "number" not in types:
        copy[_STRICT_INTEGER] = True
    return copy


def strict_fast_validator(kind: str) -> Any:
    """:func:`fast_validator` of the strict copy of ``kind``'s schema."""
    return _strict_fast_validator(kind, _fast_switch.enabled())


@functools.cache
def _strict_fast_validator(kind: str, for_speed: bool) -> Any:
    schemas = {name: _strict_schema(schema) for name, schema in _rs_schemas(for_speed).items()}
    rs_registry = jsonschema_rs.Registry([(BASE_URI + name, s) for name, s in schemas.items()])
    return jsonschema_rs.validator_for(
        schemas[SCHEMA_FILES[kind]],
        registry=rs_registry,
        validate_formats=True,
        keywords={_STRICT_INTEGER: _StrictInteger},
    )


def fast_is_valid(kind: str, doc: Any, *, strict: bool = False) -> bool:
    """jsonschema-rs's verdict; ``strict`` also refuses integral floats in integer fields."""
    return is_valid(strict_fast_validator(kind) if strict else fast_validator(kind), doc)


def is_valid(validator: Any, doc: Any) -> bool:
    """A jsonschema-rs validator's verdict on ``doc``."""
    try:
        return bool(validator.is_valid(doc))
    except (ValueError, TypeError):
        # scan_value() has refused what jsonschema-rs cannot take; should anything
        # still slip through, it is not valid.
        return False


def fast_problems(kind: str, doc: Any, *, strict: bool = False) -> list[Problem]:
    """Problems as jsonschema-rs reports them, for when python-jsonschema finds none."""
    validator = strict_fast_validator(kind) if strict else fast_validator(kind)
    try:
        problems = [
            p for e in validator.iter_errors(doc) for p in _messages.problems_from_fast_error(e)
        ]
    except (ValueError, TypeError) as err:
        problems = [
            Problem(
                pointer="",
                message=f"jsonschema-rs cannot read the document: {err}",
                code="json-value",
            )
        ]
    return problems or [
        Problem(
            pointer="",
            message="jsonschema-rs refuses the document but gives no detail",
            code="schema",
        )
    ]


def _is_strict_integer(_: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer)
_StrictValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, type_checker=_STRICT_TYPES
)

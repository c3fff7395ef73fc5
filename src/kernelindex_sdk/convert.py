"""Conversion between the generated models and JSON: converter, loaders, published form."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)

from . import validation
from ._base.display import short_repr
from ._base.schemas import BUNDLE
from ._base.timestamps import format_observed_at, parse_observed_at
from ._json import text as _jsontext
from ._json.converter import (
    as_json,
    configure_converter,
    default_converter,
    make_converter,
    wire_names,
)
from ._json.published import published_text
from ._json.value import check_json_value
from .errors import ArgumentError, CanonicalizationError, Problem, SchemaValidationError
from .models import (
    BenchmarkProtocol,
    BenchmarkRun,
    ExecutionEnvironment,
    RecordBundle,
)

__all__ = [
    "as_json",
    "configure_converter",
    "dump",
    "dumps",
    "format_observed_at",
    "load_environment",
    "load_protocol",
    "load_record",
    "load_run",
    "make_converter",
    "parse_observed_at",
]

T = TypeVar("T")


def _structure_problems(exc: BaseException, pointer: str = "") -> Iterator[Problem]:
    """Turn cattrs' nested errors into problems whose pointers use wire names."""
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield Problem(
                pointer=f"{pointer}/{_jsontext.escape_token(key)}",
                message=f"unknown key {key!r}",
                code="additionalProperties",
            )
        return
    if isinstance(exc, ClassValidationError):
        wire = wire_names(exc.cl) if attrs.has(exc.cl) else {}
        with_notes, without_notes = exc.group_exceptions()
        for sub, note in with_notes:
            token = _jsontext.escape_token(wire.get(note.name, note.name))
            if isinstance(sub, KeyError):
                yield Problem(
                    pointer=pointer,
                    message=f"{wire.get(note.name, note.name)!r} is a required property",
                    code="required",
                )
            else:
                yield from _structure_problems(sub, f"{pointer}/{token}")
        for sub in without_notes:
            yield from _structure_problems(sub, pointer)
        return
    if isinstance(exc, IterableValidationError):
        with_index, rest = exc.group_exceptions()
        for sub, inote in with_index:
            yield from _structure_problems(sub, f"{pointer}/{_jsontext.escape_token(inote.index)}")
        for sub in rest:
            yield from _structure_problems(sub, pointer)
        return
    if isinstance(exc, cattrs.BaseValidationError):
        for sub in exc.exceptions:
            yield from _structure_problems(sub, pointer)
        return
    yield Problem(pointer=pointer, message=str(exc), code="type")


def _json_problem(err: CanonicalizationError) -> Problem:
    return Problem(pointer=err.pointer, message=err.reason, code="json")


def _load(doc: Any, cls: type[T], kind: str, *, validate: bool, verify_digests: bool) -> T:
    text: str | None = None
    if isinstance(doc, (str, bytes, bytearray)):
        value, text, problems = _jsontext.parse(bytes(doc) if isinstance(doc, bytearray) else doc)
        if problems:
            raise SchemaValidationError(problems=problems)
    else:
        value = doc
    # Parsed text can hold what no record may (a lone surrogate from a \ud800 escape),
    # and a Python value anything (NaN, a cycle, deep nesting): refuse both here, with a
    # printable pointer, before validation or conversion meets them.
    try:
        check_json_value(value)
    except CanonicalizationError as err:
        raise SchemaValidationError(
            problems=list(_jsontext.located([_json_problem(err)], text))
        ) from err
    if validate:
        problems = validation.validate(value, kind=kind, text=text, verify_digests=verify_digests)
        if problems:
            raise SchemaValidationError(problems=problems)
    try:
        return default_converter.structure(value, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as err:
        found = list(_jsontext.located(_structure_problems(err), text))
        raise SchemaValidationError(problems=found) from err


def load_record(
    doc: dict[str, Any] | str | bytes, *, validate: bool = True, verify_digests: bool = False
) -> RecordBundle:
    """Load a record bundle (``{run, protocol?, environment?}``) into its model.

    Args:
        doc: The bundle as a parsed JSON object, or as JSON text (str or bytes),
            which is parsed strictly: duplicate keys and NaN are rejected.
        validate: Check the document against the schema and the semantic checks
            first. The models do not enforce patterns, lengths or bounds, so turn
            this off only for documents already validated.
        verify_digests: Also recompute every digest the bundle's content allows.

    Raises:
        SchemaValidationError: listing every problem, with JSON pointers in wire
            names (and lines and columns for text input).
    """
    return _load(doc, RecordBundle, BUNDLE, validate=validate, verify_digests=verify_digests)


def load_run(doc: dict[str, Any] | str | bytes, *, validate: bool = True) -> BenchmarkRun:
    """Load a ``BenchmarkRun`` document; see :func:`load_record`."""
    return _load(doc, BenchmarkRun, "BenchmarkRun", validate=validate, verify_digests=False)


def load_protocol(doc: dict[str, Any] | str | bytes, *, validate: bool = True) -> BenchmarkProtocol:
    """Load a ``BenchmarkProtocol`` document; see :func:`load_record`."""
    return _load(
        doc, BenchmarkProtocol, "BenchmarkProtocol", validate=validate, verify_digests=False
    )


def load_environment(
    doc: dict[str, Any] | str | bytes, *, validate: bool = True
) -> ExecutionEnvironment:
    """Load an ``ExecutionEnvironment`` document; see :func:`load_record`."""
    return _load(
        doc, ExecutionEnvironment, "ExecutionEnvironment", validate=validate, verify_digests=False
    )


def dump(obj: Any) -> Any:
    """Return the JSON value (dicts, lists, scalars) of a model instance, with wire names.

    This is the value, not the published text: it is not validated (a model of part of a
    record, such as a ``Workload``, has no record schema of its own); :func:`dumps`
    validates what it writes. What the model holds where the schema has a scalar is
    returned as it is: a dict there that contains itself stays so, and :func:`dumps`,
    :func:`~kernelindex_sdk.validate` and the digests report it.

    Raises:
        CanonicalizationError: when the model nests models too deep to convert.
    """
    return as_json(obj)


def dumps(obj: Any, *, indent: int | None = 2, validate: bool = True) -> str:
    """Return the published form of a record (docs/format.md), validated first.

    Keys of every object in PostgreSQL ``jsonb`` order (shorter UTF-8 first, then
    bytewise), two-space indentation, strings escaped as ``JSON.stringify`` does, numbers
    in ECMAScript's form (``26624.0`` is written ``26624``, ``1e-06`` ``0.000001``), and a
    final newline. ``indent=None`` gives the compact JSON Lines form: one line, no newline.

    Args:
        obj: A record (a model instance, or its JSON value).
        indent: 2 for the published form, ``None`` for one compact line; no other
            value is a published form, so any other is refused.
        validate: Check the record against the schema and the semantic checks first;
            turn it off only for a value just validated, or to write a JSON value that is
            not a record.

    Raises:
        CanonicalizationError: when the value has no JSON text (NaN, an infinity, a lone
            surrogate, a cycle, nesting deeper than 128 levels, a non-string key).
        SchemaValidationError: when ``validate`` and the record is invalid.
        ArgumentError: when ``indent`` is neither 2 nor ``None``.
    """
    # `type() is int`: True == 1 but is no width.
    if indent is not None and not (type(indent) is int and indent == 2):
        raise ArgumentError(
            argument="indent",
            reason=f"expected 2 (the published form) or None (compact), got {short_repr(indent)}",
        )
    value = as_json(obj)
    check_json_value(value)
    if validate:
        problems = validation.validate(value)
        if problems:
            raise SchemaValidationError(problems=problems)
    return published_text(value, indent=indent)

"""Conversion between the generated models and JSON: converter, loaders, published form."""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from . import _jsontext, validation
from ._messages import short_repr
from ._schemas import BUNDLE
from .errors import Problem, SchemaValidationError
from .models import (
    BenchmarkProtocol,
    BenchmarkRun,
    ExecutionEnvironment,
    RecordBundle,
    Scalar,
)

__all__ = [
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

_OBSERVED_AT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_OBSERVED_AT_LENGTH = len("2026-05-27T17:14:29.000Z")


def parse_observed_at(text: str) -> datetime:
    """Parse the published timestamp form (``2026-05-27T17:14:29.000Z``) into an aware UTC datetime.

    Raises:
        ValueError: for any other form.
    """
    if len(text) != _OBSERVED_AT_LENGTH or text[19] != ".":
        raise ValueError(f"expected a UTC timestamp like '2026-05-27T17:14:29.000Z', got {text!r}")
    return datetime.strptime(text, _OBSERVED_AT_FORMAT).replace(tzinfo=timezone.utc)


def format_observed_at(moment: datetime) -> str:
    """Write an aware datetime in the published form: UTC, milliseconds (truncated), ``Z``.

    Raises:
        ValueError: for a naive datetime, whose instant is unknown.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"observedAt needs a timezone-aware datetime, got naive {moment!r}")
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _exact(kind: type, name: str) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        # type() rather than isinstance(): bool is an int subclass and must not pass as one.
        if type(value) is not kind:
            raise TypeError(f"expected {name}, got {short_repr(value)}")
        return value

    return structure


def _structure_number(value: Any, _: Any) -> float:
    # Keep ints as ints so that dump(load(d)) == d and the published bytes stay equal.
    if type(value) not in (int, float):
        raise TypeError(f"expected a number, got {short_repr(value)}")
    return value  # type: ignore[no-any-return]


def _structure_scalar(value: Any, _: Any) -> Scalar:
    if type(value) not in (str, bool, int, float):
        raise TypeError(f"expected a string, boolean or number, got {short_repr(value)}")
    return value  # type: ignore[no-any-return]


def _structure_datetime(value: Any, _: Any) -> datetime:
    if type(value) is not str:
        raise TypeError(f"expected a timestamp string, got {short_repr(value)}")
    return parse_observed_at(value)


def _is_optional(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def _wire_names(cls: type) -> dict[str, str]:
    return {a.name: a.metadata.get("wire", a.name) for a in attrs.fields(cls)}


def configure_converter(converter: cattrs.Converter) -> None:
    """Register kernelindex's hooks on ``converter``.

    - Strict primitives: no coercion; ``"5"`` never becomes 5 nor 5 ``"5"``, booleans
      are not integers, and integers stay integers where the schema says number.
    - Wire names in camelCase (from each field's ``wire`` metadata), attributes in
      snake_case; unknown keys are rejected.
    - Absent optional fields stay absent when dumped; an explicit ``null`` is rejected,
      since no schema field admits it.
    - ``observedAt`` is an aware ``datetime``, written in the published UTC form.
    """
    converter.register_structure_hook(str, _exact(str, "a string"))
    converter.register_structure_hook(int, _exact(int, "an integer"))
    converter.register_structure_hook(bool, _exact(bool, "a boolean"))
    converter.register_structure_hook(float, _structure_number)
    converter.register_structure_hook(Scalar, _structure_scalar)
    converter.register_structure_hook(datetime, _structure_datetime)
    converter.register_unstructure_hook(datetime, format_observed_at)

    def optional_hook(tp: Any) -> Callable[[Any, Any], Any]:
        inner_args = tuple(a for a in get_args(tp) if a is not type(None))
        inner: Any = inner_args[0] if len(inner_args) == 1 else Union[inner_args]  # noqa: UP007

        def structure(value: Any, _: Any) -> Any:
            if value is None:
                raise TypeError("expected a value, got null")
            return converter.structure(value, inner)

        return structure

    converter.register_structure_hook_factory(_is_optional, optional_hook)

    def structure_attrs(cls: Any) -> Any:
        renames: dict[str, Any] = {
            n: override(rename=w) for n, w in _wire_names(cls).items() if n != w
        }
        return make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **renames)

    def unstructure_attrs(cls: Any) -> Any:
        renames: dict[str, Any] = {
            n: override(rename=w) for n, w in _wire_names(cls).items() if n != w
        }
        return make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True, **renames)

    converter.register_structure_hook_factory(attrs.has, structure_attrs)
    converter.register_unstructure_hook_factory(attrs.has, unstructure_attrs)


def make_converter() -> cattrs.Converter:
    """Return a new converter configured by :func:`configure_converter`."""
    converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
    configure_converter(converter)
    return converter


_converter = make_converter()


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
        wire = _wire_names(exc.cl) if attrs.has(exc.cl) else {}
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


def _load(doc: Any, cls: type[T], kind: str, *, validate: bool, verify_digests: bool) -> T:
    text: str | None = None
    if isinstance(doc, (str, bytes, bytearray)):
        value, text, problems = _jsontext.parse(bytes(doc) if isinstance(doc, bytearray) else doc)
        if problems:
            raise SchemaValidationError(problems=problems)
    else:
        value = doc
    if validate:
        problems = validation.validate(value, kind=kind, text=text, verify_digests=verify_digests)
        if problems:
            raise SchemaValidationError(problems=problems)
    try:
        return _converter.structure(value, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as err:
        raise SchemaValidationError(problems=list(_structure_problems(err))) from err


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
    """Return the JSON value (dicts, lists, scalars) of a model instance, with wire names."""
    return _converter.unstructure(obj)


def _published_order(value: Any) -> Any:
    # PostgreSQL jsonb order: shorter keys first (UTF-8 length), then bytewise.
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _published_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_published_order(v) for v in value]
    return value


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """Return the published form of a model instance (or of its JSON value).

    The published form is ``json.dumps(doc, indent=2, ensure_ascii=False)`` plus a
    final newline, with every object's keys in PostgreSQL ``jsonb`` order (shorter
    first, then bytewise), as the index that publishes records stores them.

    Args:
        obj: A model instance, or a JSON value (dict or list).
        indent: ``None`` gives one compact line without a newline: a JSON Lines record.
    """
    value = _published_order(obj if isinstance(obj, (dict, list)) else dump(obj))
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, indent=indent, ensure_ascii=False) + "\n"

"""Problems from python-jsonschema errors: wire-name pointers and messages people can act on.

One small function per keyword, as jsonschema's own _keywords.py is laid out; any
keyword without one keeps jsonschema's message.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Any

from jsonschema.exceptions import ValidationError

from .._base.display import short_repr
from .._base.schemas import load_schemas
from .._json.text import escape_token
from ..errors import Problem

__all__ = [
    "pattern_message",
    "problems_from_error",
    "problems_from_fast_error",
]

_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _pointer(path: Any) -> str:
    return "".join(f"/{escape_token(p)}" for p in path)


def _type_name(schema: Any) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        return " or ".join(_TYPE_NAMES.get(str(k), str(k)) for k in kind)
    return _TYPE_NAMES.get(kind, "a value") if isinstance(kind, str) else "a value"


def _value(e: ValidationError) -> Any:
    return e.validator_value


def _instance(e: ValidationError) -> Any:
    return e.instance


def _schema(e: ValidationError) -> Any:
    return e.schema


def _type(e: ValidationError) -> str:
    instance = _instance(e)
    message = f"expected {_type_name(_schema(e))}, got {short_repr(instance)}"
    if type(instance) is float and instance.is_integer() and "integer" in str(_value(e)):
        message += "; write an integer without a fractional part"
    return message


def _minimum(e: ValidationError) -> str:
    return f"expected {_type_name(_schema(e))} >= {_value(e)}, got {short_repr(_instance(e))}"


def _maximum(e: ValidationError) -> str:
    return f"expected {_type_name(_schema(e))} <= {_value(e)}, got {short_repr(_instance(e))}"


def pattern_message(pattern: str, instance: Any) -> str:
    """The message for a string that fails ``pattern``, shown as the schema writes it."""
    # The regex as written (not repr, which doubles each backslash); a string that
    # differs only by a final newline says so, since it is easy to miss.
    message = f"expected a string matching {_quote_pattern(pattern)}, got {short_repr(instance)}"
    if isinstance(instance, str) and instance.endswith("\n"):
        message += " (ends with a newline)"
    return message


def _quote_pattern(pattern: str) -> str:
    return "/" + pattern.replace("\n", "\\n") + "/"


def _pattern(e: ValidationError) -> str:
    return pattern_message(str(_value(e)), _instance(e))


def _min_length(e: ValidationError) -> str:
    return f"expected at least {_value(e)} characters, got {short_repr(_instance(e))}"


def _max_length(e: ValidationError) -> str:
    return f"expected at most {_value(e)} characters, got {len(_instance(e))}"


def _const(e: ValidationError) -> str:
    return f"expected {_value(e)!r}, got {short_repr(_instance(e))}"


def _enum(e: ValidationError) -> str:
    choices = ", ".join(repr(v) for v in _value(e))
    return f"expected one of {choices}, got {short_repr(_instance(e))}"


def _format(e: ValidationError) -> str:
    return f"expected a valid {_value(e)}, got {short_repr(_instance(e))}"


def _min_properties(e: ValidationError) -> str:
    return f"expected at least {_value(e)} member(s), got {short_repr(_instance(e))}"


def _any_of(e: ValidationError) -> str:
    return _any_of_message(_schema(e), _instance(e))


def _any_of_message(schema: Any, instance: Any) -> str:
    # What the schema wants, in its definition's words; without a description, the
    # branches' types.
    description = str(schema.get("description", "")).rstrip(".")
    if description:
        return f"expected {description[0].lower()}{description[1:]}, got {short_repr(instance)}"
    kinds = [_type_name(s) for s in schema["anyOf"] if isinstance(s, dict) and "type" in s]
    expected = ", ".join(dict.fromkeys(kinds)) or "a matching value"
    return f"expected one of: {expected} (within bounds), got {short_repr(instance)}"


_MESSAGES: dict[str, Callable[[ValidationError], str]] = {
    "type": _type,
    "minimum": _minimum,
    "maximum": _maximum,
    "pattern": _pattern,
    "minLength": _min_length,
    "maxLength": _max_length,
    "const": _const,
    "enum": _enum,
    "format": _format,
    "minProperties": _min_properties,
    "anyOf": _any_of,
}


def _unknown_keys(e: ValidationError, pointer: str) -> Iterator[Problem]:
    known = list(_schema(e).get("properties", {}))
    for key in _instance(e):
        if key in known:
            continue
        hint = difflib.get_close_matches(key, known, n=1)
        suffix = (
            f"; did you mean {hint[0]!r}?"
            if hint
            else f"; expected one of {', '.join(map(repr, known))}"
            if known
            else ""
        )
        yield Problem(
            pointer=f"{pointer}/{escape_token(key)}",
            message=f"unknown key {short_repr(key)}{suffix}",
            code="additionalProperties",
        )


def problems_from_error(error: ValidationError, base: str = "") -> Iterator[Problem]:
    """Yield the problems one python-jsonschema error stands for."""
    pointer = base + _pointer(error.absolute_path)
    keyword = error.validator
    if keyword == "additionalProperties" and isinstance(_instance(error), dict):
        yield from _unknown_keys(error, pointer)
        return
    if "propertyNames" in error.relative_schema_path:
        # jsonschema reports a bad key as the failing instance at its object's path.
        render = _MESSAGES.get(str(keyword))
        detail = render(error) if render else error.message
        yield Problem(
            pointer=f"{pointer}/{escape_token(_instance(error))}",
            message=f"bad key: {detail}",
            code="propertyNames",
        )
        return
    if keyword == "not" and _value(error) == {}:
        # `"not": {}` forbids a member in context (timing on a failed run, say).
        key = error.absolute_path[-1] if error.absolute_path else "value"
        reason = _schema(error).get("description", "")
        message = f"{key!r} is not allowed here" + (
            f": {reason[0].lower()}{reason[1:-1]}" if reason else ""
        )
        yield Problem(pointer=pointer, message=message, code="not")
        return
    render = _MESSAGES.get(str(keyword))
    message = render(error) if render else error.message
    yield Problem(pointer=pointer, message=message, code=str(keyword))


def _fast_any_of(at: list[Any], instance: Any) -> str:
    # jsonschema-rs says only that no branch matched: say what the schema wants, from
    # the description of the definition holding the anyOf (a path within its file).
    for schema in load_schemas().values():
        node: Any = schema
        for token in at:
            node = node.get(str(token)) if isinstance(node, dict) else None
        if isinstance(node, dict) and "anyOf" in node:
            return _any_of_message(node, instance)
    return f"expected one of the allowed forms, got {short_repr(instance)}"


def problems_from_fast_error(error: Any) -> Iterator[Problem]:
    """Yield the problem one jsonschema-rs error stands for (used where the two disagree)."""
    pointer = _pointer(error.instance_path)
    path = list(error.schema_path)
    keyword = str(path[-1]) if path else "schema"
    pattern = getattr(error.kind, "pattern", None)
    inner = getattr(error.kind, "error", None)
    if "propertyNames" in path and inner is not None:
        # The error names the object; the failing key is the inner error's instance.
        key = inner.instance
        inner_pattern = getattr(inner.kind, "pattern", None)
        detail = (
            pattern_message(inner_pattern, key)
            if isinstance(inner_pattern, str)
            else str(inner.message)
        )
        yield Problem(
            pointer=f"{pointer}/{escape_token(str(key))}",
            message=f"bad key: {detail}",
            code="propertyNames",
        )
        return
    if keyword == "pattern" and isinstance(pattern, str):
        message = pattern_message(pattern, error.instance)
    elif keyword == "anyOf":
        message = _fast_any_of(path[:-1], error.instance)
    else:
        message = str(error.message)
    yield Problem(pointer=pointer, message=message, code=keyword)

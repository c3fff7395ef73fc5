"""Foreign names as the schema's names: operations, map keys and parameter sets.

Other tools name things freely (``BM_copy<float>``, a counter called ``bytes per
second``, a pytest parameter ``größe``). The schema is stricter: an operation is
snake_case, a parameter or metric key is letters, digits and ``_-./``, an annotation key
also ends in a letter or digit. Each function here keeps a name that already fits and
turns any other into one that does. Like :mod:`kernelindex_sdk._base.names`, it may drop
letter case and the choice of separator; when it drops more (a symbol, a non-ASCII
letter) or cuts the name to fit, it appends a short hash of the original, so names that
differ in more than case and separators stay different.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .._base import names as _names
from .._base.schemas import SAFE_INT
from ._values import check_parameter

__all__ = [
    "MAX_STRING",
    "annotation_key",
    "annotation_value",
    "flat_annotations",
    "flat_parameters",
    "metric_entries",
    "metric_key",
    "metric_value",
    "operation",
]

#: The schema's longest operation, map key and string value.
OPERATION_MAX: Final = 128
KEY_MAX: Final = 253
MAX_STRING: Final = 4096
# The schema's ScalarMap key (parameters, sourceNative.metrics) and StringMap key
# (labels, annotations), with \Z: no final newline.
_SCALAR_KEY: Final = re.compile(r"[A-Za-z0-9_][-A-Za-z0-9_./]*\Z")
_STRING_KEY: Final = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?\Z")
_NOT_KEY: Final = re.compile(r"[^-A-Za-z0-9_./]+")


def _hash(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[: _names.HASH_LENGTH]


def operation(text: str) -> str:
    """A tool's benchmark name as a workload operation (snake_case, at most 128).

    ``BM_memcpy`` becomes ``bm_memcpy``; ``BM_copy<float>`` becomes ``bm_copy_float``
    with a hash of the original appended, since ``<`` and ``>`` carry meaning.
    """
    return _names.name(text, max_length=OPERATION_MAX).replace("-", "_")


def _key(text: str, pattern: re.Pattern[str]) -> str:
    if len(text) <= KEY_MAX and pattern.match(text):
        return text
    body = _NOT_KEY.sub("_", text).strip("-_./")
    tail = _hash(text)
    body = body[: KEY_MAX - len(tail) - 1].rstrip("-_./")
    return f"{body}.{tail}" if body else tail


def metric_key(text: str) -> str:
    """A name as a parameter or ``sourceNative.metrics`` key: unchanged when it fits,
    else its other characters become ``_`` and ``.`` and a hash of it follow."""
    return _key(text, _SCALAR_KEY)


def annotation_key(text: str) -> str:
    """A name as a label or annotation key (which also ends in a letter or digit)."""
    return _key(text, _STRING_KEY)


def annotation_value(value: Any) -> str:
    """A value as annotation text: a string as it is, any other JSON value as compact
    JSON; cut to the schema's 4096 characters with ``...`` when longer."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    if len(text) > MAX_STRING:
        text = text[: MAX_STRING - 3] + "..."
    return text


def metric_value(value: Any) -> str | bool | int | float | None:
    """A value as ``sourceNative.metrics`` holds it, or None for no value (null).

    Numbers, booleans and strings stay as they are. What a digest cannot carry keeps
    its text: an integer beyond 2^53 - 1 as its digits, NaN and the infinities as
    ``NaN``, ``Infinity`` and ``-Infinity`` (the spellings Google Benchmark and Python's
    json write). Arrays and objects are for :func:`metric_entries`.
    """
    kept: str | bool | int | float | None = value
    if isinstance(value, str):
        kept = value if len(value) <= MAX_STRING else value[: MAX_STRING - 3] + "..."
    elif isinstance(value, bool) or value is None:
        kept = value
    elif isinstance(value, int):
        kept = value if abs(value) <= SAFE_INT else str(value)
    elif isinstance(value, float) and not math.isfinite(value):
        kept = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    elif not isinstance(value, float):
        kept = json.dumps(value, separators=(",", ":"))[:MAX_STRING]
    return kept


def metric_entries(name: str, value: Any) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` pairs for ``sourceNative.metrics``: a scalar under ``name``; an
    array's items under ``name/0``, ``name/1``...; an object's under ``name/key``; null
    gives nothing (the metrics map holds no nulls)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from metric_entries(f"{name}/{i}", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from metric_entries(f"{name}/{key}", item)
    else:
        kept = metric_value(value)
        if kept is not None:
            yield metric_key(name), kept


def _flat(name: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, list):
        if not value:
            yield f"{name}/len", 0
        for i, item in enumerate(value):
            yield from _flat(f"{name}/{i}", item)
    elif isinstance(value, dict):
        if not value:
            yield f"{name}/size", 0
        for key, item in value.items():
            yield from _flat(f"{name}/{key}", item)
    elif value is None:
        yield f"{name}/null", True
    else:
        yield name, value


def flat_parameters(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Workload parameters from a tool's named values, every value kept exactly.

    A scalar stays under its name (:func:`metric_key`). An array or object is spread
    over ``name/0``, ``name/1``... or ``name/key``, an empty array is ``name/len: 0``
    and an empty object ``name/size: 0``, and null is ``name/null: true``. The tools'
    parameter names hold no ``/``, so these never meet a real parameter; the one pair
    of values that gives one set is an array and an object whose keys are ``"0"``,
    ``"1"``... holding the same items.

    Raises:
        ValueError: for a value no parameter can hold (a string over 4096 characters, a
            non-finite number, an integer beyond 2^53 - 1).
    """
    parameters: dict[str, Any] = {}
    for name, value in values.items():
        for key, item in _flat(name, value):
            parameters[metric_key(key)] = check_parameter(metric_key(key), item, where)
    return parameters


def flat_annotations(prefix: str, value: Any) -> dict[str, str]:
    """Annotations from a file's context object: each leaf under ``prefix/path``, an
    array as its compact JSON text, null left out (an annotation holds text)."""
    found: dict[str, str] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(flat_annotations(f"{prefix}/{key}", item))
    elif value is not None:
        found[annotation_key(prefix)] = annotation_value(value)
    return found

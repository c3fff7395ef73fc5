"""The cattrs converter between the generated models and JSON values.

Below validation and digests in the layers, so that both can turn a model into its JSON
value (:func:`as_json`) without importing the loaders in :mod:`kernelindex_sdk.convert`.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from datetime import datetime
from typing import Any, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .._base.display import short_repr
from .._base.schemas import SAFE_INT
from .._base.timestamps import format_observed_at, parse_observed_at
from ..errors import ArgumentError, CanonicalizationError
from ..models import Scalar

__all__ = ["as_json", "configure_converter", "default_converter", "make_converter", "wire_names"]


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
    if type(value) is int and not -SAFE_INT <= value <= SAFE_INT:
        # The published form writes a double of 2^53 or more without a fraction; read it
        # back as that double, so that load(dumps(m)) == m.
        try:
            return float(value)
        except OverflowError:
            raise TypeError(
                f"expected a number within the range of a double, got {short_repr(value)}"
            ) from None
    return value  # type: ignore[no-any-return]


def _structure_scalar(value: Any, _: Any) -> Scalar:
    if type(value) not in (str, bool, int, float):
        raise TypeError(f"expected a string, boolean or number, got {short_repr(value)}")
    return value  # type: ignore[no-any-return]


def _structure_datetime(value: Any, _: Any) -> datetime:
    if type(value) is not str:
        raise TypeError(f"expected a timestamp string, got {short_repr(value)}")
    return parse_observed_at(value)


def _identity(value: Any) -> Any:
    return value


def _is_optional(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def wire_names(cls: type) -> dict[str, str]:
    """Return each attribute's wire name (camelCase, or ``$schema``) by attribute name."""
    return {a.name: a.metadata.get("wire", a.name) for a in attrs.fields(cls)}


def configure_converter(converter: cattrs.Converter) -> None:
    """Register kernelindex's hooks on ``converter``.

    - Strict primitives: no coercion; ``"5"`` never becomes 5 nor 5 ``"5"``, booleans
      are not integers, and integers stay integers where the schema says number.
    - Wire names in camelCase (from each field's ``wire`` metadata), attributes in
      snake_case; unknown keys are rejected.
    - Absent optional fields stay absent when dumped; an explicit ``null`` is rejected,
      since no schema field admits it. ``apiVersion`` and ``kind`` default to their
      constants in the models, are always written, and are checked on load.
    - ``observedAt`` is an aware ``datetime``, written in the published UTC form; the
      models hold it in UTC, truncated to milliseconds, as the wire does.

    Raises:
        ArgumentError: when ``converter`` is not a cattrs Converter.
    """
    if not isinstance(converter, cattrs.Converter):
        raise ArgumentError(
            argument="converter",
            reason=f"expected a cattrs.Converter, got a {type(converter).__name__}",
        )
    converter.register_structure_hook(str, _exact(str, "a string"))
    converter.register_structure_hook(int, _exact(int, "an integer"))
    converter.register_structure_hook(bool, _exact(bool, "a boolean"))
    converter.register_structure_hook(float, _structure_number)
    converter.register_structure_hook(Scalar, _structure_scalar)
    converter.register_structure_hook(datetime, _structure_datetime)
    converter.register_unstructure_hook(datetime, format_observed_at)
    # A scalar is written as it is. cattrs would unstructure a dict or list found there
    # (a model built by hand) by recursing, so a map that contains itself, or one nested
    # 100,000 deep, raised RecursionError; left as it is, check_json_value (which every
    # writer, digest and validation runs) reports it with a pointer instead.
    converter.register_unstructure_hook(Scalar, _identity)

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
            n: override(rename=w) for n, w in wire_names(cls).items() if n != w
        }
        return make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **renames)

    def unstructure_attrs(cls: Any) -> Any:
        # Absent optional fields (default None) stay absent; a constant with a default
        # (apiVersion, kind) is always written, since the schemas require it.
        overrides: dict[str, Any] = {
            a.name: override(
                rename=wire_names(cls)[a.name],
                omit_if_default=a.default is None,
            )
            for a in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, converter, **overrides)

    converter.register_structure_hook_factory(attrs.has, structure_attrs)
    converter.register_unstructure_hook_factory(attrs.has, unstructure_attrs)

    def unstructure_list(tp: Any) -> Callable[[Any], Any]:
        # A set (or a generator, a str) where the schema has an array would be written
        # in an order that changes from one process to the next: a list or tuple only.
        items = converter.gen_unstructure_iterable(tp)

        def unstructure(value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"expected a list, got a {type(value).__name__}")
            return items(value)

        return unstructure

    converter.register_unstructure_hook_factory(_is_list, unstructure_list)


def _is_list(tp: Any) -> bool:
    return get_origin(tp) is list


def make_converter() -> cattrs.Converter:
    """Return a new converter configured by :func:`configure_converter`."""
    converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
    configure_converter(converter)
    return converter


default_converter = make_converter()


def as_json(value: Any) -> Any:
    """Return the JSON value of a model instance; any other value is returned unchanged.

    Lets every API that takes a JSON value take a model too (validate, check, dumps and
    the digest helpers). What a model holds where the schema has a scalar is returned as
    it is, not converted: a dict there that contains itself, or nests too deep, reaches
    :func:`~kernelindex_sdk._json.value.check_json_value` as the JSON value path does.

    Raises:
        CanonicalizationError: when a model nests models too deep to convert.
    """
    if attrs.has(type(value)):
        try:
            return default_converter.unstructure(value)
        except RecursionError:
            # Only a model built by hand can nest this deep; refuse it as any writer does.
            raise CanonicalizationError(
                pointer="", reason="the model nests too deep to convert"
            ) from None
        except (AttributeError, TypeError, ValueError, KeyError) as err:
            # A model built by hand with a field of another type (parameters=None, a run
            # of None): cattrs meets it deep inside; say so at the boundary.
            raise ArgumentError(
                argument=type(value).__name__,
                reason=f"a field holds a value of the wrong type ({type(err).__name__}: {err})",
            ) from None
    return value

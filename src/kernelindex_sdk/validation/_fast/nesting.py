"""The deepest nesting a schema admits: how many containers a valid value may hold one
inside another.

A reader that accepts a value only when the schema passes it need not count the
brackets of its text to bound its depth (:func:`.text.quick_value` with
``max_brackets=None``): no valid value nests deeper than the bound found here. A count
of a run's brackets (two passes over its text) cost 12% of a record's reading, in
instructions (benchmarks/results/reader_fast_parts.json). The
bound is found from the schema's own words, conservatively: a part of the schema that
leaves a container's members unconstrained (no ``additionalProperties``, no
``items``), ``true`` or ``{}``, a cycle of ``$ref``, a resource embedded with its own
``$id``, a dynamic reference, or a keyword this module does not know the meaning of
gives no bound, and so does the whole schema unless another
keyword of the same object bounds it on its own.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from ..._base.schemas import SCHEMA_FILES, load_schemas

__all__ = ["nesting_bound"]

# The types that hold no other value. Keywords not read here (not, if/then/else,
# dependentSchemas, unevaluatedProperties...) can only lose a bound, never make one
# too small: each bound found holds whatever else the schema says.
_SCALARS: Final = frozenset({"string", "number", "integer", "boolean", "null"})


@functools.cache
def nesting_bound(kind: str) -> int | None:
    """The most containers (objects, arrays) a value valid against ``kind``'s schema
    nests, counting its own (a scalar 0, ``{}`` 1, ``{"a": []}`` 2); None when the
    schema bounds none.

    Args:
        kind: A record kind of :data:`~kernelindex_sdk._base.schemas.SCHEMA_FILES`.
    """
    schemas = load_schemas()
    name = SCHEMA_FILES[kind]
    return _Bounds(schemas).of(schemas[name], name, frozenset())


def _value_depth(value: Any) -> int:
    """The nesting of a literal value (``const``, ``enum``)."""
    if isinstance(value, dict):
        return 1 + max((_value_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_value_depth(v) for v in value), default=0)
    return 0


class _Bounds:
    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas

    def _resolve(self, ref: str, file: str) -> tuple[Any, str] | None:
        """The schema a ``$ref`` names (a packaged file, a JSON pointer within it)."""
        target, _, pointer = ref.partition("#")
        name = target or file
        node = self.schemas.get(name)
        if node is None:
            return None
        for part in pointer.split("/")[1:] if pointer else ():
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node, name

    def _all(self, nodes: Any, file: str, active: frozenset[str]) -> int | None:
        """The largest bound of several schemas; None when any has none."""
        if not isinstance(nodes, (list, tuple)):
            return None
        found = 0
        for node in nodes:
            bound = self.of(node, file, active)
            if bound is None:
                return None
            found = max(found, bound)
        return found

    def _members(self, node: dict[str, Any], file: str, active: frozenset[str]) -> int | None:
        """The bound of an object's members: each property, each pattern, the rest."""
        rest = node.get("additionalProperties")
        if rest is None:
            return None
        schemas: list[Any] = []
        for key in ("properties", "patternProperties"):
            found = node.get(key, {})
            if not isinstance(found, dict):
                return None
            schemas.extend(found.values())
        if rest is not False:
            schemas.append(rest)
        return self._all(schemas, file, active)

    def _items(self, node: dict[str, Any], file: str, active: frozenset[str]) -> int | None:
        """The bound of an array's items: ``prefixItems`` and ``items`` (both when given)."""
        items = node.get("items")
        if items is None:
            return None
        schemas = list(node.get("prefixItems", []))
        if items is not False:
            schemas.append(items)
        return self._all(schemas, file, active)

    def _typed(self, node: dict[str, Any], file: str, active: frozenset[str]) -> int | None:
        """The bound ``type`` and the members' keywords give on their own."""
        types = node.get("type")
        if types is None:
            return None
        kinds = {types} if isinstance(types, str) else set(types)
        if not kinds <= _SCALARS | {"object", "array"}:
            return None
        found = 0
        for container, members in (("object", self._members), ("array", self._items)):
            if container in kinds:
                inner = members(node, file, active)
                if inner is None:
                    return None
                found = max(found, 1 + inner)
        return found

    def _referenced(self, ref: str, file: str, active: frozenset[str]) -> int | None:
        """The bound of the schema ``ref`` names; None for one not found, or already on
        the chain being followed (a cycle)."""
        target = self._resolve(ref, file)
        if target is None:
            return None
        key = f"{target[1]}#{ref.partition('#')[2]}"
        if key in active:
            return None
        return self.of(target[0], target[1], active | {key})

    def _opaque(self, node: dict[str, Any], file: str) -> bool:
        """Whether ``node`` is not read here: a resource embedded with an identifier of its
        own resolves its references from there, and a dynamic reference from where it is
        entered."""
        embedded = "$id" in node and node is not self.schemas.get(file)
        return embedded or "$dynamicRef" in node or "$recursiveRef" in node

    def of(self, node: Any, file: str, active: frozenset[str]) -> int | None:
        """The bound of ``node`` (in ``file``); ``active``: the ``$ref`` chain being followed."""
        if node is False:
            return 0
        if not isinstance(node, dict) or self._opaque(node, file):
            return None
        # Each of these holds on its own: the value meets all of them, so the least wins.
        bounds: list[int] = []
        typed = self._typed(node, file, active)
        if typed is not None:
            bounds.append(typed)
        ref = node.get("$ref")
        if isinstance(ref, str):
            found = self._referenced(ref, file, active)
            if found is not None:
                bounds.append(found)
        for sub in node.get("allOf", ()):
            found = self.of(sub, file, active)
            if found is not None:
                bounds.append(found)
        for key in ("anyOf", "oneOf"):
            if key in node:
                found = self._all(node[key], file, active)
                if found is not None:
                    bounds.append(found)
        if "const" in node:
            bounds.append(_value_depth(node["const"]))
        if isinstance(node.get("enum"), list) and node["enum"]:
            bounds.append(max(_value_depth(v) for v in node["enum"]))
        return min(bounds) if bounds else None

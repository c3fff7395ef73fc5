"""One walk over a Python value meant as JSON, for validation and for the writers.

Validation (``_jsontext.scan_value``) reports every problem of a value; writers and
digests (``_jsonvalue.check_json_value``) raise on the first. Both ask the same
questions of the same walk, which lives here:

- :func:`quick` decides the plain value level by level, without pointers or recursion;
  where something is off (or the value is too large to expand) it says so and no more.
- :class:`Walk` then finds what and where: depth first, in document order, without
  recursion; each container once, so a container reached twice is no cycle and a value
  that shares at every level takes linear time. Each :class:`Finding` carries the path
  and the node; the caller words it.

The rules differ in one respect, set by :class:`Rules`: validation wants JSON's types
exactly (a ``str`` subclass is not a string), while writers take what the encoders
write (subclasses, tuples as arrays), and may bound integers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

import attrs

__all__ = ["MAX_DEPTH", "Finding", "Quick", "Rules", "Walk", "path_tokens", "quick"]

#: The deepest nesting of arrays and objects a value may have. Records need about ten
#: levels; the limit keeps every validator's and writer's recursion far from the
#: interpreter's.
MAX_DEPTH: Final = 128
SURROGATE: Final = re.compile("[\ud800-\udfff]")
BEYOND_BMP: Final = re.compile("[\U00010000-\U0010ffff]")
_STR_ONLY: Final = frozenset({str})


@attrs.frozen
class Rules:
    """What a walk accepts.

    Attributes:
        exact: JSON's types exactly (validation); otherwise subclasses of them, and
            tuples as arrays (what the encoders write).
        int_bits: The most bits an integer may have (None: any).
        int_limit: The largest magnitude an integer may have (None: any).
    """

    exact: bool
    int_bits: int | None = None
    int_limit: int | None = None


class Quick(NamedTuple):
    """What :func:`quick` found.

    Attributes:
        plain: True for a plain JSON value; False where the walk must tell what is off;
            None for a value that expands to more containers than the budget.
        floats: Whether a float was met (RFC 8785 then needs its own number form).
        integral: Whether an integral float was met, such as ``2.0``.
        beyond_bmp: Whether a key holds a character beyond U+FFFF (sorting by UTF-16
            units then differs from sorting by code points).
    """

    plain: bool | None
    floats: bool = False
    integral: bool = False
    beyond_bmp: bool = False


# One loop, inlined: it runs on every value validated or written, and a call per
# object or level costs a tenth of the pass.
def quick(value: Any, rules: Rules, budget: int) -> Quick:  # noqa: PLR0911, PLR0912
    """Decide a plain value in one pass per level, counting a shared container each time.

    Only the exact JSON types pass here, whatever the rules; anything else, a cycle
    (seen as nesting past :data:`MAX_DEPTH`) included, is left to :class:`Walk`.
    """
    floats = integral = beyond_bmp = False
    bits, limit = rules.int_bits, rules.int_limit
    bounded = bits is not None or limit is not None
    # The root sits in a list of its own, at depth -1, to be checked like any child.
    level: list[Any] = [[value]]
    depth = -1
    while level:
        if budget < 0:
            return Quick(None, floats, integral, beyond_bmp)
        if depth >= MAX_DEPTH:
            return Quick(False, floats, integral, beyond_bmp)
        below: list[Any] = []
        for node in level:
            children = node
            if type(node) is dict:
                # Both run in C: every key a str, and no lone surrogate in any.
                keys = "".join(node) if _STR_ONLY.issuperset(map(type, node)) else None
                if keys is None:
                    return Quick(False, floats, integral, beyond_bmp)
                if not keys.isascii():
                    if SURROGATE.search(keys):
                        return Quick(False, floats, integral, beyond_bmp)
                    beyond_bmp = beyond_bmp or BEYOND_BMP.search(keys) is not None
                children = node.values()
            for child in children:
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
                elif kind is str:
                    if not child.isascii() and SURROGATE.search(child):
                        return Quick(False, floats, integral, beyond_bmp)
                elif kind is int:
                    if bounded and not _int_ok(child, bits, limit):
                        return Quick(False, floats, integral, beyond_bmp)
                elif kind is float:
                    if not math.isfinite(child):
                        return Quick(False, floats, integral, beyond_bmp)
                    floats = True
                    integral = integral or child.is_integer()
                elif not (kind is bool or child is None):
                    return Quick(False, floats, integral, beyond_bmp)
        budget -= len(below)
        level = below
        depth += 1
    return Quick(True, floats, integral, beyond_bmp)


def _int_ok(node: int, bits: int | None, limit: int | None) -> bool:
    if bits is not None and node.bit_length() > bits:
        return False
    return limit is None or -limit <= node <= limit


class Finding(NamedTuple):
    """Something a walk found that JSON cannot carry (or, for a writer, will not).

    Attributes:
        path: Where, as built by the walk: read it with :func:`path_tokens`.
        what: ``cycle``, ``deep``, ``key-type`` (the path is the object's),
            ``key-surrogate`` (the path names the key), ``surrogate`` (a string),
            ``non-finite``, ``int-bits``, ``int-limit`` or ``type``.
        node: The value (or key) found.
    """

    path: Any
    what: str
    node: Any


def path_tokens(path: Any) -> list[str | int]:
    """The reference tokens (keys and indices) of a finding's path, root first."""
    tokens: list[str | int] = []
    while path is not None:
        path, token = path
        tokens.append(token)
    tokens.reverse()
    return tokens


# Marks, on the walk's stack, the end of a container's children.
_EXIT: Final = object()


@attrs.define
class Walk:
    """The detailed walk; see the module's docstring. One per value.

    After :meth:`findings` is exhausted, ``floats``, ``integral`` and ``beyond_bmp``
    say what :func:`quick` would have said of the parts walked.
    """

    rules: Rules
    floats: bool = False
    integral: bool = False
    beyond_bmp: bool = False

    def findings(self, value: Any) -> Iterator[Finding]:
        """Every finding in document order; nothing below a container too deep or cyclic."""
        # ids of the containers from the root to the node being walked
        on_path: set[int] = set()
        # id of each container walked to the end -> the deepest depth it was walked at. Met
        # again no deeper, its subtree has nothing new to say; met deeper, it is walked
        # again, since its subtree may now pass MAX_DEPTH (at most MAX_DEPTH walks each).
        done: dict[int, int] = {}
        # (path, node, depth); a path is (parent path, token), None at the root. An exit
        # mark carries (depth, _EXIT, id) instead.
        stack: list[tuple[Any, Any, int]] = [(None, value, 0)]
        while stack:
            path, node, depth = stack.pop()
            if node is _EXIT:
                on_path.discard(depth)
                done[depth] = max(done.get(depth, -1), path)
                continue
            container = self._container(node)
            if container is None:
                found = self._scalar(node)
                if found is not None:
                    yield Finding(path, found, node)
            elif id(node) in on_path:
                yield Finding(path, "cycle", node)
            elif depth >= MAX_DEPTH:
                yield Finding(path, "deep", node)
            elif done.get(id(node), -1) < depth:
                on_path.add(id(node))
                children: list[tuple[Any, Any, int]] = []
                if container == "object":
                    yield from self._members(path, node, depth, children)
                else:
                    children.extend(((path, i), v, depth + 1) for i, v in enumerate(node))
                children.append((depth, _EXIT, id(node)))
                # The stack pops from the end: reversed, children come in order, exit last.
                children.reverse()
                stack.extend(children)

    def _members(
        self, path: Any, node: Any, depth: int, children: list[tuple[Any, Any, int]]
    ) -> Iterator[Finding]:
        """An object's key findings; its children go to ``children``."""
        for key, child in node.items():
            if not (type(key) is str or (not self.rules.exact and isinstance(key, str))):
                yield Finding(path, "key-type", key)
                continue
            child_path = (path, key)
            if not key.isascii():
                if SURROGATE.search(key):
                    yield Finding(child_path, "key-surrogate", key)
                elif BEYOND_BMP.search(key):
                    self.beyond_bmp = True
            children.append((child_path, child, depth + 1))

    def _container(self, node: Any) -> str | None:
        kind = type(node)
        if kind is dict or (not self.rules.exact and isinstance(node, dict)):
            return "object"
        if kind is list or (not self.rules.exact and isinstance(node, (list, tuple))):
            return "array"
        return None

    def _scalar(self, node: Any) -> str | None:
        """What is wrong with a scalar, or None (recording floats on the way)."""
        kind = _kind(node, self.rules.exact)
        found = None
        if kind is str:
            found = "surrogate" if not node.isascii() and SURROGATE.search(node) else None
        elif kind is int:
            bits, limit = self.rules.int_bits, self.rules.int_limit
            if bits is not None and node.bit_length() > bits:
                found = "int-bits"
            elif limit is not None and not -limit <= node <= limit:
                found = "int-limit"
        elif kind is float:
            if math.isfinite(node):
                self.floats = True
                self.integral = self.integral or node.is_integer()
            else:
                found = "non-finite"
        elif kind is None:
            found = "type"
        return found


def _kind(node: Any, exact: bool) -> type | None:
    """The JSON scalar type ``node`` counts as (bool for the literals), or None."""
    kind = type(node)
    if kind in _SCALARS:
        return _SCALARS[kind]
    if exact:
        return None
    # bool before int: it is one.
    return next((t for t in (str, bool, int, float) if isinstance(node, t)), None)


_SCALARS: Final[dict[type, type]] = {
    str: str,
    bool: bool,
    type(None): bool,
    int: int,
    float: float,
}

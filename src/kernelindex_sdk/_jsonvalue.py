"""Whether a Python value has an exact JSON text, checked without recursion.

The stdlib encoder and rfc8785 recurse (a deep value raises RecursionError), loop on a
value that contains itself, write NaN as ``NaN``, and fail late on a lone surrogate.
Writers and digests call :func:`check_json_value` first, so each of those is one
:class:`~kernelindex_sdk.errors.CanonicalizationError` naming where it is.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from ._messages import article
from ._schemas import SAFE_INT
from .errors import CanonicalizationError

__all__ = ["MAX_DEPTH", "check_json_value"]

#: Deepest nesting of objects and arrays accepted; a record is about six deep.
MAX_DEPTH: Final = 128
# Python refuses to write integers longer than sys.get_int_max_str_digits() (4,300
# digits by default); 14,000 bits is about 4,214 digits.
_MAX_INT_BITS: Final = 14_000
_EXIT: Final = object()
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_BEYOND_BMP: Final = re.compile("[\U00010000-\U0010ffff]")
# Containers the quick pass visits before it leaves a value to the detailed walk.
_QUICK_BUDGET: Final = 100_000


def _token(key: str) -> str:
    # RFC 6901 escaping; a lone surrogate is shown as \udXXX so the pointer can be printed.
    token = key.replace("~", "~0").replace("/", "~1")
    return token if _encodable(token) else token.encode("utf-8", "backslashreplace").decode()


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_scalar(node: Any, pointer: str, digest: bool) -> bool:
    # Returns whether the scalar is a float (RFC 8785 then needs its own number form).
    if isinstance(node, str):
        if not _encodable(node):
            raise CanonicalizationError(
                pointer=pointer,
                reason=f"string {node!r} holds a lone surrogate, which UTF-8 cannot encode",
            )
        return False
    if isinstance(node, bool) or node is None:
        return False
    if isinstance(node, int):
        if node.bit_length() > _MAX_INT_BITS:
            raise CanonicalizationError(pointer=pointer, reason="integer too long to write")
        if digest and not -SAFE_INT <= node <= SAFE_INT:
            raise CanonicalizationError(
                pointer=pointer,
                reason=f"integer {node!r} is beyond 2^53 - 1, which RFC 8785 cannot carry",
            )
        return False
    if isinstance(node, float):
        if not math.isfinite(node):
            raise CanonicalizationError(pointer=pointer, reason=f"{node!r} is not a JSON number")
        return True
    raise CanonicalizationError(
        pointer=pointer, reason=f"expected a JSON value, got {article(type(node).__name__)}"
    )


def _children(node: dict[Any, Any], pointer: str, depth: int) -> tuple[list[Any], bool]:
    # The entries of an object to visit next, and whether a key is beyond U+FFFF.
    children = []
    beyond_bmp = False
    for key, child in node.items():
        if not isinstance(key, str):
            raise CanonicalizationError(
                pointer=pointer, reason=f"expected string keys, got {key!r}"
            )
        if not _encodable(key):
            raise CanonicalizationError(
                pointer=f"{pointer}/{_token(key)}",
                reason=f"key {key!r} holds a lone surrogate, which UTF-8 cannot encode",
            )
        if not key.isascii() and max(key) > "\uffff":
            beyond_bmp = True
        children.append((child, f"{pointer}/{_token(key)}", depth + 1))
    return children, beyond_bmp


def check_json_value(value: Any, *, digest: bool = False) -> bool:
    """Check that ``value`` is JSON: objects with string keys, arrays, strings, numbers, literals.

    Args:
        value: The value to check.
        digest: Also require integers within +-(2^53 - 1), as RFC 8785 does.

    Returns:
        True when the value holds a float or a key beyond U+FFFF: where the stdlib's
        sorted compact text and RFC 8785's may differ.

    Raises:
        CanonicalizationError: for a NaN or infinity, a non-string key, a lone surrogate,
            a value that contains itself, nesting deeper than :data:`MAX_DEPTH`, an integer
            too long to write (or beyond 2^53 - 1 with ``digest``), or a non-JSON type.
    """
    quick = _quick_check(value, digest)
    if quick is not None:
        return quick
    needs_full = False
    on_path: set[int] = set()
    stack: list[Any] = [(value, "", 0)]
    while stack:
        item = stack.pop()
        if item is _EXIT:
            on_path.discard(stack.pop())
            continue
        node, pointer, depth = item
        if not isinstance(node, (dict, list, tuple)):
            needs_full = _check_scalar(node, pointer, digest) or needs_full
            continue
        if id(node) in on_path:
            raise CanonicalizationError(pointer=pointer, reason="the value contains itself")
        if depth >= MAX_DEPTH:
            raise CanonicalizationError(
                pointer=pointer, reason=f"nested deeper than {MAX_DEPTH} levels"
            )
        on_path.add(id(node))
        # Leave the path once every child is checked: a value reached twice is no cycle.
        stack.extend((id(node), _EXIT))
        if isinstance(node, dict):
            children, beyond_bmp = _children(node, pointer, depth)
            needs_full = needs_full or beyond_bmp
            stack.extend(children)
        else:
            stack.extend((child, f"{pointer}/{i}", depth + 1) for i, child in enumerate(node))
    return needs_full


def _quick_check(value: Any, digest: bool) -> bool | None:
    """:func:`check_json_value`'s answer for a plain value, level by level and without
    pointers; None when something is off (or too large), for the detailed walk to name.

    A cycle shows as nesting past MAX_DEPTH, so it is left to the walk too.
    """
    needs_full = False
    budget = _QUICK_BUDGET
    level: list[Any] = [[value]]
    for _ in range(MAX_DEPTH + 1):
        if not level:
            return needs_full
        below: list[Any] = []
        for node in level:
            children = node
            if type(node) is dict:
                keys = _quick_keys(node)
                if keys is None:
                    return None
                needs_full = needs_full or keys
                children = node.values()
            for child in children:
                if type(child) is dict or type(child) is list:
                    below.append(child)
                    continue
                flag = _quick_scalar(child, digest)
                if flag is None:
                    return None
                needs_full = needs_full or flag
        budget -= len(below)
        if budget < 0:
            return None
        level = below
    return None


def _quick_keys(node: dict[Any, Any]) -> bool | None:
    # None for a non-string key or a lone surrogate; else whether a key is beyond U+FFFF.
    if not all(type(k) is str for k in node):
        return None
    keys = "".join(node)
    if keys.isascii():
        return False
    if _SURROGATE.search(keys):
        return None
    return _BEYOND_BMP.search(keys) is not None


def _quick_scalar(child: Any, digest: bool) -> bool | None:
    # None for what the detailed walk must name; else whether the scalar is a float.
    kind = type(child)
    if kind is str:
        ok = child.isascii() or not _SURROGATE.search(child)
    elif kind is float:
        return True if math.isfinite(child) else None
    elif kind is int:
        ok = child.bit_length() <= _MAX_INT_BITS and (not digest or -SAFE_INT <= child <= SAFE_INT)
    else:
        ok = kind is bool or child is None
    return False if ok else None

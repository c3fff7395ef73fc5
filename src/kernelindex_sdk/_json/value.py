"""Whether a Python value has an exact JSON text, checked without recursion.

The stdlib encoder and rfc8785 recurse (a deep value raises RecursionError), loop on a
value that contains itself, write NaN as ``NaN``, and fail late on a lone surrogate.
Writers and digests call :func:`check_json_value` first, so each of those is one
:class:`~kernelindex_sdk.errors.CanonicalizationError` naming where it is. The walk is
``_jsonwalk``'s, which validation's ``_jsontext.scan_value`` shares.
"""

from __future__ import annotations

from typing import Any, Final

from .._base.display import article
from .._base.schemas import SAFE_INT
from ..errors import CanonicalizationError
from . import walk as _jsonwalk
from .walk import MAX_DEPTH, Finding, Rules, path_tokens

__all__ = ["MAX_DEPTH", "check_json_value"]

# Python refuses to write integers longer than sys.get_int_max_str_digits() (4,300
# digits by default); 14,000 bits is about 4,214 digits.
_MAX_INT_BITS: Final = 14_000
# Containers the quick pass visits before it leaves a value to the detailed walk.
_QUICK_BUDGET: Final = 100_000
_RULES: Final = Rules(exact=False, int_bits=_MAX_INT_BITS)
_DIGEST_RULES: Final = Rules(exact=False, int_bits=_MAX_INT_BITS, int_limit=SAFE_INT)


def _token(key: str | int) -> str:
    # RFC 6901 escaping; a lone surrogate is shown as \udXXX so the pointer can be printed.
    token = str(key).replace("~", "~0").replace("/", "~1")
    return token if _encodable(token) else token.encode("utf-8", "backslashreplace").decode()


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    walk = _jsonwalk.Walk(_DIGEST_RULES if digest else _RULES)
    for finding in walk.findings(value):
        raise _error(finding)
    return walk.floats or walk.beyond_bmp


def _quick_check(value: Any, digest: bool) -> bool | None:
    """:func:`check_json_value`'s answer for a plain value, level by level and without
    pointers; None when something is off (or too large), for the detailed walk to name.

    A cycle shows as nesting past MAX_DEPTH, so it is left to the walk too.
    """
    found = _jsonwalk.quick(value, _DIGEST_RULES if digest else _RULES, _QUICK_BUDGET)
    if not found.plain:
        return None
    return found.floats or found.beyond_bmp


def _error(finding: Finding) -> CanonicalizationError:
    pointer = "".join(f"/{_token(t)}" for t in path_tokens(finding.path))
    node = finding.node
    reasons = {
        "cycle": "the value contains itself",
        "deep": f"nested deeper than {MAX_DEPTH} levels",
        "int-bits": "integer too long to write",
    }
    reason = reasons.get(finding.what)
    if reason is None:
        reason = _reason(finding.what, node)
    return CanonicalizationError(pointer=pointer, reason=reason)


def _reason(what: str, node: Any) -> str:
    if what == "key-type":
        return f"expected string keys, got {node!r}"
    if what == "key-surrogate":
        return f"key {node!r} holds a lone surrogate, which UTF-8 cannot encode"
    if what == "surrogate":
        return f"string {node!r} holds a lone surrogate, which UTF-8 cannot encode"
    if what == "int-limit":
        return f"integer {node!r} is beyond 2^53 - 1, which RFC 8785 cannot carry"
    if what == "non-finite":
        return f"{node!r} is not a JSON number"
    return f"expected a JSON value, got {article(type(node).__name__)}"

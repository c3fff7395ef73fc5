"""The schemas' patterns as jsonschema-rs runs them fastest: the same languages.

The schemas end patterns with ``$(?!\\n)`` for Python's ``re``, whose ``$`` also matches
before a final newline. jsonschema-rs's ``$`` matches at the end only (as ECMA-262's
does), so there the lookahead never fails; but a lookahead sends a pattern to the
backtracking engine: with it, a record's reading takes a quarter more instructions
(24% for a Liger bundle, 27% for a harness bundle;
benchmarks/results/reader_fast_parts.json). :func:`for_speed` drops it.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["end_only", "for_speed"]

_END_LOOKAHEAD: Final = "$(?!\\n)"


def end_only(pattern: str) -> str:
    """``pattern`` without a final ``(?!\\n)`` after an end anchor: the same language in
    jsonschema-rs (no inline flag can make its ``$`` match before a newline).

    A pattern with any other group construct (``(?i)``, a lookbehind...) is left as it
    is, and so is an escaped ``$``, which is a character, not an anchor.
    """
    if not pattern.endswith(_END_LOOKAHEAD):
        return pattern
    head = pattern[: -len(_END_LOOKAHEAD)]
    if "(?" in head.replace("(?!", "").replace("(?:", ""):
        return pattern
    # An odd run of backslashes before the "$" escapes it.
    if (len(head) - len(head.rstrip("\\"))) % 2:
        return pattern
    return head + "$"


def for_speed(node: Any) -> Any:
    """A copy of a schema with :func:`end_only` applied to every pattern."""
    if isinstance(node, list):
        return [for_speed(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        k: end_only(v) if k == "pattern" and isinstance(v, str) else for_speed(v)
        for k, v in node.items()
    }

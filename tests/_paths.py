"""Reaching into test documents by path: one helper instead of a loop in every test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def parent_of(doc: Any, path: str | Sequence[str | int]) -> tuple[Any, str | int]:
    """Return the container holding the value at ``path``, and its key or index there.

    ``path`` is a sequence of keys and indices, or a JSON-pointer-like string
    (``/run/spec/measurements/0/value``) whose numeric parts index lists.
    """
    parts: list[str | int] = list(path.strip("/").split("/") if isinstance(path, str) else path)
    node = doc
    for key in parts[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = parts[-1]
    return node, int(last) if isinstance(node, list) else last


def set_at(doc: Any, path: str | Sequence[str | int], value: Any) -> None:
    """Replace (or add) the value at ``path``."""
    node, key = parent_of(doc, path)
    node[key] = value

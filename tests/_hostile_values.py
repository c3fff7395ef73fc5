"""Python values that no JSON text holds, shared by the tests of every API that takes them."""

from __future__ import annotations

from typing import Any


def deep(depth: int) -> dict[str, Any]:
    """``{"a": {"a": ...}}``, ``depth`` objects deep: past every recursion limit."""
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


def self_containing() -> dict[str, Any]:
    """A dict reached again inside itself, through a list: a cycle."""
    doc: dict[str, Any] = {"a": [1]}
    doc["a"].append(doc)
    return doc

"""Bundles whose protocol and environment repeat, text for text, line after line.

A sweep's JSON Lines repeat one protocol and one environment on every line, after a run
of their own: two thirds of each line's text. :class:`BundleReader` keeps the text after
the run (the *tail*) of each line the plain path found valid; a later line that starts
as the writers start a bundle and ends with a kept tail has only its run read (by
:func:`~.text.quick_value`), validated against the run's schema and checked by
:func:`~.checks.passes`. The package's docstring holds the proof that such a line is
valid, with the value given, exactly where the plain path says so.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import attrs
import orjson

from ..._base.schemas import BUNDLE, SCHEMA_FILES, load_schemas
from ..._json.text import MAX_DEPTH
from .. import _registry
from .checks import passes
from .nesting import nesting_bound
from .text import UNPROVEN, quick_value

__all__ = ["BundleReader"]

#: The most tails kept; past it the table starts again (a few kB each).
MAX_TAILS: Final = 64
# How the writers start a bundle (the run first, in published key order), and where its
# tail starts (the protocol next).
_RUN_HEAD: Final = b'{"run":'
_TAIL_HEAD: Final = b',"protocol":'
# The bundle schema's keywords under which its validity is that of its members, each
# against its own schema, and of the rest of the bundle alone.
_PLAIN_KEYWORDS: Final = frozenset(
    {"$schema", "$id", "title", "description", "type", "additionalProperties", "required"}
)
_MEMBER_KINDS: Final = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}


@functools.cache
def _members_judged_alone() -> bool:
    """Whether a bundle is valid exactly when its members are, each against its schema,
    and its keys and other members are (the form of the shipped bundle schema)."""
    bundle = load_schemas()[SCHEMA_FILES[BUNDLE]]
    if not set(bundle) <= _PLAIN_KEYWORDS | {"properties"}:
        return False
    if bundle.get("additionalProperties") is not False:
        return False
    properties = bundle.get("properties", {})
    return all(
        key not in properties
        or (
            set(properties[key]) <= {"$ref", "description"}
            and properties[key].get("$ref") == SCHEMA_FILES[kind]
        )
        for key, kind in _MEMBER_KINDS.items()
    )


@attrs.frozen
class _Tail:
    """The text after a valid line's run, and the members it holds."""

    text: bytes
    members: dict[str, Any]
    protocol: dict[str, Any] | None


class BundleReader:
    """Reads the lines of one input whose tails it has seen; see the module's notes."""

    def __init__(self) -> None:
        self._enabled = _members_judged_alone()
        self._tails: dict[bytes, _Tail] = {}
        self._run_schema = _registry.fast_validator("BenchmarkRun")
        # The run sits one level inside the bundle's braces. Where the schema bounds how
        # deep a valid run nests so that the bundle stays within MAX_DEPTH, its brackets
        # need no count: the run is kept only when the schema passes it.
        bound = nesting_bound("BenchmarkRun")
        self._run_brackets = None if bound is not None and 1 + bound <= MAX_DEPTH else MAX_DEPTH - 1

    def read(self, data: bytes) -> dict[str, Any] | None:
        """The record's value when it is a valid bundle with a kept tail; None to check it
        in full."""
        if not self._enabled or data[: len(_RUN_HEAD)] != _RUN_HEAD:
            return None
        at = data.rfind(_TAIL_HEAD)
        tail = self._tails.get(data[at:]) if at > 0 else None
        if tail is None:
            return None
        run = quick_value(data[len(_RUN_HEAD) : len(data) - len(tail.text)], self._run_brackets)
        if run is UNPROVEN or not _registry.is_valid(self._run_schema, run):
            return None
        if not passes(run, tail.protocol):
            return None
        return {"run": run, **tail.members}

    def learn(self, data: bytes, value: Any) -> None:
        """Keep the tail of a line the plain path found valid, with ``value`` its value."""
        if not self._enabled or data[: len(_RUN_HEAD)] != _RUN_HEAD:
            return
        if not isinstance(value, dict) or "run" not in value:
            return
        at = data.rfind(_TAIL_HEAD)
        if at < 0:
            return
        # The text before the tail must be the run alone, one whole value.
        try:
            orjson.loads(data[len(_RUN_HEAD) : at])
        except orjson.JSONDecodeError:
            return
        members = {key: member for key, member in value.items() if key != "run"}
        tail = _Tail(data[at:], members, members.get("protocol"))
        if len(self._tails) >= MAX_TAILS:
            self._tails.clear()
        self._tails[tail.text] = tail

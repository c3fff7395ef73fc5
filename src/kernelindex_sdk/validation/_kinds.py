"""Which kind a document declares: a run, a protocol, an environment, or a bundle of them."""

from __future__ import annotations

from typing import Any

from .._base.display import short_repr
from .._base.schemas import BUNDLE, SCHEMA_FILES, SUPPORTED_API_VERSIONS
from ..errors import Problem

__all__ = ["SUPPORTED_KINDS", "detect_kind"]

#: Record kinds a document may declare, and the bundle.
SUPPORTED_KINDS = (*sorted(k for k in SCHEMA_FILES if k != BUNDLE), BUNDLE)
_BUNDLE_KEYS = frozenset({"run", "protocol", "environment"})


def detect_kind(doc: Any) -> str | Problem:
    """Return the kind a document declares (``RecordBundle`` for a bundle), or why not."""
    if not isinstance(doc, dict):
        return Problem(
            pointer="",
            message=f"expected a JSON object, got {short_repr(doc)}",
            code="type",
        )
    if "kind" not in doc and "apiVersion" not in doc and not _BUNDLE_KEYS.isdisjoint(doc):
        # A bundle member without its run is still a bundle: the schema then says
        # that 'run' is required.
        return BUNDLE
    api_version = doc.get("apiVersion")
    if api_version not in SUPPORTED_API_VERSIONS:
        supported = ", ".join(map(repr, SUPPORTED_API_VERSIONS))
        return _unsupported(doc, "apiVersion", supported)
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in SCHEMA_FILES or kind == BUNDLE:
        kinds = ", ".join(k for k in SUPPORTED_KINDS if k != BUNDLE)
        return _unsupported(doc, "kind", f"{kinds}, or a bundle {{run, ...}}")
    return str(kind)


def _unsupported(doc: dict[str, Any], key: str, supported: str) -> Problem:
    """A document's ``key`` is missing or holds a value this SDK does not support."""
    if key not in doc:
        return Problem(
            pointer="", message=f"{key!r} is a required property; supported: {supported}", code=key
        )
    found = short_repr(doc[key])
    return Problem(
        pointer=f"/{key}", message=f"unsupported {key} {found}; supported: {supported}", code=key
    )

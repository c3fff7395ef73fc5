"""Record digests: SHA-256 over the RFC 8785 canonical form of a preimage.

Every preimage has one shape, ``{"apiVersion": API_VERSION, "kind": KIND, "spec": SPEC}``
(docs/digests.md). This module is pure, no I/O: JSON values or models in, bytes or
strings out. Models become JSON values through the converter (:mod:`._converter`, which
sits below validation and loading, so there is no import cycle).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

import attrs
import rfc8785

from ._base.display import article, short_repr
from ._base.schemas import API_VERSION, BUNDLE, SAFE_INT
from ._json.converter import as_json
from ._json.value import check_json_value
from .errors import ArgumentError, CanonicalizationError
from .models import (
    BenchmarkProtocol,
    EnvironmentSpec,
    ExecutionEnvironment,
    Implementation,
    ProtocolSpec,
    Workload,
)

__all__ = [
    "DIGEST_KINDS",
    "SAFE_INT",
    "canonical_bytes",
    "digest",
    "environment_digest",
    "implementation_digest",
    "preimage",
    "protocol_digest",
    "workload_digest",
]

#: Preimage kind of each digest field of a run's spec.
DIGEST_KINDS: Final = {
    "protocolDigest": "BenchmarkProtocol",
    "environmentDigest": "ExecutionEnvironment",
    "workloadDigest": "Workload",
    "implementationDigest": "Implementation",
}


def canonical_bytes(value: Any) -> bytes:
    """Return the RFC 8785 (JSON Canonicalization Scheme) UTF-8 bytes of a JSON value.

    Values without floats (and without keys beyond U+FFFF, where code-point order, the
    stdlib's, and UTF-16 order, RFC 8785's, can differ) take the stdlib's C encoder, whose
    sorted, compact output is byte-identical to RFC 8785 for them (tests/test_digest.py
    checks this against rfc8785); everything else goes through rfc8785.

    Args:
        value: A JSON value, or a model instance (taken as its JSON value).

    Raises:
        CanonicalizationError: for values JSON cannot carry exactly: NaN, infinities,
            integers beyond 2^53 - 1, non-string keys, lone surrogates, a value that
            contains itself, or nesting deeper than 128 levels.
    """
    value = as_json(value)
    if not check_json_value(value, digest=True):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return text.encode("utf-8")
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as err:
        # check_json_value admits only what rfc8785 accepts; keep the promise regardless.
        raise CanonicalizationError(pointer="", reason=str(err)) from err


# The models each kind's digest takes: its spec, and for the two documents that are
# digested whole (protocol and environment) the document, which stands for its spec.
_SPEC_MODELS: Final[dict[str, type]] = {
    "BenchmarkProtocol": ProtocolSpec,
    "ExecutionEnvironment": EnvironmentSpec,
    "Workload": Workload,
    "Implementation": Implementation,
}
_DOCUMENT_MODELS: Final[dict[str, type]] = {
    "BenchmarkProtocol": BenchmarkProtocol,
    "ExecutionEnvironment": ExecutionEnvironment,
}


def _spec_of(kind: str, value: Any) -> Any:
    """The JSON value of the spec ``value`` stands for under ``kind``.

    A digest is over a spec: the spec itself (a model of the kind's spec class, or any
    JSON value but null, as the digest vectors use) or, for a protocol or an
    environment, the whole document (model or JSON), which stands for its spec. A
    spec never carries apiVersion and kind (the schemas forbid extra keys), so a JSON
    object with both is a document, and one of another kind is refused, as is a
    bundle: taking one of its parts would be a guess at what the caller meant.

    Raises:
        ArgumentError: for an unknown kind, ``None``, or a model or document of
            another kind.
    """
    if not isinstance(kind, str) or kind not in _SPEC_MODELS:
        raise ArgumentError(
            argument="kind",
            reason=f"expected one of {', '.join(map(repr, _SPEC_MODELS))}, got {short_repr(kind)}",
        )
    expected = " or ".join(
        article(c.__name__)
        for c in (_SPEC_MODELS[kind], _DOCUMENT_MODELS.get(kind))
        if c is not None
    )
    taker = f"{article(kind)} digest takes {expected}"
    if attrs.has(type(value)):
        if isinstance(value, (BenchmarkProtocol, ExecutionEnvironment)) and (
            type(value) is _DOCUMENT_MODELS.get(kind)
        ):
            return as_json(value.spec)
        if type(value) is not _SPEC_MODELS[kind]:
            raise ArgumentError(
                argument="spec",
                reason=f"{taker}, got {article(type(value).__name__)}",
            )
        return as_json(value)
    if value is None:
        raise ArgumentError(
            argument="spec",
            reason=f"{taker} or its JSON value, got null",
        )
    if isinstance(value, dict):
        other = _document_kind(value)
        if other == kind and kind in _DOCUMENT_MODELS and "spec" in value:
            return value["spec"]
        if other is not None:
            raise ArgumentError(
                argument="spec",
                reason=f"{taker} or its JSON value, got {article(other)}",
            )
    return value


def _document_kind(value: dict[Any, Any]) -> str | None:
    # The kind of a whole document or bundle given as JSON; None for anything else.
    if value.get("apiVersion") == API_VERSION and isinstance(value.get("kind"), str):
        return str(value["kind"])
    run = value.get("run")
    if isinstance(run, dict) and run.get("kind") == "BenchmarkRun":
        return BUNDLE
    return None


def preimage(kind: str, spec: Any) -> dict[str, Any]:
    """Return the object whose canonical bytes are hashed for ``kind``.

    Args:
        kind: One of the four digest kinds (the values of :data:`DIGEST_KINDS`).
        spec: The spec, as a model or its JSON value; for ``BenchmarkProtocol`` and
            ``ExecutionEnvironment``, the whole document stands for its spec.

    Raises:
        ArgumentError: for an unknown kind, ``None``, or a model or document of
            another kind (a bundle, say).
    """
    return {"apiVersion": API_VERSION, "kind": kind, "spec": _spec_of(kind, spec)}


def digest(kind: str, spec: Any) -> str:
    """Return ``sha256:<64 hex>`` of the canonical preimage of ``spec`` under ``kind``.

    Args:
        kind: One of the four digest kinds (the values of :data:`DIGEST_KINDS`).
        spec: As :func:`preimage` takes it.

    Raises:
        ArgumentError: for an unknown kind, ``None``, or an object of another kind.
        CanonicalizationError: when ``spec`` has no exact canonical form.
    """
    return "sha256:" + hashlib.sha256(canonical_bytes(preimage(kind, spec))).hexdigest()


def protocol_digest(spec: Any) -> str:
    """Digest of a BenchmarkProtocol's ``spec``.

    Args:
        spec: The spec (``ProtocolSpec`` or its JSON value), or the whole document.

    Raises:
        ArgumentError: for ``None`` or an object of another kind (a bundle, a run).
        CanonicalizationError: when the spec has no exact canonical form.
    """
    return digest("BenchmarkProtocol", spec)


def environment_digest(spec: Any) -> str:
    """Digest of an ExecutionEnvironment's ``spec``.

    Args:
        spec: The spec (``EnvironmentSpec`` or its JSON value), or the whole document.

    Raises:
        ArgumentError: for ``None`` or an object of another kind (a bundle, a run).
        CanonicalizationError: when the spec has no exact canonical form.
    """
    return digest("ExecutionEnvironment", spec)


def workload_digest(workload: Any) -> str:
    """Digest of a run's ``spec.workload`` (a ``Workload`` or its JSON value).

    Raises:
        ArgumentError: for ``None`` or an object of another kind (a run, say).
        CanonicalizationError: when the workload has no exact canonical form.
    """
    return digest("Workload", workload)


def implementation_digest(implementation: Any) -> str:
    """Digest of a run's ``spec.implementation`` (an ``Implementation`` or its JSON value).

    Raises:
        ArgumentError: for ``None`` or an object of another kind (a run, say).
        CanonicalizationError: when the implementation has no exact canonical form.
    """
    return digest("Implementation", implementation)

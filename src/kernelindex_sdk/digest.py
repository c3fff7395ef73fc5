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

import rfc8785

from ._converter import as_json
from ._jsonvalue import check_json_value
from ._schemas import API_VERSION, SAFE_INT
from .errors import CanonicalizationError

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


def preimage(kind: str, spec: Any) -> dict[str, Any]:
    """Return the object whose canonical bytes are hashed for ``kind``.

    ``spec`` may be a model; it is taken as its JSON value.
    """
    return {"apiVersion": API_VERSION, "kind": kind, "spec": as_json(spec)}


def digest(kind: str, spec: Any) -> str:
    """Return ``sha256:<64 hex>`` of the canonical preimage of ``spec`` under ``kind``.

    Raises:
        CanonicalizationError: when ``spec`` has no exact canonical form.
    """
    return "sha256:" + hashlib.sha256(canonical_bytes(preimage(kind, spec))).hexdigest()


def _spec_of(value: Any, kind: str) -> Any:
    # A whole document (model or JSON) stands for its spec: a spec never carries
    # apiVersion and kind (the schemas forbid extra keys), so this cannot mistake one.
    value = as_json(value)
    if (
        isinstance(value, dict)
        and value.get("kind") == kind
        and value.get("apiVersion") == API_VERSION
        and "spec" in value
    ):
        return value["spec"]
    return value


def protocol_digest(spec: Any) -> str:
    """Digest of a BenchmarkProtocol's ``spec``.

    Args:
        spec: The spec (``ProtocolSpec`` or its JSON value), or the whole document.

    Raises:
        CanonicalizationError: when the spec has no exact canonical form.
    """
    return digest("BenchmarkProtocol", _spec_of(spec, "BenchmarkProtocol"))


def environment_digest(spec: Any) -> str:
    """Digest of an ExecutionEnvironment's ``spec``.

    Args:
        spec: The spec (``EnvironmentSpec`` or its JSON value), or the whole document.

    Raises:
        CanonicalizationError: when the spec has no exact canonical form.
    """
    return digest("ExecutionEnvironment", _spec_of(spec, "ExecutionEnvironment"))


def workload_digest(workload: Any) -> str:
    """Digest of a run's ``spec.workload`` (a ``Workload`` or its JSON value).

    Raises:
        CanonicalizationError: when the workload has no exact canonical form.
    """
    return digest("Workload", workload)


def implementation_digest(implementation: Any) -> str:
    """Digest of a run's ``spec.implementation`` (an ``Implementation`` or its JSON value).

    Raises:
        CanonicalizationError: when the implementation has no exact canonical form.
    """
    return digest("Implementation", implementation)

"""Record digests: SHA-256 over the RFC 8785 canonical form of a preimage.

Every preimage has one shape, ``{"apiVersion": API_VERSION, "kind": KIND, "spec": SPEC}``
(docs/digests.md). This module is pure: JSON values in, bytes or strings out.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import rfc8785

from ._schemas import API_VERSION

__all__ = [
    "DIGEST_KINDS",
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

    Raises:
        rfc8785.CanonicalizationError: for values JSON cannot carry exactly (NaN,
            infinities, integers beyond 2^53 - 1, non-string keys).
    """
    return rfc8785.dumps(value)


def preimage(kind: str, spec: Any) -> dict[str, Any]:
    """Return the object whose canonical bytes are hashed for ``kind``."""
    return {"apiVersion": API_VERSION, "kind": kind, "spec": spec}


def digest(kind: str, spec: Any) -> str:
    """Return ``sha256:<64 hex>`` of the canonical preimage of ``spec`` under ``kind``."""
    return "sha256:" + hashlib.sha256(canonical_bytes(preimage(kind, spec))).hexdigest()


def protocol_digest(spec: Any) -> str:
    """Digest of a BenchmarkProtocol document's ``spec``."""
    return digest("BenchmarkProtocol", spec)


def environment_digest(spec: Any) -> str:
    """Digest of an ExecutionEnvironment document's ``spec``."""
    return digest("ExecutionEnvironment", spec)


def workload_digest(workload: Any) -> str:
    """Digest of a run's ``spec.workload``."""
    return digest("Workload", workload)


def implementation_digest(implementation: Any) -> str:
    """Digest of a run's ``spec.implementation``."""
    return digest("Implementation", implementation)

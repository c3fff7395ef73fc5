"""Record digests: SHA-256 over the RFC 8785 canonical form of a preimage.

Every preimage has one shape, ``{"apiVersion": API_VERSION, "kind": KIND, "spec": SPEC}``
(docs/digests.md). This module is pure: JSON values in, bytes or strings out.
"""

from __future__ import annotations

import hashlib
import json
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


_SAFE_INT: Final = 2**53 - 1


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what the stdlib encoder writes exactly as RFC 8785 does.

    That is: objects with string keys free of characters beyond U+FFFF (where code-point
    order, the stdlib's, and UTF-16 order, RFC 8785's, can differ), arrays, strings,
    booleans, null and integers within +-(2^53 - 1); no floats, whose ECMAScript forms
    differ from Python's repr.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key in node:
                if type(key) is not str or not (key.isascii() or max(key) <= "\uffff"):
                    return False
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is int:
            if not -_SAFE_INT <= node <= _SAFE_INT:
                return False
        elif not (kind is str or kind is bool or node is None):
            return False
    return True


def canonical_bytes(value: Any) -> bytes:
    """Return the RFC 8785 (JSON Canonicalization Scheme) UTF-8 bytes of a JSON value.

    Values without floats take the stdlib's C encoder, whose sorted, compact output is
    byte-identical to RFC 8785 for them (tests/test_digest.py checks this against
    rfc8785); everything else goes through rfc8785.

    Raises:
        rfc8785.CanonicalizationError: for values JSON cannot carry exactly (NaN,
            infinities, integers beyond 2^53 - 1, non-string keys).
    """
    if _plain(value):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: let rfc8785 decide
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

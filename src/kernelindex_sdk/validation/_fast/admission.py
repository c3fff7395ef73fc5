"""The input's rules for a bundle whose every object was admitted before, in a few lookups.

A sweep's lines name a new run and repeat the file's protocol and environment (the same
objects, handed out by :class:`~.bundles.BundleReader`) and a workload and an
implementation other lines declared. ``InputRules.admit`` checks each of them, making
pointers and problem lists for what is then found fine; :func:`known_bundle` answers
the common case, "nothing to report, nothing new to remember but the run's place", or
says False and admit runs in full (6 to 10% of a record's reading, in instructions:
benchmarks/results/reader_fast_parts.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

__all__ = ["known_bundle"]

# The bundle's shared documents and their digest fields; the run's digested objects.
_SHARED: Final = (("protocol", "protocolDigest"), ("environment", "environmentDigest"))
_RUN_OBJECTS: Final = (
    ("workload", "workload", "workloadDigest"),
    ("implementation", "implementation", "implementationDigest"),
)


class _Seen(Protocol):
    def same(self, other: Any) -> bool: ...


def known_bundle(
    doc: dict[str, Any],
    run_places: Mapping[str, str],
    admitted: Mapping[int, tuple[Any, str]],
    digests: Mapping[tuple[str, str], _Seen],
) -> bool:
    """Whether ``InputRules.admit`` would find no problem in the bundle ``doc`` and have
    nothing to remember but its run's place.

    That holds when its run's name is new; its protocol and environment are objects
    admitted before (held by ``admitted``, by id) under the digests its run declares; and
    its workload and implementation are the objects (the same JSON values) that earlier
    records declared under the same digests. Then admit finds no name repeated (only the
    run's is new, and protocol and environment names were checked with those objects),
    no digest standing for two objects, and remembers only the run's place.

    Args:
        doc: A schema-valid bundle.
        run_places: Each run name admitted, with its place.
        admitted: The protocol and environment objects admitted, by id, with the digest
            their run declared.
        digests: The first object admitted under each (kind, digest).
    """
    run = doc["run"]
    spec = run["spec"]
    if run["metadata"]["name"] in run_places:
        return False
    for key, field in _SHARED:
        member = doc.get(key)
        if member is not None:
            seen = admitted.get(id(member))
            if seen is None or seen[1] != spec[field]:
                return False
    for key, kind, field in _RUN_OBJECTS:
        value = spec.get(key)
        if value is not None:
            first = digests.get((kind, spec[field]))
            if first is None or not first.same(value):
                return False
    return True

"""One stored run as the store's queryable columns give it (no record text parsed).

History, the PR check and the dashboard read runs through :class:`RunRow`: what a
series needs (its key, its order, its statistics and what a change point's cause
compares) without parsing a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

__all__ = ["RunRow"]

# The labels of a run without any: one shared, read-only empty mapping.
_NO_LABELS: Final[Mapping[str, str]] = MappingProxyType({})


class RunRow(NamedTuple):
    """A stored run's columns.

    A named tuple: a history reads 10,000 of them at once, and a tuple is built in C
    from the query's row (an attrs class with 19 fields took 2 to 3 us per run in
    Python, as long as the rest of the query). Build one by keyword (the fields'
    order is not part of the contract); ``row._replace(...)`` gives a changed copy.

    Attributes:
        name: ``metadata.name`` of the run (unique in a store).
        status: ``spec.status`` (``passed``, ``failed``, ``unverified``, ...).
        observed_at: ``spec.observedAt`` as published (RFC 3339, UTC, ``Z``).
        commit: the ``kernelindex.dev/commit`` annotation, when the run has one.
        branch: the ``kernelindex.dev/branch`` annotation, when the run has one.
        commit_time: the ``kernelindex.dev/commit-time`` annotation (RFC 3339).
        median_ns: the latency median in ns (``timing.latencyNs.median``).
        p20_ns: the latency p20 in ns, from ``measurements`` (None when absent).
        p80_ns: the latency p80 in ns, from ``measurements`` (None when absent).
        workload_digest: ``spec.workloadDigest``.
        implementation_digest: ``spec.implementationDigest``.
        protocol_digest: ``spec.protocolDigest``.
        environment_digest: ``spec.environmentDigest``.
        operation: ``workload.operation`` (None when the run carries no workload).
        pass_: ``workload.pass`` (None when the run carries no workload).
        provider: ``implementation.provider`` (None when the run carries none).
        entry_point: ``implementation.entryPoint`` (None when absent).
        hardware: the environment's ``hardware.product`` (the GPU), e.g. ``NVIDIA H200``.
        labels: ``metadata.labels`` of the run (empty when it has none).
        degraded: why the GPU's state while the run was timed makes it unfit to
            compare (:func:`kernelindex_sdk.conditions.degraded_reason` of its
            ``spec.conditions``), None when fit or unrecorded; no verdict is drawn from a
            degraded run.
        samples: how many samples the run's timing took (``timing.samples``), None when
            unrecorded; the verdict bounds the run's own p20-p80 by it.
    """

    name: str
    status: str
    observed_at: str
    workload_digest: str
    implementation_digest: str
    protocol_digest: str
    environment_digest: str
    commit: str | None = None
    branch: str | None = None
    commit_time: str | None = None
    median_ns: int | None = None
    p20_ns: int | None = None
    p80_ns: int | None = None
    operation: str | None = None
    pass_: str | None = None
    provider: str | None = None
    entry_point: str | None = None
    hardware: str | None = None
    labels: Mapping[str, str] = _NO_LABELS
    degraded: str | None = None
    samples: int | None = None

    @property
    def order_key(self) -> str:
        """Where the run stands in its series: its commit time, else when it was observed."""
        return self.commit_time if self.commit_time is not None else self.observed_at

"""What a format's reader hands on: drafts of runs, and the entries it could not convert.

Each format reads its file into :class:`Draft` runs, each naming the protocol and the
environment it shares with others (:class:`Shared`), and :class:`Rejected` entries (a
location and a reason). :class:`Builder` turns a draft into a bundle with all four
digests; it keeps one document per protocol and environment spec, named in the output's
namespace, so that every run of one method and machine refers to the same two.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import attrs

from .. import digest
from .._base import names as _names
from .._base.schemas import API_VERSION
from .._base.timestamps import format_observed_at, utc_milliseconds
from ._namespace import Namespace, fingerprint

__all__ = ["Builder", "Draft", "Rejected", "Shared", "Where"]

_TITLE_MAX: Final = 512


@attrs.frozen
class Where:
    """Where an entry is in its file: a JSON pointer and its line (found on demand), or a
    CSV record's first line."""

    pointer: str = ""
    line: int | None = None
    find_line: Callable[[str], int | None] | None = attrs.field(default=None, eq=False)

    def resolve(self) -> tuple[int | None, str]:
        """The line (None when unknown) and the pointer."""
        if self.line is None and self.find_line is not None:
            return self.find_line(self.pointer), self.pointer
        return self.line, self.pointer


@attrs.frozen
class Rejected:
    """An entry that gives no record, and why."""

    where: Where
    reason: str


@attrs.frozen(eq=False)
class Shared:
    """A protocol or environment many runs refer to: kind, base name, title and spec."""

    kind: str
    base: str
    title: str
    spec: dict[str, Any]


@attrs.frozen(kw_only=True, eq=False)
class Draft:
    """One run as read from a file, before names and digests.

    Attributes:
        where: Its place in the file.
        name: The parts of the run's name, its time last added by the builder.
        title: A short title.
        protocol: How it was measured.
        environment: Where it ran.
        observed: When it was measured (aware).
        workload: What was computed (operation, pass, parameters).
        implementation: What computed it (provider, packages).
        status: ``passed``, ``unverified`` or ``failed``.
        native: ``sourceNative``: source, benchmark, externalId and metrics.
        timing: The timing, or None.
        measurements: Measured values beyond the timing.
        failure: Why a failed run has no measurement.
        labels: Identifying pairs.
        annotations: Observations (host, dates, provenance).
    """

    where: Where
    name: tuple[str, ...]
    title: str
    protocol: Shared
    environment: Shared
    observed: datetime
    workload: dict[str, Any]
    implementation: dict[str, Any]
    status: str
    native: dict[str, Any]
    timing: dict[str, Any] | None = None
    measurements: list[dict[str, Any]] = attrs.field(factory=list)
    failure: dict[str, Any] | None = None
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)


def _stamp(moment: datetime) -> str:
    observed = utc_milliseconds(moment)
    stamp = f"{observed.year:04d}-{observed:%m-%d-%H-%M-%S}"
    if observed.microsecond:
        stamp += f"-{observed.microsecond // 1000:03d}"
    return stamp


def _title(text: str) -> str:
    return text if len(text) <= _TITLE_MAX else text[: _TITLE_MAX - 3] + "..."


@attrs.define
class Builder:
    """Turns drafts into bundles; one document per shared spec, named in ``namespace``."""

    namespace: Namespace = attrs.field(factory=Namespace)
    _documents: dict[tuple[str, str], tuple[dict[str, Any], str]] = attrs.field(factory=dict)

    def shared(self, item: Shared) -> tuple[dict[str, Any], str]:
        """The document of a shared spec and its digest, made once per spec."""
        key = (item.kind, fingerprint(item.spec))
        if key not in self._documents:
            doc = {
                "apiVersion": API_VERSION,
                "kind": item.kind,
                "metadata": {
                    "name": self.namespace.shared(item.kind, item.base, item.spec),
                    "title": _title(item.title),
                },
                "spec": item.spec,
            }
            made = digest.digest(item.kind, item.spec)
            self._documents[key] = (doc, made)
        return self._documents[key]

    def bundle(self, draft: Draft) -> dict[str, Any]:
        """The draft's bundle, its run named by its content (not yet made unique)."""
        protocol, protocol_digest = self.shared(draft.protocol)
        environment, environment_digest = self.shared(draft.environment)
        spec: dict[str, Any] = {
            "status": draft.status,
            "observedAt": format_observed_at(draft.observed),
        }
        if draft.timing is not None:
            spec["timing"] = draft.timing
        if draft.measurements:
            spec["measurements"] = draft.measurements
        if draft.failure is not None:
            spec["failure"] = draft.failure
        spec.update(
            {
                "sourceNative": draft.native,
                "workload": draft.workload,
                "implementation": draft.implementation,
                "protocolDigest": protocol_digest,
                "workloadDigest": digest.workload_digest(draft.workload),
                "environmentDigest": environment_digest,
                "implementationDigest": digest.implementation_digest(draft.implementation),
            }
        )
        metadata: dict[str, Any] = {
            "name": _names.name(*draft.name, _stamp(draft.observed)),
            "title": _title(draft.title),
        }
        if draft.labels:
            metadata["labels"] = dict(draft.labels)
        if draft.annotations:
            metadata["annotations"] = dict(draft.annotations)
        run = {
            "apiVersion": API_VERSION,
            "kind": "BenchmarkRun",
            "metadata": metadata,
            "spec": spec,
        }
        return {"run": run, "protocol": protocol, "environment": environment}

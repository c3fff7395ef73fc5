"""Runs in their compact form: what compare and report need of a record, and nothing more.

A record (a bundle, or a bare run) becomes one :class:`Run` of a few scalars; the
workload, protocol and environment objects are kept once per digest in a
:class:`RunSet`, so reading 50,000 records holds 50,000 small objects, not 50,000 trees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import attrs

from .. import documents, validation
from .._base import arguments as _arguments
from .._base.noise import is_noisy
from .._base.units import NS_PER as _NS_PER
from .._json.converter import as_json
from ..conditions import degraded_reason
from ..errors import FileProblem, SchemaValidationError
from ..provenance import COMMIT
from ..validation import InputRules
from ..verdict import Point

__all__ = ["Run", "RunSet", "Stat", "Workload", "load_runs", "run_set"]

#: Metrics read from measurements when a run has no timing, most telling first.
_METRICS: Final = ("latency", "memory")


class Stat(NamedTuple):
    """One metric of a run: its median and, when recorded, p20 and p80 (same unit)."""

    metric: str
    unit: str
    median: float
    p20: float | None = None
    p80: float | None = None

    @property
    def low(self) -> float:
        """The interval's lower end: p20, or the median when p20 is not recorded."""
        return self.median if self.p20 is None else self.p20

    @property
    def high(self) -> float:
        """The interval's upper end: p80, or the median when p80 is not recorded."""
        return self.median if self.p80 is None else self.p80


@attrs.frozen(slots=True)
class Workload:
    """What was computed, shared by every run of one workload digest."""

    operation: str
    pass_: str
    parameters: tuple[tuple[str, Any], ...]
    bytes_moved: int | None = None

    def parameter(self, name: str) -> Any:
        """The value of parameter ``name``, or None when the workload has none."""
        for key, value in self.parameters:
            if key == name:
                return value
        return None

    def as_json(self) -> dict[str, Any]:
        """The workload object (``run.spec.workload``) it was read from, parameters by key."""
        found: dict[str, Any] = {"operation": self.operation, "pass": self.pass_}
        found["parameters"] = dict(self.parameters)
        if self.bytes_moved is not None:
            found["bytesMoved"] = self.bytes_moved
        return found


class Run(NamedTuple):
    """The compact form of one run (a tuple: 100,000 of them are built in a few seconds).

    Attributes:
        source: Where the record was read (``file:line``), or its position in a list.
        name: ``metadata.name``.
        status: ``passed``, ``unverified`` or ``failed``.
        observed_at: ``spec.observedAt``; its fixed format sorts as text.
        workload_digest, protocol_digest, environment_digest, implementation_digest:
            The four digests.
        workload: The workload object when the run carries it.
        provider: ``implementation.provider`` when the run carries the object.
        entry_point: ``implementation.entryPoint`` when recorded.
        failure: ``reason: message`` of a failed run.
        value: The run's primary number: latency (ns) when it has timing, else the
            first of memory or other medians in its measurements; None for a failed run.
        memory: A memory measurement recorded beside the latency, if any.
        samples: ``timing.samples``, how many samples the run timed (None when unknown).
        degraded: Why the run's timing is unfit to compare, by the one rule
            (:func:`kernelindex_sdk.conditions.degraded_reason`), or None.
        commit: The ``kernelindex.dev/commit`` annotation, when recorded.
        runs: How many runs it stands for: 1 for a record; more for the pooled replicates
            of one point (``compare --history`` builds such a base).
    """

    source: str
    name: str
    status: str
    observed_at: str
    workload_digest: str
    protocol_digest: str
    environment_digest: str
    implementation_digest: str
    workload: Workload | None
    provider: str | None
    entry_point: str | None
    failure: str | None
    value: Stat | None
    memory: Stat | None = None
    samples: int | None = None
    degraded: str | None = None
    commit: str | None = None
    runs: int = 1

    @property
    def point(self) -> Point | None:
        """The run as the verdict reads it (:class:`kernelindex_sdk.verdict.Point`); None
        for a run without a value."""
        v = self.value
        if v is None:
            return None
        return Point(
            median=v.median,
            p20=v.p20,
            p80=v.p80,
            runs=self.runs,
            # Samples time the latency: another metric's quantiles are not theirs.
            samples=self.samples if v.metric == "latency" else None,
            degraded=self.degraded,
        )

    @property
    def implementation(self) -> str:
        """A readable name of the implementation: provider, entry point, or short digest."""
        if self.provider is None:
            return short_digest(self.implementation_digest)
        return self.provider

    @property
    def implementation_key(self) -> tuple[str, ...]:
        """Who computed it, for pairing: provider and entry point, or the digest alone."""
        if self.provider is None:
            return ("digest", self.implementation_digest)
        return (self.provider, self.entry_point or "")

    @property
    def metric(self) -> str:
        """The metric of :attr:`value`; ``latency`` for a failed run."""
        return "latency" if self.value is None else self.value.metric

    @property
    def noisy(self) -> bool:
        """Whether the run's latency is noisy by the one rule (``_noise.is_noisy``: its
        p80 / p20 above 1.10), read from its p20 and p80 as any record carries them."""
        v = self.value
        return v is not None and v.metric == "latency" and is_noisy(v.p20, v.p80)


@attrs.define
class RunSet:
    """Runs read from one input, with the objects their digests stand for.

    Attributes:
        runs: The runs, in input order.
        objects: Digest -> spec of each protocol, environment and implementation
            object seen (kept once per digest); workloads are kept in their compact
            form, each run's :attr:`Run.workload` (see :meth:`spec`).
        problems: The problems of the records that were invalid, as ``validate``
            reports them; those records are not in ``runs``.
        invalid: How many records were invalid.
    """

    runs: list[Run] = attrs.field(factory=list)
    objects: dict[str, Any] = attrs.field(factory=dict)
    problems: list[FileProblem] = attrs.field(factory=list)
    invalid: int = 0
    _workloads: dict[str, Workload] = attrs.field(factory=dict, repr=False)
    # One str object per distinct digest, status or provider: 100,000 runs hold a few
    # hundred strings for them, not 600,000.
    _strings: dict[str, str] = attrs.field(factory=dict, repr=False)

    def spec(self, digest: str) -> Any:
        """The object ``digest`` stands for: a protocol, environment or implementation
        spec, or a workload as JSON; None when no record of the set carried it."""
        found = self.objects.get(digest)
        if found is None and digest in self._workloads:
            found = self._workloads[digest].as_json()
        return found

    def add(self, doc: dict[str, Any], source: str) -> None:
        """Add one valid record (a bundle or a BenchmarkRun, as JSON) read at ``source``."""
        run = doc.get("run", doc)
        spec = run["spec"]
        objects = self.objects
        protocol = doc.get("protocol")
        if protocol is not None:
            objects.setdefault(spec["protocolDigest"], protocol["spec"])
        environment = doc.get("environment")
        if environment is not None:
            objects.setdefault(spec["environmentDigest"], environment["spec"])
        self.runs.append(self._compact(run, spec, source))

    def _compact(self, run: dict[str, Any], spec: dict[str, Any], source: str) -> Run:
        workload_digest = spec["workloadDigest"]
        workload = self._workloads.get(workload_digest)
        if workload is None and "workload" in spec:
            w = spec["workload"]
            workload = Workload(
                operation=w["operation"],
                pass_=w["pass"],
                parameters=tuple(sorted(w["parameters"].items())),
                bytes_moved=w.get("bytesMoved"),
            )
            self._workloads[workload_digest] = workload
        intern = self._strings.setdefault
        implementation = spec.get("implementation")
        if implementation is None:
            provider = entry_point = None
        else:
            self.objects.setdefault(spec["implementationDigest"], implementation)
            provider = intern(implementation["provider"], implementation["provider"])
            entry_point = implementation.get("entryPoint")
            if entry_point is not None:
                entry_point = intern(entry_point, entry_point)
        status = intern(spec["status"], spec["status"])
        failure = spec.get("failure")
        value, memory = (None, None) if status == "failed" else _stats(spec)
        protocol, environment = spec["protocolDigest"], spec["environmentDigest"]
        observed_at = spec["observedAt"]
        implementation_digest = spec["implementationDigest"]
        timing = spec.get("timing")
        samples = None if timing is None else timing.get("samples")
        annotations = run["metadata"].get("annotations")
        commit = None if annotations is None else annotations.get(COMMIT)
        # Positional: 100,000 of these are built, and keywords cost twice as much.
        return Run(
            source,
            run["metadata"]["name"],
            status,
            intern(observed_at, observed_at),
            intern(workload_digest, workload_digest),
            intern(protocol, protocol),
            intern(environment, environment),
            intern(implementation_digest, implementation_digest),
            workload,
            provider,
            entry_point,
            None if failure is None else f"{failure['reason']}: {failure['message']}",
            value,
            memory,
            samples,
            # Only a run that recorded its GPU's state can be degraded.
            None if "conditions" not in spec else degraded_reason(spec),
            None if commit is None else intern(commit, commit),
        )


def _stats(spec: dict[str, Any]) -> tuple[Stat | None, Stat | None]:
    """The primary statistic of a run that did not fail, and a memory statistic beside it."""
    timing = spec.get("timing")
    if timing is None:
        return _measured_stats(spec.get("measurements", ()))
    # The common case, kept to one pass over the few measurements: it runs per record.
    latency = timing["latencyNs"]
    median = latency.get("median")
    if median is None:
        median = latency[timing["primaryStatistic"]]
    p20, p80 = latency.get("p20"), latency.get("p80")
    memory: dict[str, tuple[str, float]] | None = None
    for m in spec.get("measurements", ()):
        metric = m["metric"]
        if metric == "latency":
            statistic = m["statistic"]
            if statistic == "p20" and p20 is None:
                factor = _NS_PER.get(m["unit"])
                p20 = None if factor is None else m["value"] * factor
            elif statistic == "p80" and p80 is None:
                factor = _NS_PER.get(m["unit"])
                p80 = None if factor is None else m["value"] * factor
        elif metric == "memory":
            if memory is None:
                memory = {}
            memory[m["statistic"]] = (m["unit"], m["value"])
    return Stat("latency", "ns", median, p20, p80), (
        None if memory is None else _stat("memory", memory)
    )


def _measured_stats(measurements: Iterable[dict[str, Any]]) -> tuple[Stat | None, Stat | None]:
    """A run without timing: latency, memory or another metric from its measurements."""
    by_metric: dict[str, dict[str, tuple[str, float]]] = {}
    for m in measurements:
        by_metric.setdefault(m["metric"], {})[m["statistic"]] = (m["unit"], m["value"])
    memory = _stat("memory", by_metric.get("memory", {}))
    for metric in (*_METRICS, *sorted(by_metric)):
        stat = _stat(metric, by_metric.get(metric, {}))
        if stat is not None:
            return stat, (None if metric == "memory" else memory)
    return None, memory


def _ns(measured: tuple[str, float] | None) -> float | None:
    if measured is None or measured[0] not in _NS_PER:
        return None
    return measured[1] * _NS_PER[measured[0]]


def _stat(metric: str, stats: dict[str, tuple[str, float]]) -> Stat | None:
    if "median" not in stats:
        return None
    unit, median = stats["median"]
    if metric == "latency" and unit in _NS_PER:
        return Stat(metric, "ns", *(_ns(stats.get(q)) for q in ("median", "p20", "p80")))  # type: ignore[arg-type]
    p20, p80 = (stats[q][1] if q in stats and stats[q][0] == unit else None for q in ("p20", "p80"))
    return Stat(metric, unit, median, p20, p80)


def short_digest(digest: str) -> str:
    """The first 12 hex digits of a ``sha256:`` digest, as tables show it."""
    return digest.split(":", 1)[-1][:12]


def load_runs(
    paths: Iterable[str | Path],
    *,
    stdin: IO[bytes] | None = None,
    verify_digests: bool = False,
    on_notice: Callable[[str], None] | None = None,
) -> RunSet:
    """Read every record of the given files and folders (as ``validate`` does) into a RunSet.

    JSON Lines are read line by line; each valid record keeps only its compact form.
    Invalid records are checked like ``kernelindex validate`` and land in ``problems``;
    valid protocol and environment documents (no run) are passed over.

    Args:
        paths: Files and folders, as ``validate`` takes them.
        stdin: Where ``-`` reads from.
        verify_digests: Also recompute every digest whose object a record carries, as
            ``validate --verify-digests`` does; a record whose declared digest differs is
            invalid. Pairing trusts the declared digests otherwise.
        on_notice: Called with one line for each folder that holds no records.

    Raises:
        InputError: when a path does not exist or cannot be read.
        ArgumentError: when ``paths`` is not a list of paths (a single str, say).
    """
    result = RunSet()
    _load(result, paths, stdin, verify_digests, on_notice)
    return result


def _load(
    result: RunSet,
    paths: Iterable[str | Path],
    stdin: IO[bytes] | None,
    verify_digests: bool,
    on_notice: Callable[[str], None] | None = None,
) -> None:
    # JSON Lines files are streamed line by line: 50,000 records never sit in memory.
    results = documents.check_documents(
        paths, verify_digests=verify_digests, stdin=stdin, on_notice=on_notice
    )
    for checked in results:
        if checked.problems:
            result.invalid += 1
            result.problems.extend(checked.problems)
        elif _is_run(checked.value):
            # A valid protocol or environment document: nothing to compare, not an error.
            document = checked.document
            result.add(checked.value, f"{document.source}:{document.line}")


def _is_run(value: dict[str, Any]) -> bool:
    return "run" in value or value.get("kind") == "BenchmarkRun"


def run_set(records: Iterable[Any] | RunSet, *, validated: bool = False) -> RunSet:
    """A RunSet from records given as models or JSON values (bundles or runs).

    Protocol and environment documents are passed over.

    Args:
        records: The records, or a RunSet (returned as it is).
        validated: The records were validated by the code that made them (the harness
            checks each record it returns): they are not validated again.

    Raises:
        SchemaValidationError: when a record is invalid (its position is the source).
        ArgumentError: when ``records`` is not an iterable of records (one record, a str).
    """
    if isinstance(records, RunSet):
        return records
    records = _arguments.records(records)
    result = RunSet()
    rules = InputRules()
    for index, record in enumerate(records):
        value = as_json(record)
        where = f"record {index}"
        problems = [] if validated else validation.validate(value)
        if not problems:
            problems = list(rules.admit(value, where).problems)
        if problems:
            raise SchemaValidationError(problems=problems, source=where)
        if _is_run(value):
            result.add(value, f"record {index}")
    return result

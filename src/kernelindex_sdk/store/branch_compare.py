"""The PR check: NEW's records against the latest points of a branch's series in the store.

``kernelindex compare --history BRANCH NEW`` pairs each NEW run with the series of the
same workload, implementation (provider and entry point), protocol and GPU on BRANCH,
and compares it with the series' latest point, or with the median of its last N points
(``window``): the median, p20 and p80 of the base are then each the median of those
points' own. Pairing, the significance rule, the formats and the regression gate are
``kernelindex compare``'s own: this module only builds the base side from the store's
columns, so no stored record text is parsed.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from .. import compare as _compare
from .._analysis.runs import Run, RunSet, Stat, Workload, run_set
from ..errors import ArgumentError
from ._rows import RunRow
from .history import SpecLookup
from .series import Series, SeriesKey, group_series

__all__ = ["Baseline", "baseline", "compare_to_branch"]


@attrs.frozen
class Baseline:
    """The base side of the PR check.

    Attributes:
        runs: One run per series NEW measured: its latest point, or the median of its
            last points (``window``).
        notes: Per base run name, what the base is (``main: latest of 12 point(s)...``).
        hardware: Per base run name, its series' GPU.
    """

    runs: RunSet
    notes: dict[str, str]
    hardware: dict[str, str]


def _hardware(run: Run, new: RunSet) -> str:
    spec = new.objects.get(run.environment_digest)
    if isinstance(spec, Mapping):
        product = spec.get("hardware", {}).get("product")
        if product:
            return str(product)
    # A run without its environment object: its digest stands for the GPU, as in a series.
    return run.environment_digest


def _provider(run: Run) -> str:
    return run.provider if run.provider is not None else run.implementation_digest


def _wanted(new: RunSet) -> dict[tuple[str, str, str, str], set[str]]:
    """(workload, provider, entry point, GPU) of each NEW run, with its protocols."""
    found: dict[tuple[str, str, str, str], set[str]] = {}
    for r in new.runs:
        measured = (r.workload_digest, _provider(r), r.entry_point or "", _hardware(r, new))
        found.setdefault(measured, set()).add(r.protocol_digest)
    return found


def _chosen(
    grouped: Iterable[Series], wanted: dict[tuple[str, str, str, str], set[str]]
) -> Iterator[Series]:
    """The series NEW measured: of one measurement under several protocols, those of
    NEW's protocols, else the latest (so that the row says the protocols differ)."""
    by_measurement: dict[tuple[str, str, str, str], list[Series]] = {}
    for series in grouped:
        k = series.key
        measured = (k.workload_digest, k.provider, k.entry_point, k.hardware)
        if series.points and measured in wanted:
            by_measurement.setdefault(measured, []).append(series)
    for measured, found in by_measurement.items():
        same = [s for s in found if s.key.protocol_digest in wanted[measured]]
        # group_series lists one measurement's series oldest first.
        yield from same or found[-1:]


def _median(values: list[int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) or not known else float(statistics.median(known))


def _workload(spec: SpecLookup | None, digest: str, row: RunRow) -> Workload | None:
    found = None if spec is None else spec("workload", digest)
    if found is None:
        if row.operation is None or row.pass_ is None:
            return None
        return Workload(operation=row.operation, pass_=row.pass_, parameters=())
    return Workload(
        operation=found["operation"],
        pass_=found["pass"],
        parameters=tuple(sorted(found.get("parameters", {}).items())),
        bytes_moved=found.get("bytesMoved"),
    )


def _base_run(series: Series, window: int, workload: Workload | None, branch: str) -> Run:
    shown = series.points[-window:]
    latest = shown[-1]
    if len(shown) == 1:
        value = Stat("latency", "ns", float(latest.median_ns or 0), latest.p20_ns, latest.p80_ns)
    else:
        value = Stat(
            "latency",
            "ns",
            float(statistics.median(p.median_ns or 0 for p in shown)),
            _median([p.p20_ns for p in shown]),
            _median([p.p80_ns for p in shown]),
        )
    return Run(
        f"{branch}: {latest.name}",
        latest.name,
        latest.status,
        latest.observed_at,
        latest.workload_digest,
        latest.protocol_digest,
        latest.environment_digest,
        latest.implementation_digest,
        workload,
        latest.provider,
        latest.entry_point,
        None,
        value,
    )


def _note(series: Series, window: int, branch: str) -> str:
    shown = series.points[-window:]
    commit = shown[-1].commit
    at = "" if commit is None else f", commit {commit[:12]}"
    if len(shown) == 1:
        return f"{branch}: latest of {len(series.points)} point(s){at}"
    return f"{branch}: median of its last {len(shown)} point(s){at}"


def baseline(
    rows: Iterable[RunRow],
    new: RunSet,
    *,
    window: int = 1,
    spec: SpecLookup | None = None,
    branch: str = "BRANCH",
) -> Baseline:
    """The base side of the PR check: one run per series of ``rows`` that NEW measured.

    Args:
        rows: The branch's runs (``Store.rows(branch=...)``).
        new: NEW's runs.
        window: How many of each series' latest points make its base (their median).
        spec: ``Store.spec``: the stored objects, for labels and unpaired reasons.
        branch: The branch's name, for the notes.

    Returns:
        The base runs, with each one's note and GPU.

    Raises:
        ArgumentError: for a window below 1.
    """
    if window < 1:
        raise ArgumentError(argument="window", reason=f"expected an integer >= 1, got {window!r}")
    wanted = _wanted(new)
    base = RunSet()
    notes: dict[str, str] = {}
    hardware: dict[str, str] = {}
    seen_objects: set[str] = set()
    for series in _chosen(group_series(rows), wanted):
        key: SeriesKey = series.key
        latest = series.points[-1]
        run = _base_run(series, window, _workload(spec, key.workload_digest, latest), branch)
        base.runs.append(run)
        notes[run.name] = _note(series, window, branch)
        hardware[run.name] = key.hardware
        if spec is None:
            continue
        for kind, digest in (
            ("protocol", run.protocol_digest),
            ("environment", run.environment_digest),
            ("implementation", run.implementation_digest),
        ):
            if digest not in seen_objects:
                seen_objects.add(digest)
                found = spec(kind, digest)
                if found is not None:
                    base.objects[digest] = found
    return Baseline(base, notes, hardware)


def compare_to_branch(
    rows: Iterable[RunRow],
    new: Iterable[Any] | RunSet,
    *,
    window: int = 1,
    spec: SpecLookup | None = None,
    branch: str = "BRANCH",
    threshold: float = _compare.DEFAULT_THRESHOLD,
) -> _compare.Comparison:
    """Compare NEW with each matching series' latest point(s) on a branch.

    Runs pair as in :func:`kernelindex_sdk.compare.compare` across environments (a
    series keeps its GPU but not its driver or torch: a row whose environments differ
    says so), each NEW run only with the series of its own GPU. Each pair notes what its
    base is (``main: latest of 12 point(s), commit 1a2b3c4d5e6f``).

    Args:
        rows: The branch's runs (``Store.rows(branch=...)``), failed ones included.
        new: NEW's records (models or JSON values) or a RunSet from ``load_runs``.
        window: Compare with the median of each series' last ``window`` points.
        spec: ``Store.spec``, for labels and the reasons of unpaired runs.
        branch: The branch's name, as the notes show it.
        threshold: compare's threshold (0.05 = 5%).

    Returns:
        compare's :class:`~kernelindex_sdk.compare.Comparison`, BASE being the branch.

    Raises:
        ArgumentError: for a window below 1 or a bad threshold.
        SchemaValidationError: when a NEW record given as a model or JSON value is invalid.
    """
    new_set = run_set(new)
    # A series holds latency medians (the store's columns): a NEW run of another metric
    # (memory) has none to meet, and says so rather than pairing with nothing.
    other_metric = [r for r in new_set.runs if r.metric != "latency"]
    if other_metric:
        new_set = attrs.evolve(new_set, runs=[r for r in new_set.runs if r.metric == "latency"])
    found = baseline(rows, new_set, window=window, spec=spec, branch=branch)
    base = found.runs
    # One comparison per GPU: across environments, two GPUs' runs of one workload would
    # otherwise meet at one key.
    gpus: dict[str, tuple[RunSet, RunSet]] = {}
    for run in new_set.runs:
        sides = gpus.setdefault(_hardware(run, new_set), (_subset(base), _subset(new_set)))
        sides[1].runs.append(run)
    for run in base.runs:
        sides_of = gpus.get(found.hardware[run.name])
        if sides_of is not None:
            sides_of[0].runs.append(run)
    parts = [
        _compare.compare(b, n, threshold=threshold, across_environments=True)
        for b, n in gpus.values()
    ]
    if not parts:
        parts = [_compare.compare(base, new_set, threshold=threshold, across_environments=True)]
    pairs = [
        attrs.evolve(p, notes=(found.notes[p.base.name], *p.notes)) if p.base is not None else p
        for c in parts
        for p in c.pairs
    ]
    unpaired = [p for c in parts for p in c.unpaired]
    unpaired += [
        _compare.Pair(
            None, r, reason=f"a {r.metric} run: history keeps latency only ({branch} has no base)"
        )
        for r in other_metric
    ]
    first = parts[0]
    return attrs.evolve(
        first,
        pairs=pairs,
        unpaired=unpaired,
        varying=tuple(sorted({v for c in parts for v in c.varying})),
        base=base,
        new=new_set,
        several_environments=len(parts) > 1 or first.several_environments,
    )


def _subset(of: RunSet) -> RunSet:
    """An empty RunSet that shares ``of``'s objects (for labels and reasons)."""
    return RunSet(runs=[], objects=of.objects, problems=of.problems, invalid=of.invalid)

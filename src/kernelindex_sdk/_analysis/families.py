"""Runs grouped into workload families, and each family's table rows.

:mod:`kernelindex_sdk.report` renders and plots the families; the benchmark summary
(:mod:`kernelindex_sdk._analysis.bench_summary`) prints their rows too, so they live
here, below both. Their public names are ``kernelindex_sdk.report``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs

from .._base import arguments as _arguments
from .._base.display import printable, short_repr
from ..errors import ArgumentError, InputError
from .labels import environment_label
from .runs import Run, RunSet, Stat, run_set, short_digest
from .tables import spread

__all__ = ["Family", "families", "table_rows", "x_key"]


@attrs.frozen
class Family:
    """Runs of one workload family: one line per implementation against ``x``.

    Attributes:
        operation: The workload's operation (or a short workload digest without one).
        pass_: The timed pass.
        metric: ``latency``, ``memory`` or another measured metric.
        unit: The unit of the values (``ns`` for latency).
        x: The swept parameter, or None when nothing varies.
        fixed: The other parameters, with their values.
        environment: The GPU (``hardware.product``) or a short environment digest.
        protocol_digest: The protocol the runs followed.
        implementations: Implementation names, in the order first seen.
        points: ``(x_key(x value), implementation) -> run`` (the latest run where
            several); :meth:`run` and :meth:`stat` take the x value itself.
        bytes_moved: ``x_key(x value) -> bytesMoved`` where the workload declares it
            (:meth:`moved` takes the x value).
    """

    operation: str
    pass_: str
    metric: str
    unit: str
    x: str | None
    fixed: tuple[tuple[str, Any], ...]
    environment: str
    environment_digest: str
    protocol_digest: str
    implementations: tuple[str, ...]
    points: dict[tuple[Any, str], Run]
    bytes_moved: dict[Any, int]

    @property
    def x_values(self) -> list[Any]:
        """The swept values, sorted (numbers numerically, others as text)."""
        values: dict[tuple[bool, Any], Any] = {}
        for key, _ in self.points:
            values.setdefault(key, key[1])
        return _sorted_values(values.values())

    @property
    def title(self) -> str:
        """``jsd forward · dtype=fp32 vocab=128256 · NVIDIA H200``."""
        fixed = " ".join(f"{k}={v}" for k, v in self.fixed)
        return " · ".join(
            p for p in (f"{self.operation} {self.pass_}", fixed, self.environment) if p
        )

    def run(self, x: Any, implementation: str) -> Run | None:
        """The run of one point, or None when it did not run."""
        return self.points.get((x_key(x), implementation))

    def stat(self, x: Any, implementation: str) -> Stat | None:
        """The value of one point, or None when it did not run or failed."""
        run = self.run(x, implementation)
        return None if run is None else run.value

    def moved(self, x: Any) -> int | None:
        """The bytesMoved of the workload at ``x``, where declared."""
        return self.bytes_moved.get(x_key(x))


def x_key(value: Any) -> tuple[bool, Any]:
    """A parameter value as a key that keeps JSON's types apart: Python calls ``True``
    equal to ``1`` (and ``False`` to ``0``), which would merge two rows and lose runs;
    ``1`` and ``1.0`` are one JSON number and stay one key."""
    return (isinstance(value, bool), value)


def _sorted_values(values: Iterable[Any]) -> list[Any]:
    def key(v: Any) -> tuple[int, float, str]:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, float(v), "")
        return (1, 0.0, str(v))

    return sorted(values, key=key)


def _choose_x(runs: list[Run], x: str | None) -> str | None:
    values: dict[str, set[str]] = {}
    for run in runs:
        if run.workload is not None:
            for k, v in run.workload.parameters:
                values.setdefault(k, set()).add(repr(v))
    if x is not None:
        return x if x in values else None
    varying = [k for k, v in values.items() if len(v) > 1]
    if not varying:
        return None

    def numeric(name: str) -> bool:
        return all(
            isinstance(r.workload.parameter(name), (int, float))
            for r in runs
            if r.workload is not None
        )

    # The parameter with the most values is the sweep; the rest split it into families.
    return max(sorted(varying), key=lambda k: (len(values[k]), numeric(k)))


def _names(runs: list[Run]) -> dict[tuple[str, ...], str]:
    """A readable name per implementation; the entry point only where providers collide."""
    keys: dict[tuple[str, ...], Run] = {}
    for run in runs:
        keys.setdefault(run.implementation_key, run)
    providers = [r.implementation for r in keys.values()]
    return {
        key: run.implementation
        if providers.count(run.implementation) == 1
        else f"{run.implementation} ({run.entry_point or short_digest(run.implementation_digest)})"
        for key, run in keys.items()
    }


def families(records: Iterable[Any] | RunSet, *, x: str | None = None) -> list[Family]:
    """Group runs into workload families, in the order their runs first appear.

    Args:
        records: Records (models or JSON values) or a RunSet from ``load_runs``.
        x: The parameter to sweep; by default, per group, the varying parameter with
            the most values.

    Returns:
        The families; a failed run is a point without a value.

    Raises:
        InputError: when ``x`` names a parameter no run has.
        SchemaValidationError: when a record given as a model or JSON value is invalid.
    """
    runs = run_set(records)
    if x is not None and not isinstance(x, str):
        raise ArgumentError(argument="x", reason=f"expected a parameter name, got {short_repr(x)}")
    groups: dict[tuple[Any, ...], list[Run]] = {}
    for run in _with_memory(runs.runs):
        w = run.workload
        what = (run.workload_digest,) if w is None else (w.operation, w.pass_)
        key = (run.metric, *what, run.environment_digest, run.protocol_digest)
        groups.setdefault(key, []).append(run)
    out: list[Family] = []
    for members in groups.values():
        swept = _choose_x(members, x)
        out.extend(_split(members, swept, runs))
    if x is not None and not any(f.x == x for f in out):
        known = sorted({k for r in runs.runs if r.workload for k, _ in r.workload.parameters})
        raise InputError(
            source="--x", reason=f"no run has parameter {x!r}; parameters: {', '.join(known)}"
        )
    return out


def _with_memory(runs: list[Run]) -> Iterator[Run]:
    """Each run, then a memory run for each latency run that also measured its memory."""
    for run in runs:
        yield run
        if run.memory is not None and run.value is not None:
            yield run._replace(value=run.memory, memory=None)


def _split(members: list[Run], swept: str | None, runs: RunSet) -> list[Family]:
    by_fixed: dict[tuple[tuple[str, Any], ...], list[Run]] = {}
    fixed_of: dict[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]] = {}
    for run in members:
        params = () if run.workload is None else run.workload.parameters
        fixed = tuple((k, v) for k, v in params if k != swept)
        # Keyed with JSON's types apart: flag=true and flag=1 are two families.
        key = tuple((k, x_key(v)) for k, v in fixed)
        fixed_of.setdefault(key, fixed)
        by_fixed.setdefault(key, []).append(run)
    out = []
    for key, group in by_fixed.items():
        fixed = fixed_of[key]
        names = _names(group)
        points: dict[tuple[Any, str], Run] = {}
        moved: dict[Any, int] = {}
        for run in group:
            xv = None if swept is None or run.workload is None else run.workload.parameter(swept)
            point = (x_key(xv), names[run.implementation_key])
            if point not in points or points[point].observed_at < run.observed_at:
                points[point] = run
            if run.workload is not None and run.workload.bytes_moved is not None:
                moved[x_key(xv)] = run.workload.bytes_moved
        first = group[0]
        unit = next((r.value.unit for r in group if r.value is not None), "ns")
        out.append(
            Family(
                operation=first.workload.operation if first.workload else "workload",
                pass_=(
                    first.workload.pass_ if first.workload else short_digest(first.workload_digest)
                ),
                metric=first.metric,
                unit=unit,
                x=swept,
                fixed=fixed,
                environment=environment_label(first, runs),
                environment_digest=first.environment_digest,
                protocol_digest=first.protocol_digest,
                implementations=tuple(dict.fromkeys(names[r.implementation_key] for r in group)),
                points=points,
                bytes_moved=moved,
            )
        )
    return out


def _cell(family: Family, x: Any, name: str) -> str:
    run = family.run(x, name)
    if run is None:
        return "-"
    if run.status == "failed":
        return "failed"
    v = run.value
    if v is None:
        return "no value"
    cell = spread(v.median, v.p20, v.p80, v.unit)
    return f"{cell} noisy" if run.noisy else cell


def _relative(family: Family, x: Any, name: str) -> str:
    """Speedup (first / this) for time; this / first for other metrics, such as memory."""
    first, this = family.stat(x, family.implementations[0]), family.stat(x, name)
    if first is None or this is None or first.median <= 0 or this.median <= 0:
        return "-"
    if first.unit != this.unit:
        # Medians in different units (MiB and B, say) are never divided.
        return "units differ"
    ratio = first.median / this.median if family.unit == "ns" else this.median / first.median
    # Small ratios keep three significant digits (0.00154x, not 0.00x).
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.3g}x"


def table_rows(
    family: Family, esc: Callable[[str], str] = printable
) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a family's table, record text passed through ``esc``
    (printable for text; :func:`~kernelindex_sdk._base.display.markdown_text` for Markdown).

    Raises:
        ArgumentError: when ``family`` is not a Family.
    """
    _arguments.instance(family, Family, "family")
    first, others = family.implementations[0], family.implementations[1:]
    word = "speedup" if family.unit == "ns" else family.metric
    header = [esc(family.x or "point"), *map(esc, family.implementations)]
    header += [esc(f"{word} {name} vs {first}") for name in others]
    rows = []
    for x in family.x_values:
        row = [esc("-" if x is None else str(x))]
        row += [_cell(family, x, name) for name in family.implementations]
        row += [_relative(family, x, name) for name in others]
        rows.append(row)
    return header, rows

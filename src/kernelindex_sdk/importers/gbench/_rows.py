"""Google Benchmark's rows grouped into benchmark instances.

One instance (a function with one set of arguments) writes one row per repetition
(``run_type: iteration``) and, with repetitions, one ``aggregate`` row per statistic:
``_mean``, ``_median``, ``_stddev``, ``_cv`` and any the benchmark registered. A family
measured for its complexity adds two rows of its own, ``_BigO`` and ``_RMS``: a fit over
the family's instances. Files written before ``run_type`` existed (Google Benchmark
before 1.5) name aggregates only by their suffix; such a row is an aggregate when a row
of its stem is in the file too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import attrs

from ._names import parse_run_name

__all__ = ["AGGREGATES", "FITS", "Instance", "group", "rows_of"]

#: The aggregates Google Benchmark computes for every repeated benchmark.
AGGREGATES: Final = ("mean", "median", "stddev", "cv")
#: The complexity fit's rows.
FITS: Final = ("BigO", "RMS")


@attrs.define
class Instance:
    """The rows of one benchmark instance, in file order, each with its index.

    ``key`` is its run name (``BM_fill/rows:8/cols:64``), or, for rows that carry none,
    their name without an aggregate's suffix.
    """

    key: str
    family_index: int | None
    rows: list[tuple[int, dict[str, Any]]] = attrs.field(factory=list)
    aggregates: dict[str, tuple[int, dict[str, Any]]] = attrs.field(factory=dict)
    fits: list[tuple[int, dict[str, Any]]] = attrs.field(factory=list)
    #: Rows this instance cannot use, with the reason.
    bad: list[tuple[int, str]] = attrs.field(factory=list)

    @property
    def first(self) -> int:
        """The index of its first row."""
        indices = [i for i, _ in self.rows] + [i for i, _ in self.aggregates.values()]
        return min(indices, default=self.bad[0][0] if self.bad else 0)


def _name(row: dict[str, Any]) -> str:
    name = row.get("name")
    return name if isinstance(name, str) else ""


def _aggregate_name(row: dict[str, Any], stems: set[str]) -> str | None:
    """The aggregate a row is, or None for a repetition row."""
    if row.get("run_type") == "aggregate":
        name = row.get("aggregate_name")
        return name if isinstance(name, str) else ""
    if "run_type" in row:
        return None
    name = _name(row)
    for suffix in (*AGGREGATES, *FITS):
        if name.endswith(f"_{suffix}") and name[: -len(suffix) - 1] in stems:
            return suffix
    return None


def _key(row: dict[str, Any], aggregate: str | None) -> str:
    run_name = row.get("run_name")
    if isinstance(run_name, str):
        return run_name
    name = _name(row)
    if aggregate and name.endswith(f"_{aggregate}"):
        return name[: -len(aggregate) - 1]
    return name


def _group_key(row: dict[str, Any], key: str) -> tuple[Any, ...]:
    """What makes rows one instance: the run name; or, for rows without one, the family
    and instance indices when they have them (as Google Benchmark's compare.py pairs
    them), else the name."""
    family, instance = _family(row), row.get("per_family_instance_index")
    if "run_name" not in row and family is not None and isinstance(instance, int):
        return ("index", family, instance)
    return ("name", key)


def _family(row: dict[str, Any]) -> int | None:
    index = row.get("family_index")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def group(rows: list[Any]) -> tuple[list[Instance], list[tuple[int, str]]]:
    """The instances of a file's rows, in order of their first row.

    Returns:
        The instances (a complexity fit attached to every instance of its family), and
        the rows that belong to none, with the reason.
    """
    plain = [r for r in rows if isinstance(r, dict)]
    stems = {_name(r) for r in plain if "run_type" not in r}
    instances: dict[tuple[Any, ...], Instance] = {}
    fits: list[tuple[int, dict[str, Any], str]] = []
    loose: list[tuple[int, str]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            loose.append((i, "a benchmark row is an object"))
            continue
        if not _name(row):
            loose.append((i, "the row has no name"))
            continue
        aggregate = _aggregate_name(row, stems)
        key = _key(row, aggregate)
        if aggregate in FITS:
            fits.append((i, row, key))
            continue
        instance = instances.setdefault(_group_key(row, key), Instance(key, _family(row)))
        if aggregate is None:
            instance.rows.append((i, row))
        elif not aggregate:
            instance.bad.append((i, "an aggregate row without aggregate_name"))
        elif aggregate in instance.aggregates:
            instance.bad.append((i, f"a second {aggregate!r} aggregate of {key!r}"))
        else:
            instance.aggregates[aggregate] = (i, row)
    for i, row, key in fits:
        family = _family(row)
        owners = [
            inst
            for inst in instances.values()
            if (family is not None and inst.family_index == family)
            or (family is None and _stem(inst.key) == _stem(key))
        ]
        if not owners:
            loose.append((i, f"a complexity fit ({_name(row)!r}) of no benchmark in the file"))
        for inst in owners:
            inst.fits.append((i, row))
    return sorted(instances.values(), key=lambda inst: inst.first), loose


def _stem(run_name: str) -> str:
    return parse_run_name(run_name).family


def rows_of(instance: Instance) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every row of an instance: repetitions, then aggregates."""
    yield from instance.rows
    yield from instance.aggregates.values()

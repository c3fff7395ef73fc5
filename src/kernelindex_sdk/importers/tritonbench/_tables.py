"""TritonBench's output read into cells: one ``(x, provider)`` point and its metrics.

TritonBench writes one result table two ways (``tritonbench/utils/triton_op.py``,
``BenchmarkOperatorResult``):

- CSV (``--csv``, ``--output FILE``, ``--output-dir DIR --csv``): ``;``-separated; the
  header is the x label (``(M, N, K)``), then x-only metrics, then ``{provider}-{metric}``
  per provider; a provider whose run failed has its error message in its first metric
  cell and the rest empty; the last row is ``average``; with ``kernel_source_hash``, a
  ``hashes`` row holds one hash per provider.
- JSON (``--output-json FILE``, ``--output-dir DIR``): a flat object,
  ``tritonbench_{op}_{mode}[x_{x}-{provider}]_{metric}``, plus ``...[{provider}]-{metric}-avg``
  averages.

A latency is the median (``statistics.median_low``) of the samples left after removing
outliers beyond 1.5 IQR, in ms, written as text. A boolean (accuracy) is 1.0 or 0.0; a
list is its median.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import attrs

from .._csvfile import BadRecord, CsvFile
from .._draft import Rejected, Where
from .._jsonfile import FileRejectedError, JsonFile
from .._values import parse_number

__all__ = ["MODES", "Point", "csv_points", "json_points"]

#: TritonBench's modes -> the schema's passes.
MODES: Final = {
    "fwd": "forward",
    "bwd": "backward",
    "fwd_bwd": "full",
    "fwd_no_grad": "no_grad_forward",
}
# Rows TritonBench derives from the others.
_DERIVED_ROWS: Final = frozenset({"average"})
_HASHES: Final = "hashes"
_KEY: Final = re.compile(
    r"tritonbench_(?P<bench>.*)\[x_(?P<x>.*)-(?P<provider>[^-\[\]]*)\]_(?P<metric>.+)\Z", re.DOTALL
)
_AVERAGE: Final = re.compile(r"tritonbench_.*\[[^\[\]]*\]-.+-avg\Z", re.DOTALL)


@attrs.define
class Point:
    """One provider at one x value: its metrics as the file writes them."""

    where: Where
    x: str
    provider: str
    #: The x column's label (``(M, N, K)``); the JSON form writes none.
    label: str = ""
    metrics: dict[str, Any] = attrs.field(factory=dict)
    shared: dict[str, Any] = attrs.field(factory=dict)
    source_hash: str | None = None


def cell(text: str, column: str) -> Any:
    """A CSV cell's value: None when empty, a number when it reads as one, else text.

    Raises:
        ValueError: for a loose number (``1_000``, ``nan``) or one beyond range.
    """
    text = text.strip(" \t\r\n")
    if not text:
        return None
    number = parse_number(text, column)
    return text if number is None else number


def csv_points(source: str) -> Iterator[Point | Rejected]:
    """The points of a TritonBench CSV, and the records that give none."""
    with CsvFile(source, (), kind="TritonBench CSV", delimiter=";", ragged=True) as table:
        providers: list[str] = []
        for record in table.records():
            if isinstance(record, BadRecord):
                if record.ends_file:
                    raise FileRejectedError(record.reason, record.line)
                yield Rejected(Where(line=record.line), record.reason)
                continue
            header = list(table.header)
            if not providers:
                providers = list(
                    dict.fromkeys(h.rpartition("-")[0] for h in header[1:] if "-" in h)
                )
                if not providers:
                    raise FileRejectedError(
                        "not a TritonBench CSV: no '{provider}-{metric}' column"
                    )
            yield from _csv_row(record.line, record.fields, header, providers)


def _csv_row(
    line: int, fields: dict[str, str], header: list[str], providers: list[str]
) -> Iterator[Point | Rejected]:
    where = Where(line=line)
    label = header[0]
    x = fields.get(label, "").strip(" \t\r\n")
    if x in _DERIVED_ROWS:
        return
    if x == _HASHES:
        # One hash per provider, in provider order (TritonBench writes no others).
        hashes = [fields[h] for h in header[1:] if h in fields]
        for provider, value in zip(providers, hashes, strict=False):
            yield Point(where, _HASHES, provider, label, source_hash=value.strip())
        return
    try:
        shared = {h: cell(fields[h], h) for h in header[1:] if "-" not in h and h in fields}
        points = {p: Point(where, x, p, label, shared=shared) for p in providers}
        for h in header[1:]:
            if "-" in h and h in fields:
                provider, _, metric = h.rpartition("-")
                points[provider].metrics[metric] = cell(fields[h], h)
    except ValueError as err:
        yield Rejected(where, str(err))
        return
    yield from points.values()


def json_points(doc: JsonFile) -> tuple[str, Iterator[Point | Rejected]]:
    """The benchmark name (``{op}_{mode}``) of a TritonBench JSON file, and its points.

    Raises:
        FileRejectedError: for a file that is not TritonBench's JSON, or names more than
            one benchmark.
    """
    root = doc.value
    if not isinstance(root, dict) or not root:
        raise FileRejectedError("not a TritonBench JSON file: expected an object of metrics")
    parsed: list[tuple[str, re.Match[str], Any]] = []
    benches: set[str] = set()
    for key, value in root.items():
        if _AVERAGE.match(key):
            continue
        found = _KEY.match(key)
        if found is None:
            raise FileRejectedError(
                f"not a TritonBench JSON file: key {key[:80]!r} is not"
                " 'tritonbench_{op}_{mode}[x_{x}-{provider}]_{metric}'"
            )
        benches.add(found.group("bench"))
        parsed.append((key, found, value))
    if len(benches) != 1:
        raise FileRejectedError(f"the file names {len(benches)} benchmarks; expected one")
    return benches.pop(), _json_points(doc, parsed)


def _json_points(
    doc: JsonFile, parsed: list[tuple[str, re.Match[str], Any]]
) -> Iterator[Point | Rejected]:
    points: dict[tuple[str, str], Point] = {}
    providers: list[str] = []
    hashes: list[tuple[str, Any]] = []
    for key, found, value in parsed:
        x, provider, metric = found.group("x"), found.group("provider"), found.group("metric")
        if x in _DERIVED_ROWS:
            continue
        if x == _HASHES:
            hashes.append((key, value))
            continue
        if provider not in providers:
            providers.append(provider)
        where = Where(pointer="/" + key.replace("~", "~0").replace("/", "~1"), find_line=doc.line)
        point = points.setdefault((x, provider), Point(where, x, provider))
        point.metrics[metric] = value
    yield from points.values()
    # TritonBench writes the hashes row under the first columns' keys, one hash per
    # provider in provider order.
    for provider, (key, value) in zip(providers, hashes, strict=False):
        where = Where(pointer="/" + key.replace("~", "~0").replace("/", "~1"), find_line=doc.line)
        yield Point(where, _HASHES, provider, source_hash=str(value))

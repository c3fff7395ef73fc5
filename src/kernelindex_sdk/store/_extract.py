"""What a stored record gives each table: its run's columns and its digested objects.

Works on a validated record's JSON value (a bundle, a run, a protocol or an
environment); nothing here re-validates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

import attrs
import orjson

from .. import provenance
from .._base.units import NS_PER as _NS_PER
from ..conditions import degraded_reason
from ..digest import environment_digest, protocol_digest

__all__ = [
    "GROUP_COLUMNS",
    "ObjectRow",
    "canonical",
    "json_equal",
    "object_row",
    "object_specs",
    "objects_of",
    "run_columns",
    "run_of",
    "run_row",
    "samples_of",
]


def _encoder(*, sort_keys: bool) -> Callable[[Any], str]:
    """Compact JSON text, as ``json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
    sort_keys=...).encode`` writes it, through json's C encoder made once: ``encode``
    builds a new one per call, which cost more than encoding a run's labels."""
    python = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover (CPython has it)
        return python.encode
    encode = make(
        None, None, json.encoder.encode_basestring, None, ":", ",", sort_keys, False, True
    )

    def text(value: Any) -> str:
        return "".join(encode(value, 0))

    return text


_CANONICAL: Final = _encoder(sort_keys=True)
_COMPACT: Final = _encoder(sort_keys=False)


def canonical(value: Any) -> str:
    """A JSON text that is equal for equal JSON values (sorted keys, no spaces)."""
    return _CANONICAL(value)


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as JSON: numbers by value (``1`` and ``1.0``, or
    a float PostgreSQL's jsonb gives back as an integer), never ``true`` for ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) if isinstance(a, float) or isinstance(b, float) else a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@attrs.frozen
class ObjectRow:
    """A digested object: its table's kind, digest, spec and the columns taken from it."""

    kind: str
    digest: str
    spec: Any
    extra: tuple[Any, ...]

    @property
    def spec_text(self) -> str:
        """The spec as stored (canonical JSON text)."""
        return canonical(self.spec)


def run_of(record: dict[str, Any]) -> dict[str, Any] | None:
    """The run of a bundle or a run record; None for a protocol or environment."""
    if "run" in record:
        run: dict[str, Any] = record["run"]
        return run
    return record if record.get("kind") == "BenchmarkRun" else None


def _extra(kind: str, spec: dict[str, Any], name: str | None) -> tuple[Any, ...]:
    if kind == "workload":
        return (spec.get("operation"), spec.get("pass"))
    if kind == "implementation":
        return (spec.get("provider"), spec.get("entryPoint"))
    if kind == "protocol":
        return (name,)
    hardware = spec.get("hardware")
    return (name, hardware.get("product") if isinstance(hardware, dict) else None)


def object_specs(record: dict[str, Any]) -> Iterator[tuple[str, str, Any, str | None]]:
    """``(kind, digest, spec, name)`` of each digested object a record carries.

    A run's workload and implementation, and a bundle's protocol and environment, go by
    the digests the run declares (``name`` is the document's, None for the run's own
    objects). A protocol or environment document on its own goes by the digest of its
    spec, computed.
    """
    run = run_of(record)
    if run is None:
        kind = "protocol" if record["kind"] == "BenchmarkProtocol" else "environment"
        spec = record["spec"]
        digest = protocol_digest(spec) if kind == "protocol" else environment_digest(spec)
        yield kind, digest, spec, record["metadata"]["name"]
        return
    spec = run["spec"]
    for kind in ("workload", "implementation"):
        obj = spec.get(kind)
        if obj is not None:
            yield kind, spec[f"{kind}Digest"], obj, None
    if "run" in record:
        for kind in ("protocol", "environment"):
            doc = record.get(kind)
            if doc is not None:
                yield kind, spec[f"{kind}Digest"], doc["spec"], doc["metadata"]["name"]


def object_row(kind: str, digest: str, spec: Any, name: str | None) -> ObjectRow:
    """The row of an object table for one object."""
    return ObjectRow(kind, digest, spec, _extra(kind, spec, name))


def objects_of(record: dict[str, Any]) -> Iterator[ObjectRow]:
    """The rows of the digested objects a record carries (see :func:`object_specs`)."""
    for found in object_specs(record):
        yield object_row(*found)


#: The latency columns' range: both stores keep them as 64-bit integers.
NS_MIN: Final = -(2**63)
NS_MAX: Final = 2**63 - 1


def _whole(ns: float | None) -> int | None:
    """A latency in whole ns (rounded half to even), or None."""
    return None if ns is None else round(ns)


def _fits(ns: int | None) -> bool:
    """Whether a latency fits the store's 64-bit integer column (or is absent)."""
    return ns is None or NS_MIN <= ns <= NS_MAX


def _latency(spec: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    """Median, p20 and p80 in whole ns: from ``timing.latencyNs``, else from the first
    latency measurement of that statistic in a unit of time."""
    latency = (spec.get("timing") or {}).get("latencyNs") or {}
    median, p20, p80 = latency.get("median"), latency.get("p20"), latency.get("p80")
    for measurement in spec.get("measurements", ()):
        if median is not None and p20 is not None and p80 is not None:
            break
        factor = _NS_PER.get(measurement["unit"])
        if measurement["metric"] != "latency" or factor is None:
            continue
        statistic = measurement["statistic"]
        if statistic == "median" and median is None:
            median = measurement["value"] * factor
        elif statistic == "p20" and p20 is None:
            p20 = measurement["value"] * factor
        elif statistic == "p80" and p80 is None:
            p80 = measurement["value"] * factor
    return _whole(median), _whole(p20), _whole(p80)


#: The columns of a run that ``run_groups`` (layout 3) holds once per distinct
#: combination, in the order of ``_layout.group_key``'s list.
GROUP_COLUMNS: Final = (
    "status",
    "branch",
    "workload_digest",
    "implementation_digest",
    "protocol_digest",
    "environment_digest",
    "labels",
)

#: The columns :func:`run_columns` fills, in the order of its values.
RUN_COLUMNS: Final = (
    "name",
    "observed_at",
    "commit_id",
    "commit_time",
    "median_ns",
    "p20_ns",
    "p80_ns",
    # Together and in their order: a run's group (layout 3) is one slice of its values.
    *GROUP_COLUMNS,
    "annotations",
    "source",
    "ingested_at",
    # Layout 4: why the run is unfit to compare (conditions.degraded_reason), else None.
    "degraded",
    # Layout 4: how many samples its timing took (timing.samples), else None.
    "samples",
)


def samples_of(spec: dict[str, Any]) -> int | None:
    """``runs.samples`` of a run's spec: ``timing.samples``, None without timing or count.

    The schema's integer admits ``5.0``: the column keeps it as the integer it is.
    """
    timing = spec.get("timing")
    count = timing.get("samples") if isinstance(timing, dict) else None
    if isinstance(count, float) and count.is_integer():
        return int(count)
    return count if type(count) is int else None


def _compact(value: dict[str, Any] | None) -> str:
    """A run's labels or annotations (string to string) as compact JSON text.

    orjson writes every string as json's encoder does with ``ensure_ascii=False``
    (tests/store/test_store.py compares the two over every code point) several times
    faster; what it refuses (a lone surrogate, a value of another type) json writes.
    """
    if not value:
        return "{}"
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return _COMPACT(value)


def run_columns(run: dict[str, Any], source: str, ingested_at: str) -> tuple[Any, ...]:
    """The values of :data:`RUN_COLUMNS` for a run that arrived from ``source``."""
    return run_row(run, source, ingested_at)[0]


def run_row(run: dict[str, Any], source: str, ingested_at: str) -> tuple[tuple[Any, ...], bool]:
    """:func:`run_columns`' values, and whether its latencies fit the store's 64-bit
    integer columns (a valid record may give any finite number: 1e19 ns passes
    validation)."""
    spec = run["spec"]
    metadata = run["metadata"]
    notes = metadata.get("annotations") or {}
    median, p20, p80 = _latency(spec)
    row = (
        metadata["name"],
        spec["observedAt"],
        notes.get(provenance.COMMIT),
        notes.get(provenance.COMMIT_TIME),
        median,
        p20,
        p80,
        spec["status"],
        notes.get(provenance.BRANCH),
        spec["workloadDigest"],
        spec["implementationDigest"],
        spec["protocolDigest"],
        spec["environmentDigest"],
        _compact(metadata.get("labels")),
        _compact(notes),
        source,
        ingested_at,
        # A run that recorded no conditions is fit (degraded_reason's own rule).
        degraded_reason(spec) if "conditions" in spec else None,
        samples_of(spec),
    )
    return row, _fits(median) and _fits(p20) and _fits(p80)

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


_EMPTY: Final[dict[str, Any]] = {}
#: The latency columns' range: both stores keep them as 64-bit integers.
NS_MIN: Final = -(2**63)
NS_MAX: Final = 2**63 - 1


def _latency(spec: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    """Median, p20 and p80 in ns: from ``timing.latencyNs``, else from the first latency
    measurement of that statistic in a time unit."""
    timing = spec.get("timing")
    latency = (timing.get("latencyNs") if timing else None) or _EMPTY
    median, p20, p80 = latency.get("median"), latency.get("p20"), latency.get("p80")
    if median is None or p20 is None or p80 is None:
        # Most records carry the median in timing and the quantiles as measurements
        # (validated: each has its metric, statistic, unit and value); the first of each
        # counts, so the walk ends once all three are known. Inline, not a call a
        # value: a call costs more than the rest of a value's work.
        for m in spec.get("measurements", ()):
            if m["metric"] != "latency":
                continue
            statistic = m["statistic"]
            if statistic == "p20":
                if p20 is None:
                    factor = _NS_PER.get(m["unit"])
                    if factor is not None:
                        p20 = m["value"] * factor
            elif statistic == "p80":
                if p80 is None:
                    factor = _NS_PER.get(m["unit"])
                    if factor is not None:
                        p80 = m["value"] * factor
            elif statistic == "median" and median is None:
                factor = _NS_PER.get(m["unit"])
                if factor is not None:
                    median = m["value"] * factor
            if median is not None and p20 is not None and p80 is not None:
                break
    # Rounded to whole ns; an int (the common value) is its own rounding, and round()
    # of one cost more than the test of its type.
    return (
        median if type(median) is int or median is None else round(median),
        p20 if type(p20) is int or p20 is None else round(p20),
        p80 if type(p80) is int or p80 is None else round(p80),
    )


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
)


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


_COMMIT: Final = provenance.COMMIT
_BRANCH: Final = provenance.BRANCH
_COMMIT_TIME: Final = provenance.COMMIT_TIME


def run_columns(run: dict[str, Any], source: str, ingested_at: str) -> tuple[Any, ...]:
    """The values of :data:`RUN_COLUMNS` for a run that arrived from ``source``."""
    return run_row(run, source, ingested_at)[0]


def run_row(run: dict[str, Any], source: str, ingested_at: str) -> tuple[tuple[Any, ...], bool]:
    """:func:`run_columns`' values, and whether its latencies fit the store's 64-bit
    integer columns (a valid record may give any finite number: 1e19 ns passes
    validation).

    Ingest's one call a run: every step is inline (a call costs more than most of
    them), and the same labels and annotations text as :func:`_compact`'s.
    """
    spec = run["spec"]
    metadata = run["metadata"]
    notes = metadata.get("annotations")
    labels = metadata.get("labels")
    median, p20, p80 = _latency(spec)
    if notes:
        commit = notes.get(_COMMIT)
        branch = notes.get(_BRANCH)
        commit_time = notes.get(_COMMIT_TIME)
    else:
        commit = branch = commit_time = None
    # _compact's texts, without its call.
    try:
        labels_text = orjson.dumps(labels).decode() if labels else "{}"
        notes_text = orjson.dumps(notes).decode() if notes else "{}"
    except orjson.JSONEncodeError:
        labels_text, notes_text = _compact(labels), _compact(notes)
    row = (
        metadata["name"],
        spec["observedAt"],
        commit,
        commit_time,
        median,
        p20,
        p80,
        spec["status"],
        branch,
        spec["workloadDigest"],
        spec["implementationDigest"],
        spec["protocolDigest"],
        spec["environmentDigest"],
        labels_text,
        notes_text,
        source,
        ingested_at,
    )
    return row, (
        (median is None or NS_MIN <= median <= NS_MAX)
        and (p20 is None or NS_MIN <= p20 <= NS_MAX)
        and (p80 is None or NS_MIN <= p80 <= NS_MAX)
    )

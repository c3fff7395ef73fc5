"""A Comparison as text, Markdown, JSON or CSV (``kernelindex compare --format``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any, Final, Protocol

from ..errors import ArgumentError
from .runs import Run, without_collection
from .tables import markdown_table, spread, text_table

__all__ = ["FORMATS", "pairs_as_json", "render"]

FORMATS: Final = ("text", "markdown", "json", "csv")
_HEADER: Final = ("workload", "base", "new", "BASE median (p20-p80)", "NEW median (p20-p80)")


# What rendering draws, as the structure it reads: kernelindex_sdk.compare's Pair and
# Comparison have it. Described here, so that this module imports nothing back from
# compare, which imports it.
class Pair(Protocol):
    """A pair of runs, or one run left unpaired (:class:`kernelindex_sdk.compare.Pair`)."""

    @property
    def base(self) -> Run | None: ...
    @property
    def new(self) -> Run | None: ...
    @property
    def ratio(self) -> float | None: ...
    @property
    def significant(self) -> bool: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def run(self) -> Run: ...


class Comparison(Protocol):
    """Pairs and unpaired runs (:class:`kernelindex_sdk.compare.Comparison`)."""

    @property
    def pairs(self) -> Sequence[Pair]: ...
    @property
    def unpaired(self) -> Sequence[Pair]: ...
    @property
    def threshold(self) -> float: ...
    def label(self, run: Run) -> str: ...
    def geomeans(self) -> dict[str, float]: ...


@without_collection
def render(comparison: Comparison, fmt: str = "text") -> str:
    """The comparison in one of :data:`FORMATS`, ending with a newline.

    Raises:
        ArgumentError: for an unknown format (it is a ValueError too).
    """
    if fmt == "json":
        # One pair per line: readable, diffable, and written by json's C encoder
        # (an indented dump takes its pure Python path, twice as slow on 50,000 pairs).
        rows = [json.dumps(row, ensure_ascii=False) for row in pairs_as_json(comparison)]
        return "[\n" + ",\n".join(rows) + ("\n]\n" if rows else "]\n")
    if fmt == "csv":
        return _csv(comparison)
    if fmt in ("text", "markdown"):
        return _table(comparison, markdown=fmt == "markdown")
    raise ArgumentError(
        argument="format", reason=f"expected one of {', '.join(FORMATS)}, got {fmt!r}"
    )


def _side_cell(run: Run | None) -> str:
    if run is None:
        return "-"
    if run.status == "failed":
        return f"failed ({run.failure})" if run.failure else "failed"
    v = run.value
    if v is None:
        return "no value"
    return spread(v.median, v.p20, v.p80, v.unit)


def _delta(pair: Pair) -> tuple[str, str]:
    if pair.ratio is None:
        return "-", "-"
    ratio = f"{pair.ratio:.3f}"
    if not pair.significant:
        return ratio, "~"
    return ratio, f"{(pair.ratio - 1) * 100:+.1f}%"


def _table(c: Comparison, *, markdown: bool) -> str:
    header = [*_HEADER, "NEW/BASE", "delta", "notes"]
    rows = []
    for pair in c.pairs:
        b, n = pair.base, pair.new
        if b is None or n is None:  # pragma: no cover - pairs have both sides
            continue
        ratio, delta = _delta(pair)
        cells = [c.label(b), b.implementation, n.implementation, _side_cell(b), _side_cell(n)]
        rows.append([*cells, ratio, delta, "; ".join(pair.notes)])
    geomeans = c.geomeans()
    for metric, mean in geomeans.items():
        name = "geomean" if len(geomeans) == 1 else f"geomean ({metric})"
        rows.append([name, "", "", "", "", f"{mean:.3f}", f"{(mean - 1) * 100:+.1f}%", ""])
    rule = (
        f"NEW/BASE = NEW median / BASE median; a delta is shown only when it exceeds"
        f" {c.threshold * 100:g}% and the p20-p80 intervals do not overlap, otherwise ~"
    )
    out = []
    if markdown:
        out += [f"**{len(c.pairs)} pair(s)**, {len(c.unpaired)} not paired. {rule}.", ""]
        out.append(markdown_table(header, rows) if rows else "_no pairs_")
    else:
        out.append(text_table(header, rows) if rows else "no pairs")
        out.append(f"\n{rule}")
    if c.unpaired:
        out.append("")
        out.append(f"{'**Not paired**' if markdown else 'not paired'} ({len(c.unpaired)}):")
        if markdown:
            out.append("")
        for pair in c.unpaired:
            out.append(("- " if markdown else "  ") + _unpaired_line(c, pair, markdown=markdown))
    return "\n".join(out) + "\n"


def _unpaired_line(c: Comparison, pair: Pair, *, markdown: bool) -> str:
    run, side = pair.run, "BASE" if pair.base is not None else "NEW"
    status = "" if run.status != "failed" else " (failed)"
    name = f"`{run.name}`" if markdown else run.name
    notes = "".join(f"; {n}" for n in pair.notes)
    what = f"{c.label(run)} · {run.implementation}{status}"
    return f"only in {side}: {what} ({name}): {pair.reason}{notes}"


def _side_json(run: Run | None) -> dict[str, Any] | None:
    if run is None:
        return None
    v = run.value
    return {
        "run": run.name,
        "source": run.source,
        "status": run.status,
        "failure": run.failure,
        "observedAt": run.observed_at,
        "provider": run.provider,
        "entryPoint": run.entry_point,
        "implementationDigest": run.implementation_digest,
        "protocolDigest": run.protocol_digest,
        "environmentDigest": run.environment_digest,
        "median": None if v is None else v.median,
        "p20": None if v is None else v.p20,
        "p80": None if v is None else v.p80,
    }


def pairs_as_json(c: Comparison) -> list[dict[str, Any]]:
    """The documented JSON form: one object per row, pairs first, then the unpaired."""
    out = []
    for pair in [*c.pairs, *c.unpaired]:
        run = pair.run
        w = run.workload
        out.append(
            {
                "workload": c.label(run),
                "operation": None if w is None else w.operation,
                "pass": None if w is None else w.pass_,
                "parameters": None if w is None else dict(w.parameters),
                "workloadDigest": run.workload_digest,
                "metric": run.metric,
                "unit": None if run.value is None else run.value.unit,
                "base": _side_json(pair.base),
                "new": _side_json(pair.new),
                "ratio": pair.ratio,
                "significant": pair.significant,
                "notes": list(pair.notes),
                "unpaired": pair.reason,
            }
        )
    return out


_CSV_COLUMNS: Final = (
    "workload",
    "metric",
    "unit",
    "base_run",
    "base_implementation",
    "base_status",
    "base_median",
    "base_p20",
    "base_p80",
    "new_run",
    "new_implementation",
    "new_status",
    "new_median",
    "new_p20",
    "new_p80",
    "ratio",
    "significant",
    "notes",
    "unpaired",
    "workload_digest",
)


def _csv(c: Comparison) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_CSV_COLUMNS)
    for row in pairs_as_json(c):
        sides = []
        for side in ("base", "new"):
            s = row[side] or {}
            sides.append(
                [s.get("run"), s.get("provider"), s.get("status")]
                + [s.get(k) for k in ("median", "p20", "p80")]
            )
        writer.writerow(
            [
                row["workload"],
                row["metric"],
                row["unit"],
                *sides[0],
                *sides[1],
                row["ratio"],
                row["significant"],
                "; ".join(row["notes"]),
                row["unpaired"],
                row["workloadDigest"],
            ]
        )
    return buffer.getvalue()

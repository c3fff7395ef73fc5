"""A Comparison as text, Markdown, JSON or CSV (``kernelindex compare --format``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from .._base.display import csv_cell, markdown_text, printable
from .._base.noise import NOISY_SPREAD
from ..errors import ArgumentError
from ..verdict import DEGRADED, NOISE_Z, Verdict
from .runs import Run
from .tables import markdown_table, spread, text_table

__all__ = ["FORMATS", "noise_legend", "pairs_as_json", "render", "verdict_cell"]

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
    def problem(self) -> str | None: ...
    @property
    def run(self) -> Run: ...
    @property
    def verdict(self) -> Verdict | None: ...


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
    def geomean_verdicts(self) -> dict[str, Verdict]: ...


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


def noise_legend() -> str:
    """The line that says what ``noisy`` beside a median means (one rule: ``_noise``)."""
    return (
        f"noisy = p80/p20 above {NOISY_SPREAD:g}: the middle 60% of the samples span more"
        f" than {(NOISY_SPREAD - 1) * 100:g}%, so a change within that spread cannot be"
        " told from noise"
    )


def _side_cell(run: Run | None, esc: Callable[[str], str], noisy: bool = False) -> str:
    if run is None:
        return "-"
    if run.status == "failed":
        return f"failed ({esc(run.failure)})" if run.failure else "failed"
    v = run.value
    if v is None:
        return "no value"
    cell = spread(v.median, v.p20, v.p80, v.unit)
    return f"{cell} noisy" if noisy else cell


def _delta(pair: Pair) -> tuple[str, str]:
    if pair.ratio is None:
        return "-", "-"
    return f"{pair.ratio:.3f}", verdict_cell(pair.verdict)


def verdict_cell(verdict: Verdict | None) -> str:
    """A verdict as its cell: the change in percent, ``~`` within the noise or under the
    threshold, ``degraded``, or ``-`` where there is none."""
    if verdict is None or verdict.ratio is None:
        return "-"
    if verdict.kind == DEGRADED:
        return "degraded"
    if not verdict.changed:
        return "~"
    return f"{(verdict.ratio - 1) * 100:+.1f}%"


def _same(text: str) -> str:
    return text


def _table(c: Comparison, *, markdown: bool) -> str:
    # Record text (labels, names, failures, notes) escaped for the format; the text
    # table makes each cell printable itself, lines outside it are made so here.
    esc = markdown_text if markdown else _same
    header = [*_HEADER, "NEW/BASE", "delta", "notes"]
    rows = []
    noisy = False
    for pair in c.pairs:
        b, n = pair.base, pair.new
        if b is None or n is None:  # pragma: no cover - pairs have both sides
            continue
        b_noisy, n_noisy = b.noisy, n.noisy
        noisy = noisy or b_noisy or n_noisy
        ratio, delta = _delta(pair)
        cells = [c.label(b), b.implementation, n.implementation]
        notes = "; ".join(pair.notes)
        if markdown:
            cells, notes = [esc(cell) for cell in cells], esc(notes)
        cells += [_side_cell(b, esc, b_noisy), _side_cell(n, esc, n_noisy)]
        rows.append([*cells, ratio, delta, notes])
    geomeans = c.geomean_verdicts()
    for metric, found in geomeans.items():
        name = "geomean" if len(geomeans) == 1 else f"geomean ({esc(metric)})"
        mean = found.ratio if found.ratio is not None else 1.0
        rows.append([name, "", "", "", "", f"{mean:.3f}", verdict_cell(found), ""])
    rule = (
        f"NEW/BASE = NEW median / BASE median; a delta is shown only when the change passes"
        f" {NOISE_Z:g} times the noise (the runs' p20-p80, their replicates) and may reach"
        f" {c.threshold * 100:g}%, otherwise ~; the geomean only when a row changed that way"
    )
    out = []
    if markdown:
        out += [f"**{len(c.pairs)} pair(s)**, {len(c.unpaired)} not paired. {rule}.", ""]
        out.append(markdown_table(header, rows) if rows else "_no pairs_")
        if noisy:
            out += ["", f"_{noise_legend()}_"]
    else:
        out.append(text_table(header, rows) if rows else "no pairs")
        out.append(f"\n{rule}")
        if noisy:
            out.append(noise_legend())
    if c.unpaired:
        out.append("")
        out.append(f"{'**Not paired**' if markdown else 'not paired'} ({len(c.unpaired)}):")
        if markdown:
            out.append("")
        for pair in c.unpaired:
            line = _unpaired_line(c, pair, markdown=markdown)
            out.append(("- " if markdown else "  ") + (line if markdown else printable(line)))
    return "\n".join(out) + "\n"


def _unpaired_line(c: Comparison, pair: Pair, *, markdown: bool) -> str:
    esc = markdown_text if markdown else _same
    run, side = pair.run, "BASE" if pair.base is not None else "NEW"
    status = "" if run.status != "failed" else " (failed)"
    name = f"`{run.name}`" if markdown else run.name
    notes = "".join(f"; {esc(n)}" for n in pair.notes)
    what = f"{esc(c.label(run))} · {esc(run.implementation)}{status}"
    reason = esc(pair.reason or "")
    return f"only in {side}: {what} ({name}): {reason}{notes}"


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
        "noisy": run.noisy,
        "samples": run.samples,
        "runs": run.runs,
        "degraded": run.degraded,
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
                "verdict": None if pair.verdict is None else pair.verdict.kind,
                "evidence": None if pair.verdict is None else pair.verdict.reason,
                "notes": list(pair.notes),
                "unpaired": pair.reason,
                "problem": pair.problem,
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
    "problem",
    "base_noisy",
    "new_noisy",
    "verdict",
    "evidence",
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
        cells = [
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
            row["problem"],
            *((row[side] or {}).get("noisy") for side in ("base", "new")),
            row["verdict"],
            row["evidence"],
        ]
        # Every string a record gave is shown as text, never run as a formula.
        writer.writerow([csv_cell(cell) for cell in cells])
    return buffer.getvalue()

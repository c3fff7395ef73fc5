"""The one verdict on same-code reruns: false alarms, and 5% steps injected into the same noise.

Two corpora of replicates (the same code measured again and again, nothing changed):

- ``--h100``: four sweeps of ``kernelindex bench jsd`` on one H100 (24 points each, the
  same commit; /work/shared/data/h100-replicates).
- ``--cpu``: reruns of the README's main job's sweep (``kernelindex bench jsd`` on the
  CPU, 4 points each) on a 2-core machine while another core is kept busy
  (benchmarks/results/verdict_cpu_reruns/, made by the command in that folder's README).

Each corpus is judged four ways, through the library functions the commands call:

- ``compare``: every pair of reruns, point by point (``kernelindex compare A B``);
- ``compare --history`` over replicates: all reruns but one ingested at one commit (the
  series' replicates say its noise), the last as NEW at the next commit;
- ``compare --history`` over a series: all reruns but one as successive commits of main
  (the scatter between them says the noise), the last as NEW;
- ``history``: the reruns as successive commits of one series, and all at one commit.

A false alarm is a verdict of regression or improvement (or a change point) where nothing
changed. Then every NEW median, p20 and p80 is multiplied by 1.05 (and by 0.95): a 5% step
in the same real noise; it is found when the verdict says regression (improvement). The
rule of 0.6.1 (more than 5% and p20-p80 intervals apart) is judged beside it on the pairs.

    PYTHONPATH=src python benchmarks/verdict_calibration.py \\
        --out benchmarks/results/verdict_calibration.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kernelindex_sdk import compare as cmp
from kernelindex_sdk.compare import Run, RunSet, Stat
from kernelindex_sdk.store import RunRow
from kernelindex_sdk.store.branch_compare import compare_to_branch
from kernelindex_sdk.store.history import history

ROOT = Path(__file__).resolve().parent.parent
H100 = Path("/work/shared/data/h100-replicates")
CPU = ROOT / "benchmarks" / "results" / "verdict_cpu_reruns"
STEPS = (1.05, 0.95)


def _scaled(run: Run, factor: float) -> Run:
    v = run.value
    assert v is not None

    def scale(x: float | None) -> float | None:
        return None if x is None else x * factor

    return run._replace(value=Stat(v.metric, v.unit, v.median * factor, scale(v.p20), scale(v.p80)))


def _rerun(path: Path) -> RunSet:
    return cmp.load_runs([path])


def _row(run: Run, commit: str, minute: int) -> RunRow:
    v = run.value
    assert v is not None
    assert run.workload is not None
    return RunRow(
        name=f"{run.name}-{commit[:6]}",
        status=run.status,
        observed_at=run.observed_at,
        workload_digest=run.workload_digest,
        implementation_digest=run.implementation_digest,
        protocol_digest=run.protocol_digest,
        environment_digest=run.environment_digest,
        commit=commit,
        branch="main",
        commit_time=f"2026-12-08T00:{minute:02d}:00.000Z",
        median_ns=round(v.median),
        p20_ns=None if v.p20 is None else round(v.p20),
        p80_ns=None if v.p80 is None else round(v.p80),
        operation=run.workload.operation,
        pass_=run.workload.pass_,
        provider=run.provider,
        entry_point=run.entry_point,
        hardware=run.name,  # one series per point: the name stands for its GPU
    )


def _key(run: Run) -> str:
    return f"{run.workload_digest}|{run.implementation_digest}"


def _old_rule(base: Stat, new: Stat) -> bool:
    """0.6.1's is_significant: more than 5% and the p20-p80 intervals apart."""
    if not abs(new.median - base.median) > 0.05 * base.median:
        return False
    return base.high < new.low or new.high < base.low


class Tally:
    """Counts of comparisons and of verdicts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, name: str, hit: bool) -> None:
        self.counts[f"{name}.n"] = self.counts.get(f"{name}.n", 0) + 1
        self.counts[f"{name}.hit"] = self.counts.get(f"{name}.hit", 0) + int(hit)

    def summary(self) -> dict[str, Any]:
        out = {}
        for key in sorted(self.counts):
            if key.endswith(".n"):
                name = key[:-2]
                n, hit = self.counts[key], self.counts[f"{name}.hit"]
                out[name] = {
                    "comparisons": n,
                    "found": hit,
                    "rate": round(hit / n, 4) if n else None,
                }
        return out


def _pairs(reruns: list[RunSet], tally: Tally) -> None:
    for a, b in itertools.combinations(range(len(reruns)), 2):
        base, new = reruns[a], reruns[b]
        for factor in (1.0, *STEPS):
            shifted = RunSet(runs=[_scaled(r, factor) for r in new.runs], objects=new.objects)
            for pair in cmp.compare(base, shifted).pairs:
                assert pair.verdict is not None
                assert pair.base
                assert pair.new
                kind = pair.verdict.kind
                old = _old_rule(pair.base.value, pair.new.value)  # type: ignore[arg-type]
                if factor == 1.0:
                    tally.add("compare.false_alarms", kind != "same")
                    tally.add("compare.false_alarms_0.6.1", old)
                else:
                    want = "regression" if factor > 1 else "improvement"
                    tally.add(f"compare.found_{factor:g}", kind == want)
                    tally.add(f"compare.found_{factor:g}_0.6.1", old)


def _branch(reruns: list[RunSet], tally: Tally, *, replicates: bool) -> None:
    name = "history_replicates" if replicates else "history_series"
    for held in range(len(reruns)):
        rows = []
        rest = [r for i, r in enumerate(reruns) if i != held]
        for i, runs in enumerate(rest):
            commit = "a" * 40 if replicates else f"{i + 1:040x}"
            rows += [_row(r, commit, 0 if replicates else i) for r in runs.runs]
        new = reruns[held]
        for factor in (1.0, *STEPS):
            shifted = [_scaled(r, factor) for r in new.runs]
            # NEW's runs carry their series' key the way the rows do.
            runs = RunSet(runs=[r._replace(commit="f" * 40) for r in shifted], objects=new.objects)
            result = compare_to_branch(_as_series(rows), _with_hardware(runs), branch="main")
            for pair in result.pairs:
                assert pair.verdict is not None
                kind = pair.verdict.kind
                if factor == 1.0:
                    tally.add(f"{name}.false_alarms", kind != "same")
                else:
                    want = "regression" if factor > 1 else "improvement"
                    tally.add(f"{name}.found_{factor:g}", kind == want)


def _as_series(rows: list[RunRow]) -> list[RunRow]:
    """One series per point: its workload and implementation stand for the GPU."""
    return [r._replace(hardware=f"{r.workload_digest}|{r.implementation_digest}") for r in rows]


def _with_hardware(runs: RunSet) -> RunSet:
    objects = dict(runs.objects)
    out = []
    for r in runs.runs:
        env = f"env-{_key(r)}"
        objects[env] = {"hardware": {"product": _key(r)}}
        out.append(r._replace(environment_digest=env))
    return RunSet(runs=out, objects=objects)


def _history(reruns: list[RunSet], tally: Tally) -> None:
    rows = []
    for i, runs in enumerate(reruns):
        rows += [_row(r, f"{i + 1:040x}", i) for r in runs.runs]
    for h in history(_as_series(rows)):
        tally.add("history_successive_commits.series_with_a_change", bool(h.changes))
    same = [_row(r, "a" * 40, 0) for runs in reruns for r in runs.runs]
    for h in history(_as_series(same)):
        tally.add("history_one_commit.series_with_a_change", bool(h.changes))
    # A 5% step: the later half of the reruns 5% slower.
    half = len(reruns) // 2
    stepped = []
    for i, runs in enumerate(reruns):
        factor = 1.05 if i >= half else 1.0
        stepped += [_row(_scaled(r, factor), f"{i + 1:040x}", i) for r in runs.runs]
    for h in history(_as_series(stepped)):
        found = [c for c in h.changes if c.verdict is not None and c.verdict.kind == "regression"]
        tally.add("history_successive_commits.found_1.05", bool(found))


def corpus(paths: Iterable[Path]) -> dict[str, Any]:
    """Judge one corpus of reruns every way; the counts and rates."""
    reruns = [_rerun(p) for p in paths]
    tally = Tally()
    _pairs(reruns, tally)
    _branch(reruns, tally, replicates=True)
    _branch(reruns, tally, replicates=False)
    _history(reruns, tally)
    return {"reruns": len(reruns), "points": len(reruns[0].runs), **tally.summary()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--h100", type=Path, default=H100)
    parser.add_argument("--cpu", type=Path, default=CPU)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    found: dict[str, Any] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }
    for name, folder in (("h100", args.h100), ("cpu", args.cpu)):
        files = sorted(folder.glob("*.jsonl"))
        if files:
            found[name] = corpus(files)
    text = json.dumps(found, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

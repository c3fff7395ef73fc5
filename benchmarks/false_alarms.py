"""False alarms on same-code reruns, next to recall of injected steps: ours, Otava, asv.

A corpus (benchmarks/corpora/NAME/rerun-NN.jsonl.gz, made by false_alarms_corpus.py) is
one benchmark sweep rerun K times in fresh processes with the same code at the same
commit: whatever differs between the reruns is the machine's noise. This script asks the
package's own verdict, through its command line and JSON outputs only (``kernelindex
ingest``, ``history --format json``, ``compare --history BRANCH NEW --format json``,
``compare BASE NEW --format json``), how often it calls a change there (a false alarm),
and how often it finds a step injected into the same real noise. So it measures whatever
the verdict is on the checkout it runs in, with no private function in between.

    python3.11 -m venv .venv-otava && .venv-otava/bin/pip install apache-otava==0.8.0
    python3.11 -m venv .venv-asv && .venv-asv/bin/pip install asv==0.6.6
    PYTHONPATH=$PWD/src python benchmarks/false_alarms.py [CORPUS ...] \
        [--out benchmarks/results/false_alarms.json]

Without CORPUS, every folder under benchmarks/corpora/ is measured (a corpus added there,
such as the GPU corpus of false_alarms_gpu_corpus.sh, is picked up).

Definitions (docs/false-alarms.md says the same for users):

- A **series** is the runs of one workload, implementation (provider and entry point),
  protocol and GPU, as the store groups them; a corpus's series are those with a passed
  latency run in every rerun.
- **Provenance variants.** Records are stored with their provenance annotations rewritten
  (annotations are observations, never digested; no digest changes): ``same-commit``,
  every rerun at one commit and one commit time (a CI job re-run on one commit; the store
  orders them by observedAt), and ``new-commit-per-rerun``, each position in a sequence
  its own commit id, one minute apart (a job re-run on successive no-op commits). The
  verdict must call nothing in either.
- **Sequences.** Round 0 takes the reruns in the order they ran; each further round a
  random order of them (seeded), since same-code reruns are exchangeable:
  ``--scan-rounds`` sequences are scanned by history, ``--rounds`` give the PR checks.
  In ``same-commit`` the store orders a branch by observedAt whatever the round, so its
  history scan is made once. Every branch of a sequence is its own
  ``kernelindex.dev/branch`` in one store per variant, the runs renamed to stay unique.
- A **series comparison** is one of: (1) ``history``: one series' change-point scan over
  its whole sequence (K points); (2) ``compare --history``: one NEW run against its
  series' history on a branch holding the k points before it, for every k from 1 to
  K - 1; (3) ``compare``: one series' row of ``compare BASE NEW``, BASE and NEW two
  different reruns (up to ``--pairs`` pairs, sampled, BASE the earlier).
- A **false alarm** is anything the verdict calls on unmodified reruns: a change point in
  a history scan, a significant row (faster or slower) in either compare. Figures are
  false alarms per 1,000 series comparisons of that kind (and per 1,000 points scanned
  for history). A compare row without a ratio (unpaired, or declined) is neither an
  alarm nor a finding: it is counted apart as not judged.
- **Injected steps** (``new-commit-per-rerun`` only: within one commit a step is not a
  step): for a size s of 3%, 5% or 10% and a direction drawn at random per series, the
  runs of one series from a random position b on are multiplied by 1 + s (slower) or
  1 - s (faster): latency median and every latency measurement (p20, p80) alike,
  bandwidth and throughput divided, so each run keeps its own spread; nothing digested is
  recomputed (timings are not digested). History: b uniform with at least 3 points on
  each side (1 in series under 6 points). ``compare --history``: the NEW run scaled,
  against the unscaled history of its k points. ``compare``: NEW scaled against BASE.
- **Found**: a history change point at b or within one point of it, in the right
  direction; a compare row significant in the right direction. Other change points in
  an injected series are counted apart.
- **Degraded** (docs/conditions.md): a run whose recorded conditions make it unfit to
  compare (its GPU throttled, or other processes shared its CPUs) gets no verdict. A
  compare row the verdict calls degraded is neither a false alarm nor a finding: it is
  counted apart (``degraded``), outside both shares. History leaves degraded points out
  of its scan and lists them (``degraded_points``); a step with no judged point on one
  side of it cannot be seen and is counted apart too (``steps_hidden_by_degraded_points``).
  The corpus description counts the degraded runs (``degraded_runs``, by the package's
  public rule, ``kernelindex_sdk.conditions.record_degraded_reason``) and, where the runs
  recorded it, the share of the CPUs other processes used (``others_busy``). The anchors
  have no notion of it: they see every point.
- **Stability** (when K - 10 >= 6): the change points of the scan of the first K - 10
  points, unmodified and with a step injected there (b at least 3 points from either end
  of the first K - 10), and whether each is still reported at the same point in the same
  direction when the 10 more points arrive. Moved: a change in that direction reported
  at another point (how many by one point is said); vanished: none. The goal is that
  none moves or vanishes.

The anchors, Apache Otava and asv, run in their own virtual environments
(benchmarks/false_alarms_anchors.py; never imported here) on the same medians in the same
order: each history scan's series, and for the PR check each history with its NEW run
appended (an alarm: a change reported at the NEW run). They have no two-run verdict.

The command runs in this process through the package's ``kernelindex`` console-script
entry point, called with its arguments and streams as the program is; ``--fresh-processes``
starts ``python -m kernelindex_sdk`` for every call instead (the same figures on
h100-replicates with ``--rounds 2 --pairs 5``; 18 times slower on a loaded machine).
``--self-test`` checks the counting on hand-made answers and on a synthetic corpus with a
known step and a flat series (no anchors; it writes nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from false_alarms_plan import (
    MORE,
    SIZES,
    VARIANTS,
    Corpus,
    Key,
    Plan,
    Record,
    Trial,
    load_corpus,
    median_of,
    plan_variant,
    scaled_spec,
    synthetic_corpus,
)

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "benchmarks" / "corpora"
ANCHORS = ROOT / "benchmarks" / "false_alarms_anchors.py"
GOALS = {
    "false_alarms_per_1000_comparisons": 1.0,
    "found_5pct": 0.95,
    "moved_or_vanished": 0.0,
}
CHECKS = ("history", "compare --history", "compare")
# A compare trial whose NEW run got no row with a ratio (unpaired, or a pair the verdict
# declined to judge): neither an alarm nor a finding, counted apart.
UNJUDGED = "unjudged"
# A compare trial whose row the verdict called degraded (a run's conditions make it unfit
# to compare: kernelindex_sdk.conditions.degraded_reason): neither an alarm nor a finding,
# counted apart, as the PR check and the gate leave it.
DEGRADED = "degraded"


# ---------------------------------------------------------------------------------------
# Asking the package: its command, in this process through its console-script entry
# point (the `kernelindex` program), or in a fresh process per call


class Command:
    """Runs ``kernelindex ARGS``; returns its exit status, standard output and error."""

    def __init__(self, fresh_processes: bool) -> None:
        self.fresh = fresh_processes
        self.calls = 0
        self.main = None
        if not fresh_processes:
            (entry,) = metadata.entry_points(group="console_scripts", name="kernelindex")
            self.main = entry.load()

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        self.calls += 1
        if self.fresh:
            done = subprocess.run(  # noqa: S603 - the package's own command
                [sys.executable, "-m", "kernelindex_sdk", *argv],
                capture_output=True,
                text=True,
                check=False,
            )
            return done.returncode, done.stdout, done.stderr
        out, err = io.StringIO(), io.StringIO()
        status = self.main(list(argv), stdout=out, stderr=err)  # type: ignore[misc]
        return int(status), out.getvalue(), err.getvalue()


def _write_jsonl(path: Path, docs: Iterable[Record]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return path


def _checked(result: tuple[int, str, str], what: str) -> str:
    status, out, err = result
    if status != 0:
        raise SystemExit(f"{what}: exit {status}: {err.strip()[-2000:]}")
    return out


def called(row: Record) -> str | None:
    """What a compare JSON row calls: ``slower``, ``faster``, ``DEGRADED`` or None (no
    change, or unpaired).

    This reads the documented row (docs/compare.md): ``verdict``, ``significant`` and
    ``ratio`` (NEW over BASE). If the verdict's JSON changes, this is the one place to
    follow it.
    """
    if row.get("verdict") == DEGRADED:
        return DEGRADED
    if not row.get("significant") or row.get("ratio") is None:
        return None
    return "slower" if row["ratio"] > 1 else "faster"


def ask_ours(plan: Plan, command: Command, folder: Path) -> dict[str, Any]:
    """Run the package's commands for every trial of ``plan``; fill in ``Trial.ours``."""
    db = str(folder / "store.sqlite3")
    started = time.perf_counter()
    store_file = _write_jsonl(folder / "store.jsonl", plan.store_records)
    _checked(command("ingest", "--db", db, str(store_file)), "kernelindex ingest")
    ingest_s = time.perf_counter() - started
    for branch, trials in plan.scans.items():
        out = _checked(
            command("history", "--db", db, "--branch", branch, "--format", "json"),
            "kernelindex history",
        )
        _fill_changes(json.loads(out)["series"], trials)
    for i, (branch, new_docs, trials) in enumerate(plan.pr):
        new_file = _write_jsonl(folder / f"pr-{i}.jsonl", new_docs)
        # Exit 1 would mean an invalid record (the gate is not asked for): fail loudly.
        out = _checked(
            command("compare", "--history", branch, str(new_file), "--db", db, "--format", "json"),
            "kernelindex compare --history",
        )
        _fill_rows(json.loads(out), trials)
        new_file.unlink()
    for i, (base, new_docs, trials) in enumerate(plan.pairs):
        base_file = _write_jsonl(folder / f"base-{i}.jsonl", base)
        new_file = _write_jsonl(folder / f"new-{i}.jsonl", new_docs)
        out = _checked(
            command("compare", str(base_file), str(new_file), "--format", "json"),
            "kernelindex compare",
        )
        _fill_rows(json.loads(out), trials)
    return {
        "records_stored": len(plan.store_records),
        "ingest_s": round(ingest_s, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _fill_changes(series: list[Record], trials: list[Trial]) -> None:
    """Each scan's change points from history's JSON, as (position, direction), and the
    positions of the points history called degraded (judged by no verdict).

    A change names the run of the first point after it; where it names none known here
    (a verdict that pools points might), its series and index place it.
    """
    by_name = {name: (t, pos) for t in trials for pos, name in enumerate(t.names)}
    by_key = {t.key: t for t in trials}
    for t in trials:
        t.ours = []
        t.degraded = set()
    for found in series:
        key = (
            found["workloadDigest"],
            found["provider"],
            found.get("entryPoint") or "",
            found["protocolDigest"],
            found["hardware"],
        )
        for mark in found.get("degraded", []):
            trial, pos = by_name.get(mark.get("run"), (by_key[key], mark["index"]))
            trial.degraded.add(pos)
        for change in found["changes"]:
            trial, pos = by_name.get(change.get("run"), (by_key[key], change["index"]))
            trial.ours.append((pos, change["direction"]))


def _fill_rows(rows: list[Record], trials: list[Trial]) -> None:
    """Each trial's answer from its row; ``UNJUDGED`` where no row gave a ratio."""
    by_new = {t.names[-1]: t for t in trials}
    for t in trials:
        t.ours = UNJUDGED
    for row in rows:
        trial = by_new.get((row.get("new") or {}).get("run"))
        if trial is not None and row.get("ratio") is not None:
            trial.ours = called(row)


def ask_anchor(python: str, detector: str, trials: list[Trial]) -> tuple[str, dict[str, Any]]:
    """Run an anchor on every history scan and PR check's series; fill ``Trial.anchors``."""
    asked = [t for t in trials if t.check != "compare"]
    payload = json.dumps({"series": [t.values for t in asked]})
    done = subprocess.run(  # noqa: S603 - the anchor's own interpreter, given by the caller
        [python, str(ANCHORS), detector], input=payload, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    for t, reported in zip(asked, found["changes"], strict=True):
        changes = [(int(i), d) for i, d in reported]
        if t.check == "history":
            t.anchors[detector] = changes
        else:
            # The PR check: an alarm is a change reported at the NEW run (the last point).
            at_new = [d for i, d in changes if i == len(t.values) - 1]
            t.anchors[detector] = at_new[0] if at_new else None
    return found["version"], found["parameters"]


# ---------------------------------------------------------------------------------------
# Scoring


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def score(trials: list[Trial], answer: str) -> dict[str, Any]:
    """Figures for one check and one detector (``answer``: ``ours`` or an anchor's name)."""

    def got(t: Trial) -> Any:
        return t.ours if answer == "ours" else t.anchors.get(answer)

    out: dict[str, Any] = {}
    unjudged = sum(got(t) == UNJUDGED for t in trials)
    if unjudged:
        out["not_judged"] = unjudged
    # A degraded compare row is neither an alarm nor a finding: counted apart, and left
    # out of both shares (the anchors never answer it: they see every point).
    degraded = [t for t in trials if got(t) == DEGRADED]
    if degraded:
        out["degraded"] = len(degraded)
        out["degraded_null"] = sum(t.step is None for t in degraded)
    trials = [t for t in trials if got(t) not in (UNJUDGED, DEGRADED)]
    null = [t for t in trials if t.step is None and t.part != "first"]
    if null:
        out.update(_false_alarms(null, got))
        if null[0].check == "history" and answer == "ours":
            out["degraded_points"] = sum(len(t.degraded) for t in null)
    stepped = [t for t in trials if t.step and t.purpose != "stability"]
    if answer == "ours":
        # History leaves degraded points out of its scan: a step with no fit point on one
        # side cannot be seen, and is counted apart rather than as missed.
        hidden = [t for t in stepped if t.check == "history" and not _visible(t)]
        if hidden:
            out["steps_hidden_by_degraded_points"] = len(hidden)
        stepped = [t for t in stepped if t not in hidden]
    out.update(_recall(stepped, got))
    stability = _stability(trials, got)
    if stability:
        out["stability"] = stability
    return out


def _visible(t: Trial) -> bool:
    """Whether a history scan's step has a point history judges on each side of it."""
    b = t.step[0]  # type: ignore[index]
    fit = [pos for pos in range(len(t.values)) if pos not in t.degraded]
    return any(pos < b for pos in fit) and any(pos >= b for pos in fit)


def _false_alarms(null: list[Trial], got: Any) -> dict[str, Any]:
    """Changes called on unmodified reruns: change points, or significant rows."""
    out: dict[str, Any] = {"comparisons": len(null)}
    if null[0].check == "history":
        alarms = sum(len(got(t)) for t in null)
        points = sum(len(t.values) for t in null)
        out["points"] = points
        out["false_alarms_per_1000_points"] = round(1000 * alarms / points, 2)
    else:
        alarms = sum(got(t) is not None for t in null)
    out["false_alarms"] = alarms
    out["false_alarms_per_1000"] = round(1000 * alarms / len(null), 2)
    return out


def _recall(stepped: list[Trial], got: Any) -> dict[str, Any]:
    """Injected steps found: at the step or within one point, in the right direction."""
    found: dict[str, Any] = {}
    others = scans = 0
    for size in SIZES:
        hit = [t for t in stepped if t.step and t.step[2] == size]
        if not hit:
            continue
        count = 0
        for t in hit:
            b, direction, _ = t.step  # type: ignore[misc]
            if t.check == "history":
                near = [c for c in got(t) if abs(c[0] - b) <= 1 and c[1] == direction]
                count += bool(near)
                others += len(got(t)) - min(len(near), 1)
                scans += 1
            else:
                count += got(t) == direction
        found[f"{round(size * 100)}%"] = {
            "injected": len(hit),
            "found": count,
            "share": _share(count, len(hit)),
        }
    out: dict[str, Any] = {"found": found} if found else {}
    if scans:
        out["other_change_points_per_injected_series"] = round(others / scans, 3)
    return out


def _stability(trials: list[Trial], got: Any) -> dict[str, Any]:
    """Change points of the first K - 10 points: kept, moved or vanished with 10 more."""
    linked: dict[int, dict[str, Trial]] = defaultdict(dict)
    for t in trials:
        if t.link is not None:
            linked[t.link][t.part] = t
    pairs = [pair for pair in linked.values() if len(pair) == 2]
    kept = moved = by_one = vanished = 0
    for pair in pairs:
        later = got(pair["all"])
        for pos, direction in got(pair["first"]):
            if (pos, direction) in later:
                kept += 1
            elif any(d == direction for _, d in later):
                moved += 1
                by_one += any(d == direction and abs(p - pos) == 1 for p, d in later)
            else:
                vanished += 1
    total = kept + moved + vanished
    if not pairs:
        return {}
    return {
        "scans": len(pairs),
        "change_points_on_first_points": total,
        "kept": kept,
        "moved": moved,
        "of_which_by_one_point": by_one,
        "vanished": vanished,
        "moved_or_vanished_share": _share(moved + vanished, total),
    }


def _spread(values: list[float]) -> dict[str, float]:
    low, mid, high = np.percentile(values, [0, 50, 100])
    return {
        "min": round(float(low), 4),
        "median": round(float(mid), 4),
        "max": round(float(high), 4),
    }


def noise(corpus: Corpus) -> dict[str, Any]:
    """How noisy the corpus is, over its series: between reruns and within each run.

    ``between_reruns_sd``: the standard deviation of a series' log median across the
    reruns (0.01 is about 1%); ``max_over_min``: its largest median over its smallest;
    ``within_run_p80_over_p20``: each run's own spread; ``degraded_runs``: the runs the
    package's rule calls degraded; ``others_busy``: the share of the CPUs other processes
    used while each run was timed, where recorded (``run.spec.conditions.cpu``).
    """
    from kernelindex_sdk.conditions import record_degraded_reason

    between, extent, within, others = [], [], [], []
    degraded = runs = 0
    for key in corpus.keys:
        docs = [rerun[key] for rerun in corpus.reruns]
        runs += len(docs)
        degraded += sum(record_degraded_reason(d) is not None for d in docs)
        for d in docs:
            cpu = (d["run"]["spec"].get("conditions") or {}).get("cpu") or {}
            if "othersBusyFraction" in cpu:
                others.append(cpu["othersBusyFraction"])
        medians = np.array([median_of(d) for d in docs])
        between.append(float(np.std(np.log(medians), ddof=1)))
        extent.append(float(medians.max() / medians.min()))
        for d in docs:
            q = {
                m.get("statistic"): m["value"]
                for m in d["run"]["spec"].get("measurements", [])
                if m.get("metric") == "latency"
            }
            if q.get("p20") and q.get("p80"):
                within.append(q["p80"] / q["p20"])
    return {
        "between_reruns_sd": _spread(between),
        "max_over_min": _spread(extent),
        "within_run_p80_over_p20": _spread(within) if within else None,
        "runs": runs,
        "degraded_runs": degraded,
        "others_busy": _spread(others) if others else None,
    }


def all_trials(plan: Plan) -> list[Trial]:
    trials = [t for ts in plan.scans.values() for t in ts]
    trials += [t for _, _, ts in plan.pr for t in ts]
    trials += [t for _, _, ts in plan.pairs for t in ts]
    return trials


def evaluate(
    corpus: Corpus, args: argparse.Namespace, command: Command, anchors: dict[str, str]
) -> dict[str, Any]:
    """Every figure of one corpus: per variant, per detector, per check."""
    rng = np.random.default_rng(args.seed)
    out: dict[str, Any] = {}
    versions: dict[str, Any] = {}
    for variant in VARIANTS:
        plan = plan_variant(
            corpus,
            variant,
            rng,
            rounds=args.rounds,
            scan_rounds=args.scan_rounds,
            pairs=args.pairs,
        )
        with tempfile.TemporaryDirectory(prefix="false-alarms-") as folder:
            run_info = ask_ours(plan, command, Path(folder))
        trials = all_trials(plan)
        detectors: dict[str, Any] = {
            "ours": {
                check: score([t for t in trials if t.check == check], "ours") for check in CHECKS
            }
        }
        detectors["ours"]["run"] = run_info
        for detector, python in anchors.items():
            started = time.perf_counter()
            version, params = ask_anchor(python, detector, trials)
            versions[detector] = {"version": version, "parameters": params}
            detectors[detector] = {
                check: score([t for t in trials if t.check == check], detector)
                for check in CHECKS[:2]
            }
            detectors[detector]["seconds"] = round(time.perf_counter() - started, 1)
        out[variant] = detectors
    return {"variants": out, "anchor_versions": versions}


# ---------------------------------------------------------------------------------------
# Self-test: the counting on a corpus whose answers are known


def _expect(ok: bool, what: str) -> None:
    # Not assert: the self-test must also fail under `python -O`.
    if not ok:
        raise SystemExit(f"self-test failed: {what}")


def _self_test_rules() -> None:
    """The counting rules on hand-made answers: near, direction, stability, alarms."""
    key: Key = ("w", "p", "e", "pr", "gpu")
    t = Trial("history", key, ["a"] * 12, [1.0] * 12, step=(6, "slower", 0.05))
    for changes, expected in (
        ([(5, "slower")], 1),
        ([(7, "slower")], 1),
        ([(8, "slower")], 0),
        ([(6, "faster")], 0),
        ([], 0),
    ):
        t.ours = changes
        found = score([t], "ours")["found"]["5%"]["found"]
        _expect(found == expected, f"step at 6, changes {changes}: found {found}, not {expected}")
    first = Trial("history", key, ["a"] * 6, [1.0] * 6, link=1, part="first")
    full = Trial("history", key, ["a"] * 16, [1.0] * 16, link=1, part="all")
    first.ours = [(3, "slower"), (4, "faster")]
    for later, expected in (
        ([(3, "slower"), (9, "faster")], (1, 1, 0)),
        ([(3, "slower")], (1, 0, 1)),
    ):
        full.ours = later
        st = score([first, full], "ours")["stability"]
        got = (st["kept"], st["moved"], st["vanished"])
        _expect(got == expected, f"stability of {first.ours} then {later}: {got}, not {expected}")
    flat = Trial("compare", key, ["a", "b"], [1.0, 1.0])
    flat.ours = "faster"
    _expect(score([flat], "ours")["false_alarms"] == 1, "a called change on a null pair")
    # A degraded row is neither an alarm nor a finding, and leaves both shares.
    shaded = Trial("compare", key, ["c", "d"], [1.0, 1.0])
    shaded.ours = DEGRADED
    stepped = Trial("compare", key, ["e", "f"], [1.0, 1.05], step=(1, "slower", 0.05))
    stepped.ours = DEGRADED
    figures = score([flat, shaded, stepped], "ours")
    _expect(
        (figures["comparisons"], figures["false_alarms"], figures["degraded"]) == (1, 1, 2)
        and "found" not in figures,
        f"degraded rows counted apart: {figures}",
    )
    _expect(called({"verdict": "degraded", "ratio": 2.0, "significant": False}) == DEGRADED, "")
    # History: a step with no judged point on one side is hidden, not missed.
    hidden = Trial("history", key, ["a"] * 8, [1.0] * 8, step=(4, "slower", 0.05))
    hidden.ours, hidden.degraded = [], {4, 5, 6, 7}
    seen = Trial("history", key, ["a"] * 8, [1.0] * 8, step=(4, "slower", 0.05))
    seen.ours, seen.degraded = [(4, "slower")], {5}
    figures = score([hidden, seen], "ours")
    _expect(
        figures.get("steps_hidden_by_degraded_points") == 1
        and figures["found"]["5%"] == {"injected": 1, "found": 1, "share": 1.0},
        f"a step hidden by degraded points: {figures}",
    )
    spec = {
        "timing": {"latencyNs": {"median": 1000}},
        "measurements": [
            {"metric": "latency", "statistic": "p20", "unit": "ns", "value": 900},
            {"metric": "bandwidth", "statistic": "median", "unit": "GB/s", "value": 2.0},
            {"metric": "memory", "statistic": "peak", "unit": "MiB", "value": 5.0},
        ],
    }
    scaled = scaled_spec(spec, 1.05)
    values = [m["value"] for m in scaled["measurements"]]
    _expect(
        scaled["timing"]["latencyNs"]["median"] == 1050 and values == [945, 1.90476, 5.0],
        f"a 5% step scales times and divides rates: {scaled}",
    )


def self_test(command: Command) -> int:
    """Check the counting: hand-made answers, then a flat series and a known step."""
    _self_test_rules()
    # End to end through the command: a flat series and one stepping 10% up at rerun 8 of
    # 20, 0.05% noise: no false alarm on the flat one; the step found by every check.
    template = sorted((CORPORA / "h100-replicates").glob("rerun-*"))[0]
    corpus = synthetic_corpus(template, 20, 8, 0.10)
    plan = plan_variant(
        corpus, "new-commit-per-rerun", np.random.default_rng(1), rounds=1, scan_rounds=1, pairs=10
    )
    with tempfile.TemporaryDirectory(prefix="false-alarms-") as folder:
        ask_ours(plan, command, Path(folder))
    trials = all_trials(plan)
    flat_key, step_key = corpus.keys
    real = [
        t.ours
        for t in trials
        if t.check == "history" and t.key == step_key and t.step is None and t.part == "all"
    ]
    _expect(real == [[(8, "slower")]], f"the real step at 8 reported as {real}")
    flat_null = [t for t in trials if t.key == flat_key and t.step is None]
    alarms = [t.ours for t in flat_null if t.ours]
    _expect(bool(flat_null) and not alarms, f"false alarms on the flat series: {alarms}")
    for check in CHECKS:
        injected = [
            t
            for t in trials
            if t.key == flat_key and t.check == check and t.step and t.purpose != "stability"
        ]
        # 10% steps in 0.05% noise: any verdict finds them all (3% and 5% are its choice).
        figures = score(injected, "ours")["found"].get("10%")
        _expect(
            figures is not None and figures["share"] == 1.0,
            f"{check}: 10% steps injected on the flat series found {figures}",
        )
    print(f"self-test passed ({command.calls} calls of kernelindex)")
    return 0


# ---------------------------------------------------------------------------------------
# The table and the command


def _cell(figures: dict[str, Any], size: str) -> str:
    found = figures.get("found", {}).get(size)
    return f"{100 * found['share']:.1f}% of {found['injected']}" if found else ""


def _degraded_cell(figures: dict[str, Any]) -> str:
    """Compare rows the verdict called degraded (of them, on unmodified reruns), or the
    points history left out as degraded; steps they hid from history."""
    parts = []
    if figures.get("degraded"):
        parts.append(f"{figures['degraded']} rows ({figures['degraded_null']} unmodified)")
    if figures.get("degraded_points"):
        parts.append(f"{figures['degraded_points']} of {figures['points']} points")
    if figures.get("steps_hidden_by_degraded_points"):
        parts.append(f"{figures['steps_hidden_by_degraded_points']} steps hidden")
    return "; ".join(parts)


def table(results: dict[str, Any]) -> str:
    lines = [
        "| corpus | provenance | detector | check | false alarms / 1,000 (n) | degraded"
        " | 3% found | 5% found | 10% found | moved or vanished |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for corpus, found in results.items():
        for variant, detectors in found["variants"].items():
            for detector, checks in detectors.items():
                for check in CHECKS:
                    figures = checks.get(check)
                    if not figures:
                        continue
                    fa = (
                        f"{figures['false_alarms_per_1000']:g} ({figures['false_alarms']}"
                        f" in {figures['comparisons']})"
                        if "comparisons" in figures
                        else ""
                    )
                    if figures.get("not_judged"):
                        fa += f"; {figures['not_judged']} not judged"
                    st = figures.get("stability", {})
                    share = st.get("moved_or_vanished_share")
                    degraded = _degraded_cell(figures)
                    moved = (
                        f"{100 * share:.0f}% of {st['change_points_on_first_points']}"
                        if share is not None
                        else ("none found" if st else "")
                    )
                    lines.append(
                        f"| {corpus} | {variant} | {detector} | {check} | {fa} | {degraded} | "
                        f"{_cell(figures, '3%')} | {_cell(figures, '5%')} | "
                        f"{_cell(figures, '10%')} | {moved} |"
                    )
    return "\n".join(lines)


def _git_commit() -> str:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        head = subprocess.run(  # noqa: S603
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],  # noqa: S607
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(  # noqa: S603
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],  # noqa: S607
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + (" (src modified)" if dirty else "")
    return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "corpora",
        nargs="*",
        default=sorted(p.name for p in CORPORA.iterdir() if p.is_dir()),
        help="corpus folders or names under benchmarks/corpora",
    )
    parser.add_argument(
        "--rounds", type=int, default=6, help="sequences of PR checks per corpus (default 6)"
    )
    parser.add_argument(
        "--scan-rounds", type=int, default=30, help="sequences scanned by history (default 30)"
    )
    parser.add_argument("--pairs", type=int, default=40, help="BASE/NEW rerun pairs (default 40)")
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--otava", default=str(ROOT / ".venv-otava" / "bin" / "python"))
    parser.add_argument("--asv", default=str(ROOT / ".venv-asv" / "bin" / "python"))
    parser.add_argument("--ours-only", action="store_true", help="skip the anchors")
    parser.add_argument(
        "--fresh-processes",
        action="store_true",
        help="one `python -m kernelindex_sdk` process per call (slower)",
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "false_alarms.json"
    )
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    command = Command(args.fresh_processes)
    if args.self_test:
        return self_test(command)
    anchors = (
        {}
        if args.ours_only
        else {"otava": args.otava, "asv": args.asv, "asv-regressions": args.asv}
    )
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    results: dict[str, Any] = {}
    described: dict[str, Any] = {}
    anchor_versions: dict[str, Any] = {}
    for name in args.corpora:
        folder = Path(name) if Path(name).is_dir() else CORPORA / name
        corpus = load_corpus(folder)
        t0 = time.perf_counter()
        found = evaluate(corpus, args, command, anchors)
        anchor_versions.update(found.pop("anchor_versions"))
        results[corpus.name] = found
        described[corpus.name] = {
            "reruns": len(corpus.reruns),
            "series": len(corpus.keys),
            "commit_measured": corpus.commit,
            "noise": noise(corpus),
            "origin": corpus.origin,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(
            f"{corpus.name}: {len(corpus.reruns)} reruns x {len(corpus.keys)} series,"
            f" {described[corpus.name]['seconds']} s",
            file=sys.stderr,
        )
    report = {
        "command": "PYTHONPATH=$PWD/src python benchmarks/false_alarms.py "
        + " ".join(sys.argv[1:]),
        "commit": _git_commit(),
        "versions": {
            "kernelindex-sdk": _version(),
            "python": platform.python_version(),
            "anchors": anchor_versions,
        },
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "seconds": round(time.perf_counter() - started, 1),
        "calls_of_kernelindex": command.calls,
        "settings": {
            "rounds": args.rounds,
            "scan_rounds": args.scan_rounds,
            "pairs": args.pairs,
            "seed": args.seed,
            "sizes": SIZES,
            "more_points": MORE,
        },
        "goals": GOALS,
        "corpora": described,
        "results": results,
    }
    write_results(report, args.out)
    print(table(results))
    return 0


def _version() -> str:
    import kernelindex_sdk

    return kernelindex_sdk.__version__


if __name__ == "__main__":
    sys.exit(main())

"""The false-alarm benchmark's material: corpora, records re-stamped and stepped, trials.

benchmarks/false_alarms.py's docstring defines what is measured; this module builds it.
A corpus is read, each provenance variant gets one store of branches (a branch per
sequence and history length) and the NEW and BASE files of its compare calls, and every
series comparison is a :class:`Trial` that says what was asked and what should be
answered. Nothing here runs the package: it writes records, the script asks the command.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

SIZES = (0.03, 0.05, 0.10)
MORE = 10  # points that arrive after the first scan, for stability
MIN_TESTED = 6  # the shortest series history tests (shorter: compare's rule)
ANNOTATION = "kernelindex.dev/"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
VARIANTS = ("same-commit", "new-commit-per-rerun")

Key = tuple[str, str, str, str, str]
Record = dict[str, Any]
Change = tuple[int, str]


# ---------------------------------------------------------------------------------------
# The corpus


@dataclass
class Corpus:
    """K reruns of one sweep: each rerun maps a series key to its record."""

    name: str
    reruns: list[dict[Key, Record]]
    keys: list[Key]
    commit: str
    origin: dict[str, Any]


def series_key(doc: Record) -> Key | None:
    """The store's series of a passed latency run (None for any other run)."""
    spec = doc["run"]["spec"]
    median = spec.get("timing", {}).get("latencyNs", {}).get("median")
    if spec.get("status") != "passed" or not median:
        return None
    impl = spec.get("implementation") or {}
    hardware = (doc.get("environment") or {}).get("spec", {}).get("hardware", {})
    return (
        spec["workloadDigest"],
        impl.get("provider") or spec["implementationDigest"],
        impl.get("entryPoint") or "",
        spec["protocolDigest"],
        hardware.get("product") or spec["environmentDigest"],
    )


def _read_lines(path: Path) -> list[Record]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_corpus(folder: Path) -> Corpus:
    """Read a corpus folder: its reruns in the order they ran, and its common series."""
    files = sorted(folder.glob("rerun-*.jsonl*"))
    if len(files) < 2:
        raise SystemExit(f"{folder}: expected at least 2 rerun-*.jsonl[.gz] files")
    reruns: list[dict[Key, Record]] = []
    starts = []
    for path in files:
        by_key: dict[Key, Record] = {}
        for doc in _read_lines(path):
            key = series_key(doc)
            if key is None:
                continue
            if key in by_key:
                raise SystemExit(f"{path}: two runs of one series in one rerun")
            by_key[key] = doc
        reruns.append(by_key)
        starts.append(min(d["run"]["spec"]["observedAt"] for d in by_key.values()))
    reruns = [r for _, r in sorted(zip(starts, reruns, strict=True), key=lambda x: x[0])]
    keys = sorted(set.intersection(*(set(r) for r in reruns)))
    first = reruns[0][keys[0]]["run"]["metadata"].get("annotations", {})
    manifest = folder / "manifest.json"
    origin = json.loads(manifest.read_text()) if manifest.exists() else {}
    origin.pop("reruns", None)
    return Corpus(
        name=folder.name,
        reruns=reruns,
        keys=keys,
        commit=first.get(ANNOTATION + "commit", "0" * 40),
        origin=origin,
    )


# ---------------------------------------------------------------------------------------
# Records: provenance rewritten, steps injected


def _scaled_value(value: Any, factor: float) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, int):
        return round(value * factor)
    return float(f"{value * factor:.6g}")


def scaled_spec(spec: Record, factor: float) -> Record:
    """A run spec whose timing is ``factor`` times the original's, its spread kept.

    The latency median and every latency measurement are multiplied, bandwidth and
    throughput divided; memory and anything else is left; nothing digested is touched.
    """
    if factor == 1.0:
        return spec
    timing = dict(spec["timing"])
    timing["latencyNs"] = {k: _scaled_value(v, factor) for k, v in timing["latencyNs"].items()}
    # Time scales with the step; a rate (bandwidth, throughput) inversely; the rest stays.
    per_metric = {"latency": factor, "bandwidth": 1 / factor, "throughput": 1 / factor}
    measurements = [
        {**m, "value": _scaled_value(m["value"], per_metric[m.get("metric")])}
        if m.get("metric") in per_metric
        else m
        for m in spec.get("measurements", [])
    ]
    return {**spec, "timing": timing, "measurements": measurements}


def stamped(
    doc: Record, *, name: str, commit: str, commit_time: datetime, branch: str, factor: float
) -> Record:
    """A copy of ``doc`` under a new name and provenance, its timing times ``factor``."""
    run = doc["run"]
    metadata_ = dict(run["metadata"])
    metadata_["name"] = name
    metadata_["annotations"] = {
        **metadata_.get("annotations", {}),
        ANNOTATION + "commit": commit,
        ANNOTATION + "branch": branch,
        ANNOTATION + "commit-time": commit_time.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }
    return {**doc, "run": {**run, "metadata": metadata_, "spec": scaled_spec(run["spec"], factor)}}


# ---------------------------------------------------------------------------------------
# Trials: what is asked, what the answer should be


@dataclass
class Trial:
    """One series comparison: what the verdict is asked and what it should answer."""

    check: str  # one of CHECKS
    key: Key
    names: list[str]  # run name at each position, oldest first (compare: NEW last)
    values: list[float]  # the medians at those positions (for the anchors)
    step: tuple[int, str, float] | None = None  # position, direction, size
    link: int | None = None  # stability: the first-K-10 scan and the full scan share it
    part: str = ""  # "first" or "all" for a linked scan
    purpose: str = ""  # "stability": a linked scan, whose step does not count in recall
    ours: Any = None  # history: list[Change]; compare: "slower", "faster" or None
    degraded: set[int] = field(default_factory=set)  # history: positions it called degraded
    anchors: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """One variant's store, its calls and their trials."""

    variant: str
    store_records: list[Record] = field(default_factory=list)
    scans: dict[str, list[Trial]] = field(default_factory=lambda: defaultdict(list))
    pr: list[tuple[str, list[Record], list[Trial]]] = field(default_factory=list)
    pairs: list[tuple[list[Record], list[Record], list[Trial]]] = field(default_factory=list)


def median_of(doc: Record) -> float:
    """A run's latency median in ns."""
    return float(doc["run"]["spec"]["timing"]["latencyNs"]["median"])


def _name(doc: Record) -> str:
    return str(doc["run"]["metadata"]["name"])


def _factor(direction: str | None, size: float) -> float:
    if direction is None:
        return 1.0
    return 1 + size if direction == "slower" else 1 - size


Step = tuple[int, str, float]  # position of the first point after it, direction, size


class _Planner:
    """Builds one provenance variant's :class:`Plan` (see plan_variant)."""

    def __init__(self, corpus: Corpus, variant: str, rng: np.random.Generator) -> None:
        self.corpus, self.variant, self.rng = corpus, variant, rng
        self.plan = Plan(variant)
        self.keys = corpus.keys
        self.k = len(corpus.reruns)
        # Stability needs a first scan the test can judge: K - 10 points, at least 6.
        self.first = self.k - MORE if self.k - MORE >= MIN_TESTED else None
        self.inject = variant == "new-commit-per-rerun"
        # A step leaves 3 points on each side where the series is tested, else 1.
        self.lo = 3 if self.k >= MIN_TESTED else 1
        self.links = 0

    def copy(
        self, rerun: int, key: Key, *, branch: str, tag: str, pos: int, factor: float = 1.0
    ) -> Record:
        """Rerun ``rerun``'s run of ``key`` as position ``pos`` of sequence ``tag``."""
        doc = self.corpus.reruns[rerun][key]
        if self.variant == "same-commit":
            commit, when = self.corpus.commit, T0
        else:
            commit = hashlib.sha1(f"{self.corpus.name}:{tag}:{pos}".encode()).hexdigest()  # noqa: S324 - an id, not a secret
            when = T0 + timedelta(minutes=pos)
        suffix = f"{tag}-p{pos}" + (f"-x{round(factor * 1000)}" if factor != 1.0 else "")
        return stamped(
            doc,
            name=f"{_name(doc)}-{suffix}",
            commit=commit,
            commit_time=when,
            branch=branch,
            factor=factor,
        )

    def directions(self) -> dict[Key, str]:
        return {k: ("slower" if self.rng.random() < 0.5 else "faster") for k in self.keys}

    def steps(self, hi: int, size: float) -> dict[Key, Step]:
        """A step per series at a position drawn from [lo, hi], direction at random."""
        return {
            key: (int(self.rng.integers(self.lo, hi + 1)), direction, size)
            for key, direction in self.directions().items()
        }

    def scan(self, branch: str, seq: list[int], steps: dict[Key, Step] | None) -> dict[Key, Trial]:
        """A branch holding ``seq``'s reruns in order, stepped per series; its trials."""
        out = {}
        for key in self.keys:
            step = (steps or {}).get(key)
            docs = [
                self.copy(
                    r,
                    key,
                    branch=branch,
                    tag=branch,
                    pos=p,
                    factor=_factor(step[1], step[2]) if step and p >= step[0] else 1.0,
                )
                for p, r in enumerate(seq)
            ]
            self.plan.store_records.extend(docs)
            out[key] = Trial(
                "history", key, [_name(d) for d in docs], [median_of(d) for d in docs], step=step
            )
            self.plan.scans[branch].append(out[key])
        return out

    def link(self, head: dict[Key, Trial], full: dict[Key, Trial]) -> None:
        """Pair the scans of the first K - 10 points and of all K, for stability."""
        for key in self.keys:
            self.links += 1
            full[key].link = head[key].link = self.links
            full[key].part, head[key].part = "all", "first"
            full[key].purpose = head[key].purpose = "stability"

    def scans(self, r: int, seq: list[int]) -> None:
        """History scans of one sequence: unmodified, then with steps of each size."""
        full = self.scan(f"r{r}-all", seq, None)
        if self.first is not None:
            self.link(self.scan(f"r{r}-first", seq[: self.first], None), full)
        for size in SIZES if self.inject else ():
            tag = f"r{r}-s{round(size * 100)}"
            # Recall: a step anywhere with `lo` points on each side.
            self.scan(f"{tag}a", seq, self.steps(self.k - self.lo, size))
            if self.first is not None:
                # Stability: a step within the first K - 10 points.
                steps = self.steps(self.first - self.lo, size)
                full = self.scan(f"{tag}b-all", seq, steps)
                self.link(self.scan(f"{tag}b-first", seq[: self.first], steps), full)

    def versions(self) -> list[tuple[float, dict[Key, str] | None]]:
        """NEW as it ran, then (with injection) scaled by each size, directions at random."""
        out: list[tuple[float, dict[Key, str] | None]] = [(0.0, None)]
        if self.inject:
            out += [(size, self.directions()) for size in SIZES]
        return out

    def pr_checks(self, r: int, seq: list[int]) -> None:
        """The PR check: NEW at position k against a branch of the k points before it."""
        for k in range(1, self.k):
            branch = f"r{r}-k{k}"
            history = {
                key: [self.copy(seq[p], key, branch=branch, tag=branch, pos=p) for p in range(k)]
                for key in self.keys
            }
            for docs in history.values():
                self.plan.store_records.extend(docs)
            for size, dirs in self.versions():
                new_docs, trials = [], []
                for key in self.keys:
                    direction = dirs[key] if dirs else None
                    new = self.copy(
                        seq[k],
                        key,
                        branch=f"{branch}-new",
                        tag=branch,
                        pos=k,
                        factor=_factor(direction, size),
                    )
                    new_docs.append(new)
                    trials.append(
                        Trial(
                            "compare --history",
                            key,
                            [*(_name(d) for d in history[key]), _name(new)],
                            [*(median_of(d) for d in history[key]), median_of(new)],
                            step=(k, direction, size) if direction else None,
                        )
                    )
                self.plan.pr.append((branch, new_docs, trials))

    def pairs(self, count: int) -> None:
        """compare BASE NEW: up to ``count`` pairs of different reruns, the earlier as BASE."""
        every = [(i, j) for i in range(self.k) for j in range(i + 1, self.k)]
        for x in self.rng.permutation(len(every))[:count]:
            i, j = every[x]
            tag = f"pair{i}-{j}"
            base = {key: self.copy(i, key, branch="base", tag=tag, pos=i) for key in self.keys}
            for size, dirs in self.versions():
                new_docs, trials = [], []
                for key in self.keys:
                    direction = dirs[key] if dirs else None
                    factor = _factor(direction, size)
                    new = self.copy(j, key, branch="new", tag=tag, pos=j, factor=factor)
                    new_docs.append(new)
                    trials.append(
                        Trial(
                            "compare",
                            key,
                            [_name(base[key]), _name(new)],
                            [median_of(base[key]), median_of(new)],
                            step=(1, direction, size) if direction else None,
                        )
                    )
                self.plan.pairs.append((list(base.values()), new_docs, trials))


def plan_variant(
    corpus: Corpus,
    variant: str,
    rng: np.random.Generator,
    *,
    rounds: int,
    scan_rounds: int,
    pairs: int,
) -> Plan:
    """Every branch, NEW and BASE file and trial of one provenance variant.

    Round 0 takes the reruns in the order they ran, each further round a random order:
    ``scan_rounds`` of them are scanned by history, ``rounds`` give the PR checks. In
    ``same-commit`` the store orders a branch by observedAt whatever the round, so its
    history scans are made in round 0 only; and no step is injected there (within one
    commit a step is not a step).
    """
    planner = _Planner(corpus, variant, rng)
    for r in range(max(rounds, scan_rounds)):
        seq = list(range(planner.k)) if r == 0 else [int(x) for x in rng.permutation(planner.k)]
        if r < scan_rounds and (planner.inject or r == 0):
            planner.scans(r, seq)
        if r < rounds:
            planner.pr_checks(r, seq)
    planner.pairs(pairs)
    return planner.plan


def synthetic_corpus(template: Path, reruns: int, step_at: int, step: float) -> Corpus:
    """Two series made from the first two records of ``template``, 0.05% noise and spread.

    The first is flat; the second steps by ``step`` at rerun ``step_at``. For the
    self-test, whose answers are known.
    """
    docs = _read_lines(template)[:2]
    rng = np.random.default_rng(7)
    out: list[dict[Key, Record]] = []
    keys = [series_key(d) for d in docs]
    for r in range(reruns):
        by_key: dict[Key, Record] = {}
        for s, doc in enumerate(docs):
            level = 1e6 * (1 + s) * (1 + (step if (s == 1 and r >= step_at) else 0.0))
            median = round(level * (1 + 0.0005 * rng.standard_normal()))
            spec = dict(doc["run"]["spec"])
            spec["observedAt"] = (T0 + timedelta(hours=1, seconds=10 * r + s)).strftime(
                "%Y-%m-%dT%H:%M:%S.000Z"
            )
            spec["timing"] = {**spec["timing"], "latencyNs": {"median": median}}
            spec["measurements"] = [
                {**m, "value": round(median * (0.9995 if m["statistic"] == "p20" else 1.0005))}
                if m["metric"] == "latency"
                else m
                for m in spec["measurements"]
            ]
            meta = {**doc["run"]["metadata"], "name": f"synthetic-{s}-{r}"}
            by_key[keys[s]] = {**doc, "run": {**doc["run"], "spec": spec, "metadata": meta}}  # type: ignore[index]
        out.append(by_key)
    return Corpus("synthetic", out, keys, "f" * 40, {})  # type: ignore[arg-type]

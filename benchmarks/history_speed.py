"""Speed of ``kernelindex history`` and ``compare --history`` on a SQLite store, one core.

    PYTHONPATH=src taskset -c 0 python benchmarks/history_speed.py --repeats 11 \
        [--out benchmarks/results/history_speed.json]

Goals (issue 22): the history of a series of 10,000 points in 50 ms or less; the PR check
of 1,000 NEW records in 1 s or less. Each is timed three ways, median of the repeats,
as wall time and as the process's CPU time (the machine may be shared):

- ``library``: :func:`kernelindex_sdk.store.history.history` on the rows already read
  (series, change points, causes), and rendering its JSON;
- ``with the store``: ``Store.rows(...)`` from SQLite as well (what the dashboard calls);
- ``command``: ``kernelindex history --format json`` / ``compare --history`` run in-process
  through ``main()`` (argument parsing, opening the store, printing; not the interpreter's
  start, about 0.3 s for any command); ``argument_parser`` is the part of it that builds
  the argument parser ``main()`` builds for that line (the history command's module's
  parsers only), and ``argument_parser_whole`` every command's (``kernelindex --help``).

The stores are built from the project's own H200 bundle (all four objects carried):
10,000 runs of one series with a 5% step at 5,000, on branch ``main``; and 1,000 series
(one workload per ``tokens`` value) of 10 points each on ``main``, with a NEW file of one
run per series.
"""

from __future__ import annotations

import argparse
import copy
import gc
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _results import machine_facts, write_results

from kernelindex_sdk import digest
from kernelindex_sdk._cli import _parser as argument_parser
from kernelindex_sdk._cli import main as cli
from kernelindex_sdk.compare import load_runs, render
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.branch_compare import compare_to_branch
from kernelindex_sdk.store.history import history, render_history

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "benchmarks" / "results" / "jsd_forward_h200.jsonl"
GOALS = {"history_10000_points_s": 0.05, "compare_history_1000_records_s": 1.0}


def _template() -> dict[str, Any]:
    with TEMPLATE.open(encoding="utf-8") as f:
        return json.loads(f.readline())  # type: ignore[no-any-return]


def _run(base: dict[str, Any], name: str, i: int, median: float, **annotations: str) -> str:
    doc = copy.deepcopy(base)
    spec = doc["run"]["spec"]
    spec["timing"]["latencyNs"]["median"] = round(median)
    spec["observedAt"] = (
        f"2026-{1 + i // 40000 % 12:02d}-{1 + i // 1440 % 28:02d}"
        f"T{i // 60 % 24:02d}:{i % 60:02d}:00.000Z"
    )
    spec["measurements"] = [
        {"unit": "ns", "value": round(median * 0.996), "metric": "latency", "statistic": "p20"},
        {"unit": "ns", "value": round(median * 1.004), "metric": "latency", "statistic": "p80"},
    ]
    meta = doc["run"]["metadata"]
    meta["name"] = name
    meta["annotations"] = {f"kernelindex.dev/{k}": v for k, v in annotations.items()}
    return json.dumps(doc, ensure_ascii=False)


def _with_tokens(base: dict[str, Any], tokens: int) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    spec = doc["run"]["spec"]
    spec["workload"]["parameters"]["tokens"] = tokens
    spec["workloadDigest"] = digest.workload_digest(spec["workload"])
    return doc


def timed_together(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of each of ``fns`` over ``repeats`` rounds, after a
    warm-up call of each.

    Each round calls every function once, in turn: on a machine shared with other work
    a burst of the neighbours' load then falls on all of them alike, not on whichever
    was being timed (the load average is recorded beside the figures). The CPU time is
    what a call costs; the wall time also holds the waits. What this script built before
    (the records' text, the rows the library figure reuses) is frozen out of the garbage
    collector's passes, as a command's own process would not hold it: otherwise each
    full pass of the collector during a call walks it too.
    """
    gc.collect()
    gc.freeze()
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    try:
        for fn in fns.values():
            fn()
        for _ in range(repeats):
            for name, fn in fns.items():
                wall, cpu = time.perf_counter(), time.process_time()
                fn()
                walls[name].append(time.perf_counter() - wall)
                cpus[name].append(time.process_time() - cpu)
    finally:
        gc.unfreeze()
    return {
        name: {
            "wall_s": round(statistics.median(walls[name]), 4),
            "cpu_s": round(statistics.median(cpus[name]), 4),
        }
        for name in fns
    }


def _quiet(*argv: str) -> Callable[[], int]:
    def call() -> int:
        status = cli(list(argv), stdout=io.StringIO(), stderr=io.StringIO())
        if status != 0:
            raise SystemExit(f"kernelindex {' '.join(argv)} exited {status}")
        return status

    return call


def one_long_series(tmp: Path, repeats: int) -> dict[str, Any]:
    base = _template()
    rng = np.random.default_rng(1)
    lines = []
    for i in range(10_000):
        level = 300_000 * (1.05 if i >= 5_000 else 1.0)
        lines.append(
            _run(
                base,
                f"speed-{i:05d}",
                i,
                level * (1 + 0.01 * rng.standard_normal()),
                commit=f"{i:040x}",
                branch="main",
            )
        )
    path = tmp / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = str(tmp / "long.sqlite3")
    with open_store(db) as store:
        assert store.ingest([path]).ok
        rows = store.rows()
        found = history(rows, spec=store.spec)
        [series] = found
        assert [c.index for c in series.changes] == [5_000], series.changes
        figures = timed_together(
            {
                "library": lambda: render_history(history(rows, spec=store.spec), "json"),
                "with_store": lambda: render_history(
                    history(store.rows(), spec=store.spec), "json"
                ),
                "command": _quiet("history", "--db", db, "--format", "json"),
                "argument_parser": lambda: argument_parser("history"),
                "argument_parser_whole": argument_parser,
            },
            repeats,
        )
    return {
        "points": len(rows),
        "changes_found": [c.index for c in series.changes],
        **figures,
    }


def pr_check(tmp: Path, repeats: int) -> dict[str, Any]:
    base = _template()
    rng = np.random.default_rng(2)
    lines, new = [], []
    for s in range(1_000):
        doc = _with_tokens(base, 1_000 + s)
        for p in range(10):
            i = s * 10 + p
            lines.append(
                _run(
                    doc,
                    f"main-{s:04d}-{p:02d}",
                    p,
                    300_000 * (1 + 0.01 * rng.standard_normal()),
                    commit=f"{p:040x}",
                    branch="main",
                )
            )
            del i
        new.append(_run(doc, f"pr-{s:04d}", 60, 300_000 * (1.1 if s % 100 == 0 else 1.0)))
    main_path, new_path = tmp / "main.jsonl", tmp / "new.jsonl"
    main_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    new_path.write_text("\n".join(new) + "\n", encoding="utf-8")
    db = str(tmp / "pr.sqlite3")
    with open_store(db) as store:
        assert store.ingest([main_path]).ok

        def check() -> Any:
            result = compare_to_branch(
                store.rows(branch="main"), load_runs([new_path]), spec=store.spec, branch="main"
            )
            render(result, "markdown")
            return result

        result = check()
        assert len(result.pairs) == 1_000, (len(result.pairs), len(result.unpaired))
        regressions = len(result.regressions(5))
        figures = timed_together(
            {
                "with_store": check,
                "command": _quiet(
                    "compare", "--history", "main", str(new_path), "--db", db,
                    "--format", "markdown",
                ),
            },
            repeats,
        )  # fmt: skip
    return {
        "branch_rows": len(lines),
        "new_records": len(new),
        "pairs": len(result.pairs),
        "regressions_over_5pct": regressions,
        **figures,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        long = one_long_series(Path(tmp), args.repeats)
        pr = pr_check(Path(tmp), args.repeats)
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    report = {
        "command": (
            "PYTHONPATH=src taskset -c 0 python benchmarks/history_speed.py"
            f" --repeats {args.repeats} --out benchmarks/results/history_speed.json"
        ),
        **machine_facts(),
        "cpus_allowed": affinity,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "goals": GOALS,
        "history_of_one_series": long,
        "compare_history": pr,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

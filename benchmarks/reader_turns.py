"""Reading records by two versions of the code in turns, on one core: before and after.

    python benchmarks/reader_turns.py --before MAIN/src [--rounds 3] [--records 10000] \
        [--out benchmarks/results/reader_turns.json]

What ``kernelindex validate``, ``compare`` (its reading) and ``ingest`` (into a fresh
SQLite store) cost per record, for four kinds of record: Liger bundles, harness bundles,
the same harness bundles as the harness writes them now (the GPU's state in
``run.spec.conditions`` and provenance annotations), and the published example. In each
round every version reads the same file in a child process pinned to ``--cpu``:
``--before``'s ``src`` folder, this checkout's (``--after``), and this checkout's again
with ``KERNELINDEX_STRICT_READ=1`` (the plain path alone: what the fast path is worth).
Each figure is the CPU time (user and system, ``time.process_time``) of the child's call
per record: the best of the rounds (each round the best of two calls), and the median.
On a shared machine one version's figure moves with the neighbours' load by more than a
change is worth: the turns put every version under the same load.

``--memory`` also measures the peak memory (``ru_maxrss``) of validating one line of
``--problems`` latency measurements in a unit that is none (issue 37: 70,000 problems
in a 5 MB line), and how many problems each version reports.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from store_ingest import _bundles, make_file

from kernelindex_sdk import dumps

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

_CHILD = """
import os, sys, tempfile, time
from pathlib import Path
what, path, times = sys.argv[1], sys.argv[2], int(sys.argv[3])

def once():
    if what == "validate":
        from kernelindex_sdk.documents import check_documents
        return sum(r.valid for r in check_documents([path]))
    if what == "compare":
        from kernelindex_sdk.compare import load_runs
        return len(load_runs([path]).runs)
    from kernelindex_sdk.store import open_store
    with tempfile.TemporaryDirectory() as folder:
        with open_store(Path(folder) / "s.sqlite3") as store:
            return store.ingest([path]).added

once()  # imports, compiled schemas: not timed
found = []
for _ in range(times):
    a = time.process_time(); count = once(); b = time.process_time()
    found.append((b - a, count))
print(repr(found))
"""

_MEMORY = """
import json, resource, sys
from kernelindex_sdk.documents import check_documents
problems = sum(len(r.problems) for r in check_documents([sys.argv[1]]))
print(repr((problems, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
"""


def _harness_now(work: Path, count: int) -> Path:
    """Harness bundles as the harness writes them now: conditions and provenance."""
    base = _bundles("harness", work)
    path = work / "harness-now.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            doc = json.loads(json.dumps(base[i % len(base)]))
            run = doc["run"]
            run["metadata"]["name"] += f"-copy{i}"
            run["spec"]["conditions"] = {
                "gpu": {
                    "samples": 12,
                    "smClockMhz": {"min": 1965, "median": 1980, "max": 1980},
                    "memoryClockMhz": {"min": 3201, "median": 3201, "max": 3201},
                    "applicationsSmClockMhz": 1980,
                    "maxSmClockMhz": 1980,
                    "powerW": {"min": 210.5, "median": 402.25, "max": 455},
                    "powerLimitW": 700,
                    "temperatureC": {"min": 38, "median": 41, "max": 43},
                    "throttleReasons": [],
                }
            }
            run["metadata"]["annotations"].update(
                {
                    "kernelindex.dev/commit": "ffea881",
                    "kernelindex.dev/branch": "main",
                    "kernelindex.dev/commit-time": "2026-11-30T10:00:00.000Z",
                }
            )
            out.write(dumps(doc, indent=None) + "\n")
    return path


def _env(src: Path, strict: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("KERNELINDEX_STRICT_READ", None)
    if strict:
        env["KERNELINDEX_STRICT_READ"] = "1"
    return env


def _turn(src: Path, strict: bool, what: str, path: Path, cpu: str) -> list[tuple[float, int]]:
    # Our own interpreter and code: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        ["taskset", "-c", cpu, sys.executable, "-c", _CHILD, what, str(path), "2"],  # noqa: S607
        capture_output=True,
        text=True,
        env=_env(src, strict),
        check=True,
    )
    found: list[tuple[float, int]] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    return found


def _summary(runs: list[list[tuple[float, int]]]) -> dict[str, Any]:
    """Per record: the best of each round's best, and their median."""
    count = runs[0][0][1]
    rounds = sorted(min(cpu for cpu, _ in found) / count * 1e6 for found in runs)
    return {
        "records": count,
        "best_cpu_us": round(rounds[0], 1),
        "median_cpu_us": round(statistics.median(rounds), 1),
    }


def _memory(versions: dict[str, tuple[Path, bool]], work: Path, count: int) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "liger-jsd-forward-torch-b200.json").read_text("utf-8"))
    doc["run"]["spec"]["measurements"] = [
        {"unit": "xx", "value": i, "metric": "latency", "statistic": "p20"} for i in range(count)
    ]
    path = work / "many-problems.jsonl"
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", "utf-8")
    found: dict[str, Any] = {"line_bytes": path.stat().st_size, "problems_in_it": count}
    for name, (src, strict) in versions.items():
        # Our own interpreter and code: S603 does not apply.
        done = subprocess.run(  # noqa: S603
            [sys.executable, "-c", _MEMORY, str(path)],
            capture_output=True,
            text=True,
            env=_env(src, strict),
            check=True,
        )
        problems, peak = ast.literal_eval(done.stdout.strip().splitlines()[-1])
        found[name] = {"problems_reported": problems, "peak_rss_mib": round(peak / 1024)}
        print("memory", name, found[name], flush=True)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the src folder before")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="the src folder after")
    parser.add_argument("--kinds", default="liger,harness,harness-now,example")
    parser.add_argument("--what", default="validate,compare,ingest")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", default="1", help="the CPU the children run on")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--problems", type=int, default=70_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    versions = {
        "before": (args.before.resolve(), False),
        "after": (args.after.resolve(), False),
        "after, KERNELINDEX_STRICT_READ=1": (args.after.resolve(), True),
    }
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for kind in args.kinds.split(","):
            path = (
                _harness_now(work, args.records)
                if kind == "harness-now"
                else make_file(kind, args.records, work)
            )
            for what in args.what.split(","):
                runs: dict[str, list[list[tuple[float, int]]]] = {name: [] for name in versions}
                for _ in range(args.rounds):
                    for name, (src, strict) in versions.items():
                        runs[name].append(_turn(src, strict, what, path, args.cpu))
                row = {name: _summary(measured) for name, measured in runs.items()}
                before, after = row["before"]["best_cpu_us"], row["after"]["best_cpu_us"]
                row["after_over_before"] = round(after / before, 3)
                found.setdefault(kind, {})[what] = row
                print(kind, what, json.dumps(row), flush=True)
        memory = _memory(versions, work, args.problems) if args.memory else None
    report: dict[str, Any] = {
        "command": " ".join(["python benchmarks/reader_turns.py", *sys.argv[1:]]),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpu": args.cpu,
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "per_record": found,
    }
    if memory is not None:
        report["one_line_of_many_problems"] = memory
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

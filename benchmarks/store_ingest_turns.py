"""Ingest into SQLite by two versions of the code in turns, on one core: before and after.

    python benchmarks/store_ingest_turns.py --before MAIN/src [--rounds 4] \
        [--out benchmarks/results/store_ingest_turns.json]

On a shared machine one version's figure moves with the neighbours' load by more than a
change is worth, so two versions are compared in turns: in each round, each version
(``--before``'s ``src`` folder, then this checkout's, or ``--after``'s) ingests the same
file of 20,000 records (store_ingest.py's, per kind) into a fresh SQLite store, then
again (every record already stored), twice, in a child process pinned to ``--cpu``.
Each figure is the CPU time (user and system) of the child's ingest per record: the
best of all the rounds, and the median.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_facts, write_results
from store_ingest import make_file

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import os, sys, tempfile
from pathlib import Path
from kernelindex_sdk.store import open_store
path, times = sys.argv[1], int(sys.argv[2])
found = []
# Each store removed after its figures: a harness store is about 170 MB.
for i in range(times):
    with tempfile.TemporaryDirectory() as folder, open_store(Path(folder) / "s.sqlite3") as store:
        a = os.times(); new = store.ingest([path]); b = os.times()
        again = store.ingest([path]); c = os.times()
    assert new.ok and again.identical == new.added > 0, (new, again)
    cpu = lambda x, y: y.user - x.user + y.system - x.system
    found.append((cpu(a, b), cpu(b, c), new.added))
print(repr(found))
"""


def _turn(src: Path, path: Path, cpu: str) -> list[tuple[float, float, int]]:
    # Our own interpreter and code: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        ["taskset", "-c", cpu, sys.executable, "-c", _CHILD, str(path), "2"],  # noqa: S607
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        check=True,
    )
    found: list[tuple[float, float, int]] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    return found


def _summary(runs: list[tuple[float, float, int]]) -> dict[str, Any]:
    count = runs[0][2]
    summary: dict[str, Any] = {}
    for index, what in ((0, "all_new"), (1, "all_stored")):
        per_record = sorted(run[index] / count * 1e6 for run in runs)
        summary[what] = {
            "best_cpu_us": round(per_record[0], 1),
            "best_cpu_records_per_second": round(1e6 / per_record[0]),
            "median_cpu_us": round(per_record[len(per_record) // 2], 1),
        }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the src folder before")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="the src folder after")
    parser.add_argument("--kinds", default="liger,harness,example")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cpu", default="1", help="the CPU the children run on")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    versions = {"before": args.before.resolve(), "after": args.after.resolve()}
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = make_file(kind, 20_000, Path(tmp))
            runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in versions}
            for _ in range(args.rounds):
                for name, src in versions.items():
                    runs[name] += _turn(src, path, args.cpu)
            found[kind] = {name: _summary(measured) for name, measured in runs.items()}
            print(kind, found[kind], flush=True)
    report = {
        "command": " ".join(["python benchmarks/store_ingest_turns.py", *sys.argv[1:]]),
        **machine_facts(),
        "cpu": args.cpu,
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "records": 20_000,
        "runs_per_version": 2 * args.rounds,
        "per_record": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Importing 2,500 Liger-Kernel CSV rows into validated records, beside simpler baselines.

One run, one process: the same 2,500 rows (the fixture subset repeated) through
- csv.DictReader alone: parsing only, the floor no importer goes under;
- kernelindex_sdk.importers.liger.read(): parse, convert, digest, validate and build
  the models of every row (what `kernelindex import liger` does before writing);
- liger.import_files(): the same, written to a new JSON Lines file (what
  `kernelindex import liger -o FILE` does);
- liger.import_files() again into that file: every row is converted and then skipped,
  since the file already holds its run (the cost of a re-import);
- the same, then every record validated again with its digests verified, as
  `kernelindex validate --verify-digests` does on the written JSON Lines.
Goal: importing and validating 2,500 rows in <= 2 s on the developers' machine kind.

    python benchmarks/liger_import.py [--out benchmarks/results/liger_import.json]
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

from _results import machine_facts, write_results

import kernelindex_sdk as ki
from kernelindex_sdk.documents import JSONLinesWriter, validate_paths
from kernelindex_sdk.importers import liger

ROOT = Path(__file__).resolve().parent.parent
SUBSET = ROOT / "tests" / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
ROWS = 2500


def make_csv(path: Path) -> None:
    rows = list(csv.DictReader(SUBSET.open(encoding="utf-8")))
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=liger.COLUMNS)
        writer.writeheader()
        for i in range(ROWS):
            writer.writerow(rows[i % len(rows)])


def best_of(runs: int, fn: object) -> tuple[float, float]:
    """Best wall-clock and best CPU seconds of ``runs`` calls.

    CPU time (this process only) is the steadier figure on a shared machine: other
    processes lengthen the wall clock, not the work done here.
    """
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()  # type: ignore[operator]
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "rows.csv"
        make_csv(source)
        out = Path(tmp) / "records.jsonl"

        def parse_only() -> None:
            assert sum(1 for _ in csv.DictReader(source.open(encoding="utf-8"))) == ROWS

        def import_rows() -> None:
            assert sum(1 for _ in liger.read(source)) == ROWS

        def import_into_new_file() -> None:
            out.unlink(missing_ok=True)
            assert liger.import_files([source], out).imported == ROWS

        def reimport_into_same_file() -> None:
            assert liger.import_files([source], out).skipped == ROWS

        def import_write_and_verify() -> None:
            out.unlink(missing_ok=True)
            with JSONLinesWriter(out) as writer:
                for bundle in liger.read(source):
                    writer.write(bundle)
            assert list(validate_paths([out], verify_digests=True)) == []

        results = {
            "csv.DictReader only": best_of(args.runs, parse_only),
            "liger.read() (convert, digest, validate, models)": best_of(args.runs, import_rows),
            "liger.import_files() into a new file": best_of(args.runs, import_into_new_file),
            "liger.import_files() again (every row skipped)": best_of(
                args.runs, reimport_into_same_file
            ),
            "liger.read() + write JSON Lines + validate --verify-digests": best_of(
                args.runs, import_write_and_verify
            ),
        }
    for name, (wall, cpu) in results.items():
        print(f"{name:62} {wall:7.3f} s wall {cpu:7.3f} s CPU ({ROWS / cpu:6.0f} rows/CPU s)")
    report = {
        "rows": ROWS,
        **machine_facts(load=True),
        "kernelindex_sdk": ki.__version__,
        "goal_seconds": 2.0,
        "best_of": args.runs,
        "seconds": {k: round(wall, 4) for k, (wall, _) in results.items()},
        "cpu_seconds": {k: round(cpu, 4) for k, (_, cpu) in results.items()},
    }
    if args.out:
        write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""SQLite settings against the cost of the store's inserts alone, one core.

    PYTHONPATH=src taskset -c 1 python benchmarks/sqlite_insert_settings.py \
        [--out benchmarks/results/sqlite_insert_settings.json]

20,000 Liger runs (store_ingest.py's file, renamed copies of `kernelindex import liger`
output) go into a fresh store of the current layout as the store inserts them: one
transaction, batches of 2,000, one ``executemany`` for ``runs`` and one for
``run_texts`` per batch (the texts as the UTF-8 bytes read, cast to TEXT), then the
commit. The runs' other columns are fixed values, so that only SQLite's work is timed
(the store's Python work is store_ingest.py's "store's share"). Each setting is measured
``--repeat`` times, best of them: CPU microseconds per run for the inserts and for the
commit, and the wall clock of both (the commit's sync is in the wall clock only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from store_ingest import make_file

from kernelindex_sdk.store._layout import create_statements

SETTINGS = (
    ("64 KiB pages, synchronous FULL (the store's)", 65536, "FULL", None),
    ("64 KiB pages, synchronous NORMAL", 65536, "NORMAL", None),
    ("64 KiB pages, FULL, cache_size 64 MiB", 65536, "FULL", -65536),
    ("4 KiB pages (SQLite's default), FULL", 4096, "FULL", None),
)
_RUNS = (
    "INSERT INTO runs (name, status, observed_at, commit_id, branch, commit_time, median_ns,"
    " p20_ns, p80_ns, workload_digest, implementation_digest, protocol_digest,"
    " environment_digest, labels, annotations, source, ingested_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
)
_TEXTS = "INSERT INTO run_texts (seq, record_text, record_form) VALUES (?, CAST(? AS TEXT), ?)"


def _measure(
    folder: Path, lines: list[bytes], names: list[str], page: int, sync: str, cache: int | None
) -> dict[str, float]:
    path = folder / f"s{page}{sync}{cache}.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA page_size = {page}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {sync}")
    if cache is not None:
        db.execute(f"PRAGMA cache_size = {cache}")
    for statement in create_statements("sqlite"):
        db.execute(statement)
    digest = "sha256:" + "0" * 64
    rows = [
        (
            *(name, "passed", "2026-01-01T00:00:00.000Z", None, None, None, 1, 1, 1),
            *(digest, digest, digest, digest, "{}", "{}", "runs.jsonl", "2026-01-01T00:00:00.000Z"),
        )
        for name in names
    ]
    texts = [(i + 1, line, "line") for i, line in enumerate(lines)]
    wall, cpu = time.perf_counter(), time.process_time()
    db.execute("BEGIN IMMEDIATE")
    for start in range(0, len(rows), 2000):
        db.executemany(_RUNS, rows[start : start + 2000])
        db.executemany(_TEXTS, texts[start : start + 2000])
    inserted = time.process_time()
    db.execute("COMMIT")
    done_cpu, done_wall = time.process_time(), time.perf_counter()
    db.close()
    n = len(rows)
    return {
        "insert_cpu_us": (inserted - cpu) / n * 1e6,
        "commit_cpu_us": (done_cpu - inserted) / n * 1e6,
        "wall_us": (done_wall - wall) / n * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = make_file("liger", args.count, folder)
        lines = [line.rstrip(b"\n") for line in path.read_bytes().splitlines()]
        names = [json.loads(line)["run"]["metadata"]["name"] for line in lines]
        for label, page, sync, cache in SETTINGS:
            runs = [_measure(folder, lines, names, page, sync, cache) for _ in range(args.repeat)]
            found[label] = {key: round(min(r[key] for r in runs), 1) for key in runs[0]}
    report = {
        "command": (
            "PYTHONPATH=src taskset -c 1 python benchmarks/sqlite_insert_settings.py"
            + "".join(f" {a}" for a in sys.argv[1:])
        ),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "runs": args.count,
        "per_run_best_of_repeats": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

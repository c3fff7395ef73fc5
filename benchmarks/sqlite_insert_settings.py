"""SQLite settings against the cost of the store's inserts alone, one core.

    PYTHONPATH=src taskset -c 1 python benchmarks/sqlite_insert_settings.py \
        [--out benchmarks/results/sqlite_insert_settings.json]

20,000 runs of each kind (store_ingest.py's files, renamed copies of `kernelindex import
liger` output and of the H200 harness sweep) go into a fresh store of the current layout
as the store inserts them: one transaction, batches of 2,000, one ``executemany`` for
``runs`` and one for ``run_texts`` per batch (the texts as the UTF-8 bytes read, cast to
TEXT), then the commit. The runs' other columns are fixed values, so that only SQLite's
work is timed (the store's Python work is store_ingest.py's "store's share"). Each
setting is measured ``--repeat`` times, the settings taking turns, best of them: CPU
microseconds per run for the inserts and for the commit, the wall clock of both (the
commit's sync is in the wall clock only), and the bytes the process wrote and read per
run (``/proc/self/io``: a count the machine's load does not move).
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

from kernelindex_sdk.store._connect import SQLITE_CACHE_KIB
from kernelindex_sdk.store._sqlite_layout import CREATE

STORE = -SQLITE_CACHE_KIB
SETTINGS = (
    (f"64 KiB pages, FULL, cache_size {SQLITE_CACHE_KIB} KiB (the store's)", 65536, "FULL", STORE),
    ("64 KiB pages, FULL, SQLite's default cache (2,000 KiB: 31 pages)", 65536, "FULL", None),
    ("64 KiB pages, synchronous NORMAL, the store's cache", 65536, "NORMAL", STORE),
    ("4 KiB pages (SQLite's default), FULL, default cache (500 pages)", 4096, "FULL", None),
)  # fmt: skip
_RUNS = (
    "INSERT INTO runs (name, status, observed_at, commit_id, branch, commit_time, median_ns,"
    " p20_ns, p80_ns, workload_digest, implementation_digest, protocol_digest,"
    " environment_digest, labels, annotations, source, ingested_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
)
_TEXTS = "INSERT INTO run_texts (seq, record_text, record_form) VALUES (?, CAST(? AS TEXT), ?)"


def _io() -> dict[str, int]:
    """This process's I/O counters: bytes passed to write and read system calls."""
    found = {}
    for line in Path("/proc/self/io").read_text().splitlines():
        key, _, value = line.partition(":")
        found[key] = int(value)
    return found


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
    for statement in CREATE:
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
    io = _io()
    wall, cpu = time.perf_counter(), time.process_time()
    db.execute("BEGIN IMMEDIATE")
    for start in range(0, len(rows), 2000):
        db.executemany(_RUNS, rows[start : start + 2000])
        db.executemany(_TEXTS, texts[start : start + 2000])
    inserted = time.process_time()
    db.execute("COMMIT")
    done_cpu, done_wall = time.process_time(), time.perf_counter()
    done_io = _io()
    db.close()
    n = len(rows)
    return {
        "insert_cpu_us": (inserted - cpu) / n * 1e6,
        "commit_cpu_us": (done_cpu - inserted) / n * 1e6,
        "wall_us": (done_wall - wall) / n * 1e6,
        "written_bytes": (done_io["wchar"] - io["wchar"]) / n,
        "read_bytes": (done_io["rchar"] - io["rchar"]) / n,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default="liger,harness")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kind in args.kinds.split(","):
            path = make_file(kind, args.count, folder)
            lines = [line.rstrip(b"\n") for line in path.read_bytes().splitlines()]
            names = [json.loads(line)["run"]["metadata"]["name"] for line in lines]
            runs: dict[str, list[dict[str, float]]] = {label: [] for label, *_ in SETTINGS}
            # The settings take turns, so that a change in the machine's load falls on all.
            for _ in range(args.repeat):
                for label, page, sync, cache in SETTINGS:
                    runs[label].append(_measure(folder, lines, names, page, sync, cache))
            found[kind] = {
                label: {key: round(min(r[key] for r in measured), 1) for key in measured[0]}
                for label, measured in runs.items()
            }
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

"""What writing record texts and runs costs PostgreSQL's server, by the way they are sent.

The store's PostgreSQL write path (store/_postgres.py) sends record texts by binary COPY
as their UTF-8 bytes, with lz4 for the values stored compressed. This script measures the
alternatives side by side on 20,000 Liger bundles (the texts of
``benchmarks/store_ingest.py``'s file, about 2.5 KB each), 2,000 rows a COPY, one
transaction, into a fresh ``run_texts`` table of the store's layout:

- text COPY of str, the server's default compression (pglz): the write path before;
- text COPY of str, lz4;
- binary COPY of the UTF-8 bytes, lz4: the write path now;
- binary COPY of the UTF-8 bytes, pglz.

It reports the server backend's CPU time (from /proc), this process's CPU time and the
wall clock, the best of ``--repeat``, with the server pinned to ``--server-cpus`` and the
client where it was started:

    PYTHONPATH=src taskset -c 1 python benchmarks/postgres_write_settings.py --server-cpus 0 \\
        --out benchmarks/results/postgres_write_settings.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from kernelindex_sdk.store._postgres_layout import CREATE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from store_ingest import cpu_list, find_bindir, make_file, start_server

BATCH = 2000


def _backend_cpu(db: psycopg.Connection[Any]) -> float:
    fields = Path(f"/proc/{db.info.backend_pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _copy(binary: bool) -> Callable[[psycopg.Connection[Any], list[Any]], None]:
    def write(db: psycopg.Connection[Any], rows: list[Any]) -> None:
        form = " (FORMAT BINARY)" if binary else ""
        sql = f"COPY run_texts (seq, record_text, record_form) FROM STDIN{form}"
        with db.cursor() as cursor, cursor.copy(sql) as copy:
            if binary:
                copy.set_types(["int8", "bytea", "text"])
            for row in rows:
                copy.write_row(row)

    return write


def measure(
    url: str, texts: list[Any], compression: str | None, binary: bool, repeat: int
) -> dict[str, Any]:
    write = _copy(binary)
    runs = []
    for _ in range(repeat):
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("DROP TABLE IF EXISTS run_texts")
            db.execute(next(s for s in CREATE if "run_texts" in s))
            if compression is not None:
                db.execute(f"SET default_toast_compression = {compression}")
            rows = [(seq, text, "line") for seq, text in enumerate(texts)]
            server, wall, cpu = _backend_cpu(db), time.perf_counter(), time.process_time()
            with db.transaction():
                for start in range(0, len(rows), BATCH):
                    write(db, rows[start : start + BATCH])
            runs.append(
                (time.perf_counter() - wall, time.process_time() - cpu, _backend_cpu(db) - server)
            )
            ((methods,),) = db.execute(
                "SELECT array_agg(DISTINCT pg_column_compression(record_text)::text) FROM run_texts"
            ).fetchall()
    count = len(texts)
    return {
        "records": count,
        "server_cpu_us_per_record": round(min(r[2] for r in runs) / count * 1e6, 1),
        "client_cpu_us_per_record": round(min(r[1] for r in runs) / count * 1e6, 1),
        "wall_us_per_record": round(min(r[0] for r in runs) / count * 1e6, 1),
        "stored_as": sorted(m for m in methods if m is not None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--server-cpus", type=cpu_list, default=None)
    args = parser.parse_args()
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL's initdb/pg_ctl not found")
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="postgres-write-"))
    server, server_cpus = start_server(bindir, args.server_cpus)
    try:
        raw = make_file("liger", args.count, work).read_bytes().splitlines(keepends=True)
        strs = [line.decode("utf-8") for line in raw]
        cases = [
            ("text COPY of str, server default (pglz): before", strs, None, False),
            ("text COPY of str, lz4", strs, "lz4", False),
            ("binary COPY of UTF-8 bytes, lz4: now", raw, "lz4", True),
            ("binary COPY of UTF-8 bytes, pglz", raw, "pglz", True),
        ]
        with psycopg.connect(server.url()) as db:
            version = db.execute("SHOW server_version").fetchall()[0][0]
        rows = []
        for what, texts, compression, binary in cases:
            row = {
                "what": what,
                **measure(server.new_database(), texts, compression, binary, args.repeat),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "postgresql": version,
        "client_cpus": sorted(os.sched_getaffinity(0)),
        "server_cpus": server_cpus,
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "command": " ".join(
            ["taskset -c 1 python benchmarks/postgres_write_settings.py", *sys.argv[1:]]
        ),
        "rows": rows,
    }
    write_results(result, args.out)


if __name__ == "__main__":
    main()

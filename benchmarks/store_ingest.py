"""Ingest throughput: validated records per second into SQLite and PostgreSQL, side by side.

Three kinds of record, 20,000 of each in one JSON Lines file (copies of real records,
renamed so that every run is new):
- Liger bundles: `kernelindex import liger` of the fixture CSV subset;
- harness bundles: the H200 JSD sweep fixture (`kernelindex bench` output, every
  digested object carried);
- the published example bundle (a run carrying only the digests of its workload and
  implementation).

For each: validation alone (`documents.check_documents`, the one reader, as `kernelindex
validate` and ingest read; and with ``KERNELINDEX_STRICT_READ=1``, its plain path alone),
then a fresh SQLite file, then a fresh PostgreSQL schema (a server this script starts, as
the tests do), each ingested once with every record new and once more with every record
already stored. Then the store's own share, apart from reading and validating: the same
records validated beforehand (untimed) and handed to one file's ingest (its bookkeeping,
columns, object comparisons, inserts and commit) into a fresh store of each kind.
Goals (issue 22): 20,000 validated records/s into SQLite, 10,000/s into PostgreSQL, on
one core; run it pinned, the server included:

    taskset -c 1 python benchmarks/store_ingest.py [--out benchmarks/results/store_ingest.json]

Figures are the best of ``--repeat`` runs, by wall clock and by this process's CPU time
(the steadier figure on a shared machine; the PostgreSQL server's own CPU is not in it,
its wall clock is).

As a team runs it, the client on one core and the server on another: ``--server-cpus``
starts the server pinned to that CPU set (the client keeps its own), and each PostgreSQL
row then also gives the server's CPU time (its backend's, read from /proc):

    taskset -c 1 python benchmarks/store_ingest.py --server-cpus 0 --stores postgresql \
        --out benchmarks/results/store_ingest_postgres.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelindex_sdk import dumps
from kernelindex_sdk.documents import check_documents
from kernelindex_sdk.importers import liger
from kernelindex_sdk.store import open_store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
sys.path.insert(0, str(ROOT / "tests" / "store"))
from _postgres_server import Server, find_bindir  # noqa: E402
from _results import machine_facts, write_results  # noqa: E402

GOALS = {"sqlite_records_per_second": 20_000, "postgresql_records_per_second": 10_000}


def _bundles(kind: str, work: Path) -> list[dict[str, Any]]:
    if kind == "liger":
        out = work / "liger-import.jsonl"
        liger.import_files([FIXTURES / "liger" / "all_benchmark_data.subset.csv"], out)
        text = out.read_text(encoding="utf-8")
    elif kind == "harness":
        text = (FIXTURES / "h200-jsd-sweep.jsonl").read_text(encoding="utf-8")
    else:
        return [json.loads((FIXTURES / "liger-jsd-forward-torch-b200.json").read_text("utf-8"))]
    return [json.loads(line) for line in text.splitlines()]


def make_file(kind: str, count: int, work: Path) -> Path:
    """``count`` renamed copies of the kind's records, as published JSON Lines."""
    base = _bundles(kind, work)
    path = work / f"{kind}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            doc = json.loads(json.dumps(base[i % len(base)]))
            doc["run"]["metadata"]["name"] += f"-copy{i}"
            out.write(dumps(doc, indent=None) + "\n")
    return path


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and the count ``fn`` returns."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, count


def best(runs: list[tuple[float, float, int]]) -> dict[str, Any]:
    wall = min(r[0] for r in runs)
    cpu = min(r[1] for r in runs)
    count = runs[0][2]
    return {
        "records": count,
        "records_per_second": round(count / wall),
        "cpu_records_per_second": round(count / cpu),
    }


def cpu_list(text: str) -> set[int]:
    """A CPU set as taskset writes it: ``0``, ``0,2``, ``0-3``."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def start_server(bindir: Path, cpus: set[int] | None) -> tuple[Server, list[int] | None]:
    """A server, pinned to ``cpus`` when given (as ``taskset`` would: every process it
    starts inherits the affinity of the one that started it); the CPUs its postmaster
    reports, read back from the kernel."""
    if cpus is None:
        return Server(bindir), None
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        server = Server(bindir)
    finally:
        os.sched_setaffinity(0, own)
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    return server, sorted(os.sched_getaffinity(pid))


def _backend_cpu(store: Any) -> float:
    """CPU seconds the store's PostgreSQL backend process has used (utime + stime)."""
    pid = store._backend._db.info.backend_pid
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_pg(store: Any, fn: Callable[[], int]) -> tuple[float, float, int, float]:
    """As :func:`timed`, and the server backend's CPU seconds."""
    before = _backend_cpu(store)
    wall, cpu, count = timed(fn)
    return wall, cpu, count, _backend_cpu(store) - before


def best_pg(runs: list[tuple[float, float, int, float]]) -> dict[str, Any]:
    """As :func:`best`, with the server's CPU (per record and all in) and the wall clock
    of each run (the spread a shared machine gives)."""
    found = best([run[:3] for run in runs])
    count = found["records"]
    server = min(run[3] for run in runs)
    both = min(run[1] + run[3] for run in runs)
    return {
        **found,
        "server_cpu_records_per_second": round(count / server) if server else None,
        "client_and_server_cpu_records_per_second": round(count / both),
        "wall_records_per_second_each_run": [round(count / run[0]) for run in runs],
    }


def measure(
    kind: str,
    path: Path,
    server: Server | None,
    repeat: int,
    work: Path,
    stores: set[str] | None = None,
) -> list[dict]:
    rows = []

    def validate() -> int:
        return sum(1 for result in check_documents([path]) if result.valid)

    def validate_plain() -> int:
        os.environ["KERNELINDEX_STRICT_READ"] = "1"
        try:
            return validate()
        finally:
            del os.environ["KERNELINDEX_STRICT_READ"]

    rows.append(
        {"kind": kind, "what": "validation only", **best([timed(validate) for _ in range(repeat)])}
    )
    rows.append(
        {
            "kind": kind,
            "what": "validation only, KERNELINDEX_STRICT_READ=1 (the plain path)",
            **best([timed(validate_plain) for _ in range(repeat)]),
        }
    )
    targets: list[tuple[str, Callable[[int], str]]] = [
        ("sqlite", lambda n: f"sqlite:///{work / f'{kind}-{n}.sqlite3'}"),
    ]
    if server is not None:
        targets.append(("postgresql", lambda n: server.new_database()))
    if stores is not None:
        targets = [target for target in targets if target[0] in stores]
    for dialect, url_of in targets:
        fresh, again = [], []
        for n in range(repeat):
            url = url_of(n)
            with open_store(url) as store:
                if dialect == "postgresql":
                    fresh.append(timed_pg(store, lambda s=store: s.ingest([path]).added))
                    again.append(timed_pg(store, lambda s=store: s.ingest([path]).identical))
                else:
                    fresh.append(timed(lambda s=store: s.ingest([path]).added))
                    again.append(timed(lambda s=store: s.ingest([path]).identical))
        summary = best_pg if dialect == "postgresql" else best
        rows.append({"kind": kind, "what": f"ingest into {dialect}, all new", **summary(fresh)})
        rows.append({"kind": kind, "what": f"ingest into {dialect}, all stored", **summary(again)})
    validated = list(check_documents([path]))
    for dialect, url_of in targets:
        share = []
        for n in range(repeat):
            with open_store(url_of(n + repeat)) as store:

                def run(s: Any = store) -> int:
                    return store_share(s, path, validated)

                share.append(timed_pg(store, run) if dialect == "postgresql" else timed(run))
        summary = best_pg if dialect == "postgresql" else best
        rows.append(
            {
                "kind": kind,
                "what": f"store's share into {dialect}, all new (records validated before)",
                **summary(share),
            }
        )
    return rows


def store_share(store: Any, path: Path, validated: list[Any]) -> int:
    """One file's ingest of records already read and validated: what the store adds.

    Through the ingest's own private steps (a benchmark's view inside), as
    ``Store.ingest`` runs them after reading: one transaction, every record in it.
    """
    from kernelindex_sdk.provenance import Provenance
    from kernelindex_sdk.store._ingest import _FileIngest

    backend = store._backend
    work = _FileIngest(backend, str(path))
    gc.disable()
    try:
        with backend.transaction():
            work.run(iter(validated), Provenance())
    finally:
        gc.enable()
    if work.added != len(validated):
        raise SystemExit(f"store share: {work.added} of {len(validated)} added")
    return work.added


def verdicts(
    rows: list[dict[str, Any]], figure: str = "cpu_records_per_second"
) -> dict[str, dict[str, bool]]:
    """Per store and kind of record: whether ingesting new records met the goal, by
    ``figure`` (by default this process's CPU time: for PostgreSQL the client's alone,
    the server's is not in it)."""
    found: dict[str, dict[str, bool]] = {}
    for row in rows:
        for dialect in ("sqlite", "postgresql"):
            if row["what"] == f"ingest into {dialect}, all new":
                goal = GOALS[f"{dialect}_records_per_second"]
                found.setdefault(dialect, {})[row["kind"]] = row[figure] >= goal
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default="liger,harness,example")
    parser.add_argument("--stores", default="sqlite,postgresql", help="the stores to ingest into")
    parser.add_argument(
        "--server-cpus",
        type=cpu_list,
        default=None,
        help="pin the PostgreSQL server to this CPU set (taskset's form, e.g. 0 or 0-1)",
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="store-ingest-"))
    stores = set(args.stores.split(","))
    bindir = find_bindir() if "postgresql" in stores else None
    server, server_cpus = start_server(bindir, args.server_cpus) if bindir else (None, None)
    rows: list[dict] = []
    try:
        for kind in args.kinds.split(","):
            path = make_file(kind, args.count, work)
            for row in measure(kind, path, server, args.repeat, work, stores):
                print(json.dumps(row), flush=True)
                rows.append(row)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        **machine_facts(),
        "cores_used": len(os.sched_getaffinity(0)),
        "client_cpus": sorted(os.sched_getaffinity(0)),
        # None: the server shares the client's CPUs (started without --server-cpus).
        "server_cpus": server_cpus,
        # The machine is shared: wall figures shrink with its load (2 cores here).
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "goals": GOALS,
        "goals_met_by_cpu_time": verdicts(rows),
        "goals_met_by_wall_clock": verdicts(rows, "records_per_second"),
        "command": " ".join(["taskset -c 1 python benchmarks/store_ingest.py", *sys.argv[1:]]),
        "rows": rows,
    }
    write_results(result, args.out)


if __name__ == "__main__":
    main()

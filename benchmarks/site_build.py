"""Time ``kernelindex site`` on a store of many synthetic records (goal: 100,000 in 30 s).

    PYTHONPATH=src taskset -c 0 python benchmarks/site_build.py --records 100000

The records are the 64 runs of tests/fixtures/h200-jsd-sweep.jsonl on four GPUs (the
environment's product changed, its digest recomputed): 256 series, each measured at
``records / 256`` commits on main, with a 20% step in a tenth of the series half way.
They are ingested once into a SQLite store (timed, reported apart), then the dashboard is
built from the store, the way ``kernelindex site`` builds it, on the one core the command
runs on. Writes benchmarks/results/site_build.json: the build time, the files, the bytes
the landing page loads and the biggest data file.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from kernelindex_sdk.digest import environment_digest
from kernelindex_sdk.site import build_site
from kernelindex_sdk.store import open_store

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
RESULTS = ROOT / "benchmarks" / "results" / "site_build.json"
GPUS = ("NVIDIA H200", "NVIDIA B200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")


def _records(total: int, out: Path) -> int:
    """Write ``total`` records (rounded down to whole commits) as JSON Lines; return the count."""
    base = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    per_commit = len(base) * len(GPUS)
    commits = total // per_commit
    rng = random.Random(0)  # noqa: S311 - synthetic timings, not secrets
    variants = []
    for g, gpu in enumerate(GPUS):
        for i, original in enumerate(base):
            doc = copy.deepcopy(original)
            doc["environment"]["spec"]["hardware"]["product"] = gpu
            doc["environment"]["metadata"]["name"] = f"gpu-{g}"
            doc["run"]["spec"]["environmentDigest"] = environment_digest(doc["environment"]["spec"])
            stepped = (g * len(base) + i) % 10 == 0
            variants.append((g, i, doc, stepped))
    written = 0
    with out.open("w", encoding="utf-8") as stream:
        for c in range(commits):
            when = f"2026-{1 + c // 280:02d}-{1 + (c // 10) % 28:02d}T{c % 10:02d}:00:00.000Z"
            sha = f"{c:040x}"
            for g, i, doc, stepped in variants:
                run = copy.copy(doc["run"])
                spec = copy.copy(run["spec"])
                factor = (1.2 if stepped and c >= commits // 2 else 1.0) * rng.uniform(0.99, 1.01)
                median = max(1, int(doc["run"]["spec"]["timing"]["latencyNs"]["median"] * factor))
                spec["timing"] = {**spec["timing"], "latencyNs": {"median": median}}
                latency = {"unit": "ns", "metric": "latency"}
                spec["measurements"] = [
                    {**latency, "value": int(median * 0.99), "statistic": "p20"},
                    {**latency, "value": int(median * 1.01), "statistic": "p80"},
                ]
                spec["observedAt"] = when
                meta = copy.deepcopy(run["metadata"])
                meta["name"] = f"bench-{g}-{i}-{c}"
                meta.setdefault("annotations", {}).update(
                    {
                        "kernelindex.dev/commit": sha,
                        "kernelindex.dev/branch": "main",
                        "kernelindex.dev/commit-time": when,
                    }
                )
                run = {**run, "spec": spec, "metadata": meta}
                stream.write(json.dumps({**doc, "run": run}, separators=(",", ":")) + "\n")
                written += 1
    return written


def _landing_bytes(site: Path) -> int:
    names = ["index.html", "assets/app.js", "assets/app.css", "assets/uPlot.iife.min.js"]
    names += ["assets/uPlot.min.css", "data/site.js"]
    return sum((site / name).stat().st_size for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="site-build-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "store.sqlite3"
    records = work / "records.jsonl"
    if not db.exists():
        t0 = time.perf_counter()
        count = _records(args.records, records)
        t1 = time.perf_counter()
        with open_store(str(db)) as store:
            report = store.ingest([records])
        t2 = time.perf_counter()
        assert report.ok, report
        print(f"wrote {count} records in {t1 - t0:.1f} s, ingested in {t2 - t1:.1f} s")
    with open_store(str(db), create=False) as store:
        count = len(store.rows())
    site = work / "site"
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    summary = build_site(site, str(db))
    cpu = time.process_time() - cpu0
    wall = time.perf_counter() - t0
    data = list((site / "data").rglob("*.js"))
    biggest = max(data, key=lambda p: p.stat().st_size)
    result: dict[str, Any] = {
        "records": count,
        "series": summary.series,
        "regressions": summary.regressions,
        "build_wall_s": round(wall, 2),
        "build_cpu_s": round(cpu, 2),
        "goal_s": 30,
        "files": summary.files,
        "data_bytes": sum(p.stat().st_size for p in data),
        "landing_bytes": _landing_bytes(site),
        "landing_goal_bytes": 1_000_000,
        "biggest_data_file": {
            "path": str(biggest.relative_to(site)),
            "bytes": biggest.stat().st_size,
        },
        "cpus_allowed": len(os.sched_getaffinity(0)),
        # Wall time on a shared machine includes waiting for a core: the load says how much.
        "loadavg_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "command": "PYTHONPATH=src taskset -c 0 python benchmarks/site_build.py"
        f" --records {args.records}",
    }
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

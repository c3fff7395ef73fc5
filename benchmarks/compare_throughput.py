"""Compare throughput on one core: two files of 50,000 records each, end to end.

The records are the harness's H200 JSD bundles (benchmarks/results/jsd_forward_h200.jsonl),
multiplied into 50,000 distinct workloads per file (``tokens`` swept, digests recomputed);
NEW holds the same workloads re-timed (medians scaled by 0.9-1.1) and observed later.
Side by side, on the same files:

- ``json.loads`` of every line of both files: the floor for any Python reader;
- ``kernelindex validate`` of both files: the checks compare runs on every record;
- ``kernelindex compare BASE NEW`` (text output), the goal being <= 5 s;
- the same with ``--format json`` and with ``--fail-on-regression 5``.

    python benchmarks/compare_throughput.py [--records 50000]
        [--out benchmarks/results/compare_throughput.json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from kernelindex_sdk import digest
from kernelindex_sdk._cli import main

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benchmarks" / "results" / "jsd_forward_h200.jsonl"
GOAL_SECONDS = 5.0
PACKAGES = ("kernelindex-sdk", "jsonschema", "jsonschema-rs", "referencing", "rfc8785")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def make_files(folder: Path, count: int) -> tuple[Path, Path]:
    """Write BASE and NEW JSON Lines files of ``count`` records each."""
    templates = [json.loads(line) for line in SOURCE.read_text("utf-8").splitlines() if line]
    # Reproducible noise, not security: S311 does not apply.
    rng = random.Random(12)  # noqa: S311
    base_path, new_path = folder / "base.jsonl", folder / "new.jsonl"
    with base_path.open("w", encoding="utf-8") as base, new_path.open("w", encoding="utf-8") as new:
        for i in range(count):
            doc = json.loads(json.dumps(templates[i % len(templates)]))
            spec = doc["run"]["spec"]
            spec["workload"]["parameters"]["tokens"] = 1 + i // len(templates)
            spec["workloadDigest"] = digest.workload_digest(spec["workload"])
            doc["run"]["metadata"]["name"] = f"bench-run-{i}"
            base.write(json.dumps(doc, ensure_ascii=False) + "\n")
            scale = rng.uniform(0.9, 1.1)
            spec["timing"]["latencyNs"]["median"] = round(
                spec["timing"]["latencyNs"]["median"] * scale
            )
            for m in spec["measurements"]:
                if m["metric"] == "latency":
                    m["value"] = round(m["value"] * scale)
            spec["observedAt"] = "2026-11-30T01:00:00.000Z"
            doc["run"]["metadata"]["name"] = f"bench-new-{i}"
            new.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return base_path, new_path


def seconds(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float]:
    """Best wall time and best CPU time of ``repeat`` calls.

    CPU time is this process's own: on a shared machine it stays near the quiet-machine
    wall time while other processes stretch the wall clock.
    """
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def cli(*argv: str) -> Callable[[], None]:
    def run() -> None:
        out, err = io.StringIO(), io.StringIO()
        status = main(list(argv), stdout=out, stderr=err)
        if status not in (0, 1):
            raise SystemExit(f"kernelindex {' '.join(argv)} exited {status}: {err.getvalue()}")

    return run


def fresh_process(base: Path, new: Path) -> dict[str, Any]:
    """One ``kernelindex compare`` in a new process: start-up included, and its peak memory."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Our own interpreter and module, on files we just wrote: S603 does not apply.
    subprocess.run(  # noqa: S603
        [sys.executable, "-m", "kernelindex_sdk", "compare", str(base), str(new)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"{'fresh process':45} {wall:6.2f} s wall {cpu:6.2f} s cpu", file=sys.stderr)
    return {
        "what": "kernelindex compare BASE NEW (one fresh process)",
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mib": round(after.ru_maxrss / 1024, 1),
    }


def json_floor(*paths: Path) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            with path.open("rb") as f:
                for line in f:
                    json.loads(line)

    return run


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with tempfile.TemporaryDirectory() as tmp:
        base, new = make_files(Path(tmp), args.records)
        size = base.stat().st_size + new.stat().st_size
        rows = [
            ("json.loads of every line (floor)", json_floor(base, new)),
            ("kernelindex validate BASE NEW", cli("validate", str(base), str(new))),
            ("kernelindex compare BASE NEW", cli("compare", str(base), str(new))),
            (
                "kernelindex compare --format json",
                cli("compare", str(base), str(new), "--format", "json"),
            ),
            (
                "kernelindex compare --fail-on-regression 5",
                cli("compare", str(base), str(new), "--fail-on-regression", "5"),
            ),
        ]
        results = [fresh_process(base, new)]
        for name, fn in rows:
            wall, cpu = seconds(fn)
            results.append({"what": name, "seconds": round(wall, 3), "cpu_seconds": round(cpu, 3)})
            print(f"{name:45} {wall:6.2f} s wall {cpu:6.2f} s cpu", file=sys.stderr)
    report = {
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
        "cores_used": 1,
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "records_per_file": args.records,
        "megabytes_read": round(size / 1e6, 1),
        "goal_seconds": GOAL_SECONDS,
        "rows": results,
    }
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.write_text(text, "utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main_()

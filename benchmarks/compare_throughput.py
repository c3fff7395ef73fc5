"""Compare throughput on one core: two files of 50,000 records each, end to end.

Two kinds of record, each multiplied into 50,000 records per file (one workload
parameter swept, workload digests recomputed); NEW holds the same workloads re-timed
(medians scaled by 0.9-1.1), observed later:

- harness: our H200 JSD bundles (tests/fixtures/h200-jsd-sweep.jsonl, ~3.4 kB each);
- liger: bundles imported from the Liger CSV fixture (~2.3 kB each).

Side by side, on the same files: ``json.loads`` of every line (the floor for any Python
reader), ``kernelindex validate`` of both files (the checks compare runs on every record),
``kernelindex compare BASE NEW`` in a fresh process and in-process (text, json, with the
gate), and compare's stages in-process: strict parse and validation (the full check, as
``validate`` runs it), the quick reader compare uses for valid bundles, the compact form,
pairing, rendering. The goal is <= 5 s.

    python benchmarks/compare_throughput.py [--records 50000]
        [--out benchmarks/results/compare_throughput.json]
"""

from __future__ import annotations

import argparse
import gc
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

from _results import machine_facts, write_results

import kernelindex_sdk as ki
from kernelindex_sdk import compare, digest, validation
from kernelindex_sdk._cli import main
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk.compare import RunSet
from kernelindex_sdk.importers import liger

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
LIGER_CSV = ROOT / "tests" / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
GOAL_SECONDS = 5.0
PACKAGES = ("kernelindex-sdk", "jsonschema", "jsonschema-rs", "orjson", "referencing", "rfc8785")


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


def templates(kind: str) -> tuple[list[dict[str, Any]], str]:
    """The records to multiply, and the workload parameter to sweep in them."""
    if kind == "harness":
        lines = SOURCE.read_text("utf-8").splitlines()
        return [json.loads(line) for line in lines if line], "tokens"
    docs = [ki.dump(b) for b in liger.read_files([LIGER_CSV])]
    return [d for d in docs if "timing" in d["run"]["spec"]], "kernelindex_sweep"


def make_files(folder: Path, kind: str, count: int) -> tuple[Path, Path]:
    """Write BASE and NEW JSON Lines files of ``count`` records each."""
    docs, swept = templates(kind)
    # Reproducible noise, not security: S311 does not apply.
    rng = random.Random(12)  # noqa: S311
    base_path, new_path = folder / f"{kind}-base.jsonl", folder / f"{kind}-new.jsonl"
    with base_path.open("w", encoding="utf-8") as base, new_path.open("w", encoding="utf-8") as new:
        for i in range(count):
            doc = json.loads(json.dumps(docs[i % len(docs)]))
            spec = doc["run"]["spec"]
            spec["workload"]["parameters"][swept] = 1 + i // len(docs)
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


def cli(*argv: str, allowed: tuple[int, ...] = (0,)) -> Callable[[], None]:
    """A call of ``kernelindex argv``; an exit status outside ``allowed`` stops the benchmark."""

    def run() -> None:
        out, err = io.StringIO(), io.StringIO()
        status = main(list(argv), stdout=out, stderr=err)
        if status not in allowed:
            raise SystemExit(f"kernelindex {' '.join(argv)} exited {status}: {err.getvalue()}")

    return run


def fresh_process(base: Path, new: Path, repeat: int = 3) -> dict[str, Any]:
    """``kernelindex compare`` in a new process, best of ``repeat``: start-up included,
    and its peak memory.

    The child reports its own peak: a forked child's ru_maxrss starts from the parent's
    size, so it is measured before this process holds anything large.
    """
    code = (
        "import io, resource, sys\n"
        "from kernelindex_sdk._cli import main\n"
        "main(['compare', sys.argv[1], sys.argv[2]], stdout=io.StringIO())\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    wall = cpu = float("inf")
    peak = 0
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        # Our own interpreter and module, on files we just wrote: S603 does not apply.
        done = subprocess.run(  # noqa: S603
            [sys.executable, "-c", code, str(base), str(new)],
            check=True,
            capture_output=True,
            text=True,
        )
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
        peak = max(peak, int(done.stdout.split()[-1]))
    return {
        "what": f"kernelindex compare BASE NEW (fresh process, best of {repeat})",
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mib": round(peak / 1024, 1),
    }


def json_floor(*paths: Path) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            with path.open("rb") as f:
                for line in f:
                    json.loads(line)

    return run


def _full_check(lines: list[bytes]) -> None:
    for line in lines:
        list(validation.iter_parsed_problems(_jsontext.parse_document(line)))


def _quick_read(lines: list[bytes]) -> None:
    reader = validation.RecordReader()
    for number, line in enumerate(lines):
        reader.read(line, str(number))


def _compact(values: list[Any]) -> None:
    runs = RunSet()
    for value in values:
        runs.add(value, "x")


def without_collection(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with the cyclic collector paused, as the CLI runs a command."""

    def paused() -> Any:
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return paused


def stages(base: Path, new: Path) -> list[tuple[str, Callable[[], Any]]]:
    """compare's stages, each timed alone: read+parse+validate, compact, pair, render.

    Each runs as the ``kernelindex compare`` command runs it, with the cyclic collector
    paused (the CLI pauses it for a command), and keeps no more than compare keeps: the parsed
    records are dropped as they are read.
    """
    lines = [line for path in (base, new) for line in path.read_bytes().splitlines()]
    values = [json.loads(line) for line in lines]
    sets = (compare.load_runs([base]), compare.load_runs([new]))
    result = compare.compare(*sets)
    return [
        (
            "stage: strict parse + validate (as validate)",
            without_collection(lambda: _full_check(lines)),
        ),
        (
            # What compare (and validate) run: the one reader, its fast path on.
            "stage: the one reader (compare's read)",
            without_collection(lambda: _quick_read(lines)),
        ),
        ("stage: compact form", without_collection(lambda: _compact(values))),
        ("stage: pairing", lambda: compare.compare(*sets)),
        ("stage: text table", lambda: compare.render(result)),
    ]


def measure(kind: str, base: Path, new: Path, fresh: dict[str, Any], full: bool) -> dict[str, Any]:
    b, n = str(base), str(new)
    results = [fresh]
    rows: list[tuple[str, Callable[[], Any]]] = [
        ("json.loads of every line (floor)", json_floor(base, new)),
        ("kernelindex validate BASE NEW", cli("validate", b, n)),
        ("kernelindex compare BASE NEW", cli("compare", b, n)),
    ]
    if full:
        rows += [
            ("kernelindex compare --format json", cli("compare", b, n, "--format", "json")),
            (
                "kernelindex compare --fail-on-regression 5",
                # Re-timed by up to 10%: some pairs trip the gate, exiting 1.
                cli("compare", b, n, "--fail-on-regression", "5", allowed=(0, 1)),
            ),
        ]
    rows += stages(base, new)
    for name, fn in rows:
        wall, cpu = seconds(fn)
        results.append({"what": name, "seconds": round(wall, 3), "cpu_seconds": round(cpu, 3)})
        print(f"{kind:8} {name:45} {wall:6.2f} s wall {cpu:6.2f} s cpu", file=sys.stderr)
    size = base.stat().st_size + new.stat().st_size
    return {"records": kind, "megabytes_read": round(size / 1e6, 1), "rows": results}


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    load_at_start = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory() as tmp:
        files = {kind: make_files(Path(tmp), kind, args.records) for kind in ("harness", "liger")}
        # Fresh processes first, while this one is small (see fresh_process).
        fresh = {kind: fresh_process(*paths) for kind, paths in files.items()}
        datasets = [
            measure(kind, *paths, fresh[kind], full=kind == "harness")
            for kind, paths in files.items()
        ]
    report = {
        **machine_facts(),
        "processor": _cpu_model(),
        "packages": {name: _version(name) for name in PACKAGES},
        "cores_used": 1,
        # The machine is shared: the load says how far wall times stretched.
        "load_average_1min_at_start": load_at_start,
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "records_per_file": args.records,
        "goal_seconds": GOAL_SECONDS,
        "datasets": datasets,
    }
    write_results(report, args.out)


if __name__ == "__main__":
    main_()

"""Record a false-alarm corpus: one ``kernelindex bench jsd`` sweep rerun in fresh processes.

Same code, same commit, run again and again: every difference between the reruns is the
machine's noise, which is what benchmarks/false_alarms.py asks the verdict to tell from a
step. Each rerun is a new interpreter (``python -m kernelindex_sdk bench jsd``), as a CI
job would start one; its records are kept as they came, gzip-compressed, one file per
rerun, beside a manifest that says how each was made:

    PYTHONPATH=$PWD/src python benchmarks/false_alarms_corpus.py benchmarks/corpora/cpu-load \\
        --repeats 20 --load 1,1,2 -- --commit "$(git rev-parse HEAD)" --branch main

Everything after ``--`` goes to ``kernelindex bench jsd`` (no ``-o``: each rerun writes
its own file). A rerun that exits with another status than 0 stops the corpus (its
manifest entry keeps the end of its standard error) with that status. ``--load 1,1,2``
runs one CPU-burning process (a Python busy loop, not niced) beside the first two
reruns, two beside the third, and so on in turn: a busy CI machine, with the other core
taken, then both. ``--load 0`` (the default) runs alone,
as on the GPU machine (benchmarks/false_alarms_gpu_corpus.sh). ``--budget-s`` stops
starting reruns once the next would likely end past it (the longest rerun so far is the
guess). ``--first`` numbers the reruns from there, so a second call adds to a corpus.

Files: ``OUT/rerun-NN.jsonl.gz`` (gzip without a name or time, so the bytes depend on the
records alone) and ``OUT/manifest.json``: what the corpus is, each call (its arguments,
note and machine), and per rerun its load, start and end, wall seconds, the load average
before and after, and its record count. The manifest is rewritten after each rerun, so a
corpus cut short is still read.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# A busy loop: what a neighbour's CPU-bound job costs the benchmark.
_BURN = "while True:\n    pass\n"


@contextlib.contextmanager
def _burners(count: int) -> Iterator[None]:
    """Run ``count`` CPU-burning processes for the duration of the block, then end them."""
    procs = [
        subprocess.Popen([sys.executable, "-c", _BURN])  # noqa: S603 - our interpreter
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _write_gzip(text: bytes, path: Path) -> None:
    # mtime=0 and no file name: the same records give the same bytes.
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(text)
    tmp.replace(path)


def _rerun(python: str, bench_args: list[str], burners: int) -> tuple[bytes, dict[str, Any]]:
    """Run the sweep once in a fresh process beside ``burners`` busy loops."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "runs.jsonl"
        command = [python, "-m", "kernelindex_sdk", "bench", "jsd", "-o", str(out), "--no-progress"]
        load_before = os.getloadavg()[0]
        started, wall = _now(), time.perf_counter()
        with _burners(burners):
            done = subprocess.run(  # noqa: S603 - the package's own command
                [*command, *bench_args], capture_output=True, text=True, check=False
            )
        wall = time.perf_counter() - wall
        text = out.read_bytes() if out.exists() else b""
    info = {
        "burners": burners,
        "started": started,
        "ended": _now(),
        "wall_s": round(wall, 1),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "records": text.count(b"\n"),
        "exit_status": done.returncode,
        "stderr_tail": done.stderr[-2000:],
    }
    return text, info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder for rerun-NN.jsonl.gz and manifest.json")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--first", type=int, default=1, help="number of the first rerun")
    parser.add_argument(
        "--load", default="0", help="busy loops beside each rerun, in turn (e.g. 1,1,2)"
    )
    parser.add_argument("--budget-s", type=float, default=None)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--note", default="", help="what the corpus is, for the manifest")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    bench_args = argv[cut + 1 :]
    loads = [int(x) for x in args.load.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest: dict[str, Any] = (
        json.loads(manifest_path.read_text()) if manifest_path.exists() else {"reruns": []}
    )
    # The first call describes the corpus; each call (a corpus may be extended) is listed.
    manifest.setdefault("what", "kernelindex bench jsd rerun in fresh processes: same code")
    manifest.setdefault("note", args.note)
    manifest.setdefault("bench_args", bench_args)
    manifest.setdefault("load_pattern", loads)
    manifest.setdefault("calls", []).append(
        {
            "first": args.first,
            "repeats": args.repeats,
            "started": _now(),
            "note": args.note,
            "bench_args": bench_args,
            "load_pattern": loads,
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
            },
        }
    )
    started = time.perf_counter()
    longest = 0.0
    for number in range(args.first, args.first + args.repeats):
        if args.budget_s is not None and time.perf_counter() - started + longest > args.budget_s:
            print(f"budget reached: {number - args.first} rerun(s) made", file=sys.stderr)
            break
        burners = loads[(number - args.first) % len(loads)]
        text, info = _rerun(args.python, bench_args, burners)
        longest = max(longest, info["wall_s"])
        name = f"rerun-{number:02d}.jsonl.gz"
        _write_gzip(text, args.out / name)
        manifest["reruns"] = [r for r in manifest["reruns"] if r["file"] != name]
        manifest["reruns"].append({"file": name, **info})
        manifest["reruns"].sort(key=lambda r: r["file"])
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
        print(
            f"{name}: {info['records']} records, {info['wall_s']} s, {burners} busy loop(s),"
            f" exit {info['exit_status']}",
            file=sys.stderr,
        )
        if info["exit_status"] != 0:
            # A sweep that failed is no rerun of the same code: stop, keeping what was made.
            print(info["stderr_tail"], file=sys.stderr)
            return int(info["exit_status"])
    return 0


if __name__ == "__main__":
    sys.exit(main())

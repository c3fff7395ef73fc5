"""Instructions executed by the history of a 10,000-point series, stage by stage.

    python benchmarks/history_instructions.py [--src src] \
        [--out benchmarks/results/history_instructions.json]

On a shared machine a time moves with the neighbours' load (the same code measured 50 to
80 ms of CPU within an hour here); the count of instructions it executes does not.
Valgrind's callgrind counts them: each stage runs in a child process, once untimed and
then K = 4 times inside ``functools.reduce``, and callgrind collects only while that C
function runs (``--toggle-collect``), so a quarter of the count is one call's, without
the interpreter's start, the imports or the store's building. The child runs with
``PYTHONHASHSEED=0``, so the same code on the same records gives the same count.

The store is history_speed.py's (one series of 10,000 runs of the project's H200 bundle,
a 5% step at 5,000), built and read by the code under ``--src``: point it at a checkout
of an older version (its ``src``) to compare versions on the same records.

Stages: ``fetch`` (the query of ``Store.rows()`` alone, as its columns are in the
current layout; skipped for an older layout), ``rows`` (``Store.rows()``), ``history``
(``history()`` of those rows), ``json`` (``render_history(..., "json")``) and ``all``
(the three, as ``kernelindex history --format json`` runs them).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _results import machine_facts, write_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history_speed import _run, _template

ROOT = Path(__file__).resolve().parent.parent

_BUILD = """
import sys
from kernelindex_sdk.store import open_store
with open_store(sys.argv[1]) as store:
    assert store.ingest([sys.argv[2]]).ok
"""

_STAGE = """
import functools
import sys
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import history, render_history
db, stage, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open_store(db) as store:
    rows = store.rows()
    found = history(rows, spec=store.spec)
    render_history(found, "json")
    calls = {
        "fetch": lambda: store._backend.run_columns({}, None),
        "rows": store.rows,
        "history": lambda: history(rows, spec=store.spec),
        "json": lambda: render_history(found, "json"),
        "all": lambda: render_history(history(store.rows(), spec=store.spec), "json"),
    }
    call = calls[stage]
    call()
    # Counted: only what runs inside functools.reduce.
    functools.reduce(lambda _, __: call(), range(k), None)
"""

# Calls of each stage counted.
_CALLS = 4


def _instructions(src: Path, args: list[str]) -> int:
    # valgrind from PATH on our own interpreter and code: S603/S607 do not apply.
    done = subprocess.run(  # noqa: S603
        [  # noqa: S607
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=functools_reduce",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            _STAGE,
            *args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"},
        check=True,
    )
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    src = args.src.resolve()
    base = _template()
    rng = np.random.default_rng(1)
    stages = ("fetch", "rows", "history", "json", "all")
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "long.jsonl"
        lines = [
            _run(
                base,
                f"speed-{i:05d}",
                i,
                300_000 * (1.05 if i >= 5_000 else 1.0) * (1 + 0.01 * rng.standard_normal()),
                commit=f"{i:040x}",
                branch="main",
            )
            for i in range(10_000)
        ]
        records.write_text("\n".join(lines) + "\n", encoding="utf-8")
        db = str(Path(tmp) / "long.sqlite3")
        subprocess.run(  # noqa: S603 - our own interpreter on files just written
            [sys.executable, "-c", _BUILD, db, str(records)],
            env={**os.environ, "PYTHONPATH": str(src)},
            check=True,
        )
        counts = {}
        for stage in stages:
            try:
                counted = _instructions(src, [db, stage, str(_CALLS)])
            except subprocess.CalledProcessError:
                # An older layout has no run_texts: its fetch is not this query.
                counts[stage] = None
                continue
            counts[stage] = counted // _CALLS
    report = {
        "command": " ".join(["python benchmarks/history_instructions.py", *sys.argv[1:]]),
        "src": str(args.src),
        **machine_facts(),
        "points": 10_000,
        "instructions_per_call": counts,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What reading 10,000 runs from SQLite costs, query by query: where a history's time goes.

    python benchmarks/history_fetch_variants.py \
        [--out benchmarks/results/history_fetch_variants.json]

Counts the instructions (valgrind's callgrind, as history_instructions.py does: each read
runs in a child process, once untimed and then K = 2 times inside ``functools.reduce``,
the only function collected) of reading runs through Python's sqlite3 in several shapes,
on three stores of 10,000 runs built from the project's H200 bundle:

- ``constant``: one series, one set of versions (history_speed.py's store);
- ``versions``: one series whose labels (a package version) change every 1,000 runs;
- ``interleaved``: 1,000 series of 10 runs, ingested one run of each series at a time,
  as a sweep per commit writes them.

Reads (each builds nothing past the rows sqlite3 returns, but where said):

- ``now``: the query of ``Store.rows()`` in layout 2 (14 columns per run; layout 3 reads
  ``own_and_int``'s shape, 7 own columns and ``runs.group_id``);
- ``own``: a run's own 7 columns (name, observedAt, commit, commit time, median, p20, p80);
- ``own_and_int``: those 7 and one integer per run: what a read costs when each run names
  its shared columns (status, digests, branch, labels) by a number, as a store layout
  with such a column would let it;
- ``reference``: the 7 and the seq of a reference run (the query's first run where the
  run shares all its shared columns with it, else its own seq), then the shared columns
  of those runs by seq: the read tried for issue 22 and reverted;
- ``json_aggregate``: SQLite's ``json_group_array(json_array(...))`` of the 14 columns
  and one ``json.loads`` (SQLite only: PostgreSQL spells it ``json_agg``);
- ``now_apsw``: ``now``'s query through APSW (another SQLite binding, not a dependency of
  the package), when ``--apsw DIR`` names where it is installed
  (``pip install --target DIR apsw``); it releases the GIL per row, not per value.

``mutex_and_gil_share`` is the part of ``now``'s instructions spent in pthread mutexes
and the GIL's handoff: Python 3.11's sqlite3 releases the GIL around each column of each
row, and SQLite locks its connection's mutex in each ``sqlite3_column_*`` call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _results import write_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history_speed import _run, _template, _with_tokens

ROOT = Path(__file__).resolve().parent.parent

_BUILD = """
import sys
from kernelindex_sdk.store import open_store
with open_store(sys.argv[1]) as store:
    assert store.ingest([sys.argv[2]]).ok
"""

_OWN = "r.name, r.observed_at, r.commit_id, r.commit_time, r.median_ns, r.p20_ns, r.p80_ns"
_SHARED = (
    "r.status, r.workload_digest, r.implementation_digest, r.protocol_digest,"
    " r.environment_digest, r.branch, r.labels"
)
_SAME = (
    "r.status = ref.status AND r.workload_digest = ref.workload_digest"
    " AND r.implementation_digest = ref.implementation_digest"
    " AND r.protocol_digest = ref.protocol_digest"
    " AND r.environment_digest = ref.environment_digest"
    " AND (r.branch = ref.branch OR (r.branch IS NULL AND ref.branch IS NULL))"
    " AND r.labels = ref.labels"
)
# The queries are constant text (S608 does not apply).
_QUERIES = {
    "now": (
        "SELECT r.name, r.status, r.observed_at, r.workload_digest, r.implementation_digest,"
        " r.protocol_digest, r.environment_digest, r.commit_id, r.branch, r.commit_time,"
        " r.median_ns, r.p20_ns, r.p80_ns, r.labels FROM runs r"
    ),
    "own": f"SELECT {_OWN} FROM runs r",  # noqa: S608
    "own_and_int": f"SELECT {_OWN}, r.seq FROM runs r",  # noqa: S608
    "reference": (
        f"SELECT {_OWN}, CASE WHEN {_SAME} THEN ref.seq ELSE r.seq END FROM runs r,"  # noqa: S608
        f" (SELECT r.seq, {_SHARED} FROM runs r LIMIT 1) AS ref"
    ),
    "json_aggregate": (
        "SELECT json_group_array(json_array(r.name, r.status, r.observed_at,"
        " r.workload_digest, r.implementation_digest, r.protocol_digest,"
        " r.environment_digest, r.commit_id, r.branch, r.commit_time, r.median_ns,"
        " r.p20_ns, r.p80_ns, r.labels)) FROM runs r"
    ),
}

_READ = """
import functools, gc, json, sqlite3, sys
name, query = sys.argv[2], sys.argv[3]
if name == "now_apsw":
    sys.path.insert(0, sys.argv[4])
    import apsw
    db = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
else:
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
gc.disable()

def read():
    rows = db.execute(query).fetchall()
    if name == "reference":
        seqs = list(dict.fromkeys(row[-1] for row in rows))
        shared = {}
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in db.execute(
                "SELECT seq, status, workload_digest, implementation_digest, protocol_digest,"
                f" environment_digest, branch, labels FROM runs WHERE seq IN ({marks})",
                chunk,
            ):
                shared[row[0]] = row[1:]
    elif name == "json_aggregate":
        rows = json.loads(rows[0][0])
    return rows

read()
functools.reduce(lambda _, __: read(), range(2), None)
"""

# Calls of each read counted.
_CALLS = 2
# callgrind_annotate's functions that are the mutexes and the GIL's handoff.
_LOCKING = re.compile(r"pthread_mutex|pthread_cond_signal|take_gil|drop_gil|PyEval_(Save|Restore)")


def _callgrind(args: list[str], out: str = "/dev/null") -> str:
    # valgrind from PATH on our own interpreter: S603/S607 do not apply.
    done = subprocess.run(  # noqa: S603
        [  # noqa: S607
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=functools_reduce",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            _READ,
            *args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
    )
    return done.stderr


def _count(stderr: str) -> int:
    found = re.search(r"Collected\s*:\s*(\d+)", stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{stderr[-2000:]}")
    return int(found.group(1)) // _CALLS


def _locking_share(db: str, tmp: Path) -> float:
    out = str(tmp / "callgrind.out")
    _callgrind([db, "now", _QUERIES["now"]], out)
    # callgrind_annotate from PATH on the file just written.
    table = subprocess.run(  # noqa: S603
        ["callgrind_annotate", out],  # noqa: S607
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    total = locking = 0
    for line in table.splitlines():
        found = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*)", line)
        if found is None:
            continue
        count = int(found.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in found.group(2):
            total = count
        elif _LOCKING.search(found.group(2)):
            locking += count
    return round(locking / total, 3)


def _stores(tmp: Path) -> dict[str, list[str]]:
    base = _template()
    rng = np.random.default_rng(1)

    def noisy(level: float) -> float:
        return level * (1 + 0.01 * rng.standard_normal())

    constant = [
        _run(base, f"c-{i:05d}", i, noisy(300_000), commit=f"{i:040x}", branch="main")
        for i in range(10_000)
    ]
    versions = []
    for i in range(10_000):
        doc = json.loads(_run(base, f"v-{i:05d}", i, noisy(300_000), commit=f"{i:040x}"))
        doc["run"]["metadata"]["labels"] = {"liger_version": f"0.{i // 1_000}.0"}
        versions.append(json.dumps(doc, ensure_ascii=False))
    workloads = [_with_tokens(base, 1_000 + s) for s in range(1_000)]
    interleaved = [
        _run(workloads[s], f"i-{s:04d}-{p:02d}", p, noisy(300_000), commit=f"{p:040x}")
        for p in range(10)
        for s in range(1_000)
    ]
    return {"constant": constant, "versions": versions, "interleaved": interleaved}


def _apsw_version(where: Path | None) -> str | None:
    if where is None:
        return None
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import apsw;"
         " print(apsw.apsw_version())", str(where.resolve())],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--apsw", type=Path, help="a folder where apsw is installed")
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install valgrind)")
    counts: dict[str, dict[str, int]] = {}
    report: dict[str, Any] = {
        "command": " ".join(["python benchmarks/history_fetch_variants.py", *sys.argv[1:]]),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "runs_per_store": 10_000,
        "apsw": _apsw_version(args.apsw),
        "instructions_per_read": counts,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for store, lines in _stores(Path(tmp)).items():
            records = Path(tmp) / f"{store}.jsonl"
            records.write_text("\n".join(lines) + "\n", encoding="utf-8")
            db = str(Path(tmp) / f"{store}.sqlite3")
            subprocess.run(  # noqa: S603 - our own interpreter on files just written
                [sys.executable, "-c", _BUILD, db, str(records)],
                env={**os.environ, "PYTHONPATH": str(args.src.resolve())},
                check=True,
            )
            counts[store] = {
                name: _count(_callgrind([db, name, query])) for name, query in _QUERIES.items()
            }
            if args.apsw is not None:
                apsw = [db, "now_apsw", _QUERIES["now"], str(args.apsw.resolve())]
                counts[store]["now_apsw"] = _count(_callgrind(apsw))
            if store == "constant":
                report["mutex_and_gil_share_of_now"] = _locking_share(db, Path(tmp))
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory of ``kernelindex export``, by two versions of the code side by side.

    python benchmarks/store_export_memory.py --before MAIN/src [--records 27000] \
        [--out benchmarks/results/store_export_memory.json]

Each version (``--before``'s ``src`` folder, then this checkout's, or ``--after``'s)
ingests the same file of harness bundles (store_ingest.py's, 3.5 KB a record: 27,000 of
them are about 94 MB) into a fresh SQLite store of its own, in a child process; then a
fresh child exports the whole store to a file and reports its peak resident memory
(``ru_maxrss``), beside what the same child holds after importing the package, before
exporting (its baseline). Export streamed from the store holds a few hundred records at
a time, so its peak stays near the baseline whatever the store's size; one that gathers
every line first grows with the store.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from store_ingest import make_file

ROOT = Path(__file__).resolve().parent.parent

_INGEST = """
import sys
from kernelindex_sdk.store import open_store
with open_store(sys.argv[2]) as store:
    assert store.ingest([sys.argv[1]]).ok
"""

_EXPORT = """
import resource, sys
from kernelindex_sdk.store import open_store
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open_store(sys.argv[1], create=False) as store:
    baseline = peak()
    count = store.export(sys.argv[2])
print(repr((count, baseline, peak())))
"""


def _child(src: Path, script: str, *args: str) -> str:
    # Our own interpreter and code: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        check=True,
    )
    return done.stdout


def _measure(src: Path, records: Path, folder: Path) -> dict[str, Any]:
    store = folder / "store.sqlite3"
    _child(src, _INGEST, str(records), str(store))
    found: tuple[int, int, int] = ast.literal_eval(
        _child(src, _EXPORT, str(store), str(folder / "out.jsonl")).strip().splitlines()[-1]
    )
    count, baseline, peak = found
    exported = (folder / "out.jsonl").stat().st_size
    return {
        "records_exported": count,
        "bytes_exported": exported,
        "baseline_rss_mib": round(baseline / 1024, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "peak_above_baseline_mib": round((peak - baseline) / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the src folder before")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="the src folder after")
    parser.add_argument("--records", type=int, default=27_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    versions = {"before": args.before.resolve(), "after": args.after.resolve()}
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        records = make_file("harness", args.records, Path(tmp))
        size = records.stat().st_size
        for name, src in versions.items():
            folder = Path(tmp) / name
            folder.mkdir()
            found[name] = _measure(src, records, folder)
            print(name, found[name], flush=True)
            # A store of this size is about 200 MB: gone before the next version's.
            for path in folder.iterdir():
                path.unlink()
    report = {
        "command": " ".join(["python benchmarks/store_export_memory.py", *sys.argv[1:]]),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "records": args.records,
        "records_file_mib": round(size / 2**20, 1),
        "export_of_the_whole_store_into_a_file": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

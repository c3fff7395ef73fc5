"""What holding parsed records costs their reading: validation with each value dropped at
once, beside the same with the last ``--held`` values kept, as ingest's batches kept them.

    PYTHONPATH=src taskset -c 1 python benchmarks/validation_held.py \
        [--out benchmarks/results/validation_held.json]

The same file of 20,000 records per kind (store_ingest.py's) is read and validated as
ingest reads it (``check_documents``), the collector off; the results are
either dropped one by one or kept in a list of ``--held`` that is emptied when full. The
instructions are the same; the difference is the memory the held values take (a harness
bundle's value is about 11 KB, by tracemalloc below), written, and later freed, beyond
what the caches keep. Each way ``--repeat`` times, the two taking turns; CPU
microseconds per record, best of them.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from store_ingest import make_file

from kernelindex_sdk.documents import check_documents


def _read(path: Path, held: int) -> float:
    """CPU seconds to read and validate ``path``, keeping the last ``held`` results."""
    batch: list[Any] = []
    start = time.process_time()
    for result in check_documents([path]):
        batch.append(result)
        if len(batch) >= held:
            batch = []
    batch = []
    return time.process_time() - start


def _bytes_per_record(path: Path, count: int) -> int:
    """Memory one validated record holds (tracemalloc), the file's first one apart."""
    results = check_documents([path])
    next(results)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [result for _, result in zip(range(count), results, strict=False)]
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return round(held / len(kept))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="liger,harness,example")
    parser.add_argument("--held", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = make_file(kind, 20_000, Path(tmp))
            gc.disable()
            try:
                runs: dict[int, list[float]] = {1: [], args.held: []}
                for _ in range(args.repeat):
                    for held, measured in runs.items():
                        measured.append(_read(path, held))
                size = _bytes_per_record(path, args.held)
            finally:
                gc.enable()
            found[kind] = {
                "text_bytes_per_record": round(path.stat().st_size / 20_000),
                "value_bytes_per_record_held": size,
                "cpu_us_each_dropped": round(min(runs[1]) / 20_000 * 1e6, 1),
                f"cpu_us_last_{args.held}_held": round(min(runs[args.held]) / 20_000 * 1e6, 1),
            }
            print(kind, found[kind], flush=True)
    report = {
        "command": (
            "PYTHONPATH=src taskset -c 1 python benchmarks/validation_held.py"
            + "".join(f" {a}" for a in sys.argv[1:])
        ),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
        "records": 20_000,
        "per_record_best_of_repeats": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

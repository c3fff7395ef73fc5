"""Instructions per record of reading and validating, counted by valgrind: a figure the
shared machine's load does not move (its wall and CPU clocks vary by half from run to run).

For each kind of record (as benchmarks/store_ingest.py and benchmarks/compare_throughput.py
make them), the difference between a run over 1,500 and one over 500 records, divided by
1,000, of:

- ``check_documents()``: what ``kernelindex ingest`` and ``validate`` read with;
- the same with ``KERNELINDEX_STRICT_READ=1``: its plain path alone (before issue 35,
  ``check_documents(quick=True)`` and ``check_documents()``);
- ``kernelindex compare BASE NEW`` (per record of both files).

Start-up and one-time costs cancel out in the difference. ``--src`` points at another
checkout's ``src`` to count the same for it (say, main's), side by side:

    python benchmarks/read_instructions.py [--src OTHER/src ...]
        [--out benchmarks/results/read_instructions.json]

Needs valgrind (Debian's package); about a minute per row.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _results import head_lines, machine_facts, write_results
from _results import instructions as valgrind_instructions

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import compare_throughput  # noqa: E402
import store_ingest  # noqa: E402

SMALL, LARGE = 500, 1500
_CHECK = """
import sys
from kernelindex_sdk.documents import check_documents
results = list(check_documents([sys.argv[1]]))
assert all(r.valid for r in results), "every record is valid"
"""
_COMPARE = """
import io, sys
from kernelindex_sdk._cli import main
main(["compare", sys.argv[1], sys.argv[2]], stdout=io.StringIO())
"""


def instructions(src: Path, code: str, *args: str) -> int:
    """Instructions (valgrind's I refs) of one Python process running ``code``."""
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("KERNELINDEX_STRICT_READ", None)
    if args[-1:] == ("full",):
        env["KERNELINDEX_STRICT_READ"] = "1"
    return valgrind_instructions(["-c", code, *args], env)


def per_record(src: Path, files: dict[int, tuple[Path, ...]], code: str, *extra: str) -> int:
    counts = {n: instructions(src, code, *map(str, paths), *extra) for n, paths in files.items()}
    records = (LARGE - SMALL) * len(files[SMALL])
    return round((counts[LARGE] - counts[SMALL]) / records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sources = [ROOT / "src", *args.src]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for kind in ("liger", "harness", "example"):
            whole = store_ingest.make_file(kind, LARGE, work)
            files = {n: (head_lines(whole, n, work / f"{kind}-{n}.jsonl"),) for n in (SMALL, LARGE)}
            for mode, what in (
                ("quick", "check_documents()"),
                ("full", "check_documents(), KERNELINDEX_STRICT_READ=1"),
            ):
                for src in sources:
                    rows.append(
                        {
                            "records": f"{kind} (store_ingest.py)",
                            "what": what,
                            "src": str(src),
                            "instructions_per_record": per_record(src, files, _CHECK, mode),
                        }
                    )
                    print(json.dumps(rows[-1]), file=sys.stderr)
        for kind in ("harness", "liger"):
            base, new = compare_throughput.make_files(work, kind, LARGE)
            files = {
                n: tuple(
                    head_lines(p, n, work / f"cmp-{kind}-{p.stem}-{n}.jsonl") for p in (base, new)
                )
                for n in (SMALL, LARGE)
            }
            for src in sources:
                rows.append(
                    {
                        "records": f"{kind} (compare_throughput.py)",
                        "what": "kernelindex compare BASE NEW",
                        "src": str(src),
                        "instructions_per_record": per_record(src, files, _COMPARE),
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr)
    report = {
        **machine_facts(),
        "tool": "valgrind --tool=cachegrind --cache-sim=no (I refs)",
        "records": [SMALL, LARGE],
        "rows": rows,
    }
    write_results(report, args.out)


if __name__ == "__main__":
    main()

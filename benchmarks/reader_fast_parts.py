"""What each part of the reader's fast path buys: its cost per record, each part off.

    python benchmarks/reader_fast_parts.py [--out benchmarks/results/reader_fast_parts.json]

For Liger bundles and harness bundles as the harness writes them now (the GPU's state and
provenance), what ``documents.check_documents`` costs per record with the whole fast
path, with each of its parts turned off alone, and with all of it off
(``KERNELINDEX_STRICT_READ=1``), in two measures:

- instructions (valgrind's I refs, which the machine's load does not move): the
  difference between a file of ``--large`` and one of ``--small`` records, divided by
  the difference;
- CPU time: the best of three reads of ``--timed`` records in a child process pinned to
  ``--cpu``, the parts taken in turns for ``--rounds`` rounds, best of all.

A part is worth keeping where turning it off costs about 5% or more (STYLE.md, "Speed
and the reader"). Needs valgrind (Debian's package); about half a minute per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import head_lines, write_results
from _results import instructions as valgrind_instructions
from reader_turns import _harness_now
from store_ingest import make_file

ROOT = Path(__file__).resolve().parent.parent
# Each part turned off, as a few lines run before the file is read.
PARTS = {
    "the whole fast path": "",
    "orjson's reading of the run (the strict parser instead)": """
from kernelindex_sdk._json.text import parse_document
from kernelindex_sdk.validation._fast import bundles, text
def strict(data, max_brackets=None):
    parsed = parse_document(data)
    if parsed.problems or parsed.scan.integral_float:
        return text.UNPROVEN
    return parsed.value
bundles.quick_value = strict
""",
    "jsonschema-rs's patterns without the lookahead": """
from kernelindex_sdk.validation import _registry
made = _registry._fast_validator
_registry._fast_validator = lambda kind, for_speed: made(kind, False)
""",
    "the semantic checks in one walk (the table instead)": """
from kernelindex_sdk.validation import _semantic
from kernelindex_sdk.validation._fast import bundles
def table(run, protocol):
    view = _semantic.RecordView(run=run, protocol=protocol)
    return not any(True for check in _semantic.CHECKS for _ in check(view))
bundles.passes = table
""",
    "known bundles admitted in a few lookups": """
from kernelindex_sdk.validation._fast import admission
admission.known_bundle = lambda *args: False
""",
    "the schema's nesting bound (the run's brackets counted instead)": """
from kernelindex_sdk.validation._fast import bundles
init = bundles.BundleReader.__init__
def counting(self):
    init(self)
    self._run_brackets = 127
bundles.BundleReader.__init__ = counting
""",
    "rare byte pairs sought after their rarer byte (memchr)": """
from kernelindex_sdk.validation._fast import text
text._BACKSLASH = text._PLUS = ord('"')
""",
    "none of it (KERNELINDEX_STRICT_READ=1)": "STRICT",
}
_READ = """
import sys
from kernelindex_sdk.documents import check_documents
assert all(r.valid for r in check_documents([sys.argv[1]]))
"""
_TIMED = """
import sys, time
from kernelindex_sdk.documents import check_documents
found = []
for _ in range(4):
    a = time.process_time()
    count = sum(r.valid for r in check_documents([sys.argv[1]]))
    found.append(time.process_time() - a)
print(min(found[1:]) / count)
"""


def _env(setup: str) -> tuple[dict[str, str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("KERNELINDEX_STRICT_READ", None)
    if setup == "STRICT":
        env["KERNELINDEX_STRICT_READ"] = "1"
        setup = ""
    return env, setup


def cpu_seconds(setup: str, path: Path, cpu: str) -> float:
    """CPU seconds per record of reading ``path`` (the best of three reads)."""
    env, setup = _env(setup)
    # Our own interpreter on files we wrote: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        ["taskset", "-c", cpu, sys.executable, "-c", setup + _TIMED, str(path)],  # noqa: S607
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def instructions(setup: str, path: Path) -> int:
    """Instructions (valgrind's I refs) of one process reading ``path``."""
    env, setup = _env(setup)
    return valgrind_instructions(["-c", setup + _READ, str(path)], env)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=600)
    parser.add_argument("--timed", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", default="1", help="the CPU the timed children run on")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = {
            "liger": make_file("liger", args.timed, work),
            "harness-now": _harness_now(work, args.timed),
        }
        for kind, timed in files.items():
            whole = head_lines(timed, args.large, work / f"{kind}-large.jsonl")
            small = head_lines(timed, args.small, work / f"{kind}-small.jsonl")
            counts: dict[str, int] = {}
            for part, setup in PARTS.items():
                diff = instructions(setup, whole) - instructions(setup, small)
                counts[part] = round(diff / (args.large - args.small))
                print(kind, part, counts[part], flush=True)
            times = dict.fromkeys(PARTS, float("inf"))
            for _ in range(args.rounds):
                for part, setup in PARTS.items():
                    times[part] = min(times[part], cpu_seconds(setup, timed, args.cpu))
            base_count, base_time = counts["the whole fast path"], times["the whole fast path"]
            found[kind] = {
                part: {
                    "instructions_per_record": counts[part],
                    "instructions_off_costs": f"{100 * (counts[part] / base_count - 1):+.1f}%",
                    "cpu_us_per_record": round(times[part] * 1e6, 2),
                    "cpu_off_costs": f"{100 * (times[part] / base_time - 1):+.1f}%",
                }
                for part in PARTS
            }
            print(kind, json.dumps(found[kind]), flush=True)
    report = {
        "command": " ".join(["python benchmarks/reader_fast_parts.py", *sys.argv[1:]]),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "tool": "valgrind --tool=cachegrind --cache-sim=no (I refs)",
        "records": [args.small, args.large],
        "timed_records": args.timed,
        "cpu": args.cpu,
        "per_record": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What each part of the reader's fast path buys: instructions per record, each part off.

    python benchmarks/reader_fast_parts.py [--out benchmarks/results/reader_fast_parts.json]

For Liger bundles and harness bundles as the harness writes them now (the GPU's state and
provenance), the instructions (valgrind's I refs, which the machine's load does not move)
that ``documents.check_documents`` costs per record, as the difference between a file of
``--large`` and one of ``--small`` records divided by the difference: with the whole fast
path, with each of its parts turned off alone, and with all of it off
(``KERNELINDEX_STRICT_READ=1``). A part is worth keeping where turning it off costs about
5% or more (STYLE.md, "Speed and the reader").

Needs valgrind (Debian's package); about half a minute per figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results
from reader_turns import _harness_now
from store_ingest import make_file

ROOT = Path(__file__).resolve().parent.parent
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
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
    "e-6 numbers spelled as published (the colons counted instead)": """
from kernelindex_sdk.validation._fast import text
text._published_sixes = lambda written: None
""",
    "none of it (KERNELINDEX_STRICT_READ=1)": "STRICT",
}
_READ = """
import sys
from kernelindex_sdk.documents import check_documents
assert all(r.valid for r in check_documents([sys.argv[1]]))
"""


def instructions(setup: str, path: Path) -> int:
    """Instructions (valgrind's I refs) of one process reading ``path``."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("KERNELINDEX_STRICT_READ", None)
    if setup == "STRICT":
        env["KERNELINDEX_STRICT_READ"] = "1"
        setup = ""
    # Our own interpreter on files we wrote: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-c",
            setup + _READ,
            str(path),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind: {done.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def _head(path: Path, count: int, out: Path) -> Path:
    with path.open("rb") as lines, out.open("wb") as kept:
        for number, line in enumerate(lines):
            if number == count:
                break
            kept.write(line)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=600)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = {
            "liger": make_file("liger", args.large, work),
            "harness-now": _harness_now(work, args.large),
        }
        for kind, whole in files.items():
            small = _head(whole, args.small, work / f"{kind}-small.jsonl")
            rows: dict[str, Any] = {}
            for part, setup in PARTS.items():
                diff = instructions(setup, whole) - instructions(setup, small)
                rows[part] = round(diff / (args.large - args.small))
                print(kind, part, rows[part], flush=True)
            base = rows["the whole fast path"]
            found[kind] = {
                part: {"instructions_per_record": n, "off_costs": f"{100 * (n / base - 1):+.1f}%"}
                for part, n in rows.items()
            }
    report = {
        "command": " ".join(["python benchmarks/reader_fast_parts.py", *sys.argv[1:]]),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "tool": "valgrind --tool=cachegrind --cache-sim=no (I refs)",
        "records": [args.small, args.large],
        "per_record": found,
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

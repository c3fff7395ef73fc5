"""Instructions the store itself executes per ingested record, apart from reading it.

    python benchmarks/store_share_instructions.py [--src src] [--count 2000] \
        [--out benchmarks/results/store_share_instructions.json]

store_ingest.py times the store's share of ingest (records validated beforehand, handed
to one file's ingest: bookkeeping, columns, object comparisons, inserts, commit); on a
shared machine those times move with the neighbours' load. This counts the instructions
instead (valgrind's cachegrind, ``--cache-sim=no``): a child process validates the file
once, untimed, then ingests it into K fresh SQLite stores; the difference between K = 3
and K = 1, over two files' records, is one record's count. The system calls' own work
(the commit's writes and sync) is the kernel's and is not counted.

Beside it, the whole ingest's count the same way (``Store.ingest`` of the file into K
fresh stores: reading and validating included): what a record costs in instructions,
whatever the time it takes. Where the time moves and this count does not, the time went
to memory or the kernel, not to the instructions.

``--src`` runs another version's code on the same files (its ``src``), e.g. 0.4.0's;
given more than once, each version is counted on the same files, side by side:

    python benchmarks/store_share_instructions.py --src MAIN/src --src src \
        --out benchmarks/results/store_share_instructions_backends.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _results import instructions as valgrind_instructions
from _results import machine_facts, write_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_ingest import make_file

ROOT = Path(__file__).resolve().parent.parent

_SHARE = """
import gc, sys
from kernelindex_sdk.documents import check_documents
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store._ingest import _FileIngest
path, k, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
validated = list(check_documents([path]))
# No collection anywhere after the reading (ingest runs without one): a collection that
# fell in one of the two runs and not the other would count its walk of every record.
gc.collect()
gc.disable()
for i in range(k):
    with open_store(f"sqlite:///{folder}/s{i}.sqlite3") as store:
        backend = store._backend
        work = _FileIngest(backend, path)
        with backend.transaction():
            work.run(iter(validated), Provenance())
        assert work.added == len(validated), work.added
"""


_WHOLE = """
import sys
from kernelindex_sdk.store import open_store
path, k, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(k):
    with open_store(f"sqlite:///{folder}/s{i}.sqlite3") as store:
        assert store.ingest([path]).added > 0
"""


def _instructions(src: Path, path: Path, k: int, script: str = _SHARE) -> int:
    # The child's stores go in a folder removed after it (a harness store is ~17 MB).
    with tempfile.TemporaryDirectory(prefix="store-share-") as folder:
        return valgrind_instructions(
            ["-c", script, str(path), str(k), folder],
            # A fixed hash seed: the same dictionaries' layouts in both runs.
            {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"},
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", type=Path, action="append")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--kinds", default="liger,harness,example")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    sources = [path.resolve() for path in args.src or [ROOT / "src"]]
    counts: dict[str, dict[str, int]] = {str(src): {} for src in sources}
    whole: dict[str, dict[str, int]] = {str(src): {} for src in sources}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = make_file(kind, args.count, Path(tmp))
            for src in sources:
                one, three = _instructions(src, path, 1), _instructions(src, path, 3)
                counts[str(src)][kind] = (three - one) // (2 * args.count)
                one = _instructions(src, path, 1, _WHOLE)
                three = _instructions(src, path, 3, _WHOLE)
                whole[str(src)][kind] = (three - one) // (2 * args.count)
                print(src, kind, counts[str(src)][kind], whole[str(src)][kind], flush=True)

    def shown(src: str) -> str:
        return os.path.relpath(src, ROOT) if Path(src).is_relative_to(ROOT) else src

    report = {
        "command": " ".join(["python benchmarks/store_share_instructions.py", *sys.argv[1:]]),
        "src": [shown(str(src)) for src in sources],
        **machine_facts(),
        "records_per_file": args.count,
        "instructions_per_record_into_sqlite": {shown(k): v for k, v in counts.items()},
        "instructions_per_record_whole_ingest_into_sqlite": {shown(k): v for k, v in whole.items()},
    }
    write_results(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

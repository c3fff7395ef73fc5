"""Build the example history store: this repository's own H200 results at each commit that
changed them, and Liger-Kernel's kto_loss rows at four commits of its history.

    PYTHONPATH=src python benchmarks/own_history.py --db /tmp/history.sqlite3
    kernelindex history --db /tmp/history.sqlite3 --changed

- Own results: every version of ``benchmarks/results/jsd_forward_h200.jsonl`` in this
  repository's git history (``git log -- benchmarks/results/jsd_forward_h200.jsonl``),
  oldest first, each ingested with its commit, branch ``main`` and the commit's time. A
  record kept unchanged by a later version is the same measurement seen again: skipped.
- Liger: ``tests/fixtures/liger/history/DATE-COMMIT.csv`` imported with the commit in its
  name and its date as the commit time, oldest first (the two commits of 2025-02-28 are
  ordered by their rows' timestamps, which observedAt keeps). ``--no-liger`` leaves it out.

Prints one line per version ingested; stops with the problems when one is refused.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

# The H200 part is benchmarks/store_h200_history.py's (this folder is on sys.path when a
# script of it runs).
import store_h200_history

from kernelindex_sdk.importers import liger
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.store import Store, open_store

ROOT = Path(__file__).resolve().parent.parent
LIGER = ROOT / "tests" / "fixtures" / "liger" / "history"
# Oldest first; the two commits of 2025-02-28 in the order their rows were measured.
LIGER_ORDER = ("022a7947bf6b", "d63b888d68ff", "636813534168", "ee5aaf26b934")


def ingest_liger(store: Store, work: Path) -> list[str]:
    """Import and ingest the Liger history, oldest first; return one line per commit."""
    done = []
    for commit in LIGER_ORDER:
        [csv] = LIGER.glob(f"*-{commit}.csv")
        out = work / f"liger-{commit}.jsonl"
        given = Provenance(commit=commit, branch="main", commit_time=f"{csv.name[:10]}T00:00:00Z")
        liger.import_files([csv], out, provenance=given)
        report = store.ingest([out])
        report.check()
        done.append(f"liger {commit}: {report.added} added, {report.identical} identical")
    return done


def build(db: str, *, with_liger: bool = True) -> list[str]:
    """Build the store ``db``; return one line per version ingested.

    Raises:
        StoreClashError, SystemExit: when a version is refused.
    """
    with tempfile.TemporaryDirectory() as tmp, open_store(db) as store:
        lines = [
            f"own {version['commit'][:12]} {version['commit_time']}:"
            f" {version['added']} added, {version['skipped']} skipped"
            for version in store_h200_history.ingest_history(store, Path(tmp))
        ]
        if with_liger:
            lines += ingest_liger(store, Path(tmp))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="the store to build (SQLite path or URL)")
    parser.add_argument("--no-liger", action="store_true", help="only this repository's results")
    args = parser.parse_args()
    for line in build(args.db, with_liger=not args.no_liger):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

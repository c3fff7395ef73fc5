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

Prints one line per version ingested; exits 1 when a version was refused.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from kernelindex_sdk.importers import liger
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.store import open_store

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "benchmarks/results/jsd_forward_h200.jsonl"
LIGER = ROOT / "tests" / "fixtures" / "liger" / "history"
LIGER_ORDER = ("022a7947bf6b", "d63b888d68ff", "636813534168", "ee5aaf26b934")


def _git(*args: str) -> str:
    done = subprocess.run(  # noqa: S603 - git, with arguments of ours
        ["git", "-C", str(ROOT), *args],  # noqa: S607 - git from PATH, as a developer runs it
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def own_versions() -> list[tuple[str, str]]:
    """(commit, committer time) of each commit that changed the results, oldest first."""
    lines = _git("log", "--reverse", "--format=%H %cI", "--", RESULTS).splitlines()
    return [(line.split()[0], line.split()[1]) for line in lines if line.strip()]


def build(db: str, *, with_liger: bool = True) -> int:
    """Ingest every version into the store ``db``; return how many versions were refused."""
    refused = 0
    with tempfile.TemporaryDirectory() as tmp, open_store(db) as store:
        for commit, when in own_versions():
            path = Path(tmp) / f"own-{commit[:12]}.jsonl"
            path.write_text(_git("show", f"{commit}:{RESULTS}"), encoding="utf-8")
            report = store.ingest([path], commit=commit, branch="main", commit_time=when)
            refused += not report.ok
            print(f"own {commit[:12]} {when}: {report}")
        if with_liger:
            for commit in LIGER_ORDER:
                [csv] = LIGER.glob(f"*-{commit}.csv")
                out = Path(tmp) / f"liger-{commit}.jsonl"
                given = Provenance(
                    commit=commit, branch="main", commit_time=f"{csv.name[:10]}T00:00:00Z"
                )
                liger.import_files([csv], out, provenance=given)
                report = store.ingest([out])
                refused += not report.ok
                print(f"liger {commit}: {report}")
    return refused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="the store to build (SQLite path or URL)")
    parser.add_argument("--no-liger", action="store_true", help="only this repository's results")
    args = parser.parse_args()
    return 1 if build(args.db, with_liger=not args.no_liger) else 0


if __name__ == "__main__":
    sys.exit(main())

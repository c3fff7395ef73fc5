"""Ingest this repository's own H200 results from its git history, oldest version first.

Every commit that changed benchmarks/results/jsd_forward_h200.jsonl is one version: its
records are ingested with that commit, its commit time and branch ``main`` as provenance
(the commit that brought the results in; the code measured is that commit's tree or its
parent's). Writes what each version added and skipped, and the runs per provider of the
store that results.

    python benchmarks/store_h200_history.py [--db URL] \
        [--out benchmarks/results/store_h200_history.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from kernelindex_sdk.store import Store, open_store

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "benchmarks/results/jsd_forward_h200.jsonl"


def _git(*args: str) -> str:
    # git from PATH with fixed arguments: the history of this repository.
    return subprocess.run(  # noqa: S603
        ["git", *args],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def versions() -> list[tuple[str, str]]:
    """(commit, commit time) of each version of the results file, oldest first."""
    lines = _git("log", "--reverse", "--format=%H %cI", "--", RESULTS).splitlines()
    return [tuple(line.split(" ", 1)) for line in lines]  # type: ignore[misc]


def ingest_history(store: Store, work: Path) -> list[dict[str, Any]]:
    """Ingest every version into ``store``; return what each one did."""
    done = []
    for commit, when in versions():
        path = work / f"jsd_forward_h200-{commit[:12]}.jsonl"
        path.write_text(_git("show", f"{commit}:{RESULTS}"), encoding="utf-8")
        report = store.ingest([path], commit=commit, branch="main", commit_time=when)
        if not report.ok:
            raise SystemExit("\n".join(map(str, report.problems)))
        done.append(
            {
                "commit": commit,
                "commit_time": when,
                "added": report.added,
                "skipped": report.identical + report.provenance_only,
            }
        )
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite:///:memory:")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work, open_store(args.db) as store:
        done = ingest_history(store, Path(work))
        providers: dict[str, int] = {}
        for row in store.rows():
            providers[row.provider or "?"] = providers.get(row.provider or "?", 0) + 1
    text = json.dumps({"versions": done, "runs_per_provider": providers}, indent=2) + "\n"
    if args.out is None:
        print(text, end="")
    else:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

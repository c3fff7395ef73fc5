"""Records for the layout-3 red-team tests, and the layout-2 code that wrote stores before.

The corpus is made from the H200 sweep's runs: each of a few of them measured again at
many commits, the copies differing in exactly the columns layout 3 groups (status,
branch, labels and their key order, each of the four digests), with unicode and very
long label values, and with a step in their timings so that histories have changes.

:func:`old_code` unpacks ``src/`` of the last layout-2 commit (``OLD_COMMIT``) from the
repository's history, so that the tests build their layout-2 stores with the code that
wrote them, not with a copy of its SQL.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

from kernelindex_sdk.digest import (
    environment_digest,
    implementation_digest,
    protocol_digest,
)

ROOT = Path(__file__).resolve().parent.parent.parent
SWEEP = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
EXAMPLE = ROOT / "tests" / "fixtures" / "liger-jsd-forward-torch-b200.json"
#: The last commit of layout 2 (main's head when layout 3 branched from it).
OLD_COMMIT = "38ee4e3437cbf14fdb8ec13fc329550b145e05f5"
#: The last commit of layout 1 (the parent of 3c225f5, which made layout 2).
V1_COMMIT = "89189a295f652f49464986f71a68d94914645df4"

COMMIT = "kernelindex.dev/commit"
BRANCH = "kernelindex.dev/branch"
COMMIT_TIME = "kernelindex.dev/commit-time"

LONG = "λ" * 3000 + "-end"


def old_code(commit: str, into: Path) -> Path:
    """``src/`` of ``commit`` unpacked under ``into``; returns the folder to put on PYTHONPATH.

    Raises:
        RuntimeError: when the repository's history lacks the commit (a shallow clone):
            its message says that the full history is needed.
    """
    done = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "src", "schemas"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"these tests need the repository's full git history (commit {commit[:7]} builds"
            " the old stores): run them in a full clone, not a shallow one"
            f" (git fetch --unshallow); git archive said: {done.stderr.decode()[:300]}"
        )
    with tarfile.open(fileobj=BytesIO(done.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


# Runs a list of kernelindex command lines in one process of the code on PYTHONPATH,
# printing a JSON list of [status, stdout, stderr] (one process: quicker than one each).
_RUNNER = """
import io, json, sys
from kernelindex_sdk._cli import main
results = []
for argv in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    results.append([status, out.getvalue(), err.getvalue()])
sys.stdout.write(json.dumps(results))
"""


def run_cli(src: Path | None, commands: Sequence[Sequence[str]]) -> list[tuple[int, str, str]]:
    """Run ``kernelindex`` command lines with the package at ``src`` (None: this one).

    Returns:
        ``(status, stdout, stderr)`` of each, in order.
    """
    if src is None:
        import io

        from kernelindex_sdk._cli import main

        results = []
        for argv in commands:
            out, err = io.StringIO(), io.StringIO()
            status = main(list(argv), stdout=out, stderr=err)
            results.append((status, out.getvalue(), err.getvalue()))
        return results
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps([list(c) for c in commands]),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"old code failed: {done.stderr[-2000:]}")
    return [tuple(r) for r in json.loads(done.stdout)]  # type: ignore[misc]


def sweep_bundles() -> list[dict[str, Any]]:
    """The sweep's bundles, parsed."""
    return [json.loads(line) for line in SWEEP.read_text(encoding="utf-8").splitlines()]


def _set_latency(run: dict[str, Any], median: int) -> None:
    spec = run["spec"]
    spec["timing"]["latencyNs"]["median"] = median
    for m in spec["measurements"]:
        if m["statistic"] == "p20" and m["unit"] == "ns":
            m["value"] = median - 2000
        if m["statistic"] == "p80" and m["unit"] == "ns":
            m["value"] = median + 2000


def variant(
    base: dict[str, Any],
    name: str,
    *,
    median: int | None = None,
    status: str | None = None,
    branch: str | None = None,
    commit: str | None = None,
    commit_time: str | None = None,
    labels: dict[str, str] | bool | None = True,
    torch: str | None = None,
    driver: str | None = None,
    warmup: int | None = None,
) -> dict[str, Any]:
    """A copy of bundle ``base`` named ``name``, changed as told (digests made again).

    ``labels``: True keeps the base's, None or ``{}`` drops them, a mapping replaces them
    (in its own key order).
    """
    bundle = copy.deepcopy(base)
    run = bundle["run"]
    run["metadata"]["name"] = name
    spec = run["spec"]
    if median is not None:
        _set_latency(run, median)
    if status is not None:
        spec["status"] = status
    notes = run["metadata"].setdefault("annotations", {})
    for key, value in ((COMMIT, commit), (BRANCH, branch), (COMMIT_TIME, commit_time)):
        if value is not None:
            notes[key] = value
    if labels is not True:
        if labels:
            run["metadata"]["labels"] = dict(labels)  # type: ignore[arg-type]
        else:
            run["metadata"].pop("labels", None)
    if torch is not None:
        spec["implementation"]["packages"]["torch"] = torch
        spec["implementationDigest"] = implementation_digest(spec["implementation"])
    if driver is not None:
        bundle["environment"]["spec"]["software"]["driver"] = driver
        spec["environmentDigest"] = environment_digest(bundle["environment"]["spec"])
        bundle["environment"]["metadata"]["name"] = f"env-{spec['environmentDigest'][7:19]}"
    if warmup is not None:
        bundle["protocol"]["spec"]["measurement"]["warmupMs"] = warmup
        spec["protocolDigest"] = protocol_digest(bundle["protocol"]["spec"])
        bundle["protocol"]["metadata"]["name"] = f"protocol-{spec['protocolDigest'][7:19]}"
    return bundle


_LABELS: list[dict[str, str] | bool | None] = [
    {"kernelindex.dev/sweep": "jsd-forward", "liger_version": "0.5.3"},
    # The same pairs in the other order: one value, one group.
    {"liger_version": "0.5.3", "kernelindex.dev/sweep": "jsd-forward"},
    None,
    {"note": "日本語 ✓ ü", "long": LONG},
    {"kernelindex.dev/sweep": "jsd-forward", "liger_version": "0.5.4"},
    True,
]
_BRANCHES = [None, "main", "dev", "main", "feature/ü", "main"]


def series_bundles(
    bases: Sequence[dict[str, Any]], points: int, *, tag: str = "c", first: int = 0
) -> list[dict[str, Any]]:
    """Each base measured at ``points`` commits: a 30% step half-way, the copies varying in
    status, branch, labels (their order too), and the implementation, environment and
    protocol digests late in the series."""
    out = []
    for b, base in enumerate(bases):
        start = base["run"]["spec"]["timing"]["latencyNs"]["median"]
        for i in range(first, first + points):
            day, hour = divmod(i, 24)
            out.append(
                variant(
                    base,
                    f"{base['run']['metadata']['name'][:60]}-{tag}{i:03d}",
                    median=int(start * (1.3 if i >= points // 2 else 1.0)) + 997 * (i % 3),
                    status="unverified" if i % 7 == 5 else None,
                    branch=_BRANCHES[i % len(_BRANCHES)],
                    commit=f"{b:x}{i:07x}",
                    commit_time=f"2026-10-{1 + day:02d}T{hour:02d}:00:00.000Z",
                    labels=_LABELS[i % len(_LABELS)],
                    torch="2.12.0" if i % 11 == 9 else None,
                    driver="999.1" if i % 13 == 10 else None,
                    warmup=30 if i % 17 == 16 else None,
                )
            )
    return out


def write_jsonl(path: Path, bundles: Sequence[dict[str, Any]]) -> Path:
    """The bundles as JSON Lines (compact, key order kept)."""
    path.write_text(
        "".join(json.dumps(b, ensure_ascii=False, separators=(",", ":")) + "\n" for b in bundles),
        encoding="utf-8",
    )
    return path


def write_document(path: Path, bundle: dict[str, Any]) -> Path:
    """One bundle as an indented ``.json`` document."""
    path.write_text(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path

"""This repository's own H200 results, every committed version, ingested oldest first."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelindex_sdk.store import Store

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "store_h200_history.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("store_h200_history", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_version_of_the_h200_results_goes_in(store: Store, tmp_path: Path) -> None:
    script = _script()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        versions = script.versions()
    except subprocess.CalledProcessError:
        pytest.skip("not a git checkout")
    if not versions:
        pytest.skip("the checkout has no history of the results file (a shallow clone)")
    done = script.ingest_history(store, tmp_path)
    assert [v["commit"] for v in done] == [commit for commit, _ in versions]
    rows = store.rows()
    assert len(rows) == sum(v["added"] for v in done)
    # Each run keeps the commit and commit time of the version that brought it in.
    first = {v["commit"] for v in done if v["added"]}
    assert {row.commit for row in rows} == first
    assert all(row.branch == "main" and row.commit_time for row in rows)
    assert {row.hardware for row in rows} == {"NVIDIA H200"}

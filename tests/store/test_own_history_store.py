"""benchmarks/own_history.py: the example store of this repository's H200 history and
Liger's, whose history shows the protocol changes and the liger 0.5.4 step."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import history

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("own_history", BENCHMARKS / "own_history.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def test_the_example_store_shows_method_changes_and_the_liger_step(tmp_path: Path) -> None:
    script = _script()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        versions = script.store_h200_history.versions()
    except subprocess.CalledProcessError:
        pytest.skip("not a git checkout")
    db = str(tmp_path / "example.sqlite3")
    lines = script.build(db)
    assert len(lines) == len(versions) + 4
    with open_store(db) as store:
        liger = history(store.rows(provider="liger", operation="kto_loss"), spec=store.spec)
        own = history(store.rows(operation="jsd", provider="triton"), spec=store.spec)
    assert any(c.commit == "ee5aaf26b934" and c.ratio < 0.45 for h in liger for c in h.changes)
    if len(versions) > 1:
        # Each harness release changed the protocol: later series follow earlier ones.
        assert any(h.follows is not None for h in own)
        for h in own:
            if h.follows is not None:
                assert h.follows.differences

"""A read-only command on a SQLite store named through a symlink leaves the store's folder
as it was: SQLite keeps its log files beside the file the link names, and the reader
looked for them beside the link, so it left ``real.db-wal`` and ``real.db-shm`` behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli_runner import run_in_process

from kernelindex_sdk.store import open_store

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _folder(folder: Path) -> dict[str, bytes]:
    return {p.name: (b"" if p.is_symlink() else p.read_bytes()) for p in folder.iterdir()}


@pytest.mark.parametrize("command", ["history", "export"])
def test_a_reader_through_a_symlink_leaves_no_log_files(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    real = folder / "real.db"
    with open_store(str(real)) as store:
        assert store.ingest([SWEEP], commit="c1", branch="main").ok
    link = folder / "link.db"
    os.symlink(real, link)
    before = _folder(folder)
    assert set(before) == {"real.db", "link.db"}
    extra = ["-o", str(tmp_path / "out.jsonl")] if command == "export" else []
    status, _, err = run_in_process(command, "--db", str(link), *extra)
    assert status == 0, err
    assert _folder(folder) == before

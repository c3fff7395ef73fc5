"""Red team: ``kernelindex site`` never replaces a folder that holds the store it reads."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from kernelindex_sdk._cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def _site_with_store(tmp_path: Path) -> tuple[Path, Path]:
    """A folder an earlier ``site`` wrote, then the store copied into it."""
    db = tmp_path / "ki.sqlite3"
    status, _, err = _run("ingest", str(FIXTURE), "--db", str(db))
    assert status == 0, err
    out = tmp_path / "dash"
    status, _, err = _run("site", str(out), "--db", str(db))
    assert status == 0, err
    inside = out / "nested" / "ki.sqlite3"
    inside.parent.mkdir()
    shutil.copyfile(db, inside)
    return out, inside


@pytest.mark.parametrize("how", ["path", "symlink", "cwd"])
def test_site_refuses_an_out_folder_holding_its_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    out, inside = _site_with_store(tmp_path)
    before = inside.read_bytes()
    target = str(out)
    if how == "symlink":
        (tmp_path / "alias").symlink_to(out, target_is_directory=True)
        target = str(tmp_path / "alias")
    elif how == "cwd":
        monkeypatch.chdir(out / "nested")
        target = ".."
    status, stdout, stderr = _run("site", target, "--db", str(inside))
    assert status == 2, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert "holds the store" in stderr, stderr
    assert inside.read_bytes() == before


def test_site_refuses_the_default_store_in_the_out_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, inside = _site_with_store(tmp_path)
    shutil.move(inside, out / "kernelindex.sqlite3")
    monkeypatch.delenv("KERNELINDEX_DB", raising=False)
    monkeypatch.chdir(out)
    status, _, stderr = _run("site", ".")
    assert status == 2, stderr
    assert "holds the store" in stderr, stderr
    assert (out / "kernelindex.sqlite3").is_file()
    assert os.path.isfile(out / "index.html")

"""``kernelindex site`` into a symlink: the folder it points to is written and the link
stays; nothing of the user's is deleted, and a loop is one line, exit 2."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from kernelindex_sdk._cli import main
from kernelindex_sdk.store import open_store

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h200-jsd-sweep.jsonl"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("store") / "ki.sqlite3"
    with open_store(str(path)) as store:
        store.ingest([FIXTURE])
    return str(path)


def _site(out: Path, db: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(["site", str(out), "--db", db], stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def test_a_symlink_to_a_folder_is_followed_and_kept(tmp_path: Path, db: str) -> None:
    """Symlinked output: the link was replaced by a new folder, the old build left behind."""
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    for _ in range(2):  # a first build, then a rebuild through the same link
        status, err = _site(link, db)
        assert status == 0, err
        assert link.is_symlink()
        assert os.readlink(link) == str(real)
        assert (real / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_a_symlink_to_a_folder_elsewhere_builds_there(tmp_path: Path, db: str) -> None:
    """Symlinked output across folders: the build is made beside the target and renamed
    into place, so it never crosses file systems."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "deep").mkdir(parents=True)
    link = tmp_path / "a" / "site"
    link.symlink_to(tmp_path / "b" / "deep")
    status, err = _site(link, db)
    assert status == 0, err
    assert (tmp_path / "b" / "deep" / "index.html").is_file()
    assert link.is_symlink()
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["deep"]


def test_a_dangling_symlink_is_written_where_it_points(tmp_path: Path, db: str) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "new")
    status, err = _site(link, db)
    assert status == 0, err
    assert link.is_symlink()
    assert (tmp_path / "new" / "index.html").is_file()


def test_a_symlink_to_a_users_folder_is_refused_and_nothing_deleted(
    tmp_path: Path, db: str
) -> None:
    """Never delete a user's files: the target's content was not written by site."""
    real, link = tmp_path / "mine", tmp_path / "link"
    real.mkdir()
    (real / "notes.txt").write_text("keep me")
    link.symlink_to(real)
    status, err = _site(link, db)
    assert status == 2
    assert "was not written by kernelindex site" in err
    assert (real / "notes.txt").read_text() == "keep me"
    assert link.is_symlink()


@pytest.mark.parametrize("loop", [("loop", "loop"), ("la", "lb")])
def test_a_symlink_loop_is_one_line_exit_2(tmp_path: Path, db: str, loop: tuple[str, str]) -> None:
    first, second = (tmp_path / name for name in loop)
    first.symlink_to(second)
    if second != first:
        second.symlink_to(first)
    status, err = _site(first, db)
    assert status == 2
    assert err.count("\n") == 1
    assert "symbolic links" in err
    assert first.is_symlink()

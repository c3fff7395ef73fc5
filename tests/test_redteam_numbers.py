"""Red team: the numeric options of history, compare --history and site read one strict way.

``--tokens 1_024`` is refused (exit 2); so must be ``1_0``, other scripts' digits,
whitespace, a sign and values beyond the float range in every other numeric option.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kernelindex_sdk._cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "h200-jsd-sweep.jsonl"
HOSTILE_INTEGERS = ["1_0", "\u0664", "\u0661\u0660", " 3", "3 ", "+3", "\uff13", "\u00b2", "3.0"]
HOSTILE_DECIMALS = ["1_0", "\u0664", " 4", "4 ", "nan", "inf", "1e309", "0", "-4", "\u00b2"]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("store") / "ki.sqlite3")
    status, _, err = _run("ingest", str(FIXTURE), "--db", path, "--branch", "main")
    assert status == 0, err
    return path


@pytest.mark.parametrize("text", HOSTILE_INTEGERS)
def test_history_points_refuses_what_tokens_refuses(db: str, text: str) -> None:
    status, stdout, stderr = _run("history", "--db", db, "--points", text)
    assert status == 2, stderr
    assert stdout == ""
    assert "--points" in stderr


@pytest.mark.parametrize("text", HOSTILE_INTEGERS)
def test_compare_window_refuses_what_tokens_refuses(db: str, text: str) -> None:
    argv = ("compare", "--history", "main", "--db", db, "--window", text, str(FIXTURE))
    status, stdout, stderr = _run(*argv)
    assert status == 2, stderr
    assert stdout == ""
    assert "--window" in stderr


@pytest.mark.parametrize("text", HOSTILE_DECIMALS)
def test_site_bandwidth_refuses_what_threshold_refuses(db: str, tmp_path: Path, text: str) -> None:
    out = tmp_path / "dash"
    status, _, stderr = _run("site", str(out), "--db", db, "--bandwidth", f"NVIDIA H200={text}")
    assert status == 2, stderr
    assert "--bandwidth" in stderr
    assert not out.exists()


def test_plain_numbers_still_pass(db: str, tmp_path: Path) -> None:
    assert _run("history", "--db", db, "--points", "3")[0] == 0
    status, _, err = _run("site", str(tmp_path / "d"), "--db", db, "--bandwidth", "X=4.8")
    assert status == 0, err

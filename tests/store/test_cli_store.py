"""``kernelindex ingest`` and ``export`` from the command line: counts, exit statuses."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk._cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_ingest_then_again_then_export(store_url: str, tmp_path: Path) -> None:
    status, _, err = run("ingest", str(SWEEP), "--db", store_url)
    assert status == 0, err
    assert "64 record(s) added, 0 skipped" in err
    # The records at the fixtures' top (its subfolders hold other tools' files).
    tops = sorted(str(p) for p in FIXTURES.glob("*.json*"))
    status, _, err = run("ingest", *tops, "--db", store_url)
    assert status == 0, err
    assert "1 record(s) added, 64 skipped (64 already stored" in err
    out = tmp_path / "out.jsonl"
    status, _, err = run("export", "--db", store_url, "-o", str(out), "--provider", "torch")
    assert status == 0, err
    assert len(out.read_text(encoding="utf-8").splitlines()) == 16
    status, stdout, _ = run("export", "--db", store_url)
    assert stdout.startswith(SWEEP.read_text(encoding="utf-8"))


def test_clash_exits_1_with_both_places(store_url: str, tmp_path: Path) -> None:
    doc = bundle()
    first = tmp_path / "first.jsonl"
    first.write_text(dumps(doc, indent=None) + "\n", encoding="utf-8")
    assert run("ingest", str(first), "--db", store_url)[0] == 0
    doc["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    second = tmp_path / "second.jsonl"
    second.write_text(dumps(doc, indent=None) + "\n", encoding="utf-8")
    status, _, err = run("ingest", str(second), "--db", store_url)
    assert status == 1
    assert f"{second}:1: /run/metadata/name: run " in err
    assert f"(from {first}:1 in " in err
    assert "1 refused (1 clash(es) with the store)" in err
    assert "Traceback" not in err


def test_missing_path_exits_2_after_ingesting_the_others(store_url: str, tmp_path: Path) -> None:
    status, _, err = run("ingest", str(tmp_path / "absent.jsonl"), str(SWEEP), "--db", store_url)
    assert status == 2
    assert "absent.jsonl: no such file or directory" in err
    assert "64 record(s) added" in err


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_export_refuses_the_store_file(tmp_path: Path, how: str) -> None:
    """The store is export's input: written over by no name it has."""
    db = tmp_path / "k.sqlite3"
    assert run("ingest", str(SWEEP), "--db", str(db))[0] == 0
    before = db.read_bytes()
    out = tmp_path / "out.jsonl"
    if how == "symlink":
        out.symlink_to(db)
    elif how == "hard link":
        out.hardlink_to(db)
    else:
        out = db
    status, _, err = run("export", "--db", str(db), "-o", str(out))
    assert status == 2
    assert "is the input" in err
    assert err.count("\n") == 1
    assert db.read_bytes() == before


def test_export_of_absent_store_exits_2_and_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "none.sqlite3"
    status, _, err = run("export", "--db", str(db))
    assert status == 2
    assert "no kernelindex store here" in err
    assert not db.exists()


def test_bad_commit_time_is_one_line(tmp_path: Path) -> None:
    status, _, err = run(
        "ingest", str(SWEEP), "--db", str(tmp_path / "k.db"), "--commit-time", "soon"
    )
    assert status == 2
    assert err.strip().splitlines() == [
        "kernelindex ingest: argument --commit-time: expected an RFC 3339 timestamp with a"
        " zone, got 'soon' (see 'kernelindex ingest --help')"
    ]
    assert not (tmp_path / "k.db").exists()


def test_ingest_from_stdin(tmp_path: Path) -> None:
    doc = bundle()
    stdin = io.BytesIO((json.dumps(doc) + "\n" + json.dumps(bundle()) + "\n").encode())
    out, err = io.StringIO(), io.StringIO()
    status = main(
        ["ingest", "-", "--db", str(tmp_path / "k.db")], stdout=out, stderr=err, stdin=stdin
    )
    assert status == 0, err.getvalue()
    assert "2 record(s) added" in err.getvalue()


def test_ingest_of_an_empty_folder_is_a_notice_not_a_warning(tmp_path: Path) -> None:
    """Under PYTHONWARNINGS=error a notice is still one line, never a traceback."""
    (tmp_path / "empty").mkdir()
    db = tmp_path / "k.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", "ingest", "empty", "--db", str(db)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "kernelindex: empty: no .json or .jsonl files found" in done.stderr
    assert "Traceback" not in done.stderr


def test_export_to_stdout_redirected_onto_the_store_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "k.sqlite3"
    assert run("ingest", str(SWEEP), "--db", str(db))[0] == 0
    before = db.read_bytes()
    with db.open("ab") as sink:
        done = subprocess.run(
            [sys.executable, "-m", "kernelindex_sdk", "export", "--db", str(db)],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert done.returncode == 2
    assert "standard output: is the input" in done.stderr
    assert db.read_bytes() == before


def test_ingest_says_how_many_runs_it_stored_without_a_commit(
    store_url: str, tmp_path: Path
) -> None:
    """Their points are ordered by observation time only: one line says so, and how to
    add provenance; runs given a commit (or already stored) are not counted."""
    status, _, err = run("ingest", str(SWEEP), "--db", store_url)
    assert status == 0
    assert err.splitlines()[-1] == (
        "64 run(s) stored without a kernelindex.dev/commit annotation: their points are"
        " ordered by observation time only; add provenance with ingest"
        " --commit/--branch/--commit-time (kernelindex bench and import liger take the same)"
    )
    # The fixtures' own records (its subfolders hold other tools' files, not records).
    tops = sorted(str(p) for p in FIXTURES.glob("*.json*"))
    status, _, err = run("ingest", *tops, "--db", store_url, "--commit", "abc")
    assert status == 0
    assert "without a kernelindex.dev/commit" not in err
    assert "1 record(s) added, 64 skipped" in err


def test_migrate_makes_no_store_where_there_is_none(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite3"
    status, _, err = run("migrate", "--db", str(path))
    assert status == 2
    assert err == f"kernelindex: {path}: no kernelindex store here\n"
    assert not path.exists()


def test_migrate_of_a_current_store_changes_nothing_and_shows_no_password(
    postgres_url: str,
) -> None:
    url = postgres_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret@", 1)
    assert run("ingest", str(SWEEP), "--db", url)[0] == 0
    status, _, err = run("migrate", "--db", url)
    assert status == 0
    assert err.endswith(": already layout version 4\n")
    assert "s3cret" not in err
    assert "postgresql://postgres:***@" in err

"""``kernelindex site``: a store in, a dashboard out; bad input is one line and exit 2."""

from __future__ import annotations

import base64
import io
import json
import zlib
from pathlib import Path

import pytest

from kernelindex_sdk._cli import main
from kernelindex_sdk.store import open_store

FIXTURE = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "ki.sqlite3")
    status, _, err = _run(
        "ingest", str(FIXTURE), "--db", path, "--commit", "c0ffee", "--branch", "main",
        "--commit-time", "2026-11-30T00:00:00Z",
    )  # fmt: skip
    assert status == 0, err
    return path


def test_writes_the_dashboard_and_says_where(db: str, tmp_path: Path) -> None:
    out = tmp_path / "dash"
    status, stdout, stderr = _run("site", str(out), "--db", db)
    assert status == 0, stderr
    assert stdout == f"open {(out / 'index.html').resolve().as_uri()}\n"
    assert "64 runs in 64 series" in stderr
    index = (out / "data" / "index.js").read_text()
    series = json.loads(index[index.index(",") + 1 : -3])["series"]
    assert len(series) == 64
    assert {s["gpu"] for s in series} == {"NVIDIA H200"}
    # The records' workloads carry bytesMoved and the H200 is in the table: a roofline.
    assert all(s["bytesMoved"] and s["peakBandwidth"] == 4.8e12 for s in series)


def test_record_texts_are_the_stored_ones_byte_for_byte(db: str, tmp_path: Path) -> None:
    out = tmp_path / "dash"
    assert _run("site", str(out), "--db", db)[0] == 0
    texts: dict[str, str] = {}
    for path in (out / "data" / "records").iterdir():
        text = path.read_text()
        packed = json.loads(text[text.index(",") + 1 : -3])["deflate"]
        texts.update(json.loads(zlib.decompress(base64.b64decode(packed))))
    assert len(texts) == 64
    with open_store(db) as store:
        assert texts == dict(store.records(sorted(texts)))


def test_bandwidth_option_overrides_the_table(db: str, tmp_path: Path) -> None:
    out = tmp_path / "dash"
    assert _run("site", str(out), "--db", db, "--bandwidth", "NVIDIA H200=4.5")[0] == 0
    index = (out / "data" / "index.js").read_text()
    series = json.loads(index[index.index(",") + 1 : -3])["series"]
    assert {s["peakBandwidth"] for s in series} == {4.5e12}


@pytest.mark.parametrize("value", ["4.8", "NVIDIA H200=", "=4", "NVIDIA H200=-1", "X=inf", "X=nan"])
def test_a_bad_bandwidth_is_a_usage_error(db: str, tmp_path: Path, value: str) -> None:
    status, _, stderr = _run("site", str(tmp_path / "d"), "--db", db, "--bandwidth", value)
    assert status == 2
    assert stderr.count("\n") == 1
    assert "expected PRODUCT=TB/s" in stderr


def test_no_store_is_exit_2_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite3"
    status, _, stderr = _run("site", str(tmp_path / "d"), "--db", str(missing))
    assert status == 2
    assert stderr.count("\n") == 1
    assert "Traceback" not in stderr
    assert not missing.exists()
    assert not (tmp_path / "d").exists()


def test_a_folder_with_other_files_is_exit_2_and_untouched(db: str, tmp_path: Path) -> None:
    out = tmp_path / "d"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    status, _, stderr = _run("site", str(out), "--db", db)
    assert status == 2
    assert "not written by kernelindex site" in stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_rebuilding_into_its_own_folder_works(db: str, tmp_path: Path) -> None:
    out = tmp_path / "d"
    assert _run("site", str(out), "--db", db)[0] == 0
    assert _run("site", str(out), "--db", db)[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "ki.sqlite3"]


def test_a_run_without_a_positive_median_is_reported_and_counted(tmp_path: Path) -> None:
    """A 0 ns median has no ratio to any other: the build says which run left the test."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    spec = record["run"]["spec"]
    spec["timing"]["latencyNs"]["median"] = 0
    for m in spec["measurements"]:
        if m["metric"] == "latency":
            m["value"] = 0
    record["run"]["metadata"]["name"] = "zero-median-run"
    records = tmp_path / "runs.jsonl"
    records.write_text("\n".join([*lines, json.dumps(record)]) + "\n", encoding="utf-8")
    path = str(tmp_path / "ki.sqlite3")
    with open_store(path) as store:
        assert store.ingest([records]).ok
    out = tmp_path / "dash"
    status, _, stderr = _run("site", str(out), "--db", path)
    assert status == 0, stderr
    # The line `kernelindex history` writes for such a run (one helper for both).
    assert stderr.count("left out of series") == 1
    assert (
        "kernelindex: run 'zero-median-run' left out of series jsd forward · torch · NVIDIA"
        " H200: a latency median of 0 ns, which no ratio can compare\n"
    ) in stderr
    site = (out / "data" / "site.js").read_text()
    assert json.loads(site[site.index(",") + 1 : -3])["counts"]["leftOut"] == 1
    assert "without a positive median" in (out / "assets" / "app.js").read_text()

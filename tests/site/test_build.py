"""write_site: the files, what each holds, and the folder rules."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from _fake import FakeSource, level_steps, synthetic, synthetic_commit

from kernelindex_sdk.errors import InputError, KernelIndexError
from kernelindex_sdk.site import GPU_BANDWIDTH, MARKER, Step, peak_bandwidth, write_site


def _read(out: Path, key: str) -> Any:
    text = (out / "data" / f"{key}.js").read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : -3])


def _texts(out: Path, sid: str) -> dict[str, str]:
    packed = _read(out, f"records/{sid}")
    assert set(packed) == {"deflate"}
    return json.loads(zlib.decompress(base64.b64decode(packed["deflate"])))  # type: ignore[no-any-return]


def test_writes_the_page_the_assets_and_the_licence(tmp_path: Path) -> None:
    summary = write_site(tmp_path / "site", synthetic(), find_steps=level_steps)
    out = summary.out
    for name in (
        "index.html",
        "assets/app.js",
        "assets/app.css",
        "assets/uPlot.iife.min.js",
        "assets/uPlot.min.css",
        "assets/uPlot-LICENSE",
        MARKER,
    ):
        assert (out / name).is_file(), name
    assert "MIT License" in (out / "assets" / "uPlot-LICENSE").read_text()
    html = (out / "index.html").read_text()
    # No network: every script and stylesheet is a relative file.
    assert "http" not in html.replace("http-equiv", "")


def test_one_series_file_and_one_records_file_per_series(tmp_path: Path) -> None:
    source = synthetic(commits=5)
    summary = write_site(tmp_path / "s", source, find_steps=level_steps)
    index = _read(summary.out, "index")["series"]
    # 2 operations x 2 dtypes x 2 GPUs x 2 providers.
    assert summary.series == len(index) == 16
    assert summary.runs == len(source.rows()) == 80
    for entry in index:
        series = _read(summary.out, f"series/{entry['id']}")
        assert len(series["runs"]) == 5
        assert [r[5] for r in series["runs"]] == sorted(r[5] for r in series["runs"])
        texts = _texts(summary.out, entry["id"])
        assert set(texts) == {r[0] for r in series["runs"]}
    assert len(list((summary.out / "data" / "series").iterdir())) == 16


def test_record_text_is_kept_exactly(tmp_path: Path) -> None:
    source = synthetic(commits=2, hostile=True)
    summary = write_site(tmp_path / "s", source, find_steps=level_steps)
    seen = {}
    for path in (summary.out / "data" / "records").iterdir():
        seen.update(_texts(summary.out, path.stem))
    assert seen == source.texts


def test_health_lists_lines_slower_after_their_last_step_worst_first(tmp_path: Path) -> None:
    summary = write_site(tmp_path / "s", synthetic(step_at=8), find_steps=level_steps)
    site = _read(summary.out, "site")
    health = site["health"]
    # The triton line on the first GPU of each operation and dtype got 30% slower.
    assert len(health) == summary.regressions == site["counts"]["regressions"] == 4
    assert {(h["provider"], h["gpu"]) for h in health} == {("triton", "NVIDIA H200")}
    ratios = [h["ratio"] for h in health]
    assert ratios == sorted(ratios, reverse=True)
    assert all(1.25 < r < 1.35 for r in ratios)
    for h in health:
        assert h["spark"][h["stepAt"]] == h["lastMedianNs"] or h["stepAt"] == 8
        assert h["commit"] is not None


def test_a_line_that_got_faster_is_not_a_regression(tmp_path: Path) -> None:
    def faster(line: Any) -> list[Step]:
        return [Step(index=1, ratio=0.5, cause="implementation")] if len(line) > 1 else []

    summary = write_site(tmp_path / "s", synthetic(), find_steps=faster)
    assert summary.regressions == 0
    assert _read(summary.out, "site")["health"] == []


def test_line_is_the_main_branch_when_a_series_has_it(tmp_path: Path) -> None:
    source = synthetic(
        commits=4,
        operations=("jsd",),
        dtypes=("fp32",),
        gpus=("NVIDIA H200",),
        providers=("triton",),
    )
    rows = source.rows()
    branch_run = rows[-1]._replace(name="on-a-branch", branch="feature", median_ns=1)
    summary = write_site(
        tmp_path / "s",
        FakeSource([*rows, branch_run], source.workloads, source.texts),
        find_steps=level_steps,
    )
    (entry,) = _read(summary.out, "index")["series"]
    series = _read(summary.out, f"series/{entry['id']}")
    assert len(series["runs"]) == 5
    assert [series["runs"][i][3] for i in series["line"]] == ["main"] * 4
    refs = _read(summary.out, "refs")
    assert {b["name"] for b in refs["branches"]} == {"main", "feature"}
    feature_ref = next(b for b in refs["branches"] if b["name"] == "feature")
    # The branch against main now, its own commit left out of main's history.
    [row] = _read(summary.out, f"refs/{feature_ref['key']}")["rows"]
    assert (row[0], row[2], row[7]) == (entry["id"], 1, "on-a-branch")
    assert row[6] == rows[-2].commit
    assert row[4] == "improvement"


def test_compare_refs_judge_each_commit_against_mains_history_before_it(
    tmp_path: Path,
) -> None:
    """Every verdict the Compare page shows is in its data file: each series the commit
    measured, its run against the point of the commit before it."""
    source = synthetic(commits=10, step_at=9)
    summary = write_site(tmp_path / "s", source, find_steps=level_steps)
    refs = _read(summary.out, "refs")
    assert len(refs["commits"]) == 10
    newest = refs["commits"][0]
    payload = _read(summary.out, f"refs/{newest['key']}")
    assert payload["name"] == newest["name"]
    assert len(payload["rows"]) == 16
    by_name = {r.name: r for r in source.rows()}
    previous = synthetic_commit(8)
    verdicts = {}
    for sid, base, new, ratio, verdict, evidence, base_commit, name, note in payload["rows"]:
        assert by_name[name].commit == newest["name"]
        assert by_name[name].median_ns == new
        assert base_commit == previous
        assert ratio == pytest.approx(new / base)
        assert evidence
        assert note.startswith("main: latest of 9 point(s)")
        verdicts[sid] = verdict
    # The triton lines of the first GPU got 30% slower at the newest commit.
    assert sorted(verdicts.values()).count("regression") == 4
    assert set(verdicts.values()) == {"regression", "same"}
    oldest = _read(summary.out, f"refs/{refs['commits'][-1]['key']}")
    assert all(row[1] is None and row[4] == "" for row in oldest["rows"])


def test_roofline_inputs_come_from_the_workload_and_the_bandwidth_table(tmp_path: Path) -> None:
    summary = write_site(
        tmp_path / "s",
        synthetic(commits=2),
        find_steps=level_steps,
        bandwidths={"NVIDIA B200": 7.7e12},
    )
    index = _read(summary.out, "index")["series"]
    for entry in index:
        assert entry["bytesMoved"] in (1_050_673_152, 525_336_576)
        expected = 7.7e12 if entry["gpu"] == "NVIDIA B200" else GPU_BANDWIDTH["NVIDIA H200"]
        assert entry["peakBandwidth"] == expected


def test_peak_bandwidth_ignores_case_and_unknown_products() -> None:
    assert peak_bandwidth("nvidia h200") == 4.8e12
    assert peak_bandwidth("Some Future GPU") is None
    assert peak_bandwidth(None) is None
    assert peak_bandwidth("Some Future GPU", {"some future gpu": 1.0}) == 1.0


def test_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not written by kernelindex site") as caught:
        write_site(out, synthetic(commits=1), find_steps=level_steps)
    assert isinstance(caught.value, KernelIndexError)
    assert (out / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_refuses_a_file(tmp_path: Path) -> None:
    out = tmp_path / "file"
    out.write_text("x")
    with pytest.raises(InputError, match="expected a folder"):
        write_site(out, synthetic(commits=1), find_steps=level_steps)


def test_replaces_its_own_earlier_build_whole(tmp_path: Path) -> None:
    out = tmp_path / "site"
    write_site(out, synthetic(commits=3), find_steps=level_steps)
    before = set((out / "data" / "series").iterdir())
    write_site(out, synthetic(commits=3, operations=("other",)), find_steps=level_steps)
    after = set((out / "data" / "series").iterdir())
    assert before
    assert after
    assert not before & after
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_an_empty_store_gives_a_working_empty_site(tmp_path: Path) -> None:
    summary = write_site(tmp_path / "s", FakeSource([], {}), find_steps=level_steps)
    assert (summary.runs, summary.series, summary.regressions) == (0, 0, 0)
    assert _read(summary.out, "index") == {"series": [], "relative": []}


def test_landing_page_weight_stays_under_a_megabyte_with_many_series(tmp_path: Path) -> None:
    """The landing page loads site.js, never a per-series or per-run file."""
    source = synthetic(
        commits=3,
        operations=[f"op{i}" for i in range(60)],
        dtypes=("fp32", "bf16", "fp16"),
        step_at=1,
    )
    summary = write_site(tmp_path / "s", source, find_steps=level_steps)
    assert summary.series == 60 * 3 * 4
    assert summary.regressions == 60 * 3
    assert summary.landing_bytes < 1_000_000
    site_js = (summary.out / "data" / "site.js").stat().st_size
    assert site_js < 400_000


def test_default_steps_are_historys_with_their_causes(tmp_path: Path) -> None:
    """Without find_steps, the change points and causes are store.history's."""
    summary = write_site(tmp_path / "s", synthetic(commits=12, step_at=6))
    health = _read(summary.out, "site")["health"]
    assert len(health) == 4
    for h in health:
        assert h["cause"] == "implementation"
        assert "implementationDigest" in h["detail"]
        assert h["commit"] == synthetic_commit(6)
        assert 1.25 < h["ratio"] < 1.35


def test_the_package_carries_the_page_and_the_vendored_chart_library() -> None:
    """The wheel's package data (hatch ships every file under src/kernelindex_sdk)."""
    import importlib.resources

    static = importlib.resources.files("kernelindex_sdk.site").joinpath("static")
    for name in ("index.html", "app.js", "app.css"):
        assert static.joinpath(name).is_file(), name
    vendor = static.joinpath("vendor")
    assert "Leon Sorokin" in vendor.joinpath("uPlot-LICENSE").read_text()
    assert "1.6.32" in vendor.joinpath("README").read_text()
    assert (
        vendor.joinpath("uPlot.iife.min.js")
        .read_text()
        .startswith("/*! https://github.com/leeoniya/uPlot")
    )


def test_importing_the_sdk_or_the_site_loads_no_heavy_library() -> None:
    code = (
        "import sys, kernelindex_sdk, kernelindex_sdk.site;"
        "heavy = {'torch', 'triton', 'matplotlib', 'psycopg', 'numpy', 'playwright'};"
        "bad = heavy & set(sys.modules);"
        "assert not bad, bad"
    )
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unwritable_place_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError) as caught:
        write_site(blocker / "site", synthetic(commits=1), find_steps=level_steps)
    assert "file" in str(caught.value)

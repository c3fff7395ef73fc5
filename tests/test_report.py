"""kernelindex_sdk.report and ``kernelindex report``: families, tables, summary and plots."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import RunCli
from _hostile_text import BENIGN, HOSTILE, RAW_CONTROL, assert_markdown_shape, on_gpu
from _records import bundle, write_jsonl

import kernelindex_sdk as ki
from kernelindex_sdk import report
from kernelindex_sdk._analysis.runs import load_runs
from kernelindex_sdk.errors import InputError, MissingDependencyError
from kernelindex_sdk.importers import liger

ROOT = Path(__file__).resolve().parent.parent
SUBSET = ROOT / "tests" / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
H200 = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"


def b200_jsd() -> list[Any]:
    return [
        b
        for b in map(ki.dump, liger.read_files([SUBSET]))
        if b["environment"]["spec"]["hardware"]["product"] == "NVIDIA B200"
        and b["run"]["spec"]["workload"]["operation"] == "jsd"
    ]


def test_swept_parameter_is_the_one_with_most_values() -> None:
    found = report.families(load_runs([H200]))
    assert len(found) == 4
    assert {f.x for f in found} == {"tokens"}
    assert {dict(f.fixed)["dtype"] for f in found} == {"fp32", "bf16"}
    for family in found:
        assert family.implementations == ("torch", "torch-compile", "triton", "liger")
        assert family.x_values == [1024, 2048, 4096, 8192]
        assert family.environment == "NVIDIA H200"


def test_x_option_chooses_the_swept_parameter() -> None:
    found = report.families(load_runs([H200]), x="dtype")
    assert {f.x for f in found} == {"dtype"}
    assert len(found) == 8  # tokens (4) x inputGrad (2)
    assert all(f.x_values == ["bf16", "fp32"] for f in found)


def test_unknown_x_is_an_input_error(run_cli: RunCli) -> None:
    with pytest.raises(InputError, match="no run has parameter 'nope'"):
        report.families(load_runs([H200]), x="nope")
    status, _, err = run_cli("report", str(H200), "--x", "nope")
    assert status == 2
    assert err.startswith("kernelindex: --x: no run has parameter 'nope'; parameters: beta")


def test_table_speedups_match_the_liger_csv_by_hand() -> None:
    found = {(f.pass_, f.metric): f for f in report.families(b200_jsd())}
    header, rows = report.table_rows(found[("backward", "latency")])
    assert header == ["BT", "torch", "liger", "speedup liger vs torch"]
    # 3.7858558893203735 ms / 1.0158560276031494 ms = 3.7268
    assert rows[0] == ["1024", "3.786 ms (3.785-3.786)", "1.016 ms (1.005-1.023)", "3.73x"]
    # Forward: 2.2900800704956055 / 5.783552169799805 = 0.396 (liger slower on B200).
    assert report.table_rows(found[("forward", "latency")])[1][0][-1] == "0.40x"
    # Memory: liger's peak over torch's, 3514.0009765625 / 6526.0009765625 = 0.538.
    header, rows = report.table_rows(found[("full", "memory")])
    assert header[-1] == "memory liger vs torch"
    assert rows[0] == ["1024", "6526 MiB (6526-6526)", "3514 MiB (3514-3514)", "0.54x"]


def test_failed_point_shows_as_failed() -> None:
    runs = [bundle("torch", 100_000), bundle("triton", failed="out of registers")]
    (family,) = report.families(runs)
    assert report.table_rows(family)[1] == [["-", "100.0 us (100.0-100.0)", "failed", "-"]]


def test_memory_measured_beside_latency_gets_its_own_table() -> None:
    runs = [bundle("torch", 400_000, memory=64.0), bundle("triton", 100_000, memory=16.0)]
    found = {f.metric: f for f in report.families(runs)}
    assert set(found) == {"latency", "memory"}
    assert report.table_rows(found["memory"])[1] == [["-", "64.00 MiB", "16.00 MiB", "0.25x"]]


def test_latest_run_of_a_point_stands_for_it() -> None:
    runs = [
        bundle(median=300, observed="2026-11-30T00:00:09.000Z"),
        bundle(median=100, observed="2026-11-30T00:00:01.000Z"),
    ]
    (family,) = report.families(runs)
    stat = family.stat(None, "torch")
    assert stat is not None
    assert stat.median == 300


def test_summary_text_gives_medians_and_speedups_against_the_first() -> None:
    records = [
        ki.load_record(bundle(p, m, params={"tokens": t, "dtype": "fp32"}))
        for t in (1024, 2048)
        for p, m in (("torch", 400_000), ("triton", 100_000))
    ]
    text = report.summary_text(records)
    lines = text.splitlines()
    assert lines[0] == "jsd forward · dtype=fp32 · NVIDIA H200 · latency"
    assert lines[1].split() == ["tokens", "torch", "triton", "speedup", "triton", "vs", "torch"]
    assert " ".join(lines[2].split()) == "1024 400.0 us (400.0-400.0) 100.0 us (100.0-100.0) 4.00x"


def test_markdown_report_has_one_titled_table_per_family(run_cli: RunCli) -> None:
    status, out, _ = run_cli("report", str(H200), "--format", "markdown")
    assert status == 0
    assert out.count("### jsd forward · ") == 4
    assert "| tokens | torch | torch-compile | triton | liger |" in out


def test_report_takes_the_harness_and_liger_records_together(
    run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "liger.jsonl", b200_jsd())
    status, out, _ = run_cli("report", str(H200), str(path))
    assert status == 0
    assert out.count("· NVIDIA H200 · latency") == 4
    assert out.count("· NVIDIA B200 · ") == 4


# Plots ------------------------------------------------------------------------------------


@pytest.fixture
def matplotlib() -> Any:
    """matplotlib (the [plot] extra, part of [dev]); the table tests above run without it."""
    return pytest.importorskip("matplotlib")


def visible(fig: Any) -> list[Any]:
    return [ax for ax in fig.axes if ax.get_visible()]


def test_figure_has_one_line_per_implementation_and_the_memory_panel(matplotlib: Any) -> None:
    from kernelindex_sdk._analysis import plot as _plot

    fig = _plot.figure(report.families(b200_jsd()))
    axes = visible(fig)
    titles = [ax.get_title().splitlines()[0] for ax in axes]
    assert titles == [
        "jsd full · NVIDIA B200 · latency",
        "jsd full · NVIDIA B200 · memory",
        "jsd forward · NVIDIA B200 · latency",
        "jsd backward · NVIDIA B200 · latency",
    ]
    for ax in axes:
        assert [line.get_label() for line in ax.lines] == ["torch", "liger"]
        assert ax.get_xlabel() == "BT"
        assert ax.get_xscale() == "log"
    assert axes[0].get_ylabel() == "latency (ms)"
    assert axes[1].get_ylabel() == "peak memory (MiB)"
    # torch's forward medians, in ms, in sweep order.
    assert list(axes[2].lines[0].get_ydata()) == pytest.approx(
        [2.29008, 4.971056, 9.907424, 20.027519]
    )


def test_bandwidth_panel_where_the_workload_declares_bytes_moved(matplotlib: Any) -> None:
    from kernelindex_sdk._analysis import plot as _plot

    fig = _plot.figure(report.families(load_runs([H200])))
    axes = visible(fig)
    assert len(axes) == 8
    bandwidth = [ax for ax in axes if ax.get_ylabel() == "achieved bandwidth (GB/s)"]
    assert len(bandwidth) == 4
    assert all(len(ax.lines) == 4 for ax in axes)
    # One p20-p80 band per line.
    assert all(len(ax.collections) == 4 for ax in axes)
    run = next(r for r in load_runs([H200]).runs if r.provider == "torch")
    assert run.workload is not None
    assert run.value is not None
    # bytes / ns is GB/s: 1050673152 / 4056432 = 259.0 for the first point of torch.
    ax = bandwidth[0]
    assert ax.lines[0].get_ydata()[0] == pytest.approx(run.workload.bytes_moved / run.value.median)


def test_plot_writes_a_png_that_reads_back(
    run_cli: RunCli, matplotlib: Any, tmp_path: Path
) -> None:
    out = tmp_path / "b200.png"
    status, stdout, err = run_cli("report", str(H200), "--plot", str(out))
    assert status == 0, err
    assert "speedup" in stdout
    image = matplotlib.image.imread(out)
    assert image.shape[0] > 1000
    assert image.shape[1] > 1000


def test_plot_writes_svg(matplotlib: Any, tmp_path: Path) -> None:
    out = tmp_path / "b200.svg"
    report.plot(report.families(b200_jsd()), out)
    text = out.read_text("utf-8")
    assert text.startswith("<?xml")
    assert "<svg" in text


def test_plot_rejects_other_suffixes(matplotlib: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"expected a \.png or \.svg file, got '\.pdf'"):
        report.plot(report.families(b200_jsd()), tmp_path / "x.pdf")


def test_without_matplotlib_tables_still_print_and_one_line_says_why(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = importlib.import_module

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", no_matplotlib)
    with pytest.raises(MissingDependencyError):
        report.plot(report.families(load_runs([H200])), tmp_path / "x.png")
    status, out, err = run_cli("report", str(H200), "--plot", str(tmp_path / "x.png"))
    assert status == 2
    assert out.count("speedup triton vs torch") == 4
    assert err == (
        "kernelindex: --plot needs matplotlib, which is not installed:"
        ' pip install -e ".[plot]" in a clone of kernelindex-sdk, or'
        ' pip install "kernelindex-sdk[plot] @ git+https://github.com/kernelindex/kernelindex-sdk"\n'
    )
    assert not (tmp_path / "x.png").exists()


def test_importing_the_modules_does_not_import_matplotlib() -> None:
    code = (
        "import sys, kernelindex_sdk, kernelindex_sdk.compare, kernelindex_sdk.report;"
        " import kernelindex_sdk._cli;"
        " assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# Hostile input: record text that tries to forge a line, row, cell, heading or markup.
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_report_tables_keep_their_shape(fmt: str) -> None:
    def records(text: str) -> list[dict[str, Any]]:
        return [
            on_gpu(bundle(provider=p, params={"tokens": t, "mode": text}), text)
            for t in (1, 2)
            for p in (text, "torch")
        ] + [on_gpu(bundle(provider=text, params={"tokens": text, "mode": "x"}), text)]

    hostile = report.render(report.families(records(HOSTILE)), fmt)
    benign = report.render(report.families(records(BENIGN)), fmt)
    assert hostile.count("\n") == benign.count("\n")
    assert not RAW_CONTROL.search(hostile)
    headings = [line for line in hostile.split("\n") if line.startswith("#")]
    assert len(headings) == len([line for line in benign.split("\n") if line.startswith("#")])
    if fmt == "markdown":
        assert_markdown_shape(hostile, benign)

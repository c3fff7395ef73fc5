"""The regression gate cannot be bypassed: medians of 0, units, thresholds; and the
marks compare and report add (noisy runs, metric labels, JSON types of x values)."""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from _records import bundle, write_jsonl

from kernelindex_sdk import digest, report
from kernelindex_sdk._cli import main
from kernelindex_sdk.compare import Stat, _comparable, compare, is_significant, load_runs, render
from kernelindex_sdk.errors import ArgumentError


def run_cli(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


def _memory(value: float, unit: str) -> dict[str, Any]:
    """A run that measured only its peak memory, in ``unit``."""
    doc = bundle(median=None, memory=1.0)
    [m] = doc["run"]["spec"]["measurements"]
    m["unit"], m["value"] = unit, value
    return doc


def _measured_latency(value: float) -> dict[str, Any]:
    """A run whose latency is a measurement (no timing), so it may be any number."""
    doc = bundle(median=None)
    doc["run"]["spec"]["measurements"] = [
        {"unit": "ns", "value": value, "metric": "latency", "statistic": "median"}
    ]
    return doc


def _files(tmp_path: Path, base: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    return [
        str(write_jsonl(tmp_path / "base.jsonl", base)),
        str(write_jsonl(tmp_path / "new.jsonl", new)),
    ]


@pytest.mark.parametrize(
    ("base", "new"),
    [
        (bundle(median=0), bundle(median=10**15)),
        (_measured_latency(5e-324), _measured_latency(1e15)),
        (_measured_latency(0.0), _measured_latency(100.0)),
        (bundle(median=100), bundle(median=0)),
    ],
    ids=["zero-base", "subnormal-base", "zero-float-base", "zero-new"],
)
def test_a_median_of_zero_fails_the_gate_and_json_stays_json(
    tmp_path: Path, base: dict[str, Any], new: dict[str, Any]
) -> None:
    paths = _files(tmp_path, [base], [new])
    status, _, err = run_cli("compare", *paths, "--fail-on-regression", "5")
    assert status == 1
    assert "cannot judge: " in err
    status, out, _ = run_cli("compare", *paths, "--format", "json")
    assert status == 0

    def refuse(name: str) -> None:
        raise AssertionError(f"non-JSON constant {name}")

    [row] = json.loads(out, parse_constant=refuse)
    assert row["ratio"] is None
    assert row["problem"]


def test_memory_in_other_units_is_converted_and_gated(tmp_path: Path) -> None:
    """1 MiB -> 10 GiB is 10240 times more memory, not a pass."""
    paths = _files(tmp_path, [_memory(1, "MiB")], [_memory(10, "GiB")])
    status, _, err = run_cli("compare", *paths, "--fail-on-regression", "5")
    assert status == 1
    assert "NEW/BASE 10240.000" in err
    result = compare([_memory(1024, "KiB")], [_memory(1, "MiB")])
    [pair] = result.pairs
    assert pair.ratio == 1.0
    assert pair.problem is None


def test_units_of_different_dimensions_are_a_problem() -> None:
    assert _comparable(Stat("x", "MiB", 1.0), Stat("x", "ms", 1.0)) == "units differ: 'MiB' vs 'ms'"
    assert _comparable(Stat("x", "widgets", 1.0), Stat("x", "gadgets", 1.0)) == (
        "units differ: 'widgets' vs 'gadgets'"
    )
    b, n = _comparable(Stat("x", "ms", 1.0, 0.5, 2.0), Stat("x", "us", 1500.0))  # type: ignore[misc]
    assert (b.unit, b.median, b.p20, b.p80, n.median) == ("ns", 1e6, 5e5, 2e6, 1.5e6)


@pytest.mark.parametrize(
    "threshold", [math.inf, -math.inf, math.nan, -0.01, "5", None, True, [5], 1e309]
)
def test_thresholds_must_be_finite_numbers(threshold: Any) -> None:
    runs = [bundle()]
    with pytest.raises(ArgumentError, match="expected a finite number >= 0"):
        compare(runs, runs, threshold=threshold)
    result = compare(runs, runs)
    with pytest.raises(ArgumentError):
        result.regressions(threshold)
    with pytest.raises(ArgumentError):
        is_significant(Stat("latency", "ns", 1), Stat("latency", "ns", 2), threshold)


def test_a_zero_threshold_is_a_real_gate() -> None:
    """At 0 the noise alone decides: 3% between single runs passes it (noise 0.71%)."""
    result = compare([bundle(median=100)], [bundle(median=103)], threshold=0)
    assert len(result.regressions(0)) == 1


def test_latency_and_memory_rows_are_told_apart() -> None:
    base = [bundle(median=100_000), _memory(1, "MiB")]
    new = [bundle(median=100_000), _memory(1, "MiB")]
    result = compare(base, new)
    labels = [result.label(p.run) for p in result.pairs]
    assert labels == [
        "jsd forward dtype=fp32 tokens=1024",
        "jsd forward dtype=fp32 tokens=1024 (memory)",
    ]
    # One metric alone keeps its plain label.
    only = compare([bundle()], [bundle()])
    assert only.label(only.pairs[0].run) == "jsd forward dtype=fp32 tokens=1024"


def test_noisy_runs_are_marked_in_every_format() -> None:
    noisy = bundle(median=100_000, p20=90_000, p80=120_000)
    clean = bundle(median=100_000, p20=99_000, p80=101_000)
    result = compare([noisy], [clean])
    text = render(result, "text")
    assert "noisy" in text.split("\n")[1]
    assert "noisy = p80/p20 above 1.1" in text
    assert "noisy = p80/p20 above 1.1" in render(result, "markdown")
    [row] = json.loads(render(result, "json"))
    assert (row["base"]["noisy"], row["new"]["noisy"]) == (True, False)
    csv_text = render(result, "csv")
    (cells,) = csv.DictReader(io.StringIO(csv_text))
    assert cells["base_noisy"] == "True"
    # A clean comparison keeps its output without the legend.
    assert "noisy" not in render(compare([clean], [clean]), "text")
    found = report.render(report.families([noisy]))
    assert "noisy" in found.split("\n")[2]
    assert "noisy = p80/p20" in found


def test_true_and_1_are_two_rows_of_a_report() -> None:
    runs = [bundle(params={"flag": value, "dtype": "fp32"}) for value in (True, 1, False, 0)]
    [family] = report.families(runs, x="flag")
    assert len(family.x_values) == 4
    assert all(family.run(x, "torch") is not None for x in family.x_values)
    _, rows = report.table_rows(family)
    assert sorted(r[0] for r in rows) == ["0", "1", "False", "True"]


def test_true_and_1_are_two_families_when_fixed() -> None:
    runs = [bundle(params={"flag": flag, "tokens": t}) for flag in (True, 1) for t in (1, 2)]
    found = report.families(runs, x="tokens")
    assert len(found) == 2
    assert {f.fixed for f in found} == {(("flag", True),), (("flag", 1),)}


def test_compare_dash_dash_is_a_usage_error() -> None:
    status, out, err = run_cli("compare", "-", "-", stdin=json.dumps(bundle()).encode())
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "stdin" in err


def test_plot_with_a_p20_of_zero_and_bytes_moved(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = [
        bundle(median=1000, p20=0, p80=2000, bytes_moved=10**6, params={"tokens": t})
        for t in (1, 2, 4)
    ]
    out = tmp_path / "x.png"
    report.plot(report.families(runs), out)
    assert out.stat().st_size > 0


def test_plot_keeps_one_colour_per_implementation_across_panels() -> None:
    pytest.importorskip("matplotlib")
    from kernelindex_sdk._analysis import plot as _plot

    # Liger is second in one family and alone in the other: one colour all the same.
    runs = [
        bundle(provider=p, params={"tokens": t, "dtype": "fp32"}, memory=1.0)
        for p in ("torch", "liger")
        for t in (1, 2)
    ] + [bundle(provider="liger", params={"tokens": t, "dtype": "bf16"}) for t in (1, 2)]
    fig = _plot.figure(report.families(runs, x="tokens"))
    colours: dict[str, set[str]] = {}
    for ax in fig.axes:
        for line in ax.lines:
            colours.setdefault(line.get_label(), set()).add(line.get_color())
    assert set(colours) == {"torch", "liger"}
    assert all(len(c) == 1 for c in colours.values())
    assert colours["torch"] != colours["liger"]


def test_plot_shows_dollars_and_newlines_as_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = [bundle(provider="$x^$\n_a", params={"tokens": t, "mode": "$\\frac{"}) for t in (1, 2)]
    report.plot(report.families(runs), tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 0


def test_a_renamed_copy_compares_as_before() -> None:
    """Names do not enter the pairing: a copy of BASE under new names pairs one to one."""
    base = [bundle(median=m, params={"tokens": m}) for m in (100, 200)]
    new = copy.deepcopy(base)
    for i, doc in enumerate(new):
        doc["run"]["metadata"]["name"] = f"renamed-{i}"
    result = compare(base, new)
    assert [p.ratio for p in result.pairs] == [1.0, 1.0]
    assert (
        digest.workload_digest(base[0]["run"]["spec"]["workload"])
        == (new[0]["run"]["spec"]["workloadDigest"])
    )


def _throttled(doc: dict[str, Any]) -> dict[str, Any]:
    doc["run"]["spec"]["conditions"] = {"gpu": {"samples": 40, "throttleReasons": ["HwSlowdown"]}}
    return doc


def test_a_degraded_run_is_neither_a_regression_nor_an_improvement(tmp_path: Path) -> None:
    """Its GPU throttled while it was timed: the pair says degraded and why, the gate does
    not trip; --include-degraded judges it as any run."""
    base = write_jsonl(tmp_path / "base.jsonl", [bundle(median=100_000)])
    new = write_jsonl(tmp_path / "new.jsonl", [_throttled(bundle(median=150_000))])
    result = compare(load_runs([base]), load_runs([new]))
    [pair] = result.pairs
    assert pair.degraded
    assert pair.verdict is not None
    assert pair.verdict.reason == "degraded: NEW throttled (HwSlowdown)"
    assert result.regressions(5) == []
    assert "degraded" in render(result, "text")
    [row] = json.loads(render(result, "json"))
    assert (row["verdict"], row["new"]["degraded"]) == ("degraded", "throttled (HwSlowdown)")
    judged = compare(load_runs([base]), load_runs([new]), include_degraded=True)
    assert len(judged.regressions(5)) == 1

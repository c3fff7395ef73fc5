"""kernelindex_sdk.compare and ``kernelindex compare``: pairing, ratios, significance, gate."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import RunCli
from _hostile_text import BENIGN, HOSTILE, RAW_CONTROL, assert_markdown_shape, compare_records
from _records import bundle, write_jsonl

import kernelindex_sdk as ki
from kernelindex_sdk import compare as cmp
from kernelindex_sdk._analysis.runs import Stat
from kernelindex_sdk._cli import main
from kernelindex_sdk.importers import liger

ROOT = Path(__file__).resolve().parent.parent
SUBSET = ROOT / "tests" / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
H200 = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"


def stat(median: float, p20: float | None = None, p80: float | None = None) -> Stat:
    return Stat("latency", "ns", median, p20, p80)


# The significance rule at its edges ---------------------------------------------------


def test_a_change_the_noise_puts_credibly_under_the_threshold_never_counts() -> None:
    """Two single runs without a spread carry the least noise a run has (0.5% each): a
    change counts at 5% when its upper 95% bound (1.645 x 0.71% over it) reaches 5%, so
    3.7% slower does not and 3.9% does; faster, the edge is 5% of the base."""
    assert not cmp.is_significant(stat(100_000), stat(103_700), 0.05)
    assert cmp.is_significant(stat(100_000), stat(103_900), 0.05)
    assert not cmp.is_significant(stat(100_000), stat(96_200), 0.05)
    assert cmp.is_significant(stat(100_000), stat(96_000), 0.05)


def test_a_change_within_the_runs_spread_is_not_significant() -> None:
    """The noise of two single runs is what their p20-p80 spreads show: 20% between runs
    whose middle 60% span 10% and 13% is within 3.29 times it, even with the intervals
    apart; between runs spanning 1% it is not."""
    base = stat(100_000, 99_000, 110_000)
    assert not cmp.is_significant(base, stat(120_000, 110_001, 125_000))
    assert cmp.is_significant(stat(100_000, 99_500, 100_500), stat(120_000, 119_500, 120_500))
    # A large change whose spread is wider still stays "~".
    assert not cmp.is_significant(base, stat(130_000, 105_000, 140_000))


def test_single_sample_runs_carry_the_least_noise_a_run_has() -> None:
    """p20 = p80 = median (or no quantiles at all): no spread, so the noise is 0.5% a run."""
    assert cmp.is_significant(stat(100, 100, 100), stat(106, 106, 106))
    assert cmp.is_significant(stat(100), stat(106))
    assert not cmp.is_significant(stat(100), stat(103))


def test_threshold_zero_leaves_only_the_noise_test() -> None:
    """At threshold 0 every change past 3.29 times the noise counts: 3% between single
    runs (noise 0.71%) does, 1% does not, nor 3% between runs spanning 2% each."""
    assert cmp.is_significant(stat(100, 100, 100), stat(103, 103, 103), 0.0)
    assert not cmp.is_significant(stat(100, 100, 100), stat(101, 101, 101), 0.0)
    assert not cmp.is_significant(stat(100, 99, 101), stat(103, 102, 104), 0.0)


def test_negative_threshold_is_rejected() -> None:
    with pytest.raises(ValueError, match="threshold"):
        cmp.compare([], [], threshold=-0.1)


# Pairing ---------------------------------------------------------------------------------


def test_ratio_is_new_median_over_base_median() -> None:
    result = cmp.compare([bundle(median=200_000)], [bundle(median=150_000)])
    (pair,) = result.pairs
    assert pair.ratio == pytest.approx(0.75)
    assert pair.significant
    assert result.geomeans() == {"latency": pytest.approx(0.75)}


def test_geomean_is_the_geometric_mean_of_the_ratios() -> None:
    base = [bundle(median=100, params={"tokens": t}) for t in (1, 2)]
    new = [bundle(median=m, params={"tokens": t}) for t, m in ((1, 200), (2, 50))]
    result = cmp.compare(base, new)
    assert [p.ratio for p in result.pairs] == [pytest.approx(2.0), pytest.approx(0.5)]
    assert result.geomeans()["latency"] == pytest.approx(1.0)


def test_one_run_a_side_pairs_even_when_the_implementations_differ() -> None:
    """A before/after of one kernel: the source (and its digest) changed, the pair holds."""
    result = cmp.compare(
        [bundle("triton", config={"BLOCK": 1024})], [bundle("triton", config={"BLOCK": 2048})]
    )
    assert len(result.pairs) == 1
    assert not result.unpaired


def test_several_runs_at_a_key_pair_by_implementation() -> None:
    base = [bundle("torch", 100_000), bundle("liger", 50_000)]
    new = [bundle("liger", 40_000), bundle("torch", 100_000)]
    result = cmp.compare(base, new)
    got = {(p.base.provider, p.new.provider): p.ratio for p in result.pairs if p.base and p.new}
    assert got == {("torch", "torch"): pytest.approx(1.0), ("liger", "liger"): pytest.approx(0.8)}


def test_same_provider_with_other_entry_point_is_another_implementation() -> None:
    base = [bundle("triton", 100, entry_point="a:f"), bundle("triton", 100, entry_point="b:g")]
    new = [bundle("triton", 90, entry_point="b:g"), bundle("torch", 100)]
    result = cmp.compare(base, new)
    assert [p.base.entry_point for p in result.pairs if p.base] == ["b:g"]
    reasons = sorted(p.reason or "" for p in result.unpaired)
    assert reasons == [
        "no torch run in BASE at this workload (BASE has triton)",
        "no triton run in NEW at this workload (NEW has torch, triton)",
    ]


def at_commit(doc: dict[str, Any], commit: str) -> dict[str, Any]:
    doc["run"]["metadata"]["annotations"] = {"kernelindex.dev/commit": commit}
    return doc


def test_latest_observed_run_stands_for_runs_of_other_commits_and_the_row_says_so() -> None:
    base = [
        at_commit(bundle(median=100, observed="2026-11-30T00:00:02.000Z"), "a" * 40),
        at_commit(bundle(median=300, observed="2026-11-30T00:00:09.000Z"), "c" * 40),
        at_commit(bundle(median=200, observed="2026-11-30T00:00:05.000Z"), "b" * 40),
    ]
    result = cmp.compare(base, [bundle(median=300)])
    (pair,) = result.pairs
    assert pair.base is not None
    assert pair.base.value is not None
    assert pair.base.value.median == 300
    assert pair.notes == ("latest of 3 BASE runs of torch",)
    assert "latest of 3 BASE runs of torch" in cmp.render(result)


def test_replicates_of_one_point_are_pooled_and_their_noise_judges_the_pair() -> None:
    """Three runs of one commit with the same digests are one point measured three times:
    their medians' median stands for it, and the noise they show (about 10%) keeps a 20%
    change within it, where three tight runs make the same change count."""
    loose = [
        at_commit(bundle(median=m, observed=f"2026-11-30T00:00:0{i}.000Z"), "a" * 40)
        for i, m in enumerate((90_000, 100_000, 110_000))
    ]
    result = cmp.compare(loose, [bundle(median=120_000)])
    (pair,) = result.pairs
    assert pair.base is not None
    assert pair.base.value is not None
    assert (pair.base.value.median, pair.base.runs) == (100_000, 3)
    assert pair.notes == ("3 BASE runs of torch pooled (replicates)",)
    assert pair.verdict is not None
    assert pair.verdict.kind == "same"
    assert "replicates, 2 df" in pair.verdict.reason
    tight = [
        at_commit(bundle(median=m, observed=f"2026-11-30T00:00:0{i}.000Z"), "a" * 40)
        for i, m in enumerate((99_900, 100_000, 100_100))
    ]
    (pair,) = cmp.compare(tight, [bundle(median=120_000)]).pairs
    assert pair.verdict is not None
    assert pair.verdict.kind == "regression"


def test_other_environment_is_unpaired_with_the_field_that_differs() -> None:
    result = cmp.compare([bundle(product="NVIDIA B200")], [bundle(product="NVIDIA H200")])
    assert not result.pairs
    reasons = [p.reason for p in result.unpaired]
    expected = "environment: hardware.product 'NVIDIA B200' vs 'NVIDIA H200'"
    assert reasons == [expected, expected]
    assert [p.base is not None for p in result.unpaired] == [True, False]
    assert "only in BASE: jsd forward dtype=fp32 tokens=1024 @ NVIDIA B200 · torch" in (
        cmp.render(result)
    )


def test_across_environments_pairs_gpu_against_gpu() -> None:
    result = cmp.compare(
        [bundle(median=200, product="NVIDIA B200")],
        [bundle(median=100, product="NVIDIA H200")],
        across_environments=True,
    )
    (pair,) = result.pairs
    assert pair.ratio == pytest.approx(0.5)
    assert "environments differ" in pair.notes


def test_other_protocol_is_unpaired_unless_across_protocols_and_then_flagged() -> None:
    base, new = [bundle(timer="cuda_events")], [bundle(timer="cuda_graph")]
    result = cmp.compare(base, new)
    assert [p.reason for p in result.unpaired] == [
        "protocol: measurement.timer 'cuda_events' vs 'cuda_graph'"
    ] * 2
    across = cmp.compare(base, new, across_protocols=True)
    (pair,) = across.pairs
    assert pair.notes == ("protocols differ",)
    assert "protocols differ" in cmp.render(across)


def test_other_workload_names_the_parameter_that_differs() -> None:
    result = cmp.compare([bundle(params={"tokens": 1024})], [bundle(params={"tokens": 2048})])
    assert result.unpaired[0].reason == "workload: parameters.tokens 1024 vs 2048"


def test_unpaired_without_objects_names_the_digests() -> None:
    base = bundle(product="NVIDIA B200")
    del base["environment"]
    result = cmp.compare([base], [bundle()])
    reason = result.unpaired[0].reason or ""
    assert reason.startswith("environment: digest ")
    assert reason.endswith("(objects absent)")


def test_no_run_of_the_operation_on_the_other_side() -> None:
    result = cmp.compare([bundle(operation="rms_norm")], [bundle()])
    assert result.unpaired[0].reason == "no rms_norm forward latency run in NEW"


def test_failed_runs_show_as_failed_never_as_numbers() -> None:
    result = cmp.compare([bundle(median=100)], [bundle(failed="CUDA error: boom")])
    (pair,) = result.pairs
    assert pair.failed
    assert pair.ratio is None
    assert not pair.significant
    text = cmp.render(result)
    assert "failed (error: CUDA error: boom)" in text
    (row,) = cmp.pairs_as_json(result)
    assert row["new"]["status"] == "failed"
    assert row["new"]["median"] is None
    assert row["ratio"] is None


def test_memory_runs_pair_with_memory_runs_only() -> None:
    base = [bundle(median=None, memory=100.0), bundle(median=1000)]
    new = [bundle(median=None, memory=50.0), bundle(median=1000)]
    result = cmp.compare(base, new, across_protocols=True)
    assert sorted((p.run.metric, p.ratio) for p in result.pairs) == [
        ("latency", pytest.approx(1.0)),
        ("memory", pytest.approx(0.5)),
    ]


def test_accepts_models_as_well_as_json_values() -> None:
    model = ki.load_record(bundle(median=100))
    result = cmp.compare([model], [bundle(median=110)])
    assert result.pairs[0].ratio == pytest.approx(1.1)


# Real data ---------------------------------------------------------------------------------


def csv_ratios(gpu: str, kernel: str) -> dict[tuple[str, int], float]:
    """liger / torch medians per (mode, x) of one GPU's speed rows, straight from the CSV."""
    values: dict[tuple[str, str, int], float] = {}
    with SUBSET.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            wanted = (row["gpu_name"], row["kernel_name"], row["metric_name"])
            if wanted == (gpu, kernel, "speed"):
                key = (row["kernel_provider"], row["kernel_operation_mode"], int(row["x_value"]))
                values[key] = float(row["y_value_50"])
    return {
        (mode, x): v / values[("torch", mode, x)]
        for (provider, mode, x), v in values.items()
        if provider == "liger"
    }


def test_liger_b200_jsd_ratios_reproduce_the_csv() -> None:
    records = [
        b
        for b in liger.read_files([SUBSET])
        if ki.dump(b)["environment"]["spec"]["hardware"]["product"] == "NVIDIA B200"
        and ki.dump(b)["run"]["spec"]["workload"]["operation"] == "jsd"
    ]
    result = cmp.compare(records, records, base_provider="torch", new_provider="liger")
    latency = {
        (p.run.workload.pass_, p.run.workload.parameter("BT")): p.ratio
        for p in result.pairs
        if p.run.metric == "latency" and p.run.workload is not None
    }
    expected = csv_ratios("NVIDIA B200", "jsd")
    assert len(expected) == 12
    # Integer nanoseconds round the CSV's milliseconds: agreement to 1e-6 relative.
    assert latency == {k: pytest.approx(v, rel=1e-6) for k, v in expected.items()}
    # By hand: 5.783552169799805 ms / 2.2900800704956055 ms.
    assert latency[("forward", 1024)] == pytest.approx(2.52548, rel=1e-5)
    assert not result.unpaired


def test_harness_records_compared_with_themselves_are_all_unchanged(run_cli: RunCli) -> None:
    status, out, err = run_cli("compare", str(H200), str(H200), "--format", "json")
    assert status == 0, err
    rows = json.loads(out)
    assert len(rows) == 64
    assert {r["ratio"] for r in rows} == {1.0}
    assert not any(r["significant"] for r in rows)


# The command ---------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Any:
    def make(base: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[str, str]:
        return (
            str(write_jsonl(tmp_path / "base.jsonl", base)),
            str(write_jsonl(tmp_path / "new.jsonl", new)),
        )

    return make


@pytest.mark.parametrize(
    ("new_median", "gate", "expected"),
    [
        (120_000, "10", 1),  # 20% slower, significant: fails the 10% gate
        (108_000, "10", 0),  # 8% slower: within the gate
        (108_000, "5", 1),  # ... but not within 5%
        (80_000, "10", 0),  # an improvement never fails
        (100_000, "0", 0),  # unchanged
    ],
)
def test_gate_exit_codes(
    run_cli: RunCli, files: Any, new_median: int, gate: str, expected: int
) -> None:
    base, new = files([bundle(median=100_000)], [bundle(median=new_median)])
    status, _, err = run_cli("compare", base, new, "--fail-on-regression", gate)
    assert status == expected, err
    assert ("regression:" in err) == (expected == 1)


def test_gate_ignores_a_slowdown_that_is_not_significant(run_cli: RunCli, files: Any) -> None:
    base, new = files(
        [bundle(median=100_000, p20=90_000, p80=130_000)],
        [bundle(median=125_000, p20=110_000, p80=140_000)],
    )
    status, out, _ = run_cli("compare", base, new, "--fail-on-regression", "10")
    assert status == 0
    assert " ~" in out


def test_without_gate_a_regression_exits_zero(run_cli: RunCli, files: Any) -> None:
    base, new = files([bundle(median=100_000)], [bundle(median=200_000)])
    assert run_cli("compare", base, new)[0] == 0


def test_invalid_record_is_reported_and_exits_one(
    run_cli: RunCli, files: Any, tmp_path: Path
) -> None:
    base, new = files([bundle()], [bundle()])
    with open(new, "a", encoding="utf-8") as f:
        f.write('{"run": {}}\n')
    status, out, err = run_cli("compare", base, new)
    assert status == 1
    assert err.startswith(f"NEW: {new}:2:")
    assert "1 invalid record(s) left out" in err
    assert "1.000" in out


def test_json_lines_are_read_line_by_line_with_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(bundle()) + "\n\n" + '{"run": 1}\n', encoding="utf-8")
    runs = cmp.load_runs([tmp_path])
    assert [r.source for r in runs.runs] == [f"{path}:1"]
    assert runs.invalid == 1
    assert str(runs.problems[0]).startswith(f"{path}:3:")


def test_protocol_and_environment_documents_are_passed_over(tmp_path: Path) -> None:
    doc = bundle()
    path = write_jsonl(tmp_path / "mixed.jsonl", [doc["protocol"], doc, doc["environment"]])
    runs = cmp.load_runs([path])
    assert [r.source for r in runs.runs] == [f"{path}:2"]
    assert runs.invalid == 0
    assert len(cmp.compare([doc["protocol"], doc], [doc]).pairs) == 1


def test_missing_input_is_a_usage_error(run_cli: RunCli, tmp_path: Path) -> None:
    status, _, err = run_cli("compare", str(tmp_path / "none.jsonl"), str(tmp_path))
    assert status == 2
    assert err == f"kernelindex: {tmp_path / 'none.jsonl'}: no such file or directory\n"


def test_markdown_is_a_table_ready_for_a_pr_comment(run_cli: RunCli, files: Any) -> None:
    base, new = files(
        [bundle(median=2_000_000, p20=1_990_000, p80=2_010_000), bundle(product="NVIDIA B200")],
        [bundle(median=1_000_000, p20=990_000, p80=1_010_000)],
    )
    status, out, _ = run_cli("compare", base, new, "--format", "markdown")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("**1 pair(s)**, 1 not paired.")
    assert lines[2] == (
        "| workload | base | new | BASE median (p20-p80) | NEW median (p20-p80) | NEW/BASE"
        " | delta | notes |"
    )
    assert "| 2.000 ms (1.990-2.010) | 1.000 ms (0.9900-1.010) | 0.500 | -50.0% |" in lines[4]
    assert lines[5].startswith("| geomean |")
    assert any(line.startswith("- only in BASE: ") for line in lines)


def test_json_is_a_list_of_pairs_with_the_documented_keys(run_cli: RunCli, files: Any) -> None:
    base, new = files(
        [bundle(median=100_000), bundle(params={"tokens": 7, "dtype": "fp32"})],
        [bundle(median=90_000)],
    )
    status, out, _ = run_cli("compare", base, new, "--format", "json")
    assert status == 0
    paired, unpaired = json.loads(out)
    assert set(paired) == {
        "workload", "operation", "pass", "parameters", "workloadDigest", "metric", "unit",
        "base", "new", "ratio", "significant", "notes", "unpaired", "problem", "verdict",
        "evidence",
    }  # fmt: skip
    assert set(paired["base"]) == {
        "run", "source", "status", "failure", "observedAt", "provider", "entryPoint",
        "implementationDigest", "protocolDigest", "environmentDigest", "median", "p20", "p80",
        "noisy", "samples", "runs", "degraded",
    }  # fmt: skip
    assert paired["verdict"] == "improvement"
    assert paired["ratio"] == pytest.approx(0.9)
    assert paired["significant"] is True
    assert paired["unpaired"] is None
    assert unpaired["new"] is None
    assert unpaired["unpaired"] == "workload: parameters.tokens 7 vs 1024"


def test_csv_has_one_row_per_pair(run_cli: RunCli, files: Any) -> None:
    base, new = files([bundle(median=100_000)], [bundle(median=150_000)])
    status, out, _ = run_cli("compare", base, new, "--format", "csv")
    assert status == 0
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert float(row["ratio"]) == pytest.approx(1.5)
    assert row["significant"] == "True"
    assert row["base_implementation"] == "torch"


def test_threshold_option_is_a_percentage(run_cli: RunCli, files: Any) -> None:
    base, new = files([bundle(median=100_000)], [bundle(median=108_000)])
    assert run_cli("compare", base, new)[1].splitlines()[1].endswith("1.080     +8.0%")
    assert (
        run_cli("compare", base, new, "--threshold", "10")[1]
        .splitlines()[1]
        .endswith("1.080     ~")
    )
    status, _, err = run_cli("compare", base, new, "--threshold", "ten")
    assert status == 2
    assert "expected a percentage" in err


def test_provider_filters_compare_providers_of_one_file(run_cli: RunCli, files: Any) -> None:
    runs = [bundle("torch", 100_000), bundle("liger", 25_000)]
    base, _ = files(runs, [])
    status, out, _ = run_cli(
        "compare", base, base, "--base-provider", "torch", "--new-provider", "liger"
    )
    assert status == 0
    assert "0.250" in out
    assert "-75.0%" in out


def test_the_library_leaves_the_collector_alone_and_the_cli_pauses_it_for_a_command(
    tmp_path: Path,
) -> None:
    """compare in a library caller keeps the caller's collector as it is; the CLI pauses
    it for the command only, and resumes it after, also when the command fails."""
    import gc

    from kernelindex_sdk import _cli

    records = tmp_path / "runs.jsonl"
    write_jsonl(records, [bundle()])
    seen: list[bool] = []

    def spy(args: object, io: object) -> int:
        seen.append(gc.isenabled())
        raise KeyboardInterrupt

    assert gc.isenabled()
    cmp.compare(cmp.load_runs([records]), cmp.load_runs([records]))
    assert gc.isenabled()
    parsed = _cli._parser("validate").parse_args(["validate", str(records)])
    parsed.run = spy
    streams = _cli.Streams(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.BytesIO())
    assert _cli._run(parsed, streams) == 130
    assert seen == [False]
    assert gc.isenabled()


def _rate_run(metric: str, unit: str, value: float) -> dict[str, Any]:
    doc = bundle(median=None)
    doc["run"]["spec"]["measurements"] = [
        {"unit": unit, "value": value, "metric": metric, "statistic": "median"}
    ]
    return doc


@pytest.mark.parametrize(
    ("metric", "unit", "base", "new", "regression"),
    [
        ("bandwidth", "GB/s", 1000.0, 500.0, True),
        ("bandwidth", "GB/s", 1000.0, 2000.0, False),
        ("throughput", "TFLOP/s", 100.0, 50.0, True),
        ("throughput", "TFLOP/s", 100.0, 150.0, False),
        ("memory", "MiB", 100.0, 200.0, True),
        ("memory", "MiB", 200.0, 100.0, False),
    ],
)
def test_the_gate_reads_rates_as_better_larger(
    metric: str, unit: str, base: float, new: float, regression: bool
) -> None:
    """A bandwidth or throughput that drops is the regression; a size that grows is."""
    result = cmp.compare([_rate_run(metric, unit, base)], [_rate_run(metric, unit, new)])
    [pair] = result.pairs
    assert pair.significant
    assert bool(result.regressions(10)) == regression


# The compact form ------------------------------------------------------------------


def test_the_compact_form_gives_back_every_object_a_digest_stands_for() -> None:
    """Workloads are kept compact; RunSet.spec gives the object the run carried."""
    runs = cmp.load_runs([H200])
    docs = [json.loads(line) for line in H200.read_text("utf-8").splitlines() if line]
    assert len(runs.runs) == len(docs) > 1
    for run, doc in zip(runs.runs, docs, strict=True):
        spec = doc["run"]["spec"]
        for key in ("workload", "implementation"):
            assert runs.spec(spec[f"{key}Digest"]) == spec[key]
        assert runs.spec(spec["protocolDigest"]) == doc["protocol"]["spec"]
        assert runs.spec(spec["environmentDigest"]) == doc["environment"]["spec"]
        assert run.workload_digest == spec["workloadDigest"]
    assert runs.spec("sha256:" + "0" * 64) is None


def test_runs_share_one_string_per_digest() -> None:
    runs = cmp.load_runs([H200])
    assert len({id(r.environment_digest) for r in runs.runs}) == 1
    assert len({id(r.protocol_digest) for r in runs.runs}) == len(
        {r.protocol_digest for r in runs.runs}
    )


def test_verify_digests_leaves_out_a_record_whose_declared_digest_is_wrong(
    run_cli: RunCli,
    tmp_path: Path,
) -> None:
    lines = H200.read_text(encoding="utf-8").splitlines()[:4]
    doc = json.loads(lines[0])
    # The environment digest of another machine: the record claims a different identity.
    doc["run"]["spec"]["environmentDigest"] = "sha256:" + "ab" * 32
    lines[0] = json.dumps(doc)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    honest = tmp_path / "honest.jsonl"
    honest.write_text("\n".join(H200.read_text(encoding="utf-8").splitlines()[:4]) + "\n")

    # Trusted as declared, the tampered run is read and cannot pair.
    assert len(cmp.load_runs([tampered]).runs) == 4
    status, out, err = run_cli("compare", str(honest), str(tampered), "--format", "json")
    assert status == 0, err

    checked = cmp.load_runs([tampered], verify_digests=True)
    assert len(checked.runs) == 3
    assert checked.invalid == 1
    assert "environmentDigest" in str(checked.problems[0])
    status, out, err = run_cli(
        "compare", str(honest), str(tampered), "--format", "json", "--verify-digests"
    )
    assert status == 1
    assert "NEW: " in err
    assert "tampered.jsonl:1" in err
    rows = json.loads(out)
    assert sum(r["ratio"] == 1.0 for r in rows) == 3
    assert [r["unpaired"] for r in rows if r["ratio"] is None] == [
        "no torch run in NEW at this workload (NEW has liger, torch-compile, triton)"
    ]
    status, _, err = run_cli("report", str(tampered), "--verify-digests")
    assert status == 1
    assert "environmentDigest" in err


def test_a_side_carrying_only_digests_keeps_the_parameters_the_other_side_shows() -> None:
    base = [bundle(params={"tokens": t, "dtype": "fp32"}, median=100_000 * t) for t in (1, 2)]
    new = []
    for doc in base:
        slim = json.loads(json.dumps(doc))
        # The published example's shape: the run names its workload by digest only.
        del slim["run"]["spec"]["workload"]
        new.append(slim)
    result = cmp.compare(base, new)
    labels = sorted(result.label(p.base) for p in result.pairs if p.base is not None)
    assert labels == ["jsd forward tokens=1", "jsd forward tokens=2"]


def test_a_geomean_over_rows_all_within_the_noise_is_not_a_change() -> None:
    """Rows whose own spreads are 40% wide each move 30-50% faster: every row is ~, and so
    is their geometric mean, however far from 1 it is."""
    base = [
        bundle(median=100_000, p20=80_000, p80=120_000, params={"tokens": t}) for t in (1, 2, 3)
    ]
    new = [
        bundle(median=m, p20=int(m * 0.8), p80=int(m * 1.2), params={"tokens": t})
        for t, m in ((1, 70_000), (2, 60_000), (3, 50_000))
    ]
    result = cmp.compare(base, new)
    assert [p.verdict.kind for p in result.pairs if p.verdict] == ["same"] * 3
    [(metric, mean)] = result.geomean_verdicts().items()
    assert metric == "latency"
    assert mean.kind == "same"
    assert mean.ratio is not None
    assert mean.ratio < 0.7
    geomean = next(line for line in cmp.render(result).splitlines() if line.startswith("geomean"))
    assert geomean.split()[-1] == "~"


# Hostile input: record text that tries to forge a line, row, cell, heading or formula.
def _compare_output(text: str, fmt: str) -> str:
    base, new = compare_records(text)
    return cmp.render(cmp.compare(base, new), fmt)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_compare_tables_keep_their_shape(fmt: str) -> None:
    hostile, benign = _compare_output(HOSTILE, fmt), _compare_output(BENIGN, fmt)
    assert hostile.count("\n") == benign.count("\n")
    assert not RAW_CONTROL.search(hostile)
    assert not any(
        line.startswith(("kernelindex:", "#", "| forged")) for line in hostile.split("\n")
    )
    if fmt == "markdown":
        assert_markdown_shape(hostile, benign)


def test_compare_csv_has_no_formula_and_one_row_per_pair() -> None:
    hostile, benign = _compare_output(HOSTILE, "csv"), _compare_output(BENIGN, "csv")
    rows = list(csv.reader(io.StringIO(hostile)))
    assert len(rows) == len(list(csv.reader(io.StringIO(benign))))
    assert hostile.count("\n") == benign.count("\n")
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
            assert not RAW_CONTROL.search(cell)
    # The text is still there to read, made inert.
    assert any(cell.startswith("'=HYPERLINK(") for row in rows for cell in row)


def test_compare_json_stays_strict_json_with_the_text_intact() -> None:
    out = _compare_output(HOSTILE, "json")

    def refuse(name: str) -> None:
        raise AssertionError(f"non-JSON constant {name}")

    rows = json.loads(out, parse_constant=refuse)
    assert len(rows) == len(json.loads(_compare_output(BENIGN, "json")))
    # JSON carries the exact text: its reader decides how to show it.
    assert rows[0]["base"]["provider"] == HOSTILE
    assert "\n" not in out.replace(",\n", "").replace("[\n", "").replace("\n]", "").strip()


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_stderr_lines_of_the_gate_cannot_be_forged(tmp_path: Any) -> None:
    lines = {}
    for text in (HOSTILE, BENIGN):
        base, new = compare_records(text)
        b = write_jsonl(tmp_path / "b.jsonl", base)
        n = write_jsonl(tmp_path / "n.jsonl", new)
        status, _, err = _cli("compare", str(b), str(n), "--fail-on-regression", "5")
        assert status == 1
        lines[text] = err.split("\n")
    assert len(lines[HOSTILE]) == len(lines[BENIGN])
    assert lines[HOSTILE][0].startswith("regression: ")
    assert not any(line.startswith("kernelindex: 0") for line in lines[HOSTILE])
    assert not RAW_CONTROL.search("\n".join(lines[HOSTILE]))


def _with_samples(doc: dict[str, Any], samples: int) -> dict[str, Any]:
    doc["run"]["spec"]["timing"]["samples"] = samples
    return doc


def test_a_pooled_row_shows_the_fewest_samples_the_verdict_judged_with() -> None:
    """The row shows what was judged: the pool's fewest samples, not the standing run's."""
    base = [
        at_commit(
            _with_samples(bundle(median=m, observed=f"2026-11-30T00:00:0{i}.000Z"), n), "a" * 40
        )
        for i, (m, n) in enumerate(((100_000, 101), (100_100, 1000)))
    ]
    (pair,) = cmp.compare(base, [_with_samples(bundle(median=100_000), 500)]).pairs
    assert pair.base is not None
    assert (pair.base.runs, pair.base.samples) == (2, 101)

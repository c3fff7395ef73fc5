"""Liger-Kernel CSV import: the published row reproduced, general rules, and bad rows."""

from __future__ import annotations

import csv
import io
import itertools
import warnings
from pathlib import Path
from typing import Any

import pytest
from _liger_csv import EXAMPLE_ROW, row, write_csv

import kernelindex_sdk as ki
from kernelindex_sdk.errors import UnsupportedSourceError
from kernelindex_sdk.importers import liger
from kernelindex_sdk.importers.gpus import lookup_gpu

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SUBSET = FIXTURES / "liger" / "all_benchmark_data.subset.csv"
FUSED_MOE = FIXTURES / "liger" / "fused_moe.csv"


def read_rows(tmp_path: Path, *rows: dict[str, str]) -> list[dict[str, Any]]:
    return [ki.dump(b) for b in liger.read(write_csv(tmp_path / "rows.csv", list(rows)))]


def test_published_row_becomes_the_published_record(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    """Every field equal but the two digests whose preimages only the publisher knew."""
    [bundle] = read_rows(tmp_path, EXAMPLE_ROW)
    spec = bundle["run"]["spec"]
    assert set(spec.pop("workload")) == {"operation", "pass", "parameters"}
    # torch's code is not Liger's release: its version rides the labels only.
    assert spec.pop("implementation") == {"provider": "torch"}
    for field in ("workloadDigest", "implementationDigest"):
        assert spec[field] != example["run"]["spec"][field]
        spec[field] = example["run"]["spec"][field]
    assert bundle == example


def test_published_row_reproduces_the_published_bytes(tmp_path: Path, example_text: str) -> None:
    [bundle] = list(liger.read(write_csv(tmp_path / "one.csv", [EXAMPLE_ROW])))
    text = ki.dumps(bundle)
    assert text.count("\n") > example_text.count("\n")  # plus workload and implementation
    assert '"protocolDigest": "sha256:a79eaf4d' in text
    assert '"environmentDigest": "sha256:ad459e64' in text


def test_baselines_carry_no_liger_version_and_every_row_names_its_kernels_baseline(
    tmp_path: Path,
) -> None:
    """A huggingface or torch row ran another project's code: its implementation is its
    provider alone (the release rides the labels), and each Liger row names the baseline
    its kernel's rows measured, huggingface before torch (docs/importers.md)."""
    rows = [
        {**EXAMPLE_ROW, "kernel_provider": provider, "kernel_name": kernel}
        for kernel, providers in (
            ("jsd", ("liger", "torch")),
            ("kto_loss", ("liger", "huggingface", "torch")),
        )
        for provider in providers
    ]
    found = {
        (
            b["run"]["spec"]["workload"]["operation"],
            b["run"]["spec"]["implementation"]["provider"],
        ): b["run"]
        for b in read_rows(tmp_path, *rows)
    }
    for (kernel, provider), run in found.items():
        implementation = run["spec"]["implementation"]
        labels = run["metadata"]["labels"]
        assert labels["liger_version"] == "0.8.0"
        if provider == "liger":
            assert implementation == {"provider": "liger", "packages": {"liger-kernel": "0.8.0"}}
        else:
            assert implementation == {"provider": provider}
        expected = "huggingface" if kernel == "kto_loss" else "torch"
        assert labels.get("kernelindex.dev/baseline") == (
            None if provider == expected else expected
        )


def test_every_liger_history_file_keeps_importing() -> None:
    """Every version of Liger's CSV the fixtures hold (shared/data/liger/history, unchanged)
    imports without a rejected row."""
    files = sorted((FIXTURES / "liger" / "history").glob("*.csv"))
    assert len(files) == 4
    rejected: list[str] = []
    for path in files:
        bundles = list(liger.read(path, on_error=lambda e: rejected.append(str(e))))
        assert bundles, path
    assert rejected == []


def test_every_subset_row_imports_valid_with_verified_digests_and_unique_names() -> None:
    bundles = [ki.dump(b) for b in liger.read(SUBSET)]
    assert len(bundles) == 236
    for bundle in bundles:
        assert ki.validate(bundle, verify_digests=True) == []
    names = [b["run"]["metadata"]["name"] for b in bundles]
    assert len(set(names)) == len(names)


def _digests(bundle: dict[str, Any]) -> tuple[str, ...]:
    spec = bundle["run"]["spec"]
    return tuple(
        spec[f]
        for f in ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")
    )


def test_digest_sharing_follows_what_each_digest_covers() -> None:
    bundles = [ki.dump(b) for b in liger.read(SUBSET)]
    rows = list(csv.DictReader(SUBSET.open(encoding="utf-8")))
    by = dict(zip(range(len(rows)), zip(rows, bundles, strict=True), strict=True))
    for (r1, b1), (r2, b2) in itertools.combinations(by.values(), 2):
        s1, s2 = b1["run"]["spec"], b2["run"]["spec"]
        same_protocol = (r1["kernel_operation_mode"], r1["metric_name"]) == (
            r2["kernel_operation_mode"],
            r2["metric_name"],
        )
        assert (s1["protocolDigest"] == s2["protocolDigest"]) == same_protocol
        assert (s1["environmentDigest"] == s2["environmentDigest"]) == (
            r1["gpu_name"] == r2["gpu_name"]
        )
        computed = (
            "kernel_name",
            "kernel_operation_mode",
            "x_name",
            "x_value",
            "extra_benchmark_config_str",
        )
        if any(r1[c] != r2[c] for c in computed):
            assert s1["workloadDigest"] != s2["workloadDigest"]
        # A baseline's implementation is its provider; Liger's carries its release.
        liger_code = r1["kernel_provider"].startswith("liger")
        if r1["kernel_provider"] != r2["kernel_provider"] or (
            liger_code and r1["liger_version"] != r2["liger_version"]
        ):
            assert s1["implementationDigest"] != s2["implementationDigest"]
        else:
            assert s1["implementationDigest"] == s2["implementationDigest"]
        assert _digests(b1) != _digests(b2)


def test_memory_rows_are_mib_measurements_without_timing(tmp_path: Path) -> None:
    [bundle] = read_rows(
        tmp_path,
        row(
            metric_name="memory",
            metric_unit="MB",
            y_value_50="100.5",
            y_value_20="100.0",
            y_value_80="101.0",
        ),
    )
    spec = bundle["run"]["spec"]
    assert "timing" not in spec
    assert spec["measurements"][0] == {
        "unit": "MiB",
        "value": 100.5,
        "metric": "memory",
        "statistic": "median",
    }
    assert spec["sourceNative"]["metrics"] == {"MB_20": 100.0, "MB_50": 100.5, "MB_80": 101.0}
    assert bundle["protocol"]["spec"]["measurement"]["timer"] == "not_applicable"
    assert bundle["run"]["metadata"]["name"].endswith("-memory-2026-05-27-17-14-29")


@pytest.mark.parametrize(
    ("mode", "schema_pass"),
    [
        ("forward", "forward"),
        ("backward", "backward"),
        ("full", "full"),
        ("no-grad-forward", "no_grad_forward"),
    ],
)
def test_every_liger_pass(tmp_path: Path, mode: str, schema_pass: str) -> None:
    [bundle] = read_rows(tmp_path, row(kernel_operation_mode=mode))
    assert bundle["run"]["spec"]["workload"]["pass"] == schema_pass
    assert bundle["protocol"]["metadata"]["name"] == f"liger-bench-do-bench-{mode}"


def test_non_numeric_x_values_such_as_model_configs(tmp_path: Path) -> None:
    [bundle] = read_rows(
        tmp_path, row(x_name="model_config", x_label="model", x_value="llama_3_8b")
    )
    assert bundle["run"]["spec"]["workload"]["parameters"]["model_config"] == "llama_3_8b"
    assert "-modelconfig-llama-3-8b-" in bundle["run"]["metadata"]["name"]


@pytest.mark.parametrize(
    ("x_name", "slug"),
    [
        ("T", "seqlen2048"),
        ("BT", "tokens2048"),
        ("V", "vocab2048"),
        ("H", "hidden2048"),
        ("N", "n2048"),
        ("B", "batch2048"),
        ("L", "length2048"),
        ("C", "channels2048"),
        ("E", "experts2048"),
        ("seq_len", "seqlen2048"),
        ("hidden_dim", "hiddendim2048"),
    ],
)
def test_x_names_get_readable_slugs(tmp_path: Path, x_name: str, slug: str) -> None:
    [bundle] = read_rows(
        tmp_path, row(x_name=x_name, x_value="2048", extra_benchmark_config_str="{}")
    )
    assert f"-{slug}-fp32-" in bundle["run"]["metadata"]["name"]


def test_config_dtype_is_used_and_jsd_defaults_to_fp32(tmp_path: Path) -> None:
    [with_dtype] = read_rows(
        tmp_path, row(extra_benchmark_config_str='{"V": 4096, "dtype": "torch.bfloat16"}')
    )
    assert with_dtype["run"]["spec"]["workload"]["parameters"]["dtype"] == "bf16"
    assert "-bf16-" in with_dtype["run"]["metadata"]["name"]
    [without] = read_rows(tmp_path, EXAMPLE_ROW)
    assert without["run"]["spec"]["workload"]["parameters"]["dtype"] == "fp32"


@pytest.mark.parametrize(
    ("gpu", "architecture"),
    [
        ("NVIDIA A100-SXM4-80GB", "sm_80"),
        ("NVIDIA GeForce RTX 3090", "sm_86"),
        ("NVIDIA GeForce RTX 4090", "sm_89"),
        ("NVIDIA H100 80GB HBM3", "sm_90"),
        ("NVIDIA H200", "sm_90"),
        ("NVIDIA B200", "sm_100"),
        ("AMD Instinct MI300X", "gfx942"),
    ],
)
def test_known_gpus_get_their_architecture(tmp_path: Path, gpu: str, architecture: str) -> None:
    [bundle] = read_rows(tmp_path, row(gpu_name=gpu))
    assert bundle["environment"]["spec"]["hardware"]["architecture"] == architecture


def test_unknown_gpu_imports_without_architecture_and_says_so_once(tmp_path: Path) -> None:
    notices: list[str] = []
    path = write_csv(tmp_path / "rows.csv", [row(gpu_name="Acme Tensor 9000")] * 2)
    bundles = [ki.dump(b) for b in liger.read(path, on_notice=notices.append)]
    assert all("architecture" not in b["environment"]["spec"]["hardware"] for b in bundles)
    assert lookup_gpu("Acme Tensor 9000") is None
    assert notices == [f"{path}:2: unknown GPU 'Acme Tensor 9000': imported without architecture"]


def test_an_unknown_gpu_is_no_warning_even_when_warnings_are_errors(tmp_path: Path) -> None:
    """Notices are not Python warnings: PYTHONWARNINGS=error cannot turn them into tracebacks."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [bundle] = read_rows(tmp_path, row(gpu_name="Acme Tensor 9000"))
    assert bundle["environment"]["spec"]["hardware"]["vendor"] == "unknown"


def _fused_moe_rows() -> list[dict[str, str]]:
    with FUSED_MOE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_fused_moe_row_imports_with_the_null_swept_dimension_as_its_x_value() -> None:
    """Upstream writes the swept dimension as null ("see x"): T or E is the row's x value."""
    rows = _fused_moe_rows()
    assert {r["x_name"] for r in rows} == {"T", "E"}
    assert all('"' + r["x_name"] + '": null' in r["extra_benchmark_config_str"] for r in rows)
    bundles = [ki.dump(b) for b in liger.read(FUSED_MOE)]
    assert len(bundles) == len(rows) == 30
    for source, bundle in zip(rows, bundles, strict=True):
        assert ki.validate(bundle, verify_digests=True) == []
        parameters = bundle["run"]["spec"]["workload"]["parameters"]
        fixed = "E" if source["x_name"] == "T" else "T"
        assert parameters[source["x_name"]] == int(source["x_value"])
        assert parameters[fixed] == (128 if fixed == "E" else 8192)
        assert parameters["sweep_dim"] == source["x_name"]
        assert parameters["dtype"] == "bf16"
    names = [b["run"]["metadata"]["name"] for b in bundles]
    assert len(set(names)) == len(names)
    workloads = {b["run"]["spec"]["workloadDigest"] for b in bundles}
    # 3 T values and 2 E values, each timed forward and full and measured full:
    # the passes differ, the providers share a workload.
    assert len(workloads) == 5 * 2


def test_a_null_swept_dimension_means_the_same_workload_as_its_value(tmp_path: Path) -> None:
    null, explicit = (
        row(
            kernel_name="fused_moe",
            x_name="T",
            x_value="128",
            extra_benchmark_config_str=f'{{"sweep_dim": "T", "T": {t}, "E": 128}}',
        )
        for t in ("null", "128")
    )
    first, second = read_rows(tmp_path, null, explicit)
    assert first["run"]["spec"]["workload"] == second["run"]["spec"]["workload"]


@pytest.mark.parametrize(
    ("config", "x_name", "found"),
    [
        # The fixed dimension null: nothing says its value.
        ('{"sweep_dim": "T", "T": null, "E": null}', "T", "'E' is null"),
        # The swept dimension's key null, but the row sweeps another one.
        ('{"sweep_dim": "E", "T": null, "E": 128}', "E", "'T' is null"),
        ('{"sweep_dim": "T", "T": null, "dtype": null}', "T", "'dtype' is null"),
        # The swept dimension given a value other than x.
        ('{"sweep_dim": "T", "T": 256}', "T", "x_name 'T' is 128"),
        # Nested nulls are no scalar either.
        ('{"sweep_dim": "T", "T": [null]}', "T", "'T' is an array"),
    ],
)
def test_any_other_null_in_a_config_is_still_a_row_error(
    tmp_path: Path, config: str, x_name: str, found: str
) -> None:
    bad = row(
        kernel_name="fused_moe", x_name=x_name, x_value="128", extra_benchmark_config_str=config
    )
    errors: list[UnsupportedSourceError] = []
    path = write_csv(tmp_path / "rows.csv", [EXAMPLE_ROW, bad])
    bundles = list(liger.read(path, on_error=errors.append))
    assert len(bundles) == 1
    [error] = errors
    assert error.line == 3
    assert found in error.reason


def test_repeated_rows_still_get_unique_names(tmp_path: Path) -> None:
    bundles = read_rows(tmp_path, EXAMPLE_ROW, EXAMPLE_ROW, EXAMPLE_ROW)
    names = [b["run"]["metadata"]["name"] for b in bundles]
    assert names[1:] == [names[0] + "-2", names[0] + "-3"]


def test_bad_rows_are_reported_with_line_and_reason_and_the_rest_convert(tmp_path: Path) -> None:
    rows = [
        EXAMPLE_ROW,
        row(y_value_50="fast"),
        row(metric_unit="s"),
        row(extra_benchmark_config_str="{oops"),
        row(timestamp="yesterday"),
        row(kernel_operation_mode="sideways"),
        row(x_value="2048"),
    ]
    errors: list[UnsupportedSourceError] = []
    bundles = list(liger.read(write_csv(tmp_path / "mixed.csv", rows), on_error=errors.append))
    assert len(bundles) == 2
    assert [e.line for e in errors] == [3, 4, 5, 6, 7]
    assert "y_value_50 is not a number: 'fast'" in str(errors[0])
    assert "speed in 's'" in errors[1].reason
    assert str(errors[0]).startswith(f"{tmp_path / 'mixed.csv'}:3: ")


def test_without_on_error_a_bad_row_raises(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedSourceError, match=":2: y_value_20"):
        list(liger.read(write_csv(tmp_path / "bad.csv", [row(y_value_20="-1")])))


def test_a_file_without_liger_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(UnsupportedSourceError, match="not a Liger-Kernel benchmark CSV"):
        list(liger.read(path))


def test_quoted_multi_line_config_keeps_line_numbers(tmp_path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=liger.COLUMNS)
    writer.writeheader()
    writer.writerow(row(extra_benchmark_config_str='{"V":\n 4096}'))
    writer.writerow(row(y_value_50="x"))
    path = tmp_path / "multi.csv"
    path.write_text(buffer.getvalue())
    errors: list[UnsupportedSourceError] = []
    assert len(list(liger.read(path, on_error=errors.append))) == 1
    assert errors[0].line == 4


def test_names_stay_unique_across_the_files_of_one_import(tmp_path: Path) -> None:
    first = write_csv(tmp_path / "a.csv", [EXAMPLE_ROW])
    second = write_csv(tmp_path / "b.csv", [EXAMPLE_ROW])
    names = [b.run.metadata.name for b in liger.read_files([first, second])]
    assert names[1] == names[0] + "-2"

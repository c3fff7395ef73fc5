"""Liger-Kernel CSV import: the published row reproduced, general rules, and bad rows."""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from _liger_csv import EXAMPLE_ROW, csv_text, row, write_csv

import kernelindex_sdk as ki
from kernelindex_sdk.documents import validate_paths
from kernelindex_sdk.errors import UnsupportedSourceError
from kernelindex_sdk.importers import _csvfile, liger
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


# Hostile input: malformed, deep, oddly encoded or clashing Liger CSV rows and files.
DEEP_ARRAY = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000


def convert(path: Path) -> tuple[list[dict[str, Any]], list[UnsupportedSourceError]]:
    errors: list[UnsupportedSourceError] = []
    bundles = [ki.dump(b) for b in liger.read(path, on_error=errors.append)]
    return bundles, errors


# Each bad row sits between two good rows: header line 1, good 2, bad 3, good 4.
@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (row(gpu_name="caf\udcff"), "gpu_name is not UTF-8: bytes b'\\xff'"),
        (row(x_value="10\udce024"), "x_value is not UTF-8"),
        (row(extra_benchmark_config_str="x" * 140_000), "longer than 131072 characters"),
        (row(extra_benchmark_config_str=DEEP_ARRAY), "nested too deeply"),
        (row(extra_benchmark_config_str=DEEP_OBJECT), "nested too deeply"),
        (row(y_value_50="1e308"), "y_value_50 1e+308 ms is beyond 2^53 - 1 ns"),
        (row(y_value_80="1e400"), "y_value_80 '1e400' is beyond the float range"),
        (row(y_value_20="9" * 5000), "beyond the float range"),
        (row(x_value="9" * 5000), "x_value '999"),
        (row(extra_benchmark_config_str='{"n": ' + "9" * 5000 + "}"), "beyond 2^53 - 1"),
        (row(timestamp="0001-01-01 00:00:00+01:00"), "outside the years 1 to 9999 in UTC"),
        (row(timestamp="9999-12-31 23:59:59-01:00"), "outside the years 1 to 9999 in UTC"),
        (row(timestamp="2026-02-30 00:00:00"), "timestamp is not ISO 8601"),
        (row(kernel_name="JSD"), "kernel_name 'JSD' is not an operation name"),
        (row(x_value=""), "x_value must not be empty"),
    ],
)
def test_one_bad_row_costs_only_itself(tmp_path: Path, bad: dict[str, str], reason: str) -> None:
    second = row(timestamp="2026-05-27 17:14:30")
    bundles, errors = convert(write_csv(tmp_path / "rows.csv", [EXAMPLE_ROW, bad, second]))
    assert len(bundles) == 2
    assert [(e.line, e.source) for e in errors] == [(3, str(tmp_path / "rows.csv"))]
    assert reason in errors[0].reason
    assert "\n" not in str(errors[0])


def test_without_on_error_a_bad_row_raises_a_kernelindex_error(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "rows.csv", [row(extra_benchmark_config_str=DEEP_ARRAY)])
    with pytest.raises(UnsupportedSourceError, match=r"rows\.csv:2: .* nested too deeply"):
        list(liger.read(path))


def test_a_record_over_several_lines_is_reported_at_its_first_line(tmp_path: Path) -> None:
    bad = row(extra_benchmark_config_str='{"V":\n\n 4096,\n "oops"}')
    path = write_csv(tmp_path / "rows.csv", [EXAMPLE_ROW, bad, row(y_value_50="x")])
    bundles, errors = convert(path)
    assert len(bundles) == 1
    assert [e.line for e in errors] == [3, 7]
    assert "not JSON" in errors[0].reason
    assert "y_value_50 is not a number: 'x'" in errors[1].reason


def test_broken_quoting_and_field_counts_are_row_errors(tmp_path: Path) -> None:
    lines = csv_text([EXAMPLE_ROW]).splitlines()
    good = lines[1]
    text = [lines[0], good, good + ",extra", good.rsplit(",", 1)[0], 'jsd,"tor"ch,x', "", good]
    path = tmp_path / "rows.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    bundles, errors = convert(path)
    assert len(bundles) == 2
    assert [(e.line, e.reason[:28]) for e in errors] == [
        (3, "expected 15 fields as in the"),
        (4, "expected 15 fields as in the"),
        (5, "not CSV: ',' expected after "),
    ]


def test_an_unterminated_quote_says_which_lines_it_swallowed(tmp_path: Path) -> None:
    lines = csv_text([row(extra_benchmark_config_str="")]).splitlines()
    path = tmp_path / "rows.csv"
    path.write_text("\n".join([*lines, 'jsd,"torch', lines[1], lines[1]]) + "\n")
    bundles, errors = convert(path)
    assert len(bundles) == 1
    assert [e.line for e in errors] == [3]
    assert "(lines 3-5 read as one record)" in errors[0].reason


def test_crlf_cr_and_lf_line_ends_all_read(tmp_path: Path) -> None:
    for end in ("\r\n", "\r", "\n"):
        path = tmp_path / "rows.csv"
        path.write_bytes(csv_text([EXAMPLE_ROW, EXAMPLE_ROW], lineterminator=end).encode())
        bundles, errors = convert(path)
        assert (len(bundles), errors) == (2, [])


def test_excel_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(codecs.BOM_UTF8 + csv_text([EXAMPLE_ROW]).encode())
    bundles, errors = convert(path)
    assert (len(bundles), errors) == (1, [])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (codecs.BOM_UTF16_LE + csv_text([EXAMPLE_ROW]).encode("utf-16-le"), "UTF-16"),
        (codecs.BOM_UTF16_BE + csv_text([EXAMPLE_ROW]).encode("utf-16-be"), "UTF-16"),
        (codecs.BOM_UTF32_LE + csv_text([EXAMPLE_ROW]).encode("utf-32-le"), "UTF-32"),
        (csv_text([EXAMPLE_ROW]).encode("utf-16-le"), "NUL characters"),
        (csv_text([EXAMPLE_ROW]).encode().replace(b"gpu_name", b"gpu\xff"), "header is not UTF-8"),
        (b"", "the file is empty"),
        (b"\r\n" + csv_text([EXAMPLE_ROW]).encode(), "line 1 holds no header"),
        (b"a,b\n1,2\n", "not a Liger-Kernel benchmark CSV: no column kernel_name"),
        (csv_text([]).encode().replace(b"\r\n", b",x_value\r\n"), "repeats column 'x_value'"),
        (b'"kernel_name\n', "header is not CSV"),
    ],
)
def test_a_file_level_failure_is_one_error_and_the_next_file_still_imports(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_bytes(data)
    good = write_csv(tmp_path / "good.csv", [EXAMPLE_ROW])
    errors: list[UnsupportedSourceError] = []
    bundles = list(liger.read_files([bad, good], on_error=errors.append))
    assert len(bundles) == 1
    assert [(e.source, e.line) for e in errors] == [(str(bad), 1)]
    assert reason in errors[0].reason
    with pytest.raises(UnsupportedSourceError, match=reason):
        list(liger.read(bad))


def test_a_line_without_end_stops_the_file_with_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/dev/zero has no line end; a smaller limit shows the same path quickly."""
    monkeypatch.setattr(_csvfile, "MAX_LINE_CHARS", 1000)
    path = tmp_path / "rows.csv"
    path.write_text(csv_text([EXAMPLE_ROW]) + "x" * 5000, encoding="utf-8")
    bundles, errors = convert(path)
    assert len(bundles) == 1
    assert [e.line for e in errors] == [3]
    assert "longer than 1000 characters" in errors[0].reason


def test_spellings_of_one_gpu_and_symbol_names_give_valid_unique_records(tmp_path: Path) -> None:
    gpus = ["NVIDIA B200", "nvidia b200", "NVIDIA  B200", "@@@", "###", "Über GPU", "ü"]
    rows = [row(gpu_name=g) for g in gpus]
    out = tmp_path / "out.jsonl"
    notices: list[str] = []
    summary = liger.import_files(
        [write_csv(tmp_path / "gpus.csv", rows)], out, on_notice=notices.append
    )
    assert len(notices) == 4  # '@@@', '###', 'Über GPU', 'ü': once each
    assert all("unknown GPU" in n for n in notices)
    assert (summary.imported, summary.rejected) == (len(gpus), 0)
    assert list(validate_paths([out], verify_digests=True)) == []
    bundles = [json.loads(line) for line in out.read_text().splitlines()]
    runs = [b["run"]["metadata"]["name"] for b in bundles]
    assert len(set(runs)) == len(runs)
    environments = {b["environment"]["metadata"]["name"] for b in bundles}
    assert len(environments) == len(gpus)
    assert bundles[0]["environment"]["metadata"]["name"] == "liger-bench-nvidia-b200"


def test_x_name_dtype_keeps_the_x_value(tmp_path: Path) -> None:
    rows = [
        row(x_name="dtype", x_value=dtype, extra_benchmark_config_str='{"V": 4096}')
        for dtype in ("torch.bfloat16", "torch.float16", "fp8")
    ]
    bundles, errors = convert(write_csv(tmp_path / "rows.csv", rows))
    assert errors == []
    got = [b["run"]["spec"]["workload"]["parameters"]["dtype"] for b in bundles]
    assert got == ["bf16", "fp16", "fp8"]
    assert len({b["run"]["spec"]["workloadDigest"] for b in bundles}) == 3
    assert "-dtype-bf16-" in bundles[0]["run"]["metadata"]["name"]


def test_a_config_entry_named_like_x_must_agree_with_it(tmp_path: Path) -> None:
    rows = [
        row(
            x_name="dtype", x_value="torch.bfloat16", extra_benchmark_config_str='{"dtype": "bf16"}'
        ),
        row(
            x_name="dtype", x_value="torch.bfloat16", extra_benchmark_config_str='{"dtype": "fp16"}'
        ),
        row(x_name="T", x_value="2048", extra_benchmark_config_str='{"T": 2048.0}'),
        row(x_name="T", x_value="2048", extra_benchmark_config_str='{"T": 512}'),
        row(x_name="T", x_value="2048", extra_benchmark_config_str='{"T": "2048"}'),
    ]
    bundles, errors = convert(write_csv(tmp_path / "rows.csv", rows))
    assert len(bundles) == 2
    assert [e.line for e in errors] == [3, 5, 6]
    assert "x_name 'dtype' is 'bf16' but extra_benchmark_config_str has 'dtype': 'fp16'" in (
        errors[0].reason
    )


CONFIG_PAIRS = [
    ('{"beta": NaN}', '{"beta": "nan"}'),
    ('{"beta": Infinity}', '{"beta": "inf"}'),
    ('{"shape": [1, 2]}', '{"shape": "[1,2]"}'),
    ('{"m": {"a": 1}}', '{"m": "{\\"a\\":1}"}'),
    ('{"n": 9007199254740993}', '{"n": "9007199254740993"}'),
    ('{"n": null}', '{"n": "none"}'),
    ('{"n": null}', '{"n": "null"}'),
    ('{"n": null}', "{}"),
    ('{"flag": true}', '{"flag": "true"}'),
    ('{"beta": 0.5}', '{"beta": "0.5"}'),
    ('{"n": 1, "n": 2}', '{"n": 2}'),
]


@pytest.mark.parametrize(("first", "second"), CONFIG_PAIRS)
def test_configs_that_differ_never_share_a_workload_digest(
    tmp_path: Path, first: str, second: str
) -> None:
    rows = [row(extra_benchmark_config_str=c) for c in (first, second)]
    bundles, errors = convert(write_csv(tmp_path / "rows.csv", rows))
    assert len(bundles) + len(errors) == 2
    assert all(e.reason for e in errors)
    digests = [b["run"]["spec"]["workloadDigest"] for b in bundles]
    assert len(set(digests)) == len(digests)


def test_workload_parameters_keep_value_and_type(tmp_path: Path) -> None:
    config = {"beta": 0.5, "flag": True, "off": False, "mode": "a b", "n": -3, "big": 2**53 - 1}
    [bundle], errors = convert(
        write_csv(tmp_path / "rows.csv", [row(extra_benchmark_config_str=json.dumps(config))])
    )
    assert errors == []
    parameters = bundle["run"]["spec"]["workload"]["parameters"]
    for key, value in config.items():
        assert parameters[key] == value
        assert type(parameters[key]) is type(value)


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("x_value", "1_024"),
        ("x_value", "\u0661\u0660\u0662\u0664"),
        ("x_value", "1024\u00a0"),
        ("x_value", "nan"),
        ("x_value", "Infinity"),
        ("x_value", "\uff11\uff10"),
        ("y_value_50", "2_2"),
        ("y_value_50", "\u0662"),
        ("y_value_20", "inf"),
    ],
)
def test_loose_numbers_are_refused(tmp_path: Path, field: str, text: str) -> None:
    bundles, errors = convert(write_csv(tmp_path / "rows.csv", [row(**{field: text})]))
    assert bundles == []
    assert [e.line for e in errors] == [2]
    assert f"{field} is not a CSV number" in errors[0].reason


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e3", 1000), ("+5", 5), ("1024.0", 1024), (".5", 0.5), ("5.", 5), ("-0.25", -0.25)],
)
def test_csv_numbers_are_read(tmp_path: Path, text: str, value: float) -> None:
    [bundle], _ = convert(write_csv(tmp_path / "rows.csv", [row(x_value=text)]))
    got = bundle["run"]["spec"]["workload"]["parameters"]["BT"]
    assert (got, type(got)) == (value, type(value))


def test_every_accepted_row_of_a_hostile_mix_validates_with_unique_names(tmp_path: Path) -> None:
    """Rows from every case above in one file: what is written validates as one input."""
    rows = [
        row(gpu_name=g, extra_benchmark_config_str=c, x_value=x)
        for g, c, x in itertools.product(
            ["NVIDIA B200", "nvidia b200", "@@@"],
            [pair[i] for pair in CONFIG_PAIRS for i in (0, 1)],
            ["1024", "1_024", "llama 3"],
        )
    ]
    out = tmp_path / "out.jsonl"
    errors: list[UnsupportedSourceError] = []
    notices: list[str] = []
    summary = liger.import_files(
        [write_csv(tmp_path / "mix.csv", rows)],
        out,
        on_error=errors.append,
        on_notice=notices.append,
    )
    assert any("'@@@'" in n for n in notices)
    assert summary.imported + summary.rejected == len(rows)
    assert summary.imported > 0
    assert len(errors) == summary.rejected
    assert list(validate_paths([out], verify_digests=True)) == []

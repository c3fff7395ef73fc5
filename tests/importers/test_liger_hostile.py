"""Hostile Liger CSVs: a bad row costs only itself, no name clashes, no silent data loss."""

from __future__ import annotations

import codecs
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from _liger_csv import EXAMPLE_ROW, csv_text, row, write_csv

import kernelindex_sdk as ki
from kernelindex_sdk.documents import validate_paths
from kernelindex_sdk.errors import UnsupportedSourceError
from kernelindex_sdk.importers import _csvfile, liger

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

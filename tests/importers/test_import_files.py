"""Importing into a JSON Lines file: nothing made before the inputs open, the output never
an input, and a re-import adds only what the file lacks."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from _liger_csv import EXAMPLE_ROW, row, write_csv

from kernelindex_sdk._cli import main
from kernelindex_sdk.documents import validate_paths
from kernelindex_sdk.errors import InputError
from kernelindex_sdk.importers import liger

SUBSET = (
    Path(__file__).resolve().parent.parent / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def names(path: Path) -> list[str]:
    return [json.loads(line)["run"]["metadata"]["name"] for line in path.read_text().splitlines()]


def test_a_missing_input_creates_no_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(InputError, match=r"missing\.csv: No such file"):
        liger.import_files([tmp_path / "missing.csv"], out)
    assert not out.exists()


def test_a_missing_later_input_stops_before_anything_is_written(tmp_path: Path) -> None:
    good = write_csv(tmp_path / "good.csv", [EXAMPLE_ROW])
    out = tmp_path / "out.jsonl"
    status, _, err = run(
        "import", "liger", str(good), str(tmp_path / "missing.csv"), "-o", str(out)
    )
    assert status == 2
    assert err == f"kernelindex: {tmp_path / 'missing.csv'}: No such file or directory\n"
    assert not out.exists()


def test_a_directory_input_or_output_is_refused(tmp_path: Path) -> None:
    good = write_csv(tmp_path / "good.csv", [EXAMPLE_ROW])
    with pytest.raises(InputError, match="is a directory, expected a CSV file"):
        liger.import_files([tmp_path], tmp_path / "out.jsonl")
    with pytest.raises(InputError, match="is a directory, expected a JSON Lines file"):
        liger.import_files([good], tmp_path)


def test_only_bad_rows_create_no_output(tmp_path: Path) -> None:
    bad = write_csv(tmp_path / "bad.csv", [row(y_value_50="x")])
    out = tmp_path / "out.jsonl"
    summary = liger.import_files([bad], out)
    assert (summary.imported, summary.rejected) == (0, 1)
    assert not out.exists()


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_an_output_that_is_an_input_is_refused(tmp_path: Path, spelling: str) -> None:
    source = write_csv(tmp_path / "rows.csv", [EXAMPLE_ROW])
    before = source.read_bytes()
    out = {
        "same": source,
        "dot": tmp_path / "." / "rows.csv",
        "symlink": tmp_path / "link.jsonl",
        "hardlink": tmp_path / "hard.jsonl",
    }[spelling]
    if spelling == "symlink":
        out.symlink_to(source)
    elif spelling == "hardlink":
        os.link(source, out)
    status, _, err = run("import", "liger", str(source), "-o", str(out))
    assert status == 2
    assert f"is the input {str(source)!r}" in err
    assert err.count("\n") == 1
    assert source.read_bytes() == before


def test_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "rows.csv", [EXAMPLE_ROW])
    out = tmp_path / "out.jsonl"
    summary = liger.import_files([source, tmp_path / "." / "rows.csv"], out)
    assert summary.imported == 1
    assert len(names(out)) == 1


def test_reimporting_a_csv_adds_nothing_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run("import", "liger", str(SUBSET), "-o", str(out))[0] == 0
    first = out.read_bytes()
    status, _, err = run("import", "liger", str(SUBSET), "-o", str(out))
    assert status == 0
    assert err == f"imported 0 row(s); 0 rejected; 236 skipped, already in {out}\n"
    assert out.read_bytes() == first
    assert list(validate_paths([out], verify_digests=True)) == []


def test_reimport_writes_only_new_rows_under_free_names(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    liger.import_files([write_csv(tmp_path / "a.csv", [EXAMPLE_ROW])], out)
    changed = row(y_value_50="2.2901")  # same name parts, other measurements
    summary = liger.import_files([write_csv(tmp_path / "b.csv", [EXAMPLE_ROW, changed])], out)
    assert (summary.imported, summary.skipped) == (1, 1)
    got = names(out)
    assert got == [got[0], got[0] + "-2"]
    assert list(validate_paths([out], verify_digests=True)) == []


def test_a_row_repeated_in_the_csv_counts_as_often_as_it_appears(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    liger.import_files([write_csv(tmp_path / "a.csv", [EXAMPLE_ROW])], out)
    twice = write_csv(tmp_path / "b.csv", [EXAMPLE_ROW, EXAMPLE_ROW])
    summary = liger.import_files([twice], out)
    assert (summary.imported, summary.skipped) == (1, 1)
    again = liger.import_files([twice], out)
    assert (again.imported, again.skipped) == (0, 2)


def test_names_already_in_the_output_stay_taken(tmp_path: Path) -> None:
    """A file holding another environment under our name: ours gets a name of its own."""
    out = tmp_path / "out.jsonl"
    liger.import_files([write_csv(tmp_path / "a.csv", [row(gpu_name="nvidia b200")])], out)
    summary = liger.import_files([write_csv(tmp_path / "b.csv", [EXAMPLE_ROW])], out)
    assert summary.imported == 1
    environments = [json.loads(line)["environment"]["metadata"]["name"] for line in out.open()]
    assert environments[0] == "liger-bench-nvidia-b200"
    assert environments[1].startswith("liger-bench-nvidia-b200-")
    assert list(validate_paths([out], verify_digests=True)) == []


def test_lines_of_the_output_that_are_not_records_are_passed_over(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text('not json\n[1]\n{"run": 5}\n' + "[" * 100_000 + "\n")
    summary = liger.import_files([write_csv(tmp_path / "a.csv", [EXAMPLE_ROW])], out)
    assert summary.imported == 1


@pytest.mark.filterwarnings("error")
def test_cli_prints_bad_rows_notices_and_the_summary(tmp_path: Path) -> None:
    """The unknown GPU is a notice on one line, never a Python warning (here: an error)."""
    rows = [EXAMPLE_ROW, row(x_value="1_024"), row(gpu_name="Acme 9000")]
    source = write_csv(tmp_path / "rows.csv", rows)
    status, out, err = run("import", "liger", str(source))
    assert status == 1
    assert len(out.splitlines()) == 2
    assert err.splitlines() == [
        f"{source}:3: x_value is not a CSV number: '1_024' (expected ASCII digits,"
        " optionally with a sign, '.', and an exponent)",
        f"kernelindex: {source}:4: unknown GPU 'Acme 9000': imported without architecture",
        "imported 2 row(s); 1 rejected",
    ]


def test_single_documents_in_the_output_take_their_names_too(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    liger.import_files([write_csv(tmp_path / "a.csv", [row(gpu_name="nvidia b200")])], out)
    environment = json.loads(out.read_text())["environment"]
    out.write_text(json.dumps(environment) + "\n")
    liger.import_files([write_csv(tmp_path / "b.csv", [EXAMPLE_ROW])], out)
    names = [
        json.loads(line).get("environment", {}).get("metadata", {}).get("name")
        for line in out.open()
    ]
    assert names[1] is not None
    assert names[1].startswith("liger-bench-nvidia-b200-")


def test_read_files_skips_runs_of_existing_models(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", [EXAMPLE_ROW, row(y_value_50="2.29")])
    [first, _] = liger.read(source)
    skipped: list[tuple[str, int]] = []
    again = list(
        liger.read_files([source], existing=[first], on_skip=lambda s, n: skipped.append((s, n)))
    )
    assert skipped == [(str(source), 2)]
    assert [b.run.metadata.name for b in again] == [first.run.metadata.name + "-2"]


def test_imports_of_one_csv_name_every_run_alike(tmp_path: Path) -> None:
    """Imported names are deterministic (no random part): the store recognises a re-import."""
    source = SUBSET
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    liger.import_files([source], first)
    liger.import_files([source], second)
    assert names(first) == names(second)
    assert first.read_bytes() == second.read_bytes()

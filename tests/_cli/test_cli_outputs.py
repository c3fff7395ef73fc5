"""Outputs that must never destroy inputs, writers that append only JSON Lines, notices that
are not warnings, and one strict reading of every number on the command line."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

from kernelindex_sdk._base import schemas as _schemas
from kernelindex_sdk._base.files import refuse_overwriting_inputs
from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import InputError, OutputIsInputError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
CSV = FIXTURES / "liger" / "fused_moe.csv"


def run(*argv: str, stdout: IO[str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=stdout or out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


# --- The helper --------------------------------------------------------------------------


def _link(kind: str, target: Path, at: Path) -> Path:
    """``target`` itself, or a symlink or hard link to it at ``at``."""
    if kind == "same":
        return target
    if kind == "symlink":
        at.symlink_to(target)
    else:
        os.link(target, at)
    return at


LINKS = ["same", "symlink", "hardlink"]


@pytest.mark.parametrize("kind", LINKS)
def test_an_output_that_is_an_input_file_is_refused(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "runs.jsonl"
    data.write_text("{}\n")
    out = _link(kind, data, tmp_path / "out.png")
    with pytest.raises(OutputIsInputError) as caught:
        refuse_overwriting_inputs([out], [data])
    assert isinstance(caught.value, InputError)
    assert caught.value.input == str(data)
    assert str(caught.value) == (
        f"{out}: is the input {str(data)!r}; expected an output that is none of the inputs"
        " (writing it would destroy what is read)"
    )


@pytest.mark.parametrize("kind", LINKS)
def test_a_file_an_input_folder_would_read_is_an_input(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "runs"
    (folder / "deep").mkdir(parents=True)
    data = folder / "deep" / "b.JSONL"
    data.write_text("{}\n")
    out = _link(kind, data, tmp_path / "out.svg")
    with pytest.raises(OutputIsInputError, match="read from the folder"):
        refuse_overwriting_inputs([out], [folder])


def test_a_file_a_folder_reaches_through_a_symlink_is_an_input(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("{}\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "link.json").symlink_to(elsewhere)
    with pytest.raises(OutputIsInputError):
        refuse_overwriting_inputs([elsewhere], [tmp_path / "runs"])


def test_what_a_folder_would_not_read_is_no_input(tmp_path: Path) -> None:
    """Other suffixes, new files, stdin and devices cannot be destroyed inputs."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "plot.png").write_bytes(b"png")
    (folder / "a.jsonl").write_text("{}\n")
    refuse_overwriting_inputs(
        [folder / "plot.png", folder / "new.jsonl", "-", os.devnull], [folder, "-"]
    )
    refuse_overwriting_inputs([folder / "a.jsonl"], [])
    # The same folder does guard the file it reads: the calls above were not vacuous.
    with pytest.raises(OutputIsInputError):
        refuse_overwriting_inputs([folder / "a.jsonl"], [folder])


def test_a_file_descriptor_output_is_compared_too(tmp_path: Path) -> None:
    data = tmp_path / "runs.jsonl"
    data.write_text("{}\n")
    with (
        data.open("a") as redirected,
        pytest.raises(OutputIsInputError, match=r"^standard output: is the input"),
    ):
        refuse_overwriting_inputs([redirected.fileno()], [data])
    with open(os.devnull, "w") as null:
        refuse_overwriting_inputs([null.fileno()], [data])


# --- Every writer of the command line ----------------------------------------------------


@pytest.fixture
def records(tmp_path: Path) -> Path:
    path = tmp_path / "runs.jsonl"
    shutil.copyfile(SWEEP, path)
    return path


def _refused(status: int, out: str, err: str, output: Path, source: Path) -> None:
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"kernelindex: {output}: is the input {str(source)!r}; expected an output that is"
        " none of the inputs (writing it would destroy what is read)"
    ]


@pytest.mark.parametrize("kind", LINKS)
def test_report_plot_over_an_input_is_refused_before_reading(
    records: Path, tmp_path: Path, kind: str
) -> None:
    before = records.read_bytes()
    plot = _link(kind, records, tmp_path / "plot.png")
    _refused(*run("report", str(records), "--plot", str(plot)), plot, records)
    assert records.read_bytes() == before


@pytest.mark.parametrize("kind", LINKS)
def test_report_plot_into_an_input_folder_is_refused(
    records: Path, tmp_path: Path, kind: str
) -> None:
    before = records.read_bytes()
    plot = _link(kind, records, tmp_path / "plot.svg")
    status, out, err = run("report", str(tmp_path), "--plot", str(plot))
    assert (status, out) == (2, "")
    assert "read from the folder" in err
    assert records.read_bytes() == before


def _stdout_onto(path: Path) -> Callable[..., tuple[int, str, str]]:
    def command(*argv: str) -> tuple[int, str, str]:
        with path.open("a", encoding="utf-8") as redirected:
            return run(*argv, stdout=redirected)

    return command


@pytest.mark.parametrize("kind", LINKS)
@pytest.mark.parametrize(
    "argv",
    [
        ("report", "{in}"),
        ("compare", "{in}", str(SWEEP)),
        ("compare", str(SWEEP), "{in}"),
        ("validate", "{in}"),
        ("digest", "{in}"),
        ("merge", "{in}", str(SWEEP)),
    ],
    ids=["report", "compare-base", "compare-new", "validate", "digest", "merge"],
)
def test_standard_output_appended_to_an_input_is_refused(
    records: Path, tmp_path: Path, kind: str, argv: tuple[str, ...]
) -> None:
    """``>> runs.jsonl``: the shell opened the input for appending; nothing is read or added."""
    before = records.read_bytes()
    target = _link(kind, records, tmp_path / "out.txt")
    status, _, err = _stdout_onto(target)(*(a.replace("{in}", str(records)) for a in argv))
    assert status == 2
    assert err.splitlines() == [
        f"kernelindex: standard output: is the input {str(records)!r}; expected an output that"
        " is none of the inputs (writing it would destroy what is read)"
    ]
    assert records.read_bytes() == before


@pytest.mark.parametrize("kind", LINKS)
def test_import_output_or_stdout_onto_an_input_is_refused(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "rows.csv"
    shutil.copyfile(CSV, source)
    before = source.read_bytes()
    out = _link(kind, source, tmp_path / "out.jsonl")
    _refused(*run("import", "liger", str(source), "-o", str(out)), out, source)
    status, _, err = _stdout_onto(out)("import", "liger", str(source))
    assert status == 2
    assert "standard output: is the input" in err
    assert source.read_bytes() == before


def test_merge_may_rewrite_an_input_in_place(records: Path) -> None:
    """The one exception, documented: merge reads everything, then replaces OUT in one rename."""
    status, _, err = run("merge", str(records), str(SWEEP), "-o", str(records))
    assert status == 0, err
    assert "merged 64 records from 128 documents (64 duplicates dropped)" in err
    assert run("validate", "--verify-digests", str(records))[0] == 0


def test_schema_out_into_the_packaged_schemas_is_refused(tmp_path: Path) -> None:
    packaged = _schemas.schema_dir()
    before = {p.name: p.read_bytes() for p in packaged.iterdir()}
    link = tmp_path / "schemas"
    link.symlink_to(packaged, target_is_directory=True)
    for out in (packaged, link):
        status, stdout, err = run("schema", "--out", str(out))
        assert (status, stdout) == (2, "")
        assert ".json: is the input" in err
        assert "read from the folder" in err
    assert {p.name: p.read_bytes() for p in packaged.iterdir()} == before


def test_schema_out_over_hard_links_to_the_packaged_schemas_is_refused(tmp_path: Path) -> None:
    packaged = _schemas.schema_dir()
    out = tmp_path / "out"
    out.mkdir()
    try:
        os.link(packaged / "common.json", out / "common.json")
    except OSError:
        pytest.skip("the packaged schemas are on another file system than tmp")
    status, _, err = run("schema", "--out", str(out))
    assert status == 2
    assert "common.json: is the input" in err


# --- JSON Lines go to .jsonl only --------------------------------------------------------


@pytest.mark.parametrize("name", ["existing.json", "new.json", "runs.txt", "runs", "RUNS.JSON"])
def test_import_appends_only_to_jsonl(tmp_path: Path, name: str, example_text: str) -> None:
    out = tmp_path / name
    if name.startswith("existing"):
        out.write_text(example_text)
    status, stdout, err = run("import", "liger", str(CSV), "-o", str(out))
    assert (status, stdout) == (2, "")
    assert err.splitlines() == [
        f"kernelindex: {out}: expected a .jsonl path (or '-') to write records to: "
        + (
            "a .json file holds one document, and lines appended to it would not read"
            if name.lower().endswith(".json")
            else "records are written as JSON Lines"
        )
    ]
    assert out.read_text() == example_text if name.startswith("existing") else not out.exists()


def test_upper_case_jsonl_is_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "RUNS.JSONL"
    assert run("import", "liger", str(CSV), "-o", str(out))[0] == 0
    assert run("validate", str(out))[0] == 0


@pytest.mark.parametrize("name", ["existing.json", "new.json", "merged"])
def test_merge_writes_only_jsonl(tmp_path: Path, name: str, example_text: str) -> None:
    out = tmp_path / name
    if name.startswith("existing"):
        out.write_text(example_text)
    status, _, err = run("merge", str(EXAMPLE), "-o", str(out))
    assert status == 2
    assert "expected a .jsonl path (or '-') to write records to" in err
    assert out.read_text() == example_text if name.startswith("existing") else not out.exists()


@pytest.mark.parametrize("out", ["", "x.json", "runs"])
def test_bench_refuses_an_unusable_output_before_the_sweep(tmp_path: Path, out: str) -> None:
    """Checked before anything runs: no 'no GPU found', no progress, no record."""
    target = str(tmp_path / out) if out else ""
    status, stdout, err = run(
        "bench", "jsd", "--tokens", "4", "--vocab", "64", "--no-progress", "-o", target
    )
    assert (status, stdout) == (2, "")
    [line] = err.splitlines()
    assert "expected a .jsonl path" in line
    assert list(tmp_path.iterdir()) == []


# --- Notices, not warnings ---------------------------------------------------------------


def _kernelindex(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONWARNINGS": "error", "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (("validate", "empty"), 0),
        (("merge", "empty"), 0),
        (("report", "empty"), 0),
        (("compare", "empty", "empty"), 0),
        (("digest", "empty"), 0),
    ],
)
def test_an_empty_folder_is_one_notice_line_under_warnings_as_errors(
    tmp_path: Path, argv: tuple[str, ...], status: int
) -> None:
    (tmp_path / "empty").mkdir()
    done = _kernelindex(*argv, cwd=tmp_path)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    assert "Warning" not in done.stderr
    assert "kernelindex: empty: no .json or .jsonl files found" in done.stderr.splitlines()


# --- One reading of numbers --------------------------------------------------------------

HOSTILE = ["1_0", "\u0661\u0660", "\uff15", " 5", "5 ", "5\n", "nan", "inf", "1e309", "0x5", ""]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("option", ["--threshold", "--fail-on-regression"])
def test_compare_percentages_take_ascii_finite_numbers_only(option: str, text: str) -> None:
    status, out, err = run("compare", str(SWEEP), str(SWEEP), option, text)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert f"argument {option}: expected a percentage >= 0" in err


@pytest.mark.parametrize("text", ["5", "5%", "2.5", "0", "1e2", ".5"])
def test_compare_percentages_in_plain_digits_pass(text: str) -> None:
    assert run("compare", str(SWEEP), str(SWEEP), "--threshold", text)[0] == 0


@pytest.mark.parametrize("text", [*HOSTILE, "-0.1", "1.5"])
def test_bench_beta_is_a_finite_number_from_0_to_1(text: str) -> None:
    status, out, err = run("bench", "jsd", "--beta", text)
    assert (status, out) == (2, "")
    assert "argument --beta: expected a" in err
    assert "number from 0 to 1" in err or "ASCII digits" in err


# (Lists take ASCII spaces around their commas, " 5" and "5 " included.)
@pytest.mark.parametrize("option", ["--tokens", "--vocab"])
@pytest.mark.parametrize(
    "text", [t for t in HOSTILE if t.strip(" ") == t] + ["9007199254740992", "1,1_0", "5,\t6"]
)
def test_bench_sizes_are_ascii_integers_in_range(option: str, text: str) -> None:
    status, out, err = run("bench", "jsd", option, text)
    assert (status, out) == (2, "")
    assert f"argument {option}: expected comma-separated integers" in err


@pytest.mark.parametrize(
    "text", ["0/99999999999999999999", "0/1_0", "\u0660/4", " 0/4", "0/4 ", "0/2147483648"]
)
def test_bench_shard_is_refused_in_one_line_without_allocating(tmp_path: Path, text: str) -> None:
    status, out, err = run("bench", "jsd", "--shard", text, "-o", str(tmp_path / "r.jsonl"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "kernelindex: --shard: expected I/N in ASCII digits with 0 <= I < N <= 2147483647"
        f" (e.g. '0/4'), got {text!r}"
    ]


@pytest.mark.parametrize(
    ("variables", "name"),
    [
        ({"WORLD_SIZE": "99999999999999999999", "RANK": "0"}, "WORLD_SIZE"),
        ({"WORLD_SIZE": "4", "RANK": "\u0661"}, "RANK"),
        ({"WORLD_SIZE": "1_0", "RANK": "0"}, "WORLD_SIZE"),
        ({"SLURM_NTASKS": "4", "SLURM_PROCID": " 1"}, "SLURM_PROCID"),
        ({"LOCAL_RANK": "1e3"}, "LOCAL_RANK"),
    ],
)
def test_bench_launcher_variables_are_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], name: str
) -> None:
    for key in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "LOCAL_RANK"):
        monkeypatch.delenv(key, raising=False)
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    status, out, err = run("bench", "jsd", "-o", str(tmp_path / "r-{rank}.jsonl"))
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith(f"kernelindex: {name}: expected an integer")
    assert list(tmp_path.iterdir()) == []


def test_every_numeric_option_is_read_by_the_one_parser() -> None:
    """No option of the command line reads a number with int() or float() itself."""
    from kernelindex_sdk._cli import _parser

    parser = _parser()
    found: dict[str, Any] = {}

    def walk(p: Any, path: str) -> None:
        for action in p._actions:
            if action.choices and isinstance(action.choices, dict):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif action.type is not None:
                # Every argument's type is wrapped in the text or path check
                # (_common.checked_type): the command's own type is the one wrapped.
                name = action.option_strings[0] if action.option_strings else action.dest
                found[f"{path} {name}"] = getattr(action.type, "__wrapped__", action.type)

    walk(parser, "kernelindex")
    assert int not in found.values()
    assert float not in found.values()
    assert "kernelindex compare --threshold" in found
    assert "kernelindex bench jsd --beta" in found


@pytest.mark.parametrize(
    ("plot", "reason"),
    [
        ("", "'': expected a file path, got an empty path"),
        ("x.txt", "x.txt: expected a .png or .svg file, got '.txt'"),
        ("missing/x.png", "missing/x.png: no directory 'missing' to write in"),
        ("folder.png", "folder.png: is a directory, expected a file to write"),
    ],
)
def test_report_checks_its_plot_path_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plot: str, reason: str
) -> None:
    """An unusable --plot fails first: no tables on stdout, one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    status, out, err = run("report", str(SWEEP), "--plot", plot)
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"kernelindex: {reason}"]


def test_schema_out_refuses_an_empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out ''`` is no folder: it would write into the current one."""
    monkeypatch.chdir(tmp_path)
    status, out, err = run("schema", "--out", "")
    assert (status, out) == (2, "")
    assert err.splitlines() == ["kernelindex: '': expected a folder path, got an empty path"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text",
    [t for t in HOSTILE if t.strip(" ") == t]
    + ["0,1_0", "0,\u0661", "16", "0,99999999999999999999"],
)
def test_devices_take_ascii_gpu_indices_below_the_visible_count(text: str) -> None:
    from kernelindex_sdk.errors import LaunchError
    from kernelindex_sdk.reference_kernels.workers import parse_devices

    with pytest.raises(LaunchError, match=r"^--devices: expected 'all' or comma-separated"):
        parse_devices(text, 16)
    assert parse_devices("0, 15", 16) == [0, 15]


# Hostile input: a site folder that holds the store it reads (by path, symlink or cwd).
def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def _site_with_store(tmp_path: Path) -> tuple[Path, Path]:
    """A folder an earlier ``site`` wrote, then the store copied into it."""
    db = tmp_path / "ki.sqlite3"
    status, _, err = _cli("ingest", str(SWEEP), "--db", str(db))
    assert status == 0, err
    out = tmp_path / "dash"
    status, _, err = _cli("site", str(out), "--db", str(db))
    assert status == 0, err
    inside = out / "nested" / "ki.sqlite3"
    inside.parent.mkdir()
    shutil.copyfile(db, inside)
    return out, inside


@pytest.mark.parametrize("how", ["path", "symlink", "cwd"])
def test_site_refuses_an_out_folder_holding_its_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    out, inside = _site_with_store(tmp_path)
    before = inside.read_bytes()
    target = str(out)
    if how == "symlink":
        (tmp_path / "alias").symlink_to(out, target_is_directory=True)
        target = str(tmp_path / "alias")
    elif how == "cwd":
        monkeypatch.chdir(out / "nested")
        target = ".."
    status, stdout, stderr = _cli("site", target, "--db", str(inside))
    assert status == 2, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert "holds the store" in stderr, stderr
    assert inside.read_bytes() == before


def test_site_refuses_the_default_store_in_the_out_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, inside = _site_with_store(tmp_path)
    shutil.move(inside, out / "kernelindex.sqlite3")
    monkeypatch.delenv("KERNELINDEX_DB", raising=False)
    monkeypatch.chdir(out)
    status, _, stderr = _cli("site", ".")
    assert status == 2, stderr
    assert "holds the store" in stderr, stderr
    assert (out / "kernelindex.sqlite3").is_file()
    assert os.path.isfile(out / "index.html")

"""Every argument of every command reaches the library as valid text or a finite number, or
is refused with one usage line naming it (exit 2).

On POSIX, ``sys.argv`` holds bytes that are not UTF-8 as lone surrogates (``\\udcff``):
fine for a file name, which opens the same file again, but text (a branch, a title, a
filter) would fail to encode deep inside SQLite, a JSON file or a page. The cases are
made from the parser itself, so a new argument is covered the day it is added.
"""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelindex_sdk._cli import _parser, main
from kernelindex_sdk._cli._common import PATH_ARGUMENTS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200-jsd-sweep.jsonl"
NOT_UTF8 = os.fsdecode(b"caf\xe9")  # Latin-1 bytes, as a Latin-1 terminal would pass them


def _run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def _commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each (sub)command's words and parser, leaves only."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _commands(sub, (*prefix, name))


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(
        action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
    )


def _argv(
    words: tuple[str, ...], parser: argparse.ArgumentParser, tried: argparse.Action, value: str
) -> list[str]:
    """A command line giving ``tried`` the ``value``: the option first, then placeholders
    for the required positionals (a valid choice where there are some), ``tried`` among
    them when it is one."""
    positionals = []
    for action in parser._actions:
        if action is tried and not action.option_strings:
            positionals.append(value)
        elif action.option_strings or not _takes_value(action) or action.nargs == "?":
            continue
        else:
            positionals.append(sorted(action.choices)[0] if action.choices else "x.jsonl")
    option = [tried.option_strings[-1], value] if tried.option_strings else []
    return [*words, *option, *positionals]


ARGUMENTS = [
    (words, parser, action)
    for words, parser in _commands(_parser())
    for action in parser._actions
    if _takes_value(action)
]


def _name(action: argparse.Action) -> str:
    return "/".join(action.option_strings) or str(action.metavar or action.dest)


def _id(case: tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action]) -> str:
    return " ".join(case[0]) + " " + _name(case[2])


TEXT = [case for case in ARGUMENTS if case[2].dest not in PATH_ARGUMENTS]
PATHS = [case for case in ARGUMENTS if case[2].dest in PATH_ARGUMENTS]


def test_the_cases_cover_the_commands_arguments() -> None:
    """The enumeration finds what we know is there (a parser change cannot empty it)."""
    named = {_id(case) for case in ARGUMENTS}
    for expected in (
        "history --branch",
        "site --title",
        "site --main-branch",
        "compare --history",
        "export --operation",
        "ingest --commit",
        "bench jsd --impl",
        "import liger --branch",
        "compare --base-provider",
        "report --x",
        "schema KIND",
    ):
        assert expected in named
    assert len(TEXT) >= 40
    assert len(PATHS) >= 12


def test_path_arguments_are_the_ones_that_name_files() -> None:
    """The path list holds what names a file, a folder or a store, and nothing else."""
    assert {case[2].dest for case in PATHS} == PATH_ARGUMENTS


@pytest.mark.parametrize("case", TEXT, ids=map(_id, TEXT))
def test_text_in_bytes_that_are_not_utf8_is_one_usage_line_naming_the_argument(
    case: tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action],
) -> None:
    """Arguments class: non-UTF-8 bytes (surrogate-escaped argv) in any text argument."""
    words, parser, action = case
    status, err = _run(*_argv(words, parser, action, NOT_UTF8))
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert f"argument {_name(action)}: expected UTF-8 text, got b'caf\\xe9'" in err


@pytest.mark.parametrize("case", ARGUMENTS, ids=map(_id, ARGUMENTS))
def test_a_nul_in_any_argument_is_one_usage_line(
    case: tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action],
) -> None:
    """Arguments class: no path or text holds a NUL (os functions raise ValueError)."""
    words, parser, action = case
    status, err = _run(*_argv(words, parser, action, "a\x00b.jsonl"))
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert f"argument {_name(action)}" in err, err


def test_a_path_in_bytes_that_are_not_utf8_names_its_file(tmp_path: Path) -> None:
    """Arguments class: paths keep their bytes; the command reads the file they name."""
    source = tmp_path / os.fsdecode(b"runs-\xff.jsonl")
    source.write_bytes(FIXTURE.read_bytes())
    store = tmp_path / os.fsdecode(b"store-\xff.sqlite3")
    status, err = _run("ingest", str(source), "--db", str(store))
    assert status == 0, err
    out = tmp_path / os.fsdecode(b"out-\xff.jsonl")
    status, err = _run("export", "--db", str(store), "-o", str(out))
    assert status == 0, err
    assert len(out.read_text("utf-8").splitlines()) == 64


IMPORTED = [
    ("liger", "liger/all_benchmark_data.subset.csv"),
    ("nvbench", "nvbench/test_ref.json"),
    ("gbench", "gbench/kernels.json"),
    ("pytest-benchmark", "pytest-benchmark/benchmark.json"),
]


@pytest.mark.parametrize(("fmt", "fixture"), IMPORTED, ids=[f for f, _ in IMPORTED])
def test_an_imported_file_named_in_bytes_that_are_not_utf8_is_read(
    tmp_path: Path, fmt: str, fixture: str
) -> None:
    """Arguments class: every importer's input files are paths, not text."""
    source = tmp_path / os.fsdecode(b"in-\xff" + Path(fixture).suffix.encode())
    source.write_bytes((FIXTURE.parent / fixture).read_bytes())
    out = tmp_path / "out.jsonl"
    status, err = _run("import", fmt, str(source), "-o", str(out))
    assert status == 0, err
    assert out.read_text("utf-8").count("\n") > 0


NUMBERS = [
    ("compare", "--threshold", ["a.jsonl", "b.jsonl"]),
    ("compare", "--fail-on-regression", ["a.jsonl", "b.jsonl"]),
    ("compare", "--window", ["a.jsonl"]),
    ("history", "--points", []),
    ("bench jsd", "--beta", []),
    ("bench jsd", "--tokens", []),
    ("bench jsd", "--vocab", []),
]


@pytest.mark.parametrize(("command", "option", "rest"), NUMBERS)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309", "1" * 400, "1_0", "\u0661"])
def test_a_number_argument_refuses_overflow_nan_and_inf(
    command: str, option: str, rest: list[str], value: str
) -> None:
    """Arguments class: a number beyond the float range, NaN, infinity, other digits."""
    status, err = _run(*command.split(), option, value, *rest)
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert f"argument {option}" in err, err


@pytest.mark.parametrize(
    "value",
    ["A=1e300", "A=1e309", "A=nan", "A=inf", "A=0", "A=-1", "=4.8", "NVIDIA H200"],
)
def test_site_bandwidth_that_overflows_is_a_usage_error(value: str, tmp_path: Path) -> None:
    """Arguments class: 1e300 TB/s is finite, but not once made bytes per second."""
    status, err = _run("site", str(tmp_path / "out"), "--bandwidth", value)
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert "argument --bandwidth" in err, err


COMMIT_TIME = [
    ("ingest", ["x.jsonl"]),
    ("bench jsd", []),
    ("import liger", ["x.csv"]),
]


@pytest.mark.parametrize(("command", "rest"), COMMIT_TIME)
@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:00:00-05:00",  # after year 9999 in UTC
        "0001-01-01T00:00:00+05:00",  # before year 1 in UTC
        "2025-W04-3T10:00:00Z",  # an ISO week date
        "2025-02-30T00:00:00Z",  # no such day
    ],
)
def test_commit_time_outside_years_1_to_9999_or_rfc_3339_is_a_usage_error(
    command: str, rest: list[str], value: str
) -> None:
    """Arguments class: OverflowError from a timestamp whose UTC instant leaves the range."""
    status, err = _run(*command.split(), "--commit-time", value, *rest)
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert "argument --commit-time" in err, err


# Hostile input: numbers in other scripts' digits, with underscores, signs, spaces, or past
# the float range, in the numeric options of history, compare --history and site.
HOSTILE_INTEGERS = ["1_0", "\u0664", "\u0661\u0660", " 3", "3 ", "+3", "\uff13", "\u00b2", "3.0"]
HOSTILE_DECIMALS = ["1_0", "\u0664", " 4", "4 ", "nan", "inf", "1e309", "0", "-4", "\u00b2"]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("store") / "ki.sqlite3")
    status, _, err = _cli("ingest", str(FIXTURE), "--db", path, "--branch", "main")
    assert status == 0, err
    return path


@pytest.mark.parametrize("text", HOSTILE_INTEGERS)
def test_history_points_refuses_what_tokens_refuses(db: str, text: str) -> None:
    status, stdout, stderr = _cli("history", "--db", db, "--points", text)
    assert status == 2, stderr
    assert stdout == ""
    assert "--points" in stderr


@pytest.mark.parametrize("text", HOSTILE_INTEGERS)
def test_compare_window_refuses_what_tokens_refuses(db: str, text: str) -> None:
    argv = ("compare", "--history", "main", "--db", db, "--window", text, str(FIXTURE))
    status, stdout, stderr = _cli(*argv)
    assert status == 2, stderr
    assert stdout == ""
    assert "--window" in stderr


@pytest.mark.parametrize("text", HOSTILE_DECIMALS)
def test_site_bandwidth_refuses_what_threshold_refuses(db: str, tmp_path: Path, text: str) -> None:
    out = tmp_path / "dash"
    status, _, stderr = _cli("site", str(out), "--db", db, "--bandwidth", f"NVIDIA H200={text}")
    assert status == 2, stderr
    assert "--bandwidth" in stderr
    assert not out.exists()


def test_plain_numbers_still_pass(db: str, tmp_path: Path) -> None:
    assert _cli("history", "--db", db, "--points", "3")[0] == 0
    status, _, err = _cli("site", str(tmp_path / "d"), "--db", db, "--bandwidth", "X=4.8")
    assert status == 0, err

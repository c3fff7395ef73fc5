"""main() builds the parsers of the command a line starts with, not every command's: the
same command parser, the same help, usage errors and verdicts."""

from __future__ import annotations

import argparse
import io

import pytest

from kernelindex_sdk._cli import _COMMANDS, _OWNERS, _parser, main


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_each_command_is_owned_by_the_module_that_adds_it() -> None:
    owners = {}
    for module in _COMMANDS:
        parser = _Parser()
        sub = parser.add_subparsers(dest="command")
        module.register(sub)
        owners.update(dict.fromkeys(_subparsers(parser), module))
    assert owners == _OWNERS
    assert set(_subparsers(_parser())) == set(_OWNERS)


def _Parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="kernelindex")


@pytest.mark.parametrize("command", sorted(_OWNERS))
def test_a_commands_parser_is_the_same_built_alone(command: str) -> None:
    whole = _subparsers(_parser())[command]
    alone = _subparsers(_parser(command))[command]
    assert alone.format_help() == whole.format_help()
    assert alone.format_usage() == whole.format_usage()
    assert _signature(alone) == _signature(whole)


def _signature(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """Every action's settings, nested commands' parsers by theirs and their help."""
    found: list[tuple[object, ...]] = []
    for a in parser._actions:
        choices: object = a.choices
        if isinstance(choices, dict):
            choices = [(k, v.format_help(), _signature(v)) for k, v in choices.items()]
        kind = getattr(a.type, "__name__", repr(a.type))
        found.append((type(a), a.option_strings, a.dest, a.default, a.nargs, a.const, a.required))
        found.append((kind, choices, a.help, a.metavar))
    return found


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "--bogus"],
        ["history", "--points", "x"],
        ["export", "-h"],
        ["nosuch"],
        ["-h"],
        ["--version"],
        [],
        ["--db", "x", "history"],
    ],
)
def test_output_and_status_are_those_of_the_whole_parser(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def run() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        status = main(argv, stdout=out, stderr=err)
        return status, out.getvalue(), err.getvalue()

    lazy = run()
    import kernelindex_sdk._cli as cli

    monkeypatch.setattr(cli, "_parser", lambda command=None: _parser(None))
    assert run() == lazy

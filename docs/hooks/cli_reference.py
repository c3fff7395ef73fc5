"""Render the ``kernelindex`` argparse parser as a reference page.

The page walks the parser the CLI itself runs (``kernelindex_sdk._cli._parser()``) and
descends into every sub-parser, so a subcommand added to ``_COMMANDS`` appears on the
site without anyone writing about it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

__all__ = ["EXIT_MEANINGS", "commands", "render_page"]

# What each exit status of kernelindex_sdk._cli._common means. A status the CLI defines
# without a meaning here fails the build (see render_page), so the table cannot go stale.
EXIT_MEANINGS = {
    "EXIT_OK": "success: every input was valid, every run passed or was written",
    "EXIT_INVALID": (
        "invalid input: a record failed validation, a digest did not match, a row could not"
        " be imported, or a benchmark run failed (its record is still written)"
    ),
    "EXIT_USAGE": "usage or I/O error: a bad option, an unreadable file, a missing extra",
}


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help_text: str | None = None
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    """Yield ``(words, parser, help)`` for the parser and every sub-parser, depth first.

    Args:
        parser: The root parser.
        path: The command words that lead to ``parser`` (empty for the root).
        help_text: The help its parent lists for ``parser``.

    Yields:
        The words after ``kernelindex`` (``("bench", "jsd")``), the parser, and the help
        text its parent lists for it (``None`` for the root).
    """
    yield path, parser, help_text
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                # An alias maps to the parser of its command: document each parser once.
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from commands(sub, (*path, name), helps.get(name))


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "`" + ",".join(str(v) for v in value) + "`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{o}`" for o in action.option_strings)
            takes = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
        else:
            name = f"`{action.metavar or action.dest}`"
            takes = {"+": "one or more", "*": "any number", "?": "optional"}.get(
                str(action.nargs), "one"
            )
        if isinstance(action, argparse._VersionAction):
            default = ""
        elif action.nargs == 0:
            default = "off"
        elif action.default is None or action.default == argparse.SUPPRESS:
            default = ""
        else:
            default = _shown(action.default)
        choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
        help_text = formatter._expand_help(action) if action.help else ""
        required = "yes" if action.required else ""
        cells = [name, f"`{takes}`" if action.option_strings and takes else takes]
        cells += [required, default, choices, _cell(help_text)]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def render_page(parser: argparse.ArgumentParser, exit_codes: dict[str, int]) -> str:
    """Return the Markdown CLI reference for ``parser``.

    Args:
        parser: The ``kernelindex`` parser (``kernelindex_sdk._cli._parser()``).
        exit_codes: The CLI's exit statuses by constant name (``{"EXIT_OK": 0, ...}``).

    Returns:
        The page: the exit statuses, then one section per command with its usage line,
        description and a table of its arguments.

    Raises:
        ValueError: An exit status has no meaning in :data:`EXIT_MEANINGS`.
    """
    missing = sorted(set(exit_codes) - set(EXIT_MEANINGS))
    if missing:
        raise ValueError(f"exit statuses without a meaning in EXIT_MEANINGS: {missing!r}")
    lines = [
        "# Command line",
        "",
        "<!-- generated from kernelindex_sdk._cli._parser() by docs/hooks/cli_reference.py -->",
        "",
        "Every command, option and default below is read from the parser `kernelindex` runs.",
        "",
        "## Exit status",
        "",
        "| Status | Meaning |",
        "| --- | --- |",
        *(
            f"| {code} | {EXIT_MEANINGS[name]} |"
            for name, code in sorted(exit_codes.items(), key=lambda item: item[1])
        ),
        "| 130 | interrupted (Ctrl-C); records already written stay |",
        "",
        "Bad input never shows a traceback: each problem is one line on standard error"
        " (or standard output, for `validate`).",
        "",
    ]
    for words, sub, help_text in commands(parser):
        prog = " ".join(("kernelindex", *words))
        has_subcommands = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
        anchor = "-".join(("kernelindex", *words))
        lines += [f"## `{prog}` {{ #{anchor} }}", ""]
        for text in (help_text, sub.description):
            if text:
                lines += [text[0].upper() + text[1:] + ("" if text.endswith(".") else "."), ""]
        lines += ["```text", sub.format_usage().strip(), "```", ""]
        rows = _argument_rows(sub)
        if rows:
            lines += [
                "| Argument | Takes | Required | Default | Choices | Help |",
                "| --- | --- | --- | --- | --- | --- |",
                *rows,
                "",
            ]
        if has_subcommands:
            children = [
                f"[`{' '.join((prog, child[-1]))}`](#{'-'.join(('kernelindex', *child))})"
                for child, _, _ in commands(sub, words)
                if len(child) == len(words) + 1
            ]
            lines += ["Subcommands: " + ", ".join(children) + ".", ""]
    return "\n".join(lines)

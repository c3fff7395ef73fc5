"""The code examples of the Markdown pages in docs/: fenced blocks, their markers, commands.

A block runs by its info string: ``python`` blocks are executed, ``sh``/``bash`` blocks
run as one bash script, ``console`` blocks run each ``$ `` command and compare what it
prints with the lines shown under it (a line ``...`` stands for any number of lines).
An HTML comment on the line above a block marks it:

- ``<!-- docs-test: gpu -->``: needs a CUDA GPU; the test is skipped without one.
- ``<!-- docs-test: install -->``: installs packages, so it is not run; the test checks
  instead that the extras it names exist.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import attrs

__all__ = [
    "KNOWN_MARKS",
    "RUNNABLE",
    "Block",
    "ConsoleStep",
    "blocks",
    "console_steps",
    "matches",
]

RUNNABLE = frozenset({"python", "py", "sh", "bash", "console"})
KNOWN_MARKS = frozenset({"gpu", "install"})

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_MARK = re.compile(r"<!--\s*docs-test:\s*(?P<mark>[^\s>]+)\s*-->\s*$")


@attrs.frozen
class Block:
    """One fenced code block: where it is, its language, its marker and its text."""

    path: Path
    line: int
    language: str
    mark: str | None
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


@attrs.frozen
class ConsoleStep:
    """One ``$ `` command of a console block and the output shown under it."""

    command: str
    expected: tuple[str, ...]


def blocks(text: str, path: Path) -> list[Block]:
    """Return the fenced blocks of a Markdown page, in order."""
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        info = match["info"].strip()
        language = info.split()[0].lstrip("{.").rstrip("}") if info else ""
        code = textwrap.dedent(match["body"])
        found.append(Block(path, line, language, mark["mark"] if mark else None, code))
    return found


def console_steps(code: str) -> list[ConsoleStep]:
    """Split a console block into commands (``$ `` lines, ``\\`` continued) and outputs."""
    steps: list[ConsoleStep] = []
    command: list[str] = []
    expected: list[str] = []
    continued = False
    for line in code.splitlines():
        if continued or line.startswith("$ "):
            if not continued and command:
                steps.append(ConsoleStep(" ".join(command), tuple(expected)))
                command, expected = [], []
            part = line if continued else line[2:]
            continued = part.endswith("\\")
            command.append(part.removesuffix("\\").strip())
        elif command:
            expected.append(line)
        else:
            raise ValueError(f"output before the first '$ ' command: {line!r}")
    if command:
        steps.append(ConsoleStep(" ".join(command), tuple(expected)))
    return steps


def matches(expected: tuple[str, ...], output: str) -> bool:
    """Whether ``output`` shows ``expected``: line by line, ``...`` standing for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line.rstrip()) + "\n" for line in expected
    )
    actual = "".join(line.rstrip() + "\n" for line in output.splitlines())
    return re.fullmatch(pattern, actual) is not None

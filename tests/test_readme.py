"""The README's promises: its test command is the one CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quick_start, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if not line.startswith("#")]


def test_readme_quick_start_has_two_commands() -> None:
    assert len(_quick_start_commands()) == 2


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = _quick_start_commands()[1]
    assert "pytest" in test_command
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci_lines

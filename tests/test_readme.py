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


def test_readme_python_example_is_the_type_checked_one() -> None:
    """The README's Python block is tests/examples/readme_api.py from its first import on.

    tests/test_packaging.py runs that file and type-checks it with mypy --strict, so the
    README shows code that works.
    """
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    example = (ROOT / "tests" / "examples" / "readme_api.py").read_text(encoding="utf-8")
    assert blocks == [example[example.index("from datetime") :]]


DOCS_URL = "https://github.com/kernelindex/kernelindex-sdk/blob/main/"


def test_readme_links_are_absolute_and_name_existing_pages() -> None:
    """The README is also the package index's page: every link is absolute, and a link
    into this repository names a file that exists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert len(targets) >= 10
    for target in targets:
        assert re.match(r"https://", target), target
        if target.startswith(DOCS_URL):
            assert (ROOT / target.removeprefix(DOCS_URL).split("#")[0]).is_file(), target


def test_readme_jsd_figures_come_from_the_h200_page() -> None:
    """Every timing the README quotes is one the H200 page (the committed run) shows."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## JSD on an H200", 1)[1].split("\n## ", 1)[0]
    figures = re.findall(r"\b\d+\.\d{3}\b", section)
    page = (ROOT / "docs" / "jsd-forward-h200.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\b\d+\.\d{3}\b", page))
    assert len(figures) >= 4
    assert set(figures) <= shown, set(figures) - shown

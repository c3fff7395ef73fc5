"""docs/guides/ci.md's pre-commit configurations, run by pre-commit as the page shows them.

The page's `repo:` is GitHub; here it is a git repository made from this tree at one commit
(pre-commit clones it and installs the package from it, as it would from GitHub), and `rev:`
is that commit. Everything else in the configuration is the page's, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _doc_examples import blocks

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "guides" / "ci.md"
EXAMPLE = ROOT / "tests" / "fixtures" / "liger-jsd-forward-torch-b200.json"
UPSTREAM = "https://github.com/kernelindex/kernelindex-sdk"
# What `pip install .` of the hook repository needs.
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")
PACKAGE_FOLDERS = ("src", "schemas")


def _configs() -> list[dict[str, Any]]:
    found = [
        yaml.safe_load(b.code)
        for b in blocks(PAGE.read_text("utf-8"), PAGE)
        if b.language in {"yaml", "yml"}
    ]
    return [doc for doc in found if isinstance(doc, dict) and "repos" in doc]


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_first_configuration_is_the_folder_hook_with_digests() -> None:
    """The first thing a reader copies catches a name committed earlier, and digests."""
    [repo] = _configs()[0]["repos"]
    assert repo["repo"] == UPSTREAM
    [hook] = repo["hooks"]
    assert hook["id"] == "kernelindex-validate-folder"
    assert "--verify-digests" in hook["args"]


def test_every_rev_is_a_commit_of_this_repository_with_the_hooks_used() -> None:
    """No tag exists before the first release: a rev is a commit that has the hooks."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an sdist): the history is not here")
    for config in _configs():
        for repo in config["repos"]:
            rev = repo["rev"]
            assert len(rev) == 40, f"{rev!r}: a full commit SHA until the first release"
            manifest = _git(ROOT, "show", f"{rev}:.pre-commit-hooks.yaml")
            shipped = {hook["id"] for hook in yaml.safe_load(manifest)}
            assert {hook["id"] for hook in repo["hooks"]} <= shipped


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository holding this tree's package at one commit, and that commit."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in PACKAGE_FILES:
        shutil.copy2(ROOT / name, repo / name)
    for name in PACKAGE_FOLDERS:
        shutil.copytree(
            ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "hooks")
    return repo, _git(repo, "rev-parse", "HEAD")


def _record(name: str, median: int) -> str:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    doc["run"]["metadata"]["name"] = name
    doc["run"]["spec"]["timing"]["latencyNs"]["median"] = median
    for measurement in doc["run"]["spec"].get("measurements", []):
        if measurement.get("statistic") == "median":
            measurement["value"] = median
    return json.dumps(doc, indent=2) + "\n"


def _commit_with_hooks(
    tmp_path: Path, hook_repo: tuple[Path, str], config: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """A repository with one record committed, then a second record with its name staged."""
    repo_path, commit = hook_repo
    config = json.loads(json.dumps(config))
    for repo in config["repos"]:
        repo["repo"], repo["rev"] = str(repo_path), commit
    work = tmp_path / "work"
    (work / "records").mkdir(parents=True)
    _git(work, "init", "-q")
    (work / "records" / "first.json").write_text(_record("jsd-run", 2_290_080), "utf-8")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "first record")
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), "utf-8")
    (work / "records" / "second.json").write_text(_record("jsd-run", 2_290_000), "utf-8")
    _git(work, "add", ".")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        # One pre-commit cache for the module's runs: the hook environment is built once.
        env={**os.environ, "PRE_COMMIT_HOME": str(hook_repo[0].parent / "pre-commit-home")},
        check=False,
    )


@pytest.mark.slow
def test_first_configuration_finds_a_name_committed_earlier(
    tmp_path: Path, hook_repo: tuple[Path, str]
) -> None:
    done = _commit_with_hooks(tmp_path, hook_repo, _configs()[0])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[duplicate-name]" in done.stdout, done.stdout


@pytest.mark.slow
def test_changed_files_hook_alone_cannot_see_the_earlier_name(
    tmp_path: Path, hook_repo: tuple[Path, str]
) -> None:
    """Why the page shows the folder hook first: the per-file hook passes this commit."""
    done = _commit_with_hooks(tmp_path, hook_repo, _configs()[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kernelindex validate --verify-digests" in done.stdout
    assert "Passed" in done.stdout


def _github_workflows() -> list[dict[str, Any]]:
    found = [
        yaml.safe_load(b.code)
        for b in blocks(PAGE.read_text("utf-8"), PAGE)
        if b.language in {"yaml", "yml"}
    ]
    return [doc for doc in found if isinstance(doc, dict) and "jobs" in doc]


def test_the_validation_workflow_reads_only_and_installs_into_setup_pythons_python() -> None:
    """Least privilege, and pip into a Python that allows it (PEP 668 system Pythons)."""
    [workflow] = _github_workflows()
    assert workflow["permissions"] == {"contents": "read"}
    [job] = workflow["jobs"].values()
    steps = job["steps"]
    setup = next(i for i, s in enumerate(steps) if "setup-python" in s.get("uses", ""))
    install = next(i for i, s in enumerate(steps) if "pip install" in s.get("run", ""))
    assert setup < install
    # Before the first release: from GitHub at a full commit.
    assert re.search(
        r"@ git\+https://github\.com/kernelindex/kernelindex-sdk@[0-9a-f]{40}",
        steps[install]["run"],
    )

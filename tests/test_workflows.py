"""The GitHub workflows: CI runs .ci/run; a tag releases the checked build, least privilege."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text("utf-8"))
    # YAML 1.1 reads the key `on` as True.
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in doc["jobs"].values() for step in job.get("steps", [])]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_action_is_pinned_to_a_commit(path: Path) -> None:
    """A tag can be moved; a full commit SHA cannot."""
    uses = [step["uses"] for step in _steps(_load(path.name)) if "uses" in step]
    assert uses
    for action in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_default_permissions_read_at_most(path: Path) -> None:
    doc = _load(path.name)
    assert doc["permissions"] in ({}, {"contents": "read"})
    for job in doc["jobs"].values():
        for scope, level in job.get("permissions", {}).items():
            assert level in {"read", "none"} or (scope, level) == ("id-token", "write")


def test_ci_runs_the_one_entry() -> None:
    doc = _load("ci.yml")
    assert {"push", "pull_request"} <= set(doc["on"])
    assert [s["run"] for s in _steps(doc) if "run" in s] == ["bash .ci/run"]


def test_release_publishes_only_a_checked_build_from_a_version_tag() -> None:
    doc = _load("release.yml")
    assert doc["on"]["push"] == {"tags": ["v*"]}
    build, publish = doc["jobs"]["build"], doc["jobs"]["publish"]
    script = "\n".join(s.get("run", "") for s in build["steps"])
    assert "python -m build" in script
    assert "twine check --strict dist/*" in script
    assert "_version.py" in script
    assert publish["needs"] == "build"
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    [upload] = [s for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    # Trusted publishing: no token or password is passed.
    assert not upload.get("with")


def test_ci_script_installs_the_built_wheel_in_a_clean_venv_and_runs_the_cli() -> None:
    script = (ROOT / ".ci" / "run").read_text("utf-8")
    step = script[script.index("== the built wheel in a clean venv") :]
    assert "python -m build" in step
    assert "twine check --strict" in step
    assert 'python3 -m venv "$dist/venv"' in step
    for command in ("--version", "validate", "digest", "schema"):
        assert f"./venv/bin/kernelindex {command}" in step
    assert "check-jsonschema" in step

"""The GitHub workflows: CI runs .ci/run; a tag releases the checked build, least privilege."""

from __future__ import annotations

import json
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


# -- the benchmark workflow of docs/guides/github-action.md --------------------------------

GUIDE = ROOT / "docs" / "guides" / "github-action.md"
ACTION = "kernelindex/kernelindex-sdk@"


def _guide_workflow() -> dict[str, Any]:
    """The guide's complete workflow: its first YAML block with jobs."""
    for block in re.findall(r"```yaml\n(.*?)```", GUIDE.read_text("utf-8"), flags=re.DOTALL):
        doc: dict[str, Any] = yaml.safe_load(block)
        if "jobs" in doc:
            doc["on"] = doc.pop(True, doc.get("on"))
            return doc
    raise AssertionError("the guide has no workflow")


def _action_job(doc: dict[str, Any]) -> tuple[str, dict[str, Any], int]:
    """The job that runs the action, and the index of the action's step in it."""
    [(name, job, index)] = [
        (name, job, i)
        for name, job in doc["jobs"].items()
        for i, step in enumerate(job.get("steps", []))
        if step.get("uses", "").startswith(ACTION)
    ]
    return name, job, index


def test_the_guides_workflow_keeps_its_store_on_a_branch_not_an_artifact() -> None:
    """History kept: an artifact expires and its last upload wins; the store branch is
    restored on every run and saved by the action itself, before its gate."""
    doc = _guide_workflow()
    _, job, index = _action_job(doc)
    step = job["steps"][index]
    assert step["with"]["store-branch"]
    assert "db" not in step["with"]  # the default SQLite file, which the branch keeps
    assert job["permissions"]["contents"] == "write"
    for other in (s for j in doc["jobs"].values() for s in j.get("steps", [])):
        if other is not step:
            # No step of the workflow downloads, uploads or caches the store itself.
            text = json.dumps(other)
            assert "sqlite3" not in text, other
            assert "kernelindex-store" not in text, other


def test_the_guides_workflow_saves_before_the_gate_can_fail_the_job() -> None:
    """A regression on main: the gate is the action's last act (fail-on-regression), so
    no save step of the workflow comes after it to be skipped; steps and jobs that
    publish after it run always()."""
    doc = _guide_workflow()
    name, job, index = _action_job(doc)
    assert job["steps"][index]["with"]["fail-on-regression"]
    after = job["steps"][index + 1 :]
    assert after
    for step in after:
        assert "always()" in step.get("if", ""), step
    for other_name, other in doc["jobs"].items():
        needs = other.get("needs", [])
        if name in ([needs] if isinstance(needs, str) else needs):
            assert "always()" in other["if"], other_name


def test_the_actions_script_saves_before_anything_that_can_fail_the_step() -> None:
    """The order inside the action: ingest, save, then summary, comment, site, and the
    status last (tests/test_action.py runs it: a regression on main is saved)."""
    script = (ROOT / "scripts" / "kernelindex_action.py").read_text("utf-8")
    record = script[script.index("def _record(") : script.index("def _report(")]
    assert record.index("job.ingest()") < record.index("job.save(store)")
    main = script[script.index("def main(") :]
    order = [
        main.index("_record(job, store)"),
        main.index("_report(job, compared)"),
        main.index("return max(statuses)"),
    ]
    assert order == sorted(order)
    steps = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))["runs"]["steps"]
    assert steps[-1]["id"] == "check"


def test_the_guides_workflow_has_one_store_writer_at_a_time() -> None:
    """Concurrency: two pushes must not restore the same store and race to save it; a
    push's run is never cancelled midway, a pull request's superseded run may be."""
    _, job, _ = _action_job(_guide_workflow())
    concurrency = job["concurrency"]
    assert "kernelindex-store" in concurrency["group"]
    assert "github.event_name == 'pull_request'" in concurrency["group"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"


def test_the_guides_gpu_job_holds_no_write_permission_or_secret() -> None:
    """Self-hosted GPU runners run a pull request's code: that job gets nothing to abuse."""
    doc = _guide_workflow()
    assert doc["permissions"] == {"contents": "read"}
    action_job, _, _ = _action_job(doc)
    gpu = [job for job in doc["jobs"].values() if "self-hosted" in job.get("runs-on", [])]
    assert gpu
    for job in gpu:
        assert all(level != "write" for level in job.get("permissions", {}).values())
        assert "secrets." not in json.dumps(job)
        assert not any(s.get("uses", "").startswith(ACTION) for s in job["steps"])
    assert "self-hosted" not in doc["jobs"][action_job]["runs-on"]


def test_the_guide_warns_about_forks_and_shows_how_to_wire_a_producer() -> None:
    page = GUIDE.read_text("utf-8")
    assert "## Pull requests from forks" in page
    assert "require approval" in page
    assert "## Your own producer" in page
    assert "producer.md" in page
    assert "importers.md" in page

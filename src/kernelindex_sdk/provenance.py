"""Provenance: the commit, branch and commit time of the code a run measured.

They are run annotations, observations that no digest covers:
``kernelindex.dev/commit``, ``kernelindex.dev/branch`` and ``kernelindex.dev/commit-time``
(RFC 3339, written in UTC as ``2026-05-27T17:14:29.000Z``). A history orders a series by
commit time, so every producer writes the same keys: ``kernelindex bench`` (from the usual
CI variables, else ``git``), and ``import`` and ``ingest`` with ``--commit``/``--branch``/
``--commit-time`` for records that lack them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import attrs

from ._base.timestamps import format_observed_at
from .errors import ArgumentError

__all__ = [
    "BRANCH",
    "COMMIT",
    "COMMIT_TIME",
    "PROVENANCE_KEYS",
    "Provenance",
    "annotate",
    "detect",
    "from_ci",
    "from_git",
    "normalize_commit_time",
    "without_provenance",
]

#: The commit of the code measured (a git object name, as CI gives it).
COMMIT: Final = "kernelindex.dev/commit"
#: The branch the commit was measured on.
BRANCH: Final = "kernelindex.dev/branch"
#: When the commit was made (RFC 3339, UTC, ``Z``).
COMMIT_TIME: Final = "kernelindex.dev/commit-time"
#: The provenance annotations, in the order they are written.
PROVENANCE_KEYS: Final = (COMMIT, BRANCH, COMMIT_TIME)

# CI systems' variables, first match wins: (commit, branches in order of preference,
# commit time). GitHub's GITHUB_REF_NAME is "123/merge" on a pull request, where
# GITHUB_HEAD_REF names the branch.
_CI_VARIABLES: Final = (
    ("GITHUB_SHA", ("GITHUB_HEAD_REF", "GITHUB_REF_NAME"), None),
    ("CI_COMMIT_SHA", ("CI_COMMIT_REF_NAME", "CI_COMMIT_BRANCH"), "CI_COMMIT_TIMESTAMP"),
    ("BUILDKITE_COMMIT", ("BUILDKITE_BRANCH",), None),
    ("CIRCLE_SHA1", ("CIRCLE_BRANCH",), None),
    ("TRAVIS_COMMIT", ("TRAVIS_BRANCH",), None),
    ("BUILD_SOURCEVERSION", ("BUILD_SOURCEBRANCHNAME",), None),
    ("GIT_COMMIT", ("GIT_BRANCH",), None),
)
_GIT_TIMEOUT_S: Final = 10


def normalize_commit_time(text: str) -> str:
    """Return an RFC 3339 timestamp in the published UTC form (``...T17:14:29.000Z``).

    One form keeps commit times comparable as text, whatever zone git or CI wrote.

    Raises:
        ArgumentError: for text that is not an RFC 3339 timestamp with a zone.
    """
    candidate = text.strip()
    if candidate[-1:] in ("Z", "z"):
        candidate = candidate[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        moment = None
    if moment is None or "T" not in candidate.upper() or moment.utcoffset() is None:
        raise ArgumentError(
            argument="commit_time",
            reason=f"expected an RFC 3339 timestamp with a zone, got {text!r}",
        )
    return format_observed_at(moment.astimezone(timezone.utc))


def _commit_time_or_none(value: str | None) -> str | None:
    return None if value is None else normalize_commit_time(value)


@attrs.frozen(kw_only=True)
class Provenance:
    """Where a run's code came from; any part may be unknown (None).

    Attributes:
        commit: The commit measured.
        branch: Its branch.
        commit_time: When it was committed, RFC 3339 (normalized to UTC on creation).
    """

    commit: str | None = None
    branch: str | None = None
    commit_time: str | None = attrs.field(default=None, converter=_commit_time_or_none)

    def annotations(self) -> dict[str, str]:
        """The known parts as annotations."""
        values = (self.commit, self.branch, self.commit_time)
        return {key: value for key, value in zip(PROVENANCE_KEYS, values, strict=True) if value}

    def __bool__(self) -> bool:
        return bool(self.annotations())

    def or_else(self, other: Provenance) -> Provenance:
        """Each part from ``self``, else from ``other``."""
        return Provenance(
            commit=self.commit or other.commit,
            branch=self.branch or other.branch,
            commit_time=self.commit_time or other.commit_time,
        )


def from_ci(environ: Mapping[str, str] | None = None) -> Provenance:
    """Provenance from a CI system's variables (GitHub, GitLab, Buildkite, CircleCI,
    Travis, Azure Pipelines, Jenkins), or an empty one outside CI."""
    env = os.environ if environ is None else environ
    for commit_var, branch_vars, time_var in _CI_VARIABLES:
        commit = env.get(commit_var)
        if not commit:
            continue
        branch = next((env[v] for v in branch_vars if env.get(v)), None)
        when = env.get(time_var) if time_var else None
        return Provenance(commit=commit, branch=branch, commit_time=when or None)
    return Provenance()


def _git(cwd: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(  # noqa: S603 (a fixed program and arguments)
            [git, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def from_git(cwd: str | Path | None = None, commit: str | None = None) -> Provenance:
    """Provenance of the git work tree at ``cwd`` (its HEAD, or ``commit``), or an empty one
    where git or a repository is missing. A detached HEAD has no branch."""
    where = Path(cwd) if cwd is not None else Path.cwd()
    rev = commit or "HEAD"
    sha = _git(where, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if sha is None:
        return Provenance()
    when = _git(where, "show", "-s", "--format=%cI", sha)
    branch = None
    if commit is None:
        name = _git(where, "rev-parse", "--abbrev-ref", "HEAD")
        branch = None if name in (None, "HEAD") else name
    return Provenance(commit=sha, branch=branch, commit_time=when)


def detect(
    given: Provenance | None = None,
    *,
    cwd: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Provenance:
    """The provenance of a run: what is ``given`` (``--commit`` ...), else CI's variables,
    else ``git`` in ``cwd``. A commit time comes from git when the commit is known there."""
    found = (given or Provenance()).or_else(from_ci(environ))
    if found.commit_time is None or found.commit is None or found.branch is None:
        git = from_git(cwd, found.commit)
        if found.commit is None or git.commit is None or git.commit.startswith(found.commit):
            found = found.or_else(git)
    return found


def _run_of(record: Any) -> dict[str, Any] | None:
    if not isinstance(record, dict):
        return None
    run = record.get("run") if "run" in record else record
    if isinstance(run, dict) and run.get("kind") == "BenchmarkRun":
        return run
    return None


def annotate(record: dict[str, Any], provenance: Provenance) -> bool:
    """Add the provenance a run (or a bundle's run) lacks to its annotations, in place.

    A part the run already has is kept: provenance describes the first measurement.

    Returns:
        Whether anything was added.
    """
    run = _run_of(record)
    wanted = provenance.annotations()
    if run is None or not wanted:
        return False
    metadata = run.setdefault("metadata", {})
    notes = metadata.get("annotations") or {}
    missing = {k: v for k, v in wanted.items() if k not in notes}
    if not missing:
        return False
    metadata["annotations"] = {**notes, **missing}
    return True


def without_provenance(record: Any) -> Any:
    """A copy of a record (a run or bundle's JSON value) without its provenance annotations;
    an annotations object left empty is dropped. Other values are returned as they are."""
    run = _run_of(record)
    if run is None:
        return record
    notes = run.get("metadata", {}).get("annotations")
    if not isinstance(notes, dict) or not any(k in notes for k in PROVENANCE_KEYS):
        return record
    kept = {k: v for k, v in notes.items() if k not in PROVENANCE_KEYS}
    metadata = {k: v for k, v in run["metadata"].items() if k != "annotations"}
    if kept:
        metadata["annotations"] = kept
    new_run = {**run, "metadata": metadata}
    return {**record, "run": new_run} if "run" in record else new_run

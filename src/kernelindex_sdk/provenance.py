"""Provenance: the commit, branch and commit time of the code a run measured.

They are run annotations, observations that no digest covers:
``kernelindex.dev/commit``, ``kernelindex.dev/branch`` and ``kernelindex.dev/commit-time``
(RFC 3339, written in UTC as ``2026-05-27T17:14:29.000Z``). A history orders a series by
commit time, so every producer writes the same keys: ``kernelindex bench`` (from the usual
CI variables, else ``git``), and ``import`` and ``ingest`` with ``--commit``/``--branch``/
``--commit-time`` for records that lack them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import attrs

from ._base.arguments import short_repr, text
from ._base.timestamps import format_observed_at
from .errors import ArgumentError, TimestampError

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
    "github_pull_request_branch",
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
# commit time). On a GitHub pull request (GITHUB_HEAD_REF set) the branch is the head's
# label instead (github_pull_request_branch).
_CI_VARIABLES: Final = (
    ("GITHUB_SHA", ("GITHUB_REF_NAME",), None),
    ("CI_COMMIT_SHA", ("CI_COMMIT_REF_NAME", "CI_COMMIT_BRANCH"), "CI_COMMIT_TIMESTAMP"),
    ("BUILDKITE_COMMIT", ("BUILDKITE_BRANCH",), None),
    ("CIRCLE_SHA1", ("CIRCLE_BRANCH",), None),
    ("TRAVIS_COMMIT", ("TRAVIS_BRANCH",), None),
    ("BUILD_SOURCEVERSION", ("BUILD_SOURCEBRANCHNAME",), None),
    ("GIT_COMMIT", ("GIT_BRANCH",), None),
)
_GIT_TIMEOUT_S: Final = 10
# RFC 3339's date-time (section 5.6), ASCII digits only.
_RFC3339: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def normalize_commit_time(text: str) -> str:
    """Return an RFC 3339 timestamp in the published UTC form (``...T17:14:29.000Z``).

    One form keeps commit times comparable as text, whatever zone git or CI wrote.
    Only RFC 3339's own form is read (``2026-05-27T17:14:29+02:00``, fractions and ``Z``
    allowed, ``T`` or a blank between date and time), in ASCII digits: not the other forms
    Python's ``fromisoformat`` takes (week dates, hours alone, an offset without minutes).

    Raises:
        ArgumentError: for text that is not an RFC 3339 timestamp with a zone, or one
            whose instant in UTC falls outside years 1 to 9999.
    """
    if not isinstance(text, str) or _RFC3339.fullmatch(text.strip()) is None:
        raise ArgumentError(
            argument="commit_time",
            reason=f"expected an RFC 3339 timestamp with a zone, got {short_repr(text)}",
        )
    candidate = text.strip()
    if candidate[-1] in "Zz":
        candidate = candidate[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(candidate.replace("t", "T").replace(" ", "T"))
        return format_observed_at(moment.astimezone(timezone.utc))
    except ValueError:
        raise ArgumentError(
            argument="commit_time",
            reason=f"expected an RFC 3339 timestamp with a zone, got {short_repr(text)}"
            " (no such date or time)",
        ) from None
    except (OverflowError, TimestampError):
        raise ArgumentError(
            argument="commit_time",
            reason=f"expected an instant within years 1 to 9999 in UTC, got {short_repr(text)}",
        ) from None


def _commit_time_or_none(value: str | None) -> str | None:
    return None if value is None else normalize_commit_time(value)


def _optional_text(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # An annotation is JSON text: a lone surrogate (bytes that are not UTF-8) would fail
    # the record's writer, far from the argument that brought it.
    if value is not None:
        text(value, attribute.name)


@attrs.frozen(kw_only=True)
class Provenance:
    """Where a run's code came from; any part may be unknown (None).

    Attributes:
        commit: The commit measured.
        branch: Its branch.
        commit_time: When it was committed, RFC 3339 (normalized to UTC on creation).
    """

    commit: str | None = attrs.field(default=None, validator=_optional_text)
    branch: str | None = attrs.field(default=None, validator=_optional_text)
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


def _text(value: str | None) -> str | None:
    """An environment variable's value when it is text; bytes that are not UTF-8 (a lone
    surrogate on POSIX) are no branch or commit anyone can store: taken as unset."""
    if not value:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def github_pull_request_branch(env: Mapping[str, str]) -> str | None:
    """The branch a GitHub pull request's runs are recorded on: ``OWNER:BRANCH``.

    That is the head's label as GitHub shows it (``octocat:main`` for a fork's ``main``),
    read from the event file. A git branch name cannot hold ``:``, so a pull request's
    runs never join a pushed branch's history, its base's included, even from a fork
    whose branch has the base's name. Without the event file: ``pull/N:BRANCH``, N from
    ``GITHUB_REF`` (``refs/pull/N/merge``).

    Returns:
        None outside a pull request (no ``GITHUB_HEAD_REF``).
    """
    head = _text(env.get("GITHUB_HEAD_REF"))
    if head is None:
        return None
    try:
        with open(env.get("GITHUB_EVENT_PATH") or "", encoding="utf-8") as event_file:
            event = json.load(event_file)
        label = event["pull_request"]["head"]["label"]
    except (OSError, ValueError, KeyError, TypeError):
        label = None
    if isinstance(label, str) and ":" in label and _text(label):
        return label
    ref = env.get("GITHUB_REF") or ""
    number = ref.split("/")[2] if ref.startswith("refs/pull/") and ref.count("/") >= 3 else ""
    return f"pull/{number}:{head}" if number.isdigit() and number.isascii() else f"pull:{head}"


def from_ci(environ: Mapping[str, str] | None = None) -> Provenance:
    """Provenance from a CI system's variables (GitHub, GitLab, Buildkite, CircleCI,
    Travis, Azure Pipelines, Jenkins), or an empty one outside CI.

    On a GitHub pull request the branch is :func:`github_pull_request_branch`'s
    ``OWNER:BRANCH``, never the head branch's bare name. A value that is not text is
    taken as unset.
    """
    env = os.environ if environ is None else environ
    for commit_var, branch_vars, time_var in _CI_VARIABLES:
        commit = _text(env.get(commit_var))
        if not commit:
            continue
        branch = github_pull_request_branch(env) if commit_var == "GITHUB_SHA" else None
        if branch is None:
            branch = next((v for v in map(_text, map(env.get, branch_vars)) if v), None)
        when = _text(env.get(time_var)) if time_var else None
        return Provenance(commit=commit, branch=branch, commit_time=when)
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
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        # A branch name in bytes that are not UTF-8 is no text to record.
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

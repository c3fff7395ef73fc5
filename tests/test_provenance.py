"""Provenance: where it is found (flags, CI variables, git), how it is written, how compared."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _records import bundle

from kernelindex_sdk import provenance
from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.provenance import Provenance

FIXTURES = Path(__file__).parent / "fixtures"


def test_commit_time_is_normalized_to_utc_milliseconds() -> None:
    assert provenance.normalize_commit_time("2025-01-22T10:00:00+01:00") == (
        "2025-01-22T09:00:00.000Z"
    )
    assert provenance.normalize_commit_time("2025-01-22T09:00:00.123456Z") == (
        "2025-01-22T09:00:00.123Z"
    )


@pytest.mark.parametrize("text", ["2025-01-22", "2025-01-22T09:00:00", "yesterday", ""])
def test_commit_time_without_zone_or_time_is_refused(text: str) -> None:
    with pytest.raises(ArgumentError, match="expected an RFC 3339 timestamp with a zone"):
        provenance.normalize_commit_time(text)


def test_github_pull_request_runs_get_the_heads_label_never_its_bare_branch(
    tmp_path: Path,
) -> None:
    """Poisoned history: a fork's branch named like the base (main) must not record its
    runs as main's; the head's label (owner:branch) cannot be a git branch name."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"label": "fork-owner:main"}}}))
    env = {
        "GITHUB_SHA": "abc",
        "GITHUB_REF": "refs/pull/12/merge",
        "GITHUB_REF_NAME": "12/merge",
        "GITHUB_HEAD_REF": "main",
        "GITHUB_EVENT_PATH": str(event),
    }
    assert provenance.from_ci(env) == Provenance(commit="abc", branch="fork-owner:main")
    # Without the event file: the PR number from GITHUB_REF, still with a ':'.
    env["GITHUB_EVENT_PATH"] = str(tmp_path / "missing.json")
    assert provenance.from_ci(env).branch == "pull/12:main"
    # Not a pull request: the pushed branch.
    env["GITHUB_HEAD_REF"] = ""
    assert provenance.from_ci(env).branch == "12/merge"


def test_ci_variables_in_bytes_that_are_not_utf8_are_taken_as_unset() -> None:
    """Arguments class: a POSIX environment may hold non-UTF-8 bytes (lone surrogates)."""
    env = {"GITHUB_SHA": "abc", "GITHUB_REF_NAME": "ma\udcffin"}
    assert provenance.from_ci(env) == Provenance(commit="abc")


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:00:00-05:00",  # after year 9999 in UTC
        "0001-01-01T00:00:00+05:00",  # before year 1 in UTC
    ],
)
def test_commit_time_outside_years_1_to_9999_in_utc_is_an_argument_error(text: str) -> None:
    """Arguments class: a timestamp valid in its zone whose UTC instant overflows."""
    with pytest.raises(ArgumentError, match="within years 1 to 9999"):
        provenance.normalize_commit_time(text)


@pytest.mark.parametrize(
    "text",
    [
        "2025-W04-3T10:00:00Z",  # an ISO week date: fromisoformat reads it, RFC 3339 does not
        "2025-01-22T10:00:00+01",  # an offset without minutes
        "2025-01-22T10Z",  # hours alone
        "\uff12025-01-22T10:00:00Z",  # a digit of another script
        "2025-02-30T00:00:00Z",  # no such day
    ],
)
def test_commit_time_takes_rfc_3339_only(text: str) -> None:
    """Arguments class: the forms fromisoformat takes beyond RFC 3339."""
    with pytest.raises(ArgumentError, match="expected an RFC 3339 timestamp with a zone"):
        provenance.normalize_commit_time(text)


def test_provenance_refuses_branch_text_that_is_not_utf8() -> None:
    """Arguments class: a lone surrogate would fail the record's writer far from here."""
    with pytest.raises(ArgumentError, match="branch: expected UTF-8 text"):
        Provenance(branch="\udcff")


def test_gitlab_variables_give_the_commit_time() -> None:
    env = {
        "CI_COMMIT_SHA": "def",
        "CI_COMMIT_REF_NAME": "main",
        "CI_COMMIT_TIMESTAMP": "2025-02-28T12:00:00+00:00",
    }
    assert provenance.from_ci(env) == Provenance(
        commit="def", branch="main", commit_time="2025-02-28T12:00:00.000Z"
    )


def test_no_ci_gives_nothing() -> None:
    assert not provenance.from_ci({"HOME": "/root"})


def _repo(tmp_path: Path) -> tuple[Path, str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.invalid",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.invalid",
        "GIT_COMMITTER_DATE": "2025-03-03T10:00:00+02:00",
        "GIT_AUTHOR_DATE": "2025-03-03T10:00:00+02:00",
        "PATH": "/usr/bin:/bin",
    }
    for args in (["init", "-q", "-b", "feature"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    return repo, sha


def test_git_gives_commit_branch_and_time(tmp_path: Path) -> None:
    repo, sha = _repo(tmp_path)
    assert provenance.from_git(repo) == Provenance(
        commit=sha, branch="feature", commit_time="2025-03-03T08:00:00.000Z"
    )
    assert not provenance.from_git(tmp_path)


def test_detect_prefers_flags_then_ci_then_git(tmp_path: Path) -> None:
    repo, sha = _repo(tmp_path)
    assert provenance.detect(cwd=repo, environ={}).commit == sha
    ci = provenance.detect(cwd=repo, environ={"GITHUB_SHA": sha, "GITHUB_REF_NAME": "main"})
    # CI names the branch; git adds the commit time of the same commit.
    assert (ci.branch, ci.commit_time) == ("main", "2025-03-03T08:00:00.000Z")
    given = provenance.detect(
        Provenance(commit="other", branch="b"), cwd=repo, environ={"GITHUB_SHA": sha}
    )
    # A commit git does not know gets no time from another commit.
    assert given == Provenance(commit="other", branch="b")


def test_annotate_adds_only_what_is_missing() -> None:
    doc = bundle()
    assert provenance.annotate(doc, Provenance(commit="a", branch="main"))
    assert not provenance.annotate(doc, Provenance(commit="b"))
    assert doc["run"]["metadata"]["annotations"] == {
        "kernelindex.dev/commit": "a",
        "kernelindex.dev/branch": "main",
    }
    assert provenance.without_provenance(doc)["run"]["metadata"] == {
        "name": doc["run"]["metadata"]["name"]
    }


def test_without_provenance_keeps_other_annotations() -> None:
    doc = bundle()
    doc["run"]["metadata"]["annotations"] = {"host": "h1", "kernelindex.dev/commit": "a"}
    assert provenance.without_provenance(doc)["run"]["metadata"]["annotations"] == {"host": "h1"}
    assert doc["run"]["metadata"]["annotations"]["kernelindex.dev/commit"] == "a"


def _run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def test_import_writes_provenance(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    csv = FIXTURES / "liger" / "all_benchmark_data.subset.csv"
    status, err = _run(
        "import", "liger", str(csv), "-o", str(out), "--commit", "022a7947bf6b",
        "--branch", "main", "--commit-time", "2025-01-22T00:00:00Z",
    )  # fmt: skip
    assert status == 0, err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records
    for record in records:
        assert record["run"]["metadata"]["annotations"] == {
            "kernelindex.dev/commit": "022a7947bf6b",
            "kernelindex.dev/branch": "main",
            "kernelindex.dev/commit-time": "2025-01-22T00:00:00.000Z",
        }
    assert _run("validate", str(out))[0] == 0


def test_bench_records_ci_provenance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    repo, sha = _repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GITHUB_SHA", sha)
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    out = tmp_path / "runs.jsonl"
    status, err = _run(
        "bench", "jsd", "--tokens", "4", "--vocab", "64", "--no-progress", "--no-summary",
        "-o", str(out),
    )  # fmt: skip
    assert status == 0, err
    for line in out.read_text(encoding="utf-8").splitlines():
        notes = json.loads(line)["run"]["metadata"]["annotations"]
        assert notes["kernelindex.dev/commit"] == sha
        assert notes["kernelindex.dev/branch"] == "main"
        assert notes["kernelindex.dev/commit-time"] == "2025-03-03T08:00:00.000Z"

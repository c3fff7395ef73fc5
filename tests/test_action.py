"""The GitHub Action (action.yml and scripts/), run locally against a real store with fake
GITHUB_* files.

``gh`` is a fake on PATH that logs its arguments (and the comment body it was given);
kernelindex is the real CLI of this checkout; the store branch lives in a bare git
repository standing for GitHub.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
SCRIPT = SCRIPTS / "kernelindex_action.py"
FIXTURE = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
MARKER = "<!-- kernelindex-pr-check -->"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

FAKE_GH = """#!{python}
import json, os, sys
args = sys.argv[1:]
entry = {{"args": args}}
for a in args:
    if a.startswith("body=@"):
        entry["body"] = open(a[6:], encoding="utf-8").read()
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(entry) + "\\n")
if "--jq" in args:
    print(os.environ.get("FAKE_GH_EXISTING", ""))
"""


def _script_module(name: str) -> ModuleType:
    """A module of scripts/, imported as the action runs it (scripts/ first on the path)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def _slower(path: Path, factor: float, suffix: str, branch: str | None = None) -> Path:
    """The fixture's runs renamed, triton's timings ``factor`` times slower."""
    out = path / f"runs-{suffix}.jsonl"
    lines = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        run = doc["run"]
        run["metadata"]["name"] = f"{run['metadata']['name'][:200]}-{suffix}"
        if branch is not None:
            run["metadata"]["annotations"]["kernelindex.dev/branch"] = branch
        if run["spec"]["implementation"]["provider"] == "triton":
            timing = run["spec"]["timing"]["latencyNs"]
            timing["median"] = int(timing["median"] * factor)
            for m in run["spec"]["measurements"]:
                if m["metric"] == "latency":
                    m["value"] = int(m["value"] * factor)
            run["spec"]["measurements"] = [
                m for m in run["spec"]["measurements"] if m["metric"] == "latency"
            ]
        lines.append(json.dumps(doc))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _outputs(text: str) -> dict[str, str]:
    """A $GITHUB_OUTPUT file read as GitHub reads it (name=value, or name<<EOF...EOF)."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            found[name] = "\n".join(value)
        else:
            name, _, value_ = line.partition("=")
            found[name] = value_
    return found


class Job:
    """One action run's environment: its files, the fake gh and the store."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.cwd = tmp
        self.db = tmp / "store.sqlite3"
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        gh = bin_dir / "gh"
        gh.write_text(FAKE_GH.format(python=sys.executable))
        gh.chmod(0o755)
        self.gh_log = tmp / "gh.log"
        self.path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
        self.extra_env: dict[str, str] = {}

    def run(
        self,
        records: list[Path],
        *,
        event: str,
        ref: str,
        label: str | None = None,
        sha: str | None = None,
        **inputs: str,
    ) -> Any:
        n = len(list(self.tmp.glob("summary-*")))
        summary, output = self.tmp / f"summary-{n}.md", self.tmp / f"output-{n}.txt"
        event_path = self.tmp / f"event-{n}.json"
        head = {"label": label} if label is not None else {}
        event_path.write_text(json.dumps({"pull_request": {"number": 7, "head": head}}))
        runner_temp = self.tmp / f"temp-{n}"
        runner_temp.mkdir()
        env = {
            "PATH": self.path,
            "PYTHONPATH": str(ROOT / "src"),
            "KERNELINDEX": f"{sys.executable} -m kernelindex_sdk",
            "FAKE_GH_LOG": str(self.gh_log),
            "FAKE_GH_EXISTING": inputs.pop("existing", ""),
            "GITHUB_SHA": sha or f"{n:040x}",
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": "owner/repo",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output),
            "RUNNER_TEMP": str(runner_temp),
            "INPUT_RECORDS": " ".join(str(r) for r in records),
            "INPUT_DB": str(self.db),
            **GIT_ENV,
            **self.extra_env,
        }
        if event == "pull_request":
            env["GITHUB_HEAD_REF"] = ref
            env["GITHUB_REF_NAME"] = "7/merge"
            env["GITHUB_REF"] = "refs/pull/7/merge"
        else:
            env["GITHUB_REF_NAME"] = ref
        env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        done = subprocess.run(
            [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, cwd=self.cwd
        )
        done.summary = summary.read_text() if summary.exists() else ""  # type: ignore[attr-defined]
        done.output = _outputs(output.read_text()) if output.exists() else {}  # type: ignore[attr-defined]
        done.log = done.stdout + done.stderr  # type: ignore[attr-defined]
        return done

    def gh_calls(self) -> list[dict[str, Any]]:
        if not self.gh_log.exists():
            return []
        return [json.loads(line) for line in self.gh_log.read_text().splitlines()]


@pytest.fixture
def job(tmp_path: Path) -> Job:
    return Job(tmp_path)


def _stored(db: Path) -> list[Any]:
    from kernelindex_sdk.store import open_store

    with open_store(str(db), create=False) as store:
        return store.rows()


def test_a_push_to_main_ingests_with_provenance_and_comments_nowhere(job: Job) -> None:
    done = job.run([FIXTURE], event="push", ref="main")
    assert done.returncode == 0, done.stderr
    rows = _stored(job.db)
    assert len(rows) == 64
    assert {(r.branch, r.commit) for r in rows} == {("main", f"{0:040x}")}
    assert MARKER in done.summary
    assert job.gh_calls() == []
    assert done.output["status"] == "0"


def test_a_slower_pull_request_fails_the_gate_and_comments_the_table(job: Job) -> None:
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    slower = _slower(job.tmp, 1.3, "pr")
    done = job.run(
        [slower],
        event="pull_request",
        ref="feature",
        label="owner:feature",
        fail_on_regression="10",
    )
    assert done.returncode == 1, done.stderr
    # The table: 64 pairs, the 16 triton ones 30% slower.
    assert "64 pair(s)" in done.summary
    assert done.summary.count("| 1.300 |") == 16
    assert done.output["status"] == "1"
    markdown = Path(done.output["markdown"]).read_text()
    assert done.summary.startswith(markdown)
    calls = job.gh_calls()
    assert [c["args"][:3] for c in calls] == [
        ["api", "--paginate", "repos/owner/repo/issues/7/comments"],
        ["api", "repos/owner/repo/issues/7/comments", "-F"],
    ]
    assert calls[1]["body"] == markdown
    # The PR's runs are stored beside main's, on the head's label.
    branches = {r.branch for r in _stored(job.db)}
    assert branches == {"main", "owner:feature"}


def test_the_next_push_edits_the_same_comment(job: Job) -> None:
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    slower = _slower(job.tmp, 1.0, "again")
    done = job.run([slower], event="pull_request", ref="feature", existing="99")
    assert done.returncode == 0, done.stderr
    calls = job.gh_calls()
    assert calls[-1]["args"][:4] == ["api", "-X", "PATCH", "repos/owner/repo/issues/comments/99"]
    assert calls[-1]["body"].startswith(MARKER)


def test_the_comment_can_be_turned_off(job: Job) -> None:
    done = job.run([FIXTURE], event="pull_request", ref="feature", comment="false")
    assert done.returncode == 0, done.stderr
    assert job.gh_calls() == []


def test_several_record_paths_are_compared_together_and_the_site_written(job: Job) -> None:
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    a = _slower(job.tmp, 1.0, "a")
    b = _slower(job.tmp, 1.0, "b")
    site = job.tmp / "pages"
    done = job.run([a, b], event="push", ref="main", site=str(site))
    assert done.returncode == 0, done.stderr
    # The two inputs measured each series twice at one commit: replicates, pooled.
    assert "64 pair(s)" in done.summary
    assert "2 NEW runs of triton pooled (replicates)" in done.summary
    assert (site / "index.html").is_file()
    assert done.output["site"] == str(site)
    assert len(_stored(job.db)) == 64 * 3


def test_an_invalid_record_fails_ingest_and_says_so(job: Job) -> None:
    bad = job.tmp / "bad.jsonl"
    bad.write_text('{"run": {}}\n')
    done = job.run([bad], event="push", ref="main")
    assert done.returncode == 1
    assert "Ingest failed (exit 1)" in done.summary
    assert "Traceback" not in done.stderr


def test_no_records_input_is_exit_2(job: Job) -> None:
    done = job.run([], event="push", ref="main")
    assert done.returncode == 2
    assert "'records' input is empty" in done.stdout


def test_a_records_input_with_an_unclosed_quote_is_one_line(job: Job) -> None:
    """Arguments class: the records input is split like a shell line; a stray quote."""
    done = job.run([Path('runs "x.jsonl')], event="push", ref="main")
    assert done.returncode == 2
    assert "the 'records' input: No closing quotation" in done.stdout
    assert "Traceback" not in done.log


# --- Poisoned history: a pull request never writes the base's history ------------------


def test_a_pull_request_from_a_fork_branch_named_main_never_writes_mains_history(
    job: Job,
) -> None:
    """Poisoned history: the head branch's bare name ('main') would be the base's."""
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    fork = _slower(job.tmp, 3.0, "fork")
    done = job.run([fork], event="pull_request", ref="main", label="mallory:main")
    assert done.returncode == 0, done.stderr
    rows = _stored(job.db)
    assert {r.branch for r in rows} == {"main", "mallory:main"}
    assert all(r.commit == f"{0:040x}" for r in rows if r.branch == "main")
    # Without the event file's label: still a name no branch can have.
    done = job.run([_slower(job.tmp, 3.0, "nolabel")], event="pull_request", ref="main")
    assert done.returncode == 0, done.stderr
    assert "pull/7:main" in {r.branch for r in _stored(job.db)}


def test_pull_request_runs_that_name_the_base_branch_are_compared_not_stored(job: Job) -> None:
    """Poisoned history: records made with a producer that stamped the head's bare name."""
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    claims = _slower(job.tmp, 3.0, "claims", branch="main")
    done = job.run([claims], event="pull_request", ref="main", label="mallory:main")
    assert done.returncode == 1
    assert "64 run(s) of this pull request name the base branch 'main'" in done.stdout
    assert "Not stored" in done.summary
    assert "64 pair(s)" in done.summary
    assert len(_stored(job.db)) == 64
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "branch",
    [
        "<!--",  # an HTML comment opener hides everything after it
        "x<!--y",
        "</details><!--",
        "`<!--`",  # closes a code span first
        "**bold** [link](https://example.com) | pipe",
    ],
)
def test_a_branch_name_holding_markup_cannot_hide_or_forge_the_table(job: Job, branch: str) -> None:
    """Markdown injection: user-controlled text reaches the summary and the comment escaped."""
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    slower = _slower(job.tmp, 1.0, "md")
    done = job.run([slower], event="pull_request", ref=branch, label=f"o:{branch}")
    assert done.returncode == 0, done.stderr
    comment = job.gh_calls()[-1]["body"]
    for text in (done.summary, comment):
        # The only comment opener is the action's own marker; the table is there.
        assert text.count("<!--") == 1
        assert text.startswith(MARKER)
        assert "64 pair(s)" in text
        heading = text.splitlines()[1]
        assert "<" not in heading.replace("\\<", "")
        assert "`" not in heading.replace("\\`", "")


def test_a_base_branch_holding_markup_is_escaped_too(job: Job) -> None:
    """Markdown injection: the base input is the workflow's text, shown in the heading."""
    done = job.run([FIXTURE], event="push", ref="main", base="<!--")
    assert done.returncode == 0, done.stderr
    assert done.summary.count("<!--") == 1
    assert "\\<!\\--" in done.summary.splitlines()[1] or "\\<\\!--" in done.summary.splitlines()[1]


# --- Secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ki:hunter2pw@/db?host=/nonexistent-socket&port=1",
        "postgresql://ki@/db?host=/nonexistent-socket&port=1&password=hunter2pw",
        "postgresql://ki@/db?host=/nonexistent-socket&port=1&PassWord=hunter2pw",
        "postgresql://ki:hun?ter2#pw@/db?host=/nonexistent-socket&port=1",
        "postgresql://ki:hunter2pw%zz@/db?host=/nonexistent-socket",
        "host=/nonexistent-socket port=1 password='hunter2 pw'",
    ],
)
def test_the_actions_log_never_shows_the_store_password(job: Job, url: str) -> None:
    """Secrets: every form libpq reads a password from, in the log and the summary."""
    done = job.run([FIXTURE], event="push", ref="main", db=url)
    assert done.returncode == 2
    assert "***" in done.log
    for part in ("hunter2", "ter2#pw", "hun?"):
        assert part not in done.log + done.summary


def test_the_echoed_commands_mask_every_password_form() -> None:
    """Secrets: the '+ command' lines of the log use the SDK's masked_url."""
    action = _script_module("kernelindex_action")
    for url in (
        "postgresql://u:s3cret@h/db",
        "postgresql://u@h/db?password=s3cret",
        "postgresql://u:s3?c#ret@h/db",
        "host=h password=s3cret",
    ):
        shown = action._shown(["kernelindex", "compare", "--db", url, "x.jsonl"])
        assert "s3" not in shown, shown
        assert "***" in shown, shown


def test_a_postgresql_store_with_a_password_runs_without_showing_it(tmp_path: Path) -> None:
    """Secrets: a real PostgreSQL store (trust auth ignores the password) through the
    whole action, the dashboard included."""
    pytest.importorskip("psycopg")
    sys.path.insert(0, str(ROOT / "tests" / "store"))
    try:
        from _postgres_server import Server, find_bindir
    finally:
        sys.path.remove(str(ROOT / "tests" / "store"))
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL's initdb/pg_ctl not found")
        pytest.skip("PostgreSQL's initdb/pg_ctl not found")
    server = Server(bindir)
    try:
        url = server.new_database().replace("postgres@", "postgres:hunter2pw@") + (
            "&password=hunter2pw"
        )
        job = Job(tmp_path)
        done = job.run([FIXTURE], event="push", ref="main", db=url, site=str(tmp_path / "s"))
        assert done.returncode == 0, done.log
        assert "hunter2" not in done.log + done.summary
        assert "--db 'postgresql://postgres:***@/postgres?" in done.log
    finally:
        server.stop()


# --- Runners without gh, workflow commands ----------------------------------------------


def test_without_gh_a_pull_request_skips_the_comment_with_one_notice(job: Job) -> None:
    """A self-hosted runner without the GitHub CLI: no FileNotFoundError traceback."""
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    empty = job.tmp / "empty-bin"
    empty.mkdir()
    job.path = str(empty)
    done = job.run([_slower(job.tmp, 1.0, "nogh")], event="pull_request", ref="f")
    assert done.returncode == 0, done.log
    notices = [line for line in done.stdout.splitlines() if "gh" in line]
    assert len(notices) == 1, done.stdout
    assert notices[0].startswith("::notice::"), done.stdout
    assert "Traceback" not in done.log
    assert len(_stored(job.db)) == 128


def test_record_text_in_the_log_cannot_issue_workflow_commands(job: Job) -> None:
    """Log injection: a file name or record text starting with '::' is not a command."""
    bad = job.tmp / "::error::forged.jsonl"
    bad.write_text('{"run": {}}\n')
    job.extra_env["GITHUB_ACTIONS"] = "true"
    job.cwd = job.tmp
    done = job.run([Path(bad.name)], event="push", ref="main")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    forged = [i for i, line in enumerate(lines) if line.startswith("::error::forged")]
    assert forged
    for i in forged:
        opened = [line for line in lines[:i] if line.startswith("::stop-commands::")]
        assert opened, lines[: i + 1]
        token = opened[-1].split("::")[2]
        assert f"::{token}::" in lines[i + 1 :]


# --- The store branch: saved before the gate, restored on every run ----------------------


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository standing for GitHub, and a clone of it (the job's checkout)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    run = {"check": True, "capture_output": True, "env": {**os.environ, **GIT_ENV}}
    subprocess.run(["git", "init", "--bare", "-b", "main", str(remote)], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "clone", str(remote), str(work)], **run)  # type: ignore[call-overload]
    (work / "README").write_text("x\n")
    subprocess.run(["git", "-C", str(work), "add", "README"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(work), "commit", "-m", "x"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(work), "push", "origin", "main"], **run)  # type: ignore[call-overload]
    return remote, work


def _branch_store(remote: Path, into: Path, branch: str = "kernelindex-store") -> list[Any]:
    """The runs of the store the branch holds, read from a fresh copy."""
    blob = subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"{branch}:kernelindex.sqlite3.gz"],
        check=True,
        capture_output=True,
    ).stdout
    import gzip

    into.write_bytes(gzip.decompress(blob))
    return _stored(into)


def _head(remote: Path, branch: str = "kernelindex-store") -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", branch],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _store_job(tmp_path: Path, work: Path) -> Job:
    job = Job(tmp_path)
    job.cwd = work
    job.db = work / "kernelindex.sqlite3"
    return job


def test_a_regression_on_main_is_saved_to_the_store_branch_before_the_gate_fails(
    tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    """History kept: the commit that regressed reaches the store, and the next run
    compares with it rather than with the old baseline forever."""
    remote, work = repo
    job = _store_job(tmp_path, work)
    first = job.run([FIXTURE], event="push", ref="main", store_branch="kernelindex-store")
    assert first.returncode == 0, first.log
    assert "does not exist yet" in first.stdout
    assert first.output["saved"] == _head(remote)
    assert len(_branch_store(remote, tmp_path / "a.sqlite3")) == 64

    # A fresh checkout (a new job): the store comes from the branch.
    job.db.unlink()
    slower = _slower(tmp_path, 1.3, "slow")
    gated = job.run(
        [slower],
        event="push",
        ref="main",
        store_branch="kernelindex-store",
        fail_on_regression="10",
    )
    assert gated.returncode == 1, gated.log
    assert gated.summary.count("| 1.300 |") == 16
    assert len(_branch_store(remote, tmp_path / "b.sqlite3")) == 128
    assert gated.output["saved"] == _head(remote)
    # The branch keeps one commit: the repository does not grow by a store per push.
    count = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-list", "--count", "kernelindex-store"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert count.stdout.strip() == "1"

    # The next push compares with the regressed commit: no longer red.
    job.db.unlink()
    again = _slower(tmp_path, 1.3, "again")
    done = job.run(
        [again], event="push", ref="main", store_branch="kernelindex-store", fail_on_regression="10"
    )
    assert done.returncode == 0, done.log
    assert "| 1.300 |" not in done.summary


def test_a_pull_request_restores_the_store_branch_and_never_saves(
    tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    remote, work = repo
    job = _store_job(tmp_path, work)
    assert (
        job.run([FIXTURE], event="push", ref="main", store_branch="kernelindex-store").returncode
        == 0
    )
    before = _head(remote)
    job.db.unlink()
    slower = _slower(tmp_path, 1.3, "pr")
    done = job.run([slower], event="pull_request", ref="f", store_branch="kernelindex-store")
    assert done.returncode == 0, done.log
    assert done.summary.count("| 1.300 |") == 16  # compared with the restored history
    assert _head(remote) == before
    assert "saved" not in done.output


def test_an_overtaken_save_restores_ingests_again_and_saves(
    tmp_path: Path, repo: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrency: two runs restored the same store; the second save must not drop the
    first one's runs (an artifact's last upload would)."""
    remote, work = repo
    job = _store_job(tmp_path, work)
    assert (
        job.run([FIXTURE], event="push", ref="main", store_branch="kernelindex-store").returncode
        == 0
    )
    action = _script_module("kernelindex_action")
    store = _script_module("kernelindex_action_store")
    other = _slower(tmp_path, 1.0, "other")
    real_save = action.save
    calls = []

    def save_after_another_run(branch: str, path: Path, lease: str, *args: Any) -> str:
        if not calls:
            # Another run restores the same store, adds its runs and saves first.
            copy = tmp_path / "other.sqlite3"
            other_lease = store.restore(branch, copy, env)
            subprocess.run(
                [sys.executable, "-m", "kernelindex_sdk", "ingest", str(other), "--db", str(copy)],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            )
            store.save(branch, copy, other_lease, "other", env)
        calls.append(lease)
        return str(real_save(branch, path, lease, *args))

    monkeypatch.setattr(action, "save", save_after_another_run)
    monkeypatch.chdir(work)
    mine = _slower(tmp_path, 1.0, "mine")
    env = {
        **os.environ,
        **GIT_ENV,
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_SHA": "f" * 40,
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_REF_NAME": "main",
        "RUNNER_TEMP": str(tmp_path),
        "INPUT_RECORDS": str(mine),
        "INPUT_DB": str(job.db),
        "INPUT_STORE_BRANCH": "kernelindex-store",
    }
    for key in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_HEAD_REF", "GITHUB_EVENT_PATH"):
        env.pop(key, None)
    assert action.main(env) == 0
    assert len(calls) == 2
    assert calls[0] != calls[1]
    names = {r.name for r in _branch_store(remote, tmp_path / "c.sqlite3")}
    assert len(names) == 64 * 3
    assert any(n.endswith("-other") for n in names)
    assert any(n.endswith("-mine") for n in names)


def test_the_store_branch_refuses_a_postgresql_store(job: Job) -> None:
    done = job.run(
        [FIXTURE], event="push", ref="main", db="postgresql://u:pw1234@h/db", store_branch="s"
    )
    assert done.returncode == 2
    assert "store-branch keeps a SQLite file" in done.stdout
    assert "pw1234" not in done.log


def test_the_store_branch_outside_a_checkout_is_one_line(job: Job) -> None:
    done = job.run([FIXTURE], event="push", ref="main", store_branch="kernelindex-store")
    assert done.returncode == 2
    assert "needs the repository checked out" in done.stdout
    assert "Traceback" not in done.log


# --- action.yml ---------------------------------------------------------------------------


def _action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text())  # type: ignore[no-any-return]


def test_action_yml_passes_every_input_to_the_script() -> None:
    """Each input the script reads is declared, and each declared input reaches it."""
    action = _action()
    declared = set(action["inputs"])
    steps = action["runs"]["steps"]
    check = next(s for s in steps if s.get("id") == "check")
    passed = {
        k[len("INPUT_") :].lower().replace("_", "-") for k in check["env"] if k.startswith("INPUT_")
    }
    script = SCRIPT.read_text()
    read = {name for name in declared if f'"{name}"' in script}
    assert read <= passed <= declared
    assert {
        "records",
        "db",
        "base",
        "fail-on-regression",
        "comment",
        "site",
        "store-branch",
    } <= read
    assert action["runs"]["using"] == "composite"
    assert set(action["outputs"]) == {"markdown", "status", "site", "saved"}


def test_the_actions_scripts_take_inputs_through_env_never_expressions() -> None:
    """Script injection: a ${{ }} inside run: is pasted into the shell before it runs."""
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["run"]


def _install_step() -> dict[str, Any]:
    return next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")


FAKE_PYTHON3 = """#!/bin/sh
# python3 -m venv DIR: make DIR/bin/python, a python that logs what it was asked.
[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 9
mkdir -p "$3/bin"
cat > "$3/bin/python" <<'EOF'
#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_LOG"
EOF
chmod +x "$3/bin/python"
"""


@pytest.mark.parametrize(
    ("sdk", "db", "installed"),
    [
        ("", "", "{root}"),
        ("", "postgresql://u@h/db", "{root}"),
        ("kernelindex-sdk==9.9", "postgres://u@h/db", "kernelindex-sdk==9.9"),
    ],
)
def test_the_install_step_installs_into_a_virtual_environment_it_makes(
    tmp_path: Path, sdk: str, db: str, installed: str
) -> None:
    """PEP 668: the runner's python3 may refuse pip; the action's own venv never does.
    The [postgres] extra is the extras script's, for every sdk input."""
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text(FAKE_PYTHON3)
    fake.chmod(0o755)
    log, output = tmp_path / "log", tmp_path / "output"
    env = {
        "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(tmp_path),
        "SDK": sdk,
        "INPUT_DB": db,
        "FAKE_LOG": str(log),
    }
    step = _install_step()
    subprocess.run(["bash", "-c", step["run"]], env=env, check=True)
    venv_python = tmp_path / "kernelindex-sdk-venv" / "bin" / "python"
    assert log.read_text().splitlines() == [
        f"-m pip install --disable-pip-version-check --quiet {installed.format(root=ROOT)}",
        f"{ROOT}/scripts/kernelindex_action_extras.py",
    ]
    assert _outputs(output.read_text()) == {"python": str(venv_python)}
    assert set(step["env"]) == {"SDK", "INPUT_DB"}


def test_without_the_venv_module_the_install_step_says_what_to_install(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'ensurepip is not available' >&2\nexit 1\n")
    fake.chmod(0o755)
    env = {
        "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "RUNNER_TEMP": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", "-c", _install_step()["run"]], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "apt-get install python3-venv" in done.stdout


def test_the_postgres_extra_is_read_from_the_installed_sdks_metadata() -> None:
    """A pinned sdk input gets the [postgres] extra of the version it installed."""
    extras = _script_module("kernelindex_action_extras")
    pyproject = (ROOT / "pyproject.toml").read_text()
    declared = re.search(r'^postgres = \["([^"]+)"\]', pyproject, flags=re.MULTILINE)
    assert declared is not None
    requires = [
        "attrs>=23",
        f'{declared.group(1)}; extra == "postgres"',
        'matplotlib>=3.8; extra == "plot"',
        "torch>=2.4; extra == 'bench'",
    ]
    assert extras.extra_requirements(requires) == [declared.group(1)]
    assert extras.extra_requirements(requires, "bench") == ["torch>=2.4"]


@pytest.mark.parametrize("db", ["", "store.sqlite3", "sqlite:///x.db"])
def test_the_extras_script_installs_nothing_for_a_sqlite_store(db: str) -> None:
    extras = _script_module("kernelindex_action_extras")
    assert extras.main({"INPUT_DB": db}) == 0


def test_the_extras_script_knows_a_connection_string_is_postgresql(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    extras = _script_module("kernelindex_action_extras")
    ran: list[list[str]] = []
    monkeypatch.setattr(extras.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(
        extras.importlib.metadata, "requires", lambda name: ['psycopg>=3; extra == "postgres"']
    )
    monkeypatch.setattr(
        extras.subprocess,
        "run",
        lambda cmd, check: ran.append(cmd) or subprocess.CompletedProcess(cmd, 0),
    )
    assert extras.main({"INPUT_DB": "host=db dbname=ki password=x"}) == 0
    assert ran
    assert ran[0][-1] == "psycopg>=3"
    assert ran[0][1:4] == ["-m", "pip", "install"]


def test_the_docs_workflows_pass_only_inputs_the_action_declares() -> None:
    action = _action()
    required = {k for k, v in action["inputs"].items() if v.get("required")}
    page = (ROOT / "docs" / "guides" / "github-action.md").read_text()
    uses = 0
    for block in re.findall(r"```yaml\n(.*?)```", page, flags=re.DOTALL):
        doc = yaml.safe_load(block)
        jobs = doc.get("jobs", {"": doc}).values()
        for job in jobs:
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("kernelindex/kernelindex-sdk@"):
                    assert set(step["with"]) <= set(action["inputs"]), step["with"]
                    assert required <= set(step["with"])
                    uses += 1
    assert uses >= 2

"""The script of the kernelindex GitHub Action (action.yml): ingest, compare, report.

Run by the action's composite step with its inputs as ``INPUT_*`` environment
variables, as GitHub passes them; tests run it locally with fake ``GITHUB_*`` files.

1. ``kernelindex compare --history BASE RECORDS --db DB --format markdown``: each of the
   job's runs against the latest point of its series on the base branch. It runs before
   ingest: once stored, a run on the base branch would be its own latest point.
2. ``kernelindex ingest RECORDS --db DB`` with the job's commit, branch and commit time
   for the runs that carry none.
3. The markdown goes to ``$GITHUB_STEP_SUMMARY`` and, on a pull request, to one PR
   comment that later pushes edit in place (``gh api``; needs ``pull-requests: write``).
4. With ``INPUT_SITE``, ``kernelindex site`` writes the dashboard there.

The exit status is compare's: 1 when ``fail-on-regression`` tripped or a record was
invalid, 2 on usage or I/O errors; ingest's when ingest failed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# The action's first step installs kernelindex-sdk into this interpreter.
from kernelindex_sdk.errors import KernelIndexError
from kernelindex_sdk.store import open_store

#: Opens the comment the action owns on a pull request (it edits that one on each push).
MARKER = "<!-- kernelindex-pr-check -->"
#: GitHub refuses comments longer than 65,536 characters.
COMMENT_LIMIT = 65_000


def _inputs(env: Mapping[str, str]) -> dict[str, str]:
    return {
        key[len("INPUT_") :].lower().replace("_", "-"): value.strip()
        for key, value in env.items()
        if key.startswith("INPUT_")
    }


def _kernelindex(env: Mapping[str, str]) -> list[str]:
    """The command that runs the CLI: $KERNELINDEX, else this interpreter's module."""
    given = env.get("KERNELINDEX")
    return shlex.split(given) if given else [sys.executable, "-m", "kernelindex_sdk"]


def _run(command: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``command``, showing it and its standard error in the job's log."""
    print("+ " + shlex.join(command), file=sys.stderr, flush=True)
    # The commands are this script's own, with the workflow's inputs as arguments.
    done = subprocess.run(  # noqa: S603
        list(command), capture_output=True, text=True, env=dict(env), check=False
    )
    sys.stderr.write(done.stderr)
    return done


def _commit_time(sha: str, env: Mapping[str, str]) -> str | None:
    """The commit's committer time from the job's checkout, when git knows the commit."""
    try:
        found = subprocess.run(  # noqa: S603 (the sha is an argument, not a command)
            ["git", "log", "-1", "--format=%cI", sha],  # noqa: S607 (git from PATH)
            capture_output=True,
            text=True,
            env=dict(env),
            check=False,
        )
    except OSError:
        return None
    text = found.stdout.strip()
    return text if found.returncode == 0 and text else None


def _ensure_store(db: str | None) -> str | None:
    """Create the store's tables when it has none; the problem, when it cannot be opened."""
    try:
        open_store(db).close()
    except KernelIndexError as err:
        return str(err)
    return None


def _branch(env: Mapping[str, str], inputs: Mapping[str, str]) -> str | None:
    return inputs.get("branch") or env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME")


def _pull_request(env: Mapping[str, str]) -> int | None:
    """The PR number of a pull_request event, from $GITHUB_EVENT_PATH."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not env.get("GITHUB_EVENT_NAME", "").startswith("pull_request"):
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number")
    return number if isinstance(number, int) else None


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)


def _comment(body: str, number: int, env: Mapping[str, str], workdir: Path) -> None:
    """Create the action's PR comment, or edit the one an earlier push made."""
    repo = env["GITHUB_REPOSITORY"]
    if len(body) > COMMENT_LIMIT:
        body = body[:COMMENT_LIMIT] + "\n\n… (cut: the job summary has the whole table)\n"
    body_file = workdir / "kernelindex-comment.md"
    body_file.write_text(body, encoding="utf-8")
    found = _run(
        [
            "gh",
            "api",
            "--paginate",
            f"repos/{repo}/issues/{number}/comments",
            "--jq",
            f'.[] | select(.body | startswith("{MARKER}")) | .id',
        ],
        env,
    )
    ids = found.stdout.split() if found.returncode == 0 else []
    if ids:
        target = ["-X", "PATCH", f"repos/{repo}/issues/comments/{ids[0]}"]
    else:
        target = [f"repos/{repo}/issues/{number}/comments"]
    posted = _run(["gh", "api", *target, "-F", f"body=@{body_file}"], env)
    if posted.returncode != 0:
        # The summary has the table already; a fork's read-only token lands here.
        print(f"kernelindex: could not comment on #{number}: {posted.stderr.strip()}")


def _provenance(env: Mapping[str, str], inputs: Mapping[str, str]) -> list[str]:
    """ingest's --commit, --commit-time and --branch for the job's runs that carry none."""
    sha = env.get("GITHUB_SHA")
    branch = _branch(env, inputs)
    flags = []
    if sha:
        flags += ["--commit", sha]
        when = _commit_time(sha, env)
        if when:
            flags += ["--commit-time", when]
    if branch:
        flags += ["--branch", branch]
    return flags


def _compare_command(
    cli: list[str], new: str, db: list[str], inputs: Mapping[str, str]
) -> list[str]:
    command = [*cli, "compare", "--history", inputs.get("base") or "main", new, *db]
    command += ["--format", "markdown"]
    if inputs.get("threshold"):
        command += ["--threshold", inputs["threshold"]]
    if inputs.get("fail-on-regression"):
        command += ["--fail-on-regression", inputs["fail-on-regression"]]
    return command


def _body(
    compared: subprocess.CompletedProcess[str], env: Mapping[str, str], inputs: Mapping[str, str]
) -> str:
    """The markdown of the summary and the comment."""
    sha, branch = env.get("GITHUB_SHA"), _branch(env, inputs)
    where = f" ({branch} at {sha[:10]})" if branch and sha else ""
    body = f"{MARKER}\n## kernelindex: this job's runs against `{inputs.get('base') or 'main'}`"
    body += f"{where}\n\n"
    body += compared.stdout if compared.stdout.strip() else "No run to compare.\n"
    if compared.stderr.strip():
        body += "\n<details><summary>kernelindex said</summary>\n\n```\n"
        body += compared.stderr.strip().replace("```", "`\u200b``") + "\n```\n</details>\n"
    return body


def main(env: Mapping[str, str] | None = None) -> int:
    """Run the action with ``env`` (default: the process's); return the exit status."""
    env = dict(os.environ if env is None else env)
    inputs = _inputs(env)
    records = shlex.split(inputs.get("records", ""))
    if not records:
        print("kernelindex action: the 'records' input is empty: expected record files or folders")
        return 2
    cli = _kernelindex(env)
    db = ["--db", inputs["db"]] if inputs.get("db") else []
    workdir = Path(env.get("RUNNER_TEMP") or ".")
    new = records[0]
    if len(records) > 1:
        # compare takes one NEW input: the job's records merged into one file.
        new = str(workdir / "kernelindex-records.jsonl")
        merged = _run([*cli, "merge", *records, "-o", new], env)
        if merged.returncode != 0:
            return merged.returncode
    # An empty store (the first job) compares nothing, rather than failing.
    problem = _ensure_store(inputs.get("db") or None)
    if problem:
        print(f"kernelindex action: {problem}")
        return 2
    compared = _run(_compare_command(cli, new, db, inputs), env)
    ingest = _run([*cli, "ingest", *records, *db, *_provenance(env, inputs)], env)
    if ingest.returncode != 0:
        _append(
            env.get("GITHUB_STEP_SUMMARY"),
            f"## kernelindex\n\nIngest failed (exit {ingest.returncode}):\n\n```\n"
            f"{ingest.stderr.strip()}\n```\n",
        )
        return ingest.returncode
    body = _body(compared, env, inputs)
    _append(env.get("GITHUB_STEP_SUMMARY"), body)
    report = workdir / "kernelindex-compare.md"
    report.write_text(body, encoding="utf-8")
    _append(env.get("GITHUB_OUTPUT"), f"markdown={report}\nstatus={compared.returncode}\n")
    number = _pull_request(env)
    if number is not None and inputs.get("comment", "true") == "true":
        _comment(body, number, env, workdir)
    if inputs.get("site"):
        built = _run(
            [*cli, "site", inputs["site"], *db, "--main-branch", inputs.get("base") or "main"], env
        )
        if built.returncode != 0:
            return built.returncode
    return compared.returncode


if __name__ == "__main__":
    sys.exit(main())

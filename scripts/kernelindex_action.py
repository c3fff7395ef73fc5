"""The script of the kernelindex GitHub Action (action.yml): restore, compare, ingest, save,
report, and only then the verdict.

Run by the action's composite step with its inputs as ``INPUT_*`` environment
variables, as GitHub passes them; tests run it locally with fake ``GITHUB_*`` files.

1. With ``store-branch``, the SQLite store is restored from that branch of the repository
   (``kernelindex_action_store.py`` says why a branch).
2. ``kernelindex compare --history BASE RECORDS --db DB --format markdown``: each of the
   job's runs against the latest point of its series on the base branch. It runs before
   ingest: once stored, a run on the base branch would be its own latest point.
3. ``kernelindex ingest RECORDS --db DB`` with the job's commit, branch and commit time
   for the runs that carry none. On a pull request the branch is ``OWNER:BRANCH``
   (:func:`kernelindex_sdk.provenance.github_pull_request_branch`), which no pushed
   branch can be named, and a run that names the base branch itself is not stored: a
   pull request's runs never enter the base's history.
4. With ``store-branch``, on every event but a pull request, the store is saved to the
   branch (again, when another run saved first), before anything can fail the step.
5. The markdown goes to ``$GITHUB_STEP_SUMMARY`` and, on a pull request, to one PR
   comment that later pushes edit in place (``gh api``; a runner without ``gh`` skips
   it with one notice line).
6. With ``INPUT_SITE``, ``kernelindex site`` writes the dashboard there.
7. Last, the exit status: compare's (1 when ``fail-on-regression`` tripped or a record
   was invalid), or a worse one of a later step (2: a store that could not be used).

Every command echoed to the log shows the store URL through the SDK's one masking rule
(:func:`kernelindex_sdk.store.masked_url`), and the CLI masks its own messages. Text the
job did not write itself (branch names, the base, the CLI's messages) reaches the
Markdown escaped, so a branch named ``<!--`` cannot hide the table.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

# The action's first step installs kernelindex-sdk into this interpreter.
from kernelindex_action_store import OvertakenError, StoreBranchError, restore, save

from kernelindex_sdk.documents import iter_documents
from kernelindex_sdk.errors import KernelIndexError
from kernelindex_sdk.provenance import BRANCH, from_ci
from kernelindex_sdk.store import masked_url, open_store, parse_url

#: Opens the comment the action owns on a pull request (it edits that one on each push).
MARKER = "<!-- kernelindex-pr-check -->"
#: GitHub refuses comments longer than 65,536 characters.
COMMENT_LIMIT = 65_000
#: How many times a save overtaken by another run's is tried again.
SAVE_ATTEMPTS = 5
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
# Characters that start inline Markdown or HTML (emphasis, code, links, images, tags,
# comments, entities, tables, strikethrough, math) wherever they stand; a backslash
# escapes each (CommonMark 2.4). The SDK's rule for record text, which is private to it.
_MARKDOWN: re.Pattern[str] = re.compile(r"[\\`*_\[\]<>|~&$!]")


def markdown_text(text: str) -> str:
    """``text`` for one Markdown line: shown as written, never as markup or HTML.

    Controls and line breaks become spaces (a line break would start a new block), then
    every punctuation character that could start markup gets a backslash.
    """
    one_line = "".join(c if c.isprintable() else " " for c in text)
    return _MARKDOWN.sub(r"\\\g<0>", one_line)


def _code_block(text: str) -> str:
    """``text`` as a fenced code block no line of it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}\n"


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


def _shown(command: Sequence[str]) -> str:
    """A command line as the log shows it: any store URL or password in it masked."""
    return shlex.join(masked_url(arg) for arg in command)


def _untrusted(text: str, env: Mapping[str, str]) -> None:
    """Write text the job did not write itself (record names, file names) to the log,
    where a line starting with ``::`` would otherwise be a workflow command."""
    if not text:
        return
    if env.get("GITHUB_ACTIONS") != "true":
        sys.stderr.write(text)
        return
    token = secrets.token_hex(16)
    sys.stderr.write(f"::stop-commands::{token}\n{text}\n::{token}::\n")


def _run(command: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``command``, showing it (masked) and its standard error in the job's log."""
    print("+ " + _shown(command), file=sys.stderr, flush=True)
    # The commands are this script's own, with the workflow's inputs as arguments.
    done = subprocess.run(  # noqa: S603
        list(command), capture_output=True, text=True, env=dict(env), check=False
    )
    _untrusted(done.stderr, env)
    sys.stderr.flush()
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
    except (OSError, UnicodeDecodeError):
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


def _is_pull_request(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_EVENT_NAME", "").startswith("pull_request")


def _branch(env: Mapping[str, str], inputs: Mapping[str, str]) -> str | None:
    """The branch recorded on the job's runs: the input, else the SDK's rule for CI
    (``OWNER:BRANCH`` on a pull request, the pushed branch otherwise)."""
    return inputs.get("branch") or from_ci(env).branch


def _pull_request(env: Mapping[str, str]) -> int | None:
    """The PR number of a pull_request event, from $GITHUB_EVENT_PATH."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not _is_pull_request(env):
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)


def _cut(body: str) -> str:
    """``body`` within GitHub's comment limit, cut at a line, its open blocks closed."""
    if len(body) <= COMMENT_LIMIT:
        return body
    body = body[: body.rfind("\n", 0, COMMENT_LIMIT) + 1]
    fences = re.findall(r"^(`{3,})$", body, flags=re.MULTILINE)
    if len(fences) % 2:
        body += fences[-1] + "\n"
    body += "</details>\n" * (body.count("<details>") - body.count("</details>"))
    return body + "\n… (cut: the job summary has the whole table)\n"


def _comment(body: str, number: int, env: Mapping[str, str], workdir: Path) -> None:
    """Create the action's PR comment, or edit the one an earlier push made."""
    if shutil.which("gh", path=env.get("PATH")) is None:
        # A self-hosted runner may have no GitHub CLI: the summary has the table.
        print(
            "::notice::kernelindex: no gh (GitHub CLI) on this runner: the pull request"
            " comment is skipped; the job summary has the table"
        )
        return
    repo = env["GITHUB_REPOSITORY"]
    body_file = workdir / "kernelindex-comment.md"
    body_file.write_text(_cut(body), encoding="utf-8")
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
        print(f"kernelindex: could not comment on #{number} (gh's message is above)")


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


def _base(inputs: Mapping[str, str]) -> str:
    return inputs.get("base") or "main"


def _compare_command(
    cli: list[str], new: str, db: list[str], inputs: Mapping[str, str]
) -> list[str]:
    command = [*cli, "compare", "--history", _base(inputs), new, *db]
    command += ["--format", "markdown"]
    if inputs.get("threshold"):
        command += ["--threshold", inputs["threshold"]]
    if inputs.get("fail-on-regression"):
        command += ["--fail-on-regression", inputs["fail-on-regression"]]
    return command


def _claimed_branches(paths: Sequence[str]) -> Iterator[str]:
    """The ``kernelindex.dev/branch`` of every run the records carry (unreadable or
    invalid documents are ingest's to report)."""
    for document in iter_documents(paths, on_error=lambda _: None):
        try:
            value = json.loads(document.text)
            run = value.get("run", value) if isinstance(value, dict) else None
            branch = run["metadata"]["annotations"][BRANCH]
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        if isinstance(branch, str):
            yield branch


def _body(
    compared: subprocess.CompletedProcess[str], env: Mapping[str, str], inputs: Mapping[str, str]
) -> str:
    """The markdown of the summary and the comment."""
    sha, branch = env.get("GITHUB_SHA"), _branch(env, inputs)
    where = f" ({markdown_text(branch)} at {markdown_text(sha[:10])})" if branch and sha else ""
    body = f"{MARKER}\n## kernelindex: this job's runs against {markdown_text(_base(inputs))}"
    body += f"{where}\n\n"
    body += compared.stdout if compared.stdout.strip() else "No run to compare.\n"
    if compared.stderr.strip():
        body += "\n<details><summary>kernelindex said</summary>\n\n"
        body += _code_block(compared.stderr.strip()) + "</details>\n"
    return body


def _output(item: tuple[str, str]) -> str:
    """One step output in GitHub's multiline form, so that no value can add another."""
    name, value = item
    delimiter = f"kernelindex-{secrets.token_hex(8)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


class _Job:
    """One run of the action: its inputs, the store and what each step ended with."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self.inputs = _inputs(self.env)
        self.cli = _kernelindex(self.env)
        self.db = ["--db", self.inputs["db"]] if self.inputs.get("db") else []
        self.workdir = Path(self.env.get("RUNNER_TEMP") or ".")
        try:
            self.records = shlex.split(self.inputs.get("records", ""))
            self.records_problem = ""
        except ValueError as err:  # an unclosed quote
            self.records, self.records_problem = [], f"the 'records' input: {err}"
        self.store_branch = self.inputs.get("store-branch", "")
        self.lease = ""
        self.outputs: dict[str, str] = {}
        self.summary: list[str] = []

    def say(self, line: str) -> None:
        print(f"kernelindex action: {line}", flush=True)

    def store_file(self) -> Path | None:
        """The SQLite file the store branch keeps; None (said) when the store is not one."""
        try:
            url = parse_url(self.inputs.get("db") or None, self.env)
        except KernelIndexError as err:
            self.say(str(err))
            return None
        if url.dialect != "sqlite" or url.target == ":memory:":
            self.say(
                f"store-branch keeps a SQLite file; the store {url.shown!r} is not one"
                " (a PostgreSQL store keeps itself: leave store-branch empty)"
            )
            return None
        return Path(url.target)

    def ingest(self) -> subprocess.CompletedProcess[str]:
        return _run(
            [*self.cli, "ingest", *self.records, *self.db, *_provenance(self.env, self.inputs)],
            self.env,
        )

    def save(self, store: Path) -> int:
        """Save the store to the branch, restoring and ingesting again when overtaken."""
        commit = self.env.get("GITHUB_SHA", "?")
        message = f"kernelindex store: {_branch(self.env, self.inputs)} at {commit}"
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            try:
                sha = save(self.store_branch, store, self.lease, message, self.env)
            except OvertakenError as err:
                if attempt == SAVE_ATTEMPTS:
                    self.say(f"{err}, {SAVE_ATTEMPTS} times: the store is not saved")
                    return EXIT_USAGE
                self.say(f"{err}: restoring it and ingesting again")
                try:
                    self.lease = restore(self.store_branch, store, self.env)
                except StoreBranchError as again:
                    self.say(str(again))
                    return EXIT_USAGE
                self.ingest()
                continue
            except StoreBranchError as err:
                self.say(str(err))
                return EXIT_USAGE
            self.outputs["saved"] = sha
            self.say(f"saved the store to branch {self.store_branch!r} ({sha[:10]})")
            return EXIT_OK
        return EXIT_USAGE  # pragma: no cover - the loop returns


def _restore(job: _Job) -> Path | int | None:
    """Step 1: the store from its branch; its file, None without a store branch, or the
    exit status when it cannot be restored."""
    if not job.store_branch:
        return None
    store = job.store_file()
    if store is None:
        return EXIT_USAGE
    try:
        job.lease = restore(job.store_branch, store, job.env)
    except StoreBranchError as err:
        job.say(str(err))
        return EXIT_USAGE
    if not job.lease:
        job.say(f"branch {job.store_branch!r} does not exist yet: a new store starts")
    return store


def _record(job: _Job, store: Path | None) -> list[int]:
    """Steps 3 and 4: ingest (never a pull request's runs that claim the base branch),
    then save the store; the exit status of each."""
    base, pull_request = _base(job.inputs), _is_pull_request(job.env)
    claims = sum(b == base for b in _claimed_branches(job.records)) if pull_request else 0
    if claims:
        line = (
            f"{claims} run(s) of this pull request name the base branch {base!r} in their"
            " kernelindex.dev/branch annotation: a pull request's runs never enter the"
            " base's history, so none was stored"
        )
        job.say(line)
        job.summary.append(f"**Not stored:** {markdown_text(line)}.\n")
        return [EXIT_INVALID]
    statuses = []
    ingest = job.ingest()
    if ingest.returncode != 0:
        statuses.append(ingest.returncode)
        job.summary.append(
            f"## kernelindex\n\nIngest failed (exit {ingest.returncode}):\n\n"
            + _code_block(ingest.stderr.strip())
        )
    if store is not None and not pull_request:
        # Before the summary, the comment, the site and the verdict: nothing that can
        # fail the step comes before the store is saved.
        statuses.append(job.save(store))
    return statuses


def _report(job: _Job, compared: subprocess.CompletedProcess[str]) -> list[int]:
    """Steps 5 and 6: the summary, the comment and the site; the exit status of each."""
    env, inputs = job.env, job.inputs
    body = _body(compared, env, inputs)
    _append(env.get("GITHUB_STEP_SUMMARY"), body + "".join(f"\n{s}" for s in job.summary))
    report = job.workdir / "kernelindex-compare.md"
    report.write_text(body, encoding="utf-8")
    job.outputs.update(markdown=str(report), status=str(compared.returncode))
    number = _pull_request(env)
    if number is not None and inputs.get("comment", "true") == "true":
        _comment(body, number, env, job.workdir)
    if not inputs.get("site"):
        return []
    built = _run([*job.cli, "site", inputs["site"], *job.db, "--main-branch", _base(inputs)], env)
    if built.returncode == 0:
        job.outputs["site"] = inputs["site"]
    return [built.returncode]


def main(env: Mapping[str, str] | None = None) -> int:
    """Run the action with ``env`` (default: the process's); return the exit status."""
    job = _Job(os.environ if env is None else env)
    if not job.records:
        job.say(
            job.records_problem or "the 'records' input is empty: expected record files or folders"
        )
        return EXIT_USAGE
    store = _restore(job)
    if isinstance(store, int):
        return store
    new = job.records[0]
    if len(job.records) > 1:
        # compare takes one NEW input: the job's records merged into one file.
        new = str(job.workdir / "kernelindex-records.jsonl")
        merged = _run([*job.cli, "merge", *job.records, "-o", new], job.env)
        if merged.returncode != 0:
            return merged.returncode
    # An empty store (the first job) compares nothing, rather than failing.
    problem = _ensure_store(job.inputs.get("db") or None)
    if problem:
        job.say(problem)
        return EXIT_USAGE
    compared = _run(_compare_command(job.cli, new, job.db, job.inputs), job.env)
    statuses = [compared.returncode, *_record(job, store), *_report(job, compared)]
    _append(job.env.get("GITHUB_OUTPUT"), "".join(map(_output, job.outputs.items())))
    # Last: the verdict, once the store is saved and everything is reported.
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())

"""The GitHub Action's script, run locally against a real store with fake GITHUB_* files.

``gh`` is a fake on PATH that logs its arguments (and the comment body it was given);
kernelindex is the real CLI of this checkout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kernelindex_action.py"
FIXTURE = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
MARKER = "<!-- kernelindex-pr-check -->"

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


def _slower(path: Path, factor: float, suffix: str) -> Path:
    """The fixture's runs renamed, triton's timings ``factor`` times slower."""
    out = path.parent / f"runs-{suffix}.jsonl"
    lines = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        run = doc["run"]
        run["metadata"]["name"] = f"{run['metadata']['name'][:200]}-{suffix}"
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


class Job:
    """One action run's environment: its files, the fake gh and the store."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = tmp / "store.sqlite3"
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        gh = bin_dir / "gh"
        gh.write_text(FAKE_GH.format(python=sys.executable))
        gh.chmod(0o755)
        self.gh_log = tmp / "gh.log"
        self.path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"

    def run(self, records: list[Path], *, event: str, ref: str, **inputs: str) -> Any:
        n = len(list(self.tmp.glob("summary-*")))
        summary, output = self.tmp / f"summary-{n}.md", self.tmp / f"output-{n}.txt"
        event_path = self.tmp / f"event-{n}.json"
        event_path.write_text(json.dumps({"pull_request": {"number": 7}}))
        runner_temp = self.tmp / f"temp-{n}"
        runner_temp.mkdir()
        env = {
            "PATH": self.path,
            "PYTHONPATH": str(ROOT / "src"),
            "KERNELINDEX": f"{sys.executable} -m kernelindex_sdk",
            "FAKE_GH_LOG": str(self.gh_log),
            "FAKE_GH_EXISTING": inputs.pop("existing", ""),
            "GITHUB_SHA": f"{n:040x}",
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": "owner/repo",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output),
            "RUNNER_TEMP": str(runner_temp),
            "INPUT_RECORDS": " ".join(str(r) for r in records),
            "INPUT_DB": str(self.db),
        }
        if event == "pull_request":
            env["GITHUB_HEAD_REF"] = ref
        env["GITHUB_REF_NAME"] = ref
        env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        done = subprocess.run(
            [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, cwd=self.tmp
        )
        done.summary = summary.read_text() if summary.exists() else ""
        done.output = output.read_text() if output.exists() else ""
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
    assert "status=0" in done.output


def test_a_slower_pull_request_fails_the_gate_and_comments_the_table(job: Job) -> None:
    assert job.run([FIXTURE], event="push", ref="main").returncode == 0
    slower = _slower(job.tmp, 1.3, "pr")
    done = job.run([slower], event="pull_request", ref="feature", **{"fail_on_regression": "10"})
    assert done.returncode == 1, done.stderr
    # The table: 64 pairs, the 16 triton ones 30% slower.
    assert "64 pair(s)" in done.summary
    assert done.summary.count("| 1.300 |") == 16
    assert "status=1" in done.output
    markdown = Path(done.output.split("markdown=")[1].split("\n")[0]).read_text()
    assert markdown == done.summary
    calls = job.gh_calls()
    assert [c["args"][:3] for c in calls] == [
        ["api", "--paginate", "repos/owner/repo/issues/7/comments"],
        ["api", "repos/owner/repo/issues/7/comments", "-F"],
    ]
    assert calls[1]["body"] == done.summary
    # The PR's runs are stored on their branch, beside main's.
    branches = {r.branch for r in _stored(job.db)}
    assert branches == {"main", "feature"}


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
    # compare pairs the latest NEW run of each series: one of the two inputs.
    assert "64 pair(s)" in done.summary
    assert "latest of 2 NEW runs" in done.summary
    assert (site / "index.html").is_file()
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


def test_action_yml_passes_every_input_to_the_script() -> None:
    """Each input the script reads is declared, and each declared input reaches it."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    declared = set(action["inputs"])
    steps = action["runs"]["steps"]
    check = next(s for s in steps if s.get("id") == "check")
    passed = {
        k[len("INPUT_") :].lower().replace("_", "-") for k in check["env"] if k.startswith("INPUT_")
    }
    script = SCRIPT.read_text()
    read = {name for name in declared if f'"{name}"' in script}
    assert read <= passed <= declared
    assert {"records", "db", "base", "fail-on-regression", "comment", "site"} <= read
    assert action["runs"]["using"] == "composite"


def test_the_docs_workflows_pass_only_inputs_the_action_declares() -> None:
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
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
    assert uses == 2


@pytest.mark.parametrize(
    ("sdk", "db", "expected"),
    [
        ("", "", "{root}"),
        ("", "store.sqlite3", "{root}"),
        ("", "postgresql://u@h/db", "{root}[postgres]"),
        ("kernelindex-sdk==9.9", "", "kernelindex-sdk==9.9"),
        ("kernelindex-sdk[postgres]==9.9", "postgres://u@h/db", "kernelindex-sdk[postgres]==9.9"),
    ],
)
def test_the_install_step_installs_the_actions_own_sdk(
    tmp_path: Path, sdk: str, db: str, expected: str
) -> None:
    """The composite step's shell, run with a fake python3 that records what pip got."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Install kernelindex-sdk")
    fake = tmp_path / "python3"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_PIP_LOG"\n')
    fake.chmod(0o755)
    log = tmp_path / "pip.log"
    env = {
        "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTION_PATH": str(ROOT),
        "SDK": sdk,
        "DB": db,
        "FAKE_PIP_LOG": str(log),
    }
    subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]], env=env, check=True)
    assert log.read_text().splitlines()[-1] == expected.format(root=ROOT)

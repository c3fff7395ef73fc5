"""One store, one verdict: what the commands print and what the dashboard's data says agree.

The store holds Liger-Kernel's real rows (tests/fixtures/liger/real and history: steps on
new GPUs, a shared shift, a new config key) and a harness series of ten commits with a 20%
step, replicates and a commit run again. ``kernelindex history --format json`` and
``kernelindex compare --history main NEW --format json`` are compared line by line with
the site's data files: every change point, its verdict and causes; every relative series'
changes; every Compare row of NEW's commit; and Health's rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import run_in_process
from store._history_records import bundle, template, write_jsonl

from kernelindex_sdk.importers import liger
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.site import write_site
from kernelindex_sdk.store import open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "liger"
NEW_COMMIT = f"{9:040x}"


def _read(out: Path, key: str) -> Any:
    text = (out / "data" / f"{key}.js").read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : -3])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    tmp = tmp_path_factory.mktemp("agreement")
    db = str(tmp / "ki.sqlite3")
    with open_store(db) as store:
        csvs = sorted([*FIXTURES.glob("real/*.csv"), *FIXTURES.glob("history/*.csv")], key=str)
        for csv in sorted(csvs, key=lambda p: p.name):
            out = tmp / f"{csv.stem}.jsonl"
            given = Provenance(
                commit=csv.stem[11:], branch="main", commit_time=f"{csv.stem[:10]}T00:00:00Z"
            )
            assert liger.import_files([csv], out, provenance=given).rejected == 0
            assert store.ingest([out]).ok
        base = template()
        new = None
        for c in range(10):
            medians = [1_000_000 if c < 5 else 1_200_000]
            if c in (3, 9):  # a commit run again: replicates
                medians.append(medians[0] + 4_000)
            docs = []
            for k, median in enumerate(medians):
                doc = bundle(base, c, median, commit=f"{c:040x}", branch="main")
                doc["run"]["metadata"]["name"] += f"-{k}"
                docs.append(doc)
            path = write_jsonl(tmp / f"harness-{c}.jsonl", docs)
            assert store.ingest([path]).ok
            new = path
    assert new is not None
    site = tmp / "site"
    write_site(site, _Store(db))
    return db, site, new


class _Store:
    """The store opened for each call, as ``kernelindex site`` reads it."""

    def __init__(self, db: str) -> None:
        self._db = db

    def rows(self) -> Any:
        with open_store(self._db) as store:
            return store.rows()

    def spec(self, kind: str, digest: str) -> Any:
        with open_store(self._db) as store:
            return store.spec(kind, digest)

    def records(self, names: Any) -> Any:
        with open_store(self._db) as store:
            return list(store.records(names))


def _key(workload: str, provider: str, entry: Any, protocol: str, gpu: Any) -> tuple[Any, ...]:
    return (workload, provider, entry or None, protocol, gpu)


def test_every_change_point_agrees(built: tuple[str, Path, Path]) -> None:
    db, site, _ = built
    status, out, err = run_in_process("history", "--db", db, "--format", "json")
    assert status == 0, err
    printed = json.loads(out)
    index = {
        _key(e["workload"], e["provider"], e["entryPoint"], e["protocol"], e["gpu"]): e
        for e in _read(site, "index")["series"]
    }
    compared = changed = 0
    for s in printed["series"]:
        entry = index[
            _key(
                s["workloadDigest"],
                s["provider"],
                s["entryPoint"],
                s["protocolDigest"],
                s["hardware"],
            )
        ]
        data = _read(site, f"series/{entry['id']}")
        line = [data["runs"][i][0] for i in data["line"]]
        shown = [(line[st[0]], st[4], st[6], st[7]) for st in data["steps"]]
        said = [(c["run"], c["verdict"], c["causes"], c["movedWith"]) for c in s["changes"]]
        assert shown == said, s["label"]
        compared += 1
        changed += bool(said)
    assert compared == len(index)
    assert changed >= 10


def test_every_relative_series_agrees(built: tuple[str, Path, Path]) -> None:
    db, site, _ = built
    printed = json.loads(run_in_process("history", "--db", db, "--format", "json")[1])["relative"]
    entries = _read(site, "index")["relative"]
    assert len(printed) == len(entries) >= 20
    by_key = {(e["workload"], e["provider"], e["entryPoint"], e["baseline"]): e for e in entries}
    for r in printed:
        entry = by_key[(r["workloadDigest"], r["provider"], r["entryPoint"], r["baseline"])]
        data = _read(site, f"relative/{entry['id']}")
        assert [p[3] for p in data["points"]] == [p["ratio"] for p in r["points"]]
        assert [(st[0], st[4], st[6]) for st in data["steps"]] == [
            (c["index"], c["verdict"], c["causes"]) for c in r["changes"]
        ]


def test_the_pr_check_and_the_compare_page_agree(built: tuple[str, Path, Path]) -> None:
    """NEW, the newest commit (ingested already), against main: the CLI leaves NEW's own
    runs out, and the page judges that commit against the history before it."""
    db, site, new = built
    status, out, err = run_in_process(
        "compare", "--history", "main", str(new), "--db", db, "--format", "json"
    )
    assert status == 0, err
    rows = [r for r in json.loads(out) if r["unpaired"] is None]
    assert rows
    refs = _read(site, "refs")
    [ref] = [c for c in refs["commits"] if c["name"] == NEW_COMMIT]
    page = {r[7]: r for r in _read(site, f"refs/{ref['key']}")["rows"]}
    for row in rows:
        shown = page[row["new"]["run"]]
        assert shown[4] == row["verdict"]
        assert shown[3] == pytest.approx(row["ratio"])
        assert shown[5] == row["evidence"]
    assert {r["verdict"] for r in rows} == {"same"}


def test_health_lists_what_history_calls_a_change(built: tuple[str, Path, Path]) -> None:
    db, site, _ = built
    printed = json.loads(run_in_process("history", "--db", db, "--format", "json")[1])
    data = _read(site, "site")
    expected = set()
    for s in printed["series"]:
        judged = [c for c in s["changes"] if c["verdict"] in ("regression", "improvement")]
        if judged:
            expected.add((s["workloadDigest"], s["provider"], s["hardware"], judged[-1]["verdict"]))
    for r in printed["relative"]:
        # A relative series' last change is on Health where code changed as its absolute
        # series started anew (a new GPU, a workload that gained a parameter).
        judged = [c for c in r["changes"] if c["verdict"] in ("regression", "improvement")]
        causes = set(judged[-1]["causes"]) if judged else set()
        if causes & {"hardware", "workload"} and causes & {
            "implementation",
            "baseline",
            "workload",
        }:
            expected.add((r["workloadDigest"], r["provider"], r["baseline"], judged[-1]["verdict"]))
    shown = {
        (
            h["workload"],
            h["provider"],
            h["gpu"] if h["kind"] == "series" else h["baseline"],
            h["verdict"],
        )
        for h in [*data["health"], *data["stale"]]
    }
    assert shown == expected
    # The harness series' 20% step is on Health, now; its replicates made no step.
    harness = [h for h in data["health"] if h["provider"] == "torch-compile"]
    assert [(h["verdict"], h["commit"]) for h in harness] == [("regression", f"{5:040x}")]

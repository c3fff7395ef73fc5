"""Store.rows builds the runs that share their digests and labels from one tuple of what
they share: each run still gets its own status, digests, branch and labels."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from _history_records import bundle, template, write_jsonl
from _sql import json_text, query

from kernelindex_sdk import digest
from kernelindex_sdk.store import Store


def _other_workload(base: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    spec = doc["run"]["spec"]
    spec["workload"]["parameters"]["tokens"] = 12345
    spec["workloadDigest"] = digest.workload_digest(spec["workload"])
    return doc


def _records() -> list[dict[str, Any]]:
    """Two series interleaved; in the first, the labels change at run 6, the branch is
    absent from run 3 to 4, and run 8 is unverified."""
    base, other = template(), _other_workload(template())
    docs = []
    for i in range(10):
        branch = None if i in (3, 4) else ("main" if i < 7 else "dev")
        doc = bundle(base, i, 300_000 + i, commit=f"{i:040x}", branch=branch)
        doc["run"]["metadata"]["labels"] = {"liger_version": "0.5.3" if i < 6 else "0.5.4"}
        if i == 8:
            doc["run"]["spec"]["status"] = "unverified"
        docs.append(doc)
        docs.append(bundle(other, 100 + i, 200_000 + i, commit=f"{i:040x}", branch="main"))
    return docs


def test_each_run_gets_its_own_shared_columns(store: Store, tmp_path: Path) -> None:
    """Groups interleaved run by run: each run is built on its own."""
    docs = _records()
    assert store.ingest([write_jsonl(tmp_path / "runs.jsonl", docs)]).ok
    _check(store, docs)


def test_long_stretches_of_one_group_are_built_as_runs_by_run(store: Store, tmp_path: Path) -> None:
    """Stretches of 40 runs of one group, then a short one: built stretch by stretch,
    the same rows as run by run."""
    base, other = template(), _other_workload(template())
    docs = [bundle(base, i, 300_000 + i, commit=f"{i:040x}", branch="main") for i in range(40)]
    docs += [bundle(other, 100 + i, 200_000 + i, commit=f"{i:040x}") for i in range(40)]
    tail = [bundle(base, 200 + i, 310_000 + i, commit=f"{i:040x}", branch="main") for i in range(3)]
    tail[1]["run"]["spec"]["status"] = "unverified"
    docs += tail
    assert store.ingest([write_jsonl(tmp_path / "runs.jsonl", docs)]).ok
    _check(store, docs)
    groups = query(store, "SELECT count(*) FROM run_groups")
    assert groups == [(3,)]


def _check(store: Store, docs: list[dict[str, Any]]) -> None:
    rows = {row.name: row for row in store.rows()}
    assert len(rows) == len(docs)
    for doc in docs:
        run = doc["run"]
        spec, meta = run["spec"], run["metadata"]
        row = rows[meta["name"]]
        annotations = meta["annotations"]
        assert row.status == spec["status"]
        assert row.workload_digest == spec["workloadDigest"]
        assert row.implementation_digest == spec["implementationDigest"]
        assert row.protocol_digest == spec["protocolDigest"]
        assert row.environment_digest == spec["environmentDigest"]
        assert row.branch == annotations.get("kernelindex.dev/branch")
        assert row.commit == annotations["kernelindex.dev/commit"]
        assert dict(row.labels) == meta.get("labels", {})
        assert row.median_ns == spec["timing"]["latencyNs"]["median"]
        assert row.operation == spec["workload"]["operation"]
        assert row.provider == spec["implementation"]["provider"]
        assert row.pass_ == spec["workload"]["pass"]
        assert row.entry_point == spec["implementation"].get("entryPoint")
        assert row.hardware == doc["environment"]["spec"]["hardware"]["product"]
        assert row.observed_at == spec["observedAt"]
        assert row.commit_time == annotations.get("kernelindex.dev/commit-time")
        p20, p80 = (m["value"] for m in spec["measurements"])
        assert (row.p20_ns, row.p80_ns) == (p20, p80)
    # The order of Store.rows: order key, then name.
    found = [row.name for row in store.rows()]
    assert found == [row.name for row in sorted(rows.values(), key=lambda r: (r.order_key, r.name))]


def test_runs_of_the_same_shared_values_name_one_group(store: Store, tmp_path: Path) -> None:
    """Layout 3: a group per distinct status, branch, digests and labels (the labels'
    key order aside), each holding its runs' values."""
    base = template()
    docs = []
    for i in range(6):
        doc = bundle(base, i, 300_000 + i, commit=f"{i:040x}", branch="main")
        doc["run"]["metadata"]["labels"] = {"a": "1", "b": "2"} if i % 2 else {"b": "2", "a": "1"}
        docs.append(doc)
    # Each differs from the first in one shared value.
    status = bundle(base, 10, 300_000, commit="a" * 40, branch="main")
    status["run"]["spec"]["status"] = "unverified"
    no_branch = bundle(base, 11, 300_000, commit="b" * 40)
    labels = bundle(base, 12, 300_000, commit="c" * 40, branch="main")
    labels["run"]["metadata"]["labels"] = {"a": "1"}
    workload = _other_workload(base)
    other = bundle(workload, 13, 300_000, commit="d" * 40, branch="main")
    other["run"]["metadata"]["labels"] = {"a": "1", "b": "2"}
    for doc in (status, labels):
        doc["run"]["metadata"].setdefault("labels", {"a": "1", "b": "2"})
    no_branch["run"]["metadata"]["labels"] = {"a": "1", "b": "2"}
    status["run"]["metadata"]["labels"] = {"a": "1", "b": "2"}
    first = write_jsonl(tmp_path / "first.jsonl", docs[:3])
    second = write_jsonl(tmp_path / "second.jsonl", [*docs[3:], status, no_branch, labels, other])
    assert store.ingest([first]).ok
    assert store.ingest([second]).ok
    ids = dict(query(store, "SELECT name, group_id FROM runs"))
    names = [doc["run"]["metadata"]["name"] for doc in docs]
    assert len({ids[name] for name in names}) == 1
    others = [doc["run"]["metadata"]["name"] for doc in (status, no_branch, labels, other)]
    assert len({ids[name] for name in [names[0], *others]}) == 5
    assert query(store, "SELECT count(*) FROM run_groups") == [(5,)]
    rows = {row.name: row for row in store.rows()}
    assert rows[others[1]].branch is None
    assert rows[others[0]].status == "unverified"
    assert dict(rows[others[2]].labels) == {"a": "1"}
    assert rows[names[1]].labels is rows[names[2]].labels


def test_a_groups_key_is_the_digest_of_its_values_as_canonical_json(
    store: Store, tmp_path: Path
) -> None:
    """run_groups.key as docs/store.md states it: "sha256:" and the hex SHA-256 of the
    list of the group's values as compact JSON, the labels' keys sorted."""
    doc = bundle(template(), 1, 300_000, commit="a" * 40, branch="main")
    doc["run"]["metadata"]["labels"] = {"z": "1", "a": 'é"'}
    assert store.ingest([write_jsonl(tmp_path / "one.jsonl", [doc])]).ok
    labels_text = json_text(store, "labels")
    statement = (
        "SELECT key, status, branch, workload_digest, implementation_digest,"  # noqa: S608
        f" protocol_digest, environment_digest, {labels_text} FROM run_groups"
    )
    ((key, status, branch, *digests, labels),) = query(store, statement)
    values = [status, branch, *digests, json.loads(labels)]
    text = json.dumps(values, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert key == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    spec = doc["run"]["spec"]
    assert values[:6] == ["passed", "main", *(spec[f"{k}Digest"] for k in _KINDS)]


_KINDS = ("workload", "implementation", "protocol", "environment")

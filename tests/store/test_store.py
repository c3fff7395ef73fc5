"""The store on SQLite and PostgreSQL alike: ingest, skip, refuse, query, read back, export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.errors import ArgumentError, InputError, KernelIndexError, StoreClashError
from kernelindex_sdk.store import NotInStoreError, RunRow, Store

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"


def lines(path: Path, docs: list[dict[str, Any]]) -> Path:
    """Write ``docs`` as published compact JSON Lines."""
    text = "".join(dumps(d, indent=None, validate=False) + "\n" for d in docs)
    path.write_text(text, encoding="utf-8")
    return path


def with_commit(doc: dict[str, Any], commit: str, when: str | None = None) -> dict[str, Any]:
    copy = json.loads(json.dumps(doc))
    provenance.annotate(copy, provenance.Provenance(commit=commit, commit_time=when))
    return copy


def test_ingest_adds_then_skips_identical_records(store: Store) -> None:
    first = store.ingest([SWEEP, EXAMPLE])
    assert (first.added, first.identical, first.ok) == (65, 0, True)
    again = store.ingest([SWEEP, EXAMPLE])
    assert (again.added, again.identical, again.provenance_only) == (0, 65, 0)
    assert len(store.rows()) == 65


def test_record_text_is_byte_identical_for_documents_and_lines(store: Store) -> None:
    store.ingest([SWEEP, EXAMPLE])
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert store.record_text(example["run"]["metadata"]["name"]) == EXAMPLE.read_text("utf-8")
    first_line = SWEEP.read_text(encoding="utf-8").splitlines()[0]
    name = json.loads(first_line)["run"]["metadata"]["name"]
    assert store.record_text(name) == first_line


def test_export_gives_lines_back_byte_for_byte_in_arrival_order(
    store: Store, tmp_path: Path
) -> None:
    """A JSON Lines file comes back as it went in; a .json document as its compact form."""
    store.ingest([SWEEP, EXAMPLE])
    out = tmp_path / "out.jsonl"
    assert store.export(out) == 65
    text = out.read_text(encoding="utf-8")
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert text == SWEEP.read_text(encoding="utf-8") + dumps(example, indent=None) + "\n"


def test_export_keeps_a_line_not_in_the_published_form(store: Store, tmp_path: Path) -> None:
    doc = bundle()
    path = tmp_path / "odd.jsonl"
    odd = json.dumps(doc, indent=None, separators=(", ", ": ")) + "\n"
    path.write_text(odd, encoding="utf-8")
    assert store.ingest([path]).added == 1
    assert "".join(store.export_lines()) == odd


def test_provenance_only_difference_is_skipped_and_first_arrival_kept(
    store: Store, tmp_path: Path
) -> None:
    doc = bundle()
    first = lines(tmp_path / "a.jsonl", [with_commit(doc, "aaa", "2025-01-01T00:00:00.000Z")])
    later = lines(tmp_path / "b.jsonl", [with_commit(doc, "bbb", "2025-02-01T00:00:00.000Z")])
    bare = lines(tmp_path / "c.jsonl", [doc])
    assert store.ingest([first]).added == 1
    report = store.ingest([later, bare])
    assert (report.added, report.provenance_only, report.ok) == (0, 2, True)
    (row,) = store.rows()
    assert (row.commit, row.commit_time) == ("aaa", "2025-01-01T00:00:00.000Z")
    assert store.record_text(row.name) == first.read_text("utf-8").rstrip("\n")


def test_clash_refuses_the_whole_file_and_names_both_places(store: Store, tmp_path: Path) -> None:
    doc = bundle(median=100)
    stored = lines(tmp_path / "stored.jsonl", [doc])
    store.ingest([stored])
    changed = json.loads(json.dumps(doc))
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    fresh = bundle()
    incoming = lines(tmp_path / "incoming.jsonl", [fresh, changed])
    report = store.ingest([incoming])
    assert (report.added, report.refused, report.clashes) == (0, 2, 1)
    (problem,) = report.problems
    message = str(problem)
    assert message.startswith(f"{incoming}:2: /run/metadata/name: run ")
    assert f"(from {stored}:1 in " in message
    assert problem.problem.code == "store-clash"
    # Nothing of the refused file went in, not even its new run.
    assert [row.name for row in store.rows()] == [doc["run"]["metadata"]["name"]]


def test_report_check_raises_the_clash(store: Store, tmp_path: Path) -> None:
    doc = bundle()
    store.ingest([lines(tmp_path / "a.jsonl", [doc])]).check()
    doc["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    report = store.ingest([lines(tmp_path / "b.jsonl", [doc])])
    with pytest.raises(StoreClashError, match="is already stored with other content") as caught:
        report.check()
    assert isinstance(caught.value, KernelIndexError)
    assert caught.value.problems == report.problems
    with pytest.raises(InputError, match="no such file"):
        store.ingest([tmp_path / "absent.jsonl"]).check()


def test_a_refused_file_leaves_no_objects_behind(store: Store, tmp_path: Path) -> None:
    doc = bundle(median=100)
    store.ingest([lines(tmp_path / "a.jsonl", [doc])])
    changed = json.loads(json.dumps(doc))
    changed["run"]["spec"]["status"] = "unverified"
    fresh = bundle(params={"tokens": 77, "dtype": "fp32"})
    report = store.ingest([lines(tmp_path / "b.jsonl", [fresh, changed])])
    assert report.clashes == 1
    assert store.spec("workload", fresh["run"]["spec"]["workloadDigest"]) is None


def test_invalid_record_refuses_its_file_and_other_files_go_in(
    store: Store, tmp_path: Path
) -> None:
    bad = bundle()
    bad["run"]["spec"]["timing"]["latencyNs"]["median"] = -5
    good = bundle()
    report = store.ingest(
        [lines(tmp_path / "bad.jsonl", [bundle(), bad]), lines(tmp_path / "good.jsonl", [good])]
    )
    assert (report.files, report.added, report.refused) == (2, 1, 2)
    assert "/run/spec/timing/latencyNs/median" in str(report.problems[0])
    assert [row.name for row in store.rows()] == [good["run"]["metadata"]["name"]]


def test_digest_naming_another_spec_is_refused(store: Store, tmp_path: Path) -> None:
    doc = bundle()
    store.ingest([lines(tmp_path / "a.jsonl", [doc])])
    other = bundle(params={"tokens": 5, "dtype": "fp32"})
    # Its workload declared under the first one's digest (validation does not recompute it).
    other["run"]["spec"]["workloadDigest"] = doc["run"]["spec"]["workloadDigest"]
    report = store.ingest([lines(tmp_path / "b.jsonl", [other])])
    assert report.problems[0].problem.code == "digest-clash"
    assert len(store.rows()) == 1


def test_ingest_adds_provenance_to_runs_that_lack_it(store: Store, tmp_path: Path) -> None:
    keep = with_commit(bundle(), "kept")
    path = lines(tmp_path / "a.jsonl", [bundle(), keep])
    report = store.ingest(
        [path], commit="c0ffee", branch="main", commit_time="2025-01-22T10:00:00+01:00"
    )
    assert report.added == 2
    rows = {row.commit: row for row in store.rows()}
    assert rows["c0ffee"].branch == "main"
    assert rows["c0ffee"].commit_time == "2025-01-22T09:00:00.000Z"
    # A run with a commit keeps it; only what it lacked is added.
    assert rows["kept"].branch == "main"
    text = store.record_text(rows["c0ffee"].name)
    assert json.loads(text)["run"]["metadata"]["annotations"] == {
        "kernelindex.dev/commit": "c0ffee",
        "kernelindex.dev/branch": "main",
        "kernelindex.dev/commit-time": "2025-01-22T09:00:00.000Z",
    }
    assert text == dumps(json.loads(text), indent=None)


def test_commit_time_not_in_utc_form_is_refused(store: Store, tmp_path: Path) -> None:
    doc = with_commit(bundle(), "abc")
    doc["run"]["metadata"]["annotations"]["kernelindex.dev/commit-time"] = "yesterday"
    report = store.ingest([lines(tmp_path / "a.jsonl", [doc])])
    assert report.problems[0].problem.code == "commit-time"
    assert "got 'yesterday'" in str(report.problems[0])


def test_rows_filters_and_order(store: Store, tmp_path: Path) -> None:
    late = with_commit(
        bundle("triton", observed="2026-01-01T00:00:00.000Z"), "c2", "2025-03-01T00:00:00.000Z"
    )
    early = bundle("torch", observed="2025-02-01T00:00:00.000Z")
    other_gpu = bundle("torch", product="NVIDIA B200", observed="2024-01-01T00:00:00.000Z")
    store.ingest([lines(tmp_path / "a.jsonl", [late, early, other_gpu])])
    names = [row.name for row in store.rows()]
    assert names == [d["run"]["metadata"]["name"] for d in (other_gpu, early, late)]
    (row,) = store.rows(provider="triton")
    assert isinstance(row, RunRow)
    assert (row.operation, row.pass_, row.hardware, row.commit) == (
        "jsd",
        "forward",
        "NVIDIA H200",
        "c2",
    )
    assert row.median_ns == 100_000
    assert row.order_key == "2025-03-01T00:00:00.000Z"
    assert [r.name for r in store.rows(hardware="NVIDIA H200", provider="torch")] == [
        early["run"]["metadata"]["name"]
    ]
    assert store.rows(commit="c2", provider="torch") == []
    assert len(store.rows(names=[early["run"]["metadata"]["name"], "absent"])) == 1
    assert store.rows(status="failed") == []


def test_spec_returns_each_kind_and_refuses_others(store: Store) -> None:
    store.ingest([EXAMPLE])
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    spec = example["run"]["spec"]
    assert store.spec("protocol", spec["protocolDigest"]) == example["protocol"]["spec"]
    assert store.spec("environment", spec["environmentDigest"]) == example["environment"]["spec"]
    assert store.spec("workload", spec["workloadDigest"]) is None
    with pytest.raises(ArgumentError, match="kind"):
        store.spec("runs", spec["workloadDigest"])


def test_missing_run_is_a_kernelindex_error(store: Store) -> None:
    with pytest.raises(NotInStoreError) as caught:
        store.record_text("absent")
    assert isinstance(caught.value, KernelIndexError)
    assert isinstance(caught.value, KeyError)
    assert str(caught.value).endswith("no run named 'absent'")


def test_records_in_the_order_asked(store: Store) -> None:
    store.ingest([SWEEP])
    names = [row.name for row in store.rows()][:3][::-1]
    assert [name for name, _ in store.records(names)] == names


def test_standalone_protocol_documents_are_stored_and_exported(
    store: Store, tmp_path: Path
) -> None:
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    protocol = example["protocol"]
    path = tmp_path / "protocol.json"
    path.write_text(dumps(protocol), encoding="utf-8")
    assert store.ingest([path]).added == 1
    assert store.ingest([path]).identical == 1
    assert list(store.export_lines()) == [dumps(protocol, indent=None) + "\n"]
    renamed = json.loads(json.dumps(protocol))
    renamed["spec"]["measurement"]["timer"] = "wall_clock"
    path.write_text(dumps(renamed), encoding="utf-8")
    report = store.ingest([path])
    assert report.problems[0].problem.code == "store-clash"


def test_json_equality_is_strict_about_booleans_not_number_forms() -> None:
    from kernelindex_sdk.store._extract import json_equal

    assert json_equal({"a": [1, 2.5]}, {"a": [1.0, 2.5]})
    assert json_equal(1e300, 10**300)
    assert not json_equal(2**53 + 1, 2**53)
    assert not json_equal({"bias": True}, {"bias": 1})
    assert not json_equal([0], [False])
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal("1", 1)
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_a_repeated_object_in_a_file_is_compared_exactly(store: Store, tmp_path: Path) -> None:
    """Keys in another order are the same spec; ``1`` for ``true`` under one digest is not."""
    first = bundle(params={"tokens": 1, "dtype": "fp32", "bias": True})
    reordered = json.loads(json.dumps(first))
    reordered["run"]["metadata"]["name"] += "-b"
    workload = reordered["run"]["spec"]["workload"]
    reordered["run"]["spec"]["workload"] = dict(reversed(list(workload.items())))
    assert store.ingest([lines(tmp_path / "a.jsonl", [first, reordered])]).added == 2
    lying = json.loads(json.dumps(first))
    lying["run"]["metadata"]["name"] += "-c"
    lying["run"]["spec"]["workload"]["parameters"]["bias"] = 1
    other = bundle(params={"tokens": 2, "dtype": "fp32"})
    report = store.ingest([lines(tmp_path / "b.jsonl", [other, first, lying])])
    assert [p.problem.code for p in report.problems] == ["digest-clash"]
    assert str(report.problems[0]).startswith(f"{tmp_path / 'b.jsonl'}:3:")


def test_float_forms_come_back_equal_from_the_store(store: Store, tmp_path: Path) -> None:
    """PostgreSQL's jsonb writes numbers its own way (1e-07 as 0.0000001): the same spec."""
    doc = bundle(params={"tokens": 1024, "dtype": "fp32", "scale": 1e15, "tiny": 1e-7})
    path = lines(tmp_path / "a.jsonl", [doc])
    assert store.ingest([path]).added == 1
    other = lines(
        tmp_path / "b.jsonl", [bundle(params=doc["run"]["spec"]["workload"]["parameters"])]
    )
    report = store.ingest([other])
    assert (report.added, report.ok) == (1, True)


def test_postgresql_specs_are_jsonb(postgres_url: str) -> None:
    """The documented query works in plain SQL: ``spec->'parameters'->>'tokens'``."""
    import psycopg

    from kernelindex_sdk.store import open_store

    with open_store(postgres_url) as store:
        store.ingest([SWEEP])
    with psycopg.connect(postgres_url) as db:
        found = db.execute(
            "SELECT w.spec->'parameters'->>'tokens' AS tokens, i.provider, count(*)"
            " FROM runs r JOIN workloads w ON w.digest = r.workload_digest"
            " JOIN implementations i ON i.digest = r.implementation_digest"
            " WHERE w.operation = 'jsd' AND i.provider = 'triton'"
            " GROUP BY 1, 2 ORDER BY 1"
        ).fetchall()
        kind = db.execute(
            "SELECT data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = 'workloads'"
            " AND column_name = 'spec'"
        ).fetchall()
    assert found == [("1024", "triton", 4), ("2048", "triton", 4), ("4096", "triton", 4),
                     ("8192", "triton", 4)]  # fmt: skip
    assert {row[0] for row in kind} == {"jsonb"}


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three records a batch, so that a few records span several."""
    from kernelindex_sdk.store import _ingest

    monkeypatch.setattr(_ingest, "BATCH", 3)


@pytest.mark.usefixtures("small_batches")
def test_a_file_of_many_batches_goes_in_whole(store: Store, tmp_path: Path) -> None:
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(8)]
    path = lines(tmp_path / "a.jsonl", docs)
    assert store.ingest([path]).added == 8
    assert "".join(store.export_lines()) == path.read_text(encoding="utf-8")
    again = store.ingest([path])
    assert (again.added, again.identical) == (0, 8)


@pytest.mark.usefixtures("small_batches")
def test_a_problem_in_a_late_batch_refuses_the_early_ones(store: Store, tmp_path: Path) -> None:
    stored = bundle(median=7)
    store.ingest([lines(tmp_path / "stored.jsonl", [stored])])
    changed = json.loads(json.dumps(stored))
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    bad = bundle()
    bad["run"]["spec"]["timing"]["latencyNs"]["median"] = -1
    fresh = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(7)]
    report = store.ingest([lines(tmp_path / "clash.jsonl", [*fresh, changed])])
    assert (report.added, report.refused, report.clashes) == (0, 8, 1)
    report = store.ingest([lines(tmp_path / "bad.jsonl", [*fresh, bad, bad])])
    assert report.refused == 9
    # Every problem of the file is reported, even after the first.
    assert [p.problem.code for p in report.problems] == ["minimum", "minimum"]
    assert [row.name for row in store.rows()] == [stored["run"]["metadata"]["name"]]


@pytest.mark.usefixtures("small_batches")
def test_a_digest_lie_across_batches_is_refused(store: Store, tmp_path: Path) -> None:
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(5)]
    lying = json.loads(json.dumps(docs[0]))
    lying["run"]["metadata"]["name"] += "-lie"
    lying["run"]["spec"]["workload"]["parameters"]["tokens"] = 99
    report = store.ingest([lines(tmp_path / "a.jsonl", [*docs, lying])])
    assert [p.problem.code for p in report.problems] == ["digest-clash"]
    assert store.rows() == []


def test_texts_stay_with_their_runs_when_stored_runs_are_interleaved(
    store: Store, tmp_path: Path
) -> None:
    """A file whose stored runs are scattered among new ones: each new run gets its own
    text (the numbers of the runs inserted are matched to them by name, not by place)."""
    found = SWEEP.read_text(encoding="utf-8").splitlines()
    some = tmp_path / "some.jsonl"
    some.write_text("".join(line + "\n" for line in found[3::5]), encoding="utf-8")
    assert store.ingest([some]).added == len(found[3::5])
    report = store.ingest([SWEEP])
    assert (report.added, report.identical) == (len(found) - len(found[3::5]), len(found[3::5]))
    names = [json.loads(line)["run"]["metadata"]["name"] for line in found]
    assert dict(store.records(names)) == dict(zip(names, found, strict=True))


# JSON values where Python's == and JSON's equality part ways, or numbers meet at the
# edges of a double: the pairs an object's repeat under one digest could differ by.
_EDGE_VALUES: list[Any] = [
    True,
    False,
    None,
    0,
    1,
    0.0,
    1.0,
    -0.0,
    2.5,
    2**53,
    2**53 + 1,
    float(2**53),
    10**300,
    1e300,
    "1",
    "true",
    [],
    {},
    [1],
    [True],
    {"a": 1},
    {"a": 1.0},
    {"a": True},
    {"b": 1},
]


def test_input_rules_are_as_strict_as_the_stores_object_equality() -> None:
    """Ingest stores the first object of each digest in a file without comparing the
    repeats (validation's InputRules refused any that differ): that holds only if every
    pair the store's own equality (json_equal) tells apart, InputRules tells apart too."""
    from kernelindex_sdk.store._extract import json_equal
    from kernelindex_sdk.validation._input_rules import same_json

    values = _EDGE_VALUES + [{"parameters": {"x": v}} for v in _EDGE_VALUES]
    pairs = 0
    for a in values:
        for b in values:
            if not json_equal(a, b):
                pairs += 1
                assert not same_json(a, b), (a, b)
    assert pairs > 1000


@pytest.mark.parametrize("changed", [True, 1.5, "1", 2, False])
@pytest.mark.usefixtures("small_batches")
def test_a_repeated_digest_with_another_object_is_refused_in_any_batch(
    store: Store, tmp_path: Path, changed: Any
) -> None:
    """The first object of a digest is stored and its repeats are not compared by the
    store: a repeat that differs (in the same batch or a later one) is still refused, by
    validation's rules over the whole file."""
    docs = [bundle(params={"tokens": i, "dtype": "fp32", "x": 1}) for i in range(5)]
    for position in (1, 5):
        lying = json.loads(json.dumps(docs[0]))
        lying["run"]["metadata"]["name"] += "-lie"
        lying["run"]["spec"]["workload"]["parameters"]["x"] = changed
        records = [*docs]
        records.insert(position, lying)
        report = store.ingest([lines(tmp_path / f"at-{position}.jsonl", records)])
        assert [p.problem.code for p in report.problems] == ["digest-clash"]
        assert f"at-{position}.jsonl:{position + 1}:" in str(report.problems[0])
        assert store.rows() == []


def test_labels_are_stored_as_json_writes_them_for_every_character() -> None:
    """The labels and annotations columns hold json's compact text (ensure_ascii=False),
    which the store writes with orjson: the same text for every code point, as key and
    as value; a string orjson refuses (a lone surrogate) still gets json's text."""
    from kernelindex_sdk.store._extract import _compact

    def json_text(value: dict[str, Any]) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    characters = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(characters), 4096):
        chunk = characters[start : start + 4096]
        value = {f"k{c}": f"v{c}" for c in chunk}
        assert _compact(value) == json_text(value)
    for value in ({}, {"a": "\ud800"}, {"kernelindex.dev/commit": "c0ffee", "x": ""}):
        assert _compact(value) == json_text(value)

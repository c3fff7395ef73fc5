"""Layout 3 attacked through its public faces (the ``kernelindex`` CLI, ``kernelindex_sdk.store``).

Layout-2 and layout-1 stores are written by the code that wrote them (``src/`` of their
last commits, from the repository's history, run in a process of its own), SQLite and a
real PostgreSQL; then this code opens them. What these tests pin:

- a migrated store answers every query (history in each format and with filters on the
  grouped columns, export, compare --history) byte for byte as the old code did on the
  same store, and as this code does on a store it filled itself from the same files;
- ingesting the same files again counts as it did before; new runs go in; a clash is
  still refused; opening the store again changes nothing;
- a migration that fails (a trigger that refuses, a role that may only read) leaves the
  old store as it was and says so in one line; a newer store is refused;
- runs that differ in only one grouped column never share a group, runs equal in them
  (NULL branch, no labels, labels in another key order) always do;
- eight PostgreSQL ingesters creating the same new groups at once, with a reader running
  histories meanwhile, store each record once, one group per combination.
"""

# The SQL below names constant tables and columns only.
# ruff: noqa: S608

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _layout3_corpus import (
    EXAMPLE,
    OLD_COMMIT,
    V1_COMMIT,
    old_code,
    run_cli,
    series_bundles,
    sweep_bundles,
    variant,
    write_document,
    write_jsonl,
)

from kernelindex_sdk.store import LAYOUT_VERSION, open_store

Query = Callable[[str], list[tuple[Any, ...]]]
# The columns run_groups holds, as runs holds them too.
SHARED = (
    "status, branch, workload_digest, implementation_digest, protocol_digest,"
    " environment_digest, labels"
)


@pytest.fixture(scope="module")
def old_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout-2 code (main when layout 3 branched)."""
    return old_code(OLD_COMMIT, tmp_path_factory.mktemp("layout2-code"))


@pytest.fixture(scope="module")
def v1_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout-1 code (kernelindex-sdk 0.4.0's store)."""
    return old_code(V1_COMMIT, tmp_path_factory.mktemp("layout1-code"))


class Corpus:
    """The records files, written once per module."""

    def __init__(self, root: Path) -> None:
        bundles = sweep_bundles()
        # A torch and a triton run at 1024 tokens, and a torch one at 4096.
        bases = [bundles[0], bundles[2], bundles[8]]
        self.bases = bases
        series = series_bundles(bases, 24)
        self.series = series
        self.a = write_jsonl(root / "a.jsonl", series[:30])
        self.b = write_jsonl(root / "b.jsonl", series[30:60])
        # One as an indented document, the rest given a branch at ingest.
        self.c = write_document(root / "c.json", series[60])
        self.d = write_jsonl(root / "d.jsonl", series[61:])
        # Later commits of the same series (new runs into the old groups and new ones).
        self.more = write_jsonl(root / "more.jsonl", series_bundles(bases, 8, first=24))
        # NEW records for compare --history: the latest runs again, 20% slower.
        latest = series[23], series[47], series[71]
        self.new = write_jsonl(
            root / "new.jsonl",
            [
                variant(
                    run,
                    run["run"]["metadata"]["name"] + "-pr",
                    median=int(run["run"]["spec"]["timing"]["latencyNs"]["median"] * 1.2),
                )
                for run in latest
            ],
        )
        # A stored run's name with another median: a clash.
        clashing = variant(series[3], series[3]["run"]["metadata"]["name"], median=123_456)
        self.clash = write_jsonl(
            root / "clash.jsonl", [series_bundles(bases, 1, first=90)[0], clashing]
        )
        # Long stretches of one group each (a series ingested together: Store.rows builds
        # such a stretch column by column), then a short one.
        stretch = [
            variant(
                base,
                f"stretch-{b}-{i:03d}",
                median=int(
                    base["run"]["spec"]["timing"]["latencyNs"]["median"]
                    * (1.25 if i >= n // 2 else 1)
                )
                + 331 * (i % 4),
                branch="stretch",
                commit=f"5{b}{i:06x}",
                commit_time=f"2026-09-{1 + i // 24:02d}T{i % 24:02d}:30:00.000Z",
            )
            for b, (base, n) in enumerate(((bundles[4], 40), (bundles[6], 24), (bundles[5], 3)))
            for i in range(n)
        ]
        self.stretch = write_jsonl(root / "stretch.jsonl", stretch)
        self.first = [self.a, self.stretch, self.b]
        self.second = [self.c, self.d, EXAMPLE]

    def fill(self, url: str) -> list[list[str]]:
        """The ingest command lines that fill a store with the corpus."""
        return [
            ["ingest", "--db", url, *map(str, self.first)],
            ["ingest", "--db", url, "--branch", "rel", *map(str, self.second)],
        ]

    def digest(self, index: int, field: str) -> str:
        return str(self.series[index]["run"]["spec"][field])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return Corpus(tmp_path_factory.mktemp("corpus"))


def _queries(url: str, corpus: Corpus, out: Path) -> list[list[str]]:
    """Every read the tests compare: history with filters on the grouped columns (and
    others), export, compare --history; exports go under ``out``."""
    workload = corpus.digest(0, "workloadDigest")
    # The protocol of the runs whose protocol changed (warmup 30), and the usual one.
    changed = next(
        corpus.digest(i, "protocolDigest")
        for i in range(len(corpus.series))
        if corpus.digest(i, "protocolDigest") != corpus.digest(0, "protocolDigest")
    )
    db = ["--db", url]
    filters: list[list[str]] = [
        [],
        ["--branch", "main"],
        ["--branch", "feature/ü"],
        ["--branch", "rel"],
        ["--status", "unverified"],
        ["--status", "passed", "--branch", "dev"],
        ["--workload-digest", workload],
        ["--protocol-digest", changed],
        ["--protocol-digest", corpus.digest(0, "protocolDigest"), "--provider", "triton"],
        ["--hardware", "NVIDIA H200", "--branch", "main", "--status", "passed"],
        # Only the stretches of one group each, then one stretch alone.
        ["--branch", "stretch"],
        ["--branch", "stretch", "--provider", "torch"],
    ]
    commands = [["history", *db, "--format", "json", *f] for f in filters]
    commands += [
        ["history", *db, "--format", "text", "--points", "0"],
        ["history", *db, "--format", "markdown", "--points", "0", "--branch", "main"],
        ["history", *db, "--format", "text", "--changed"],
    ]
    commands += [
        ["export", *db, "-o", str(out / f"export-{i}.jsonl"), *f] for i, f in enumerate(filters)
    ]
    for branch in ("main", "dev", "rel", "feature/ü"):
        for fmt in ("json", "markdown"):
            commands.append(["compare", "--history", branch, str(corpus.new), *db, "--format", fmt])
    commands.append(
        ["compare", "--history", "main", str(corpus.new), *db, "--window", "4", "--format", "json"]
    )
    return commands


def _answers(
    src: Path | None, url: str, corpus: Corpus, out: Path, before: list[list[str]] | None = None
) -> list[Any]:
    """Each query's status, output and message, and each export's bytes (their paths and
    the store's URL written alike)."""
    if before is None:
        before = []
    out.mkdir(parents=True, exist_ok=True)
    results = run_cli(src, [*before, *_queries(url, corpus, out)])
    exports = sorted(out.glob("export-*.jsonl"))
    assert exports, "no export written"

    def plain(text: str) -> str:
        return text.replace(url, "URL").replace(str(out), "OUT")

    return [(s, plain(o), plain(e)) for s, o, e in results] + [p.read_bytes() for p in exports]


@pytest.fixture(params=["sqlite", "postgresql"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], str]:
    """Makes the URL of an empty store place by name, on the backend of the case."""
    if request.param == "sqlite":
        return lambda name: f"sqlite:///{tmp_path / (name + '.sqlite3')}"
    server = request.getfixturevalue("postgres_server")
    return lambda name: str(server.new_database())


def _query(url: str) -> Iterator[Query]:
    if url.startswith("sqlite:///"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            yield lambda sql: db.execute(sql).fetchall()
        finally:
            db.close()
        return
    import psycopg

    def run(sql: str) -> list[tuple[Any, ...]]:
        cursor = pg.execute(sql)
        return cursor.fetchall() if cursor.description is not None else []

    with psycopg.connect(url, autocommit=True) as pg:
        yield run


def _sql(url: str, sql: str) -> list[tuple[Any, ...]]:
    for query in _query(url):
        return query(sql)
    raise AssertionError("unreachable")


def _snapshot(url: str) -> list[Any]:
    """Every table's rows (as text, in a fixed order) and the schema's objects."""
    if url.startswith("sqlite:///"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            return list(db.iterdump())
        finally:
            db.close()
    tables = [
        row[0]
        for row in _sql(
            url,
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY 1",
        )
    ]
    columns = _sql(
        url,
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_schema = current_schema() ORDER BY 1, 2",
    )
    indexes = _sql(
        url,
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1",
    )
    rows = [sorted(map(str, _sql(url, f"SELECT t::text FROM {t} t"))) for t in tables]
    return [tables, columns, indexes, rows]


def _check_groups(url: str) -> None:
    """Every run names the group of its own values; each combination has one group, and
    each group is some run's."""
    postgres = not url.startswith("sqlite")
    text = (lambda c: f"{c}::text") if postgres else (lambda c: c)
    own = ", ".join(f"r.{c.strip()}" for c in SHARED.split(",")).replace(
        "r.labels", text("r.labels")
    )
    its = own.replace("r.", "g.")
    found = _sql(
        url,
        f"SELECT r.group_id, {own}, {its} FROM runs r LEFT JOIN run_groups g ON g.id = r.group_id",
    )
    assert found
    ids: dict[tuple[Any, ...], set[int]] = {}
    for gid, *values in found:
        mine, group = values[:7], values[7:]
        assert group[:6] == mine[:6]
        assert json.loads(group[6]) == json.loads(mine[6])
        combo = (*mine[:6], json.dumps(json.loads(mine[6]), sort_keys=True))
        ids.setdefault(combo, set()).add(gid)
    assert {k: v for k, v in ids.items() if len(v) > 1} == {}
    orphans = _sql(
        url,
        "SELECT count(*) FROM run_groups g"
        " WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.group_id = g.id)",
    )
    assert orphans == [(0,)]


def _again(url: str, corpus: Corpus) -> list[list[str]]:
    """Ingest everything again, then a file with a clash."""
    return [
        ["ingest", "--db", url, *map(str, [*corpus.first, *corpus.second])],
        ["ingest", "--db", url, str(corpus.clash)],
    ]


def test_migrated_store_answers_as_the_layout_2_code_did(
    old_src: Path, corpus: Corpus, place: Callable[[str], str], tmp_path: Path
) -> None:
    v2, with_more, fresh = place("v2"), place("more"), place("fresh")
    # The old code: fills the store, ingests everything again and a clash, answers; a
    # second store also gets the later commits.
    filled = run_cli(old_src, [*corpus.fill(v2), *corpus.fill(with_more)])
    assert [s for s, _, _ in filled] == [0, 0, 0, 0], filled
    old = _answers(old_src, v2, corpus, tmp_path / "old", before=_again(v2, corpus))
    assert old[0][0] == 0
    assert "0 record(s) added, 140 skipped" in old[0][2]
    assert old[1][0] == 1
    assert "[store-clash]" in old[1][2]
    run_cli(old_src, [["ingest", "--db", with_more, str(corpus.more)]])
    old_more = _answers(old_src, with_more, corpus, tmp_path / "old-more")
    # The answers say something: each history has series, each filtered one fewer runs.
    histories = [json.loads(o) for s, o, _ in old[2:14]]
    assert all(h["series"] for h in histories)
    points = [sum(len(x["points"]) for x in h["series"]) for h in histories]
    assert points[0] > max(points[1:])
    assert min(points[1:]) > 0
    # Histories, then exports (the 12 files' bytes at the end), then compare --history.
    assert all(s == 0 and o for s, o, _ in [*old[2:17], *old[29:38]])
    assert all(s == 0 and "exported" in e for s, _, e in old[17:29])
    assert _sql(v2, "SELECT value FROM kernelindex_layout") == [("2",)]

    # This code, on the same store: migrated at its first opening, then the same answers
    # (the same counts for the files seen again, the same clash).
    new = _answers(None, v2, corpus, tmp_path / "new", before=_again(v2, corpus))
    assert _sql(v2, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    assert _facts(new) == _facts(old)
    _check_groups(v2)
    # New runs go in, and then it answers as the old code did with them.
    ((status, _, err),) = run_cli(None, [["ingest", "--db", v2, str(corpus.more)]])
    assert status == 0
    assert "24 record(s) added, 0 skipped" in err
    assert _facts(_answers(None, v2, corpus, tmp_path / "new-more")) == _facts(old_more)
    _check_groups(v2)

    # A store this code filled from the same files answers the same too, word for word.
    assert [s for s, _, _ in run_cli(None, corpus.fill(fresh))] == [0, 0]
    assert _answers(None, fresh, corpus, tmp_path / "fresh", before=_again(fresh, corpus)) == new
    _check_groups(fresh)


def _facts(answers: list[Any]) -> list[Any]:
    """What a store answered, whichever code printed it: each status and ingest message,
    each history's points and failed runs per series, the exports' bytes, and the NEW
    runs each ``compare --history`` JSON paired (its base is chosen by the rules of 0.6.2:
    NEW's own commit left out, replicates pooled; the formats changed, not the store)."""
    facts: list[Any] = []
    for found in answers:
        if isinstance(found, bytes):
            facts.append(found)
            continue
        status, out, err = found
        if out.startswith('{"series"'):
            series = json.loads(out)["series"]
            out = json.dumps([(s["label"], s["points"], s["failed"]) for s in series])
        elif out.startswith("[\n") or out == "[]\n":
            rows = json.loads(out)
            out = json.dumps(
                sorted(((r["new"] or {}).get("run") or "", r["base"] is None) for r in rows)
            )
        elif status == 0 and not err.startswith("ingested"):
            out = ""  # history and compare as text and Markdown: another format now
        facts.append((status, out, err))
    return facts


@pytest.fixture
def v2_store(old_src: Path, corpus: Corpus, place: Callable[[str], str]) -> str:
    """A layout-2 store of the corpus, written by the layout-2 code."""
    url = place("v2")
    assert [s for s, _, _ in run_cli(old_src, corpus.fill(url))] == [0, 0]
    return url


def test_opening_a_migrated_store_again_changes_nothing(v2_store: str) -> None:
    with open_store(v2_store):
        pass
    migrated = _snapshot(v2_store)
    assert _sql(v2_store, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    with open_store(v2_store) as store:
        assert len(store.rows()) == 140
    assert _snapshot(v2_store) == migrated


def _fail_after(step: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make migration step ``step`` fail after all its statements ran (an injected error),
    in both dialects."""
    from kernelindex_sdk.errors import StoreError
    from kernelindex_sdk.store import _postgres_layout, _sqlite_layout

    for steps in (_sqlite_layout.MIGRATIONS, _postgres_layout.MIGRATIONS):
        real = steps[step]

        def failing(connection: Any, real: Any = real) -> None:
            real(connection)
            raise StoreError(source="injected", reason="injected failure")

        monkeypatch.setitem(steps, step, failing)


def test_a_migration_failing_at_its_end_leaves_the_layout_2_store_intact(
    v2_store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every statement of the step ran (runs rebuilt or altered, groups filled) before
    the error: all of it is rolled back, and the CLI says so in one line (exit 2)."""
    before = _snapshot(v2_store)
    _fail_after(2, monkeypatch)
    ((status, out, err),) = run_cli(None, [["migrate", "--db", v2_store]])
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert f"cannot migrate store layout version 2 to {LAYOUT_VERSION} (the store is" in err
    assert "injected failure" in err
    assert _snapshot(v2_store) == before
    # Without the error it migrates, and holds every run.
    monkeypatch.undo()
    with open_store(v2_store) as store:
        assert len(store.rows()) == 140


def test_a_migration_refused_by_the_server_leaves_the_postgres_store_intact(
    old_src: Path, corpus: Corpus, postgres_url: str, tmp_path: Path
) -> None:
    """A team's trigger that refuses updates of runs, then a role that may only read."""
    assert [s for s, _, _ in run_cli(old_src, corpus.fill(postgres_url))] == [0, 0]
    for query in _query(postgres_url):
        query(
            "CREATE FUNCTION team_frozen() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'runs are frozen'; END $$"
        )
        query(
            "CREATE TRIGGER team_frozen BEFORE UPDATE ON runs"
            " FOR EACH ROW EXECUTE FUNCTION team_frozen()"
        )
    before = _snapshot(postgres_url)
    ((status, _, err),) = run_cli(None, [["migrate", "--db", postgres_url]])
    assert status == 2
    assert err.count("\n") == 1
    assert "(the store is unchanged): postgresql: runs are frozen" in err
    assert _snapshot(postgres_url) == before

    schema = postgres_url.rsplit("%3D", 1)[1]
    for query in _query(postgres_url):
        query("DROP TRIGGER team_frozen ON runs")
        query("DROP ROLE IF EXISTS team_reader")
        query("CREATE ROLE team_reader LOGIN")
        query(f"GRANT USAGE ON SCHEMA {schema} TO team_reader")
        query(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO team_reader")
    before = _snapshot(postgres_url)
    reader = postgres_url.replace("postgresql://postgres@", "postgresql://team_reader@")
    # A reader says how to migrate; the role that may only read cannot.
    ((status, _, err), (migrating, _, refused)) = run_cli(
        None, [["history", "--db", reader], ["migrate", "--db", reader]]
    )
    assert (status, migrating) == (2, 2)
    assert err.count("\n") == refused.count("\n") == 1
    assert "store layout version 2 needs migrating" in err
    assert "(the store is unchanged): postgresql: permission denied" in refused
    assert _snapshot(postgres_url) == before
    for query in _query(postgres_url):
        query(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM team_reader")
        query(f"REVOKE ALL ON SCHEMA {schema} FROM team_reader")
        query("DROP ROLE team_reader")


@pytest.mark.parametrize("version", [str(LAYOUT_VERSION + 1), "x"])
def test_a_newer_or_unreadable_layout_is_refused_and_left_alone(
    store_url: str, version: str, tmp_path: Path
) -> None:
    """A newer layout is refused as unusable (exit 2); a version that is no number is a
    damaged store (exit 1)."""
    with open_store(store_url) as store:
        store.ingest([write_jsonl(tmp_path / "one.jsonl", sweep_bundles()[:2])])
    for query in _query(store_url):
        query(f"UPDATE kernelindex_layout SET value = '{version}' WHERE key = 'layout_version'")
    before = _snapshot(store_url)
    ((status, out, err),) = run_cli(None, [["history", "--db", store_url]])
    newer = version != "x"
    assert (status, out) == (2 if newer else 1, "")
    assert err.count("\n") == 1
    expected = (
        f"store layout version {version} is newer than this kernelindex-sdk reads"
        f" ({LAYOUT_VERSION})"
        if newer
        else "damaged store: kernelindex_layout's layout_version is 'x', not a number"
    )
    assert expected in err
    assert _snapshot(store_url) == before


def _group_of(url: str) -> dict[str, int]:
    return {name: int(gid) for name, gid in _sql(url, "SELECT name, group_id FROM runs")}


def test_runs_share_a_group_exactly_when_their_grouped_columns_are_equal(
    store_url: str, tmp_path: Path
) -> None:
    """One grouped column apart (status, branch, a label's value, a label more, each
    digest): never one group. Equal (no branch, no labels or empty labels, the same
    pairs in another order, unicode and long values): always one group."""
    base = sweep_bundles()[0]
    two = {"a": "1", "b": "ü" * 2000}
    cases = {
        "base": {"labels": two},
        "same-order": {"labels": {"b": "ü" * 2000, "a": "1"}},
        "unverified": {"labels": two, "status": "unverified"},
        "branch-main": {"labels": two, "branch": "main"},
        "branch-main-2": {"labels": {"b": "ü" * 2000, "a": "1"}, "branch": "main"},
        "branch-upper": {"labels": two, "branch": "Main"},
        "branch-space": {"labels": two, "branch": "main "},
        "label-value": {"labels": {"a": "2", "b": "ü" * 2000}},
        "label-more": {"labels": {**two, "c": ""}},
        "label-empty-value": {"labels": {"a": "", "b": "ü" * 2000}},
        "implementation": {"labels": two, "torch": "2.12.0"},
        "environment": {"labels": two, "driver": "999.1"},
        "protocol": {"labels": two, "warmup": 30},
        "no-labels": {"labels": None},
        "no-labels-2": {"labels": None},
        "empty-labels": {"labels": {}},
        "no-labels-main": {"labels": None, "branch": "main"},
        "no-labels-unverified": {"labels": None, "status": "unverified"},
    }
    runs = [variant(base, f"g-{name}", **kw) for name, kw in cases.items()]  # type: ignore[arg-type]
    # The workload digest apart: another run of the sweep, the base's labels.
    runs.append(variant(sweep_bundles()[4], "g-workload", labels=two))
    # Two files, so that the second's runs find the first's groups in the store.
    path_a = write_jsonl(tmp_path / "a.jsonl", runs[::2])
    path_b = write_jsonl(tmp_path / "b.jsonl", runs[1::2])
    with open_store(store_url) as store:
        report = store.ingest([path_a, path_b])
        assert (report.added, report.ok) == (len(runs), True), report.problems
        rows = {row.name: row for row in store.rows()}
    group = {name.removeprefix("g-"): gid for name, gid in _group_of(store_url).items()}
    together = [
        {"base", "same-order"},
        {"branch-main", "branch-main-2"},
        {"no-labels", "no-labels-2", "empty-labels"},
    ]
    expected: dict[str, int] = {}
    for name in group:
        kin = next((s for s in together if name in s), {name})
        expected[name] = min(group[k] for k in kin)
    assert group == {name: expected[name] for name in group}
    assert len(set(group.values())) == len(group) - 4
    # Each run reads back its own values through its group.
    for bundle in runs:
        run = bundle["run"]
        row = rows[run["metadata"]["name"]]
        assert dict(row.labels) == run["metadata"].get("labels", {})
        assert row.status == run["spec"]["status"]
        assert row.branch == run["metadata"]["annotations"].get("kernelindex.dev/branch")
        for field in ("workload", "implementation", "protocol", "environment"):
            assert getattr(row, f"{field}_digest") == run["spec"][f"{field}Digest"]
    _check_groups(store_url)


def test_eight_postgres_ingesters_create_the_same_new_groups_at_once(
    postgres_url: str, tmp_path: Path
) -> None:
    """Every file's runs name the same few new groups (each combination of 4 branches and
    2 label orders, and unverified runs); 8 writers start at one moment, each with another
    file first, while a reader runs histories."""
    from _layout3_workers import ingest_at, read_until

    files, step, size = 8, 20, 40
    base = sweep_bundles()
    branches = ["main", "dev", None, "feature/ü"]
    orders = [{"a": "1", "b": "2"}, {"b": "2", "a": "1"}]
    pool = [
        variant(
            base[i % 3],
            f"race-{i:04d}",
            median=1_000_000 + i,
            branch=branches[i % 4],
            labels=orders[(i // 4) % 2],
            status="unverified" if i % 5 == 0 else None,
            commit=f"{i:08x}",
            commit_time=f"2026-11-{1 + i % 28:02d}T00:00:{i % 60:02d}.000Z",
        )
        for i in range(files * step)
    ]
    paths = [
        str(
            write_jsonl(
                tmp_path / f"race-{k}.jsonl",
                [pool[(k * step + j) % len(pool)] for j in range(size)],
            )
        )
        for k in range(files)
    ]
    expected = {
        b["run"]["metadata"]["name"]: (
            b["run"]["spec"]["status"],
            b["run"]["metadata"]["annotations"].get("kernelindex.dev/branch"),
            b["run"]["metadata"].get("labels", {}),
        )
        for b in pool
    }
    with open_store(postgres_url):
        pass
    stop = tmp_path / "stop"
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(files + 1, mp_context=context) as executor:
        # Time for every process to start and import before the common moment.
        start = time.time() + 6
        reader = executor.submit(read_until, postgres_url, str(stop), expected, start)
        writers = [
            executor.submit(ingest_at, postgres_url, paths[w:] + paths[:w], start)
            for w in range(files)
        ]
        results = [w.result(timeout=300) for w in writers]
        stop.touch()
        read = reader.result(timeout=120)

    assert [r["problems"] for r in results] == [[]] * files
    assert sum(r["added"] for r in results) == len(pool)
    assert sum(r["identical"] for r in results) == files * files * size - len(pool)
    assert read["wrong"] == []
    assert read["reads"] >= 1
    assert read["most"] == len(pool)
    with open_store(postgres_url) as store:
        rows = store.rows()
        assert sorted(r.name for r in rows) == sorted(expected)
        assert {r.name: (r.status, r.branch, dict(r.labels)) for r in rows} == expected
    _check_groups(postgres_url)
    # One group per combination, no more: 3 implementations x 4 branches x 2 statuses
    # (labels in either order being one value).
    combos = {
        (b["run"]["spec"]["implementationDigest"], *expected[b["run"]["metadata"]["name"]][:2])
        for b in pool
    }
    assert len(combos) == 24
    assert _sql(postgres_url, "SELECT count(*) FROM run_groups") == [(len(combos),)]


def test_a_layout_1_store_migrates_through_both_steps_and_answers_as_before(
    v1_src: Path, corpus: Corpus, place: Callable[[str], str], tmp_path: Path
) -> None:
    """kernelindex-sdk 0.4.0's store (texts in runs): its exports and ingest counts are
    what that code gave; every answer is what a store this code fills gives (0.4.0's
    history printed another format, so that is not compared with it)."""
    v1, fresh = place("v1"), place("fresh")
    filled = run_cli(v1_src, corpus.fill(v1))
    assert [s for s, _, _ in filled] == [0, 0], filled
    assert _sql(v1, "SELECT value FROM kernelindex_layout") == [("1",)]
    exports = tmp_path / "old"
    exports.mkdir()
    old = run_cli(
        v1_src,
        [
            *_again(v1, corpus),
            *[q for q in _queries(v1, corpus, exports) if q[0] == "export"],
        ],
    )
    old_bytes = [p.read_bytes() for p in sorted(exports.glob("export-*.jsonl"))]
    assert len(old_bytes) == 12
    new = _answers(None, v1, corpus, tmp_path / "new", before=_again(v1, corpus))
    assert _sql(v1, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    assert [s for s, _, _ in new[:2]] == [s for s, _, _ in old[:2]] == [0, 1]
    assert new[0][2] == old[0][2]
    assert new[-12:] == old_bytes
    assert [s for s, _, _ in run_cli(None, corpus.fill(fresh))] == [0, 0]
    assert _answers(None, fresh, corpus, tmp_path / "fresh", before=_again(fresh, corpus)) == new
    _check_groups(v1)


def test_a_failing_second_step_leaves_a_layout_1_store_at_layout_1(
    v1_src: Path, corpus: Corpus, place: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layout 1 to 2 done, 2 to 3 failing at its end: the store is layout 1 still."""
    v1 = place("v1")
    assert [s for s, _, _ in run_cli(v1_src, corpus.fill(v1))] == [0, 0]
    before = _snapshot(v1)
    _fail_after(2, monkeypatch)
    ((status, _, err),) = run_cli(None, [["migrate", "--db", v1]])
    assert status == 2
    assert err.count("\n") == 1
    assert f"cannot migrate store layout version 1 to {LAYOUT_VERSION} (the store is" in err
    assert _snapshot(v1) == before


def test_four_openers_of_a_layout_2_store_at_once_migrate_it_once(v2_store: str) -> None:
    """Each opener finds layout 2 or 3; one migrates, the others wait and find it done."""
    from concurrent.futures import ThreadPoolExecutor

    start = time.time() + 1

    def opener(_: int) -> int:
        time.sleep(max(0.0, start - time.time()))
        with open_store(v2_store) as store:
            return len(store.rows())

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(opener, range(4))) == [140] * 4
    assert _sql(v2_store, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    _check_groups(v2_store)
    postgres = not v2_store.startswith("sqlite")
    labels = "labels::text" if postgres else "labels"
    runs = _sql(v2_store, f"SELECT {SHARED.replace('labels', labels)} FROM runs")
    combos = {(*r[:6], json.dumps(json.loads(r[6]), sort_keys=True)) for r in runs}
    assert _sql(v2_store, "SELECT count(*) FROM run_groups") == [(len(combos),)]

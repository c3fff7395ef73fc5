"""A PostgreSQL store is where the connection's search path finds ``kernelindex_layout``,
as PostgreSQL resolves that name; every table of it is then taken from that schema, even
where an earlier schema of the path holds a table of the same name (another program's
``runs``). A new store goes in the first schema of the path."""

# The schemas named in statements are the test's own.
# ruff: noqa: S608

from __future__ import annotations

from pathlib import Path

from _cli_runner import run_in_process
from _postgres_server import Server
from _sql import query

from kernelindex_sdk.store import open_store

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"


def _schemas(postgres_server: Server, *names: str) -> tuple[str, ...]:
    """Fresh schemas, each as a store URL whose search path is it alone; their names."""
    made = tuple(postgres_server.new_database() for _ in names)
    return tuple(url.rsplit("%3D", 1)[1] for url in made)


def _path_url(postgres_server: Server, *schemas: str) -> str:
    return f"{postgres_server.url()}&options=-csearch_path%3D{'%2C'.join(schemas)}"


def test_a_store_in_a_later_schema_is_found_past_another_programs_runs(
    postgres_server: Server, tmp_path: Path
) -> None:
    first, later = _schemas(postgres_server, "first", "later")
    base = postgres_server.url()
    query(base, f"CREATE TABLE {first}.runs (x INTEGER)")
    query(base, f"INSERT INTO {first}.runs VALUES (1)")
    with open_store(_path_url(postgres_server, later)) as store:
        assert store.ingest([SWEEP]).added == 64
    url = _path_url(postgres_server, first, later)
    for command in (
        ["history", "--db", url],
        ["export", "--db", url, "-o", str(tmp_path / "out.jsonl")],
        ["compare", "--history", "main", str(SWEEP), "--db", url],
    ):
        status, _, err = run_in_process(*command)
        assert status == 0, (command, err)
    assert (tmp_path / "out.jsonl").read_bytes() == SWEEP.read_bytes()
    with open_store(url) as store:
        assert len(store.rows()) == 64
        assert store.ingest([FIXTURES]).added == 1
    # Nothing of the store went into the first schema; its own table is untouched.
    tables = query(
        base,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
        (first,),
    )
    assert tables == [("runs",)]
    assert query(base, f"SELECT x FROM {first}.runs") == [(1,)]
    assert query(base, f"SELECT count(*) FROM {later}.runs") == [(65,)]


def test_a_new_store_goes_in_the_first_schema_of_the_path(postgres_server: Server) -> None:
    first, later = _schemas(postgres_server, "first", "later")
    with open_store(_path_url(postgres_server, first, later)) as store:
        assert store.ingest([SWEEP]).added == 64
    base = postgres_server.url()
    assert query(base, f"SELECT count(*) FROM {first}.runs") == [(64,)]
    assert query(
        base, "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (later,)
    ) == [(0,)]

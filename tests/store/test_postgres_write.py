"""The PostgreSQL write path: binary COPY, record texts written while ingest goes on, lz4.

Each test runs against the real server the store tests start (conftest.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from _records import bundle
from _sql import query

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.errors import StoreError
from kernelindex_sdk.store import Store, open_store

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"
# Past this many bytes a row's text is stored compressed (PostgreSQL's TOAST threshold is
# about 2 KiB a row).
_COMPRESSED_PAST = 2500


def _lines(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    return path


def _awkward(i: int) -> dict[str, Any]:
    """A bundle whose text COPY's text format would have to escape: backslashes, tabs
    and newlines (as JSON escapes), quotes, and characters past ASCII and past the BMP."""
    doc = bundle(params={"tokens": i, "dtype": "fp32"})
    doc["run"]["metadata"]["labels"] = {
        "path": "C:\\kernels\\jsd\t\\n",
        "note": 'line one\nline two "quoted"',
        "unit": "µs, Δ 5%, 🚀 \u2028",
        "empty": "",
    }
    return doc


def _compression(url: str) -> tuple[set[str | None], int]:
    """The methods the long record texts are stored with, and how many there are."""
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT pg_column_compression(record_text) FROM run_texts"
            " WHERE octet_length(record_text) > %s",
            (_COMPRESSED_PAST,),
        ).fetchall()
    return {row[0] for row in rows}, len(rows)


def _server_has_lz4(url: str) -> bool:
    with psycopg.connect(url) as db:
        ((values,),) = db.execute(
            "SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'"
        ).fetchall()
    return "lz4" in values


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[Store]:
    with open_store(postgres_url) as store:
        yield store


def test_awkward_texts_come_back_byte_identical(pg_store: Store, tmp_path: Path) -> None:
    """Lines read as bytes, an indented document, and records given provenance (written
    as str) all come back as they went in."""
    docs = [_awkward(i) for i in range(5)]
    path = _lines(tmp_path / "a.jsonl", docs)
    one = _awkward(99)
    single = tmp_path / "one.json"
    single.write_text(dumps(one, indent=2) + "\n", encoding="utf-8")
    report = pg_store.ingest([path, single])
    assert (report.added, report.ok) == (6, True)
    later = [_awkward(i) for i in range(10, 13)]
    written = _lines(tmp_path / "b.jsonl", later)
    assert pg_store.ingest([written], commit="a" * 40, branch="main").added == 3
    out = tmp_path / "out.jsonl"
    assert pg_store.export(out) == 9
    # Split at "\n" alone: str.splitlines would split inside a record at U+2028.
    exported = [line + "\n" for line in out.read_text(encoding="utf-8").split("\n")[:-1]]
    assert "".join(exported[:5]) == path.read_text(encoding="utf-8")
    assert exported[5] == dumps(one, indent=None) + "\n"
    given = provenance.Provenance(commit="a" * 40, branch="main")
    for doc, line in zip(later, exported[6:], strict=True):
        stamped = json.loads(json.dumps(doc))
        provenance.annotate(stamped, given)
        assert line == dumps(stamped, indent=None) + "\n"
    assert pg_store.record_text(one["run"]["metadata"]["name"]) == single.read_text("utf-8")


def test_a_client_encoding_in_the_url_does_not_change_the_texts(
    postgres_url: str, tmp_path: Path
) -> None:
    """The store's session speaks UTF-8 whatever the URL asks for."""
    docs = [_awkward(i) for i in range(3)]
    path = _lines(tmp_path / "a.jsonl", docs)
    with open_store(f"{postgres_url}&client_encoding=LATIN1") as store:
        assert store.ingest([path]).added == 3
        assert "".join(store.export_lines()) == path.read_text(encoding="utf-8")


def test_long_record_texts_are_stored_with_lz4(postgres_url: str) -> None:
    """Where the server has lz4; otherwise with its default (pglz), as the fallback."""
    with open_store(postgres_url) as store:
        assert store.ingest([SWEEP, EXAMPLE]).added == 65
    methods, count = _compression(postgres_url)
    assert count > 0
    assert methods == ({"lz4"} if _server_has_lz4(postgres_url) else {"pglz"})


def test_a_server_refusing_lz4_keeps_its_default(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server built without lz4 refuses the setting: its own default is kept, and the
    texts come back the same."""
    execute = psycopg.Connection.execute

    def refusing(self: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        if str(query).startswith("SET default_toast_compression"):
            raise psycopg.errors.InvalidParameterValue("invalid value for parameter")
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", refusing)
    with open_store(postgres_url) as store:
        assert store.ingest([SWEEP]).added == 64
        assert "".join(store.export_lines()) == SWEEP.read_text(encoding="utf-8")
    methods, count = _compression(postgres_url)
    assert (methods, count > 0) == ({"pglz"}, True)


def test_a_failed_text_write_refuses_the_whole_file(postgres_url: str, tmp_path: Path) -> None:
    """The texts are written while ingest goes on; their failure still rolls the file back
    (no run of it is left without its text) and names the cause."""
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(10)]
    path = _lines(tmp_path / "a.jsonl", docs)
    first = _awkward(0)
    with open_store(postgres_url) as store:
        assert store.ingest([_lines(tmp_path / "first.jsonl", [first])]).added == 1
        # The numbers the file's runs will take are held already: the texts' COPY fails.
        with psycopg.connect(postgres_url, autocommit=True) as db:
            ((last,),) = db.execute("SELECT nextval('kernelindex_arrival')").fetchall()
            db.execute(
                "INSERT INTO run_texts (seq, record_text, record_form)"
                " SELECT n, 'x', 'line' FROM generate_series(%s::bigint + 1, %s::bigint + 50) n",
                (last, last),
            )
        with pytest.raises(StoreError, match="run_texts_pkey"):
            store.ingest([path])
        assert [row.name for row in store.rows()] == [first["run"]["metadata"]["name"]]
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute("DELETE FROM run_texts WHERE record_text = 'x'")
        # The connection is usable after the failure, and the file goes in whole.
        assert store.ingest([path]).added == 10
        assert "".join(store.export_lines()) == dumps(first, indent=None) + "\n" + path.read_text(
            encoding="utf-8"
        )


def test_many_stored_runs_are_found_again(store: Store, tmp_path: Path) -> None:
    """More runs than one batch (2,000) meet the store at once: each is counted."""
    count = 2500
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(count)]
    path = _lines(tmp_path / "a.jsonl", docs)
    assert store.ingest([path]).added == count
    again = store.ingest([path])
    assert (again.identical, again.added, again.ok) == (count, 0, True)
    # The last run changed: a clash, found among the others, refuses the file.
    changed = [*docs[:-1], json.loads(json.dumps(docs[-1]))]
    changed[-1]["run"]["metadata"]["labels"] = {"other": "yes"}
    refused = store.ingest([_lines(tmp_path / "b.jsonl", changed)])
    assert (refused.clashes, refused.added, refused.refused) == (1, 0, count)


def _held_writer(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Event, threading.Event]:
    """Make the store's text writer wait for ``release`` once it has ``started``."""
    backend = store._backend
    started, release = threading.Event(), threading.Event()
    texts = backend._texts  # type: ignore[attr-defined]
    write = texts._write

    def held(rows: Any) -> None:
        started.set()
        release.wait(30)
        write(rows)

    monkeypatch.setattr(texts, "_write", held)
    return started, release


def test_texts_are_written_while_the_caller_goes_on(
    pg_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """insert_texts returns before the texts are in; the next statement waits for them."""
    started, release = _held_writer(pg_store, monkeypatch)
    backend = pg_store._backend
    with backend.transaction():
        backend.insert_texts([(1, b'{"a":1}\n', "line"), (2, '{"b":"\u00b5"}\n', "line")])
        assert started.wait(30)
        # The caller goes on while the writer is held.
        assert not release.is_set()
        threading.Timer(0.2, release.set).start()
        # The next statement of the store (here its lookup of stored runs) waits.
        assert backend.stored_runs(["nobody"]) == {}
        assert release.is_set()
    assert query(pg_store, "SELECT record_text FROM run_texts ORDER BY seq") == [
        ('{"a":1}\n',),
        ('{"b":"\u00b5"}\n',),
    ]


def test_a_transaction_commits_only_once_its_texts_are_in(
    pg_store: Store, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = _held_writer(pg_store, monkeypatch)
    backend = pg_store._backend
    with backend.transaction():
        backend.insert_texts([(7, b'{"a":1}\n', "line")])
        assert started.wait(30)
        threading.Timer(0.2, release.set).start()
    assert release.is_set()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT seq FROM run_texts").fetchall() == [(7,)]


def test_the_session_settings_stay_in_the_stores_session(postgres_url: str) -> None:
    """lz4 and UTF-8 are the store's session's own: another connection, open while the
    store is, still sees the server's defaults."""

    def settings() -> tuple[str, str]:
        with psycopg.connect(postgres_url, client_encoding="LATIN1") as db:
            ((compression,),) = db.execute("SHOW default_toast_compression").fetchall()
            ((encoding,),) = db.execute("SHOW client_encoding").fetchall()
        return compression, encoding

    before = settings()
    with open_store(postgres_url) as store:
        # The store's own connection (a test of its session, not a query of the store).
        ((inside,),) = store._backend._db.execute("SHOW client_encoding").fetchall()  # type: ignore[attr-defined]
        assert inside == "UTF8"
        assert settings() == before
    assert settings() == before
    assert before[1] == "LATIN1"

"""Export reads the store as it writes: whatever the store's size, it holds a few hundred
records at a time, never every line. Counted here at the database's side, by the rows
the backend has fetched from its cursor when each line is taken (a read ahead of at most
one fetch); export's memory is measured in benchmarks/store_export_memory.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk.store import Store, _backend, _store

RUNS = 300
FETCH = 16


@pytest.fixture
def counted(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A store of RUNS runs whose streaming reads fetch FETCH rows at a time; the list
    grows by the rows of each fetch."""
    docs = []
    for i in range(RUNS):
        doc = bundle(params={"tokens": i % 9, "dtype": "fp32"})
        doc["run"]["metadata"]["name"] = f"run-{i:04d}"
        docs.append(doc)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    assert store.ingest([path]).added == RUNS
    rows: list[int] = []
    real = _backend.fetched

    def counting(
        fetchmany: Callable[[int], Sequence[tuple[Any, ...]]], size: int
    ) -> Iterator[tuple[Any, ...]]:
        def fetch(_: int) -> Sequence[tuple[Any, ...]]:
            found = fetchmany(FETCH)
            rows.append(len(found))
            return found

        return real(fetch, size)

    backend = type(store._backend).__module__
    monkeypatch.setattr(f"{backend}.fetched", counting)
    return rows


def test_export_lines_are_read_from_the_store_as_they_are_taken(
    store: Store, counted: list[int]
) -> None:
    lines = store.export_lines(provider="torch")
    taken = 0
    for _ in lines:
        taken += 1
        assert taken <= sum(counted) <= taken + FETCH
    assert taken == RUNS
    assert sum(counted) == RUNS


def test_export_writes_each_line_as_it_is_read(
    store: Store, counted: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is written line by line from the stream: when it has N lines, the store
    has given at most N + one fetch."""
    real = _store.replace_file
    ahead: list[int] = []

    def writing(path: Path, chunks: Iterable[str]) -> None:
        def watched() -> Iterator[str]:
            for written, chunk in enumerate(chunks, 1):
                ahead.append(sum(counted) - written)
                yield chunk

        real(path, watched())

    monkeypatch.setattr(_store, "replace_file", writing)
    out = tmp_path / "out.jsonl"
    assert store.export(out) == RUNS
    assert len(out.read_text(encoding="utf-8").splitlines()) == RUNS
    assert len(ahead) == RUNS
    assert max(ahead) < FETCH

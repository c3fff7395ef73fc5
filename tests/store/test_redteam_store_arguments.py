"""Red team: the store, history and site APIs given the wrong types raise ArgumentError.

Each of these raised AttributeError or TypeError from deep inside, or read a str as a
list of one-letter names, where the project promises a KernelIndexError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import ArgumentError
from kernelindex_sdk.site import build_site, write_site
from kernelindex_sdk.store import Store, open_store, parse_url
from kernelindex_sdk.store.history import history, render_history

FIXTURE = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    db = tmp_path_factory.mktemp("store") / "ki.sqlite3"
    with open_store(str(db)) as s:
        s.ingest([FIXTURE])
        yield s


def _out(store: Store) -> str:
    return str(Path(store.url.target).parent / "out")


CASES: dict[str, Callable[[Store], Any]] = {
    "open_store(int)": lambda s: open_store(123),  # type: ignore[arg-type]
    "open_store(bytes)": lambda s: open_store(b"x.db"),  # type: ignore[arg-type]
    "open_store(list)": lambda s: open_store(["x.db"]),  # type: ignore[arg-type]
    "parse_url(int)": lambda s: parse_url(5),  # type: ignore[arg-type]
    "rows(names=str)": lambda s: s.rows(names="abc"),
    "rows(names=int)": lambda s: s.rows(names=5),  # type: ignore[arg-type]
    "rows(names=[int])": lambda s: s.rows(names=[5]),  # type: ignore[list-item]
    "rows(operation=int)": lambda s: s.rows(operation=5),  # type: ignore[arg-type]
    "rows(status=list)": lambda s: s.rows(status=["passed"]),  # type: ignore[arg-type]
    "records(str)": lambda s: list(s.records("abc")),
    "records(int)": lambda s: list(s.records(5)),  # type: ignore[arg-type]
    "record_text(int)": lambda s: s.record_text(5),  # type: ignore[arg-type]
    "export(None)": lambda s: s.export(None),  # type: ignore[arg-type]
    "export(names=str)": lambda s: s.export(_out(s) + ".jsonl", names="abc"),
    "refuse_output(None)": lambda s: s.refuse_output(None),  # type: ignore[arg-type]
    "history(None)": lambda s: history(None),  # type: ignore[arg-type]
    "history(int)": lambda s: history(5),  # type: ignore[arg-type]
    "history([int])": lambda s: history([1]),  # type: ignore[list-item]
    "history(str)": lambda s: history("ab"),  # type: ignore[arg-type]
    "render_history(points=str)": lambda s: render_history([], points="3"),  # type: ignore[arg-type]
    "render_history(points=bool)": lambda s: render_history([], points=True),
    "render_history(int)": lambda s: render_history(5),  # type: ignore[arg-type]
    "build_site(out=int)": lambda s: build_site(5, s.url.target),  # type: ignore[arg-type]
    "build_site(out=None)": lambda s: build_site(None, s.url.target),  # type: ignore[arg-type]
    "build_site(db=int)": lambda s: build_site(_out(s), 5),  # type: ignore[arg-type]
    "build_site(bandwidths=int)": lambda s: build_site(_out(s), s.url.target, bandwidths=5),  # type: ignore[arg-type]
    "build_site(bandwidths=str value)": lambda s: build_site(
        _out(s),
        s.url.target,
        bandwidths={"NVIDIA H200": "y"},  # type: ignore[dict-item]
    ),
    "build_site(bandwidths=nan)": lambda s: build_site(
        _out(s), s.url.target, bandwidths={"NVIDIA H200": float("nan")}
    ),
    "build_site(bandwidths=0)": lambda s: build_site(
        _out(s), s.url.target, bandwidths={"NVIDIA H200": 0.0}
    ),
    "build_site(title=int)": lambda s: build_site(_out(s), s.url.target, title=5),  # type: ignore[arg-type]
    "build_site(main_branch=None)": lambda s: build_site(
        _out(s),
        s.url.target,
        main_branch=None,  # type: ignore[arg-type]
    ),
    "write_site(source=None)": lambda s: write_site(_out(s), None),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrong_types_raise_argument_error(store: Store, case: str) -> None:
    with pytest.raises(ArgumentError):
        CASES[case](store)
    assert not Path(_out(store)).exists()


def test_a_path_object_opens_a_store(store: Store) -> None:
    with open_store(Path(store.url.target), create=False) as again:
        assert len(again.rows()) == len(store.rows())


INGEST_CASES: dict[str, dict[str, Any]] = {
    "commit=int": {"commit": 5},
    "branch=list": {"branch": ["x"]},
    "commit_time=int": {"commit_time": 5},
    "verify_digests=str": {"verify_digests": "no"},
}


@pytest.mark.parametrize("case", sorted(INGEST_CASES))
def test_ingest_wrong_provenance_types_raise_argument_error(tmp_path: Path, case: str) -> None:
    # A wrong type is the caller's mistake: before, commit=5 refused every record as
    # invalid and commit_time=5 raised AttributeError.
    with open_store(str(tmp_path / "ki.sqlite3")) as s, pytest.raises(ArgumentError):
        s.ingest([FIXTURE], **INGEST_CASES[case])

"""Library entry points refuse text that UTF-8 cannot encode with an ArgumentError naming
the argument, never a UnicodeEncodeError from deep inside SQLite or a file writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import ArgumentError
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.site import build_site
from kernelindex_sdk.store import open_store

FIXTURE = Path(__file__).parent / "fixtures" / "h200-jsd-sweep.jsonl"
# Arguments class: what os.fsdecode and sys.argv make of bytes that are not UTF-8.
LONE_SURROGATE = "caf\udce9"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("store") / "ki.sqlite3"
    with open_store(str(path)) as store:
        store.ingest([FIXTURE])
    return str(path)


CALLS: dict[str, tuple[str, Callable[[str, Path], Any]]] = {
    "rows(branch)": ("branch", lambda db, _: open_store(db).rows(branch=LONE_SURROGATE)),
    "rows(operation)": ("operation", lambda db, _: open_store(db).rows(operation=LONE_SURROGATE)),
    "rows(names)": ("names", lambda db, _: open_store(db).rows(names=[LONE_SURROGATE])),
    "export(hardware)": (
        "hardware",
        lambda db, tmp: open_store(db).export(str(tmp / "o.jsonl"), hardware=LONE_SURROGATE),
    ),
    "build_site(title)": (
        "title",
        lambda db, tmp: build_site(tmp / "site", db, title=LONE_SURROGATE),
    ),
    "build_site(main_branch)": (
        "main_branch",
        lambda db, tmp: build_site(tmp / "site", db, main_branch=LONE_SURROGATE),
    ),
    "Provenance(branch)": ("branch", lambda db, _: Provenance(branch=LONE_SURROGATE)),
    "Provenance(commit)": ("commit", lambda db, _: Provenance(commit=LONE_SURROGATE)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_text_that_utf8_cannot_encode_is_an_argument_error(
    name: str, db: str, tmp_path: Path
) -> None:
    argument, call = CALLS[name]
    with pytest.raises(ArgumentError, match="expected UTF-8 text") as caught:
        call(db, tmp_path)
    assert argument in caught.value.argument
    assert not (tmp_path / "site").exists()

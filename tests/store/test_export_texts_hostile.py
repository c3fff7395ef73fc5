"""A run's stored text edited by hand: export writes a line's text as it is stored, so a
text that is not one JSON object on one line, or that is another run's record, would
have exported a record the store does not hold (two lines for one run, a run twice) with
exit 0. Each is one line naming the store and the run, exit 1, and the old file stays.
"""

# The damage is constant SQL of this module.
# ruff: noqa: S608

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _sql import mark, query

from kernelindex_sdk.store import open_store

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"
FIRST = "(SELECT min(seq) FROM runs)"

# name: (the statement, what the message says)
CASES: dict[str, tuple[str, str]] = {
    "another run's text": (
        f"UPDATE run_texts SET record_text = (SELECT record_text FROM run_texts"
        f" WHERE seq = {FIRST} + 1) WHERE seq = {FIRST}",
        "is not that run's record",
    ),
    "a text of two lines": (
        # A line break as both dialects write one in a literal.
        "UPDATE run_texts SET record_text = record_text || '\n' || record_text"
        f" WHERE seq = {FIRST}",
        "is not one JSON object on one line",
    ),
    "a text that is not an object": (
        f"UPDATE run_texts SET record_text = 'garbage' WHERE seq = {FIRST}",
        "is not one JSON object on one line",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_text_that_is_not_the_runs_record_is_refused(
    store_url: str, case: str, tmp_path: Path
) -> None:
    statement, message = CASES[case]
    with open_store(store_url) as store:
        assert store.ingest([SWEEP]).added == 64
        shown = store.url.shown
    query(store_url, statement)
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n", encoding="utf-8")
    status, _, err = run_in_process("export", "--db", store_url, "-o", str(out))
    assert status == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"kernelindex: {shown}: damaged store: run '"), err
    assert message in err, err
    assert out.read_text(encoding="utf-8") == "earlier\n"


def test_a_text_that_spells_its_name_with_escapes_is_still_exported(
    store_url: str, tmp_path: Path
) -> None:
    """The name is sought as text first; a text that spells it otherwise is parsed."""
    with open_store(store_url) as store:
        assert store.ingest([SWEEP]).added == 64
    query(
        store_url,
        "UPDATE run_texts SET record_text ="
        ' replace(record_text, \'"name":"kernelindex\', \'"name":"\\u006bernelindex\')',
    )
    out = tmp_path / "out.jsonl"
    status, _, err = run_in_process("export", "--db", store_url, "-o", str(out))
    assert (status, err) == (0, f"exported 64 record(s) to {out}\n")
    assert out.read_text(encoding="utf-8").count('"name":"\\u006bernelindex') >= 64


@pytest.mark.parametrize("ending", ["\r", "  ", "\t \r"], ids=["crlf", "blanks", "both"])
def test_a_line_with_json_whitespace_after_it_exports_as_it_came(
    store_url: str, tmp_path: Path, ending: str
) -> None:
    """Ingest keeps a line byte for byte, a CRLF file's \\r and trailing blanks included:
    JSON's whitespace, not damage. Export gives the same lines back."""
    lines = SWEEP.read_text(encoding="utf-8").splitlines()[:3]
    source = tmp_path / "in.jsonl"
    source.write_bytes("".join(f"{line}{ending}\n" for line in lines).encode("utf-8"))
    with open_store(store_url) as store:
        assert store.ingest([source]).added == 3
    out = tmp_path / "out.jsonl"
    status, _, err = run_in_process("export", "--db", store_url, "-o", str(out))
    assert (status, err) == (0, f"exported 3 record(s) to {out}\n")
    assert out.read_bytes() == source.read_bytes()


def test_another_runs_text_naming_this_run_in_a_label_is_still_refused(
    store_url: str, tmp_path: Path
) -> None:
    """The name is sought as a name member, not anywhere: a text that holds this run's
    name only as a label's value is another run's record."""
    with open_store(store_url) as store:
        assert store.ingest([SWEEP]).added == 64
    first = query(store_url, f"SELECT name FROM runs WHERE seq = {FIRST}")[0][0]
    other = query(store_url, f"SELECT record_text FROM run_texts WHERE seq = {FIRST} + 1")[0][0]
    forged = other.replace('"metadata":{', f'"metadata":{{"labels":{{"x":"{first}"}},', 1)
    assert forged != other
    update = f"UPDATE run_texts SET record_text = {mark(store_url)} WHERE seq = {FIRST}"
    query(store_url, update, (forged,))
    status, _, err = run_in_process("export", "--db", store_url, "-o", str(tmp_path / "o.jsonl"))
    assert status == 1, err
    assert "is not that run's record" in err, err

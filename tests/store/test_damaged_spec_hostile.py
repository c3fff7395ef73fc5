"""An object's spec edited by hand into JSON of another shape (a list, a string, an object
without the keys the run schema requires, parameters that are not an object): every
command that reads specs says so in one line naming the store (exit 1), never a
traceback (it was an AttributeError in history and site, a KeyError in
``compare --history``).
"""

# The damage is constant SQL of this module.
# ruff: noqa: S608

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _sql import query

from kernelindex_sdk.store import StoreDamagedError, open_store

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"

# name: (table, the spec written (JSON text), what the message says)
CASES: dict[str, tuple[str, str, str]] = {
    "a workload spec that is a list": ("workloads", "[1]", "is list JSON, expected an object"),
    # psycopg gives a jsonb string as the str itself: "not JSON" there, "str JSON" here.
    "a workload spec that is text": ("workloads", '"jsd"', "JSON"),
    "a workload spec without its operation": ("workloads", "{}", "has 'operation' None"),
    "a workload spec whose parameters are a list": (
        "workloads",
        '{"operation": "jsd", "pass": "forward", "parameters": [1]}',
        "has 'parameters' [1], expected an object",
    ),
    "a workload spec whose bytes moved are text": (
        "workloads",
        '{"operation": "jsd", "pass": "forward", "parameters": {}, "bytesMoved": "1"}',
        "has 'bytesMoved' '1', expected an integer",
    ),
    "an environment spec that is a list": ("environments", "[1]", "is list JSON"),
}


def _renamed(out: Path) -> Path:
    """The sweep under new names, so that ``compare --history`` reads the stored series."""
    lines = []
    for line in SWEEP.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["run"]["metadata"]["name"] += "-new"
        lines.append(json.dumps(record))
    path = out / "new.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", CASES)
def test_a_spec_of_another_shape_is_one_line_and_exit_1(
    store_url: str, case: str, tmp_path: Path
) -> None:
    table, spec, message = CASES[case]
    with open_store(store_url) as store:
        assert store.ingest([SWEEP], commit="c1", branch="main").ok
        shown = store.url.shown
        digest = store.rows()[0].environment_digest
    query(store_url, f"UPDATE {table} SET spec = '{spec}'")
    commands = {
        "history": ["history", "--db", store_url],
        "site": ["site", "--db", store_url, str(tmp_path / "site")],
        "compare": ["compare", "--history", "main", str(_renamed(tmp_path)), "--db", store_url],
    }
    for name, command in commands.items():
        status, _, err = run_in_process(*command)
        if table != "workloads" and status == 0:
            continue  # a command that does not read environment specs
        assert (status, name) == (1, name), err
        assert err.count("\n") == 1, err
        assert err.startswith(f"kernelindex: {shown}: damaged store: {table}.spec of "), err
        assert message in err, err
    if table == "environments":
        with open_store(store_url, create=False) as store, pytest.raises(StoreDamagedError):
            store.spec("environment", digest)

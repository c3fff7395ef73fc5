"""The store's tables: a public, versioned contract (docs/store.md describes each column).

What both dialects share: the layout version, the tables and their columns' order, and
the values computed in Python for them (a run group's key, a run's degraded mark and
sample count). Each
backend writes its own statements (``_sqlite_layout``, ``_postgres_layout``): the tables
of this version, and the steps that migrate an older store to it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

from ..conditions import degraded_reason
from ._extract import GROUP_COLUMNS, RUN_COLUMNS, canonical, samples_of

__all__ = [
    "GROUP_COLUMNS",
    "LAYOUT_VERSION",
    "OBJECT_COLUMNS",
    "OBJECT_TABLES",
    "RUN_INSERT_COLUMNS",
    "TABLES",
    "group_key",
    "marks_of_text",
]

#: The layout version this package reads and writes.
LAYOUT_VERSION: Final = 4

#: The object tables by kind, as :meth:`Store.spec` names them.
OBJECT_TABLES: Final = {
    "workload": "workloads",
    "implementation": "implementations",
    "protocol": "protocols",
    "environment": "environments",
}
#: Each object table's columns, in the order ingest gives a row: the digest, the columns
#: taken from the spec (or the document's name), the spec as JSON text.
OBJECT_COLUMNS: Final = {
    "workload": ("digest", "operation", "pass", "spec"),
    "implementation": ("digest", "provider", "entry_point", "spec"),
    "protocol": ("digest", "name", "spec"),
    "environment": ("digest", "name", "hardware", "spec"),
}
#: Every table of the layout, the version table first.
TABLES: Final = (
    "kernelindex_layout",
    *OBJECT_TABLES.values(),
    "documents",
    "run_groups",
    "runs",
    "run_texts",
)
#: The columns of a run's row as ingest inserts it: its values (:data:`RUN_COLUMNS`),
#: then its group's id.
RUN_INSERT_COLUMNS: Final = (*RUN_COLUMNS, "group_id")

# Why the layout is what it is (docs/store.md has the contract):
# - No secondary index: three (series digests, branch, commit) took 40% of a run's insert
#   time in SQLite (17 of 41 us per Liger bundle, measured), and the queries of a history
#   read whole series anyway. An index a team adds does not change the layout.
# - Version 2 keeps each run's record text in run_texts, beside its run: a history reads
#   every run's columns, and with the texts (a few KiB each) in runs that scan read them
#   all (10,000 runs: 31 ms of fetching, against a few without).
# - Version 3 names, in runs.group_id, the row of run_groups that holds the run's status,
#   branch, four digests and labels (which runs share in long stretches): a history reads
#   a run's own columns and that integer, and each group once. Python's sqlite3 costs
#   about 1,300 instructions per value read, so 8 values a run instead of 14 halve the
#   read (benchmarks/results/history_fetch_variants.json). runs keeps those columns too:
#   SQL written against layout 2 reads them as it did.
# - Version 4 adds runs.degraded: why the GPU's state during the run's timing makes it
#   unfit to compare (kernelindex_sdk.conditions.degraded_reason), NULL when fit, so that
#   history and the dashboard read it as a column, never parsing a record; and
#   runs.samples: how many samples the run's timing took (timing.samples), NULL without,
#   for the verdict's bound on a run's own spread. Both came in one unreleased version:
#   no store of layout 4 was written without runs.samples, so 3 to 4 is the one step.


def group_key(values: Sequence[Any], labels: Any) -> str:
    """``run_groups.key``: the SHA-256 of a group's values as one JSON text, equal for
    equal values.

    The text: a compact JSON array of the :data:`GROUP_COLUMNS` in their order, ``labels``
    as an object with its keys sorted (the same labels in another order are one group),
    non-ASCII characters as they are. The key is ``"sha256:"`` and the hex SHA-256 of the
    text's UTF-8.

    Args:
        values: The group's status, branch and four digests, in that order.
        labels: The run's labels as a JSON value (a mapping), not as text.

    Returns:
        The key, 71 characters whatever the values.
    """
    # A digest, not the text: PostgreSQL's unique btree index takes at most 2704 bytes
    # an entry, and a run's branch and each label value may be 4096 characters.
    text = canonical([*values, labels])
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def marks_of_text(text: str) -> tuple[str | None, int | None]:
    """``runs.degraded`` and ``runs.samples`` of a stored run, from its record's text (a
    bundle or a run), as ingest computes them.

    Raises:
        ValueError: when the text is not JSON (a damaged store; the caller says where).
    """
    value = json.loads(text)
    run = value.get("run", value) if isinstance(value, dict) else None
    spec = run.get("spec") if isinstance(run, dict) else None
    if not isinstance(spec, dict):
        return None, None
    degraded = degraded_reason(spec) if "conditions" in spec else None
    return degraded, samples_of(spec)

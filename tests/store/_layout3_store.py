"""A layout-3 store (kernelindex-sdk 0.6.1's) and a snapshot of a store to compare.

A store of this version taken back to layout 3: ``runs.degraded`` and ``runs.samples``
dropped (the columns layout 4 added) and the version record set to 3, which is what 0.6.1
makes from the same records.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from _sql import query

from kernelindex_sdk.store import open_store, parse_url

#: Every table of layout 3 (those of a store, in no particular order).
TABLES = (
    "kernelindex_layout",
    "workloads",
    "implementations",
    "protocols",
    "environments",
    "documents",
    "run_groups",
    "runs",
    "run_texts",
)


def layout3_store(url: str, files: list[Path], **provenance: str) -> None:
    """Fill a store at ``url`` with ``files``, then take it back to layout 3."""
    with open_store(url) as store:
        assert store.ingest(files, **provenance).ok
    query(url, "ALTER TABLE runs DROP COLUMN degraded")
    query(url, "ALTER TABLE runs DROP COLUMN samples")
    query(url, "UPDATE kernelindex_layout SET value = '3' WHERE key = 'layout_version'")


def snapshot(url: str) -> Any:
    """What a store holds: a SQLite file's bytes and modification time (its companion
    files apart), or every PostgreSQL table's columns and rows."""
    parsed = parse_url(url)
    if parsed.dialect == "sqlite":
        path = parsed.target
        data = Path(path).read_bytes()
        return hashlib.sha256(data).hexdigest(), os.stat(path).st_mtime_ns
    found = {}
    for (table,) in query(
        url,
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() ORDER BY 1",
    ):
        columns = query(
            url,
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table,),
        )
        rows = query(url, f"SELECT * FROM {table} ORDER BY 1")  # noqa: S608 (the schema's own)
        found[table] = (columns, sorted(map(repr, rows)))
    return found

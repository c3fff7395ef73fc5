"""The records store: SQLite (standard library) by default, PostgreSQL with ``[postgres]``.

Ingest, export, queries, series and change points. The layout of its tables is a
public, versioned contract (docs/store.md).
"""

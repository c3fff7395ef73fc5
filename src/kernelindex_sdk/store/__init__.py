"""The records store: SQLite (standard library) by default, PostgreSQL with ``[postgres]``.

Ingest validated records, query their runs, read their texts back, export them. The
layout of its tables is a public, versioned contract (docs/store.md). A store opened for
reading is never changed; only a writer (ingest, :func:`migrate_store`) creates or
migrates one.

Which store: :func:`open_store`'s URL, else the environment variable ``KERNELINDEX_DB``,
else :data:`DEFAULT_DB`, the SQLite file ``kernelindex.sqlite3`` in the current directory.
"""

from ..errors import StoreClashError, StoreDamagedError, StoreError, StoreLayoutError
from ._layout import LAYOUT_VERSION
from ._report import IngestReport
from ._rows import RunRow
from ._store import NotInStoreError, Store, migrate_store, open_store
from ._url import DEFAULT_DB, ENV_VAR, StoreURL, masked_url, parse_url

__all__ = [
    "DEFAULT_DB",
    "ENV_VAR",
    "LAYOUT_VERSION",
    "IngestReport",
    "NotInStoreError",
    "RunRow",
    "Store",
    "StoreClashError",
    "StoreDamagedError",
    "StoreError",
    "StoreLayoutError",
    "StoreURL",
    "masked_url",
    "migrate_store",
    "open_store",
    "parse_url",
]

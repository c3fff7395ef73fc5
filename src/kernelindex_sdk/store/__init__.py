"""The records store: SQLite (standard library) by default, PostgreSQL with ``[postgres]``.

Ingest validated records, query their runs, read their texts back, export them. The
layout of its tables is a public, versioned contract (docs/store.md).

Which store: :func:`open_store`'s URL, else the environment variable ``KERNELINDEX_DB``,
else :data:`DEFAULT_DB`, the SQLite file ``kernelindex.sqlite3`` in the current directory.
"""

from ..errors import StoreClashError, StoreError, StoreLayoutError
from ._layout import LAYOUT_VERSION
from ._report import IngestReport
from ._rows import RunRow
from ._store import NotInStoreError, Store, open_store
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
    "StoreError",
    "StoreLayoutError",
    "StoreURL",
    "masked_url",
    "open_store",
    "parse_url",
]

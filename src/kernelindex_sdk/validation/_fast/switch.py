"""The switch that turns every fast path of reading off: ``KERNELINDEX_STRICT_READ=1``."""

from __future__ import annotations

import os
from typing import Final

__all__ = ["STRICT_READ", "enabled"]

#: The environment variable that, set to ``1``, sends every record down the plain path.
STRICT_READ: Final = "KERNELINDEX_STRICT_READ"


def enabled() -> bool:
    """Whether the fast paths may be taken (read from the environment at each call, so
    that a process, or a test, can turn them off at any time)."""
    return os.environ.get(STRICT_READ) != "1"

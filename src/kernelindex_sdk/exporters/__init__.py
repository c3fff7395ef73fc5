"""Records into the formats other dashboards read: lossy by nature, each says what it loses.

- ``bmf``: Bencher Metric Format, for ``bencher run --file`` (:mod:`.bmf`).
- ``github-action-benchmark``: github-action-benchmark's ``customSmallerIsBetter`` JSON,
  for its charts on GitHub Pages (:mod:`.github_action_benchmark`).

Each is a function from records (JSON values, one at a time, as the store exports them
or a records file holds them) to text in pieces, so no export holds the whole output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from ..errors import ArgumentError
from .bmf import bmf_chunks
from .github_action_benchmark import github_action_benchmark_chunks

__all__ = ["FORMATS", "export_chunks"]

_WRITERS: Final = {
    "bmf": bmf_chunks,
    "github-action-benchmark": github_action_benchmark_chunks,
}
#: The formats :func:`export_chunks` writes.
FORMATS: Final = tuple(_WRITERS)


def export_chunks(
    records: Iterable[Any],
    format: str,
    *,
    on_notice: Callable[[str], None] | None = None,
) -> Iterator[str]:
    """The text of ``records`` in ``format``, in pieces.

    Args:
        records: Record bundles or single documents, as JSON values.
        format: One of :data:`FORMATS`.
        on_notice: Hears of each run a format cannot hold (one line each).

    Raises:
        ArgumentError: for an unknown format.
    """
    if format not in _WRITERS:
        raise ArgumentError(
            argument="format", reason=f"expected one of {', '.join(FORMATS)}, got {format!r}"
        )
    return _WRITERS[format](records, on_notice=on_notice)

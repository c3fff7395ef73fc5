"""Google Benchmark's run names split back into their parts.

``BenchmarkName::str()`` joins, with ``/``, the function name, the arguments, and the
options a benchmark was registered with: ``min_time:X``, ``min_warmup_time:X``,
``iterations:N``, ``repeats:N``, the time type (``process_time``, ``real_time``,
``manual_time``) and ``threads:N``, in that order, each only when set. An argument is an
integer, or ``name:integer`` under ``ArgNames``. The function name may itself hold
``/`` (``BENCHMARK_CAPTURE`` adds ``/case``), so parsing goes from the end: options
first, then the integers, and what is left is the family.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

__all__ = ["RunName", "parse_run_name"]

_OPTIONS: Final = (
    ("threads", re.compile(r"threads:([0-9]+)\Z")),
    ("time_type", re.compile(r"(process_time|real_time|manual_time)\Z")),
    ("repeats", re.compile(r"repeats:([0-9]+)\Z")),
    ("iterations", re.compile(r"iterations:([0-9]+)\Z")),
    ("min_warmup_time", re.compile(r"min_warmup_time:([0-9]+(?:\.[0-9]+)?)\Z")),
    ("min_time", re.compile(r"min_time:([0-9]+(?:\.[0-9]+)?)\Z")),
)
_ARG: Final = re.compile(r"(?:([^/:]+):)?(-?[0-9]+)\Z")
_SAFE: Final = 2**53 - 1


@attrs.frozen
class RunName:
    """A run name's parts.

    Attributes:
        family: The function name (with a capture's ``/case``, a template's ``<T>``).
        args: ``(name, value)`` per argument; name is None for a positional one.
        options: ``min_time``, ``iterations``... as the name writes them.
        time_types: ``process_time``, ``real_time``, ``manual_time`` as present.
    """

    family: str
    args: tuple[tuple[str | None, int], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    time_types: tuple[str, ...] = ()


def parse_run_name(text: str) -> RunName:
    """Split a run name (``BM_fill/rows:8/cols:64/min_time:0.010/repeats:3``)."""
    parts = text.split("/")
    options: list[tuple[str, str]] = []
    time_types: list[str] = []
    for key, pattern in _OPTIONS:
        while len(parts) > 1 and (found := pattern.match(parts[-1])):
            parts.pop()
            if key == "time_type":
                time_types.insert(0, found.group(1))
            else:
                options.insert(0, (key, found.group(1)))
                break
    args: list[tuple[str | None, int]] = []
    while len(parts) > 1 and (found := _ARG.match(parts[-1])) and abs(int(found.group(2))) <= _SAFE:
        parts.pop()
        args.insert(0, (found.group(1), int(found.group(2))))
    return RunName(
        family="/".join(parts),
        args=tuple(args),
        options=tuple(sorted(options)),
        time_types=tuple(time_types),
    )

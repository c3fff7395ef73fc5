"""Worker callables for tests/reference_kernels/test_workers.py, importable by spawned processes.

Each point is ``(behaviour, number)``; every record is the example bundle renamed
``point-<number>`` and annotated with the device it ran on and what the pinning set.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "liger-jsd-forward-torch-b200.json"
PINNED = "KERNELINDEX_TEST_PINNED"
MARK = "KERNELINDEX_TEST_MARK"


def record(number: int, *, device: str = "", pinned: str = "") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["run"]["metadata"]["name"] = f"point-{number}"
    doc["run"]["metadata"]["annotations"] = {
        "test.kernelindex.dev/device": device,
        "test.kernelindex.dev/pinned": pinned,
        "test.kernelindex.dev/pid": str(os.getpid()),
    }
    return doc


def fake_worker(points: Sequence[tuple[str, int]], device: str) -> Iterator[dict[str, Any]]:
    """ok: one record; die: the process exits at once; raise: an exception; hang: sleeps.

    mark-hang: creates the file named by $KERNELINDEX_TEST_MARK (every record of the
    earlier points is in the pipe by then), then sleeps.
    """
    for behaviour, number in points:
        if behaviour == "die":
            os._exit(3)
        if behaviour == "raise":
            raise RuntimeError(f"cannot run point {number}")
        if behaviour == "mark-hang":
            Path(os.environ[MARK]).touch()
        if behaviour in ("hang", "mark-hang"):
            time.sleep(600)
        if behaviour == "bad":
            broken = record(number, device=device)
            broken["run"]["spec"]["timing"]["latencyNs"]["median"] = -1
            yield broken
            continue
        yield record(number, device=device, pinned=os.environ.get(PINNED, ""))

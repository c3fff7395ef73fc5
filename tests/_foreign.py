"""Helpers for the foreign-format importers' tests: fixtures, imports to files and reading
the records back."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelindex_sdk.documents import validate_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def records(path: Path) -> list[dict[str, Any]]:
    """The bundles of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def runs(path: Path) -> list[dict[str, Any]]:
    """The runs of a JSON Lines file of bundles."""
    return [bundle["run"] for bundle in records(path)]


def import_into(
    import_files: Callable[..., Any], sources: list[Path], out: Path, **options: Any
) -> tuple[Any, list[str]]:
    """Import ``sources`` into ``out``; the summary and the per-entry errors' text."""
    errors: list[str] = []
    summary = import_files(sources, out, on_error=lambda e: errors.append(str(e)), **options)
    return summary, errors


def valid_with_digests(path: Path) -> list[str]:
    """Every problem ``kernelindex validate --verify-digests`` finds in the file."""
    return [str(p) for p in validate_paths([path], verify_digests=True)]


def copy_with_mtime(source: Path, target: Path, seconds: float) -> Path:
    """A copy of ``source`` at ``target`` whose modification time is ``seconds``."""
    target.write_bytes(source.read_bytes())
    os.utime(target, (seconds, seconds))
    return target


def metrics(run: dict[str, Any]) -> dict[str, Any]:
    """A run's ``sourceNative.metrics``."""
    return run["spec"]["sourceNative"]["metrics"]  # type: ignore[no-any-return]


def measurement(run: dict[str, Any], metric: str, statistic: str) -> dict[str, Any]:
    """The run's one measurement of ``metric`` and ``statistic``."""
    (found,) = [
        m
        for m in run["spec"].get("measurements", ())
        if m["metric"] == metric and m["statistic"] == statistic
    ]
    return found

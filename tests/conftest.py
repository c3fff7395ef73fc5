"""Shared fixtures: the fixture documents and a GPU marker that skips without CUDA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import RunCli, run_in_process

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"


@pytest.fixture
def example_text() -> str:
    """The published example bundle (copied from shared/examples), as text."""
    return EXAMPLE.read_text(encoding="utf-8")


@pytest.fixture
def example(example_text: str) -> dict[str, Any]:
    """The published example bundle, parsed."""
    return json.loads(example_text)  # type: ignore[no-any-return]


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The marker, not item.keywords: keywords hold every parent's name too, so a checkout
    # in a folder named "gpu" would skip every test.
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    # Importing torch is slow: only look for CUDA when a GPU test was collected.
    if not gpu_items or _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def run_cli() -> RunCli:
    """Run the CLI in-process: ``run_cli("compare", a, b)`` -> (status, stdout, stderr)."""
    return run_in_process

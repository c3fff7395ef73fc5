"""Points timed with different semantics (CUDA graph or not, L2 flushed or not) are never
compared: each semantics is a field of the protocol, so its digest differs, and compare
pairs only runs of one protocol digest."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import digest
from kernelindex_sdk.compare import compare

torch = pytest.importorskip("torch", reason="the [bench] extra (torch, Triton) is not installed")

from kernelindex_sdk.reference_kernels import harness  # noqa: E402


@pytest.fixture
def protocols(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """The harness's protocols on a GPU, and the events timer with its flush left out."""

    class Props:
        L2_cache_size = 60 * 2**20

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Props())
    gpu = torch.device("cuda", 0)
    events = harness.protocol_spec(gpu, timer="cuda-events")
    unflushed = copy.deepcopy(events)
    unflushed["measurement"]["l2Flush"] = {"policy": "none"}
    return {
        "cuda-events, L2 flushed": events,
        "cuda-events, L2 not flushed": unflushed,
        "cuda-graph, L2 not flushed": harness.protocol_spec(gpu, timer="cuda-graph"),
        "wall clock": harness.protocol_spec(torch.device("cpu")),
    }


def test_each_timer_semantics_has_its_own_protocol_digest(
    protocols: dict[str, dict[str, Any]],
) -> None:
    digests = {name: digest.protocol_digest(spec) for name, spec in protocols.items()}
    assert len(set(digests.values())) == len(digests)


@pytest.mark.parametrize(
    ("field", "value"),
    [("timer", "cuda_graph"), ("l2Flush", {"policy": "none"})],
    ids=["timer-only", "flush-only"],
)
def test_one_semantic_field_alone_changes_the_digest(
    protocols: dict[str, dict[str, Any]], field: str, value: Any
) -> None:
    """Any producer's protocol, not only the harness's: the field alone moves the digest."""
    events = protocols["cuda-events, L2 flushed"]
    changed = copy.deepcopy(events)
    changed["measurement"][field] = value
    assert digest.protocol_digest(changed) != digest.protocol_digest(events)


def _timed_with(protocol: dict[str, Any], median: int) -> dict[str, Any]:
    record = bundle(median=median)
    record["protocol"]["spec"] = protocol
    record["run"]["spec"]["protocolDigest"] = digest.protocol_digest(protocol)
    return record


def test_compare_never_pairs_points_of_different_timer_semantics(
    protocols: dict[str, dict[str, Any]],
) -> None:
    for (a, pa), (b, pb) in itertools.permutations(protocols.items(), 2):
        result = compare([_timed_with(pa, 100_000)], [_timed_with(pb, 60_000)])
        assert result.pairs == [], (a, b)
        assert len(result.unpaired) == 2, (a, b)
    same = protocols["cuda-graph, L2 not flushed"]
    paired = compare([_timed_with(same, 100_000)], [_timed_with(same, 60_000)])
    assert len(paired.pairs) == 1

"""Digests: RFC 8785 canonical bytes, the preimage shape, and locked values."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from _hostile_values import deep, self_containing
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelindex_sdk as ki
from kernelindex_sdk import digest
from kernelindex_sdk._json import value as _jsonvalue
from kernelindex_sdk.errors import CanonicalizationError

VECTORS = json.loads((Path(__file__).parent / "vectors" / "digests.json").read_text("utf-8"))


def test_there_are_at_least_twenty_vectors() -> None:
    assert len(VECTORS) >= 20


@pytest.mark.parametrize("vector", VECTORS, ids=[v["description"] for v in VECTORS])
def test_golden_vector(vector: dict[str, Any]) -> None:
    data = digest.canonical_bytes(digest.preimage(vector["kind"], vector["spec"]))
    assert data.hex() == vector["canonicalHex"]
    assert digest.digest(vector["kind"], vector["spec"]) == vector["digest"]
    assert (
        vector["digest"]
        == "sha256:" + hashlib.sha256(bytes.fromhex(vector["canonicalHex"])).hexdigest()
    )


def _vector(description: str) -> dict[str, Any]:
    return next(v for v in VECTORS if v["description"].startswith(description))


def test_nfc_and_nfd_are_different_digests() -> None:
    """Neither RFC 8785 nor we normalize Unicode: different code points, different digest."""
    assert _vector("NFC")["digest"] != _vector("NFD")["digest"]


def test_one_and_one_point_zero_are_the_same_digest() -> None:
    assert _vector("1.0 is 1")["digest"] == _vector("1 and 1.0")["digest"]


def test_preimage_has_the_design_shape() -> None:
    assert digest.preimage("Workload", {"a": 1}) == {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "Workload",
        "spec": {"a": 1},
    }


def test_digest_format() -> None:
    value = digest.workload_digest({"operation": "jsd"})
    assert value.startswith("sha256:")
    assert len(value) == 71
    assert value[7:] == value[7:].lower()


def test_helpers_use_their_kind() -> None:
    spec = {"x": 1}
    assert digest.protocol_digest(spec) == digest.digest("BenchmarkProtocol", spec)
    assert digest.environment_digest(spec) == digest.digest("ExecutionEnvironment", spec)
    assert digest.workload_digest(spec) == digest.digest("Workload", spec)
    assert digest.implementation_digest(spec) == digest.digest("Implementation", spec)


def test_published_protocol_and_environment_digests_are_reproduced(example: dict[str, Any]) -> None:
    """The digest lock: the published example's two recomputable digests."""
    spec = example["run"]["spec"]
    assert digest.protocol_digest(example["protocol"]["spec"]) == spec["protocolDigest"]
    assert digest.environment_digest(example["environment"]["spec"]) == spec["environmentDigest"]


def test_metadata_never_enters_a_digest(example: dict[str, Any]) -> None:
    before = ki.validation.compare_digests(example)
    example["protocol"]["metadata"] = {"name": "renamed", "labels": {"a": "b"}}
    example["environment"]["metadata"]["title"] = "Another title"
    assert ki.validation.compare_digests(example) == before


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (float("nan"), "not a JSON number"),
        (float("inf"), "not a JSON number"),
        (2**53, "beyond 2\\^53 - 1"),
        (-(2**53), "beyond 2\\^53 - 1"),
        ("\ud800", "lone surrogate"),
        ({"\udc00": 1}, "lone surrogate"),
        ({1: 1}, "expected string keys"),
        (self_containing(), "contains itself"),
        (deep(100_000), "nested deeper than 128"),
        (object(), "expected a JSON value"),
    ],
    ids=[
        "nan",
        "inf",
        "2^53",
        "-2^53",
        "surrogate",
        "surrogate-key",
        "int-key",
        "cycle",
        "deep",
        "object",
    ],
)
@pytest.mark.parametrize(
    "helper",
    [
        digest.canonical_bytes,
        lambda v: digest.digest("Workload", v),
        digest.workload_digest,
        digest.implementation_digest,
        digest.protocol_digest,
        digest.environment_digest,
    ],
    ids=["canonical_bytes", "digest", "workload", "implementation", "protocol", "environment"],
)
def test_values_json_cannot_carry_exactly_are_refused(
    helper: Callable[[Any], Any], value: Any, reason: str
) -> None:
    with pytest.raises(CanonicalizationError, match=reason) as caught:
        helper({"v": value})
    assert isinstance(caught.value, ki.KernelIndexError)
    # Callers that caught rfc8785's error keep catching it.
    assert isinstance(caught.value, rfc8785.CanonicalizationError)
    # The pointer leads to the value, inside the preimage {apiVersion, kind, spec}.
    assert "/v" in caught.value.pointer


def test_safe_int_is_two_to_the_53_minus_one() -> None:
    assert digest.SAFE_INT == 2**53 - 1 == 9007199254740991
    assert digest.canonical_bytes(digest.SAFE_INT) == b"9007199254740991"


def test_helpers_accept_models_and_json_alike(example: dict[str, Any]) -> None:
    bundle = ki.load_record(example)
    run = bundle.run
    assert bundle.protocol is not None
    assert bundle.environment is not None
    assert digest.protocol_digest(bundle.protocol.spec) == run.spec.protocol_digest
    assert digest.environment_digest(bundle.environment.spec) == run.spec.environment_digest
    workload = {"operation": "jsd", "pass": "forward", "parameters": {"tokens": 1024}}
    run_doc = example["run"]
    run_doc["spec"]["workload"] = workload
    run_doc["spec"]["implementation"] = {"provider": "torch"}
    run_doc["spec"]["workloadDigest"] = digest.workload_digest(workload)
    run_doc["spec"]["implementationDigest"] = digest.implementation_digest({"provider": "torch"})
    model = ki.load_run(run_doc)
    assert model.spec.workload is not None
    assert model.spec.implementation is not None
    assert digest.workload_digest(model.spec.workload) == run_doc["spec"]["workloadDigest"]
    assert (
        digest.implementation_digest(model.spec.implementation)
        == (run_doc["spec"]["implementationDigest"])
    )
    assert digest.canonical_bytes(model.spec.workload) == digest.canonical_bytes(workload)


def test_a_whole_document_stands_for_its_spec(example: dict[str, Any]) -> None:
    """Passing the document instead of its spec must not give a different, wrong digest."""
    bundle = ki.load_record(example)
    assert bundle.protocol is not None
    assert bundle.environment is not None
    declared = example["run"]["spec"]
    assert digest.protocol_digest(example["protocol"]) == declared["protocolDigest"]
    assert digest.protocol_digest(bundle.protocol) == declared["protocolDigest"]
    assert digest.environment_digest(bundle.environment) == declared["environmentDigest"]


def test_schema_key_never_enters_a_digest(example: dict[str, Any]) -> None:
    before = digest.protocol_digest(example["protocol"])
    example["protocol"]["$schema"] = (
        "https://kernelindex.dev/schemas/v1alpha1/benchmark-protocol.json"
    )
    assert digest.protocol_digest(example["protocol"]) == before
    assert not ki.validate(example, verify_digests=True)


# Floats stay below 2^53: rfc8785 writes 2.0**53 as the integer 9007199254740992, which it
# then refuses to canonicalize again as a Python int (the schemas keep such values out).
SAFE_FLOATS = st.floats(
    allow_nan=False, allow_infinity=False, min_value=-(2.0**53) + 1, max_value=2.0**53 - 1
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | SAFE_FLOATS | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_canonical_form_is_stable_under_key_order_and_reparsing(value: Any) -> None:
    data = digest.canonical_bytes(value)
    assert digest.canonical_bytes(json.loads(data)) == data
    if isinstance(value, dict):
        assert digest.canonical_bytes(dict(reversed(list(value.items())))) == data


KEYS = st.text(alphabet=st.characters(codec="utf-8"), max_size=4) | st.sampled_from(
    ["\U0001f600", "\ufb33", "\ue000", "a", "\u0080"]
)
ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | SAFE_FLOATS
    | st.text(alphabet=st.characters(codec="utf-8")),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)


@settings(max_examples=1000, deadline=None)
@given(ANY_JSON)
def test_fast_path_equals_rfc8785_or_both_refuse(value: Any) -> None:
    """The stdlib fast path may only ever produce rfc8785's own bytes."""
    try:
        expected: bytes | None = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        expected = None
    if expected is None:
        with pytest.raises(CanonicalizationError):
            digest.canonical_bytes(value)
    else:
        assert digest.canonical_bytes(value) == expected


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=())),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet=st.characters(exclude_categories=())), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, for_digest=st.booleans())
def test_the_quick_json_check_agrees_with_the_detailed_walk(value: Any, for_digest: bool) -> None:
    """The pointer-free first pass answers only where the detailed walk gives the same answer."""
    quick = _jsonvalue._quick_check(value, for_digest)
    if quick is None:
        return
    assert quick == _detailed(value, for_digest)


def _detailed(value: Any, for_digest: bool) -> bool:
    saved = _jsonvalue._quick_check
    _jsonvalue._quick_check = lambda *_: None  # type: ignore[assignment]
    try:
        return _jsonvalue.check_json_value(value, digest=for_digest)
    finally:
        _jsonvalue._quick_check = saved  # type: ignore[assignment]

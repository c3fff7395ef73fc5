"""Every public function, given arguments of the wrong type, raises a KernelIndexError
(ArgumentError for the most part), never an AttributeError or TypeError from inside."""

from __future__ import annotations

import importlib
import inspect
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

import kernelindex_sdk as ki
from kernelindex_sdk import digest, models
from kernelindex_sdk.compare import compare, load_runs
from kernelindex_sdk.errors import ArgumentError, KernelIndexError

EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"
MODULES = (
    "kernelindex_sdk",
    "kernelindex_sdk.compare",
    "kernelindex_sdk.report",
    "kernelindex_sdk.merge",
    "kernelindex_sdk.documents",
    "kernelindex_sdk.digest",
    "kernelindex_sdk.convert",
    "kernelindex_sdk.validation",
)
WRONG: tuple[Any, ...] = (
    None,
    5,
    1.5,
    True,
    "r.jsonl",
    b"x",
    object(),
    {1, 2},
    [None],
    {"a": None},
    io.StringIO(),
)


def _public_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen: set[Any] = set()
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            fn = getattr(module, attr)
            if inspect.isfunction(fn) and fn not in seen:
                seen.add(fn)
                yield f"{name}.{attr}", fn


FUNCTIONS = dict(_public_functions())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_wrong_typed_arguments_raise_kernelindex_errors(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some arguments are valid paths ("r.jsonl"): whatever a call writes lands here.
    monkeypatch.chdir(tmp_path)
    fn = FUNCTIONS[name]
    required = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    for wrong in WRONG:
        _call(fn, [wrong] * len(required))


def _call(fn: Callable[..., Any], args: list[Any]) -> None:
    """Call ``fn``: a result or a KernelIndexError passes; anything else fails the test."""
    try:
        result = fn(*args)
        if inspect.isgenerator(result):
            list(result)
    except KernelIndexError:
        pass


def test_the_walk_covers_the_entry_points() -> None:
    for name in (
        "kernelindex_sdk.compare.load_runs",
        "kernelindex_sdk.compare.compare",
        "kernelindex_sdk.compare.render",
        "kernelindex_sdk.report.families",
        "kernelindex_sdk.merge.merge_paths",
        "kernelindex_sdk.documents.validate_paths",
        "kernelindex_sdk.validate",
        "kernelindex_sdk.dumps",
        "kernelindex_sdk.digest.workload_digest",
    ):
        assert name in FUNCTIONS


def test_a_str_is_not_a_list_of_paths() -> None:
    with pytest.raises(ArgumentError, match=r"expected a list of paths, got a str 'r\.jsonl'"):
        load_runs("r.jsonl")  # type: ignore[arg-type]


def test_one_record_is_not_a_list_of_records() -> None:
    record = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    with pytest.raises(ArgumentError, match="expected an iterable of records"):
        compare(record, [record])  # type: ignore[arg-type]


def _example() -> Any:
    return ki.load_record(EXAMPLE.read_text(encoding="utf-8"))


def _measurements_as_set() -> Any:
    record = _example()
    spec = attrs.evolve(record.run.spec, measurements=set(record.run.spec.measurements))
    return attrs.evolve(record, run=attrs.evolve(record.run, spec=spec))


MISUSE: dict[str, Callable[[], Any]] = {
    "validate-workload-parameters-none": lambda: ki.validate(
        models.Workload(operation="jsd", pass_="forward", parameters=None)  # type: ignore[arg-type]
    ),
    "workload-digest-parameters-none": lambda: digest.workload_digest(
        models.Workload(operation="jsd", pass_="forward", parameters=None)  # type: ignore[arg-type]
    ),
    "dumps-bundle-run-none": lambda: ki.dumps(models.RecordBundle(run=None)),  # type: ignore[arg-type]
    "dumps-measurements-set": lambda: ki.dumps(_measurements_as_set()),
    "validate-measurements-set": lambda: ki.validate(_measurements_as_set()),
    "compare-threshold-str": lambda: compare([], [], threshold="5"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_models_holding_wrong_types_raise_argument_error(case: str) -> None:
    with pytest.raises(ArgumentError):
        MISUSE[case]()


def test_a_tuple_of_measurements_is_still_a_list() -> None:
    record = _example()
    spec = attrs.evolve(record.run.spec, measurements=tuple(record.run.spec.measurements))
    same = attrs.evolve(record, run=attrs.evolve(record.run, spec=spec))
    assert ki.dumps(same) == ki.dumps(record)

"""The sweep's options: one object from the command line down, checked by sweep.plan.

No point twice, no size a record cannot hold; the library names its options, the CLI its
flags; the keyword form of earlier versions still works.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import torch

import kernelindex_sdk
from kernelindex_sdk._cli import bench as cli_bench
from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import ArgumentError, LaunchError, SweepOptionError
from kernelindex_sdk.reference_kernels import launch
from kernelindex_sdk.reference_kernels.jsd.sweep import JSDOptions, plan
from kernelindex_sdk.reference_kernels.jsd.sweep import SweepOptionError as FromSweep

CPU = torch.device("cpu")


def test_plan_refuses_repeats_and_sizes_beyond_2_53() -> None:
    """The library names its options; the CLI maps them to its flags (test_harness)."""
    with pytest.raises(SweepOptionError, match="providers: 'torch' is given twice"):
        plan(JSDOptions(providers=["torch", "torch"]), device=CPU)
    with pytest.raises(SweepOptionError, match="tokens: 4 is given twice"):
        plan(JSDOptions(providers=["torch"], tokens=[4, 4]), device=CPU)
    with pytest.raises(SweepOptionError, match=r"^tokens: expected integers in \[1, 2\^53 - 1\]"):
        plan(JSDOptions(providers=["torch"], tokens=[2**53], vocab=[1]), device=CPU)
    # fp32, input and target read once: 8 bytes per element.
    edge = (2**53 - 1) // 8
    fits = JSDOptions(providers=["torch"], tokens=[edge], vocab=[1], dtypes=["fp32"])
    assert plan(fits, device=CPU)
    with pytest.raises(SweepOptionError, match=r"^tokens/vocab: .* more than a record can hold"):
        plan(attrs.evolve(fits, tokens=(edge + 1,)), device=CPU)
    with pytest.raises(SweepOptionError, match="more than a record can hold"):
        plan(attrs.evolve(fits, input_grad="both"), device=CPU)


def test_the_sweep_option_error_is_the_one_in_errors() -> None:
    assert FromSweep is SweepOptionError


def test_options_hold_their_lists_as_tuples() -> None:
    """Frozen all the way down: a caller's list changed later changes no options."""
    tokens = [4, 16]
    options = JSDOptions(providers=["torch"], tokens=tokens, dtypes=iter(["fp32"]))
    tokens.append(64)
    assert options.providers == ("torch",)
    assert options.tokens == (4, 16)
    assert options.dtypes == ("fp32",)
    assert options.vocab is None
    assert hash(options) == hash(attrs.evolve(options))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"providers": "torch"},
         "providers: expected a list of str (a list of one for one), got a str 'torch'"),
        ({"dtypes": ["fp32", 16]}, "dtypes[1]: expected a str, got an int 16"),
        ({"tokens": 4}, "tokens: expected a list of int (a list of one for one), got an int 4"),
        ({"vocab": [4.5]}, "vocab[0]: expected an int, got a float 4.5"),
        ({"tokens": [True]}, "tokens[0]: expected an int, got a bool True"),
        ({"beta": "0.5"}, "beta: expected a number, got '0.5'"),
        ({"input_grad": True}, "input_grad: expected a str, got a bool True"),
        ({"timer": None}, "timer: expected a str, got a NoneType None"),
    ],
)  # fmt: skip
def test_options_of_the_wrong_type_are_argument_errors(
    fields: dict[str, Any], message: str
) -> None:
    """A str is no list of names: "torch" would be read as 't', 'o', 'r'..."""
    with pytest.raises(ArgumentError) as raised:
        JSDOptions(**fields)
    assert str(raised.value) == message


KEYWORDS: list[dict[str, Any]] = [
    {"providers": ["torch", "triton"]},
    {"providers": ["torch"], "tokens": [2, 3], "vocab": [33], "dtypes": ["fp32", "bf16"]},
    {"providers": ["triton"], "tokens": [5], "beta": 0.25, "input_grad": "both"},
    {"providers": ["torch"], "timer": "cuda-graph", "input_grad": "on"},
]


@pytest.mark.parametrize("fields", KEYWORDS)
def test_the_keyword_form_of_earlier_versions_plans_the_same_points(
    fields: dict[str, Any],
) -> None:
    assert plan(device=CPU, **fields) == plan(JSDOptions(**fields), device=CPU)


@pytest.mark.parametrize(
    "fields",
    [{"providers": ["torch", "nope"]}, {"providers": ["torch"], "beta": 1.5}],
)
def test_the_keyword_form_raises_the_same_option_errors(fields: dict[str, Any]) -> None:
    with pytest.raises(SweepOptionError) as whole:
        plan(JSDOptions(**fields), device=CPU)
    with pytest.raises(SweepOptionError) as keywords:
        plan(device=CPU, **fields)
    assert str(keywords.value) == str(whole.value)


def test_options_and_their_fields_together_are_refused() -> None:
    with pytest.raises(ArgumentError, match=r"^options: .*not both; got 'tokens' too$"):
        plan(JSDOptions(), device=CPU, tokens=[4])
    with pytest.raises(ArgumentError, match="not both"):
        launch.prepare_jsd(JSDOptions(), out="x.jsonl", providers=["torch"])


def test_every_option_a_sweep_error_names_has_a_flag() -> None:
    """The CLI maps each option to its flag: an option added without a flag fails here."""
    assert set(attrs.fields_dict(JSDOptions)) | {"tokens/vocab"} == set(cli_bench._FLAGS)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], JSDOptions()),
        (
            ["--impl", "triton,torch", "--tokens", "2,3", "--vocab", "33", "--dtype", "bf16",
             "--beta", "0.25", "--input-grad", "both", "--timer", "cuda-graph"],
            JSDOptions(providers=("triton", "torch"), tokens=(2, 3), vocab=(33,),
                       dtypes=("bf16",), beta=0.25, input_grad="both", timer="cuda-graph"),
        ),
    ],
)  # fmt: skip
def test_the_cli_builds_the_options_once_and_passes_them_down(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: JSDOptions
) -> None:
    """With no sweep flags the CLI asks for JSDOptions(), the library's default sweep."""
    given: list[tuple[Any, ...]] = []

    def prepare(*args: Any, **kwargs: Any) -> Any:
        given.append((args, kwargs))
        raise LaunchError(setting="--shard", reason="stop here")

    monkeypatch.setattr(launch, "prepare_jsd", prepare)
    err = io.StringIO()
    status = main(["bench", "jsd", *argv, "--no-progress", "-o", "x.jsonl"], stderr=err)
    assert (status, err.getvalue()) == (2, "kernelindex: --shard: stop here\n")
    assert given == [((expected,), {"out": "x.jsonl", "shard": None, "devices": None})]


def test_the_options_module_imports_neither_torch_nor_triton() -> None:
    """Options exist before the device is chosen, and Triton must wait for that choice."""
    code = (
        "import sys, kernelindex_sdk.reference_kernels.options;"
        "print(sorted({'torch', 'triton'} & set(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(kernelindex_sdk.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout == "[]\n"

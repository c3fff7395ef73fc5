"""The generated models: reproducible from schemas/, checked for drift, attrs-shaped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import pytest

import codegen
from codegen.__main__ import main
from kernelindex_sdk import models

ROOT = Path(__file__).resolve().parent.parent


def test_committed_models_match_a_fresh_generation() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_and_shows_a_diff_when_models_and_schemas_disagree(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As if a schema description changed and the models were not regenerated."""
    fresh = {
        path: text.replace("Unique name of the record.", "A changed description.")
        for path, text in codegen.generate_files().items()
    }
    monkeypatch.setattr("codegen.__main__.generate_files", lambda: fresh)
    assert main(["--check"]) == 1
    out = capsys.readouterr()
    assert '+    """A changed description."""' in out.out
    assert "models out of date" in out.err


def test_generation_is_deterministic() -> None:
    assert codegen.generate_files() == codegen.generate_files()


def test_generated_files_say_where_they_come_from() -> None:
    for path in codegen.generate_files():
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# generated from schemas/v1alpha1/")
        assert "do not edit" in first


# The rest of models.__all__ are type aliases (Digest = str, Unit = Literal[...]).
CLASSES = [
    name
    for name in models.__all__
    if isinstance(getattr(models, name), type)
    and getattr(models, name).__module__ == models._v1alpha1.__name__
]


@pytest.mark.parametrize("name", CLASSES)
def test_every_model_class_is_a_frozen_keyword_only_attrs_class(name: str) -> None:
    cls = getattr(models, name)
    assert attrs.has(cls)
    assert cls.__setattr__ is not object.__setattr__  # frozen
    assert all(a.kw_only for a in attrs.fields(cls))
    assert cls.__doc__


def test_models_are_typed_and_documented() -> None:
    doc = models.RunSpec.__doc__ or ""
    assert "content of a run" in doc
    fields = attrs.fields_dict(models.Timing)
    assert fields["latency_ns"].metadata == {"wire": "latencyNs"}

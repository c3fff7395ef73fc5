"""The generated models: reproducible from schemas/, checked for drift, attrs-shaped."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs
import pytest

import codegen
from codegen.__main__ import main
from kernelindex_sdk import models
from kernelindex_sdk._base.schemas import API_VERSION, SCHEMA_FILES, load_schemas
from kernelindex_sdk._base.timestamps import utc_milliseconds

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
    assert "out of date: " in out.err
    assert "src/kernelindex_sdk/models/_v1alpha1.py" in out.err


def test_generation_is_deterministic() -> None:
    assert codegen.generate_files() == codegen.generate_files()


def test_generated_files_say_where_they_come_from() -> None:
    """Python files open with a line saying so; the schema files (JSON has no comments)
    are the hand-written files, with the copies codegen embeds."""
    files = codegen.generate_files()
    assert {p.name for p in files if p.suffix == ".json"} == set(load_schemas())
    for path in files:
        if path.suffix == ".json":
            continue
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


TOP_LEVEL = {
    "BenchmarkRun": models.BenchmarkRun,
    "BenchmarkProtocol": models.BenchmarkProtocol,
    "ExecutionEnvironment": models.ExecutionEnvironment,
}


@pytest.mark.parametrize("kind", sorted(TOP_LEVEL))
def test_constants_default_to_their_schema_values(kind: str) -> None:
    schema = load_schemas()[SCHEMA_FILES[kind]]
    fields = attrs.fields_dict(TOP_LEVEL[kind])
    assert fields["kind"].default == schema["properties"]["kind"]["const"] == kind
    api_version = load_schemas()["common.json"]["$defs"]["ApiVersion"]["const"]
    assert fields["api_version"].default == api_version == API_VERSION


@pytest.mark.parametrize("kind", sorted(TOP_LEVEL))
def test_wire_order_is_unchanged_with_schema_last(kind: str) -> None:
    """Defaults do not move fields: apiVersion, kind, metadata, spec, then $schema."""
    wire = [a.metadata.get("wire", a.name) for a in attrs.fields(TOP_LEVEL[kind])]
    assert wire == ["apiVersion", "kind", "metadata", "spec", "$schema"]


def test_only_constants_and_optional_fields_have_defaults() -> None:
    for name in CLASSES:
        for field in attrs.fields(getattr(models, name)):
            if field.default is not attrs.NOTHING and field.default is not None:
                assert field.name in {"api_version", "kind"}, (name, field.name)


def test_datetime_fields_normalize_to_utc_milliseconds() -> None:
    field = attrs.fields_dict(models.RunSpec)["observed_at"]
    assert field.converter is utc_milliseconds
    plus_one = timezone(timedelta(hours=1))
    moment = datetime(2026, 1, 1, 0, 30, 0, 999_999, tzinfo=plus_one)
    assert utc_milliseconds(moment) == datetime(2025, 12, 31, 23, 30, 0, 999_000, timezone.utc)

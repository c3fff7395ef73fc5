"""The schema files: well-formed 2020-12 schemas that say what they mean."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from _paths import set_at

from kernelindex_sdk import validate
from kernelindex_sdk._base.schemas import (
    BASE_URI,
    SCHEMA_FILES,
    export_schemas,
    load_schemas,
    published_schemas,
    schema_dir,
    schema_files_for,
    schema_text,
    self_contained_schema,
)
from kernelindex_sdk.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = sorted(load_schemas().items())
# Objects that are extension points on purpose: their description says so.
EXTENSION_POINTS = {"StringMap", "ScalarMap"}


def _objects(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield path, node
        for key, value in node.items():
            yield from _objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _objects(value, f"{path}/{i}")


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_schema_is_valid_under_the_2020_12_meta_schema(name: str, schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == BASE_URI + name
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_every_property_has_a_description(name: str, schema: dict[str, Any]) -> None:
    missing = [
        f"{path}/properties/{prop}"
        for path, obj in _objects(schema)
        for prop, sub in obj.get("properties", {}).items()
        if "description" not in sub
        # A bare reference inherits the description of what it points to.
        and not ("$ref" in sub and len(sub) == 1)
    ]
    assert missing == []


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_objects_are_closed_except_documented_extension_points(
    name: str, schema: dict[str, Any]
) -> None:
    for path, obj in _objects(schema):
        if obj.get("additionalProperties") is False:
            continue
        assert path.rsplit("/", 1)[-1] in EXTENSION_POINTS, path
        assert "extension point" in obj["description"]


def test_every_kind_has_a_schema_file() -> None:
    assert set(SCHEMA_FILES) == {
        "BenchmarkRun",
        "BenchmarkProtocol",
        "ExecutionEnvironment",
        "RecordBundle",
    }


def test_schemas_accept_the_published_example(example: dict[str, Any]) -> None:
    assert validate(example) == []


@pytest.mark.parametrize(
    ("pointer_path", "value", "code"),
    [
        (("run", "spec", "observedAt"), "2026-05-27T17:14:29Z", "pattern"),
        (("run", "spec", "observedAt"), "2026-05-27T17:14:29.000+00:00", "pattern"),
        (("run", "spec", "observedAt"), "2026-02-30T17:14:29.000Z", "format"),
        (("run", "spec", "protocolDigest"), "sha256:" + "A" * 64, "pattern"),
        (("run", "metadata", "name"), "Liger_Run", "pattern"),
        (("run", "metadata", "name"), "a" * 254, "maxLength"),
        (("run", "spec", "status"), "ok", "enum"),
        (("run", "spec", "timing", "primaryStatistic"), "average", "enum"),
        (("run", "spec", "measurements", 0, "unit"), "MB", "enum"),
        (("run", "apiVersion"), "kernelindex.dev/v1", "const"),
        (("run", "spec", "timing", "latencyNs", "median"), 2**53, "maximum"),
        (("protocol", "spec", "measurement", "timer"), "stopwatch", "enum"),
    ],
)
def test_schema_rejects_what_is_knowably_wrong(
    example: dict[str, Any], pointer_path: tuple[str | int, ...], value: Any, code: str
) -> None:
    set_at(example, pointer_path, value)
    problems = validate(example)
    pointer = "/" + "/".join(map(str, pointer_path))
    assert [(p.pointer, p.code) for p in problems] == [(pointer, code)]


@pytest.mark.parametrize("stamp", ["2026-02-30T17:14:29.000Z", "2026-04-31T00:00:00.000Z"])
def test_a_bad_timestamp_is_rejected_by_format_checking(
    example: dict[str, Any], stamp: str
) -> None:
    """python-jsonschema skips date-time silently without a checker; ours has one.

    The pattern accepts these days (it knows no month lengths): only format rejects them.
    """
    example["run"]["spec"]["observedAt"] = stamp
    assert [(p.pointer, p.code) for p in validate(example)] == [("/run/spec/observedAt", "format")]


def test_failed_run_needs_a_failure_and_no_timing(example: dict[str, Any]) -> None:
    example["run"]["spec"]["status"] = "failed"
    problems = validate(example)
    assert ("/run/spec", "required") in [(p.pointer, p.code) for p in problems]
    assert ("/run/spec/timing", "not") in [(p.pointer, p.code) for p in problems]


def test_failed_run_with_a_reason_is_valid(example: dict[str, Any]) -> None:
    spec = example["run"]["spec"]
    spec["status"] = "failed"
    del spec["timing"]
    del spec["measurements"]
    spec["failure"] = {"reason": "mismatch", "message": "max abs error 0.5 > atol 1e-05"}
    assert validate(example) == []


def test_a_passed_run_cannot_carry_a_failure(example: dict[str, Any]) -> None:
    example["run"]["spec"]["failure"] = {"reason": "error", "message": "boom"}
    assert [(p.pointer, p.code) for p in validate(example)] == [("/run/spec/failure", "not")]


# --- Patterns mean the same in ECMA-262 (jsonschema-rs, ajv) and Python's re ------------


def _patterns(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield path, node["pattern"]
        for key, value in node.items():
            yield from _patterns(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _patterns(value, f"{path}/{i}")


PATTERNS = [(f"{name}#{path}", p) for name, schema in SCHEMAS for path, p in _patterns(schema)]
# One valid value per pattern; a new pattern without an example fails
# test_every_pattern_has_an_example, so it cannot escape the checks below.
EXAMPLES = {
    r"^https?://[!-~]+$(?!\n)": "https://github.com/linkedin/Liger-Kernel",
    r"^[a-z0-9][a-z0-9_]*$(?!\n)": "sm_100",
    r"^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3])"
    r":[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$(?!\n)": "2026-05-27T17:14:29.000Z",
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$(?!\n)": "liger-jsd-b200",
    r"^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$(?!\n)": "app.kubernetes.io/Name",
    r"^sha256:[0-9a-f]{64}$(?!\n)": "sha256:" + "0123456789abcdef" * 4,
    r"^[a-z][a-z0-9_]*$(?!\n)": "latency",
    r"^[A-Za-z0-9_][-A-Za-z0-9_./]*$(?!\n)": "vocab_size",
    r"^[a-z0-9][a-z0-9_-]*$(?!\n)": "nvidia",
    r"^[A-Za-z][A-Za-z0-9]*$(?!\n)": "SwPowerCap",
}
# Look-alikes of ASCII characters that one engine's classes might admit.
LOOK_ALIKES = {
    **dict(zip("aeopcxy", "аеорсху", strict=True)),  # Cyrillic
    **{d: chr(0x0660 + int(d)) for d in "0123456789"},  # Arabic-Indic digits
    "k": "\u212a",  # Kelvin sign, which folds to k
    "s": "\u017f",  # long s, which folds to s
    "-": "\u2010",  # hyphen
    ".": "\u2024",  # one dot leader
    "/": "\u2215",  # division slash
    "_": "\uff3f",  # fullwidth low line
    ":": "\u2236",  # ratio
}
# Characters that Python's \s, \d, \w, `.` or `$` treat differently from ECMA-262's.
INSERTED = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\ufeff", "\u00a0", "\u200b", " ", "\t"]


def _variants(example: str) -> Iterator[tuple[str, str]]:
    for char in INSERTED:
        yield f"ends-{char!r}", example + char
        yield f"starts-{char!r}", char + example
        yield f"inside-{char!r}", example[:3] + char + example[3:]
    for i, char in enumerate(example):
        if char.lower() in LOOK_ALIKES:
            yield f"{char!r}-look-alike", example[:i] + LOOK_ALIKES[char.lower()] + example[i + 1 :]


def _engines(pattern: str) -> tuple[Any, Any]:
    schema = {"type": "string", "pattern": pattern}
    return jsonschema.Draft202012Validator(schema), jsonschema_rs.validator_for(schema)


def test_every_pattern_has_an_example() -> None:
    assert PATTERNS
    missing = sorted({p for _, p in PATTERNS} - set(EXAMPLES))
    assert not missing, f"add a valid example for: {missing}"


@pytest.mark.parametrize(("where", "pattern"), PATTERNS, ids=[w for w, _ in PATTERNS])
def test_pattern_avoids_classes_whose_meaning_differs(where: str, pattern: str) -> None:
    assert pattern.startswith("^")
    assert pattern.endswith("$(?!\\n)"), "end with $(?!\\n): the end of input in both engines"
    for escape in ("\\s", "\\S", "\\d", "\\D", "\\w", "\\W", "\\b", "\\Z", "\\z"):
        assert escape not in pattern
    assert "." not in pattern.replace("\\.", "").replace("./", "")


@pytest.mark.parametrize(("where", "pattern"), PATTERNS, ids=[w for w, _ in PATTERNS])
def test_pattern_refuses_newlines_and_look_alikes_in_both_engines(where: str, pattern: str) -> None:
    reference, fast = _engines(pattern)
    example = EXAMPLES[pattern]
    assert reference.is_valid(example)
    assert fast.is_valid(example)
    variants = list(_variants(example))
    assert len(variants) >= 3 * len(INSERTED)
    accepted = [(name, value) for name, value in variants if reference.is_valid(value)]
    accepted_fast = [(name, value) for name, value in variants if fast.is_valid(value)]
    assert accepted == accepted_fast == []


def test_year_zero_is_refused_by_the_pattern() -> None:
    pattern = next(p for p in EXAMPLES if "(?!0000)" in p)
    reference, fast = _engines(pattern)
    for engine in (reference, fast):
        assert not engine.is_valid("0000-05-27T17:14:29.000Z")
        assert engine.is_valid("0001-01-01T00:00:00.000Z")


# --- "$schema" in records, and the exported schemas ------------------------------------


def test_records_may_carry_a_schema_key(example: dict[str, Any]) -> None:
    example["$schema"] = BASE_URI + "bundle.json"
    for part in ("run", "protocol", "environment"):
        example[part]["$schema"] = BASE_URI + SCHEMA_FILES[example[part]["kind"]]
    assert validate(example) == []
    example["$schema"] = 5
    assert [p.pointer for p in validate(example)] == ["/$schema"]


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_schema_kind_out_writes_every_file_its_refs_need(kind: str, tmp_path: Path) -> None:
    written = export_schemas(tmp_path, kind)
    names = {p.name for p in written}
    assert names == {p.name for p in tmp_path.iterdir()}
    assert SCHEMA_FILES[kind] in names
    for path in written:
        schema = json.loads(path.read_text("utf-8"))
        for ref in _file_refs(schema):
            assert ref in names, f"{path.name} refers to {ref}, which was not written"


def _file_refs(node: Any) -> Iterator[str]:
    for _, ref in _refs(node):
        if not ref.startswith("#"):
            yield ref.split("#", 1)[0]


def _refs(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        # An embedded resource resolves its own references.
        if path and "$id" in node:
            return
        if isinstance(node.get("$ref"), str):
            yield path, node["$ref"]
        for key, value in node.items():
            yield from _refs(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _refs(value, f"{path}/{i}")


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_self_contained_schema_validates_with_no_registry(
    kind: str, example: dict[str, Any]
) -> None:
    schema = self_contained_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = example if kind == "RecordBundle" else example[_PART[kind]]
    cls = jsonschema.Draft202012Validator
    # No registry: every $ref must resolve inside the one document.
    assert not list(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc))
    assert jsonschema_rs.validator_for(schema, validate_formats=True).is_valid(doc)
    broken = json.loads(json.dumps(doc))
    set_at(broken, "/metadata/name" if kind != "RecordBundle" else "/run/metadata/name", "x\n")
    assert not jsonschema_rs.validator_for(schema).is_valid(broken)


_PART = {
    "BenchmarkRun": "run",
    "BenchmarkProtocol": "protocol",
    "ExecutionEnvironment": "environment",
}


def test_exported_files_are_the_packaged_ones_each_self_contained(tmp_path: Path) -> None:
    export_schemas(tmp_path)
    assert json.loads((tmp_path / "bundle.json").read_text("utf-8")) == self_contained_schema(
        "RecordBundle"
    )
    for kind, name in SCHEMA_FILES.items():
        assert json.loads((tmp_path / name).read_text("utf-8")) == self_contained_schema(kind)
    for path in tmp_path.iterdir():
        assert path.read_text("utf-8") == (schema_dir() / path.name).read_text("utf-8")


@pytest.mark.parametrize("name", sorted(load_schemas()))
def test_packaged_file_is_its_own_part_with_every_file_it_names_embedded(name: str) -> None:
    """What `python -m codegen` writes: the hand-written part, then copies of the others."""
    packaged = json.loads((schema_dir() / name).read_text("utf-8"))
    assert (schema_dir() / name).read_text("utf-8") == published_schemas()[name]
    own = load_schemas()[name]
    embedded = {k: v for k, v in packaged.get("$defs", {}).items() if k.endswith(".json")}
    needed = [n for n in schema_files_for_file(name) if n != name]
    assert sorted(embedded) == sorted(needed)
    for other, copy in embedded.items():
        assert copy == {k: v for k, v in load_schemas()[other].items() if k != "$schema"}
    assert {k: v for k, v in packaged.items() if k != "$defs"} == {
        k: v for k, v in own.items() if k != "$defs"
    }
    assert {k: v for k, v in packaged.get("$defs", {}).items() if k not in embedded} == own.get(
        "$defs", {}
    )


def schema_files_for_file(name: str) -> list[str]:
    kinds = {file: kind for kind, file in SCHEMA_FILES.items()}
    return schema_files_for(kinds[name]) if name in kinds else [name]


def test_codegen_check_finds_a_stale_embedded_copy(tmp_path: Path) -> None:
    """Editing common.json and not running codegen leaves the other files' copies stale."""
    shutil.copytree(schema_dir(), tmp_path / "v1alpha1")
    common = json.loads((tmp_path / "v1alpha1" / "common.json").read_text("utf-8"))
    common["$defs"]["Digest"]["description"] = "changed"
    (tmp_path / "v1alpha1" / "common.json").write_text(schema_text(common), "utf-8")
    code = (
        "import sys; from pathlib import Path; import kernelindex_sdk._base.schemas as s;"
        f" s.schema_dir = lambda: Path({str(tmp_path / 'v1alpha1')!r});"
        " import codegen;"
        " files = codegen.schema_files();"
        " stale = sorted(p.name for p, text in files.items()"
        f" if (Path({str(tmp_path / 'v1alpha1')!r}) / p.name).read_text() != text);"
        " print(' '.join(stale))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "benchmark-protocol.json",
        "benchmark-run.json",
        "bundle.json",
        "execution-environment.json",
    ]


def test_export_replaces_files_atomically_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "bundle.json").write_text("old", "utf-8")
    export_schemas(tmp_path, "RecordBundle")
    assert json.loads((tmp_path / "bundle.json").read_text("utf-8"))["title"] == "RecordBundle"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_export_into_an_unwritable_place_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", "utf-8")
    with pytest.raises(InputError) as caught:
        export_schemas(blocker / "out")
    assert str(blocker / "out") in str(caught.value)


def test_an_unknown_kind_is_an_input_error() -> None:
    with pytest.raises(InputError, match="got 'Run'"):
        self_contained_schema("Run")


def _offline() -> list[str]:
    # Cut the network where the machine allows it, so a schema that needs to fetch fails.
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        return ["unshare", "-n"]
    return []


# Where a user finds the schema files: the repository (and the installed package, which
# ships the same files: tests/test_packaging.py), and what `kernelindex schema --out` writes.
_WHERE = ("packaged", "exported")


def _schema_folder(where: str, tmp_path: Path) -> Path:
    if where == "packaged":
        return schema_dir()
    export_schemas(tmp_path / "schemas")
    return tmp_path / "schemas"


@pytest.mark.slow
@pytest.mark.parametrize("where", _WHERE)
@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_check_jsonschema_uses_every_schema_file_offline(
    tmp_path: Path, example: dict[str, Any], kind: str, where: str
) -> None:
    """check-jsonschema with one file and no other flag, the network cut: valid passes,
    invalid fails on what only the embedded files define (the name, the date format)."""
    schema = str(_schema_folder(where, tmp_path) / SCHEMA_FILES[kind])
    doc = example if kind == "RecordBundle" else example[_PART[kind]]
    at = "/run" if kind == "RecordBundle" else ""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc), "utf-8")
    bad_name = json.loads(json.dumps(doc))
    set_at(bad_name, f"{at}/metadata/name", "liger-run\n")
    bad = [bad_name]
    if kind in {"RecordBundle", "BenchmarkRun"}:
        bad_date = json.loads(json.dumps(doc))
        set_at(bad_date, f"{at}/spec/observedAt", "2026-02-30T17:14:29.000Z")
        bad.append(bad_date)
    command = [*_offline(), sys.executable, "-m", "check_jsonschema", "--no-cache"]
    ok = subprocess.run(
        [*command, "--schemafile", schema, str(good)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for i, doc_bad in enumerate(bad):
        path = tmp_path / f"bad{i}.json"
        path.write_text(json.dumps(doc_bad), "utf-8")
        refused = subprocess.run(
            [*command, "--schemafile", schema, str(path)], capture_output=True, text=True
        )
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "Unresolvable" not in refused.stdout + refused.stderr
        assert ("$.run" if at else "$.") in refused.stdout


@pytest.mark.slow
@pytest.mark.parametrize("where", _WHERE)
def test_check_jsonschema_loads_the_shared_definitions_offline(
    tmp_path: Path, example: dict[str, Any], where: str
) -> None:
    """common.json holds definitions only: it loads offline and passes any document."""
    schema = str(_schema_folder(where, tmp_path) / "common.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(example), "utf-8")
    done = subprocess.run(
        [*_offline(), sys.executable, "-m", "check_jsonschema", "--schemafile", schema, str(good)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_schema_command_prints_the_packaged_file(kind: str) -> None:
    """`kernelindex schema KIND` prints the file as shipped, byte for byte."""
    done = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", "schema", kind],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (schema_dir() / SCHEMA_FILES[kind]).read_text("utf-8")

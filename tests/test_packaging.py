"""The package as users get it: a wheel with the schemas inside, and a light import."""

from __future__ import annotations

import email
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"

CHECK_INSTALLED = """
import pathlib, sys
import kernelindex_sdk as ki
from kernelindex_sdk._base.schemas import schema_dir
text = pathlib.Path(sys.argv[1]).read_text(encoding="utf-8")
assert ki.validate(text) == [], ki.validate(text)
assert ki.dumps(ki.load_record(text)) == text
here = pathlib.Path(ki.__file__).resolve().parent
assert schema_dir().is_relative_to(here), (schema_dir(), here)
print("ok", ki.__version__)
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding a freshly built sdist and wheel."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    [built] = dist.glob("kernelindex_sdk-*.whl")
    return built


@pytest.fixture(scope="module")
def sdist(dist: Path) -> Path:
    [built] = dist.glob("kernelindex_sdk-*.tar.gz")
    return built


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


@pytest.mark.slow
def test_license_ships_in_the_repository_sdist_and_wheel(wheel: Path, sdist: Path) -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(name).decode() == text
    with tarfile.open(sdist) as archive:
        [member] = [m for m in archive.getmembers() if m.name.endswith("/LICENSE")]
        assert archive.extractfile(member).read().decode() == text  # type: ignore[union-attr]
    metadata = _metadata(wheel)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"


@pytest.mark.slow
def test_metadata_has_the_project_urls_people_look_for(wheel: Path) -> None:
    urls = dict(u.split(", ", 1) for u in _metadata(wheel).get_all("Project-URL", []))
    assert {"Repository", "Documentation", "Changelog", "Issues"} <= set(urls)
    assert all(
        u.startswith("https://github.com/kernelindex/kernelindex-sdk") for u in urls.values()
    )


# Inline links and images `](target)`, and reference definitions `[label]: target`.
LINK_TARGETS = re.compile(r"\]\(([^)\s]+)\)|^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)


@pytest.mark.slow
def test_long_description_has_no_relative_links(wheel: Path) -> None:
    """The README is the index's description; a relative link breaks there."""
    description = _metadata(wheel).get_payload()
    assert isinstance(description, str)
    assert "kernelindex" in description
    targets = [a or b for a, b in LINK_TARGETS.findall(description)]
    assert targets, "the README has links: the pattern must find them"
    relative = [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]
    assert relative == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(targets) == len(LINK_TARGETS.findall(readme))


@pytest.mark.slow
def test_wheel_ships_schemas_models_and_type_marker(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in ("bundle", "common", "benchmark-run", "benchmark-protocol"):
        assert f"kernelindex_sdk/schemas/v1alpha1/{schema}.json" in names
    assert "kernelindex_sdk/models/_v1alpha1.py" in names
    assert "kernelindex_sdk/py.typed" in names
    assert not any(n.startswith(("codegen/", "tests/")) for n in names)


@pytest.mark.slow
def test_wheel_ships_the_schema_files_byte_for_byte(wheel: Path) -> None:
    """The installed files are the repository's: each self-contained, offline-ready."""
    with zipfile.ZipFile(wheel) as archive:
        for path in sorted((ROOT / "schemas" / "v1alpha1").glob("*.json")):
            shipped = archive.read(f"kernelindex_sdk/schemas/v1alpha1/{path.name}")
            assert shipped == path.read_bytes(), path.name


@pytest.mark.slow
def test_wheel_installed_outside_the_repo_loads_and_validates_the_example(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
    )
    result = subprocess.run(
        [str(python), "-c", CHECK_INSTALLED, str(EXAMPLE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")
    cli = subprocess.run(
        [str(venv / "bin" / "kernelindex"), "--version"], capture_output=True, text=True
    )
    assert cli.returncode == 0
    assert cli.stdout.startswith("kernelindex ")


README_EXAMPLE = Path(__file__).parent / "examples" / "readme_api.py"


def test_readme_api_example_passes_mypy_strict() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(README_EXAMPLE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_api_example_runs(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(README_EXAMPLE)], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("median 146000 ns")
    assert (tmp_path / "record.json").read_text(encoding="utf-8").endswith("}\n")


def test_import_loads_neither_torch_nor_triton() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import kernelindex_sdk"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines()
    }
    assert "kernelindex_sdk" in imported
    assert imported.isdisjoint({"torch", "triton", "numpy"})


HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hooks_manifest_is_valid() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("hook", HOOKS, ids=[h["id"] for h in HOOKS])
def test_every_hook_sees_all_files_in_one_process(hook: dict[str, Any]) -> None:
    """pre-commit splits files into parallel batches otherwise: duplicates across batches hide."""
    assert hook["require_serial"] is True


@pytest.mark.parametrize("hook", HOOKS, ids=[h["id"] for h in HOOKS])
@pytest.mark.parametrize(
    ("path", "matched"),
    [
        ("records/run.json", True),
        ("records/2026/runs.jsonl", True),
        ("bench/records/run.JSON", True),
        ("records/runs.JSONL", True),
        ("package.json", False),
        ("tsconfig.json", False),
        (".vscode/settings.json", False),
        ("records.json", False),
        ("my-records/run.json", False),
        ("records/notes.md", False),
    ],
)
def test_default_files_are_records_folders_only(
    hook: dict[str, Any], path: str, matched: bool
) -> None:
    assert bool(re.search(hook["files"], path)) is matched


def test_folder_hook_checks_the_folder_not_the_changed_files() -> None:
    [hook] = [h for h in HOOKS if h["id"] == "kernelindex-validate-folder"]
    assert hook["pass_filenames"] is False
    assert hook["args"] == ["records"]
    assert hook["entry"] == "kernelindex validate"


@pytest.mark.slow
@pytest.mark.parametrize("hook_id", ["kernelindex-validate", "kernelindex-validate-folder"])
def test_hook_finds_every_duplicate_name_across_many_files(tmp_path: Path, hook_id: str) -> None:
    """40 files, 10 duplicate pairs, and a package.json: all 10 found, package.json ignored."""
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "records").mkdir()
    for i in range(40):
        doc = json.loads(json.dumps(example))
        doc["run"]["metadata"]["name"] = f"run-{i % 30}"
        (tmp_path / "records" / f"r{i:02d}.json").write_text(json.dumps(doc), "utf-8")
    (tmp_path / "package.json").write_text('{"name": "x"}', "utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook_id, "--all-files"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("[duplicate-name]") == 10, result.stdout
    assert "package.json" not in result.stdout

"""The package as users get it: a wheel with the schemas inside, and a light import."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"

CHECK_INSTALLED = """
import pathlib, sys
import kernelindex_sdk as ki
from kernelindex_sdk._schemas import schema_dir
text = pathlib.Path(sys.argv[1]).read_text(encoding="utf-8")
assert ki.validate(text) == [], ki.validate(text)
assert ki.dumps(ki.load_record(text)) == text
here = pathlib.Path(ki.__file__).resolve().parent
assert schema_dir().is_relative_to(here), (schema_dir(), here)
print("ok", ki.__version__)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    [built] = out.glob("kernelindex_sdk-*.whl")
    return built


@pytest.mark.slow
def test_wheel_ships_schemas_models_and_type_marker(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in ("bundle", "common", "benchmark-run", "benchmark-protocol"):
        assert f"kernelindex_sdk/schemas/v1alpha1/{schema}.json" in names
    assert "kernelindex_sdk/models/_v1alpha1.py" in names
    assert "kernelindex_sdk/py.typed" in names
    assert not any(n.startswith(("codegen/", "tests/")) for n in names)


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

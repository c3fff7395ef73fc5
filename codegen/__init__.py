"""Generate kernelindex_sdk.models from schemas/ (datamodel-code-generator + attrs templates).

Only developers run this: the runtime package never imports it.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schemas" / "v1alpha1"
ENTRY_SCHEMA = SCHEMA_DIR / "bundle.json"
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
MODELS_DIR = ROOT / "src" / "kernelindex_sdk" / "models"
MODULE_NAME = "_v1alpha1"

HEADER = (
    "# generated from schemas/v1alpha1/ by `python -m codegen`; do not edit"
    " (CI runs `python -m codegen --check`)\n"
)

# The generator writes dataclass imports; our template writes attrs classes.
_DATACLASS_IMPORT = "from dataclasses import dataclass\n"


def _hand_written_schemas(folder: Path) -> Path:
    """Write each schema file's hand-written part (no embedded copies) into ``folder``.

    The generator follows the files' ``$ref``s from one file to the next; the copies a
    shipped file embeds would make it generate every class again.
    """
    from kernelindex_sdk._base.schemas import load_schemas, schema_text

    for name, schema in load_schemas().items():
        (folder / name).write_text(schema_text(schema), encoding="utf-8")
    return folder / ENTRY_SCHEMA.name


def _generate_module() -> str:
    with tempfile.TemporaryDirectory() as folder:
        return _generate_module_from(_hand_written_schemas(Path(folder)))


def _generate_module_from(entry_schema: Path) -> str:
    # Imported here so `python -m codegen --help` works without the dev extra.
    from datamodel_code_generator import (
        DataModelType,
        DatetimeClassType,
        InputFileType,
        LiteralType,
        PythonVersion,
        generate,
    )

    code = generate(
        entry_schema,
        input_file_type=InputFileType.JsonSchema,
        output_model_type=DataModelType.DataclassesDataclass,
        custom_template_dir=TEMPLATE_DIR,
        target_python_version=PythonVersion.PY_310,
        snake_case_field=True,
        keyword_only=True,
        frozen_dataclasses=True,
        disable_timestamp=True,
        use_schema_description=True,
        use_field_description=True,
        use_union_operator=True,
        use_standard_collections=True,
        enum_field_as_literal=LiteralType.All,
        output_datetime_class=DatetimeClassType.Datetime,
        formatters=[],
        aliases={"$schema": "schema"},
    )
    if not isinstance(code, str):
        raise TypeError(f"expected one module from the generator, got {type(code).__name__}")
    if _DATACLASS_IMPORT not in code:
        raise RuntimeError("the generator's output no longer imports dataclass; update codegen")
    # Datetime fields normalize through kernelindex_sdk._base.timestamps (see the template); ruff
    # drops the import again when no field needs it.
    code = code.replace(
        _DATACLASS_IMPORT, "import attrs\n\nfrom .._base.timestamps import utc_milliseconds\n"
    )
    # Drop the generator's own header (it names the input file and the tool).
    lines = code.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return HEADER + '"""Record models of kernelindex.dev/v1alpha1."""\n' + "".join(lines)


def _public_names(module_source: str) -> list[str]:
    names = []
    for node in ast.parse(module_source).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return sorted(n for n in names if not n.startswith("_"))


def _init_module(names: list[str]) -> str:
    imports = "".join(f"    {name},\n" for name in names)
    exported = "".join(f'    "{name}",\n' for name in names)
    return (
        HEADER
        + '"""Generated attrs models of the kernelindex.dev/v1alpha1 record kinds."""\n\n'
        + f"from .{MODULE_NAME} import (\n{imports})\n\n__all__ = [\n{exported}]\n"
    )


def _ruff_format(source: str, filename: Path) -> str:
    # The formatter's output depends on its version (pinned in the dev extra) and on
    # pyproject.toml; no cache so no .ruff_cache lands in the package.
    env = {**os.environ, "RUFF_NO_CACHE": "true"}
    fixed = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--fix-only",
            "--select",
            "I,F401,UP",
            "--stdin-filename",
            str(filename),
            "-",
        ],
        input=source,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    ).stdout
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(filename), "-"],
        input=fixed,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    ).stdout


def schema_files() -> dict[Path, str]:
    """Return the schema files as shipped: each embeds a copy of every file it refers to.

    The copies come from the hand-written files, so editing one file and running
    ``python -m codegen`` updates its copies everywhere.
    """
    from kernelindex_sdk._base.schemas import published_schemas

    return {SCHEMA_DIR / name: text for name, text in published_schemas().items()}


def generate_files() -> dict[Path, str]:
    """Return the generated files' paths and contents, formatted as committed."""
    module = _generate_module()
    module_path = MODELS_DIR / f"{MODULE_NAME}.py"
    init_path = MODELS_DIR / "__init__.py"
    return {
        **schema_files(),
        module_path: _ruff_format(module, module_path),
        init_path: _ruff_format(_init_module(_public_names(module)), init_path),
    }

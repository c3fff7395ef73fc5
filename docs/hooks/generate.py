"""mkdocs hook: generate the reference pages from the code at every build.

Adds to the site, without writing into docs/: one page per schema file, the schema files
themselves and the self-contained bundle schema to download (the library's
``self_contained_schema``), the semantic checks, and the
command-line reference.
The API pages (docs/reference/api/) are mkdocstrings directives, rendered from the
docstrings by the plugin.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

# mkdocs loads a hook by file path: its sibling modules are importable only from here.
# The tree's own src/ comes first, so the site documents this checkout even where another
# version of the package is installed (mkdocstrings reads src/ too: mkdocs.yml).
_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE), str(_HERE.parents[1] / "src")]

import checks_reference  # noqa: E402
import cli_reference  # noqa: E402
import schema_reference  # noqa: E402

from kernelindex_sdk import self_contained_schema  # noqa: E402
from kernelindex_sdk._base import schemas as _schemas  # noqa: E402
from kernelindex_sdk._cli import _common, _parser  # noqa: E402
from kernelindex_sdk.validation import _semantic  # noqa: E402

__all__ = ["on_files"]


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def generated_pages() -> dict[str, str]:
    """Return every generated file as site path -> content."""
    schemas = _schemas.load_schemas()
    published = _schemas.published_schemas()
    pages = {
        schema_reference.page_path(name): schema_reference.render_page(name, schemas)
        for name in schemas
    }
    # The files as packaged: each embeds the files it refers to and works offline alone.
    pages.update({f"schemas/v1alpha1/{name}": text for name, text in published.items()})
    # bundle.json under a name of its own: what `kernelindex schema RecordBundle` prints.
    pages["schemas/kernelindex-v1alpha1.json"] = _json(self_contained_schema("RecordBundle"))
    exit_codes = {
        name: getattr(_common, name) for name in _common.__all__ if name.startswith("EXIT_")
    }
    pages["reference/cli.md"] = cli_reference.render_page(_parser(), exit_codes)
    pages["reference/checks.md"] = checks_reference.render_page(
        _semantic.CHECKS, _semantic.DIGEST_CHECK
    )
    return pages


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages and schema files to the site."""
    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files

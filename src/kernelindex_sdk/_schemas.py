"""The packaged JSON Schemas: where they are, and which one fits a document."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Final

API_VERSION: Final = "kernelindex.dev/v1alpha1"
BASE_URI: Final = "https://kernelindex.dev/schemas/v1alpha1/"
BUNDLE: Final = "RecordBundle"

# Kind name -> schema file. A bundle has no `kind` of its own; it is recognized by shape.
SCHEMA_FILES: Final = {
    "BenchmarkRun": "benchmark-run.json",
    "BenchmarkProtocol": "benchmark-protocol.json",
    "ExecutionEnvironment": "execution-environment.json",
    BUNDLE: "bundle.json",
}
SUPPORTED_API_VERSIONS: Final = (API_VERSION,)


def schema_dir() -> Path:
    """Return the folder that holds the v1alpha1 schema files.

    A wheel carries them inside the package; a source checkout (editable install)
    keeps the one copy at the repository's top.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "schemas" / "v1alpha1", here.parents[1] / "schemas" / "v1alpha1"):
        if (candidate / "common.json").is_file():
            return candidate
    raise FileNotFoundError(f"kernelindex_sdk's schemas are missing beside {here}")


@functools.cache
def load_schemas() -> dict[str, dict[str, Any]]:
    """Return every packaged schema document, keyed by file name."""
    folder = schema_dir()
    return {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(folder.glob("*.json"))
    }


def schema_for(kind: str) -> dict[str, Any]:
    """Return the schema of a record kind (or of the bundle, kind ``RecordBundle``)."""
    return load_schemas()[SCHEMA_FILES[kind]]

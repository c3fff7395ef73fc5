"""Where a benchmark's results go: the ``--out`` file (committed under benchmarks/results/),
else standard output, as indented JSON with a final newline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def write_results(results: dict[str, Any], out: Path | str | None) -> None:
    """Write ``results`` to ``out`` (UTF-8), or to standard output when it is None."""
    text = json.dumps(results, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        Path(out).write_text(text, encoding="utf-8")

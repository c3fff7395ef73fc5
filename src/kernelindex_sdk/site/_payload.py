"""Data files the dashboard loads with ``<script>`` tags: JSON wrapped in one JS call.

Chromium refuses ``fetch()`` and XHR of ``file://`` URLs, so each data file is a script
that hands its payload to ``window.KI.register(key, payload)``. Record text (names,
labels, parameters) may be hostile: the JSON is escaped so that it can never end a
``<script>`` element or a JS string early, wherever the text is embedded.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

__all__ = ["pack", "script_text", "write_script"]

# JSON syntax has no <, >, & outside strings, so replacing them everywhere only
# touches string contents, where \u escapes mean the same character. U+2028 and
# U+2029 end a JS string literal in older engines; JSON allows them raw.
_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def script_text(key: str, payload: Any) -> str:
    """The JS text that registers ``payload`` under ``key``.

    Args:
        key: The name the page asks for (``"series/0123abcd..."``).
        payload: A JSON value.

    Returns:
        ``window.KI.register("key", {...});`` with every ``<``, ``>``, ``&``, U+2028 and
        U+2029 written as a ``\\u`` escape.
    """
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    name = json.dumps(key, ensure_ascii=False)
    return f"window.KI.register({name},{body});\n".translate(_ESCAPES)


def write_script(out: Path, key: str, payload: Any) -> int:
    """Write ``out/data/<key>.js`` registering ``payload``; return its size in bytes."""
    path = out / "data" / f"{key}.js"
    data = script_text(key, payload).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def pack(payload: Any) -> dict[str, str]:
    """``{"deflate": BASE64}``: the payload's JSON (UTF-8), zlib-compressed at level 1.

    Record texts repeat their protocol and environment in every run, so they shrink about
    ten times; the page inflates them with the browser's DecompressionStream("deflate").
    Fewer bytes to write is most of a large site's build time, and of its size on a host.
    """
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return {"deflate": base64.b64encode(zlib.compress(data, 1)).decode("ascii")}

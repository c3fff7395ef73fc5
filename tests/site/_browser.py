"""Headless Chromium (Debian's ``chromium``) driven by playwright, for the dashboard tests.

Playwright's own browser download is not used: the tests launch /usr/bin/chromium (or
$KERNELINDEX_CHROMIUM) with the flags a closed network needs. Under CI=true a missing
browser fails the tests instead of skipping them, and so does KERNELINDEX_REQUIRE_BROWSER=1
(.ci/run sets it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """The browser to use, or None when this machine has none."""
    wanted = os.environ.get("KERNELINDEX_CHROMIUM")
    if wanted:
        return wanted
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def need_browser() -> str:
    """The browser path; skip the test without one, except under CI=true (fail)."""
    path = chromium_path()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        path = None
    if path is None:
        message = "needs Debian's chromium and the playwright package (.ci/run installs them)"
        if os.environ.get("CI") == "true" or os.environ.get("KERNELINDEX_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


class Page:
    """One browser page with the console errors and page errors it produced."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda err: self.errors.append(f"pageerror: {err}"))
        page.on("requestfailed", lambda req: self.errors.append(f"failed: {req.url}"))
        page.on("request", lambda req: self.requests.append(req.url))

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")


@contextmanager
def browser(width: int = 1280, height: int = 860) -> Iterator[Any]:
    """A fresh headless Chromium; yields a function that opens a :class:`Page`."""
    from playwright.sync_api import sync_playwright

    path = need_browser()
    profile = tempfile.mkdtemp(prefix="ki-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=path,
                headless=True,
                args=FLAGS,
                viewport={"width": width, "height": height},
            )
            try:

                def open_page(url: str) -> Page:
                    page = Page(context.new_page())
                    page.page.goto(url)
                    return page

                yield open_page
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def file_url(path: Path, fragment: str = "") -> str:
    """The file:// URL of ``path`` with ``#fragment``."""
    return path.resolve().as_uri() + (f"#{fragment}" if fragment else "")

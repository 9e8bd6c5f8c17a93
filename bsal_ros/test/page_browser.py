# Copyright 2026 The bsal_ros authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# SPDX-License-Identifier: Apache-2.0

"""Brak's page in a real browser: Debian's chromium, headless, driven by Playwright.

Shared by test_page_browser.py, bench/bench_page.py and scripts/page_screenshots.py.
Playwright (PyPI) starts the browser the machine has (``executable_path``); its own
browser download is never used. Each browser gets a fresh profile folder and
stops with the ``with`` block (the browser, then Playwright's driver process).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
import re
import shutil
import statistics
import tempfile

#: Debian's chromium (scripts/setup.sh installs it)
CHROMIUM = "/usr/bin/chromium"
#: headless, no sandbox (root in a container), nothing that reaches off the machine
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_URL = re.compile(r"Brak is up: .*, page (https?://[^ ,]+/)")
PHONE = {"width": 390, "height": 844}
#: the name of each browser's fresh profile folder starts so
PROFILE_PREFIX = "brak-page-chromium-"
DESKTOP = {"width": 1280, "height": 800}


def unavailable() -> str:
    """Why the browser cannot be driven here ("" : it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"playwright is not importable ({exc}): make setup installs it (requirements)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not installed: make setup installs Debian's chromium"
    from bsal_ros.foxglove.page_server import BUNDLE, NOT_BUILT, page_state
    from bsal_ros.paths import share_dir
    root = share_dir() / "web"          # what the bridge serves
    if page_state(root) != "built":
        # a ROS user's colcon build copies the bundle only where npm built it
        return NOT_BUILT.format(root=root, bundle=BUNDLE)
    return ""


@contextlib.contextmanager
def chromium(viewport=DESKTOP):
    """A headless Chromium (a Playwright BrowserContext with a fresh profile folder)."""
    from playwright.sync_api import sync_playwright
    profile = Path(tempfile.mkdtemp(prefix=PROFILE_PREFIX))
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS,
                viewport=viewport, chromium_sandbox=False)
            context.profile_dir = str(profile)      # names its processes (browser_rss)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Console:
    """What a page writes to its console as an error, and its uncaught exceptions."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _console(self, msg) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)


def page_url(bridge) -> str:
    """The page's address from a Bridge's 'Brak is up' line."""
    for line in bridge.lines:
        m = PAGE_URL.search(line)
        if m:
            return m.group(1)
    raise AssertionError("no page URL in 'Brak is up':\n" + bridge.recent())


def until(page, expression: str, timeout: float = 30000, polling="raf"):
    """Wait until ``expression`` (JavaScript) is true in ``page``. Given as a function:
    Playwright evaluates a bare expression with eval(), which the page's
    Content-Security-Policy (no 'unsafe-eval') refuses."""
    return page.wait_for_function(f"() => ({expression})", timeout=timeout, polling=polling)


# ------------------------------------------------ bench/bench_page.py's figures
MIB = 1024 * 1024


def percentile(values, q):
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def slope_per_minute(samples):
    """Least-squares slope of (seconds, value) samples, per minute."""
    if len(samples) < 2:
        return 0.0
    xs = [t for t, _ in samples]
    ys = [v for _, v in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 60.0 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def browser_rss(profile_marker: str) -> dict[str, int]:
    """Resident bytes of the chromium processes whose command line names ``profile_marker``
    (the profile folder: bench/bench_page.py), by their ``--type`` ("browser" for the
    main one; the page is drawn in the "renderer")."""
    import psutil
    rss: dict[str, int] = {}
    for proc in psutil.process_iter(["cmdline", "memory_info"]):
        cmd = proc.info.get("cmdline") or []
        if any(profile_marker in part for part in cmd) and proc.info.get("memory_info"):
            kind = next((c.split("=", 1)[1] for c in cmd if c.startswith("--type=")), "browser")
            rss[kind] = rss.get(kind, 0) + proc.info["memory_info"].rss
    return rss

"""Debian's chromium through chromedriver, headless, for the tests that open a page sdckit writes
(``make test`` installs both; a test never skips for want of them)."""

from __future__ import annotations

import shutil


def chrome(console_log: bool = False):
    """A headless chromium driver; ``console_log``: keep the page's console messages."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert binary and driver, "chromium and chromedriver are needed: `make test` installs them"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,2000",
    ):
        options.add_argument(flag)
    if console_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(driver))

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


def wait_until(driver, condition, what: str, timeout: float = 60):
    """``condition(driver)``'s first true value, polled until ``timeout`` seconds: the page is read
    when it is there, not after a pause (a loaded machine renders late). A page being replaced
    meanwhile counts as not yet; at the timeout, the assertion names ``what`` and shows the page."""
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(
            driver, timeout, poll_frequency=0.1, ignored_exceptions=(WebDriverException,)
        ).until(condition)
    except TimeoutException:
        try:
            page = driver.page_source
        except WebDriverException as error:
            page = f"(unreadable: {error})"
        raise AssertionError(
            f"{what}: not within {timeout} s at {driver.current_url}; the page:\n{page}"
        ) from None


def loaded(driver) -> bool:
    """Whether the current document is complete and has a body with something in it (right after a
    navigation chromium can still show the previous or an empty document)."""
    return driver.execute_script(
        "return document.readyState === 'complete' && document.body !== null"
        " && document.body.innerHTML.trim().length > 0"
    )


def open_page(driver, url: str, until=None, what: str | None = None, timeout: float = 60) -> None:
    """Navigate to ``url`` and wait until its document is loaded and, if given, ``until(driver)`` holds."""
    driver.get(url)
    wait_until(driver, loaded, f"{url} loaded", timeout)
    if until is not None:
        wait_until(driver, until, what or f"{url} shows what the test waits for", timeout)

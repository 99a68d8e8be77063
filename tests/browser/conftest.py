"""Shared browser-test fixtures: Debian's chromium through Playwright and a guard that fails every test whose
page asks for anything outside this machine (the app must work offline)."""

from __future__ import annotations

import contextlib

import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, Offline


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def offline():
    """Fails the test (at teardown) if its pages requested anything outside this machine."""
    guard = Offline()
    yield guard
    assert not guard.refused, f"the page requested resources outside localhost: {sorted(set(guard.refused))}"


@pytest.fixture
def new_page(browser, offline):
    """``new_page(url, width=1600, height=1000)``: a fresh browser context (its own session) under the guard."""
    contexts = []

    def make(url: str | None = None, width: int = 1600, height: int = 1000, wait_for: str | None = "text=Pareto front"):
        ctx = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        offline.attach(ctx)
        contexts.append(ctx)
        pg = ctx.new_page()
        if url is not None:
            # generous: on a fresh machine the first session also loads (or compiles) numba kernels
            pg.goto(url, timeout=180_000)
            if wait_for:
                pg.wait_for_selector(wait_for, timeout=180_000)
        return pg

    yield make
    for ctx in contexts:
        with contextlib.suppress(Exception):
            ctx.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # a failed test leaves a screenshot of each of its pages in test-artifacts/failed-<test>-<n>.png
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        from browser_helpers import ARTIFACTS

        pages = []
        for name in ("app", "page"):
            pg = item.funcargs.get(name)
            if pg is not None and hasattr(pg, "screenshot"):
                pages.append(pg)
        for i, pg in enumerate(pages):
            with contextlib.suppress(Exception):
                pg.screenshot(path=str(ARTIFACTS / f"failed-{item.name}-{i}.png"), full_page=True)

"""Shared pytest set-up."""

import os

import pytest
from hypothesis import settings

# CI (the CI environment variable set, as `.ci/run` is run) draws the same hypothesis examples on every run: a
# red CI is reproducible and never a lucky draw.  Locally the default profile keeps exploring new examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
    settings.load_profile("ci")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    # browser tests last: by then the unit tests have compiled (and cached) the numba kernels the served app
    # loads, and a quick failure elsewhere shows before the slow browser start
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)

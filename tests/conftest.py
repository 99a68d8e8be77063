"""Shared pytest set-up."""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    # browser tests last: by then the unit tests have compiled (and cached) the numba kernels the served app
    # loads, and a quick failure elsewhere shows before the slow browser start
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)

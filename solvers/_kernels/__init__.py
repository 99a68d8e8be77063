"""Numba kernels: arrays in, arrays out, ``@njit(nogil=True, cache=True)``; no Python objects."""

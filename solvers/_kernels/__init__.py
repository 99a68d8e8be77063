"""Numba kernels: arrays in, arrays out, ``@njit(nogil=True, cache=True)``; no Python objects.

Numba's on-disk cache checks only the source file of the function it loads, not the files of the kernels
it calls (and inlines): after an edit or upgrade of ``cart.py``, a cached ``dpdt_mdp`` kernel would keep
running the old CART.  So on first import the cache files here are dropped whenever any kernel source
changed since they were written (a digest of all sources is kept beside them).  This applies to the in-tree
cache of a source checkout only: an installed treeexplorer sets numba's cache folder (``numba.config.CACHE_DIR``)
to one named by a digest of these sources while it imports them, and ``NUMBA_CACHE_DIR`` is the user's.
"""

import hashlib
import os
from pathlib import Path


def _drop_stale_cache(here: Path = Path(__file__).parent) -> None:
    from numba.core import config

    if config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_DISABLE_JIT"):
        return  # a cache kept elsewhere is left alone; no compilation, no cache
    digest = hashlib.sha256()
    for src in sorted(here.glob("*.py")):
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    cache = here / "__pycache__"
    stamp = cache / "kernels.sources.sha256"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        cache.mkdir(exist_ok=True)
        # treeexplorer-warm-*.stamp: treeexplorer.warm's mark that a solver's kernels are compiled here
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")) + list(cache.glob("treeexplorer-warm-*")):
            f.unlink(missing_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        pass  # read-only install: numba then cannot write its cache either


_drop_stale_cache()

"""Where numba keeps treeexplorer's compiled kernels: never inside an installed package.

Numba's default (``cache=True``) writes each kernel's compiled code into ``__pycache__`` beside its source, i.e.
into ``site-packages`` for an installed wheel, where it outlives upgrades and can shadow a later editable
install.  So an installed treeexplorer compiles into the user's cache folder instead (platform convention, via
``platformdirs``), in a folder named by the package version and a digest of the kernel sources: two installed
versions, or two builds of one version, never read each other's code.  ``NUMBA_CACHE_DIR`` still wins when it
is set, and a source checkout (editable install) keeps numba's in-tree cache.

Numba fixes a function's cache folder when the function is defined (from ``numba.config.CACHE_DIR``), so the
folder is set while the kernel modules are imported and restored afterwards: the user's own numba functions
keep numba's default.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import tempfile
from pathlib import Path

__all__ = ["SharedCacheLocator", "kernel_cache_dir", "load_kernels", "serialize_cache_writes"]

# Every module holding @njit(cache=True) kernels (the solvers' package is walked for its modules).
_KERNEL_PACKAGE = "treeexplorer.solvers._kernels"
_OTHER_KERNEL_MODULES = ("treeexplorer.discretize._kernels",)


def _kernel_sources() -> list[Path]:
    solvers = importlib.util.find_spec("treeexplorer.solvers")  # the parent package is not executed
    kernels = Path(solvers.origin).parent / "_kernels"
    return sorted(kernels.glob("*.py")) + [Path(__file__).parent / "discretize" / "_kernels.py"]


def _is_checkout(sources: list[Path]) -> bool:
    """A source checkout (editable install): the solvers' folder sits beside the project's pyproject.toml."""
    return (sources[0].parent.parent.parent / "pyproject.toml").is_file()


def kernel_cache_dir(version: str | None = None) -> Path | None:
    """The folder numba caches treeexplorer's kernels in, or None when numba's own choice applies
    (``NUMBA_CACHE_DIR`` set, numba's JIT disabled, or a source checkout with its in-tree cache).

    Parameters
    ----------
    version : str, optional
        The package version the folder is named by (default: the installed one).
    """
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_DISABLE_JIT"):
        return None
    sources = _kernel_sources()
    if _is_checkout(sources):
        return None
    if version is None:  # the installed distribution's (this module runs while the package itself is importing)
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed_version

        try:
            version = installed_version("treeexplorer")
        except PackageNotFoundError:
            version = "unknown"
    import sys

    import numba
    import platformdirs

    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    name = f"kernels-{version}-numba{numba.__version__}-{py}-{digest.hexdigest()[:12]}"
    for base in (platformdirs.user_cache_path("treeexplorer", appauthor=False), _temp_base()):
        folder = base / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            continue
    return None  # nowhere writable: numba then compiles every run (it never writes into a read-only package)


def _temp_base() -> Path:
    """Fallback when the user cache folder cannot be written (e.g. a read-only home in a container)."""
    user = os.environ.get("USER") or os.environ.get("USERNAME") or str(os.getuid() if hasattr(os, "getuid") else "")
    return Path(tempfile.gettempdir()) / f"treeexplorer-cache-{user}"


def load_kernels() -> Path | None:
    """Import every kernel module with numba's cache folder set to :func:`kernel_cache_dir`; returns it.

    Nothing is imported here when numba's own choice applies: the kernels then load lazily, as they are used.
    """
    folder = kernel_cache_dir()
    if folder is None:
        return None
    import pkgutil

    from numba.core import config

    _install_locator()
    previous = config.CACHE_DIR
    config.CACHE_DIR = str(folder)
    SharedCacheLocator.folder = folder
    try:
        package = importlib.import_module(_KERNEL_PACKAGE)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{_KERNEL_PACKAGE}.{module.name}")
        for name in _OTHER_KERNEL_MODULES:
            importlib.import_module(name)
    finally:
        config.CACHE_DIR = previous
        SharedCacheLocator.folder = None
    return folder


def _locator_base():
    from numba.core import caching

    # numba 0.59 (our floor) names it _UserProvidedCacheLocator; later releases made it public
    return getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator


class SharedCacheLocator(_locator_base()):
    """Numba's cache locator for treeexplorer's kernels while :func:`load_kernels` imports them: the cache
    subfolder is named by the kernels' folder (``_kernels``, ``discretize``), not by its absolute path, so every
    install of one build shares it.  Other functions (and any function outside that import) get numba's own."""

    folder: Path | None = None  # set while load_kernels imports the kernel modules

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = str(Path(self.folder) / Path(py_file).parent.name)

    @classmethod
    def from_function(cls, py_func, py_file):
        if cls.folder is None or not str(getattr(py_func, "__module__", "")).startswith("treeexplorer."):
            return None
        return super().from_function(py_func, py_file)


def _install_locator() -> None:
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.6x
    if SharedCacheLocator not in impl._locator_classes:  # tried first, in every numba cache kind
        impl._locator_classes.insert(0, SharedCacheLocator)


def serialize_cache_writes() -> None:
    """Make numba's cache saves in this process exclusive across processes (a lock file beside each cache).

    Two processes may compile one kernel for different argument types at once (parallel warm-up workers, or
    pytest-xdist workers).  Numba names a new cache entry's data file by the entries in the index it just read,
    and the data file does not say which entry it holds, so two such saves interleaved could leave one entry
    pointing at the other's code.  Each save (read index, write index, write data) holds an exclusive lock.
    A no-op where ``fcntl`` is missing (Windows) or when already done.
    """
    try:
        import fcntl
    except ImportError:
        return
    from numba.core import caching

    save = getattr(caching.IndexDataCacheFile, "save", None)
    if save is None or getattr(save, "_locked", False):
        return

    def locked_save(self, key, data):
        with open(os.path.join(self._cache_path, "treeexplorer-save.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return save(self, key, data)

    locked_save._locked = True
    caching.IndexDataCacheFile.save = locked_save

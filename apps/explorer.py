"""treeexplorer's web app: ``panel serve apps/explorer.py --warm --show``.

``--warm`` runs this script once at start-up, which starts loading (or, the first time on a machine,
compiling) the solvers' numba kernels in a background thread before the first visitor; add
``--websocket-max-message-size 31457280`` to accept uploads up to the 20 MB cap (files travel
base64-encoded over the websocket, whose default limit is 20 MB).

Only composes: the Explorer component lives in :mod:`treeexplorer.ui`; an installed package serves the same
page with ``treeexplorer app``.  Set ``TREEEXPLORER_PLUGINS`` to a
comma-separated list of modules to import first (each may register extra solvers);
``TREEEXPLORER_DATASET`` and ``TREEEXPLORER_SOLVER`` choose what opens first.
"""

import os

from treeexplorer.app import explorer_page, page_extension, servable_page
from treeexplorer.ui.warm import warm_up_in_background

page_extension()  # pn.extension as the app needs it (the page says when its server is gone)
warm_up_in_background(first=os.environ.get("TREEEXPLORER_SOLVER") or "cart")  # the first page's solver first
# the page `treeexplorer app` serves (it also loads the TREEEXPLORER_PLUGINS modules, through the registry)
servable_page(
    explorer_page(os.environ.get("TREEEXPLORER_DATASET", "iris"), solver=os.environ.get("TREEEXPLORER_SOLVER") or None)
)

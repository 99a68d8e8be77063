"""Keep a notebook display offline after its first paint.

``pn.extension(inline=True)`` inlines the stylesheets of what is displayed, but Panel gives components created
*later* in the same display (a tree card, a metrics table, a loading spinner) stylesheet links to its CDN unless
the document names a local ``dist_url``.  Jupyter servers with Panel installed serve Panel's files at
``<base_url>panel_dist/`` (Panel's own server extension), so a displayed document is pointed there.
"""

from __future__ import annotations

import os

import panel as pn


def local_dist_url() -> str | None:
    """Where this kernel's Jupyter server serves Panel's files, or None outside a Jupyter server.

    VS Code and Colab run kernels without Panel's server extension: there the CDN links stay (they would
    otherwise point at nothing).
    """
    if pn.config.comms in ("vscode", "colab"):
        return None
    if not ("JPY_SESSION_NAME" in os.environ or "JPY_PARENT_PID" in os.environ):
        return None
    base = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")  # the server's base_url under JupyterHub
    return base.rstrip("/") + "/panel_dist/"


def keep_local(view) -> int:
    """Point the documents that ``view`` is displayed in at the Jupyter server's copy of Panel's files.

    Returns the number of documents changed (0 outside a Jupyter server or when nothing is displayed).
    """
    url = local_dist_url()
    if url is None:
        return 0
    changed = 0
    for model, _ in list(getattr(view, "_models", {}).values()):
        doc = model.document
        if doc is not None and doc._template_variables.get("dist_url") != url:
            doc._template_variables["dist_url"] = url
            changed += 1
    return changed

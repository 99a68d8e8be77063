"""An upload over the size cap is refused in the browser, before it is sent (a small browser component; no
network, its code is inline).

Panel 1.9's ``FileInput`` has no ``max_file_size``: the browser reads any file and sends it base64-encoded over
the websocket, and one over the websocket's limit closes the connection with no message.  :class:`UploadGuard`
watches every file field of the page and stops the choice of a file over ``max_bytes`` before the field reads it
(a capturing listener on the field's shadow root runs before the field's own), clears the field and reports the
file's name and size in ``refused``; the server then says what happened in one line.
"""

from __future__ import annotations

import param
from panel.custom import JSComponent

__all__ = ["UploadGuard"]


class UploadGuard(JSComponent):
    """Refuses files over ``max_bytes`` in every file field of the page; invisible.

    ``refused`` is ``{"name": ..., "size": ...}`` of the last file refused (a new dict each time).
    """

    max_bytes = param.Integer(default=20 << 20, bounds=(1, None))
    refused = param.Dict(default={})

    _esm = """
    export function render({ model, el }) {
      el.style.display = "none";
      const guarded = new WeakSet();
      const onChange = (e) => {
        const input = e.composedPath()[0];
        if (!input || input.tagName !== "INPUT" || input.type !== "file" || !input.files) return;
        const big = [...input.files].find((f) => f.size > model.max_bytes);
        if (!big) return;
        e.stopImmediatePropagation();  // the field never reads it: nothing is sent
        input.value = "";
        model.refused = { name: big.name, size: big.size, at: Date.now() };
      };
      // a field draws its input in a shadow root: a capturing listener there runs before the field's own
      const scan = (root) => {
        for (const node of root.querySelectorAll("*")) {
          const sr = node.shadowRoot;
          if (!sr) continue;
          if (!guarded.has(sr) && sr.querySelector('input[type="file"]')) {
            guarded.add(sr);
            sr.addEventListener("change", onChange, true);
          }
          scan(sr);
        }
      };
      scan(document);
      const timer = setInterval(() => scan(document), 2000);  // fields drawn later (cards opened)
      model.on("remove", () => clearInterval(timer));
    }
    """

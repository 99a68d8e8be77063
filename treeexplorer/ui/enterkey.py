"""Enter in a run-settings field starts a run (a small browser component; no network, its code is inline)."""

from __future__ import annotations

import param
from panel.custom import JSComponent

__all__ = ["EnterKey"]


class EnterKey(JSComponent):
    """Counts Enter key presses in the run settings' text and number fields (``presses``); invisible.  Only fields
    inside an element of class ``enter-run`` (the sidebar) count: elsewhere Enter is the card's own (Explain a
    row's Row field explains, the Alternatives card's k sets k), never a run.

    The field's own change is sent first (Bokeh commits an input's value on Enter), so the press is
    reported a moment later and the run sees the value just typed.
    """

    presses = param.Integer(default=0)

    _esm = """
    export function render({ model, el }) {
      el.style.display = "none";
      const onKey = (e) => {
        if (e.key !== "Enter" || e.isComposing) return;
        const target = e.composedPath()[0];
        if (!target || target.tagName !== "INPUT" || !["text", "number", ""].includes(target.type)) return;
        // only the run settings run: every other card keeps Enter for its own action
        const path = e.composedPath();
        if (!path.some((n) => n.classList && n.classList.contains("enter-run"))) return;
        if (path.some((n) => n.classList && n.classList.contains("enter-no-run"))) return;
        setTimeout(() => { model.presses = model.presses + 1; }, 150);
      };
      document.addEventListener("keydown", onKey, true);
      model.on("remove", () => document.removeEventListener("keydown", onKey, true));
    }
    """

"""The selected tree's diagnostics: confusion matrices and per-class precision/recall (train and held-out),
and the features it uses with their importance.  A small Viewer over the one :class:`Controller`."""

from __future__ import annotations

from html import escape

import panel as pn
import param

from treeexplorer.diagnostics import class_report, confusion_matrix, feature_importance
from treeexplorer.ui.controller import Controller

_TABLE = "border-collapse:collapse;font-size:0.85em;margin:2px 0 10px 0"
_CELL = "padding:2px 8px;border:1px solid rgba(127,127,127,.35);text-align:right"
_HEAD = "padding:2px 8px;border:1px solid rgba(127,127,127,.35);text-align:left;font-weight:600"


def _pct(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def _matrix_html(m, names) -> str:
    head = "".join(f"<th style='{_HEAD}'>{escape(n)}</th>" for n in names)
    rows = []
    for i, name in enumerate(names):
        cells = "".join(
            f"<td style='{_CELL};{'font-weight:700' if i == j else ''}'>{int(m[i, j])}</td>" for j in range(len(names))
        )
        rows.append(f"<tr><th style='{_HEAD}'>{escape(name)}</th>{cells}</tr>")
    return (
        f"<table style='{_TABLE}'><tr><th style='{_HEAD}'>true ↓ / predicted →</th>{head}</tr>{''.join(rows)}</table>"
    )


def _report_html(rows) -> str:
    head = "".join(f"<th style='{_HEAD}'>{h}</th>" for h in ("class", "rows", "precision", "recall", "F1"))
    body = "".join(
        f"<tr><th style='{_HEAD}'>{escape(r['class'])}</th><td style='{_CELL}'>{r['support']}</td>"
        f"<td style='{_CELL}'>{_pct(r['precision'])}</td><td style='{_CELL}'>{_pct(r['recall'])}</td>"
        f"<td style='{_CELL}'>{_pct(r['f1'])}</td></tr>"
        for r in rows
    )
    return f"<table style='{_TABLE}'><tr>{head}</tr>{body}</table>"


def _importance_html(rows) -> str:
    if not rows:
        return "<p style='font-size:0.85em'>The tree is a single leaf: it tests no feature.</p>"
    head = "".join(
        f"<th style='{_HEAD}'>{h}</th>" for h in ("feature", "splits", "errors removed", "share", "Gini share")
    )
    body = "".join(
        f"<tr><th style='{_HEAD}'>{escape(r['feature'])}</th><td style='{_CELL}'>{r['splits']}</td>"
        f"<td style='{_CELL}'>{r['decrease']}</td><td style='{_CELL}'>{r['share']:.1%}</td>"
        f"<td style='{_CELL}'>{r['gini_share']:.1%}</td></tr>"
        for r in rows
    )
    return f"<table style='{_TABLE}'><tr>{head}</tr>{body}</table>"


class DiagnosticsView(pn.viewable.Viewer):
    """Confusion matrix, per-class precision/recall (train, held-out) and feature importance of the tree the
    controller has selected; follows every selection."""

    controller = param.ClassSelector(class_=Controller)

    def __init__(self, controller: Controller, **params):
        super().__init__(controller=controller, **params)
        # many classes make a matrix wider and taller than the card: it scrolls inside its own frame instead of
        # being drawn under the Export buttons beside it
        self.pane = pn.pane.HTML(
            "",
            sizing_mode="stretch_width",
            css_classes=["diagnostics-frame"],
            styles={"overflow": "auto", "max-height": "560px", "min-width": "0"},
        )
        controller.param.watch(self._update, ["selected", "runs"])
        self._update()

    def __panel__(self):
        return self.pane

    def tables(self) -> dict | None:
        """The numbers shown, for the selected tree (``None`` when nothing is selected or its data is gone)."""
        c = self.controller
        run, entry = c.selection()
        if entry is None or run.data_key != c.data_key():
            return None
        prep = c.prepared()
        tree = entry.tree
        names = [tree.class_text(i) for i in range(tree.n_classes)]
        out = {"names": names, "train": confusion_matrix(tree, prep.X_train, prep.y_train)}
        if prep.y_test is not None and len(prep.y_test):
            out["held-out"] = confusion_matrix(tree, prep.X_test, prep.y_test)
        gini = {r["feature"]: r["share"] for r in feature_importance(tree, "impurity")}
        out["importance"] = [{**r, "gini_share": gini.get(r["feature"], 0.0)} for r in feature_importance(tree)]
        return out

    def _update(self, *events) -> None:
        try:
            t = self.tables()
        except Exception as exc:  # a diagnostics failure must never take the tree card down
            self.pane.object = f"<p>Diagnostics unavailable: {escape(str(exc))}</p>"
            return
        if t is None:
            self.pane.object = "<p style='font-size:0.85em'>Select a tree of a run on the current data.</p>"
            return
        parts = []
        for split in ("train", "held-out"):
            if split in t:
                m = t[split]
                acc = m.trace() / max(m.sum(), 1)
                support = m.sum(axis=1)
                present = support > 0  # balanced accuracy: the mean recall over the classes with rows here
                bacc = (m.diagonal()[present] / support[present]).mean() if present.any() else float("nan")
                parts.append(f"<b>{split}</b> ({int(m.sum())} rows, accuracy {acc:.4f}, balanced accuracy {bacc:.4f})")
                parts.append(_matrix_html(m, t["names"]))
                parts.append(_report_html(class_report(m, t["names"])))
        parts.append("<b>Features used</b> (importance from the training counts of the tree's nodes)")
        parts.append(_importance_html(t["importance"]))
        self.pane.object = "".join(parts)

"""The sidebar's "Cross-validate (k folds)" option: a small Viewer the Explorer reads when it starts a run."""

from __future__ import annotations

import panel as pn
import param

from treeexplorer.ui.cvrun import DEFAULT_FOLDS, FOLD_CHOICES

__all__ = ["CVOption"]


class CVOption(pn.viewable.Viewer):
    """Off by default; when on, a run is cross-validated with ``folds`` stratified folds (3 to 10).

    :attr:`cv` is what :class:`~treeexplorer.ui.controller.RunSettings` takes: the number of folds, or
    ``None`` for a plain run.
    """

    enabled = param.Boolean(default=False, doc="Cross-validate the next runs")
    folds = param.Integer(default=DEFAULT_FOLDS, bounds=FOLD_CHOICES, doc="Number of stratified folds")

    def __init__(self, **params):
        super().__init__(**params)
        sw = {"sizing_mode": "stretch_width"}
        self.enabled_w = pn.widgets.Checkbox.from_param(self.param.enabled, label="Cross-validate (k folds)", **sw)
        self.folds_w = pn.widgets.IntSlider.from_param(
            self.param.folds, label="k folds", visible=self.param.enabled, **sw
        )
        self.help = pn.pane.Markdown(
            "Stratified folds of the training rows: the plot adds the mean held-out accuracy ±1 sd per "
            "complexity and marks the 1-SE choice (★). The time limit applies to each fold and to the refit; "
            "the MID anytime budget is not used.",
            styles={"font-size": "0.85em", "opacity": "0.75"},
            margin=(0, 10),
            visible=self.param.enabled,
        )

    @property
    def cv(self) -> int | None:
        return int(self.folds) if self.enabled else None

    def __panel__(self):
        return pn.Column(self.enabled_w, self.folds_w, self.help, sizing_mode="stretch_width", margin=0)

"""Cross-validated runs on the live Pareto figure: mean held-out accuracy, a ±1 sd band and the chosen levels.

One set of renderers serves every CV run (colours are per row of the data, so no renderer is created or
restyled when runs come and go): a ``patches`` band, a ``multi_line`` mean curve drawn as a step line like the
runs' train staircases, mean points and the 1-SE and best-mean marks (their one tooltip, mean ± sd and folds
reaching the level, comes from :mod:`treeexplorer.ui.hittest`).  :class:`CVLayer` only swaps ColumnDataSource
data; the caller holds the document lock.
"""

from __future__ import annotations

import math

import pandas as pd
from bokeh.models import ColumnDataSource

from treeexplorer.render.bokehview import lean

__all__ = ["CVLayer", "cv_frame", "step_band"]

FRAME_COLUMNS = [
    "run",
    "run_id",
    "color",
    "measure",
    "level",
    "cv_mean",
    "cv_std",
    "cv_se",
    "train_mean",
    "n_folds",
    "n_reached",
    "k",
    "tree",
    "choice",
]
# (marker, size, fill alpha, name): the best-mean mark is a ring, so a 1-SE star at the same level shows inside it
MARKS = {"one_se": ("star", 22, 1.0, "1-SE choice"), "best": ("circle", 30, 0.0, "best mean")}


def cv_frame(runs, x: str = "splits") -> pd.DataFrame:
    """One row per complexity level of every CV run (runs without ``cv`` are skipped); :meth:`CVFront.table`."""
    rows = []
    for run in runs:
        cvf = getattr(run, "cv", None)
        if cvf is None or cvf.error:
            continue
        for r in cvf.table(x):
            if not r["n_folds"] or math.isnan(r["cv_mean"]):
                continue
            choice = " and ".join(MARKS[k][3] for k in ("one_se", "best") if r[k])
            rows.append(
                {
                    "run": run.label,
                    "run_id": run.id,
                    "color": run.color,
                    "measure": x,
                    "level": r["level"],
                    "cv_mean": r["cv_mean"],
                    "cv_std": r["cv_std"],
                    "cv_se": r["cv_se"],
                    "train_mean": r["train_mean"],
                    "n_folds": r["n_folds"],
                    "n_reached": r["n_reached"],
                    "k": len(cvf.folds),
                    "tree": r["tree"].id if r["tree"] is not None else -1,
                    "choice": choice or "-",
                    "one_se": bool(r["one_se"]),
                    "best": bool(r["best"]),
                }
            )
    return pd.DataFrame(rows, columns=[*FRAME_COLUMNS, "one_se", "best"])


def _steps(levels, values) -> tuple[list, list]:
    """A step line: each value held from its level to the next one (like the runs' train staircases)."""
    xs, ys = [], []
    for i, (lv, v) in enumerate(zip(levels, values)):
        if i:
            xs.append(lv)
            ys.append(values[i - 1])
        xs.append(lv)
        ys.append(v)
    return xs, ys


def step_band(levels, lower, upper) -> tuple[list, list]:
    """The polygon of a band that steps like the mean curve: along ``upper``, back along ``lower``."""
    xs_up, ys_up = _steps(levels, upper)
    xs_lo, ys_lo = _steps(levels, lower)
    return xs_up + xs_lo[::-1], ys_up + ys_lo[::-1]


class CVLayer:
    """The CV renderers of one figure; :meth:`update` redraws them for the given runs along ``x``."""

    def __init__(self, figure):
        self.band = ColumnDataSource({"xs": [], "ys": [], "color": [], "run_id": [], "kind": []})
        self.lines = ColumnDataSource({"xs": [], "ys": [], "color": [], "run_id": []})
        self.means = ColumnDataSource({c: [] for c in FRAME_COLUMNS})
        self.marks = ColumnDataSource({c: [] for c in [*FRAME_COLUMNS, "marker", "size", "alpha"]})
        # the renderers join the figure with the first CV run: most sessions have none, and these ~40 Bokeh
        # models cost every new page ~40 ms of the server's thread
        self._figure = figure
        self._made = False
        self.frame = cv_frame([])

    def _make(self) -> None:
        if self._made:
            return
        self._made = True
        figure = self._figure
        self._band = figure.patches(
            "xs", "ys", source=self.band, fill_color="color", fill_alpha=0.15, line_alpha=0, level="underlay"
        )
        self._lines = figure.multi_line(
            "xs", "ys", source=self.lines, line_color="color", line_width=2.5, line_dash="dashed", alpha=0.9
        )
        self._means = figure.scatter(
            "level", "cv_mean", source=self.means, marker="square", size=7, color="color", alpha=0.9
        )
        self._marks = figure.scatter(
            "level",
            "cv_mean",
            source=self.marks,
            marker="marker",
            size="size",
            fill_color="color",
            fill_alpha="alpha",
            line_color="black",
            line_width=2,
        )
        for r in (self._band, self._lines, self._means, self._marks):
            lean(r)

    def renderers(self, k: int) -> list:
        """The renderers of entry ``k`` of :meth:`update`'s list (0: mean line, band and points; 1: marks)."""
        if not self._made:
            return []
        return [self._lines, self._band, self._means] if k == 0 else [self._marks]

    def update(self, runs, x: str = "splits") -> list:
        """Draw the CV runs among ``runs``; returns their legend entries ``(label, renderers)`` (none without)."""
        df = cv_frame(runs, x)
        self.frame = df
        if not len(df) and not self._made:
            return []
        self._make()
        band = {"xs": [], "ys": [], "color": [], "run_id": [], "kind": []}
        lines = {"xs": [], "ys": [], "color": [], "run_id": []}
        for rid, sub in df.groupby("run_id", sort=False):
            levels, mean, sd = sub.level.tolist(), sub.cv_mean.tolist(), sub.cv_std.tolist()
            bx, by = step_band(levels, [m - s for m, s in zip(mean, sd)], [m + s for m, s in zip(mean, sd)])
            lx, ly = _steps(levels, mean)
            color = sub.color.iloc[0]
            for d, xs, ys in ((band, bx, by), (lines, lx, ly)):
                d["xs"].append(xs)
                d["ys"].append(ys)
                d["color"].append(color)
                d["run_id"].append(int(rid))
            band["kind"].append("cv band ±1 sd")
        self.band.data = band
        self.lines.data = lines
        self.means.data = {c: df[c].tolist() for c in FRAME_COLUMNS}
        marks = {c: [] for c in [*FRAME_COLUMNS, "marker", "size", "alpha"]}
        for flag, (marker, size, alpha, _) in MARKS.items():
            for _, row in df[df[flag]].iterrows():
                for c in FRAME_COLUMNS:
                    marks[c].append(row[c])
                marks["marker"].append(marker)
                marks["size"].append(size)
                marks["alpha"].append(alpha)
        self.marks.data = marks
        if not len(df):
            return []
        return [
            ("CV mean held-out ±1 sd", [self._lines, self._band, self._means]),
            ("★ 1-SE choice  ○ best mean", [self._marks]),
        ]

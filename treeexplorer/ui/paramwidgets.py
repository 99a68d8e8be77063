"""Widgets built from a solver's registry ``Param`` list, so solvers that land later appear by themselves."""

from __future__ import annotations

import panel as pn

from treeexplorer.registry import Param

__all__ = ["widget_for", "read_values"]

# Control-level settings the sidebar shows on its own; a solver param with this name is not duplicated.
RESERVED = {"time_limit"}


def _label(p: Param) -> str:
    text = p.name.replace("_", " ")
    return text[0].upper() + text[1:]


def widget_for(p: Param):
    """A Panel widget for one parameter: bounds, choices, default and help text from the registry."""
    lo, hi = p.bounds if p.bounds is not None else (None, None)
    common = {"label": _label(p), "description": p.doc, "sizing_mode": "stretch_width"}
    if p.kind == "bool":
        # Checkbox takes no help text (no description parameter); the label names the option.
        return pn.widgets.Checkbox(value=bool(p.default), label=common["label"], sizing_mode="stretch_width")
    if p.choices:
        options = list(p.choices)
        return pn.widgets.Select(options=options, value=p.default if p.default in options else options[0], **common)
    if p.kind == "int":
        return pn.widgets.IntInput(
            value=p.default, start=lo, end=hi, placeholder="no limit" if p.default is None else "", **common
        )
    if p.kind == "float":
        step = 0.1 if hi is None or hi - (lo or 0) > 1 else 0.01
        return pn.widgets.FloatInput(
            value=p.default, start=lo, end=hi, step=step, placeholder="no limit" if p.default is None else "", **common
        )
    return pn.widgets.TextInput(value="" if p.default is None else str(p.default), **common)


def read_values(params, widgets: dict) -> dict:
    """Current widget values by parameter name (empty text means the default)."""
    out = {}
    for p in params:
        w = widgets.get(p.name)
        if w is None:
            continue
        v = w.value
        if isinstance(v, str) and not v.strip() and (p.kind != "str" or p.default is None):
            v = None  # an empty box means "the default" (for optional text parameters too)
        out[p.name] = v
    return out

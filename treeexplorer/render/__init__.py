"""Tree rendering computed by treeexplorer itself: layout, PNG (Pillow), SVG and the app's HoloViews view."""

from treeexplorer.render.layout import PALETTE, TreeLayout, class_colors, class_legend, layout_tree
from treeexplorer.render.legend import legend_html
from treeexplorer.render.png import to_png
from treeexplorer.render.svg import to_svg

__all__ = ["layout_tree", "TreeLayout", "class_colors", "class_legend", "legend_html", "PALETTE", "to_png", "to_svg"]

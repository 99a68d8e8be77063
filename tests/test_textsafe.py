"""Text from data is text (treeexplorer.textsafe): what Panel's Markdown pane sends to the browser for names
holding markup, the rules text, the CSV and SVG exports."""

from __future__ import annotations

import html
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treeexplorer.textsafe import code_block, csv_cell, html_text, md, md_message, visible

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    '"><svg onload=alert(3)>',
    "[click](javascript:alert(4)) **bold** `code` # head",
    "a|b",
    "line\n```\n<img src=x onerror=alert(6)>",
    "esc\x1b[31mred\u202eevil",
]


def rendered(markdown: str) -> str:
    """The HTML Panel's Markdown pane puts into the page for ``markdown``."""
    import panel as pn

    return html.unescape(pn.pane.Markdown(markdown)._transform_object(markdown)["object"])


def _text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_of_data_renders_as_its_own_characters(payload):
    out = rendered(f"before {md(payload)} after")
    assert re.fullmatch(r"<p>[^<>]*</p>\s*", out), out  # one paragraph of text: no element from the data
    assert _text_of(out) == f"before {visible(payload)} after"


@given(st.text(max_size=40))
def test_any_text_is_only_text(text):
    out = rendered(md(text) or "x")
    assert not re.search(r"<(?!/?p>)", out), out  # no tag but the paragraph's


def test_a_pipe_does_not_split_a_table_cell():
    table = "| a | b |\n|---|---|\n" + f"| {md('x|y')} | {md('<b>2</b>')} |"
    cells = re.findall(r"<td>(.*?)</td>", rendered(table))
    assert [html.unescape(c) for c in cells] == ["x|y", "<b>2</b>"]


def test_a_message_keeps_its_bold_but_not_the_datas_markup():
    out = rendered(md_message("column '<img src=x onerror=alert(1)>': choose it under **Target column**"))
    assert "<strong>Target column</strong>" in out and "<img" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out


def test_a_code_block_cannot_be_closed_from_its_text():
    text = "IF a <= 1 THEN x\n```\n<img src=x onerror=alert(1)>\n````` and more"
    out = rendered(code_block(text) + "\n\nafter")
    assert out.count('class="language-text"') == 1 and "<img" not in out  # one block (highlighted: pre in pre)
    block, after = out.rsplit("</pre>", 1)
    assert _text_of(block) == text and after.strip().endswith("<p>after</p>")  # all of it inside, then the rest


def test_control_characters_are_written_as_escapes():
    assert visible("a\nb\tc\x1b[0m\u202e") == "a\\nb\\tc\\x1b[0m\\u202e"
    assert html_text('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"


def test_formula_cells_are_neutralised_and_other_values_kept():
    assert [csv_cell(v) for v in ("=1+1", "+2", "-3+3", "@SUM(A1)", "plain", 1.5, -2)] == [
        "'=1+1",
        "'+2",
        "'-3+3",
        "'@SUM(A1)",
        "plain",
        1.5,
        -2,
    ]


@pytest.fixture(scope="module")
def hostile_front(tmp_path_factory):
    import treeexplorer as tx

    rng = np.random.default_rng(1)
    n = 120
    y = rng.choice(["=cmd|' /C calc'!A0", "<img src=x onerror=alert(4)>"], n)
    df = pd.DataFrame(
        {
            "<img src=x onerror=alert(1)>": rng.normal(size=n) + (y == y[0]) * 2,
            "n\n```\x1b[31m": rng.normal(size=n) - (y == y[0]),
            "label": y,
        }
    )
    path = tmp_path_factory.mktemp("hostile") / "=1+2.csv"  # the dataset's name is the file's
    df.to_csv(path, index=False)
    return tx.solve(str(path), target="label", solver="cart", max_depth=2, test_size=0.0)


def test_rules_text_shows_control_characters_escaped(hostile_front):
    from treeexplorer.export import rules_lines, rules_text

    tree = hostile_front.trees[-1].tree
    text = rules_text(tree, hostile_front, hostile_front.trees[-1])
    assert "\x1b" not in text and "\\x1b[31m" in text
    assert all("\n" not in line for line in rules_lines(tree))
    assert len(text.splitlines()) == len([line for line in text.split("\n") if line])  # one line per rule


def test_front_csv_neutralises_formula_cells(hostile_front):
    from treeexplorer.export import front_csv

    table = pd.read_csv(io.StringIO(front_csv(hostile_front)))
    assert table["dataset"].tolist() == ["'=1+2"] * len(table)
    text_cells = [v for col in table.columns for v in table[col] if isinstance(v, str)]
    assert text_cells and not [v for v in text_cells if v.startswith(("=", "+", "-", "@"))]


def test_the_svg_export_holds_no_live_markup(hostile_front):
    from treeexplorer.export import export_bytes

    svg = export_bytes("svg", hostile_front, hostile_front.trees[-1])
    root = ET.fromstring(svg)  # well-formed: the names are escaped text
    tags = {el.tag.rsplit("}", 1)[-1] for el in root.iter()}
    assert not tags & {"script", "img", "foreignObject", "iframe"}
    assert not [a for el in root.iter() for a in el.attrib if a.lower().startswith("on")]
    assert "onerror=alert(1)" in "".join(root.itertext())  # the column's name is there, as text

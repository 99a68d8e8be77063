"""Text from data is text: the one place that makes column names, category values, class labels, file names and
the messages built from them safe to show.

An uploaded table is untrusted: a column named ``<img src=x onerror=...>`` must read as those characters in a
Markdown or HTML pane, never run; a name holding a newline and three backticks must not close a code block; an
escape sequence must not reach a terminal raw; a cell ``=1+1`` must not become a live spreadsheet formula.

- :func:`visible`: control and bidirectional-override characters written as escapes (``\\n``, ``\\x1b``); for
  plain text (rules, terminal lines).
- :func:`md`: for a Markdown pane (Panel's ``Markdown``/``Alert``): :func:`visible`, then HTML's and Markdown's
  special characters escaped, so the text renders exactly as it is (a ``|`` does not split a table cell).
- :func:`md_message`: a message (an error or a notice, which quote names from the data) for a Markdown pane:
  :func:`md` line by line, its ``**bold**`` kept (the app's own emphasis of the controls to use).
- :func:`html_text`: for an HTML pane: :func:`visible`, then ``html.escape``.
- :func:`code_block`: a fenced Markdown code block that its text cannot close.
- :func:`csv_cell`: a text cell a spreadsheet would read as a formula gets a leading ``'``.
"""

from __future__ import annotations

import html
import re

__all__ = ["code_block", "csv_cell", "html_text", "md", "md_message", "visible"]

# C0/C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides, zero-width ones)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Markdown punctuation a renderer may act on (CommonMark lets any ASCII punctuation be backslash-escaped); the
# ones that only act at a word's edge (``_x_``, a ``-`` or ``1.`` list, ``===``) are left alone inside a word
# (``sepal_length``), and the characters HTML acts on are written as entities (which Markdown renders as the
# character they stand for).
_MD = re.compile(r"[\\`*{}\[\]()#+!|~$<>&]|(?<![^\W_])[_\-.=]|[_\-.=](?![^\W_])")
_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape_control(m: re.Match) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text) -> str:
    """``text`` (any object, as ``str``) with control characters written as escapes (``a\\nb`` for a newline)."""
    return _CONTROL.sub(_escape_control, str(text))


def md(text) -> str:
    """``text`` for a Markdown pane: it renders as the characters it holds, on one line, with no markup."""
    return _MD.sub(lambda m: _ENTITY.get(m.group(0)) or "\\" + m.group(0), visible(text))


def md_message(text) -> str:
    """A message for a Markdown pane: every line as :func:`md`, with ``**`` pairs left to mean bold (bold text
    from the data is still only text)."""
    return "\n\n".join(md(line).replace("\\*\\*", "**") for line in str(text).split("\n"))


def html_text(text) -> str:
    """``text`` for an HTML pane (element content or a quoted attribute)."""
    return html.escape(visible(text), quote=True)


def code_block(text: str, lang: str = "text") -> str:
    """``text`` as a fenced Markdown code block: control characters escaped line by line (so data cannot start a
    line), and a fence longer than any run of backticks in it (so data cannot close it)."""
    lines = [visible(line) for line in str(text).split("\n")]
    body = "\n".join(lines)
    runs = [len(r) for r in re.findall("`+", body)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def csv_cell(value):
    """``value`` unchanged unless it is text a spreadsheet reads as a formula (``=``, ``+``, ``-``, ``@`` first):
    then with a leading ``'``, which spreadsheets show as text."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value

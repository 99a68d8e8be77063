"""What a run may claim, in words: the one home for optimality wording and a run's provenance lines.

Below :mod:`treeexplorer.front` (it imports no model), so the renderers and exporters that state a run's claims
do not import the front model back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from treeexplorer.schema import format_number

if TYPE_CHECKING:
    from treeexplorer.tree import Tree

__all__ = [
    "STOPPED",
    "entry_claim",
    "make_search_space",
    "optimality_line",
    "optimality_text",
    "plural",
    "provenance_lines",
    "threshold_note",
    "weights_lines",
]


def make_search_space(
    solver_input: str, discretizer: str, n_tests: int | None, generator: str | None = None, gap_tests: int = 0
) -> dict:
    """What a run's optimality claims range over (the front JSON's ``search_space``).

    ``kind`` is ``"raw"`` when the search held every threshold of the raw numeric columns (a numeric solver
    on the raw columns, or the ``exact`` discretizer's every midpoint), else ``"tests"``: the claims hold
    only over the ``n_tests`` binary tests of ``discretizer``.  ``generator`` is a numeric solver's own test
    generator (DPDT's): only ``"exhaustive"`` (or none) offers every threshold of the raw columns.  ``gap_tests``:
    how many of the tests place missing values (a test's twin with the gaps on its other side, ``x is missing``);
    on the raw features any non-zero value says the gaps were placed on either side of every threshold.
    """
    if solver_input == "numeric" and discretizer == "raw" and generator not in (None, "exhaustive"):
        return {"kind": "tests", "discretizer": f"DPDT's {generator} generator", "n_tests": None}
    raw = discretizer == "exact" or (solver_input == "numeric" and discretizer == "raw")
    out = {
        "kind": "raw" if raw else "tests",
        "discretizer": discretizer,
        "n_tests": None if (solver_input == "numeric" and discretizer == "raw") else n_tests,
    }
    if gap_tests:
        out["gap_tests"] = int(gap_tests)
    return out


# A run that did not finish: what stopped it (Front.status -> words)
STOPPED = {
    "time_limit": "the time limit stopped the run",
    "cancelled": "the run was cancelled",
    "running": "still running",
}


def optimality_text(search_space: dict | None, short: bool = False, objective: str | None = None) -> str:
    """How to state a proven optimum of a run with this ``search_space`` (the one home for the wording).

    Long form: "optimal over the 16 tests of MID", "optimal over the table's 21 0/1 tests" (no discretizer) or
    "optimal on the raw features (every threshold)";
    ``short=True`` gives the qualifier alone: "over 16 MID tests" or "on the raw features".  A weighted run's
    ``objective`` (:meth:`treeexplorer.objective.Objective.describe`) is named: "optimal for the cost with
    balanced class weights over the 16 tests of MID".
    """
    text = _optimality_text(search_space, short)
    if objective and objective != "misclassifications" and not short:
        text = text.replace("optimal", f"optimal for {objective}", 1)
    return text


def _optimality_text(search_space: dict | None, short: bool) -> str:
    ss = search_space or {}
    gaps = ss.get("gap_tests")
    if ss.get("kind") == "raw":
        if short:
            return "on the raw features"
        either = ", a missing value on either side" if gaps else ""
        return f"optimal on the raw features (every threshold{either})"
    disc = str(ss.get("discretizer") or "?")
    disc = disc.upper() if disc in ("mid", "mdlp") else disc
    n = ss.get("n_tests")
    if disc == "none":  # no discretizer: the table's own 0/1 columns (and one-hot categories) are the tests
        if short:
            return f"over {n} given tests" if n is not None else "over the given tests"
        return f"optimal over the table's {n} 0/1 tests" if n is not None else "optimal over the table's 0/1 tests"
    if short:
        return f"over {n} {disc} tests" if n is not None else f"over the {disc} tests"
    placed = f" ({gaps} of them placing missing values)" if gaps and n is not None else ""
    return f"optimal over the {n} tests of {disc}{placed}" if n is not None else f"optimal over the tests of {disc}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 error"``, ``"2 errors"`` (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def optimality_line(front) -> str:
    """What the run's "proven optimal" marks mean, in one line (rules/CSV headers, PNG/SVG footers, CLI)."""
    if any(t.optimal for t in front.trees):
        line = f"optimality: trees marked proven are {front.optimality}, for the objective and parameters above"
        if (front.search_space or {}).get("kind") != "raw":
            line += "; trees using other thresholds may do better"
        return line
    reason = STOPPED.get(front.status, "this solver proves none with these settings")
    return f"optimality: no tree of this run is proven optimal ({reason})"


def entry_claim(entry, front=None) -> str:
    """``proven optimal over the 16 tests of MID`` / ``not proven optimal`` for one tree."""
    if not entry.optimal:
        return "not proven optimal"
    return f"proven {front.optimality}" if front is not None else "proven optimal"


def provenance_lines(front=None, entry=None) -> list[str]:
    """Header lines naming dataset, solver, discretizer, what "optimal" ranges over and the tree's accuracy."""
    out = []
    if front is not None:
        out.append(
            f"dataset: {front.dataset} ({plural(front.n_train, 'train row')}, {plural(front.n_test, 'test row')})"
        )
        out.append(f"solver: {front.solver}  discretizer: {front.discretizer}  objective: {front.objective}")
        out += weights_lines(front)
        params = ", ".join(f"{k}={v}" for k, v in front.params.items() if v is not None)
        if params:
            out.append(f"parameters: {params}")
        out.append(optimality_line(front))
    if entry is not None:
        m = entry.metrics
        acc = f"train accuracy {m['train_accuracy']:.4f} ({plural(m['train_errors'], 'error')})"
        if m.get("test_accuracy") is not None:
            acc += f", test accuracy {m['test_accuracy']:.4f}"
        if front is not None and getattr(front, "weights", None) and m.get("train_cost") is not None:
            acc += f"; train cost {format_number(round(m['train_cost'], 6))}"
            if m.get("train_balanced_accuracy") is not None:
                acc += f", balanced accuracy {m['train_balanced_accuracy']:.4f}"
        out.append(
            f"tree {entry.id}: {plural(m['splits'], 'split')}, depth {m['depth']}, "
            f"{format_number(round(m['avg_tests'], 3))} tests per sample; {acc}; "
            f"{entry_claim(entry, front)}"
        )
    return out


def weights_lines(front) -> list[str]:
    """A weighted run's line naming what it minimised and with which weights (none for a plain run)."""
    w = getattr(front, "weights", None) or {}
    if not w:
        return []
    line = f"weights: minimised {w.get('objective', 'a weighted cost')}"
    cw = w.get("class_weight")
    if cw:
        line += " (class weights " + ", ".join(f"{k}={format_number(round(v, 4))}" for k, v in cw.items()) + ")"
    costs = w.get("costs")
    if costs:
        line += "; costs[true][predicted] = " + str([[format_number(c) for c in row] for row in costs]).replace("'", "")
    return [line]


def threshold_note(tree: Tree) -> str | None:
    """A line saying that thresholds are shown short (``None`` when every shown threshold is the exact one)."""
    r = tree.reachable()
    if not any(tree.column[k] >= 0 and tree.shown_threshold(k) != tree.value[k] for k in r):
        return None
    return (
        "thresholds: shown as the shortest decimal between neighbouring values of the run's rows (every one of "
        "them is split alike); the tree JSON has the exact splits"
    )

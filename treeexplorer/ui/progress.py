"""Progress in plain words, and how far along a run is when its work can be counted.

Solvers report through their ``Control`` a phase and counters (``solvers/*``); this module is the one place
that turns a report into what the sidebar says ("DPDT: depth 2 of 4, 1,234 states · 3.1 s") and into a
fraction for the progress bar (None when the work cannot be counted: the bar then shows activity only).
"""

from __future__ import annotations

from treeexplorer.tree import max_splits

__all__ = ["describe"]


def _int(p: dict, key: str) -> int:
    try:
        return int(p.get(key) or 0)
    except (TypeError, ValueError):
        return 0


def _budgets(params: dict) -> int | None:
    """How many split budgets (0..K) a MurTree/ConTree front covers (:func:`~treeexplorer.tree.max_splits`)."""
    depth = params.get("max_depth")
    if not isinstance(depth, int) or depth < 0:
        return None
    nodes = params.get("max_nodes")
    return max_splits(depth, nodes if isinstance(nodes, int) and nodes >= 0 else None) + 1


def describe(progress: dict, params: dict | None = None, time_limit: float | None = None) -> tuple[str, float | None]:
    """``(text, fraction)`` for one progress report of a run with solver ``params``.

    ``fraction`` is in [0, 1] when the work is countable (DPDT's depths, MurTree's budgets, folds of a
    cross-validation, rows of the final assembly), else None.  The text says the elapsed time and, with a
    time limit, how much of it is left.
    """
    if not progress:
        return "", None
    p, params = progress, params or {}
    phase = str(p.get("phase", "")) or "working"
    fraction: float | None = None
    if p.get("folds"):
        folds = _int(p, "folds")
        done = _int(p, "folds_done")
        text = f"cross-validating: fold {min(done + 1, folds)} of {folds} (then the refit on all rows)"
        fraction = done / (folds + 1)
    elif phase == "compiling":
        if p.get("cold"):  # the CLI's words (treeexplorer.warm.compile_notice), with the seconds so far
            from treeexplorer.warm import compile_notice

            text = f"{compile_notice(str(p.get('solver', 'solver')))} · {float(p.get('seconds') or 0):.0f} s"
            estimate = float(p.get("estimate_s") or 0)
            fraction = min(0.95, float(p.get("seconds") or 0) / estimate) if estimate > 0 else None
        else:
            text = "loading the solver's compiled code (first run in this server)"
        return text, fraction
    elif phase == "loading":
        text = "reading the table"
    elif phase == "discretizing":
        text = f"choosing the candidate tests ({p.get('method', 'discretizer')})"
    elif phase in ("solving", "starting"):
        text = f"starting {p.get('solver', 'the solver')}"
    elif phase.startswith("dpdt"):
        depth, total = _int(p, "depth"), params.get("max_depth")
        at, of = _int(p, "expanded_at_depth"), _int(p, "states_at_depth")
        if isinstance(total, int) and total > 0 and depth > 0:
            text = f"DPDT: building the tree search, depth {min(depth, total)} of {total}"
            fraction = min(1.0, (depth - 1 + (at / of if of else 0.0)) / total)
        else:
            text = "DPDT: building the tree search"
        if _int(p, "states"):
            text += f" ({_int(p, 'states'):,} candidate subtrees so far)"
    elif phase.startswith("murtree"):
        done, total = _int(p, "budgets_done"), _budgets(params)
        if total:
            text = f"MurTree: optimal trees for {done} of {total} split budgets"
            fraction = min(1.0, done / total)
        else:
            text = f"MurTree: optimal trees for {done} split budgets"
    elif phase.startswith("contree"):
        text = f"ConTree: {_int(p, 'root_splits'):,} root splits searched"
        if "best_errors" in p and _int(p, "root_splits"):
            text += f", best tree so far {_int(p, 'best_errors'):,} errors"
    elif phase.startswith("branches"):
        text = f"BRANCHES: searching ({_int(p, 'branches'):,} branches)" if "branches" in p else "BRANCHES: searching"
        if "done" in p:
            text = f"BRANCHES: {_int(p, 'done')} trees of the front found"
    elif phase == "anytime":
        text = f"MID anytime: solved on the top {_int(p, 'mid_n')} tests, {_int(p, 'trees')} trees so far"
    elif phase == "cart":
        text = "CART: growing the tree"
    elif phase == "assembling":
        rows, of = _int(p, "rows"), _int(p, "of")
        text = f"measuring {_int(p, 'trees')} trees on the {p.get('data', 'train')} rows"
        fraction = rows / of if of else None
    else:  # a solver's own phase name and counters, as they come
        bits = [phase]
        for k, v in p.items():
            if k not in ("phase", "elapsed", "partial_front"):
                bits.append(f"{k.replace('_', ' ')} {v:,}" if isinstance(v, int) else f"{k.replace('_', ' ')} {v}")
        text = " · ".join(bits)
    if "elapsed" in p:
        elapsed = float(p["elapsed"])
        text += f" · {elapsed:.1f} s"
        if time_limit:
            text += f" of at most {time_limit:g} s"
    return text, fraction

"""Progress in plain words, and how far along a run is when its work can be counted.

Solvers report through their ``Control`` a phase and counters (``solvers/*``); this module turns a report into
what the sidebar says ("DPDT: depth 2 of 4, 1,234 states · 3.1 s") and into a fraction for the progress bar
(None when the work cannot be counted: the bar then shows activity only).  A solver's own phases are worded by
its spec (:attr:`treeexplorer.registry.SolverSpec.progress_words`); the pipeline's phases (loading,
discretizing, cross-validating, assembling) here.
"""

from __future__ import annotations

from treeexplorer.registry import report_count, solver_of_phase

__all__ = ["describe"]


_int = report_count


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
        if p.get("cold"):  # the CLI's words (treeexplorer.warm.compile_notice), with the kernels and seconds so far
            from treeexplorer.warm import compile_notice

            seconds, estimate = float(p.get("seconds") or 0), float(p.get("estimate_s") or 0)
            text = f"{compile_notice(str(p.get('solver', 'solver')), estimate or None)}"
            done, total = _int(p, "kernels"), _int(p, "kernels_total")
            if total:
                text += f" · {done} of {total} kernels"
            text += f" · {seconds:.0f} s"
            # half the kernels compiled, half the time against the estimate (refined from the CPU the compile
            # gets): the bar moves every second, and never claims done before the last kernel
            parts = [done / total] if total else []
            parts += [seconds / estimate] if estimate > 0 else []
            fraction = min(0.97, sum(parts) / len(parts)) if parts else None
        else:
            text = "loading the solver's compiled code (first run in this server)"
        return text, fraction
    elif phase == "loading":
        text = "reading the table"
    elif phase == "discretizing":
        text = f"choosing the candidate tests ({p.get('method', 'discretizer')})"
    elif phase in ("solving", "starting"):
        text = f"starting {p.get('solver', 'the solver')}"
    elif phase == "anytime":
        text = f"MID anytime: solved on the top {_int(p, 'mid_n')} tests, {_int(p, 'trees')} trees so far"
    elif (spec := solver_of_phase(phase)) is not None and spec.progress_words is not None:
        text, fraction = spec.progress_words(p, params)  # the solver's own words (its spec's)
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

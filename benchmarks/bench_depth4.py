"""Exact trees at depth 4 (and MurTree at depth 5) against their peers, side by side in one process.

Usage::

    python benchmarks/bench_depth4.py [--data DIR] [--quick] [--sets bank wilt ...] [--limit 60]
        [--sections contree anytime murtree] [--no-front] [--anytime-sets raisin segment ...]

Sections (every time warm: the kernels are compiled or loaded before the first measurement; ours and the
peer alternate set by set on the same arrays, so both see the same machine load):

* ``contree single``: ``contree(max_depth=4, front=False)`` against pycontree's ``ConTree(max_depth=4)`` on the
  Quant-BnB train splits, both with a ``--limit`` second time limit.  ``ratio`` ours/pycontree; the target
  (median <= 1.0) counts the sets pycontree proves within the limit; ``equal`` compares the proven errors.
* ``contree front``: our whole depth-4 error-vs-splits front (budgets 0..15) against pycontree's single tree
  (target: median <= 3x), and with ``--budgets`` against the sum of solving each budget alone
  (``max_nodes=b``).
* ``anytime``: our single-tree run stopped after 10 s (and 60 s unless ``--quick``): upper bound, proven lower
  bound, gap ``(upper - lower) / upper``; pycontree's errors after the same 10 s (``--anytime-sets``: other sets
  than the first section's).  Limits are wall seconds; the CPU seconds each run got are beside them.
* ``murtree``: ``murtree(front=False, fewest_splits=False)`` against pystreed's ``STreeDClassifier`` with the
  same depth and node limit on the DL8.5 sets (binary 0/1 features), depth 4 (target: median <= 0.8) and
  depth 5 (target: median <= 1.0 on the sets pystreed finishes within ``--limit`` * 2 s).

Times are CPU seconds of this process (wall seconds beside them): on a shared machine the wall time of one
solve depends on the other processes, its CPU time much less; the ratios are of CPU seconds.  Time limits are
wall seconds (what a user waits).  ``MB`` is the peak resident memory of the solve above the resident size
before it (VmHWM reset through /proc/self/clear_refs; ``nan`` where Linux does not allow it).

Data: ``--data DIR`` (the datasets root holding ``quantbnb/`` and ``murtree-dl/``), else
``$TREEEXPLORER_DATASETS``, else ``benchmarks/data``; missing sets are skipped, a missing peer leaves its
columns empty.

``quick()`` and ``full()`` return rows ``(benchmark, figure, target, "pass" | "short")`` for a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

QB_SETS = ["bank", "wilt", "bidding", "occupancy", "raisin", "rice", "segment", "page", "fault"]
QB_QUICK = ["bank", "wilt", "raisin"]
DL_SETS = ["anneal", "australian-credit", "diabetes", "german-credit", "hypothyroid", "kr-vs-kp", "vote", "yeast"]
DL_QUICK = ["anneal", "vote", "australian-credit"]


# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["quantbnb", "murtree-dl"],
    "peers": ["pycontree", "pystreed"],
    "quick": ["--quick"],
    "full": ["--budgets"],
}

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402


def data_root(arg: str | Path | None = None, summary: Summary | None = None) -> Path | None:
    """The datasets root (``--data``, ``$TREEEXPLORER_DATASETS``, ``benchmarks/data``) when it holds both
    collections; otherwise the skip line is printed and ``None`` returned."""
    for collection in ("quantbnb", "murtree-dl"):
        folder = collection_dir(arg, collection, "bench_depth4", summary=summary)
        if folder is None:
            return None
    return folder.parent


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _measure(fn, *args, **kw):
    """(wall seconds, peak MB above the start, result) of ``fn(*args, **kw)``; CPU seconds in ``_LAST_CPU``."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _status_mb("VmRSS")
    except OSError:
        base = float("nan")
    c = time.process_time()
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    _LAST_CPU[0] = time.process_time() - c
    peak = _status_mb("VmHWM") - base
    return dt, (max(0.0, peak) if peak == peak else peak), out


_LAST_CPU = [0.0]  # CPU seconds of the last ``_measure`` (this process; every solve here runs on one thread)


def _load_qb(path: Path):
    d = json.loads(path.read_text())
    return np.asarray(d["Xtrain"], dtype=float), np.asarray(d["Ytrain"], dtype=float).astype(np.int64)


def _load_dl(path: Path):
    data = np.loadtxt(path, dtype=np.int64)
    y = np.unique(data[:, 0], return_inverse=True)[1].reshape(-1)
    return np.ascontiguousarray(data[:, 1:], dtype=np.uint8), y.astype(np.int64)


def _errors(model, X, y) -> int:
    return int(np.count_nonzero(model.predict(X) != y))


def _ours_single(X, y, depth, limit, front=False, **kw):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.contree import contree

    ctl = Control(time_limit=limit)
    with ctl:
        return contree(X, y, max_depth=depth, front=front, control=ctl, n_threads=1, **kw)


def _fit_py(ConTree, X, y, limit):
    return ConTree(max_depth=4, time_limit=limit).fit(X, y)


def _fit_streed(Streed, X, y, depth, limit):
    return Streed(max_depth=depth, max_num_nodes=2**depth - 1, time_limit=limit).fit(X, y)


def _ours_murtree(X, y, depth, limit):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.murtree import murtree

    ctl = Control(time_limit=limit)
    with ctl:
        return murtree(X, y, max_depth=depth, front=False, fewest_splits=False, control=ctl)


def _warm():
    from treeexplorer.solvers.contree import contree
    from treeexplorer.solvers.murtree import murtree

    X0 = np.random.default_rng(0).random((60, 3))
    y0 = (X0[:, 0] > 0.5).astype(np.int64)
    contree(X0, y0, max_depth=4)
    contree(X0, y0, max_depth=4, front=False)
    murtree((X0 > 0.5).astype(np.uint8), y0, max_depth=4, front=False, fewest_splits=False)


def _peers():
    try:
        from pycontree import ConTree
    except ImportError:
        ConTree = None
    try:
        from pystreed import STreeDClassifier
    except ImportError:
        STreeDClassifier = None
    return ConTree, STreeDClassifier


def bench_contree(root: Path, sets, limit: float, budgets: bool, log=print, front: bool = True) -> list[dict]:
    """Depth-4 single tree and (unless ``front`` is False) whole front, ours against pycontree, set by set."""
    ConTree, _ = _peers()
    out = []
    for name in sets:
        path = root / "quantbnb" / f"{name}.json"
        if not path.exists():
            log(f"{name}: missing, skipped")
            continue
        X, y = _load_qb(path)
        r = {"set": name, "n": X.shape[0], "p": X.shape[1]}
        if ConTree is not None:
            t, mb, m = _measure(_fit_py, ConTree, X, y, limit)
            r.update(py=t, py_cpu=_LAST_CPU[0], py_mb=mb, py_err=_errors(m, X, y), py_proven=t < limit * 0.98)
        t, mb, raw = _measure(_ours_single, X, y, 4, limit)
        r.update(ours=t, ours_cpu=_LAST_CPU[0], ours_mb=mb, ours_err=raw.stats["upper_bound"])
        r["ours_proven"] = raw.status == "done"
        if front:
            t, mb, fr = _measure(_ours_single, X, y, 4, limit, front=True)
            r.update(
                front=t,
                front_cpu=_LAST_CPU[0],
                front_mb=mb,
                front_proven=fr.status == "done",
                front_err=fr.stats["upper_bound"],
            )
        if budgets and r.get("front_proven"):
            total = 0.0
            for b in range(1, 16):
                _, _, rb = _measure(_ours_single, X, y, 4, limit, front=True, max_nodes=b)
                total += _LAST_CPU[0]
                if rb.status != "done":
                    total = float("inf")
                    break
            r["budgets_sum"] = total
        out.append(r)
        log(
            f"{name}: py {r.get('py', float('nan')):.2f}s err {r.get('py_err')} | ours {r['ours']:.2f}s "
            f"err {r['ours_err']} ({'proven' if r['ours_proven'] else 'stopped'})"
            + (f" | front {r['front']:.2f}s" if "front" in r else "")
            + (f" | budgets alone {r['budgets_sum']:.2f}s" if "budgets_sum" in r else ""),
            flush=True,
        )
    return out


def bench_anytime(root: Path, sets, limits, log=print) -> list[dict]:
    """Our stopped depth-4 runs: upper and lower bound and gap; pycontree's errors after the first limit."""
    ConTree, _ = _peers()
    out = []
    for name in sets:
        path = root / "quantbnb" / f"{name}.json"
        if not path.exists():
            continue
        X, y = _load_qb(path)
        r = {"set": name}
        if ConTree is not None:
            t, _, m = _measure(_fit_py, ConTree, X, y, limits[0])
            r.update(py_err=_errors(m, X, y), py_s=t, py_cpu=_LAST_CPU[0])
        for lim in limits:
            t, mb, raw = _measure(_ours_single, X, y, 4, lim)
            ub, lb = raw.stats["upper_bound"], raw.stats["lower_bound"]
            gap = (ub - lb) / ub if ub else 0.0
            r[lim] = {"ub": ub, "lb": lb, "gap": gap, "s": t, "cpu": _LAST_CPU[0], "mb": mb, "status": raw.status}
        out.append(r)
        log(
            f"{name}: "
            + "; ".join(f"{lim:g}s ub {r[lim]['ub']} lb {r[lim]['lb']} gap {r[lim]['gap']:.2f}" for lim in limits)
            + (f"; pycontree {limits[0]:g}s {r['py_err']}" if "py_err" in r else ""),
            flush=True,
        )
    return out


def bench_murtree(root: Path, sets, depths, limit: float, log=print) -> list[dict]:
    """MurTree single tree (any number of splits) against pystreed, same depth and node limit."""
    _, Streed = _peers()
    out = []
    for name in sets:
        path = root / "murtree-dl" / f"{name}.txt"
        if not path.exists():
            log(f"{name}: missing, skipped")
            continue
        X, y = _load_dl(path)
        for depth in depths:
            lim = limit * (2 if depth >= 5 else 1)
            r = {"set": name, "D": depth, "n": X.shape[0], "p": X.shape[1]}
            if Streed is not None:
                t, mb, m = _measure(_fit_streed, Streed, X, y, depth, lim)
                r.update(py=t, py_cpu=_LAST_CPU[0], py_mb=mb, py_err=_errors(m, X, y), py_done=t < lim * 0.98)

            t, mb, raw = _measure(_ours_murtree, X, y, depth, lim)
            r.update(
                ours=t,
                ours_cpu=_LAST_CPU[0],
                ours_mb=mb,
                ours_err=raw.solutions[-1].info["errors"],
                ours_done=raw.status == "done",
            )
            out.append(r)
            log(
                f"{name} D={depth}: pystreed {r.get('py', float('nan')):.2f}s err {r.get('py_err')} | "
                f"ours {r['ours']:.2f}s err {r['ours_err']} ({'done' if r['ours_done'] else 'stopped'})",
                flush=True,
            )
    return out


def _median(v):
    return statistics.median(v) if v else float("nan")


def summarize(ct, at, mt) -> list[tuple[str, str, str, str]]:
    """Rows (benchmark, figure, target, pass/short) of the measured sections."""
    rows = []
    proven = [r for r in ct if r.get("py_proven") and r["ours_proven"]]
    if proven:
        med = _median([r["ours_cpu"] / r["py_cpu"] for r in proven])
        eq = all(r["ours_err"] == r["py_err"] for r in proven)
        rows.append(
            (
                "contree d4 single / pycontree",
                f"median {med:.2f} on {len(proven)} sets, errors {'equal' if eq else 'DIFFER'}",
                "<= 1.0, equal errors",
                "pass" if med <= 1.0 and eq else "short",
            )
        )
    fr = [r for r in ct if "py" in r and r.get("front_proven")]
    if fr:
        med = _median([r["front_cpu"] / r["py_cpu"] for r in fr])
        rows.append(
            ("contree d4 front / pycontree single", f"median {med:.2f}", "<= 3", "pass" if med <= 3 else "short")
        )
    bs = [r for r in ct if "budgets_sum" in r]
    if bs:
        worst = max(r["front_cpu"] / r["budgets_sum"] for r in bs)
        rows.append(
            ("contree d4 front / sum of budgets alone", f"max {worst:.2f}", "<= 1", "pass" if worst <= 1 else "short")
        )
    for r in at:
        for lim in [k for k in r if isinstance(k, float)]:
            v = r[lim]
            ok = v["lb"] > 0 or v["status"] == "done"
            rows.append(
                (
                    f"contree d4 anytime {r['set']} {lim:g} s",
                    f"ub {v['ub']} lb {v['lb']} gap {v['gap']:.2f}"
                    + (f" (pycontree {r['py_err']})" if "py_err" in r and lim == 10.0 else ""),
                    "lower bound > 0",
                    "pass" if ok else "short",
                )
            )
    for depth, target in ((4, 0.8), (5, 1.0)):
        both = [r for r in mt if r["D"] == depth and r.get("py_done") and r["ours_done"]]
        if both:
            med = _median([r["ours_cpu"] / r["py_cpu"] for r in both])
            eq = all(r["ours_err"] == r["py_err"] for r in both)
            rows.append(
                (
                    f"murtree d{depth} / pystreed",
                    f"median {med:.2f} on {len(both)} sets, errors {'equal' if eq else 'DIFFER'}",
                    f"<= {target}",
                    "pass" if med <= target and eq else "short",
                )
            )
    return rows


SECTIONS = ("contree", "anytime", "murtree")


def _run(
    data,
    quick_mode: bool,
    sets=None,
    dl_sets=None,
    limit=60.0,
    budgets=False,
    log=print,
    sections=SECTIONS,
    anytime_sets=None,
    front=True,
):
    root = data_root(data)
    if root is None:
        return [], [], [], []
    _warm()
    qb = sets or (QB_QUICK if quick_mode else QB_SETS)
    dl = dl_sets or (DL_QUICK if quick_mode else DL_SETS)
    ct = bench_contree(root, qb, limit, budgets, log, front) if "contree" in sections else []
    lims = [10.0] if quick_mode else [10.0, 60.0]
    at = bench_anytime(root, anytime_sets or qb, lims, log) if "anytime" in sections else []
    mt = bench_murtree(root, dl, [4] if quick_mode else [4, 5], limit, log) if "murtree" in sections else []
    return ct, at, mt, summarize(ct, at, mt)


def quick(data=None):
    """A few minutes: three Quant-BnB sets (20 s limit), the 10 s anytime gap, MurTree depth 4 on three sets."""
    return _run(data, True, limit=20.0)[3]


def full(data=None):
    """Every set of both sections (60 s limit), anytime gaps at 10 s and 60 s, MurTree at depths 4 and 5."""
    return _run(data, False, limit=60.0, budgets=True)[3]


def _tables(ct, at, mt) -> str:
    """Markdown tables; times are CPU seconds (wall seconds in brackets), ratios are of CPU seconds."""

    def f(v, fmt):
        return "" if v is None else format(v, fmt)

    def cw(r, key, done=True):
        if key not in r:
            return ""
        return f"{r[key + '_cpu']:.2f} ({r[key]:.1f}){'' if done else ' limit'}"

    def ratio(r, a, b):
        return f(r[a + "_cpu"] / r[b + "_cpu"], ".2f") if b in r and r[b + "_cpu"] > 0 else ""

    out = ["| set | n | p | pycontree s | errors | ours s | errors | ours/py | front s | front/py | MB ours | MB py |"]
    out.append("|" + "---|" * 12)
    for r in ct:
        out.append(
            f"| {r['set']} | {r['n']} | {r['p']} | {cw(r, 'py', r.get('py_proven', True))} | "
            f"{f(r.get('py_err'), 'd')} | {cw(r, 'ours', r['ours_proven'])} | {r['ours_err']} | "
            f"{ratio(r, 'ours', 'py')} | {cw(r, 'front', r.get('front_proven', True))} | "
            f"{ratio(r, 'front', 'py') if 'front' in r else ''} | {r['ours_mb']:.0f} | {f(r.get('py_mb'), '.0f')} |"
        )
    if at:
        lims = [k for k in at[0] if isinstance(k, float)]
        head = " | ".join(f"ours {x:g} s: ub / lb / gap (CPU s)" for x in lims)
        out += ["", f"| set | pycontree errors at {lims[0]:g} s (CPU s) | {head} |", "|" + "---|" * (2 + len(lims))]
        for r in at:
            cells = " | ".join(f"{r[x]['ub']} / {r[x]['lb']} / {r[x]['gap']:.2f} ({r[x]['cpu']:.1f})" for x in lims)
            py = f"{r['py_err']} ({r['py_cpu']:.1f})" if "py_err" in r else ""
            out.append(f"| {r['set']} | {py} | {cells} |")
    if mt:
        out += ["", "| set | D | pystreed s | errors | ours s | errors | ours/py | MB ours | MB py |"]
        out.append("|" + "---|" * 9)
        for r in mt:
            out.append(
                f"| {r['set']} | {r['D']} | {cw(r, 'py', r.get('py_done', True))} | {f(r.get('py_err'), 'd')} | "
                f"{cw(r, 'ours', r['ours_done'])} | {r['ours_err']} | {ratio(r, 'ours', 'py')} | "
                f"{r['ours_mb']:.0f} | {f(r.get('py_mb'), '.0f')} |"
            )
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="fewer sets, 20 s limit, depth-5 MurTree skipped")
    ap.add_argument("--sets", nargs="+", default=None, help="Quant-BnB sets")
    ap.add_argument("--dl-sets", nargs="+", default=None, help="DL8.5 sets")
    ap.add_argument("--limit", type=float, default=None, help="time limit per solve (default 60, quick 20)")
    ap.add_argument("--budgets", action="store_true", help="also solve each front budget alone (slow)")
    ap.add_argument("--no-front", action="store_true", help="contree section: the single tree only, not the front")
    ap.add_argument("--anytime-sets", nargs="+", default=None, help="Quant-BnB sets of the anytime section")
    ap.add_argument(
        "--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="which sections to run (default all)"
    )
    args = ap.parse_args(argv)
    limit = args.limit if args.limit is not None else (20.0 if args.quick else 60.0)
    summary = Summary(args.summary)
    if data_root(args.data, summary) is None:
        return 0
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min), {os.cpu_count()} CPUs", flush=True)
    ct, at, mt, rows = _run(
        args.data,
        args.quick,
        args.sets,
        args.dl_sets,
        limit,
        args.budgets,
        sections=args.sections,
        anytime_sets=args.anytime_sets,
        front=not args.no_front,
    )
    print()
    print(_tables(ct, at, mt))
    print()
    print("| benchmark | figure | target | |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
        summary.add(row[0], row[1], row[2], row[3] == "pass")
    summary.write()
    print(f"\nload after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

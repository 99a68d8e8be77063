"""Property-based fuzzing of every input path (issue 19): files, fronts and parameters, through API and CLI.

Each case must end with a result or ONE line from the project's own errors (a ``ValueError`` such as
``DataError``/``FrontError``, raised by treeexplorer's code, not by numpy or pandas underneath), within a time
and memory bound.  The cases run in a child process with a memory ulimit (``RLIMIT_AS``) and a per-case alarm;
many cases share one child, so the whole suite takes well under a minute.  Hypothesis runs derandomized
(the ``treeexplorer-ci`` profile); ``benchmarks/fuzz_long.py`` runs the same targets far longer, with seeds.

Targets
-------
bytes       random bytes, bare or after a format's magic (Parquet, zip, gzip, BOMs, ...), any file suffix
containers  real gzip/bz2/zip/xlsx/Parquet/Feather/UTF-16 tables, truncated or with flipped bytes
csv         generated tables: dialects (delimiter, quoting, line ends), encodings, odd cells and headers
frames      DataFrames with every dtype (dates, durations, complex, lists, mixed objects, nullable ...)
front       front JSON: random documents and mutations of real fronts (cycles, self-children, bad indices)
api         random values of every type for every solve() keyword and solver parameter
cli         random option values through the CLI's main(): exit 0, or 2/3 with one ``error:`` line
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
MEMORY_MB = 1024  # address space the cases may map beyond what the warmed-up child has (RLIMIT_AS)
CASE_SECONDS = 20.0  # per case; a case past it is a hang
TARGETS = ("bytes", "containers", "csv", "frames", "front", "api", "cli")
CI_EXAMPLES = {"bytes": 120, "containers": 80, "csv": 60, "frames": 50, "front": 80, "api": 50, "cli": 25}


# -- parent side -------------------------------------------------------------------------------------------


def run_batch(
    targets, examples, seed=None, memory_mb=MEMORY_MB, case_seconds=CASE_SECONDS, timeout=900.0, all_solvers=False
):
    """Run fuzz ``targets`` in one child process; returns ``{target: result dict}``.

    ``examples`` maps a target to its number of examples; ``seed`` None means derandomized.  A child that
    dies (killed for memory, crashed) or hangs past ``timeout`` fails the target it was running, naming the
    last case it started.  ``all_solvers``: the api target runs every solver end to end (5 s time limit).
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="treeexplorer-fuzz-") as tmp:
        cfg = {
            "targets": list(targets),
            "examples": {t: int(examples[t]) for t in targets},
            "seed": seed,
            "memory_mb": memory_mb,
            "case_seconds": case_seconds,
            "tmp": tmp,
            "all_solvers": all_solvers,
        }
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        try:
            proc = subprocess.run(
                [sys.executable, str(HERE), "--child", json.dumps(cfg)],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
            )
            out, err, code = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, err, code = exc.stdout or "", exc.stderr or "", "timeout"
            out = out.decode() if isinstance(out, bytes) else out
            err = err.decode() if isinstance(err, bytes) else err
        results = {}
        for line in out.splitlines():
            if line.startswith("FUZZ-RESULT "):
                r = json.loads(line[len("FUZZ-RESULT ") :])
                results[r["target"]] = r
        last = Path(tmp, "current-case.txt")
        last_case = last.read_text(errors="replace")[:2000] if last.exists() else "?"
        for t in targets:
            if t not in results:
                results[t] = {
                    "target": t,
                    "ok": False,
                    "error": f"child process ended ({code}) while fuzzing; last case: {last_case}\n{err[-3000:]}",
                }
        return results


@pytest.fixture(scope="module")
def ci_results():
    return run_batch(TARGETS, CI_EXAMPLES)


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz(ci_results, target):
    r = ci_results[target]
    assert r["ok"], f"fuzz target {target!r} found a case:\n{r['error']}"
    assert r["cases"] >= CI_EXAMPLES[target] // 2, r  # the cases really ran


# -- child side --------------------------------------------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` in the code under test swallows it."""


class Harness:
    def __init__(self, cfg):
        import treeexplorer.solvers

        import treeexplorer

        self.cfg = cfg
        self.tmp = Path(cfg["tmp"])
        self.case_seconds = cfg["case_seconds"]
        self.roots = (
            str(Path(treeexplorer.__file__).resolve().parent),
            str(Path(treeexplorer.solvers.__file__).resolve().parent),
        )
        self.cases = 0
        self.outcomes: dict[str, int] = {}
        self.messages: list[str] = []  # a sample of the errors seen, for the benchmark's report

    def note_case(self, text: str) -> None:
        self.cases += 1
        (self.tmp / "current-case.txt").write_text(text[:4000], errors="replace")

    def bounded(self, fn):
        import signal

        def alarm(signum, frame):
            raise CaseTimeout()

        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, self.case_seconds)
        try:
            return fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def outcome(self, fn, what: str):
        """Run one case: its result, or None after a clean project error; anything else fails the case."""
        try:
            result = self.bounded(fn)
        except CaseTimeout:
            raise AssertionError(f"{what}: no answer within {self.case_seconds:g} s (a hang?)") from None
        except MemoryError:
            raise AssertionError(f"{what}: MemoryError (over the {self.cfg['memory_mb']} MB bound)") from None
        except (ValueError, KeyError, NotImplementedError) as exc:
            self.check_project_error(exc, what)
            self.outcomes["error"] = self.outcomes.get("error", 0) + 1
            msg = str(exc)[:160]
            if len(self.messages) < 12 and msg not in self.messages:
                self.messages.append(msg)
            return None
        except Exception as exc:
            raise AssertionError(f"{what}: {self.describe(exc)}") from None
        self.outcomes["result"] = self.outcomes.get("result", 0) + 1
        return result

    def describe(self, exc) -> str:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
        return f"{type(exc).__name__}: {exc}\n{tb}"

    def check_project_error(self, exc, what: str) -> None:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        msg = str(msg)
        frames = traceback.extract_tb(exc.__traceback__)
        origin = frames[-1].filename if frames else "?"
        if not str(Path(origin).resolve()).startswith(self.roots):
            raise AssertionError(f"{what}: error raised outside treeexplorer ({origin}): {self.describe(exc)}")
        if not msg.strip() or "\n" in msg.strip():
            raise AssertionError(f"{what}: the error is not one line: {msg!r}")
        if len(msg) > 2000:
            raise AssertionError(f"{what}: the error is {len(msg)} characters long: {msg[:300]!r}...")


def _strategies():
    """Shared hypothesis strategies (built in the child, after the memory limit)."""
    import numpy as np
    from hypothesis import strategies as st

    text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
    odd = st.sampled_from(
        ["", " ", "NA", "nan", "None", "inf", "-inf", "1e308", "-1e308", "1e999", "1,5", "-1,18", "1.234,5", '"', "'",
         "a,b", "a;b", "\t", "\n", "\r", "True", "false", "0", "-0", "00", "1_000", "０", "é", "\x00", "\x1a", "💥"]
    )  # fmt: skip
    number = st.one_of(
        st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 5)
    )
    cell = st.one_of(number, text, odd)
    any_value = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.integers(-3, 40),
        st.floats(),
        st.floats(0, 1),
        text,
        odd,
        st.binary(max_size=4),
        st.lists(st.integers(-2, 5), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.sampled_from([np.int64(3), np.float32(0.5), np.bool_(True), np.array([1, 2]), object(), 1j, ()]),
    )
    return st, np, {"text": text, "odd": odd, "cell": cell, "any": any_value, "number": number}


def target_bytes(h: Harness):
    from hypothesis import given

    from treeexplorer.data import load_dataset

    st, np, s = _strategies()
    magics = [b"PAR1", b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b\x08", b"BZh9", b"\xfd7zXZ\x00", b"ARROW1",
              b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\xff\xfe\x00\x00", b"%PDF", b"a,b\n", b"x;y\n1;2\n",
              b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\x00a\x00,\x00b\x00\n"]  # fmt: skip
    content = st.one_of(
        st.binary(max_size=3000),
        st.tuples(st.sampled_from(magics), st.binary(max_size=1500)).map(lambda t: t[0] + t[1]),
        st.text(max_size=400).map(lambda t: t.encode("utf-8", "surrogatepass")),
        # a short pattern repeated: long lines, many fields, many quotes (quadratic code shows here)
        st.tuples(
            st.sampled_from([b'" ,', b'a,"', b",", b"\n", b"a;", b'"', b"1,", b"\t", b"1,2,p\n", b"a,b,c,"]),
            st.integers(1, 60000),
        ).map(lambda t: t[0] * t[1]),
    )

    @given(raw=content, suffix=st.sampled_from([".csv", ".tsv", ".txt", ".parquet", ".xlsx", ".gz", ".json", ""]))
    def case(raw, suffix):
        p = h.tmp / f"fuzz{suffix}"
        p.write_bytes(raw)
        h.note_case(f"bytes: load_dataset({p.name}) of {raw[:200]!r}")
        ds = h.outcome(lambda: load_dataset(p), f"load_dataset of {len(raw)} bytes {raw[:60]!r} as {suffix!r}")
        if ds is not None:
            assert ds.X.shape[0] == ds.y.shape[0] >= 2 and np.isfinite(ds.X).all()

    return case


def _container_bases():
    import bz2
    import gzip
    import zipfile

    import pandas as pd

    df = pd.DataFrame(
        {
            "a": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
            "c": ["r", "g", "r", "b", "g", "r"],
            "t": pd.to_timedelta([1, 2, 3, 4, 5, 6], unit="s"),
            "y": ["p", "q", "p", "q", "p", "q"],
        }
    )
    csv_text = df.drop(columns="t").to_csv(index=False)
    bases = {}
    buf = io.BytesIO()
    df.to_parquet(buf)
    bases["parquet"] = buf.getvalue()
    buf = io.BytesIO()
    df.drop(columns="t").to_feather(buf)
    bases["feather"] = buf.getvalue()
    bases["gzip"] = gzip.compress(csv_text.encode())
    bases["bz2"] = bz2.compress(csv_text.encode())
    bases["utf16"] = csv_text.encode("utf-16")
    for name, members in (
        ("zip", {"t.csv": csv_text}),
        ("xlsx", {"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<workbook/>", "xl/sheet1.xml": "<x/>" * 40}),
    ):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for k, v in members.items():
                z.writestr(k, v)
        bases[name] = buf.getvalue()
    return bases


def target_containers(h: Harness):
    from hypothesis import given

    from treeexplorer.data import load_dataset

    st, np, s = _strategies()
    bases = _container_bases()

    @given(
        base=st.sampled_from(sorted(bases)),
        cut=st.one_of(st.none(), st.floats(0, 1)),
        flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
    )
    def case(base, cut, flips):
        raw = bytearray(bases[base])
        for pos, byte in flips:
            raw[min(int(pos * len(raw)), len(raw) - 1)] = byte
        if cut is not None:
            raw = raw[: int(cut * len(raw))]
        p = h.tmp / "fuzz.data"
        p.write_bytes(bytes(raw))
        what = f"load_dataset of {base} cut at {cut} with flips {flips}"
        h.note_case(what)
        ds = h.outcome(lambda: load_dataset(p), what)
        if ds is not None:
            assert np.isfinite(ds.X).all()

    return case


def target_csv(h: Harness):
    import csv
    import gzip

    from hypothesis import given

    from treeexplorer.api import solve
    from treeexplorer.data import load_dataset

    st, np, s = _strategies()

    @st.composite
    def table(draw):
        n_cols = draw(st.integers(2, 5))
        n_rows = draw(st.one_of(st.integers(2, 14), st.integers(0, 3)))
        names = st.one_of(s["text"], s["odd"], st.sampled_from(["a", "b", "y", "Unnamed: 0", "0", "1"]))
        plain = ["a", "b", "c", "d", "y"][:n_cols]
        header = draw(st.one_of(st.just(plain), st.none(), st.lists(names, min_size=n_cols, max_size=n_cols)))
        column_kind = st.sampled_from(["int", "float", "cat", "any", "decimal-comma"])
        kinds = draw(st.lists(column_kind, min_size=n_cols, max_size=n_cols))
        by_kind = {
            "int": st.integers(-5, 5),
            "float": st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)),
            "cat": st.sampled_from(["red", "green", "blue", "1", "x y"]),
            "any": s["cell"],
            "decimal-comma": st.floats(-100, 100, allow_nan=False).map(lambda v: f"{v:.2f}".replace(".", ",")),
        }
        rows = [[draw(by_kind[k]) for k in kinds] for _ in range(n_rows)]
        if draw(st.integers(0, 5)) == 0 and n_rows:  # a ragged row now and then
            rows[draw(st.integers(0, n_rows - 1))].append(draw(s["cell"]))
        return header, rows

    quoting = st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC, csv.QUOTE_NONE])

    @given(
        tab=table(),
        sep=st.sampled_from([",", ";", "\t", "|", " "]),
        quote=quoting,
        end=st.sampled_from(["\n", "\r\n", "\r"]),
        encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252"]),
        gz=st.booleans(),
        target=st.one_of(st.none(), st.none(), st.integers(-6, 6), st.sampled_from(["y", "a", "nope", "Unnamed: 0"])),
        drop_missing=st.booleans(),
    )
    def case(tab, sep, quote, end, encoding, gz, target, drop_missing):
        header, rows = tab
        buf = io.StringIO()
        w = csv.writer(buf, delimiter=sep, quoting=quote, lineterminator=end, escapechar="\\")
        try:
            if header is not None:
                w.writerow(header)
            w.writerows(rows)
        except csv.Error:
            return  # the writer itself refuses (QUOTE_NONE without a way to escape); not our input
        raw = buf.getvalue().encode(encoding, errors="replace")
        if gz:
            raw = gzip.compress(raw)
        p = h.tmp / "fuzz.csv"
        p.write_bytes(raw)
        what = f"csv sep={sep!r} quote={quote} enc={encoding} gz={gz} target={target!r}: {buf.getvalue()[:300]!r}"
        h.note_case(what)
        ds = h.outcome(lambda: load_dataset(p, target, drop_missing=drop_missing), what)
        if ds is not None:
            front = h.outcome(lambda: solve(ds, max_depth=2), "solve after " + what)
            if front is not None:
                assert len(front) >= 1

    return case


def target_frames(h: Harness):
    from hypothesis import given

    from treeexplorer.api import solve

    st, np, s = _strategies()
    import pandas as pd

    def column(kind, n, draw):
        ints = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
        if kind == "int":
            return ints
        if kind == "float":
            return draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n))
        if kind == "bool":
            return [v > 0 for v in ints]
        if kind == "str":
            return [["a", "b", "c", "d"][v % 4] for v in ints]
        if kind == "mixed":
            return pd.Series(
                draw(st.lists(st.one_of(s["number"], s["text"], st.none()), min_size=n, max_size=n)), dtype=object
            )
        if kind == "category":
            return pd.Categorical([["u", "v"][v % 2] for v in ints])
        if kind == "datetime":
            return pd.to_datetime(np.array(ints) + 20000, unit="D")
        if kind == "timedelta":
            return pd.to_timedelta(ints, unit="h")
        if kind == "complex":
            return np.array(ints) + 1j * np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
        if kind == "Int64":
            return pd.array([None if v == 0 else v for v in ints], dtype="Int64")
        if kind == "list":
            return pd.Series([[v] for v in ints], dtype=object)
        if kind == "period":
            return pd.period_range("2020-01", periods=n, freq="M")
        return [None] * n

    kinds = ["int", "float", "bool", "str", "mixed", "category", "datetime", "timedelta", "complex", "Int64", "list",
             "period", "none"]  # fmt: skip

    @st.composite
    def frame(draw):
        n = draw(st.one_of(st.integers(4, 12), st.integers(0, 3)))
        cols = draw(st.lists(st.sampled_from(kinds), min_size=2, max_size=4))
        data = {f"c{j}_{k}": column(k, n, draw) for j, k in enumerate(cols)}
        return pd.DataFrame(data) if n else pd.DataFrame({k: [] for k in data})

    @given(
        df=frame(),
        target=st.one_of(st.none(), st.none(), st.integers(-5, 5)),
        categorical=st.lists(st.sampled_from(["c0_int", "c1_float", "c0_datetime", "c1_mixed", "zz"]), max_size=2),
        drop_missing=st.booleans(),
        test_size=st.one_of(st.none(), st.sampled_from([0.3, 0.5])),
    )
    def case(df, target, categorical, drop_missing, test_size):
        what = f"solve(DataFrame {dict(df.dtypes.astype(str))}, target={target!r}, categorical={categorical})"
        h.note_case(what + "\n" + df.head(12).to_string()[:2000])
        h.outcome(
            lambda: solve(
                df, target, max_depth=2, categorical=categorical, drop_missing=drop_missing, test_size=test_size
            ),
            what,
        )

    return case


def _front_bases():
    import numpy as np

    from treeexplorer.api import solve
    from treeexplorer.front import Front, FrontTree, compute_metrics
    from treeexplorer.schema import Column, Schema
    from treeexplorer.tree import Tree

    bases = [solve("iris", max_depth=3, test_size=0.3).to_dict()]
    schema = Schema((Column("colour", "categorical", ("a", "b", "c")), Column("x", "numeric")), "y", ("n", "p"))
    tree = Tree(
        [0, -1, 1, -1, -1], [2, 0, 0, 0, 0], [0, 0, 2.5, 0, 0], [-1, -1, 3, -1, -1], [1, -1, 4, -1, -1],
        [[3, 3], [2, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 0, 1, 0], schema,
        [0, 2, 2, 2, 2, 2], [1, 2], [0.0, 1.0],
    )  # fmt: skip
    X = np.array([[0, 1], [0, 2], [1, 1], [1, 3], [1, 4], [2, 5]], dtype=float)
    y = np.array([0, 0, 0, 1, 1, 1])
    tree = tree.with_counts(X, y)
    entry = FrontTree(0, tree, True, compute_metrics(tree, X, y))
    bases.append(Front([entry], "branches", "none", "toy", "done", 0.0, 6, 0, "toy", schema).to_dict())
    return bases


def _paths(d, prefix=()):
    """Every (container, key) pair of a JSON document, for mutations."""
    out = []
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        out.append((d, k))
        out.extend(_paths(v, (*prefix, k)))
    return out


def target_front(h: Harness):
    from hypothesis import given

    from treeexplorer import render
    from treeexplorer.cli import main
    from treeexplorer.export import rules_text, tree_from_json, tree_json
    from treeexplorer.front import Front

    st, np, s = _strategies()
    bases = _front_bases()
    json_value = st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.floats(), st.text(max_size=5)),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
        max_leaves=8,
    )
    mutation = st.tuples(
        st.floats(0, 1),
        st.sampled_from(["replace", "delete", "int", "self", "zero", "copy-sibling", "list-wrap"]),
        json_value,
        st.integers(-2, 12),
    )

    def mutate(d, muts):
        d = json.loads(json.dumps(d))
        for pos, op, value, k in muts:
            paths = _paths(d)
            if not paths:
                break
            c, key = paths[min(int(pos * len(paths)), len(paths) - 1)]
            if op == "replace":
                c[key] = value
            elif op == "delete":
                del c[key]
            elif op == "int":
                c[key] = k
            elif op == "self":  # a node pointing at itself: the 22 GB rules / hanging png of the issue
                c[key] = c.get("id", 0) if isinstance(c, dict) else 0
            elif op == "zero":
                c[key] = 0
            elif op == "copy-sibling" and isinstance(c, list) and c:
                c.append(json.loads(json.dumps(c[0])))
            elif op == "list-wrap":
                c[key] = [c[key]]
        return d

    @given(
        base=st.integers(0, len(bases) - 1),
        muts=st.lists(mutation, min_size=0, max_size=4),
        whole=st.one_of(st.none(), json_value),
        cut=st.one_of(st.none(), st.floats(0, 1)),
        cli=st.sampled_from([None, "rules", "json", "svg", "png"]),
    )
    def case(base, muts, whole, cut, cli):
        d = whole if whole is not None else mutate(bases[base], muts)
        text = json.dumps(d)
        if cut is not None:
            text = text[: int(cut * len(text))]
        p = h.tmp / "front.json"
        p.write_text(text)
        what = f"front base={base} muts={muts} whole={whole!r} cut={cut}: {text[:300]}"
        h.note_case(what)
        front = h.outcome(lambda: Front.from_json(p), "Front.from_json of " + what)
        if front is None:
            return

        def use():
            for t in front.trees[:3]:
                rules_text(t.tree, front, t)
                tree_from_json(tree_json(t.tree, front, t))
                render.to_svg(t.tree, front=front, entry=t)
            front.pareto()
            front.to_json()
            return True

        h.outcome(use, "using the loaded " + what)
        if cli is not None and front.trees:
            tid = front.trees[0].id
            out = h.tmp / f"out.{cli}"
            argv = ["export", str(p), "--tree", str(tid), "--format", cli, "-o", str(out)]
            _run_cli(h, main, argv, what)

    return case


def _run_cli(h: Harness, main, argv, what):
    """The CLI contract: exit 0, or 2/3 with exactly one ``error:`` line (argparse's usage errors aside)."""
    err, out = io.StringIO(), io.StringIO()

    def call():
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                return main(argv)
            except SystemExit as exc:  # argparse: "usage: ..." and "error: ..." lines, exit 2
                return ("argparse", exc.code)

    code = h.outcome(call, f"CLI {argv} ({what})")
    text = err.getvalue()
    if isinstance(code, tuple):
        assert code[1] == 2 and "error:" in text, (argv, text)
        return
    assert "Traceback" not in text + out.getvalue(), (argv, text)
    assert code in (0, 2, 3), (argv, code, text)
    if code != 0:
        assert text.startswith("error: ") and text.count("\n") == 1, (argv, text)


def _tiny_iris():
    import pandas as pd

    from treeexplorer.data import ASSETS_DIR

    df = pd.read_csv(ASSETS_DIR / "iris.csv")
    return df.iloc[::5].reset_index(drop=True)  # 30 rows, 10 per class


def target_api(h: Harness):
    from hypothesis import given

    from treeexplorer.api import solve
    from treeexplorer.registry import available_solvers, get_solver

    st, np, s = _strategies()
    df = _tiny_iris()
    X, y = df.iloc[:, :4].to_numpy(), df.iloc[:, 4].to_numpy()
    new_class = df.assign(species=["martian"] * len(df))
    specs = [get_solver(n) for n in available_solvers()]
    param_names = sorted({p.name for spec in specs for p in spec.params} | {"nope", "max_depth"})
    keywords = {
        "target": st.one_of(s["any"], st.sampled_from(["species", "sepal_length", -1, 0, 4])),
        "discretizer": st.one_of(s["any"], st.sampled_from(["none", "exact", "mid", "mdlp", "quantile", "uniform"])),
        "n_bins": s["any"],
        "test_size": st.one_of(s["any"], st.floats(-1, 2)),
        "seed": s["any"],
        "time_limit": st.one_of(s["any"], st.floats(0.05, 5)),
        "progress": st.sampled_from([None, len, 5, "x", lambda d: None]),
        "control": st.sampled_from([None, object(), 5, "control"]),
        "drop_missing": s["any"],
        "categorical": st.one_of(s["any"], st.lists(st.sampled_from(["sepal_length", "petal_width", "zz"]))),
        "mid_budget": st.one_of(s["any"], st.floats(-1, 0.3)),
        "criterion": st.one_of(s["any"], st.sampled_from(["entropy", "gini"])),
        "test": st.one_of(s["any"], st.sampled_from(["frame", "frame-no-target", "frame-new-class", "iris"])),
    }
    data = st.sampled_from(["frame", "arrays", "tuple", "rows", "name", "path", "junk", "dict", "text"])

    @given(
        which=data,
        kw=st.fixed_dictionaries({}, optional=keywords),
        params=st.dictionaries(st.sampled_from(param_names), s["any"], max_size=3),
        solver_values=st.dictionaries(st.sampled_from(param_names), s["any"], max_size=4),
        solver=st.sampled_from([spec.name for spec in specs] if h.cfg.get("all_solvers") else ["cart"]),
        junk_text=st.one_of(
            s["text"], s["odd"], st.sampled_from(["a" * 5000, "~nouser/x.csv", "sklearn:nope", "/", "iris/", "..."])
        ),
    )
    def case(which, kw, params, solver_values, solver, junk_text):
        from treeexplorer.solvers import Control

        args = {
            "frame": (df,),
            "arrays": (X, y),
            "tuple": ((X, y),),
            "rows": (df.to_numpy().tolist(),),
            "name": ("iris",),
            "path": (h.tmp / "nope.csv",),
            "junk": (3.5,),
            "text": (junk_text,),
            "dict": (df.to_dict("list"),),
        }[which]
        if len(args) == 2:
            kw.pop("target", None)
        tests = {"frame": df, "frame-no-target": df.drop(columns="species"), "frame-new-class": new_class}
        if isinstance(kw.get("test"), str) and kw["test"] in tests:
            kw["test"] = tests[kw["test"]]
        kw = {**kw, "solver": solver}  # in CI only CART runs end to end (compiled once); others validate below
        if h.cfg.get("all_solvers"):
            kw["time_limit"] = 5.0  # a solver past it (and the case alarm) is a hang
        if "control" in kw and kw["control"] is None:
            kw["control"] = Control()
        kw.pop("params", None)
        params = {k: v for k, v in params.items() if k not in kw}  # solve(criterion=..., **{"criterion": ...})
        what = f"solve({which}, {kw!r}, **{params!r})"
        h.note_case(what)
        h.outcome(lambda: solve(*args, **kw, **params), what)
        for spec in specs:  # every solver's parameters, random values of every type
            h.outcome(lambda spec=spec: spec.resolve(solver_values), f"{spec.name}.resolve({solver_values!r})")

    return case


def target_cli(h: Harness):
    from hypothesis import given

    from treeexplorer.cli import main

    st, np, s = _strategies()
    df = _tiny_iris()
    good = h.tmp / "tiny.csv"
    df.to_csv(good, index=False)
    value = st.one_of(
        st.integers(-3, 6).map(str),
        st.floats(-2, 2).map(repr),
        s["odd"],
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=5),
        st.sampled_from(["true", "no", "maybe", "1e400", "nan", "0.3", "2", "-1"]),
    )
    param_name = st.sampled_from(
        ["max_depth", "min_samples_leaf", "max_leaves", "front", "seed", "time_limit", "nope", "", "a b", "x-y"]
    )
    option = st.one_of(
        st.tuples(
            st.sampled_from(["--max-depth", "--time-limit", "--test-size", "--seed", "--n-bins", "--mid-budget"]),
            value,
        ),
        st.tuples(st.just("--discretizer"), st.sampled_from(["none", "exact", "mid", "mdlp", "quantile", "uniform"])),
        st.tuples(st.just("--target"), st.sampled_from(["species", "petal_width", "zz", "0"])),
        st.tuples(st.just("-P"), st.tuples(param_name, value).map(lambda t: f"{t[0]}={t[1]}")),
        st.tuples(st.just("--out"), st.sampled_from(["front.json", "missing/front.json", "."])),
        st.tuples(st.just("--categorical"), st.sampled_from(["petal_width", "zz"])),
    )

    @given(data=st.sampled_from([str(good), "iris-does-not-exist", str(h.tmp)]), opts=st.lists(option, max_size=4))
    def case(data, opts):
        argv = ["solve", data]
        for flag, v in opts:
            if flag == "--out":
                v = str(h.tmp / v)
            argv += [flag, v]
        h.note_case(f"CLI {argv}")
        _run_cli(h, main, argv, "solve")

    return case


def _warm_up() -> None:
    """Import and compile what the cases use before the memory limit: the limit bounds the cases, not imports
    (shared libraries such as scipy's map large segments)."""
    import pandas as pd  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import scipy.spatial  # noqa: F401

    import treeexplorer.cli  # noqa: F401
    from treeexplorer import render
    from treeexplorer.api import solve
    from treeexplorer.discretize import fit_discretizer  # noqa: F401

    front = solve("iris", max_depth=2)
    render.to_svg(front[1].tree, front=front, entry=front[1])
    render.to_png(front[1].tree, front=front, entry=front[1])


def _mapped_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _warm_up_solvers() -> None:
    """Compile every solver's kernels before the case alarm runs (a cold numba compile is not a hang)."""
    from treeexplorer.api import solve
    from treeexplorer.registry import available_solvers

    for name in available_solvers():
        try:
            solve("iris", solver=name, max_depth=2, time_limit=60)
        except ValueError:
            pass  # a solver that needs other settings on iris still compiled what it reached


def child_main(cfg) -> None:
    import resource

    _warm_up()
    if cfg.get("all_solvers"):
        _warm_up_solvers()
    limit = _mapped_bytes() + cfg["memory_mb"] * 2**20  # what is mapped now plus the cases' budget
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import warnings

    warnings.simplefilter("ignore")  # warnings are not failures here; tracebacks, hangs and OOM are
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import seed as hyp_seed

    settings.register_profile(
        "treeexplorer-ci",
        derandomize=True,
        deadline=None,
        database=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
    )
    settings.register_profile("treeexplorer-long", parent=settings.get_profile("treeexplorer-ci"), derandomize=False)
    h = Harness(cfg)
    builders = {t: globals()[f"target_{t}"] for t in TARGETS}
    for name in cfg["targets"]:
        h.cases, h.outcomes, h.messages, t0 = 0, {}, [], time.perf_counter()
        try:
            profile = settings.get_profile("treeexplorer-ci" if cfg["seed"] is None else "treeexplorer-long")
            test = settings(profile, max_examples=cfg["examples"][name])(builders[name](h))
            if cfg["seed"] is not None:
                test = hyp_seed(cfg["seed"])(test)
            test()
            r = {"ok": True}
        except BaseException as exc:  # noqa: B036 -- report everything, a KeyboardInterrupt included
            notes = "\n".join(getattr(exc, "__notes__", []))
            r = {"ok": False, "error": f"{type(exc).__name__}: {exc}\n{notes}"[:6000]}
        r.update(target=name, cases=h.cases, outcomes=h.outcomes, seconds=round(time.perf_counter() - t0, 2))
        r["messages"] = h.messages
        print("FUZZ-RESULT " + json.dumps(r), flush=True)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--child":
    child_main(json.loads(sys.argv[2]))

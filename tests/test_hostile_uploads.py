"""Hostile uploads are bounded while they are read (issue 53): a gzip or zip bomb, a huge header, NUL bytes and
deep quoting are each refused in one line, within bounded time and memory, while another session keeps solving.

The bombs are built here with bounded generators (streamed compression): the test never holds what they expand to.
"""

from __future__ import annotations

import io
import threading
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pandas as pd
import pytest

from treeexplorer.data import DataError
from treeexplorer.target import guess_target
from treeexplorer.ui.controller import EXPANSION_FACTOR, MAX_UPLOAD_BYTES, MAX_UPLOAD_COLUMNS, parse_upload

ROW = b"1,2,x\n" * 10_000
LIMIT = EXPANSION_FACTOR * MAX_UPLOAD_BYTES  # what a compressed upload may expand to


def gzip_bomb(expanded: int = 200 << 20) -> bytes:
    """About 300 KB of gzip that expands to ``expanded`` bytes of CSV."""
    co = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip stream
    out, n = [co.compress(b"a,b,label\n")], 0
    while n < expanded:
        out.append(co.compress(ROW))
        n += len(ROW)
    out.append(co.flush())
    return b"".join(out)


def zip_bomb(expanded: int = 200 << 20, honest_header: bool = True) -> bytes:
    """A single-file deflated zip of ``expanded`` bytes of CSV, written through a stream."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("t.csv", "w") as fh:
            fh.write(b"a,b,label\n")
            n = 0
            while n < expanded:
                fh.write(ROW)
                n += len(ROW)
    raw = bytearray(buf.getvalue())
    if not honest_header:  # the central directory lies: it claims 1 KB
        cd = raw.rfind(b"PK\x01\x02")
        raw[cd + 24 : cd + 28] = (1024).to_bytes(4, "little")
    return bytes(raw)


def refused(raw: bytes, name: str, *match: str, seconds: float = 30, peak_mb: float | None = None) -> str:
    """``parse_upload`` refuses ``raw`` with one line holding every ``match``, in time and memory."""
    if peak_mb is not None:  # (tracing slows the reading: the time is measured without it)
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(DataError) as err:
            parse_upload(raw, name)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    msg = str(err.value)
    assert "\n" not in msg and all(m in msg for m in match), msg
    assert took < seconds, f"{took:.1f} s"
    if peak_mb is not None:
        assert peak < peak_mb, f"{peak:.0f} MB held while reading"
    return msg


def test_a_gzip_bomb_stops_at_a_few_times_the_upload_cap():
    bomb = gzip_bomb()
    assert len(bomb) < 400_000 and len(bomb) < MAX_UPLOAD_BYTES
    refused(bomb, "bomb.csv", "bomb.csv", "gzip data expands to more than 80 MB", peak_mb=3 * LIMIT / 2**20)


def test_a_zip_bomb_stops_before_or_while_it_is_read():
    refused(zip_bomb(), "bomb.csv", "zipped table expands to more than 80 MB", seconds=10, peak_mb=20)
    lying = zip_bomb(honest_header=False)  # claims 1 KB: read as 1 KB, whose checksum then fails
    refused(lying, "bomb.csv", "bomb.csv", "damaged", seconds=10, peak_mb=20)


def test_a_million_column_header_is_refused_before_parsing():
    header = ",".join(f"c{i}" for i in range(10**6)).encode()
    raw = header + b"\n" + b",".join([b"1"] * 10**6) + b"\n"
    assert len(raw) < MAX_UPLOAD_BYTES
    refused(raw, "wide.csv", "1,000,000 columns, over the limit of an upload", seconds=20)
    assert MAX_UPLOAD_COLUMNS < 10**6


def test_more_rows_than_an_upload_may_have_stop_the_parser():
    from treeexplorer.ui.controller import MAX_UPLOAD_ROWS

    raw = b"a,b\n" + b"1,x\n" * (MAX_UPLOAD_ROWS + 5000)
    refused(raw, "long.csv", f"more than {MAX_UPLOAD_ROWS:,} rows", "over the limit of an upload")


def test_nul_bytes_and_deep_quoting_are_one_line():
    refused(b"a,b\n1,\x00\n" * 1000, "nul.csv", "NUL")
    refused(b'a,b\n"' + b"x" * 10**7, "quote.csv", "quote.csv", seconds=20)  # a quote never closed


def test_guessing_the_target_of_a_wide_table_is_linear():
    def took(n_cols: int) -> float:
        df = pd.DataFrame(np.zeros((5, n_cols), dtype=np.int64) + np.arange(5)[:, None] % 3)
        df.columns = [f"c{i}" for i in range(n_cols)]
        t0 = time.perf_counter()
        guess_target(df)
        return time.perf_counter() - t0

    small, big = min(took(500) for _ in range(2)), min(took(4000) for _ in range(2))
    assert big < 8 * small * 3, (small, big)  # 8x the columns: about 8x the time (quadratic would be 64x)


def test_another_session_solves_while_a_bomb_is_read():
    import treeexplorer as tx

    tx.solve("iris", solver="cart", max_depth=2)  # compiled and warm before the clock starts
    bomb = gzip_bomb(400 << 20)
    outcome: dict = {}

    def read():
        try:
            parse_upload(bomb, "bomb.csv")
        except DataError as exc:
            outcome["error"] = str(exc)

    reader = threading.Thread(target=read)
    reader.start()
    t0 = time.perf_counter()
    front = tx.solve("iris", solver="cart", max_depth=3)
    solved = time.perf_counter() - t0
    reader.join(120)
    assert len(front) > 0 and solved < 20, solved
    assert "expands to more than" in outcome["error"]


# -- a crafted front JSON: its values are checked against its schema ----------------------------------------------
@pytest.fixture(scope="module")
def categorical_front_dict():
    import json

    import treeexplorer as tx
    from treeexplorer.export import front_json

    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], 90)
    df = pd.DataFrame({"colour": colour, "x": rng.normal(size=90), "y": np.where(colour == "red", "p", "q")})
    front = tx.solve(df, target="y", solver="cart", max_depth=2, test_size=0.0)
    return json.loads(front_json(front))


def _first_categorical_test(d: dict) -> dict:
    for t in d["trees"]:
        for node in t["tree"]["nodes"]:
            test = node.get("test")
            if test and d["schema"]["columns"][test[0]]["kind"] == "categorical":
                return node
    raise AssertionError("no categorical test in the front")


def test_a_crafted_front_with_a_category_code_out_of_range_is_refused(categorical_front_dict):
    import copy

    from treeexplorer.validate import FrontError, check_front_dict

    check_front_dict(categorical_front_dict, "f.json")  # as written: fine
    d = copy.deepcopy(categorical_front_dict)
    _first_categorical_test(d)["test"][2] = 99
    with pytest.raises(FrontError, match=r"f.json: .*category code 99 of column \"colour\" is not one of its 3") as e:
        check_front_dict(d, "f.json")
    assert "\n" not in str(e.value)


def test_a_crafted_front_with_an_accuracy_of_5_is_refused(categorical_front_dict):
    import copy

    from treeexplorer.validate import FrontError, check_front_dict

    d = copy.deepcopy(categorical_front_dict)
    d["trees"][-1]["train_accuracy"] = 5.0
    with pytest.raises(FrontError, match=r"metric 'train_accuracy' must lie in \[0, 1\], got 5.0"):
        check_front_dict(d, "f.json")
    d = copy.deepcopy(categorical_front_dict)
    d["trees"][-1]["train_errors"] = -3
    with pytest.raises(FrontError, match=r"metric 'train_errors' must lie in \[0, inf\], got -3"):
        check_front_dict(d, "f.json")

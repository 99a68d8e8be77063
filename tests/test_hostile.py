"""Hostile input (issue 19): every bad file, front and parameter gets one clear line, never a traceback.

One test per case of the issue; the property-based search for the next ones is ``test_fuzz.py``.
"""

import gzip
import io
import json
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from treeexplorer.solvers import Control

from treeexplorer import DataError, load_dataset, solve
from treeexplorer.cli import EXIT_BAD_INPUT, main
from treeexplorer.data import read_text_table
from treeexplorer.export import tree_from_json, tree_json
from treeexplorer.front import Front
from treeexplorer.registry import Param, get_solver
from treeexplorer.validate import FrontError

IRIS_CSV = "sepal_length,sepal_width,petal_length,petal_width,species\n" + "".join(
    f"{5 + i % 7 * 0.3:.1f},{3 + i % 5 * 0.2:.1f},{1 + i % 11 * 0.5:.1f},{0.2 + i % 3:.1f},{['a', 'b', 'c'][i % 3]}\n"
    for i in range(30)
)


def one_line_error(capsys, argv, *match):
    """Run the CLI in-process: exit code 2, and stderr is one ``error:`` line containing every ``match``."""
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for m in match:
        assert m in err, err
    return err


def xlsx_bytes() -> bytes:
    """A small deflated workbook with the parts every .xlsx has."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        z.writestr("_rels/.rels", "<Relationships/>")
        z.writestr("xl/workbook.xml", "<workbook><sheets><sheet name='a'/></sheets></workbook>")
        z.writestr("xl/worksheets/sheet1.xml", "<sheetData>" + "<row><c><v>1</v></c></row>" * 50 + "</sheetData>")
    return buf.getvalue()


# -- data files --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["book.xlsx", "book.csv"])
def test_excel_workbook_is_named_renamed_or_not(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(xlsx_bytes())
    with pytest.raises(DataError, match=r"Excel workbook \(\.xlsx\): save the sheet as CSV"):
        load_dataset(p)


def test_random_binary_saved_as_csv_is_called_binary(tmp_path):
    rng = np.random.default_rng(1)
    for size in (5000, 80):
        p = tmp_path / f"r{size}.csv"
        p.write_bytes(rng.bytes(size))
        with pytest.raises(DataError, match=r"binary file") as err:
            load_dataset(p)
        assert "\n" not in str(err.value)


def test_gzip_csv_is_read(tmp_path):
    p = tmp_path / "t.csv"  # named .csv, holding gzip: the content decides
    p.write_bytes(gzip.compress(IRIS_CSV.encode()))
    ds = load_dataset(p)
    assert ds.schema.feature_names == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert ds.n_rows == 30


def test_damaged_gzip_is_one_line(tmp_path):
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(IRIS_CSV.encode())[:40])
    with pytest.raises(DataError, match="a damaged gzip file"):
        load_dataset(p)


def test_zip_with_one_csv_is_read_and_other_zips_named(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("iris.csv", IRIS_CSV)
    (tmp_path / "one.zip").write_bytes(buf.getvalue())
    assert load_dataset(tmp_path / "one.zip").n_rows == 30
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.csv", IRIS_CSV)
        z.writestr("b.csv", IRIS_CSV)
    (tmp_path / "two.zip").write_bytes(buf.getvalue())
    with pytest.raises(DataError, match="a zip archive with 2 files"):
        load_dataset(tmp_path / "two.zip")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_unicode_encodings_give_clean_column_names(tmp_path, encoding):
    p = tmp_path / "u.csv"
    p.write_bytes(IRIS_CSV.replace("species", "espèce").encode(encoding))
    ds = load_dataset(p)
    assert ds.schema.feature_names == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert ds.schema.target == "espèce"


def test_parquet_renamed_csv_is_read_and_truncated_parquet_is_one_line(tmp_path):
    df = pd.read_csv(io.StringIO(IRIS_CSV))
    p = tmp_path / "t.csv"
    df.to_parquet(p)
    assert load_dataset(p).n_rows == 30
    raw = p.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataError, match=r"cut.parquet: not a readable Parquet file \(the file seems truncated\)") as e:
        load_dataset(cut)
    assert "\n" not in str(e.value)


def test_other_binary_formats_are_named(tmp_path):
    for magic, what in [(b"%PDF-1.4\n", "PDF"), (b"\x89PNG\r\n\x1a\n", "PNG"), (b"SQLite format 3\x00", "SQLite")]:
        p = tmp_path / "x.csv"
        p.write_bytes(magic + bytes(200))
        with pytest.raises(DataError, match=what):
            load_dataset(p)


def test_semicolon_file_with_decimal_commas_reads_numbers(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.normal(size=60).round(2)
    text = "a;b;y\n" + "".join(f"{str(x).replace('.', ',')};{i % 3};{'p' if x > 0 else 'q'}\n" for i, x in enumerate(a))
    p = tmp_path / "dec.csv"
    p.write_text(text)
    ds = load_dataset(p)
    assert [c.kind for c in ds.schema.columns] == ["numeric", "numeric"]
    np.testing.assert_allclose(ds.X[:, 0], a)
    assert any("decimal commas" in n and "'a'" in n for n in ds.notices)
    front = solve(p, max_depth=1)
    assert front.trees[-1].metrics["train_accuracy"] == 1.0  # one threshold on a, near 0, separates p/q
    assert "a <= " in " ".join(front.trees[-1].tree.to_dict()["nodes"][0]["text"].replace("≤", "<=").split("  "))


def test_quoted_thousands_in_a_comma_file(tmp_path):
    p = tmp_path / "k.csv"
    p.write_text('amount,y\n"1,200",p\n"2,500",q\n"13,000",p\n"400",q\n')
    ds = load_dataset(p)
    assert ds.X[:, 0].tolist() == [1200, 2500, 13000, 400]
    assert any("thousands separators" in n for n in ds.notices)


def test_mixed_type_target_labels_are_normalised_and_reported():
    df = pd.DataFrame({"x": range(6), "y": pd.Series([1, "1", 1.0, 2, "2", 2.0], dtype=object)})
    ds = load_dataset(df)
    assert ds.schema.classes == ("1", "2")
    assert ds.y.tolist() == [0, 0, 0, 1, 1, 1]
    assert any("mixes" in n and "'y'" in n for n in ds.notices)
    # the same rule for a categorical feature: "a" and 'a' written two ways are one category
    df = pd.DataFrame({"c": pd.Series([0, "0", 0.0, "z", "z", 0], dtype=object), "y": list("pqpqpq")})
    ds = load_dataset(df)
    assert ds.schema.columns[0].categories == ("0", "z")


def test_pandas_index_column_is_dropped_with_a_notice(tmp_path):
    df = pd.read_csv(io.StringIO(IRIS_CSV))
    p = tmp_path / "idx.csv"
    df.to_csv(p)  # writes the index as a first, unnamed column
    ds = load_dataset(p)
    assert "Unnamed: 0" not in ds.schema.feature_names and ds.schema.n_features == 4
    assert any("Unnamed: 0" in n for n in ds.notices)
    # an unnamed column that is not a row index stays
    df2 = df.copy()
    df2.insert(0, "Unnamed: 0", [7, 3] * 15)
    assert "Unnamed: 0" in load_dataset(df2).schema.feature_names


def test_dates_refused_durations_as_seconds_complex_refused_or_real():
    y = list("pqpqpq")
    dates = pd.to_datetime(["2020-01-01", "2020-02-01"] * 3)
    with pytest.raises(DataError, match=r"column 'd' holds dates/times.*declare the column categorical"):
        load_dataset(pd.DataFrame({"d": dates, "y": y}))
    assert load_dataset(pd.DataFrame({"d": dates, "y": y}), categorical=["d"]).schema.columns[0].is_categorical
    ds = load_dataset(pd.DataFrame({"t": pd.to_timedelta([1, 2, 3, 4, 5, 6], unit="min"), "y": y}))
    assert ds.X[:, 0].tolist() == [60, 120, 180, 240, 300, 360]
    assert any("durations: read as seconds" in n for n in ds.notices)
    with pytest.raises(DataError, match="column 'z' holds complex numbers"):
        load_dataset(pd.DataFrame({"z": np.array([1 + 2j, 2, 3, 4, 5, 6]), "y": y}))
    ds = load_dataset(pd.DataFrame({"z": np.array([1 + 0j, 2, 3, 4, 5, 6]), "y": y}))
    assert ds.X[:, 0].tolist() == [1, 2, 3, 4, 5, 6] and ds.notices


def test_no_header_is_said(tmp_path):
    p = tmp_path / "nohead.csv"
    p.write_text("\n".join(IRIS_CSV.splitlines()[1:]) + "\n")  # the classic UCI .data layout
    with pytest.raises(DataError, match="seems to have no header row"):
        load_dataset(p)
    p.write_text("0,0,1\n1,0,1\n0,1,0\n1,1,0\n")  # was "duplicate column '0'"
    with pytest.raises(DataError, match="seems to have no header row"):
        load_dataset(p)
    # pandas' default names 0..p-1 are a header, not data
    p.write_text("0,1,2\n0.5,1,a\n1.5,2,b\n2.5,3,a\n")
    assert load_dataset(p).schema.feature_names == ["0", "1"]


def test_list_valued_column_is_one_line():
    df = pd.DataFrame({"a": [[1, 2], [3], [4]], "y": [1, 2, 1]})
    with pytest.raises(DataError, match=r"column 'a' holds list values \(row 1: \[1, 2\]\)"):
        solve(df)


def test_read_text_table_never_raises_csv_error():
    for text in ['a,b\n"x\ny', "a,b\r1,2\r\x00", 'a,"b\n', "a\tb\n" + "x" * 200000 + "\t1\n"]:
        try:
            read_text_table(text, "t")
        except DataError as exc:
            assert "\n" not in str(exc)


# -- front files --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def front_dict():
    return solve("iris", max_depth=2).to_dict()


def write_front(tmp_path, d, name="front.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d) if not isinstance(d, str) else d)
    return p


def mutate(d, fn):
    d = json.loads(json.dumps(d))
    fn(d)
    return d


def _self_child(d):
    d["trees"][1]["tree"]["nodes"][0]["true"] = 0


def _cycle_to_root(d):
    nodes = d["trees"][2]["tree"]["nodes"]
    leaf = next(n for n in nodes if "test" not in n)
    leaf.update(test=[0, "<=", 1.0], true=0, false=0)


def _shared_child(d):
    d["trees"][1]["tree"]["nodes"][0]["false"] = 1


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        (_self_child, "tree 1 node 0: not a tree: is its own child"),
        (_cycle_to_root, "not a tree: a cycle back to the root"),
        (_shared_child, "not a tree: node 1 is reached twice"),
        (lambda d: d["trees"][1]["tree"]["nodes"][0].update(true=99), "child 99 out of range 0..2"),
        (lambda d: d["trees"][1]["tree"]["nodes"][0].update(test=[17, "<=", 1.0]), "column index 17 out of range"),
        (lambda d: d.update(trees="abc"), "'trees' must be a list"),
        (lambda d: d["schema"].update(classes=[]), "'classes' is empty"),
        (lambda d: d["trees"][1]["tree"]["nodes"][1].update(counts=[50, 1, 0]), "not the sum of its children's"),
        (lambda d: d["trees"][1]["tree"]["nodes"][1].update(prediction_code=7), "prediction_code 7 out of range"),
        (lambda d: d["trees"][1].update(splits=5), "says splits=5 but its nodes give 1"),
        (lambda d: d["trees"][1].update(optimal="yes"), "'optimal' must be true or false"),
        (lambda d: d.pop("schema"), "missing 'schema'"),
        (lambda d: d["trees"][1]["tree"].update(nodes=[]), "has no nodes"),
    ],
)
def test_bad_front_is_refused_on_load_naming_file_and_problem(tmp_path, capsys, front_dict, fn, match):
    p = write_front(tmp_path, mutate(front_dict, fn))
    with pytest.raises(FrontError, match=match) as e:
        Front.from_json(p)
    assert str(e.value).startswith(str(p)) and "\n" not in str(e.value)
    for fmt in ("rules", "png"):
        one_line_error(capsys, ["export", str(p), "--tree", "1", "--format", fmt, "-o", str(tmp_path / "o")], str(p))


def test_truncated_and_non_json_front_files_name_the_file(tmp_path, capsys, front_dict):
    text = json.dumps(front_dict)
    p = write_front(tmp_path, text[: len(text) // 2], "cut.json")
    one_line_error(
        capsys, ["export", str(p), "--tree", "0", "--format", "rules", "-o", str(tmp_path / "o")], "cut.json"
    )
    with pytest.raises(FrontError, match=r"cut.json: not valid JSON at line 1.*\(the file seems truncated\)"):
        Front.from_json(p)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(FrontError, match="bin.json: not a front file"):
        Front.from_json(tmp_path / "bin.json")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(FrontError, match="deep.json"):
        Front.from_json(tmp_path / "deep.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(FrontError, match="list.json: not a treeexplorer front file"):
        Front.from_json(tmp_path / "list.json")


def test_valid_front_round_trips_and_tree_json_is_checked(tmp_path, front_dict):
    p = write_front(tmp_path, front_dict)
    front = Front.from_json(p)
    assert len(front) == len(front_dict["trees"])
    text = tree_json(front[1].tree, front, front[1])
    assert tree_from_json(text).n_splits == 1
    d = json.loads(text)
    d["nodes"][0]["false"] = 0
    with pytest.raises(FrontError, match="not a tree"):
        tree_from_json(json.dumps(d))


def test_self_child_front_via_real_cli_exits_fast_with_one_line(tmp_path, front_dict):
    p = write_front(tmp_path, mutate(front_dict, _self_child))
    for fmt in ("rules", "png"):
        r = subprocess.run(
            [sys.executable, "-m", "treeexplorer.cli", "export", str(p), "--tree", "1", "--format", fmt, "-o", "x"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert r.returncode == EXIT_BAD_INPUT and r.stderr.count("\n") == 1 and "is its own child" in r.stderr


# -- parameters and API -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("seed", "use --seed"),
        ("time_limit", "use --time-limit"),
        ("discretizer", "use --discretizer"),
        ("progress", "not available from the command line"),
        ("control", "not available from the command line"),
    ],
)
def test_cli_param_naming_a_solve_keyword(capsys, name, how):
    one_line_error(capsys, ["solve", "iris", "-P", f"{name}=1"], f"-P {name}: {name} is an option of solve", how)


def test_every_suggested_flag_exists():
    from treeexplorer.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["solve"].format_help()
    for flag in ("--seed", "--time-limit", "--discretizer", "--n-bins", "--test-size", "--mid-budget", "--criterion"):
        assert flag in text


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["-P", "front=maybe"], "parameter 'front' must be true or false, got 'maybe'"),
        (["-P", "max_depth=True"], "parameter 'max_depth' must be an integer, got 'True'"),
        (["-P", "max_depth=2.5"], "parameter 'max_depth' must be an integer, got '2.5'"),
        (["-P", "min_samples_leaf=0"], "parameter 'min_samples_leaf' must be >= 1, got 0"),
        (["--test-size", "1.5"], "test size must be a fraction strictly between 0 and 1 (or 0 for no held-out"),
        (["--test-size", "-0.2"], "test size must be a fraction strictly between 0 and 1"),
        (["--mid-budget", "-1", "--discretizer", "mid"], "mid_budget must be a positive, finite number"),
        (["--time-limit", "0"], "time_limit must be a positive, finite number"),
        (["--seed", "-3"], "seed must be an integer in [0, 2**32)"),
        (["-P", "max_depth=1", "-P", "max-depth=2"], "-P max_depth given twice"),
    ],
)
def test_cli_parameter_errors(capsys, argv, match):
    one_line_error(capsys, ["solve", "iris", *argv], match)


def test_cli_and_api_give_the_same_message():
    for name, value in [("front", "maybe"), ("max_depth", "abc"), ("max_depth", "-5"), ("min_samples_leaf", "0")]:
        spec = get_solver("cart")
        with pytest.raises(ValueError) as cli:
            spec.param(name).validate(value, text=True)
        api_value = {"abc": "abc", "maybe": "maybe"}.get(value, int(value) if value.lstrip("-").isdigit() else value)
        with pytest.raises(ValueError) as api:
            solve("iris", **{name: api_value})
        if isinstance(api_value, str):
            assert str(api.value) == str(cli.value)
        else:
            assert str(api.value) == str(cli.value).replace(f"'{value}'", value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (3, 3),
        (np.int64(3), 3),
        (3.0, 3),
        (True, None),
        ("3", None),
        (3.5, None),
        (float("nan"), None),
        ([3], None),
        (10**30, None),
    ],
)
def test_int_param_is_strict(value, ok):
    p = Param("max_depth", "int", 3, "", bounds=(0, None))
    if ok is None:
        with pytest.raises(ValueError, match="parameter 'max_depth' must be an integer"):
            p.validate(value)
    else:
        assert p.validate(value) == ok and type(p.validate(value)) is int


def test_bool_and_float_params_are_strict():
    b = Param("front", "bool", True, "")
    assert b.validate(np.bool_(False)) is False
    for text, want in [("true", True), ("No", False), ("1", True), ("0", False), (" yes ", True), ("off", False)]:
        assert b.validate(text, text=True) is want
    for bad in ("true", 1, 0, None if False else "maybe", 2.0):
        with pytest.raises(ValueError, match="must be true or false"):
            b.validate(bad)
    f = Param("sparsity", "float", 0.0, "", bounds=(0, None))
    assert f.validate(1) == 1.0 and f.validate("0.5", text=True) == 0.5
    for bad in (True, "0.5", float("inf"), float("nan")):
        with pytest.raises(ValueError, match="parameter 'sparsity' must be"):
            f.validate(bad)
    s = Param("sat_solver", "str", "glucose4", "", choices=("glucose4", "minisat22"))
    with pytest.raises(ValueError, match="must be text"):
        s.validate(4)


def test_api_argument_types(tmp_path):
    cases = [
        (dict(time_limit="5"), "time_limit must be a positive, finite number of seconds"),
        (dict(time_limit=float("inf")), "time_limit must be a positive, finite number"),
        (dict(time_limit=True), "time_limit must be"),
        (dict(control=object()), "control must be a treeexplorer.solvers.Control"),
        (dict(progress=5), "progress must be a function"),
        (dict(max_depth="3"), "parameter 'max_depth' must be an integer, got '3'"),
        (dict(max_depth=True), "parameter 'max_depth' must be an integer, got True"),
        (dict(front="maybe"), "parameter 'front' must be true or false"),
        (dict(test_size=1), "test size must be a fraction strictly between 0 and 1 (or 0 for no held-out rows), got 1"),
        (dict(test_size="0.3"), "test size must be a fraction"),
        (dict(n_bins=True, discretizer="quantile"), "n_bins must be a positive integer"),
        (dict(seed=1.5), "seed must be an integer"),
        (dict(drop_missing="yes"), "drop_missing must be True or False"),
        (dict(solver=["cart"]), "solver must be a solver name"),
        (dict(discretizer=3), "unknown discretizer 3"),
        (dict(target=1.5), "target must be a column name or position"),
        (dict(categorical=5), "categorical must be a list of column names"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
            solve("iris", **kwargs)
    with pytest.raises(DataError, match="data must be a file path, a bundled dataset name or a pandas DataFrame"):
        solve(42)


def test_categorical_string_is_one_column_not_its_characters():
    df = pd.DataFrame({"b": [1, 2, 1, 2, 3, 3], "y": list("pqpqpq")})
    ds = solve(df, categorical="b", max_depth=1).schema
    assert ds.columns[0].is_categorical


def test_arrays_and_lists_as_data():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = np.where(X[:, 1] > 0.5, "hi", "lo")
    for front in (solve(X, y, max_depth=1), solve((X, y), max_depth=1), solve(X.tolist(), list(y), max_depth=1)):
        assert front.schema.feature_names == ["x0", "x1", "x2"] and front.schema.target == "y"
        assert front.trees[-1].metrics["train_accuracy"] == 1.0
    table = np.column_stack([X, y]).tolist()  # rows with the label last: like a file
    assert solve(table, max_depth=1).schema.target == "x3"
    with pytest.raises(DataError, match="X has 40 rows but y has 3 labels"):
        solve(X, [1, 2, 3])
    with pytest.raises(DataError, match="rows of different lengths"):
        solve([[1, 2], [3]], [0, 1])
    with pytest.raises(DataError, match=r"X must be 2-D"):
        solve(np.zeros(5), np.zeros(5))
    with pytest.raises(DataError, match="labels y go with an array or DataFrame X"):
        solve("iris", np.zeros(150))


def test_cancelled_control_is_refused_not_silently_reused():
    c = Control()
    c.cancel()
    with pytest.raises(ValueError, match="this Control was already cancelled; a Control serves one run"):
        solve("iris", control=c)
    fresh = Control()
    assert solve("iris", control=fresh, max_depth=1).status == "done"


def test_out_into_missing_directory_is_checked_before_loading(tmp_path, capsys):
    # the data file does not exist either: the --out check comes first, before any loading or solving
    out = str(tmp_path / "missing" / "f.json")
    one_line_error(capsys, ["solve", "does-not-exist.csv", "--out", out], "does not exist; create it first")
    one_line_error(capsys, ["solve", "iris", "--out", str(tmp_path)], "is a directory")


def test_estimator_says_y_not_the_internal_column():
    from treeexplorer.estimator import TreeExplorerClassifier

    with pytest.raises(DataError) as e:
        TreeExplorerClassifier().fit(np.ones((6, 2)), np.ones(6))
    assert "__target__" not in str(e.value) and "target column 'y' has a single class" in str(e.value)
    with pytest.raises(DataError, match=r"y: missing labels at row\(s\) 1"):
        TreeExplorerClassifier().fit(np.ones((4, 2)), np.array(["a", None, "b", "a"], dtype=object))


def test_sat_conflict_rows_numbered_alike_in_error_and_notice():
    pytest.importorskip("pysat")
    df = pd.DataFrame({"a": [0, 0, 1, 1, 0, 1, 1] * 2, "y": ["p", "q", "p", "p", "p", "q", "p"] * 2})
    with pytest.raises(ValueError) as e:
        solve(df, solver="sat", discretizer="none")
    front = solve(df, solver="sat", discretizer="none", conflicts="majority")
    rows = "rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 (counted from 1 after the header)"
    assert rows in str(e.value)
    assert any(rows in n for n in front.notices), front.notices
    # with held-out rows the training rows keep their numbers in the user's table
    front = solve(df, solver="sat", discretizer="none", conflicts="majority", test_size=0.3, seed=1)
    note = next(n for n in front.notices if n.startswith("SAT:"))
    assert "counted from 1 after the header" in note and "(0-based)" not in note


def test_uniform_discretizer_on_extreme_values():
    from treeexplorer.discretize import fit_discretizer

    df = pd.DataFrame({"a": [-1e308, -1e308, -1e308, 1e308, 1e308, 1.7e308], "y": list("pppqqq")})
    ds = load_dataset(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning
        binz = fit_discretizer("uniform", ds.X, ds.y, ds.schema, n_bins=2)
    assert len(binz) >= 1 and all(np.isfinite(c.value) for c in binz.conditions)
    front = solve(df, solver="murtree", discretizer="uniform", n_bins=2, max_depth=1)
    assert front.trees[-1].metrics["train_accuracy"] == 1.0


def test_test_size_zero_means_no_held_out_rows_everywhere(capsys, tmp_path):
    assert solve("iris", max_depth=1, test_size=0).n_test == 0
    out = tmp_path / "f.json"
    assert main(["solve", "iris", "--max-depth", "1", "--test-size", "0", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["n_test"] == 0


def test_row_names_column_of_r_write_csv(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text('"a","y"\n"1",2.5,"p"\n"2",3.5,"q"\n"3",1,"p"\n')  # header one field short: row names first
    ds = load_dataset(p)
    assert ds.schema.feature_names == ["a"] and ds.X[:, 0].tolist() == [2.5, 3.5, 1.0]
    assert any("numbers the rows" in n for n in ds.notices)


def test_unreadable_paths_are_one_line(capsys, tmp_path):
    with pytest.raises(DataError, match="cannot open .*File name too long"):
        load_dataset("a" * 5000)
    with pytest.raises(DataError, match="is not a file"):
        load_dataset(tmp_path)
    one_line_error(capsys, ["discretize", "iris", "--method", "mdlp", "--out", str(tmp_path / "no" / "t.json")])


def test_solver_criterion_is_not_shadowed_by_the_discretizer(capsys):
    from treeexplorer.cli import main

    # -P criterion is the solver's own (CART), no longer taken by MID's --criterion
    assert main(["solve", "iris", "--solver", "cart", "-P", "criterion=entropy", "--max-depth", "2"]) == 0
    assert "error" not in capsys.readouterr().err


def test_names_equal_once_stripped_or_row_names_meeting_unnamed_are_duplicates(tmp_path):
    with pytest.raises(DataError, match="duplicate column name"):
        read_text_table(",0\n0,0,0\n0,0\n", "t")  # found by the long fuzz run (seed 21)
    with pytest.raises(DataError, match="duplicate column name"):
        read_text_table("a, a,y\n1,2,p\n3,4,q\n", "t")

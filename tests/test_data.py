"""Data loading: formats, column kinds, labels, and a clear error for every kind of bad input."""

import numpy as np
import pandas as pd
import pytest

from treeexplorer import DataError, bundled_datasets, load_dataset
from treeexplorer.api import prepare


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_bundled_datasets_load_with_original_labels():
    names = bundled_datasets()
    for n in ("iris", "car", "tic-tac-toe", "sklearn:wine", "sklearn:breast_cancer"):
        assert n in names
    iris = load_dataset("iris")
    assert iris.X.shape == (150, 4)
    assert iris.schema.classes == ("setosa", "versicolor", "virginica")
    assert np.bincount(iris.y).tolist() == [50, 50, 50]
    car = load_dataset("car")
    assert all(c.is_categorical for c in car.schema.columns)
    assert car.schema.columns[0].categories == ("high", "low", "med", "vhigh")


@pytest.mark.parametrize("sep", [",", "\t", ";"])
def test_delimiter_is_sniffed(tmp_path, sep):
    text = (
        sep.join(["a", "colour", "y"])
        + "\n"
        + "\n".join(sep.join([str(i), ["red", "blue"][i % 2], ["no", "yes"][i % 3 == 0]]) for i in range(10))
    )
    ds = load_dataset(write(tmp_path, "t.csv", text))
    assert ds.schema.feature_names == ["a", "colour"]
    assert ds.schema.columns[1].categories == ("blue", "red")
    assert ds.schema.classes == ("no", "yes")
    assert ds.X[0, 1] == 1.0 and ds.X[1, 1] == 0.0  # row 0 is red (code 1), row 1 blue (code 0)


def test_parquet_and_dataframe_and_target_choice(tmp_path):
    df = pd.DataFrame(
        {"y": [True, False, True, False], "x": [1.0, 2.0, 3.0, 4.0], "c": pd.Categorical(["u", "v", "u", "v"])}
    )
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    for src in (path, df):
        ds = load_dataset(src, target="y")
        assert ds.schema.target == "y"
        assert ds.schema.classes == (False, True)
        assert [c.kind for c in ds.schema.columns] == ["numeric", "categorical"]
    assert load_dataset(df, target=0).schema.target == "y"


def test_numeric_class_labels_keep_their_values():
    df = pd.DataFrame({"x": [1, 2, 3, 4], "label": [10, 20, 10, 20]})
    ds = load_dataset(df)
    assert ds.schema.classes == (10, 20)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("a,b\n", "no data rows"),
        ("a,b\n1,x\n", "at least 2 rows"),
        ("a,b\n1,x\n2,x\n3,x\n", "single class"),
        ("a,a,y\n1,2,p\n3,4,q\n", "duplicate column name"),
        ("a,y\n1,p\ninf,q\n3,p\n", "infinite values in column 'a' at row"),
        ("a,y\n1,p\n2,q\n3,p\n4,q\n5,p\nabc,q\n", r"non-numeric text in numeric column 'a': row 6 \('abc'\)"),
    ],
)
def test_bad_files_get_specific_errors(tmp_path, text, match):
    with pytest.raises(DataError, match=match):
        load_dataset(write(tmp_path, "bad.csv", text))


def test_missing_file_and_unknown_target(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_dataset(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="unknown target column 'zzz'; columns are"):
        load_dataset("iris", target="zzz")


def test_missing_values_are_kept_unless_dropped(tmp_path):
    p = write(tmp_path, "m.csv", "a,b,y\n1,,p\n2,3,q\n3,4,p\n,5,q\n6,7,q\n")
    kept = load_dataset(p)
    assert kept.n_rows == 5 and np.isnan(kept.X).sum(axis=0).tolist() == [1, 1]
    assert any("kept 2 row(s) with missing values" in n and "drop_missing=True" in n for n in kept.notices)
    ds = load_dataset(p, drop_missing=True)
    assert ds.n_rows == 3
    assert any("dropped 2 row(s)" in n for n in ds.notices)


def test_split_is_stratified_and_seeded():
    ds = load_dataset("iris")
    tr, te = ds.split(0.2, seed=3)
    assert te.n_rows == 30 and tr.n_rows == 120
    assert np.bincount(te.y).tolist() == [10, 10, 10]
    tr2, te2 = ds.split(0.2, seed=3)
    assert np.array_equal(te.X, te2.X)


def test_separate_test_file_is_encoded_with_train_schema(tmp_path):
    train = write(tmp_path, "train.csv", "c,x,y\nred,1,a\nblue,2,b\nred,3,a\nblue,4,b\n")
    test = write(tmp_path, "test.csv", "c,x,y\nblue,2.5,b\nred,0,a\n")
    prep = prepare(train, test=test)
    assert prep.X_test.tolist() == [[0.0, 2.5], [1.0, 0.0]]
    assert prep.y_test.tolist() == [1, 0]
    bad = write(tmp_path, "bad.csv", "c,x,y\ngreen,2.5,b\n")
    with pytest.raises(DataError, match="unknown category 'green' in column 'c'"):
        prepare(train, test=bad)


def test_rows_keep_their_numbers_after_dropping_missing(tmp_path):
    path = tmp_path / "d.csv"
    # one bad value among nine numbers: the column is numeric, the text an error at its file row (3)
    path.write_text("a,b,y\n1,,x\n2,3,y\n3,oops,x\n" + "".join(f"{i},{i},{'xy'[i % 2]}\n" for i in range(4, 12)))
    with pytest.raises(DataError, match=r"row 3 \('oops'\)"):
        load_dataset(path, drop_missing=True)

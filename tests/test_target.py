"""The default-target rule (treeexplorer.target.guess_target), shared by the library, the CLI and the app."""

import numpy as np
import pandas as pd
import pytest

import treeexplorer as tx
from treeexplorer.target import guess_target


def penguins_like(n=120, seed=0) -> pd.DataFrame:
    """The palmerpenguins layout: species first, text features, numbers, sex with gaps, year last."""
    rng = np.random.default_rng(seed)
    species = rng.choice(["Adelie", "Gentoo", "Chinstrap"], n)
    return pd.DataFrame(
        {
            "species": species,
            "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
            "bill_length_mm": rng.normal(44, 5, n).round(1),
            "bill_depth_mm": rng.normal(17, 2, n).round(1),
            "flipper_length_mm": rng.integers(172, 231, n),
            "body_mass_g": rng.integers(2700, 6300, n),
            "sex": rng.choice(["male", "female", None], n),
            "year": rng.choice([2007, 2008, 2009], n),
        }
    )


def test_penguins_take_species_not_the_year():
    g = guess_target(penguins_like())
    assert g.column == "species"
    assert "name" in g.reason
    assert not g.ambiguous


def test_titanic_takes_survived_over_class_and_says_class_was_possible():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "class": rng.choice(["1st", "2nd", "3rd", "crew"], 50),
            "age": rng.choice(["adult", "child"], 50),
            "sex": rng.choice(["male", "female"], 50),
            "survived": rng.choice(["yes", "no"], 50),
        }
    )
    g = guess_target(df)
    assert g.column == "survived"
    assert g.alternatives == ("class",)
    assert "'class' could also be the target" in g.describe()


@pytest.mark.parametrize("last", ["year", "Year", "birth_year", "recordedYear"])
def test_a_last_column_of_years_is_never_the_guess(last):
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.normal(size=40), "kind": rng.choice(["x", "y"], 40), last: rng.integers(1, 4, 40)})
    assert guess_target(df).column == "kind"


def test_years_by_value_ids_and_dates_are_skipped():
    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame(
        {
            "grade": rng.integers(1, 4, n),  # whole numbers, few values: the only plausible target
            "season": rng.choice([2019, 2020, 2021], n),  # reads as years
            "customerId": np.arange(n) % 7,
            "when": pd.date_range("2020-01-01", periods=n),
            "row": np.arange(n),  # all distinct: an id
        }
    )
    g = guess_target(df)
    assert g.column == "grade"
    assert "whole numbers" in g.reason


def test_text_column_before_numbers_and_names_match_case_and_separators():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"Outcome": rng.choice(["a", "b"], 30), "n": rng.integers(0, 3, 30)})
    assert guess_target(df).column == "Outcome"
    df = pd.DataFrame({"colour": rng.choice(["red", "blue"], 30), "n": rng.integers(0, 3, 30)})
    assert guess_target(df).column == "colour"


def test_a_named_column_with_too_many_values_is_not_taken():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"target": rng.normal(size=200), "grp": rng.choice(["u", "v"], 200)})
    assert guess_target(df).column == "grp"


def test_nothing_plausible_falls_back_to_the_last_column():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)})
    g = guess_target(df)
    assert g.column == "b" and "no column looks like classes" in g.reason


def test_load_dataset_records_the_guess_and_says_it_and_a_named_target_records_nothing():
    ds = tx.load_dataset(penguins_like(), drop_missing=True)
    assert ds.schema.target == "species"
    assert ds.target_guess is not None and ds.target_guess.column == "species"
    assert any(n.startswith("target 'species' (guessed") for n in ds.notices)
    named = tx.load_dataset(penguins_like(), "island", drop_missing=True)
    assert named.target_guess is None
    assert not any("guessed" in n for n in named.notices)


def test_solve_uses_the_same_rule_and_the_front_says_so():
    front = tx.solve(penguins_like(), solver="cart", max_depth=2, drop_missing=True)
    assert front.schema.target == "species"
    assert any("guessed" in n for n in front.notices)

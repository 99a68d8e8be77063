"""The run's stages and the shared facts each have one home: api composes the stage modules, the rules live in
``choices``, and every entry point offers the common solver parameters the registry lists."""

import inspect

import numpy as np
import pytest
from treeexplorer.solvers import Control

import treeexplorer.api as api
from treeexplorer import choices, compare, cv, encode, prepared, runner
from treeexplorer.cli import build_parser
from treeexplorer.estimator import TreeExplorerClassifier, TreeExplorerCV
from treeexplorer.registry import COMMON_PARAM_NAMES, SOLVER_NAMES, get_solver


def test_api_keeps_its_public_names_from_the_stage_modules():
    assert api.prepare is prepared.prepare and api.Prepared is prepared.Prepared
    assert api.numeric_features is encode.numeric_features and api.feature_matrix is encode.feature_matrix
    for name in api.__all__:
        assert hasattr(api, name), name


def test_the_rules_have_one_home():
    assert compare.more_tests_rerun is choices.more_tests_rerun
    assert cv.RULES is choices.RULES
    with pytest.raises(ValueError, match="rule must be one of 1se, best, got 'median'"):
        choices.check_rule("median")


def test_pick_levels_takes_the_simplest_level_within_one_standard_error():
    rows = [
        {"n_folds": 5, "cv_mean": 0.80, "cv_se": 0.01},
        {"n_folds": 5, "cv_mean": 0.90, "cv_se": 0.02},
        {"n_folds": 5, "cv_mean": 0.91, "cv_se": 0.02},
        {"n_folds": 4, "cv_mean": 0.99, "cv_se": 0.00},  # not every fold reaches it: no candidate
    ]
    assert choices.pick_levels(rows, 5) == (2, 1)
    assert choices.pick_levels(rows, 6) == (None, None)


def test_every_entry_point_offers_the_common_parameters():
    flags = {a.dest for sub in build_parser()._subparsers._group_actions[0].choices.values() for a in sub._actions}
    for est in (TreeExplorerClassifier, TreeExplorerCV):
        args = inspect.signature(est.__init__).parameters
        assert set(COMMON_PARAM_NAMES) <= set(args), est.__name__
    assert set(COMMON_PARAM_NAMES) <= flags


def test_docstrings_that_list_the_solvers_name_every_builtin():
    for doc in (api.solve.__doc__, TreeExplorerClassifier.__doc__):
        assert all(f"``{name}``" in doc for name in SOLVER_NAMES)


def test_encode_gives_the_raw_matrix_numeric_solvers_see():
    prep = prepared.prepare("iris")
    request = api.RunRequest.build("cart", {"max_depth": 2})
    notices: list = []
    feats, matrix, estimate, run_params = encode.encode(prep, request, Control(None), 1024.0, notices)
    assert matrix.shape == (len(prep.y_train), len(feats)) and matrix.dtype == np.float64
    assert estimate > 0 and run_params == request.params and get_solver("cart").input == "numeric"
    front = runner.run(prep, request.spec, request.params, [(feats, matrix, {})], "raw", Control(None), [])
    assert front.solver == "cart" and len(front) >= 1
    assert front.data_key == prepared.prepared_data_key(prep)

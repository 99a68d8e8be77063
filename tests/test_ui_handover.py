"""A reloaded tab (the theme switch reloads the page) continues its session: data, runs, selection."""

from __future__ import annotations

from treeexplorer.ui import handover
from treeexplorer.ui.controller import Controller, RunSettings


def _session_with_two_runs() -> Controller:
    c = Controller(test_size=0.3)
    assert c.load_bundled("wine")
    c.seed = 3
    for depth in (2, 3):
        assert c.run_sync(RunSettings("cart", {"max_depth": depth}), timeout=60) is not None
    c.selected = (c.runs[0].id, c.runs[0].front.trees[1].id)
    return c


def test_a_new_controller_takes_over_data_runs_and_selection():
    old = _session_with_two_runs()
    old.close()  # the page went away
    new = Controller()
    new.take_over(old)
    assert new.dataset_name == old.dataset_name and new.target == old.target
    assert (new.test_size, new.seed) == (0.3, 3)
    assert [r.id for r in new.runs] == [r.id for r in old.runs] and len(new.runs) == 2
    assert new.selected == old.selected
    assert new.data_key() == old.data_key()
    # and it goes on working: a third run gets the next id, on the same split
    run = new.run_sync(RunSettings("cart", {"max_depth": 1}), timeout=60)
    assert run.id == max(r.id for r in old.runs) + 1 and run.data_key == old.runs[0].data_key


B = "b" * 43  # a browser's secret (the cookie)
OTHER = "o" * 43


def test_the_store_is_bounded_and_gives_each_session_back_once(monkeypatch):
    monkeypatch.setattr(handover, "_store", type(handover._store)())
    tokens = [handover.new_token() for _ in range(handover.MAX_KEPT + 3)]
    for i, t in enumerate(tokens):
        handover.keep(t, B, i)
    assert handover.kept() == handover.MAX_KEPT
    assert handover.take(tokens[0], B) is None  # the oldest went first
    assert handover.take(tokens[-1], B) == len(tokens) - 1
    assert handover.take(tokens[-1], B) is None  # once
    monkeypatch.setattr(handover, "KEEP_SECONDS", -1.0)
    assert handover.kept() == 0  # expired


def test_only_well_formed_tokens_are_read_from_the_url():
    t = handover.new_token()
    assert len(t) >= 22  # 128 random bits
    assert handover.token_from_args({"s": [t.encode()]}) == t
    assert handover.token_from_args({"s": [b"../../etc"]}) is None
    assert handover.token_from_args({"theme": [b"dark"]}) is None
    assert handover.token_from_args(None) is None


def test_a_session_is_given_back_only_to_the_browser_that_held_it(monkeypatch):
    monkeypatch.setattr(handover, "_store", type(handover._store)())
    c = Controller()
    t = handover.new_token()
    handover.register(t, B, c)
    assert handover.take(t, OTHER) is None  # a copied link, another browser: nothing
    assert handover.take(t, None) is None  # a request without the cookie: nothing
    assert handover.take(t, B) is c
    handover.keep(t, B, c)
    assert handover.take(t, OTHER) is None  # and a refused take leaves it for its own browser
    assert handover.take(t, B) is c
    assert handover.take("AttackerChose_842714", B) is None  # a token the server never issued


class _Conn:
    """The part of tornado's HTTP1Connection the cookie uses."""

    _response_start_line = None

    def __init__(self):
        self.sent = []

    def write_headers(self, start_line, headers, chunk=None):
        self.sent.append(headers)


class _Request:
    protocol = "http"

    def __init__(self, cookies):
        self.cookies = cookies
        self.connection = _Conn()


def test_a_new_browser_gets_an_http_only_strict_cookie_on_its_page_response():
    from tornado.httputil import HTTPHeaders

    req = _Request({})
    secret = handover.browser_secret(req)
    assert len(secret) == 43
    req.connection.write_headers(None, HTTPHeaders())
    (cookie,) = req.connection.sent[0].get_list("Set-Cookie")
    assert cookie.startswith(f"{handover.BROWSER_COOKIE}={secret};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    req.connection.write_headers(None, HTTPHeaders())  # only on the page's own response
    assert req.connection.sent[1].get_list("Set-Cookie") == []
    again = _Request({handover.BROWSER_COOKIE: secret})
    assert handover.browser_secret(again) == secret and again.connection.sent == []
    assert handover.browser_secret(_Request({handover.BROWSER_COOKIE: "short"})) != "short"


def test_an_open_session_is_found_by_its_token_until_it_is_gone():
    c = Controller()
    t = handover.new_token()
    handover.register(t, B, c)
    assert handover.take(t, B) is c  # the reloaded page opens before the old session is discarded
    del c
    import gc

    gc.collect()
    assert handover.take(t, B) is None


def test_reloading_twice_follows_the_newest_session(monkeypatch):
    monkeypatch.setattr(handover, "_store", type(handover._store)())
    monkeypatch.setattr(handover, "_live", type(handover._live)())
    t = handover.new_token()
    a, b, c = Controller(), Controller(), Controller()
    handover.register(t, B, a)
    assert handover.take(t, B) is a  # first reload: B opens while A is still open
    handover.register(t, B, b)
    handover.keep(t, B, a)  # then A's session ends: B already carries the tab
    assert handover.take(t, B) is b  # second reload: C continues B, not the older A
    handover.register(t, B, c)
    del b
    import gc

    gc.collect()
    assert handover.take(t, B) is c


def test_the_solver_card_is_set_back_to_the_settings_it_had():
    from treeexplorer.ui import Explorer

    e = Explorer(dataset="iris", run_default=False)
    e.sidebar.solver.solver_w.value = "dpdt"
    params = {**e.settings().params, "max_depth": 2}
    e.sidebar.solver.solver_w.value = "cart"  # what a reloaded page showed: the default solver's card
    e.sidebar.solver.show_settings(RunSettings("dpdt", params, time_limit=12.0, cv=3))
    got = e.settings()
    assert (got.solver, got.params, got.time_limit, got.cv) == ("dpdt", params, 12.0, 3)
    e.close()

"""Issue 51, first part: the sans-IO rules of virtual keys (``ssewire.gateway._keys``): keys
known by their SHA-256, model globs, fixed epoch-aligned windows, admission while every count
is below its limit, ``retry-after`` until the full window ends, tokens estimated at admission
and corrected at the end (an answer without usage keeps the estimate)."""

from __future__ import annotations

import hashlib

from ssewire.gateway._keys import (
    PERIODS,
    Key,
    Keys,
    MemoryStore,
    digest_of,
    retry_after,
    window_start,
)


def key(**limits: object) -> Key:
    return Key(name="team-a", digest=digest_of("sk-team-a"), **limits)  # type: ignore[arg-type]


def test_a_key_is_known_by_its_digest_only() -> None:
    k = key()
    keys = Keys([k])
    assert k.digest == hashlib.sha256(b"sk-team-a").digest()
    assert keys.identify("sk-team-a") is k
    assert keys.identify("sk-team-b") is None
    assert keys.identify("") is None and keys.identify(None) is None


def test_models_are_globs_over_the_model_asked_for() -> None:
    k = key(models=("claude-*", "fast"))
    assert k.allows("claude-sonnet-4-5") and k.allows("fast")
    assert not k.allows("gpt-5") and not k.allows("fast-2") and not k.allows("Claude-x")
    # Read as routes read theirs: brackets are literal (not a character class).
    assert key(models=("m[1]",)).allows("m[1]") and not key(models=("m[1]",)).allows("m1")
    assert key().allows("anything")


def test_windows_are_epoch_aligned() -> None:
    assert window_start(1_700_000_059.9, 60) == 1_699_999_980 + 60
    assert window_start(1_700_000_000, PERIODS["1d"]) == 1_699_920_000
    assert retry_after(1_700_000_059.2, 1_700_000_040, 60) == 41
    assert retry_after(1_700_000_099.5, 1_700_000_040, 60) == 1  # at least 1
    assert retry_after(1_700_000_040.0, 1_700_000_040, 60) == 60


def test_the_request_that_crosses_a_limit_is_served_and_the_next_refused() -> None:
    store = MemoryStore()
    k = key(requests_per_minute=3)
    now = 1_700_000_010.5
    admitted = [store.admit(k, now + i, 10).ticket is not None for i in range(5)]
    assert admitted == [True, True, True, False, False]
    refused = store.admit(k, now + 5, 10)
    assert refused.full == "rpm" and refused.retry_after == 25  # until 1_700_000_040
    # The next minute is a new window.
    assert store.admit(k, 1_700_000_040, 10).ticket is not None


def test_tokens_are_estimated_then_corrected_and_kept_without_usage() -> None:
    store = MemoryStore()
    k = key(tokens_per_minute=100)
    now = 1_700_000_000.0
    a = store.admit(k, now, 30).ticket
    assert a is not None
    store.charge(a, 80, now + 1)  # the answer cost 80 in all
    b = store.admit(k, now + 1, 30).ticket  # 80 < 100: admitted, now 110
    assert b is not None
    store.charge(b, None, now + 2)  # cut before its usage: the estimate stays
    assert store.counts[("team-a", "tpm", window_start(now, 60))] == 110
    refused = store.admit(k, now + 2, 1)
    assert refused.ticket is None and refused.full == "tpm"
    store.charge(b, 0, now + 3)  # a ticket is charged once
    assert store.counts[("team-a", "tpm", window_start(now, 60))] == 110


def test_an_answer_that_outlives_its_minute_is_charged_in_the_next() -> None:
    """Admitted at :59 with a small estimate, ended in the next minute having spent far more:
    what it spent past the estimate counts in the minute it ended in, not in the one gone."""
    store = MemoryStore()
    k = key(tokens_per_minute=100)
    minute = 1_700_000_040
    t = store.admit(k, minute + 59, 5).ticket
    assert t is not None
    store.charge(t, 100_000, minute + 61)
    refused = store.admit(k, minute + 62, 1)
    assert refused.full == "tpm" and refused.retry_after == 58
    # One that spent less than its estimate gives nothing back to a window it did not use.
    u = store.admit(k, minute + 60 * 5 + 59, 50).ticket
    assert u is not None
    store.charge(u, 1, minute + 60 * 6 + 1)
    assert store.counts.get(("team-a", "tpm", minute + 60 * 6), 0) == 0


def test_retry_after_waits_for_the_last_full_window() -> None:
    store = MemoryStore()
    k = key(requests_per_minute=1, budget_tokens=10, budget_period=PERIODS["1d"])
    day = 1_700_006_400
    t = store.admit(k, day + 5, 10).ticket
    assert t is not None
    refused = store.admit(k, day + 6, 1)
    # Both the minute and the day are full: waiting out the minute would not do.
    assert refused.full == "rpm" and refused.retry_after == 86400 - 6


def test_a_budget_holds_over_its_period() -> None:
    store = MemoryStore()
    k = key(budget_tokens=1000, budget_period=PERIODS["1d"])
    day = 1_700_006_400  # a UTC day's start
    t = store.admit(k, day + 10, 10).ticket
    assert t is not None
    store.charge(t, 1000, day + 20)
    refused = store.admit(k, day + 3600, 10)
    assert refused.full == "budget" and refused.retry_after == 86400 - 3600
    assert store.admit(k, day + 86400, 10).ticket is not None


def test_no_limit_is_no_limit() -> None:
    store = MemoryStore()
    assert all(store.admit(key(), 1_700_000_000 + i, 10**9).ticket is not None for i in range(1000))


def test_the_keys_table_of_the_config(monkeypatch: object) -> None:
    import pytest
    from ssewire.gateway import _config as config

    monkeypatch.setenv("TEAM_A_KEY", "sk-team-a")  # type: ignore[attr-defined]
    base = {"upstream": [{"name": "up", "url": "http://127.0.0.1:9", "dialect": "chat"}],
            "route": [{"model": "*", "targets": ["up"]}]}  # fmt: skip
    keys = {"store": "redis://127.0.0.1:6379/0", "on_store_error": "open", "key": [
        {"name": "team-a", "key_env": "TEAM_A_KEY", "models": ["claude-*"], "requests_per_minute": 60,
         "tokens_per_minute": 200000, "budget_tokens": 10000000, "budget_period": "1d"},
        {"name": "team-b", "key_sha256": hashlib.sha256(b"sk-team-b").hexdigest()}]}  # fmt: skip
    cfg = config.parse({**base, "keys": keys})
    assert cfg.keys is not None and (cfg.keys.store, cfg.keys.on_store_error) == ("redis://127.0.0.1:6379/0", "open")
    a, b = cfg.keys.keys
    assert Keys(list(cfg.keys.keys)).identify("sk-team-a") is a and Keys([b]).identify("sk-team-b") is b
    assert (a.requests_per_minute, a.tokens_per_minute, a.budget_tokens, a.budget_period) == (60, 200000, 10000000, 86400)
    assert b.limits() == [] and b.models == ()
    for bad, why in [
        ({"key": [{"name": "x"}]}, "needs one of key_env and key_sha256"),
        ({"key": [{"name": "x", "key_sha256": "zz"}]}, "64 hex digits"),
        ({"store": "mysql://x", "key": [{"name": "x", "key_sha256": "0" * 64}]}, "redis:// URL"),
        ({"key": [{"name": "x", "key_sha256": "0" * 64, "budget_period": "1w"}]}, "1h, 1d or 30d"),
        ({"key": [{"name": "x", "key_sha256": "0" * 64, "requests_per_minute": 0}]}, "positive"),
        ({"key": [{"name": "x", "key_sha256": "0" * 64}, {"name": "y", "key_sha256": "0" * 64}]}, "same key"),
        ({"key": [{"name": "x", "key_sha256": "0" * 64, "rpm": 1}]}, "unknown key"),
    ]:
        with pytest.raises(config.ConfigError, match=why):
            config.parse({**base, "keys": bad})
    # [keys] owns the clients' keys: a static list beside it is refused.
    monkeypatch.setenv("OLD_KEYS", "sk-1")  # type: ignore[attr-defined]
    with pytest.raises(config.ConfigError, match="both name the clients' keys"):
        config.parse({**base, "server": {"client_keys_env": "OLD_KEYS"}, "keys": keys})
    # One process's counts cannot hold for several workers; a name is one line.
    memory = dict(keys, store="memory")
    with pytest.raises(config.ConfigError, match="workers other than 1"):
        config.parse({**base, "server": {"workers": 2}, "keys": memory})
    with pytest.raises(config.ConfigError, match=r"must be \[a-z0-9_-\]\+"):
        config.parse({**base, "keys": {"key": [{"name": "x\n", "key_sha256": "0" * 64}]}})


def test_the_memory_store_keeps_carriers_per_key_for_their_time_and_bounded() -> None:
    from ssewire.gateway import _keys

    store = MemoryStore()
    store.keep_carried([("sswc1_a-0", "carrier-a")], 60, 1000.0, "team-a")
    assert store.carried(["sswc1_a-0"], 1001.0, "team-a") == {"sswc1_a-0": "carrier-a"}
    assert store.carried(["sswc1_a-0"], 1001.0, "team-b") == {}  # another key reads nothing
    assert store.carried(["sswc1_a-0"], 1061.0, "team-a") == {}  # its time is up
    store.keep_carried([("sswc1_b-0", "carrier-b")], 60, 1070.0, "team-a")
    assert list(store.carriers) == [("team-a", "sswc1_b-0")]  # the expired one let go
    bound = _keys.MAX_CARRIERS
    try:
        _keys.MAX_CARRIERS = 3
        store.keep_carried([(f"sswc1_c-{i}", "c") for i in range(5)], 60, 1080.0, "team-a")
        assert [i for _, i in store.carriers] == ["sswc1_c-2", "sswc1_c-3", "sswc1_c-4"]
    finally:
        _keys.MAX_CARRIERS = bound

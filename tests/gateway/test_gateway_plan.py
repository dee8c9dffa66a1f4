"""Issue 46: routing, retries, key rotation and breakers without sockets (``_failover``): a
``Plan`` is driven with outcomes and a clock of the test's own."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ssewire.gateway import _config as config
from ssewire.gateway._failover import Outcome, Plan, Router, Try, Upstream, Wait, glob


def upstreams(breaker: config.Breaker = config.Breaker(), **keys: Any) -> Dict[str, Upstream]:
    out = {}
    for name in ("a", "b"):
        cfg = config.Upstream(name, "http://127.0.0.1:9", "chat", tuple(keys.get(name, ("k",))))
        out[name] = Upstream(cfg, breaker)
    return out


ROUTE = config.Route("m", (config.Target("a"), config.Target("b", "other-model")))


def drive(plan: Plan, outcomes: List[Outcome], now: float = 100.0) -> List[Any]:
    """The plan's steps as (upstream, key) tries and waits, each try given the next outcome."""
    steps: List[Any] = []
    for _ in range(50):
        step = plan.next(now)
        if step is None:
            steps.append("give up")
            return steps
        if isinstance(step, Wait):
            steps.append(("wait", step.seconds))
            now += step.seconds
            continue
        assert isinstance(step, Try)
        steps.append((step.upstream.cfg.name, step.key, step.model))
        if plan.record(step, outcomes.pop(0), now):
            steps.append("answered")
            return steps
    raise AssertionError("the plan did not end")


def test_globs_and_first_match() -> None:
    router = Router((config.Route("claude-*", ()), config.Route("gpt-?", ()), config.Route("*", ())))
    assert router.match("claude-opus-4").model == "claude-*"  # type: ignore[union-attr]
    assert router.match("gpt-5").model == "gpt-?"  # type: ignore[union-attr]
    assert router.match("gpt-55").model == "*"  # type: ignore[union-attr]
    assert router.models() == []
    assert glob("a.b").match("a.b") and not glob("a.b").match("axb")  # literal, not a regex
    assert not glob("m").match("m\n")


def test_a_retried_failure_waits_with_jitter_then_the_next_target() -> None:
    retry = config.Retry(attempts=2, backoff=1.0)
    plan = Plan(ROUTE, upstreams(), retry, rng=lambda: 0.5)
    steps = drive(plan, [Outcome(500), Outcome(failure="cut"), Outcome(200)])
    assert steps == [("a", "k", None), ("wait", 0.5), ("a", "k", None), ("b", "k", "other-model"), "answered"]


def test_retry_after_is_honoured_up_to_retry_after_max() -> None:
    retry = config.Retry(attempts=2, backoff=0.1, retry_after_max=5)
    plan = Plan(ROUTE, upstreams(), retry, rng=lambda: 1.0)
    assert drive(plan, [Outcome(503, retry_after=3), Outcome(200)])[1] == ("wait", 3)
    plan = Plan(ROUTE, upstreams(), retry, rng=lambda: 1.0)
    steps = drive(plan, [Outcome(503, retry_after=60), Outcome(200)])
    assert steps == [("a", "k", None), ("b", "k", "other-model"), "answered"]  # the next target at once


def test_a_client_error_is_the_answer() -> None:
    plan = Plan(ROUTE, upstreams(), config.Retry())
    assert drive(plan, [Outcome(400)]) == [("a", "k", None), "answered"]


def test_a_429_rests_the_key_and_the_next_goes_at_once() -> None:
    ups = upstreams(a=("k1", "k2"))
    plan = Plan(ROUTE, ups, config.Retry(attempts=1))
    steps = drive(plan, [Outcome(429, retry_after=10), Outcome(200)])
    assert steps == [("a", "k1", None), ("a", "k2", None), "answered"]  # no wait, not an attempt
    # k1 rests for its retry-after: the next request starts with k2, then k2 again
    assert drive(Plan(ROUTE, ups, config.Retry(attempts=1)), [Outcome(200)], now=105)[0] == ("a", "k2", None)
    assert drive(Plan(ROUTE, ups, config.Retry(attempts=1)), [Outcome(200)], now=105)[0] == ("a", "k2", None)
    assert drive(Plan(ROUTE, ups, config.Retry(attempts=1)), [Outcome(200)], now=111)[0][1] in ("k1", "k2")


def test_every_key_resting_is_a_429_of_the_upstream() -> None:
    ups = upstreams(a=("k1", "k2"))
    steps = drive(Plan(ROUTE, ups, config.Retry(attempts=1)), [Outcome(429), Outcome(429), Outcome(200)])
    assert steps == [("a", "k1", None), ("a", "k2", None), ("b", "k", "other-model"), "answered"]
    plan = Plan(config.Route("m", (config.Target("a"),)), ups, config.Retry(attempts=3))
    assert drive(plan, []) == ["give up"]  # both keys rest: nothing is sent
    assert plan.last is not None and plan.last.status == 429


def test_a_breaker_opens_skips_and_lets_one_trial_through() -> None:
    breaker = config.Breaker(failures=2, cooldown=30)
    ups = upstreams(breaker)
    retry = config.Retry(attempts=1)
    for _ in range(2):
        drive(Plan(ROUTE, ups, retry), [Outcome(502), Outcome(200)])
    assert ups["a"].breaker.state(100) == "open"
    assert drive(Plan(ROUTE, ups, retry), [Outcome(200)])[0][0] == "b"  # skipped while open
    trial = Plan(ROUTE, ups, retry)
    step = trial.next(131.0)  # half-open: this request is the trial
    assert isinstance(step, Try) and step.upstream.cfg.name == "a" and step.trial
    other = Plan(ROUTE, ups, retry).next(131.0)
    assert isinstance(other, Try) and other.upstream.cfg.name == "b"  # one trial at a time
    trial.record(step, Outcome(200), 131.5)
    assert ups["a"].breaker.state(132) == "closed"


def test_a_failed_trial_opens_the_breaker_again() -> None:
    ups = upstreams(config.Breaker(failures=1, cooldown=10))
    retry = config.Retry(attempts=1)
    drive(Plan(ROUTE, ups, retry), [Outcome(500), Outcome(200)])
    steps = drive(Plan(ROUTE, ups, retry), [Outcome(500), Outcome(200)], now=111)
    assert steps[0][0] == "a" and ups["a"].breaker.state(112) == "open"


def test_a_failure_outside_retry_on_is_the_answer() -> None:
    retry = config.Retry(on=frozenset({429}))
    assert drive(Plan(ROUTE, upstreams(), retry), [Outcome(failure="timeout")]) == [("a", "k", None), "answered"]


def last_status(plan: Plan) -> Optional[int]:
    return plan.last.status if plan.last is not None else None


def test_when_every_target_failed_the_last_failure_is_kept() -> None:
    plan = Plan(ROUTE, upstreams(), config.Retry(attempts=1))
    assert drive(plan, [Outcome(500), Outcome(529, retry_after=2)]) == [
        ("a", "k", None), ("b", "k", "other-model"), "give up"]  # fmt: skip
    assert last_status(plan) == 529 and plan.last is not None and plan.last.retry_after == 2

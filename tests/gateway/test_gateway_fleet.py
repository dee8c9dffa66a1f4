"""Issue 46: one gateway, several upstreams (API.md section 14), with the official SDKs as
clients against upstreams that fail on command (``support/failing_upstream.py``: h11, kept-alive
connections): a 529 / 500 / 429 answered, a refused port, a hang before the head, a cut before
the first event, a cut after it; failover across dialects, streamed and not; key rotation,
aliases, ``/v1/models``, ``/health``; the log line's attempts. Loopback only, every wait timed."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any, Dict, List, Optional

import pytest
from ssewire.gateway import _config as config
from support.failing_upstream import FailingUpstream, refused_port
from support.gateway_app import Gateway
from support.strict_upstream import ANSWER

TIMEOUT = 30.0


def fleet(ups: Dict[str, Any], routes: List[config.Route], **retry: Any) -> config.Config:
    upstreams = tuple(
        config.Upstream(name, url if isinstance(url, str) else url.url(), dialect, keys,
                        connect_timeout=2, first_byte_timeout=1.0, idle_timeout=5)  # fmt: skip
        for name, (url, dialect, keys) in ups.items()
    )
    opts = {"attempts": 1, "backoff": 0.01, **retry}
    return config.Config(config.Server(), upstreams, tuple(routes), config.Retry(**opts), config.Breaker(failures=0))


def route(model: str, *targets: Any) -> config.Route:
    return config.Route(model, tuple(config.Target(*t) if isinstance(t, tuple) else config.Target(t) for t in targets))


def anthropic_text(url: str, stream: bool, model: str = "claude-x") -> str:
    import anthropic

    client = anthropic.Anthropic(api_key="client", base_url=url, max_retries=0, timeout=TIMEOUT)
    kwargs: Dict[str, Any] = {"model": model, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        with client.messages.stream(**kwargs) as s:
            message = s.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    return "".join(b.text for b in message.content if b.type == "text")


def openai_text(url: str, stream: bool, model: str = "gpt-x") -> str:
    import openai

    client = openai.OpenAI(api_key="client", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    kwargs: Dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        with client.chat.completions.stream(**kwargs) as s:
            return s.get_final_completion().choices[0].message.content or ""
    return client.chat.completions.create(**kwargs).choices[0].message.content or ""


def logged(gw: Gateway) -> Dict[str, Any]:
    """The one log line of a request (written once the response has ended: waited for)."""
    deadline = time.monotonic() + TIMEOUT
    while not gw.records and time.monotonic() < deadline:
        time.sleep(0.01)
    [entry] = gw.records
    return entry


def attempts(gw: Gateway) -> List[Any]:
    entry = logged(gw)
    gw.records.clear()
    return [(a["upstream"], a.get("status", a.get("failure"))) for a in entry["attempts"]]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("failure", [("status", 529), ("status", 500), "close", "hang", "cut", "error_event"])
def test_a_claude_client_fails_over_to_an_openai_upstream(failure: Any, stream: bool) -> None:
    """The Messages upstream fails before the client got anything: the same request, translated,
    goes to the chat upstream, and the anthropic SDK reads its answer whole."""
    with FailingUpstream("messages", [failure]) as a, FailingUpstream("chat") as b:
        gw = Gateway(fleet({"anthropic": (a, "messages", ("ka",)), "openai": (b, "chat", ("kb",))},
                           [route("claude-*", "anthropic", ("openai", "gpt-5-mini"))]))  # fmt: skip
        try:
            assert anthropic_text(gw.url(), stream) == ANSWER
            kind = {"close": "cut", "hang": "timeout", "cut": "cut", "error_event": 503}.get(failure, None)
            first = kind if kind is not None else failure[1]
            assert attempts(gw) == [("anthropic", first), ("openai", 200)]
        finally:
            gw.close()
        assert len(a.requests) == 1 and len(b.requests) == 1
        sent = b.requests[0]
        assert sent["target"] == "/v1/chat/completions" and sent["body"]["model"] == "gpt-5-mini"
        headers = {k.lower(): v for k, v in sent["headers"]}
        assert headers["authorization"] == "Bearer kb" and "x-api-key" not in headers  # its own key only
        assert {k.lower(): v for k, v in a.requests[0]["headers"]}["x-api-key"] == "ka"


def test_a_refused_port_fails_over() -> None:
    with FailingUpstream("chat") as b:
        gw = Gateway(fleet({"down": (f"http://127.0.0.1:{refused_port()}", "chat", ()), "up": (b, "chat", ())},
                           [route("*", "down", "up")]))  # fmt: skip
        try:
            assert openai_text(gw.url(), stream=True) == ANSWER
            assert attempts(gw) == [("down", "connect"), ("up", 200)]
        finally:
            gw.close()


def test_a_stream_cut_after_its_first_event_is_the_clients_error_not_a_failover() -> None:
    import openai

    with FailingUpstream("chat", ["late_cut"]) as a, FailingUpstream("chat") as b:
        gw = Gateway(fleet({"a": (a, "chat", ()), "b": (b, "chat", ())}, [route("*", "a", "b")]))
        try:
            with pytest.raises((openai.APIError, Exception)):
                openai_text(gw.url(), stream=True)
            entry = logged(gw)
            assert [x["upstream"] for x in entry["attempts"]] == ["a"] and entry["done"] is False
        finally:
            gw.close()
        assert b.requests == []  # the client had received the head: no second upstream


def test_a_non_streaming_client_fails_over_after_a_cut_anywhere() -> None:
    with FailingUpstream("chat", ["late_cut"]) as a, FailingUpstream("chat") as b:
        gw = Gateway(fleet({"a": (a, "messages", ()), "b": (b, "chat", ())}, [route("*", "a", "b")]))
        a.dialect = "messages"
        try:
            assert anthropic_text(gw.url(), stream=False) == ANSWER
            assert attempts(gw) == [("a", "cut"), ("b", 200)]
        finally:
            gw.close()


def test_a_retry_honours_retry_after_then_succeeds_on_the_same_upstream() -> None:
    with FailingUpstream("chat", [("status", 503, [("retry-after", "0.3")])]) as a:
        gw = Gateway(fleet({"a": (a, "chat", ())}, [route("*", "a")], attempts=2))
        try:
            assert openai_text(gw.url(), stream=False) == ANSWER
            entry = logged(gw)
            assert [(x["upstream"], x["status"]) for x in entry["attempts"]] == [("a", 503), ("a", 200)]
        finally:
            gw.close()


def test_a_429_moves_to_the_next_key_at_once() -> None:
    with FailingUpstream("chat", [("status", 429, [("retry-after", "30")])]) as a:
        gw = Gateway(fleet({"a": (a, "chat", ("key-1", "key-2"))}, [route("*", "a")]))
        try:
            assert openai_text(gw.url(), stream=True) == ANSWER
            assert attempts(gw) == [("a", 429), ("a", 200)]
            assert openai_text(gw.url(), stream=True) == ANSWER  # key-1 rests: key-2 again
        finally:
            gw.close()
        used = [dict((k.lower(), v) for k, v in r["headers"])["authorization"] for r in a.requests]
        assert used == ["Bearer key-1", "Bearer key-2", "Bearer key-2"]


def test_when_every_target_fails_the_client_gets_the_last_failure_in_its_shape() -> None:
    import anthropic

    with FailingUpstream("chat", [("status", 500)]) as a, FailingUpstream("chat", [("status", 429, [("retry-after", "7")])]) as b:
        gw = Gateway(fleet({"a": (a, "chat", ()), "b": (b, "chat", ())}, [route("*", "a", "b")]))
        try:
            with pytest.raises(anthropic.RateLimitError) as e:
                anthropic_text(gw.url(), stream=True)
            assert e.value.response.headers["retry-after"] == "7"
            assert e.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
        finally:
            gw.close()


def test_a_client_error_is_not_retried() -> None:
    import openai

    with FailingUpstream("chat", [("status", 400)]) as a, FailingUpstream("chat") as b:
        gw = Gateway(fleet({"a": (a, "chat", ()), "b": (b, "chat", ())}, [route("*", "a", "b")], attempts=3))
        try:
            with pytest.raises(openai.BadRequestError):
                openai_text(gw.url(), stream=False)
        finally:
            gw.close()
        assert len(a.requests) == 1 and b.requests == []


def test_no_route_is_a_404_naming_the_model() -> None:
    import openai

    with FailingUpstream("chat") as a:
        gw = Gateway(fleet({"a": (a, "chat", ())}, [route("gpt-*", "a")]))
        try:
            with pytest.raises(openai.NotFoundError) as e:
                openai_text(gw.url(), stream=True, model="claude-3")
            assert "claude-3" in str(e.value)
        finally:
            gw.close()
        assert a.requests == []


def get(url: str, headers: Optional[Dict[str, str]] = None) -> Any:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=TIMEOUT) as r:
        return json.loads(r.read())


def test_models_health_and_kept_connections() -> None:
    with FailingUpstream("chat") as a:
        cfg = fleet({"a": (a, "chat", ())}, [route("fast", ("a", "gpt-5-mini")), route("claude-*", "a"), route("exact", "a")])
        gw = Gateway(cfg)
        try:
            assert [m["id"] for m in get(gw.url("/v1/models"))["data"]] == ["fast", "exact"]
            anthropic_list = get(gw.url("/v1/models"), {"anthropic-version": "2023-06-01"})
            assert anthropic_list["data"][0] == {"type": "model", "id": "fast", "display_name": "fast",
                                                 "created_at": "1970-01-01T00:00:00Z"}  # fmt: skip
            assert anthropic_list["first_id"] == "fast" and anthropic_list["last_id"] == "exact"
            for _ in range(3):
                assert openai_text(gw.url(), stream=True, model="fast") == ANSWER
            assert get(gw.url("/health")) == {"status": "ok", "upstreams": {"a": "closed"}}
        finally:
            gw.close()
        assert [r["body"]["model"] for r in a.requests] == ["gpt-5-mini"] * 3  # the alias's model
        assert {r["connection"] for r in a.requests} == {1}  # one kept connection for all three


def test_an_open_breaker_shows_in_health_and_is_skipped() -> None:
    with FailingUpstream("chat", [("status", 502)]) as a, FailingUpstream("chat") as b:
        cfg = fleet({"a": (a, "chat", ()), "b": (b, "chat", ())}, [route("*", "a", "b")])
        cfg = config.Config(cfg.server, cfg.upstreams, cfg.routes, cfg.retry, config.Breaker(failures=1, cooldown=60))
        gw = Gateway(cfg)
        try:
            assert openai_text(gw.url(), stream=True) == ANSWER
            assert get(gw.url("/health"))["upstreams"] == {"a": "open", "b": "closed"}
            assert openai_text(gw.url(), stream=True) == ANSWER
        finally:
            gw.close()
        assert len(a.requests) == 1 and len(b.requests) == 2

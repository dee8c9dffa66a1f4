"""Issue 51, first part: ``[keys]`` in the gateway against a strict upstream on loopback: no
key or an unknown key is 401, a model outside the key's globs 403, a full window 429 with
``retry-after``, each in the client's own error shape; the log names the key, never the key's
text; tokens are charged from the answer's usage; a memory store and a real Redis."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Optional

import pytest
from ssewire.gateway import _config as config
from support.gateway_app import Gateway
from support.sdk_loops import _post
from support.strict_upstream import KEY, StrictUpstream

TEAM = "sk-team-a-0123456789"


@pytest.fixture(autouse=True)
def one_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windows' clock held ten seconds into one UTC minute (and its day): a test's
    requests are counted in one window however long the machine takes."""
    from ssewire.gateway import _keys

    monkeypatch.setattr(_keys, "clock", lambda: 1_700_006_410.0)


def cfg(url: str, store: str = "memory", **limits: Any) -> config.Config:
    key: Dict[str, Any] = {"name": "team-a", "key_sha256": hashlib.sha256(TEAM.encode()).hexdigest(),
                           "models": ["m", "claude-*"], **limits}  # fmt: skip
    return config.parse({
        "upstream": [{"name": "up", "url": url, "dialect": "chat"}],
        "route": [{"model": "*", "targets": ["up"]}],
        "keys": {"store": store, "key": [key]},
    })  # fmt: skip


def chat(model: str = "m") -> Dict[str, Any]:
    return {"model": model, "stream": True, "messages": [{"role": "user", "content": "Weather in Paris?"}]}


def auth(key: Optional[str]) -> Dict[str, str]:
    return {} if key is None else {"authorization": f"Bearer {key}"}


def test_unknown_keys_models_and_a_full_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UP_KEY", KEY)
    with StrictUpstream("chat") as up:
        c = cfg(up.url(), requests_per_minute=2)
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            assert _post(gw, "chat", chat(), headers=auth(None))[0] == 401
            assert _post(gw, "chat", chat(), headers=auth("sk-other"))[0] == 401
            status, body, _ = _post(gw, "chat", chat("gpt-5"), headers=auth(TEAM))
            assert status == 403 and "error" in json.loads(body)
            assert [_post(gw, "chat", chat(), headers=auth(TEAM))[0] for _ in range(2)] == [200, 200]
            status, body, headers = _post(gw, "chat", chat(), headers=auth(TEAM))
            assert status == 429 and 1 <= int(headers["retry-after"]) <= 60
            assert json.loads(body)["error"]["message"].startswith("the key 'team-a'")
            m = _post(gw, "messages", {"model": "claude-x", "max_tokens": 10, "stream": True,
                                       "messages": [{"role": "user", "content": "hi"}]},
                      headers={"x-api-key": TEAM, "anthropic-version": "2023-06-01"})  # fmt: skip
            assert m[0] == 429 and json.loads(m[1])["type"] == "error"  # the Messages shape
        finally:
            gw.close()
    assert len(up.requests) == 2
    logged = json.dumps(gw.records)
    assert TEAM not in logged and '"key": "team-a"' in logged


@pytest.mark.parametrize(("limit", "window"), [({"tokens_per_minute": 20}, 60),
                                               ({"budget_tokens": 20, "budget_period": "1d"}, 86400)])  # fmt: skip
def test_tokens_are_charged_from_the_usage(limit: Dict[str, Any], window: int) -> None:
    with StrictUpstream("chat") as up:
        c = cfg(up.url(), **limit)
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            first = _post(gw, "chat", chat(), headers=auth(TEAM))
            second = _post(gw, "chat", chat(), headers=auth(TEAM))
            third = _post(gw, "chat", chat(), headers=auth(TEAM))
        finally:
            gw.close()
    # The body's estimate (about 25 tokens) fills the minute at admission; the answer's usage
    # (10 + 5) replaces it at the end, so the second request is admitted (15 < 20) and the
    # third is not (15 + 15 >= 20). Without the correction the second would be refused.
    assert (first[0], second[0], third[0]) == (200, 200, 429)
    # Until the window ends: the minute's, or the budget period's (epoch-aligned).
    assert 1 <= int(third[2]["retry-after"]) <= window
    assert ("token budget" if window > 60 else "tokens per minute") in json.loads(third[1])["error"]["message"]
    assert gw.records[0]["tokens"]["total_tokens"] == 15


@pytest.mark.parametrize("upstream", ["chat", "messages"])
def test_usage_is_asked_of_a_chat_upstream_and_kept_from_a_client_that_did_not_ask(upstream: str) -> None:
    """A chat upstream sends usage only when asked (the strict upstream plays api.openai.com's
    rule), and keys are charged from usage: the gateway asks, and a chat client that did not
    ask gets no usage chunk, relayed (chat upstream) or translated (Messages upstream); one
    that asked gets it."""
    with StrictUpstream(upstream) as up:
        c = cfg(up.url(), tokens_per_minute=10_000)
        c = config.Config(c.server, (config.Upstream("up", up.url(), upstream, (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            plain = _post(gw, "chat", chat(), headers=auth(TEAM))
            asked = _post(gw, "chat", dict(chat(), stream_options={"include_usage": True}), headers=auth(TEAM))
        finally:
            gw.close()
    assert up.violations == []
    if upstream == "chat":
        for sent in up.requests:
            assert json.loads(sent["body"])["stream_options"]["include_usage"] is True

    def chunks(body: bytes) -> list:
        frames = [f.partition(b"data: ")[2] for f in body.split(b"\n\n")]
        return [json.loads(f) for f in frames if f and f != b"[DONE]"]

    assert plain[0] == asked[0] == 200
    assert plain[1].endswith(b"data: [DONE]\n\n") and asked[1].endswith(b"data: [DONE]\n\n")
    assert [c for c in chunks(plain[1]) if not c["choices"]] == []
    [usage] = [c for c in chunks(asked[1]) if not c["choices"]]
    # Both were charged from the usage all the same (the chat call 10 + 5, Messages' 10 + 20).
    spent = usage["usage"]["total_tokens"]
    assert spent == (15 if upstream == "chat" else 30)
    assert [r["tokens"]["total_tokens"] for r in gw.records] == [spent, spent]
    if upstream == "chat":  # relayed: the other chunks as the upstream sent them
        assert chunks(plain[1]) == [c for c in chunks(asked[1]) if c["choices"]]


def test_metrics_and_spans_name_the_key_and_never_hold_it() -> None:
    """Each request's metrics and span carry the key's name (``ssewire.key.name``; a refused
    one too, once its key is known), and no attribute anywhere holds the key's text."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )
    from ssewire.otel import GatewayMetrics

    reader, spans = InMemoryMetricReader(), InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    metrics = GatewayMetrics(MeterProvider(metric_readers=[reader]), tracer)
    with StrictUpstream("chat") as up:
        c = cfg(up.url(), requests_per_minute=1)
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c, metrics=metrics)
        try:
            statuses = [_post(gw, "chat", chat(), headers=auth(k))[0] for k in (TEAM, TEAM, "sk-other")]
        finally:
            gw.close()
    assert statuses == [200, 429, 401]
    data = reader.get_metrics_data()
    points = [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
              for p in m.data.data_points if m.name == "gen_ai.client.operation.duration"]  # fmt: skip
    named = sorted(str((dict(p.attributes).get("ssewire.key.name"), dict(p.attributes).get("error.type")))
                   for p in points)  # fmt: skip
    assert named == sorted(str(t) for t in [(None, "401"), ("team-a", "429"), ("team-a", None)])
    finished = spans.get_finished_spans()
    assert sorted(str(s.attributes.get("ssewire.key.name")) for s in finished) == ["None", "team-a", "team-a"]
    everything = repr([dict(p.attributes) for p in points]) + repr([dict(s.attributes) for s in finished])
    assert TEAM not in everything and "sk-other" not in everything


#: Each client dialect's key places (the registry's ``client_key_headers``, Gemini's ``?key=``):
#: (client, path, body, how the key is sent).
def _converse_body() -> Dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]}


HEADERS = [
    ("chat", lambda k: {"authorization": f"Bearer {k}"}, ""),
    ("chat", lambda k: {"api-key": k}, ""),  # Azure's
    ("responses", lambda k: {"authorization": f"Bearer {k}"}, ""),
    ("messages", lambda k: {"x-api-key": k, "anthropic-version": "2023-06-01"}, ""),
    ("messages", lambda k: {"authorization": f"Bearer {k}", "anthropic-version": "2023-06-01"}, ""),
    ("gemini", lambda k: {"x-goog-api-key": k}, ""),
    ("gemini", lambda k: {}, "key"),
    ("converse", lambda k: {"authorization": f"Bearer {k}"}, ""),  # Bedrock's API key
    ("ollama", lambda k: {"authorization": f"Bearer {k}"}, ""),
    ("cohere", lambda k: {"authorization": f"Bearer {k}"}, ""),
]


def _request(client: str, model: str) -> Any:
    from support.sdk_loops import _path

    if client == "gemini":
        return _path("gemini", model), {"contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]}
    if client == "converse":
        return f"/model/{model}/converse-stream", _converse_body()
    path = {"ollama": "/api/chat", "cohere": "/v2/chat"}.get(client) or _path(client)
    body = dict(chat(model))
    if client == "responses":
        body = {"model": model, "stream": True, "input": "Weather in Paris?"}
    if client == "messages":
        body["max_tokens"] = 100
    return path, body


@pytest.mark.parametrize(("client", "sent", "query"), HEADERS, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(HEADERS)])
def test_each_dialect_s_key_places(client: str, sent: Any, query: str) -> None:
    """The key is read where the client's SDK puts it; a wrong key in the same place is 401,
    and a model outside the key's globs 403, both in the client's own error shape."""
    with StrictUpstream("chat") as up:
        c = cfg(up.url())
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            answers = []
            for key, model in ((TEAM, "m"), ("sk-wrong", "m"), (TEAM, "gpt-5")):
                path, body = _request(client, model)
                if query:
                    path += ("&" if "?" in path else "?") + f"{query}={key}"
                answers.append(_post(gw, client, body, path=path, headers=sent(key)))
        finally:
            gw.close()
    assert [a[0] for a in answers] == [200, 401, 403]
    for status, body, _ in answers[1:]:  # the client's error shape (Bedrock's: a message)
        said = json.loads(body)
        assert said.get("error") or said.get("message") or said.get("type") == "error", said
    assert len(up.requests) == 1 and up.violations == []
    logged = json.dumps(gw.records)
    assert TEAM not in logged and "sk-wrong" not in logged


@pytest.mark.filterwarnings("ignore:Changing state:DeprecationWarning")  # aiohttp's, on a reload
def test_no_key_is_401_before_the_body_is_read_and_a_reload_keeps_the_counts() -> None:
    """A client without a valid key learns nothing of the routes or the body's rules (401
    first, whatever it sent); a reload (SIGHUP) that names the same store keeps its counts."""
    import asyncio

    from ssewire.gateway._server import reload

    with StrictUpstream("chat") as up:
        c = cfg(up.url(), requests_per_minute=1)
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            assert _post(gw, "chat", b"not json", headers=auth(None))[0] == 401
            assert _post(gw, "chat", chat("no-such-model"), headers=auth("sk-wrong"))[0] == 401
            assert _post(gw, "chat", b"not json", headers=auth(TEAM))[0] == 400
            assert _post(gw, "chat", chat(), headers=auth(TEAM))[0] == 200

            async def again() -> None:
                reload(gw.runner.app, config.Config(c.server, c.upstreams, c.routes, c.retry, c.breaker, None, c.keys))

            asyncio.run_coroutine_threadsafe(again(), gw.loop).result(30)
            status, _, headers = _post(gw, "chat", chat(), headers=auth(TEAM))
        finally:
            gw.close()
    assert status == 429 and int(headers["retry-after"]) >= 1


@pytest.mark.parametrize("stream", [True, False])
def test_a_translated_answer_is_charged_its_usage_streamed_or_whole(stream: bool) -> None:
    """A Messages client, served from a chat upstream, streamed and whole: the minute's count
    is the answer's usage (10 + 5), not the body's estimate."""
    from ssewire.gateway._server import STATE

    with StrictUpstream("chat") as up:
        c = cfg(up.url(), tokens_per_minute=10_000)
        c = config.Config(c.server, (config.Upstream("up", up.url(), "chat", (KEY,)),), c.routes, c.retry,
                          c.breaker, None, c.keys)  # fmt: skip
        gw = Gateway(c)
        try:
            request = {"model": "m", "max_tokens": 100, "stream": stream,
                       "messages": [{"role": "user", "content": "Weather in Paris? " * 40}]}  # fmt: skip
            status, data, _ = _post(gw, "messages", request,
                                    headers={"x-api-key": TEAM, "anthropic-version": "2023-06-01"})  # fmt: skip
            store = gw.runner.app[STATE].store
            counts = dict(store.counts)
        finally:
            gw.close()
    assert status == 200, data
    assert b"event: message_stop" in data if stream else json.loads(data)["type"] == "message"
    assert [v for (name, counter, _), v in counts.items() if counter == "tpm"] == [15]


def test_a_stream_cut_before_its_usage_keeps_the_estimate() -> None:
    """The upstream's body is cut in its first event (no usage came): the client gets 502 in
    its shape, and the key keeps the estimate charged at admission (the body's size / 4)."""
    from ssewire.gateway._keys import estimate_tokens
    from ssewire.gateway._server import STATE
    from support.failing_upstream import FailingUpstream

    with FailingUpstream("chat", ["cut"] * 10) as up:  # every try cut
        c = cfg(up.url(), tokens_per_minute=10_000)
        gw = Gateway(config.Config(c.server, (config.Upstream("up", up.url(), "chat", ()),), c.routes, c.retry,
                                   c.breaker, None, c.keys))  # fmt: skip
        body = chat()
        try:
            status, data, _ = _post(gw, "chat", body, headers=auth(TEAM))
            counts = dict(gw.runner.app[STATE].store.counts)
        finally:
            gw.close()
    assert status == 502 and "error" in json.loads(data)
    assert [v for (_, counter, _), v in counts.items() if counter == "tpm"] == [
        estimate_tokens(json.dumps(body).encode())
    ]

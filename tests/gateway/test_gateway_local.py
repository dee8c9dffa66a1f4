"""Ollama and Cohere through the gateway (issue 50): their clients served from an upstream of
every other dialect, and their upstreams serving every other dialect's client, each SDK's own
tool loop (ollama-python, cohere, openai, anthropic, google-genai) against upstreams as strict
as the providers (``tests/support/strict_upstream.py``), streamed and whole; errors in the
client's own form. Loopback only; every loop bounded, every wait timed."""

from __future__ import annotations

import json
from typing import Any, List, Tuple

import pytest
from support import registry
from support.gateway_app import Gateway
from support.sdk_loops import CLIENT_KEY, LOOPS, _post
from support.strict_upstream import ANSWER, KEY, StrictUpstream

NEW = ("ollama", "cohere")
#: The upstreams an Ollama client's loop can go through: ollama-python keeps no call ids, so
#: an upstream that wants its own signed reasoning back on the call (Responses' encrypted
#: items, Gemini's thought signatures) cannot be given it.
OLLAMA_UPSTREAMS = ("chat", "messages", "ollama", "cohere")
PAIRS: List[Tuple[str, str]] = sorted(
    {(up, "cohere") for up in (*registry.NAMES, "ollama")}
    | {(up, "ollama") for up in OLLAMA_UPSTREAMS if up != "ollama"}
    | {(up, client) for up in NEW for client in registry.NAMES}
)


def _run_loop(upstream: str, client: str, stream: bool) -> Tuple[StrictUpstream, List[Any]]:
    with StrictUpstream(upstream, same_ids=client != "ollama") as up:
        gw = Gateway(up.url(), upstream_dialect=upstream, upstream_key=KEY)
        try:
            text = LOOPS[client](gw.url(), stream)
        finally:
            gw.close()
    assert up.violations == [], up.violations
    assert text == ANSWER
    assert len(up.requests) == 2
    return up, gw.records


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(("upstream", "client"), PAIRS)
def test_a_tool_loop_through_the_gateway(upstream: str, client: str, stream: bool) -> None:
    up, records = _run_loop(upstream, client, stream)
    assert len(records) == 2 and all(r["status"] == 200 for r in records)
    assert all(CLIENT_KEY not in json.dumps(r["headers"]) for r in up.requests)
    assert {r["dialect"] for r in records} == {upstream}


def _first(client: str) -> Any:
    if client == "ollama":
        return {"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Weather in Paris?"}]}


@pytest.mark.parametrize("client", NEW)
@pytest.mark.parametrize("fail", [("status", 429), "event"], ids=["429", "error-event"])
def test_errors_reach_the_client_in_its_own_form(client: str, fail: Any) -> None:
    """An upstream's 429 reaches an Ollama client as ``{"error"}`` and a Cohere client as
    ``{"message"}``, with the status and ``retry-after``; an error inside the stream reaches it
    before any output as an error answer in the same form, never as a clean end."""
    with StrictUpstream("messages", fail=fail) as up:
        gw = Gateway(up.url(), upstream_dialect="messages", upstream_key=KEY)
        try:
            path = {"ollama": "/api/chat", "cohere": "/v2/chat"}[client]
            status, body, headers = _post(gw, client, _first(client), path=path)
        finally:
            gw.close()
    said = json.loads(body)
    if fail == "event":
        # An error before the first output is an error answer (the try may still fail over).
        assert status >= 500
        assert "Overloaded" in (said["error"] if client == "ollama" else said["message"])
        return
    assert status == 429 and headers.get("retry-after") == "7"
    assert said == ({"error": "slow down"} if client == "ollama" else {"message": "slow down"})


def test_an_ollama_request_without_stream_is_streamed() -> None:
    """Ollama streams unless the request says ``"stream": false``: the gateway answers NDJSON
    lines as ``application/x-ndjson``, and a whole answer when asked for one."""
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY)
        try:
            status, body, headers = _post(gw, "ollama", _first("ollama"), path="/api/chat")
            whole = _post(gw, "ollama", dict(_first("ollama"), stream=False), path="/api/chat")
            null = _post(gw, "ollama", dict(_first("ollama"), stream=None), path="/api/chat")
        finally:
            gw.close()
    assert status == 200 and headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in body.splitlines()]
    assert lines[-1]["done"] is True and any(line["message"].get("tool_calls") for line in lines)
    assert null[0] == 200 and null[2]["content-type"].startswith("application/x-ndjson")  # null: absent
    assert whole[0] == 200 and json.loads(whole[1])["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_an_ollama_generate_client_gets_generate_lines() -> None:
    """``/api/generate`` is an Ollama client path too: its request (system, prompt) is
    translated, and its answer comes as generate's lines (``response``, ``thinking``), which
    ollama-python's ``generate()`` reads, streamed and whole."""
    ollama = pytest.importorskip("ollama")
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY)
        try:
            client = ollama.Client(host=gw.url(), timeout=60)
            parts = list(client.generate(model="m", prompt="Weather in Paris?", system="Be brief.", stream=True))
            whole = client.generate(model="m", prompt="Weather in Paris?", stream=False)
            status, body, headers = _post(gw, "ollama", {"model": "m", "prompt": "hi"}, path="/api/generate")
        finally:
            gw.close()
    assert up.violations == []
    sent = json.loads(up.requests[0]["body"])
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["messages"][1]["content"] in ("Weather in Paris?", [{"type": "text", "text": "Weather in Paris?"}])
    assert parts[-1].done and "".join(p.thinking or "" for p in parts)
    assert whole.done and whole.thinking
    assert status == 200 and headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in body.splitlines()]
    assert all("message" not in line and "response" in line for line in lines)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"model": "m", "MODEL": "other", "messages": []}, "ignoring case"),
        ({"model": "m", "\u017ftream": False, "messages": []}, "ignoring case"),
        ({"model": "m", "stream": "false", "messages": []}, "not a boolean"),
    ],
    ids=["MODEL", "long-s-stream", "stream-string"],
)
def test_keys_an_upstream_would_read_otherwise_are_refused(body: Any, why: str) -> None:
    """Ollama reads keys ignoring case (Go's encoding/json, Unicode folds too) and relays get
    the body as sent: a second spelling of ``model`` would run a model no route allows."""
    with StrictUpstream("ollama") as up:
        gw = Gateway(up.url(), upstream_dialect="ollama", upstream_key=KEY)
        try:
            status, text, _ = _post(gw, "ollama", body, path="/api/chat")
        finally:
            gw.close()
    assert status == 400 and why in json.loads(text)["error"]
    assert up.requests == []


@pytest.mark.parametrize("client", NEW)
def test_an_upstream_body_that_ends_before_any_output_is_no_answer(client: str) -> None:
    """A 200 whose body ends with nothing in it is a failed try (the client gets an error in
    its own form, or the next upstream), never a 200 with a clean end."""
    from support.failing_upstream import FailingUpstream

    with FailingUpstream("chat", ["empty"]) as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY)
        try:
            path = {"ollama": "/api/chat", "cohere": "/v2/chat"}[client]
            status, text, _ = _post(gw, client, _first(client), path=path)
        finally:
            gw.close()
    assert status >= 500, (status, text[:200])

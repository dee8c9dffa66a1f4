"""Issue 33: the gateway (``ssewire.gateway``) in front of upstreams as strict as real providers
(``tests/support/strict_upstream.py``: aiohttp's and h11's HTTP parsers, one header of each name, the
provider's own credential only, and the documented rules of a thinking model's tool loop).

- The SDKs' own tool loops (openai chat and Responses, anthropic, google-genai), with reasoning
  on, streamed and not, across all twelve pairs: each completes in two upstream requests, the
  upstream's rules hold (Anthropic's signed thinking block first, Gemini 3's thought signature
  on the call, Responses' reasoning item with its encrypted content, every chat tool call
  answered), and the upstream sees no credential but the gateway's own.
- Probes: model names and paths that try to change the upstream's request line, headers that
  are not ASCII, credentials of every provider sent at once, client keys, errors of every kind
  (an HTTP error with ``retry-after``, a stream cut in the middle, an error event in the
  stream) reaching each client in its own dialect and never as 200, bodies too deep, too large
  or too slow, heads too slow. Every loop is bounded and every wait timed; loopback only.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote

import aiohttp
import pytest
import ssewire
from support import registry
from support.gateway_app import TIMEOUT, Gateway
from support.sdk_loops import (
    CLIENT_KEY,
    LOOPS,
    _first_turn,
    _path,
    _post,
)
from support.strict_upstream import ANSWER, KEY, StrictUpstream, error_body

DIALECTS = registry.NAMES
PAIRS = registry.PAIRS


# -- the SDK loops, with reasoning on -----------------------------------------------------------


def _run_loop(
    upstream_dialect: str, client: str, stream: bool, server: str
) -> Tuple[StrictUpstream, List[Any]]:
    with StrictUpstream(upstream_dialect, server=server) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
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
@pytest.mark.parametrize(("upstream_dialect", "client"), PAIRS)
def test_a_thinking_models_tool_loop_completes_against_a_strict_upstream(
    upstream_dialect: str, client: str, stream: bool
) -> None:
    """Every pair, reasoning on: two upstream requests, every provider rule held, and the
    upstream saw only the gateway's own credential (a client's key would be refused)."""
    up, records = _run_loop(upstream_dialect, client, stream, "aiohttp")
    assert len(records) == 2 and all(r["status"] == 200 for r in records)
    assert all(CLIENT_KEY not in json.dumps(r["headers"]) for r in up.requests)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("upstream_dialect", "client"), PAIRS)
def test_the_same_loops_pass_h11s_strict_parser(upstream_dialect: str, client: str) -> None:
    _run_loop(upstream_dialect, client, True, "h11")


RULES = {"messages": "must start with a thinking block", "gemini": "missing a thought_signature",
         "responses": "without its required 'reasoning' item"}  # fmt: skip


@pytest.mark.parametrize("upstream_dialect", sorted(RULES))
@pytest.mark.parametrize("client", DIALECTS)
def test_a_strict_upstream_refuses_a_turn_without_its_signed_reasoning(
    upstream_dialect: str, client: str
) -> None:
    """The strict upstreams are strict: the second turn sent with the upstream's own call id
    (a client that dropped the carried reasoning) is refused by the provider's rule, while the
    id the gateway wrote carries it."""
    if client == upstream_dialect:
        pytest.skip("relayed, not translated")
    with StrictUpstream(upstream_dialect) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
        try:
            first = _post(gw, client, _first_turn(client))
            assert first[0] == 200
            call_id = _call_id(client, first[1])
            assert call_id.startswith(f"sswc1_{upstream_dialect[0]}_")  # the reasoning rides in the id
            plain = {"messages": "toolu_w1", "gemini": "fc_w1", "responses": "call_w1"}[upstream_dialect]
            second = _post(gw, client, _second_turn(client, plain))
            carried = _post(gw, client, _second_turn(client, call_id))
        finally:
            gw.close()
    assert second[0] == 400 and RULES[upstream_dialect] in _client_error_shape(client, second[1])
    assert carried[0] == 200, carried[1]


# -- helpers for raw requests -------------------------------------------------------------------


def _second_turn(client: str, call_id: str) -> Dict[str, Any]:
    body = _first_turn(client)
    args = '{"city": "Paris"}'
    if client == "chat":
        body["messages"] += [
            {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function",
                                                   "function": {"name": "get_weather", "arguments": args}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "18C"}]  # fmt: skip
    elif client == "responses":
        body["input"] += [{"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": args},
                          {"type": "function_call_output", "call_id": call_id, "output": "18C"}]  # fmt: skip
    elif client == "gemini":
        body["contents"] += [
            {"role": "model", "parts": [{"functionCall": {"id": call_id, "name": "get_weather", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": "get_weather",
                                                             "response": {"result": "18C"}}}]}]  # fmt: skip
    else:
        body["messages"] += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "get_weather",
                                               "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "18C"}]}]  # fmt: skip
    return body


def _call_id(client: str, body: bytes) -> str:
    """The tool call id a client reads off a translated stream."""
    result = ssewire.accumulate(body, client)
    if client == "chat":
        return str(result["choices"][0]["message"]["tool_calls"][0]["id"])
    if client == "responses":
        return str(next(o["call_id"] for o in result["output"] if o["type"] == "function_call"))
    if client == "gemini":
        parts = result["candidates"][0]["content"]["parts"]
        return str(next(p["functionCall"]["id"] for p in parts if "functionCall" in p))
    return str(next(b["id"] for b in result["content"] if b["type"] == "tool_use"))


def _raw(port: int, request: bytes, wait: float = TIMEOUT) -> bytes:
    """Sends ``request`` as is on a new connection; what came back until the server closed it."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(request)
        out = b""
        for _ in range(10_000):
            try:
                data = sock.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            out += data
        return out


def _client_error_shape(client: str, body: bytes) -> str:
    """The message of an error body in ``client``'s own shape (fails on any other shape)."""
    e = json.loads(body)
    if client == "messages":
        assert e["type"] == "error" and isinstance(e["error"]["type"], str)
        return str(e["error"]["message"])
    if client == "gemini":
        assert isinstance(e["error"]["code"], int) and isinstance(e["error"]["status"], str)
        return str(e["error"]["message"])
    assert set(e["error"]) >= {"message", "type", "code"}
    return str(e["error"]["message"])


# -- injection ------------------------------------------------------------------------------------

HOSTILE_MODELS = ["m HTTP/1.1\r\nX-Injected: yes\r\nx-goog-api-key: stolen\r\n\r\nGET /admin",
                  "m?key=X", "m#f", "../../admin/x", "m/../../x", "m%2F..%2Fx", "modèle-ü", "m\tx", "m:generateContent"]  # fmt: skip


@pytest.mark.parametrize("model", HOSTILE_MODELS)
@pytest.mark.parametrize("client", ["chat", "messages", "responses"])
def test_a_model_name_cannot_change_the_upstream_request_line(client: str, model: str) -> None:
    """Into a Gemini upstream the body's model goes into the path: as one percent-encoded
    segment, or refused (400, the client's shape) when no provider takes such a name; the
    upstream sees one request with its own headers only."""
    with StrictUpstream("gemini", model=model) as up:
        gw = Gateway(up.url(), upstream_dialect="gemini", upstream_key=KEY)
        try:
            status, body, _ = _post(gw, client, _first_turn(client, model))
        finally:
            gw.close()
    if any(ord(c) < 32 for c in model):
        assert status == 400 and "control character" in _client_error_shape(client, body)
        assert up.requests == []
    else:
        assert status == 200, body
        [sent] = up.requests
        assert sent["target"] == f"/v1beta/models/{quote(model, safe='')}:streamGenerateContent?alt=sse"
        assert sorted(k.lower() for k, _ in sent["headers"]) == sorted(
            ["host", "content-type", "content-length", "accept-encoding", "connection", "x-goog-api-key"]
        )
        assert up.violations == []
    assert len(gw.records) == 1


@pytest.mark.parametrize(
    "raw_model",
    ["m%0D%0AX-Injected%3A%20yes", "m%3Fkey%3DX", "..%2F..%2Fadmin", "m%00", "mod%C3%A8le", "m%23f"],
)
def test_a_gemini_clients_path_model_is_reencoded_or_refused(raw_model: str) -> None:
    """A Gemini client relayed to a Gemini upstream: the model from the path is decoded once,
    checked, and encoded again as one segment."""
    model = __import__("urllib.parse").parse.unquote(raw_model)
    with StrictUpstream("gemini", model=model) as up:
        gw = Gateway(up.url(), upstream_key=KEY)
        try:
            path = f"/v1beta/models/{raw_model}:streamGenerateContent?alt=sse&key=client-secret"
            status, body, _ = _post(gw, "gemini", _first_turn("gemini"), path=path)
        finally:
            gw.close()
    if any(ord(c) < 32 for c in model) or ".." in model:
        # A control character: no provider takes it; a dot segment: refused with the path.
        assert status == 400 and _client_error_shape("gemini", body)
        assert up.requests == []
    else:
        assert status == 200, body
        [sent] = up.requests
        assert sent["target"] == f"/v1beta/models/{quote(model, safe='')}:streamGenerateContent?alt=sse"
        assert "client-secret" not in json.dumps(sent["headers"]) + sent["target"]


def test_the_upstream_path_is_built_from_the_raw_path() -> None:
    """``%3F`` in the client's path prefix stays ``%3F``: it cannot start a query upstream."""
    with StrictUpstream("messages") as up:
        gw = Gateway(up.url(), upstream_key=KEY)
        try:
            status, _, _ = _post(gw, "messages", _first_turn("messages"), path="/v1/files%3F/v1/messages")
        finally:
            gw.close()
    assert status == 400  # the strict upstream knows only /v1/messages ...
    assert up.requests[0]["target"] == "/v1/files%3F/v1/messages"  # ... and got no query


@pytest.mark.parametrize("header", [("anthropic-version", "2023-06-01\u00e9"), ("anthropic-beta", "x\u4e2d"),
                                    ("x-api-key", "k\u00ff")])  # fmt: skip
def test_a_header_that_is_not_ascii_is_a_400_in_the_clients_shape(header: Tuple[str, str]) -> None:
    with StrictUpstream("messages") as up:
        gw = Gateway(up.url(), pass_through_auth=True)
        try:
            body = json.dumps(_first_turn("messages")).encode()
            head = (f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\n{header[0]}: {header[1]}\r\nconnection: close\r\n\r\n")  # fmt: skip
            got = _raw(gw.port, head.encode("utf-8") + body)
        finally:
            gw.close()
    assert got.startswith(b"HTTP/1.1 400")
    assert _client_error_shape("messages", got.split(b"\r\n\r\n", 1)[1])
    assert up.requests == []
    assert len(gw.records) == 1 and gw.records[0]["status"] == 400


# -- credentials ----------------------------------------------------------------------------------

ALL_KEYS = {"authorization": f"Bearer {CLIENT_KEY}", "x-api-key": CLIENT_KEY, "x-goog-api-key": CLIENT_KEY,
            "api-key": CLIENT_KEY}  # fmt: skip


@pytest.mark.parametrize(("upstream_dialect", "client"), PAIRS)
def test_no_client_credential_reaches_another_provider(upstream_dialect: str, client: str) -> None:
    """Every provider's credential header sent at once, even with pass-through on: the
    upstream of another dialect gets the gateway's own key in its own form, nothing else."""
    with StrictUpstream(upstream_dialect) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY, pass_through_auth=True)
        try:
            status, body, _ = _post(gw, client, _first_turn(client), headers=ALL_KEYS)
        finally:
            gw.close()
    assert status == 200, body
    assert up.violations == []
    assert CLIENT_KEY not in json.dumps(up.requests[0]["headers"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_pass_through_forwards_only_the_dialects_own_credential(dialect: str) -> None:
    """Relayed to an upstream of the client's dialect with ``pass_through_auth``: the
    client's credential of that dialect, in its form; the others never."""
    with StrictUpstream(dialect) as up:
        gw = Gateway(up.url(), pass_through_auth=True)
        try:
            own = {"chat": "authorization", "responses": "authorization", "messages": "x-api-key",
                   "gemini": "x-goog-api-key"}[dialect]  # fmt: skip
            headers = {k: v for k, v in ALL_KEYS.items() if k != own}
            headers[own] = f"Bearer {KEY}" if own == "authorization" else KEY
            status, body, _ = _post(gw, dialect, _first_turn(dialect), headers=headers)
            # Without pass-through nothing is forwarded: the upstream refuses.
            gw2 = Gateway(up.url())
            try:
                refused = _post(gw2, dialect, _first_turn(dialect), headers=headers)[0]
            finally:
                gw2.close()
        finally:
            gw.close()
    assert status == 200, body
    assert up.violations == ["credential"]
    assert refused == 401


@pytest.mark.parametrize("client", DIALECTS)
def test_client_keys_are_checked_in_the_clients_own_header(client: str) -> None:
    with StrictUpstream("chat") as up:
        gw = Gateway(
            up.url(), upstream_dialect="chat", upstream_key=KEY, client_keys=["gw-key-1", "gw-key-2"]
        )
        try:
            header = {"chat": "authorization", "responses": "authorization", "messages": "x-api-key",
                      "gemini": "x-goog-api-key"}[client]  # fmt: skip
            good = "Bearer gw-key-2" if header == "authorization" else "gw-key-2"
            bad = "Bearer nope" if header == "authorization" else "nope"
            denied = _post(gw, client, _first_turn(client), headers={header: bad})
            missing = _post(gw, client, _first_turn(client))
            allowed = _post(gw, client, _first_turn(client), headers={header: good})
        finally:
            gw.close()
    assert denied[0] == missing[0] == 401
    _client_error_shape(client, denied[1])
    assert allowed[0] == 200
    assert len(up.requests) == 1 and "gw-key" not in json.dumps(up.requests[0]["headers"])


# -- errors in the client's words -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(("upstream_dialect", "client"), PAIRS)
def test_an_upstream_rate_limit_reaches_the_client_in_its_dialect(
    upstream_dialect: str, client: str, stream: bool
) -> None:
    with StrictUpstream(upstream_dialect, fail=("status", 429)) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
        try:
            body = _first_turn(client)
            body["stream"] = stream
            path = _path(client, stream=stream)
            if client == "gemini":
                del body["stream"]
            status, got, headers = _post(gw, client, body, path=path)
        finally:
            gw.close()
    assert status == 429
    assert _client_error_shape(client, got) == "slow down"
    assert headers.get("retry-after") == "7"
    assert headers.get("request-id" if client == "messages" else "x-request-id") == "req_up_1"
    [record] = gw.records
    assert record["status"] == 429 and record["request_notes"] is not None


@pytest.mark.parametrize("failure", ["cut", "event"])
@pytest.mark.parametrize(("upstream_dialect", "client"), PAIRS)
def test_a_failed_stream_is_never_a_200_for_a_client_that_asked_for_none(
    upstream_dialect: str, client: str, failure: str
) -> None:
    """Cut in the middle: 502; an error event in the stream: its class's status (Anthropic's
    overloaded: 529 for a Messages client, 503 for the others). Always the client's shape."""
    with StrictUpstream(upstream_dialect, fail=failure) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
        try:
            body = _first_turn(client)
            body.pop("stream", None)
            status, got, _ = _post(gw, client, body, path=_path(client, stream=False))
        finally:
            gw.close()
    assert status >= 500, got
    message = _client_error_shape(client, got)
    if failure == "cut":
        assert status == 502 and "cut off" in message
    else:
        assert status in (500, 503) and "Overloaded" in message
    assert len(gw.records) == 1 and gw.records[0]["status"] == status


@pytest.mark.parametrize(("upstream_dialect", "client"), [("chat", "messages"), ("messages", "gemini"),
                                                          ("gemini", "responses"), ("responses", "chat")])  # fmt: skip
def test_the_sdk_raises_the_upstreams_error_with_its_message(upstream_dialect: str, client: str) -> None:
    """The client's own SDK reads the translated error: its status class, the message."""
    with StrictUpstream(upstream_dialect, fail=("status", 429)) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
        try:
            with pytest.raises(Exception) as raised:
                LOOPS[client](gw.url(), True)
        finally:
            gw.close()
    error = raised.value
    assert "slow down" in str(error)
    assert getattr(error, "status_code", None) == 429 or getattr(error, "code", None) == 429


# -- hostile clients ----------------------------------------------------------------------------


@pytest.mark.parametrize("client", DIALECTS)
def test_a_deep_body_is_a_400_and_logged(client: str) -> None:
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY)
        try:
            deep = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            # The gateway's json.loads recurses to the interpreter's limit on this body: a
            # collection then (an earlier test's garbage reporting itself) would fail inside
            # that recursion and be reported as this test's error. None runs meanwhile.
            import gc

            gc.collect()
            gc.disable()
            try:
                status, got, _ = _post(gw, client, deep)
            finally:
                gc.enable()
        finally:
            gw.close()
    assert status == 400 and "deep" in _client_error_shape(client, got)
    assert up.requests == [] and len(gw.records) == 1


def test_body_limits_fit_a_real_image_and_refuse_past_the_limit() -> None:
    image = "A" * (770 * 1024)
    body = {"model": "m", "stream": True, "max_tokens": 100, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {"type": "text", "text": "What is it?"}]}]}  # fmt: skip
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY)
        small = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY, max_body_size=100_000)
        try:
            fits = _post(gw, "messages", body)
            refused = _post(small, "messages", body)
        finally:
            gw.close()
            small.close()
    assert fits[0] == 200 and up.violations == []
    assert refused[0] == 413 and "larger than 100000" in _client_error_shape("messages", refused[1])


def test_a_slow_body_and_a_slow_head_are_let_go() -> None:
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY, body_timeout=0.5, head_timeout=0.5)
        try:
            started = time.monotonic()
            with socket.create_connection(("127.0.0.1", gw.port), timeout=TIMEOUT) as sock:
                sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                             b"content-length: 1000\r\n\r\n{")  # fmt: skip
                reply = b""
                for _ in range(100):
                    data = sock.recv(65536)
                    if not data:
                        break
                    reply += data
            body_wait = time.monotonic() - started
            started = time.monotonic()
            with socket.create_connection(("127.0.0.1", gw.port), timeout=TIMEOUT) as sock:
                sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")
                closed = False
                for _ in range(200):  # one byte per 50 ms, until the gateway closes
                    try:
                        sock.sendall(b"x")
                        sock.settimeout(0.05)
                        if sock.recv(1) == b"":
                            closed = True
                            break
                    except socket.timeout:
                        continue
                    except OSError:
                        closed = True
                        break
            head_wait = time.monotonic() - started
        finally:
            gw.close()
    assert reply.startswith(b"HTTP/1.1 408")
    assert _client_error_shape("messages", reply.split(b"\r\n\r\n", 1)[1])
    assert body_wait < 5 and closed and head_wait < 5
    assert up.requests == []


def test_settings_that_cross_and_those_that_are_noted() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"topK": 40, "seed": 7, "presencePenalty": 0.5, "frequencyPenalty": 0.25}}  # fmt: skip
    chat = ssewire.translate_request(body, "gemini", "chat", model="m")
    assert (chat.body["seed"], chat.body["presence_penalty"], chat.body["frequency_penalty"]) == (
        7,
        0.5,
        0.25,
    )
    assert any(n.startswith("top_k") for n in chat.notes)
    messages = ssewire.translate_request(body, "gemini", "messages", model="m")
    assert messages.body["top_k"] == 40
    assert {n.split(" ")[0] for n in messages.notes} >= {"seed", "presence_penalty", "frequency_penalty"}
    back = ssewire.translate_request(
        chat.body | {"user": "u-1", "metadata": {"a": "b"}, "store": True}, "chat", "gemini"
    )
    assert back.body["generationConfig"]["seed"] == 7
    assert {n.split(" ")[0] for n in back.notes} >= {"user", "metadata", "store"}
    to_messages = ssewire.translate_request({"model": "m", "user": "u-1", "messages": [{"role": "user", "content": "x"}]},
                                            "chat", "messages")  # fmt: skip
    assert to_messages.body["metadata"] == {"user_id": "u-1"}
    responses = ssewire.translate_request(to_messages.body, "messages", "responses")
    assert responses.body["user"] == "u-1"


def test_translate_error_maps_every_dialect() -> None:
    for source in DIALECTS:
        for target in DIALECTS:
            e = ssewire.translate_error(429, error_body(source, 429, "slow down"), source, target)
            assert e.status == 429 and e.content_type == "application/json"
            assert _client_error_shape(target, e.body) == "slow down"
    overloaded = error_body("messages", 529, "Overloaded")
    assert ssewire.translate_error(529, overloaded, "messages", "chat").status == 503
    assert ssewire.translate_error(529, overloaded, "messages", "messages").status == 529
    html = ssewire.translate_error(502, b"<html>bad gateway</html>", "chat", "gemini")
    assert json.loads(html.body)["error"] == {
        "code": 502,
        "message": "<html>bad gateway</html>",
        "status": "INTERNAL",
    }


def test_ssewire_gateway_serves_a_client_in_one_command() -> None:
    """``ssewire gateway`` as a user starts it: a process, its key from the environment, a
    Messages client served from a chat upstream, one log line on stdout."""
    import os
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with StrictUpstream("chat") as up:
        env = {**os.environ, "UPSTREAM_KEY": KEY}
        argv = [sys.executable, "-m", "ssewire", "gateway", "--upstream", up.url(), "--upstream-dialect", "chat",
                "--upstream-key-env", "UPSTREAM_KEY", "--port", str(port)]  # fmt: skip
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # A fresh interpreter imports the package, aiohttp and the gateway first: on a
            # loaded machine that takes seconds, so the wait is long (and bounded).
            deadline = time.monotonic() + 2 * TIMEOUT
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                err = proc.stderr.read().decode(errors="replace")[-2000:] if proc.poll() is not None else ""
                raise AssertionError(f"the gateway did not start (exit status {proc.poll()}): {err}")
            import anthropic

            client = anthropic.Anthropic(api_key="client", base_url=f"http://127.0.0.1:{port}", max_retries=0,
                                         timeout=TIMEOUT)  # fmt: skip
            message = client.messages.create(model="m", max_tokens=100,
                                             messages=[{"role": "user", "content": "Weather in Paris?"}])  # fmt: skip
        finally:
            proc.terminate()
            out, _ = proc.communicate(timeout=TIMEOUT)
    assert message.stop_reason == "tool_use" and up.violations == []
    [line] = [json.loads(x) for x in out.decode().splitlines() if x.strip()]
    assert line["status"] == 200 and line["served_as"] == "messages" and line["dialect"] == "chat"


def test_the_gateway_refuses_to_start_without_its_key() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ssewire.gateway", "--upstream", "http://127.0.0.1:9",
                          "--upstream-key-env", "SSEWIRE_NO_SUCH_VARIABLE"],
                         capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    assert out.returncode != 0 and "SSEWIRE_NO_SUCH_VARIABLE" in out.stderr


# -- what a review of the gateway found (each was reproduced before its fix) ---------------------


class RawUpstream:
    """An upstream on 127.0.0.1 that reads one request head and answers ``reply`` (bytes, as
    is), then closes: for answers a strict server would not make (a body cut short, a body
    delimited by the close)."""

    def __init__(self, reply: bytes, pause: float = 0.0) -> None:
        import threading

        self.reply = reply
        self.pause = pause
        self.heads: List[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(TIMEOUT)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        for _ in range(8):
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(TIMEOUT)
                data = b""
                for _ in range(1000):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                    head, sep, body = data.partition(b"\r\n\r\n")
                    length = [
                        int(l.split(b":")[1])
                        for l in head.split(b"\r\n")
                        if l.lower().startswith(b"content-length:")
                    ]
                    if sep and len(body) >= (length[0] if length else 0):
                        break
                self.heads.append(data.split(b"\r\n\r\n")[0])
                if self.pause:
                    time.sleep(self.pause)
                conn.sendall(self.reply)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() that waits
        except OSError:
            pass
        self.sock.close()
        self.thread.join(TIMEOUT)


CHAT_SSE = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
            b'"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}\n\n'
            b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
            b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')  # fmt: skip


@pytest.mark.parametrize("target", ["http://evil.example/v1/chat/completions", "//evil.example/v1/chat/completions",
                                    "/..;/admin/v1/chat/completions", "/a/..;/v1/chat/completions"])  # fmt: skip
def test_a_request_target_cannot_name_another_host_or_climb(target: str) -> None:
    up = RawUpstream(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    gw = Gateway(up.url(), upstream_key="sk-gw")
    try:
        body = json.dumps(
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        ).encode()
        got = _raw(gw.port, f"POST {target} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                   f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)  # fmt: skip
    finally:
        gw.close()
        up.close()
    assert got.startswith(b"HTTP/1.1 400"), got[:80]
    assert up.heads == []


def test_a_key_that_is_not_ascii_is_a_401_not_a_500() -> None:
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY, client_keys=["k1"])
        try:
            body = json.dumps(_first_turn("messages")).encode()
            got = _raw(gw.port, b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                       b"x-api-key: \xff\xfe\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
        finally:
            gw.close()
    assert got.startswith(b"HTTP/1.1 401")
    _client_error_shape("messages", got.split(b"\r\n\r\n", 1)[1])


@pytest.mark.parametrize("upstream_dialect", [None, "chat"], ids=["relayed", "translated"])
def test_a_body_cut_short_or_ended_by_the_close_never_stalls_the_gateway(
    upstream_dialect: Optional[str],
) -> None:
    """Declared longer than it is, then closed: the client is cut off too, at once, and the
    gateway serves the next request. Delimited by the close: a complete answer."""
    cut = RawUpstream(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
                      % (len(CHAT_SSE) + 1000, CHAT_SSE))  # fmt: skip
    whole = RawUpstream(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + CHAT_SSE)
    client = "chat" if upstream_dialect is None else "messages"
    body = _first_turn(client)
    try:
        for up, complete in ((cut, False), (whole, True)):
            gw = Gateway(up.url(), upstream_dialect=upstream_dialect)
            try:
                started = time.monotonic()
                status, got, _ = (0, b"", {})
                try:
                    status, got, _ = _post(gw, client, body)
                except aiohttp.ClientPayloadError:
                    status = -1  # the response was cut off, as the upstream's was
                assert time.monotonic() - started < 10
                if complete:
                    assert status == 200 and b"Hello" in got
                    assert gw.records[-1]["done"] is True and "upstream_error" not in gw.records[-1]
                else:
                    assert status == -1
                # The gateway still answers.
                again = _post(
                    gw, "chat", {"model": "m", "stream": True, "messages": []}, path="/v1/embeddings"
                )
                assert again[0] == 404
            finally:
                gw.close()
    finally:
        cut.close()
        whole.close()


@pytest.mark.parametrize("http10", [False, True], ids=["http11", "http10"])
def test_a_relayed_client_that_asked_for_no_stream_never_gets_200_for_a_cut_answer(http10: bool) -> None:
    answer = json.dumps({"id": "c", "object": "chat.completion", "choices": []}).encode()
    up = RawUpstream(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                     % (len(answer) + 500, answer))  # fmt: skip
    gw = Gateway(up.url())
    try:
        body = json.dumps(
            {"model": "m", "stream": False, "messages": [{"role": "user", "content": "x"}]}
        ).encode()
        version = "HTTP/1.0" if http10 else "HTTP/1.1"
        got = _raw(gw.port, f"POST /v1/chat/completions {version}\r\nhost: x\r\ncontent-type: application/json\r\n"
                   f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)  # fmt: skip
    finally:
        gw.close()
        up.close()
    assert got.split(b"\r\n", 1)[0].endswith(b"502 Bad Gateway"), got[:100]
    assert "cut off" in _client_error_shape("chat", got.split(b"\r\n\r\n", 1)[1])


def test_carried_reasoning_costs_linear_time() -> None:
    """Many tool calls, each carrying its reasoning: restoring them does linear work."""
    import base64

    def timed(n: int) -> float:
        def carrier(i: int) -> str:
            payload = json.dumps({"i": f"toolu_{i}", "r": [{"t": "x", "s": "c2ln"}]}).encode()
            return "sswc1_m_" + base64.urlsafe_b64encode(payload).decode().rstrip("=")

        calls = [
            {"id": carrier(i), "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for i in range(n)
        ]
        body = {"model": "m", "messages": [{"role": "user", "content": "go"},
                                           {"role": "assistant", "content": None, "tool_calls": calls}]}  # fmt: skip
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            ssewire.translate_request(body, "chat", "messages")
            best = min(best, time.perf_counter() - t0)
        return best

    small, large = timed(2000), timed(8000)
    assert large < small * 4 * 3, (small, large)

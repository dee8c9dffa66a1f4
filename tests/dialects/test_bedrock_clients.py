"""Bedrock clients served by translation: boto3's ``invoke_model_with_response_stream`` and the
Anthropic SDK's ``AnthropicBedrock`` read ``Translator(source, "messages",
target_framing="eventstream")``'s output from a loopback Bedrock that checks what the real one
checks (a SigV4 ``Authorization`` header, the InvokeModel path, an InvokeModel body). Nothing but
127.0.0.1 is contacted; every loop is bounded."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
import ssewire
from support import _final_text, paths

boto3 = pytest.importorskip("boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

DATA = paths.DATA
MODEL = "anthropic.claude-3-5-sonnet-20241022-v2:0"
#: Upstream captures of other dialects served to the Bedrock clients, with their text.
SOURCES = [
    ("chat", DATA / "chat" / "basic_stop.sse"),
    ("responses", DATA / "responses" / "reasoning_summary.sse"),
    ("gemini", DATA / "gemini" / "thinking_signature.sse"),
]


class _Bedrock(BaseHTTPRequestHandler):
    """A loopback Bedrock runtime: InvokeModelWithResponseStream only, as strict as AWS about
    the request's form; answers with ``self.server.answer()``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        server: Any = self.server
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        auth = self.headers.get("authorization", "")
        problems = []
        if not auth.startswith("AWS4-HMAC-SHA256 Credential=") or "Signature=" not in auth:
            problems.append("no SigV4 signature")
        if not self.headers.get("x-amz-date"):
            problems.append("no x-amz-date")
        parts = self.path.split("/")
        if len(parts) != 4 or parts[1] != "model" or parts[3] != "invoke-with-response-stream":
            problems.append(f"path {self.path}")
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        # InvokeModel's Anthropic body names its version in the body (boto3 users write
        # "bedrock-2023-05-31"; the Anthropic SDK's Bedrock client sets its own).
        if not isinstance(request, dict) or not isinstance(request.get("anthropic_version"), str):
            problems.append("not an InvokeModel body for Anthropic models")
        elif "model" in request:
            problems.append("model in the body (InvokeModel names it in the path)")
        server.requests.append((self.path, request, problems))
        if problems:
            data = json.dumps({"message": "; ".join(problems)}).encode()
            self.send_response(400)
            self.send_header("x-amzn-errortype", "ValidationException")
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        data = server.answer()
        self.send_response(200)
        self.send_header("content-type", "application/vnd.amazon.eventstream")
        self.send_header("x-amzn-bedrock-content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def bedrock() -> Iterator[Tuple[str, Any]]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Bedrock)
    server.requests = []
    server.answer = lambda: b""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        thread.join(timeout=5)


def _translated(dialect: str, capture: Path) -> Tuple[bytes, ssewire.Translator]:
    t = ssewire.Translator(dialect, "messages", target_framing="eventstream")
    out = t.feed(capture.read_bytes()) + t.finish()
    return out, t


def _client(url: str) -> Any:
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIDLOOPBACK",
        aws_secret_access_key="loopback-secret",
        config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=10),
    )


BODY = json.dumps(
    {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
)


@pytest.mark.parametrize("dialect,capture", SOURCES, ids=[d for d, _ in SOURCES])
def test_boto3_reads_the_translated_stream(bedrock: Tuple[str, Any], dialect: str, capture: Path) -> None:
    url, server = bedrock
    out, t = _translated(dialect, capture)
    server.answer = lambda: out
    response = _client(url).invoke_model_with_response_stream(modelId=MODEL, body=BODY)
    events: List[Dict[str, Any]] = []
    for n, event in enumerate(response["body"]):
        assert n < 10_000
        events.append(json.loads(event["chunk"]["bytes"]))
    assert server.requests[-1][2] == [], server.requests[-1]
    s = ssewire.MessagesStream()
    s.consume(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))
    s.finish()
    assert s.done and s.error is None
    assert s.result() == t.result()
    assert _final_text("messages", s.result()) == _final_text("messages", t.result()) != ""


@pytest.mark.parametrize(
    "kind,code",
    [("rate_limit_error", "throttlingException"), ("overloaded_error", "serviceUnavailableException")],
)
def test_an_upstream_error_reaches_boto3_as_its_exception(
    bedrock: Tuple[str, Any], kind: str, code: str
) -> None:
    url, server = bedrock
    upstream = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
        b'"model":"claude","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"%s","message":"slow down"}}\n\n'
        % kind.encode()
    )
    t = ssewire.Translator("messages", "messages", target_framing="eventstream")
    out = t.feed(upstream) + t.finish()
    server.answer = lambda: out
    response = _client(url).invoke_model_with_response_stream(modelId=MODEL, body=BODY)
    with pytest.raises(botocore_exceptions.EventStreamError) as e:
        for n, _ in enumerate(response["body"]):
            assert n < 100
    assert e.value.response["Error"]["Code"] == code
    assert e.value.response["Error"]["Message"] == "slow down"


def test_the_anthropic_sdks_bedrock_client_reads_it(bedrock: Tuple[str, Any]) -> None:
    anthropic = pytest.importorskip("anthropic")
    url, server = bedrock
    out, t = _translated("chat", DATA / "chat" / "basic_stop.sse")
    server.answer = lambda: out
    client = anthropic.AnthropicBedrock(
        aws_access_key="AKIDLOOPBACK", aws_secret_key="loopback-secret", aws_region="us-east-1", base_url=url,
        max_retries=0, timeout=10,
    )  # fmt: skip
    with client.messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert server.requests[-1][2] == [], server.requests[-1]
    assert text == _final_text("messages", t.result()) != ""
    assert final.stop_reason == t.result()["stop_reason"]


def test_translator_framing_options() -> None:
    with pytest.raises(ValueError):
        ssewire.Translator("chat", "messages", target_framing="websocket")
    with pytest.raises(ValueError):
        ssewire.Translator("auto", "messages", framing="eventstream")
    assert (
        ssewire.Translator("chat", "messages", target_framing="eventstream").target_framing == "eventstream"
    )
    assert ssewire.Translator("chat", "messages").target_framing == "sse"


def test_a_bedrock_upstream_is_read_as_a_source(bedrock: Callable[..., Any]) -> None:
    """The other way: a Bedrock InvokeModel body (Claude's Messages events in chunks) translated
    into chat for an OpenAI client."""
    out, _ = _translated("chat", DATA / "chat" / "basic_stop.sse")
    t = ssewire.Translator("messages", "chat", framing="eventstream")
    chat = t.feed(out) + t.finish()
    s = ssewire.ChatCompletionStream()
    s.consume(chat)
    s.finish()
    assert s.done and s.error is None
    want = ssewire.accumulate((DATA / "chat" / "basic_stop.sse").read_bytes(), "chat")
    assert s.result()["choices"][0]["message"]["content"] == want["choices"][0]["message"]["content"]

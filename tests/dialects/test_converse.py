"""``ConverseStream``: Amazon Bedrock Converse, the fifth dialect. A loopback Bedrock serves
Converse streams written as the service writes them (one event stream message per event, its
``:event-type`` header naming it, a padded JSON payload); boto3's ``converse_stream`` reads the
same bytes, and boto3's ``converse()`` parses the response ``ConverseStream.result()`` says the
non-streaming call would give. Whole, byte by byte and at random cuts; exceptions are the
stream's error. Nothing but 127.0.0.1 is contacted; every loop is bounded."""

from __future__ import annotations

import base64
import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import ssewire
from support import paths
from support.dialects import read_converse

boto3 = pytest.importorskip("boto3")

MODEL = "anthropic.claude-3-7-sonnet-20250219-v1:0"
Event = Tuple[str, Dict[str, Any]]

#: Converse streams as Bedrock sends them: (event type, payload without its padding).
TURNS: Dict[str, List[Event]] = {
    "text": [
        ("messageStart", {"role": "assistant"}),
        *[("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in
          ["Hello", ", \"world\"", " — naïve café\n", "ok."]],
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 12, "outputTokens": 7, "totalTokens": 19},
                      "metrics": {"latencyMs": 314}}),
    ],
    "tool_use_with_reasoning": [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "The user wants "}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "the weather."}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkYIAxgC"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Let me check."}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_kZJMlvQm", "name": "get_weather"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": ""}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"city\": \"Par"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "is\", \"unit\": \"c\"}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 400, "outputTokens": 60, "totalTokens": 1460,
                                "cacheReadInputTokens": 800, "cacheWriteInputTokens": 200},
                      "metrics": {"latencyMs": 1021}}),
    ],
    "redacted_reasoning": [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {
            "redactedContent": base64.b64encode(b"\x00\x01opaque\xff").decode()}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Done."}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("messageStop", {"stopReason": "max_tokens", "additionalModelResponseFields": {"x": 1}}),
        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}, "metrics": {"latencyMs": 9}}),
    ],
    # A server tool (Nova's code interpreter): the call has a type, its result block streams
    # its content as deltas (text pieces joined, each JSON document an item).
    "server_tool": [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "srv_1", "name": "nova_code_interpreter", "type": "server_tool_use"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"snippet\": \"print(6*7)\"}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
            "toolUseId": "srv_1", "type": "nova_code_interpreter_result", "status": "success"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [
            {"json": {"stdOut": "42\n", "stdErr": "", "exitCode": 0, "isError": False}}]}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "ran "}]}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "once"}]}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "It is 42."}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 30, "outputTokens": 20, "totalTokens": 50}, "metrics": {"latencyMs": 77}}),
    ],
}  # fmt: skip


def message(kind: str, payload: Dict[str, Any], rng: random.Random) -> bytes:
    body = dict(payload, p="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"[: rng.randint(1, 40)])
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return ssewire.encode_eventstream_message(headers, json.dumps(body).encode())


def exception(kind: str, text: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return ssewire.encode_eventstream_message(headers, json.dumps({"message": text}).encode())


def body_of(events: List[Event], seed: int = 0) -> bytes:
    rng = random.Random(seed)
    return b"".join(message(k, p, rng) for k, p in events)


def converse_response(events: List[Event]) -> Dict[str, Any]:
    """The response ``converse()`` gives for the same answer, as Bedrock writes it (JSON: a
    blob in base64), folded here independently of the core: the test's oracle."""
    blocks: Dict[int, Dict[str, Any]] = {}
    out: Dict[str, Any] = {}
    for kind, p in events:
        i = p.get("contentBlockIndex", 0)
        if kind == "contentBlockStart" and "toolResult" in p["start"]:
            blocks[i] = {"toolResult": dict(p["start"]["toolResult"], content=[])}
        elif kind == "contentBlockStart":
            tool = p["start"]["toolUse"]
            blocks[i] = {"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"], "input": ""}}
            if "type" in tool:
                blocks[i]["toolUse"]["type"] = tool["type"]
        elif kind == "contentBlockDelta":
            d = p["delta"]
            if "text" in d:
                blocks.setdefault(i, {"text": ""})["text"] += d["text"]
            elif "toolUse" in d:
                blocks[i]["toolUse"]["input"] += d["toolUse"]["input"]
            elif "toolResult" in d:
                content = blocks[i]["toolResult"]["content"]
                for piece in d["toolResult"]:
                    if "text" in piece and content and "text" in content[-1]:
                        content[-1]["text"] += piece["text"]
                    else:
                        content.append(dict(piece))
            else:
                r = d["reasoningContent"]
                if "redactedContent" in r:
                    blocks[i] = {"reasoningContent": {"redactedContent": r["redactedContent"]}}
                else:
                    b = blocks.setdefault(i, {"reasoningContent": {"reasoningText": {"text": ""}}})
                    t = b["reasoningContent"]["reasoningText"]
                    if "text" in r:
                        t["text"] += r["text"]
                    if "signature" in r:
                        t["signature"] = t.get("signature", "") + r["signature"]
        elif kind == "messageStop":
            out["stopReason"] = p["stopReason"]
            if "additionalModelResponseFields" in p:
                out["additionalModelResponseFields"] = p["additionalModelResponseFields"]
        elif kind == "metadata":
            out["usage"], out["metrics"] = p["usage"], p["metrics"]
    for b in blocks.values():
        if "toolUse" in b:
            b["toolUse"]["input"] = json.loads(b["toolUse"]["input"] or "{}")
    content = [blocks[i] for i in sorted(blocks)]
    return {"output": {"message": {"role": "assistant", "content": content}}, **out}


class _Bedrock(BaseHTTPRequestHandler):
    """A loopback Bedrock runtime for Converse: checks the SigV4 header, the path and that
    the body is a Converse request; answers the stream or the whole response it was given."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server: Any = self.server
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        auth = self.headers.get("authorization", "")
        parts = self.path.split("/")
        ok = (
            auth.startswith("AWS4-HMAC-SHA256 Credential=")
            and "Signature=" in auth
            and len(parts) == 4
            and parts[1] == "model"
            and isinstance(request.get("messages"), list)
            and "modelId" not in request
        )
        if not ok:
            data, status, ctype = json.dumps({"message": "bad request"}).encode(), 400, "application/json"
        elif parts[3] == "converse-stream":
            data, status, ctype = server.stream, 200, "application/vnd.amazon.eventstream"
        else:
            data, status, ctype = json.dumps(server.whole).encode(), 200, "application/json"
        server.paths.append((self.path, ok))
        self.send_response(status)
        if status != 200:
            self.send_header("x-amzn-errortype", "ValidationException")
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def bedrock() -> Iterator[Tuple[Any, Any]]:
    from botocore.config import Config

    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Bedrock)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{server.server_address[1]}",
        aws_access_key_id="AKIDLOOPBACK", aws_secret_access_key="loopback-secret",
        config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=10),
    )  # fmt: skip
    try:
        yield server, client
    finally:
        server.shutdown()
        thread.join(timeout=5)


@pytest.mark.parametrize("turn", list(TURNS))
def test_the_fold_is_what_converse_returns(bedrock: Tuple[Any, Any], turn: str) -> None:
    server, client = bedrock
    events = TURNS[turn]
    server.stream = body_of(events)
    server.whole = converse_response(events)
    messages = [{"role": "user", "content": [{"text": "weather in Paris?"}]}]
    # boto3 reads the stream we serve event for event as Bedrock's.
    streamed = client.converse_stream(modelId=MODEL, messages=messages)
    got = []
    for n, event in enumerate(streamed["stream"]):
        assert n < 1000
        got.append(event)
    assert [next(iter(e)) for e in got] == [k for k, _ in events]
    # The non-streaming response, as boto3 parses it (blobs decoded into bytes).
    whole = client.converse(modelId=MODEL, messages=messages)
    whole.pop("ResponseMetadata")
    assert all(ok for _, ok in server.paths), server.paths
    s = read_converse(server.stream, [])
    assert s.done and s.error is None and s.warnings == []
    assert s.result() == whole
    assert ssewire.accumulate(server.stream, "converse") == whole


@pytest.mark.parametrize("turn", list(TURNS))
def test_any_cut_gives_the_same_result_and_items(turn: str) -> None:
    body = body_of(TURNS[turn], seed=7)
    whole = read_converse(body, [])
    rng = random.Random(turn)
    for cuts in ([*range(1, len(body))], sorted(rng.sample(range(1, len(body)), 10))):
        again = read_converse(body, cuts)
        assert again.result() == whole.result() and again.done
    s = ssewire.ConverseStream()
    items = s.feed(body[:50]) + s.feed(body[50:]) + s.finish()
    assert [i.type for i in items] == [k for k, _ in TURNS[turn]]
    texts = "".join(i.text or "" for i in items)
    assert texts == "".join(p.get("delta", {}).get("text", "") for _, p in TURNS[turn])


def test_items_carry_the_fields_of_their_event() -> None:
    s = ssewire.ConverseStream()
    items = s.feed(body_of(TURNS["tool_use_with_reasoning"])) + s.finish()
    start = next(i for i in items if i.type == "contentBlockStart")
    assert (start.tool_use_id, start.name, start.content_block_index) == (
        "tooluse_kZJMlvQm",
        "get_weather",
        2,
    )
    pieces = [i.input for i in items if i.input is not None]
    assert "".join(pieces) == '{"city": "Paris", "unit": "c"}'
    assert [i.signature for i in items if i.signature] == ["EqQBCkYIAxgC"]
    meta = items[-1]
    assert meta.usage["cacheReadInputTokens"] == 800 and meta.metrics == {"latencyMs": 1021}
    assert s.partial_arguments(2) == {"city": "Paris", "unit": "c"}
    red = ssewire.ConverseStream()
    red_items = red.feed(body_of(TURNS["redacted_reasoning"]))
    assert red_items[1].redacted_content == b"\x00\x01opaque\xff"


@pytest.mark.parametrize(
    "kind", ["throttlingException", "modelStreamErrorException", "internalServerException"]
)
def test_an_exception_is_the_streams_error(kind: str) -> None:
    events = TURNS["text"]
    body = body_of(events[:3]) + exception(kind, "Model stream failed.")
    s = read_converse(body, [len(body) - 5])
    assert s.error is not None and s.error.type == kind and s.error.message == "Model stream failed."
    assert not s.done
    assert s.result()["output"]["message"]["content"] == [{"text": 'Hello, "world"'}]
    with pytest.raises(ssewire.AccumulateError):
        ssewire.accumulate(body, "converse")


def test_a_cut_stream_is_incomplete_and_an_error_body_is_read_as_json() -> None:
    body = body_of(TURNS["text"][:4])
    s = read_converse(body, [])
    assert s.error is not None and s.error.code == "incomplete_stream"
    # Cut inside a message: the same code (was "incomplete_message", which no retry loop knows).
    for cut in (len(body) - 5, len(body) - 30):
        s = read_converse(body[:cut], [])
        assert s.error is not None and s.error.code == "incomplete_stream", (cut, s.error)
    s = read_converse(b'{"message": "The security token included in the request is invalid."}', [])
    assert s.error is not None and s.error.message.startswith("The security token")
    s = read_converse(b"<html>502</html>", [])
    assert s.error is not None and s.error.code == "not_event_stream"


def test_a_converse_body_is_told_by_its_first_message() -> None:
    body = body_of(TURNS["tool_use_with_reasoning"])
    assert ssewire.detect_dialect(body) == "converse"
    assert ssewire.detect_dialect(body[:40]) != "converse"  # its first message is not whole yet
    assert ssewire.accumulate([body[:30], body[30:]]) == read_converse(body, []).result()
    t = ssewire.Translator("auto", "chat")
    assert t.feed(body) and t.source_dialect == "converse"
    assert ssewire.Translator("chat", "converse").target_dialect == "converse"


def test_the_command_line_prints_a_converse_capture(tmp_path: Any) -> None:
    import subprocess
    import sys

    capture = tmp_path / "converse.bin"
    capture.write_bytes(body_of(TURNS["text"]))
    out = subprocess.run([sys.executable, "-m", "ssewire", str(capture), "--json"], capture_output=True,
                         timeout=60, check=True).stdout  # fmt: skip
    assert json.loads(out) == read_converse(capture.read_bytes(), []).result()
    # --events: each event's fields (it printed the item's repr: the command line had no
    # reading of ConverseEvent), a blob as base64.
    capture.write_bytes(body_of(TURNS["redacted_reasoning"]))
    out = subprocess.run([sys.executable, "-m", "ssewire", str(capture), "--events"], capture_output=True,
                         timeout=60, check=True).stdout  # fmt: skip
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert [e.get("type") for e in events] == [k for k, _ in TURNS["redacted_reasoning"]], events
    assert not any("item" in e for e in events)
    blob = TURNS["redacted_reasoning"][1][1]["delta"]["reasoningContent"]["redactedContent"]
    assert events[1]["redacted_content"] == blob and events[1]["content_block_index"] == 0
    assert events[3]["text"] == "Done." and events[5]["stop_reason"] == "max_tokens"


def _answer(dialect: str, data: bytes) -> Tuple[str, List[Tuple[Any, Any]], Any]:
    """The text, the tool calls (name, arguments) and the stop reason (in neutral terms) a
    client of ``dialect`` reads from ``data``: the neutral reading of final objects."""
    from support import registry
    from support.neutral import neutral

    s = registry.STREAMS[dialect]()
    s.consume(data)
    s.finish()
    assert s.done and s.error is None, (dialect, s.error)
    n = neutral(dialect, s.result())
    return n["text"], [(name, args) for _, name, args in n["calls"]], n["stop"]


#: Converse's stop reasons in neutral terms (as ``support.neutral`` names them).
NEUTRAL_STOP = {"end_turn": "end", "tool_use": "tool", "max_tokens": "max", "stop_sequence": "end"}


@pytest.mark.parametrize("turn", ["text", "tool_use_with_reasoning"])
@pytest.mark.parametrize("target", ["chat", "messages", "responses", "gemini"])
def test_a_converse_upstream_is_translated_for_every_client(turn: str, target: str) -> None:
    body = body_of(TURNS[turn], seed=3)
    t = ssewire.Translator("converse", target)
    out = b"".join(t.feed(body[i : i + 37]) for i in range(0, len(body), 37)) + t.finish()
    text, calls, stop = _answer(target, out)
    want = read_converse(body, []).result()
    blocks = want["output"]["message"]["content"]
    assert text == "".join(b.get("text", "") for b in blocks)
    assert calls == [(b["toolUse"]["name"], b["toolUse"]["input"]) for b in blocks if "toolUse" in b]
    assert stop == NEUTRAL_STOP[want["stopReason"]]
    assert ssewire.translate(body, "converse", target) == out


DATA = paths.DATA
#: Upstream captures of every dialect that translation reads, served to Converse clients.
UPSTREAMS = [
    ("chat", "basic_stop"),
    ("chat", "tool_call_single"),
    ("messages", "parallel_tool_use"),
    ("responses", "function_call"),
    ("responses", "reasoning_summary"),
    ("gemini", "text_then_call"),
    ("gemini", "thinking_signature"),
]


def _client_view(events: List[Dict[str, Any]]) -> Tuple[str, List[Tuple[str, Any]], Any]:
    """Text, tool calls and stop reason from boto3's parsed ``converse_stream`` events."""
    text, calls, stop = "", [], None
    inputs: Dict[int, List[Any]] = {}
    for e in events:
        if "contentBlockDelta" in e:
            d = e["contentBlockDelta"]
            text += d["delta"].get("text", "")
            if "toolUse" in d["delta"]:
                inputs[d["contentBlockIndex"]][1].append(d["delta"]["toolUse"]["input"])
        elif "contentBlockStart" in e:
            s = e["contentBlockStart"]
            inputs[s["contentBlockIndex"]] = [s["start"]["toolUse"]["name"], []]
        elif "messageStop" in e:
            stop = e["messageStop"]["stopReason"]
    for _, (name, pieces) in sorted(inputs.items()):
        calls.append((name, json.loads("".join(pieces) or "{}")))
    return text, calls, stop


@pytest.mark.parametrize("source,capture", UPSTREAMS, ids=[f"{s}-{c}" for s, c in UPSTREAMS])
def test_every_upstream_is_served_to_converse_clients(
    bedrock: Tuple[Any, Any], source: str, capture: str
) -> None:
    server, client = bedrock
    upstream = (DATA / source / f"{capture}.sse").read_bytes()
    t = ssewire.Translator(source, "converse")
    out = b"".join(t.feed(upstream[i : i + 64]) for i in range(0, len(upstream), 64)) + t.finish()
    assert t.target_framing == "eventstream"
    # What the upstream said, as its own stream folds it.
    want_text, want_calls, want_stop = _answer(source, upstream)
    # ConverseStream reads it back.
    s = read_converse(out, [])
    assert s.done and s.error is None, s.error
    assert s.result() == t.result()
    blocks = s.result()["output"]["message"]["content"]
    assert "".join(b.get("text", "") for b in blocks) == want_text
    assert [(b["toolUse"]["name"], b["toolUse"]["input"]) for b in blocks if "toolUse" in b] == want_calls
    # boto3's converse_stream reads the same bytes from a loopback Bedrock.
    server.stream = out
    response = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
    events = []
    for n, event in enumerate(response["stream"]):
        assert n < 10_000
        events.append(event)
    text, calls, stop = _client_view(events)
    assert (text, calls) == (want_text, want_calls)
    assert stop == s.result()["stopReason"] and NEUTRAL_STOP[stop] == want_stop


def test_an_upstream_error_reaches_a_converse_client_as_its_exception(bedrock: Tuple[Any, Any]) -> None:
    from botocore.exceptions import EventStreamError

    server, client = bedrock
    upstream = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n' + (
        b'data: {"error":{"message":"Rate limit reached","type":"rate_limit_error"}}\n\n'
    )
    t = ssewire.Translator("chat", "converse")
    server.stream = t.feed(upstream) + t.finish()
    response = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
    with pytest.raises(EventStreamError) as e:
        for n, _ in enumerate(response["stream"]):
            assert n < 100
    assert e.value.response["Error"]["Code"] == "throttlingException"


def test_common_deltas_take_the_fast_path_and_read_as_decoded() -> None:
    """Text, tool input and reasoning deltas of Converse payloads (Bedrock's random ``p``
    padding, escapes, block indexes that change, a signature and a citation between them) are
    read by the payload template after the first of each kind; every item equals the item of
    that message decoded alone, and the result joins them, fed whole and message by message."""
    from support.items import _attrs

    rng = random.Random(7)
    pad = "abcdefghijklmnopqrstuvwxyz0123456789"
    texts = ["Hello", ' wor"ld\n', " caf\u00e9", " \u2028x", "\\path"]
    events: List[Tuple[str, Dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    events += [
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": t}}})
        for t in texts
    ]
    events.append(
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}})
    )
    events += [("contentBlockStop", {"contentBlockIndex": 0})]
    for index in (1, 2):
        events += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": t}}) for t in texts]
        events.append(
            ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"citation": {"title": "t"}}})
        )
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
    events.append(
        (
            "contentBlockStart",
            {"contentBlockIndex": 3, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
        )
    )
    args = json.dumps({"q": 'a "b"', "n": 2})
    events += [("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": args[i : i + 4]}}})
               for i in range(0, len(args), 4)]  # fmt: skip
    events += [("contentBlockStop", {"contentBlockIndex": 3}), ("messageStop", {"stopReason": "tool_use"})]
    messages = [
        ssewire.encode_eventstream_message(
            {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
            json.dumps(dict(payload, p=pad[: rng.randint(1, len(pad))])).encode(),
        )
        for kind, payload in events
    ]
    body = b"".join(messages)
    s = ssewire.ConverseStream()
    items = [_attrs(i) for i in s.feed(body)]
    fresh = [_attrs(i) for m in messages for i in ssewire.ConverseStream().feed(m)]
    assert items == fresh
    consumed = ssewire.ConverseStream()
    for m in messages:
        consumed.consume(m)
    assert consumed._fast_frames >= 3 * (len(texts) - 1) and s._fast_frames == consumed._fast_frames
    result = consumed.result()
    assert result == s.result()
    content = result["output"]["message"]["content"]
    assert content[0]["reasoningContent"]["reasoningText"] == {"text": "".join(texts), "signature": "sig"}
    # A text block with a citation is boto3's citationsContent, its text whole.
    assert [b["citationsContent"]["content"] for b in content[1:3]] == [[{"text": "".join(texts)}]] * 2
    assert content[3]["toolUse"]["input"] == json.loads(args)


def test_a_tool_input_cut_by_max_tokens_is_the_object_read_so_far() -> None:
    """A Messages answer stopped by ``max_tokens`` inside a tool call's input: into Converse
    the call's input is the object read so far (the Messages fold and the Gemini writer keep
    it so), not ``{}``; whole, split and byte by byte."""
    fragments = ['{"query": "weather in Par', 'is", "days": [1, 2', ", 3"]
    frames = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_01", "name": "search", "input": {}}}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "input_json_delta", "partial_json": f}})
          for f in fragments],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens"},
                           "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    upstream = b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in frames)
    source = ssewire.MessagesStream()
    source.consume(upstream)
    source.finish()
    want = source.result()["content"][0]["input"]
    assert want == {"query": "weather in Paris", "days": [1, 2]}
    gemini = ssewire.Translator("messages", "gemini")
    gemini.feed(upstream)
    gemini.finish()
    parts = gemini.result()["candidates"][0]["content"]["parts"]
    assert parts[0]["functionCall"]["args"] == want
    for size in (len(upstream), 1, 29):
        t = ssewire.Translator("messages", "converse")
        out = b"".join(t.feed(upstream[i : i + size]) for i in range(0, len(upstream), size)) + t.finish()
        s = read_converse(out, [])
        assert s.error is None, s.error
        assert s.result() == t.result()
        tool = s.result()["output"]["message"]["content"][0]["toolUse"]
        assert (tool["name"], tool["input"]) == ("search", want), size
        assert s.result()["stopReason"] == "max_tokens"
        assert any("ends before its JSON does" in w for w in s.warnings), s.warnings


@pytest.mark.parametrize("alphabet", ["standard", "url-safe"])
def test_encrypted_reasoning_reaches_converse_as_its_bytes(bedrock: Tuple[Any, Any], alphabet: str) -> None:
    """OpenRouter's ``reasoning.encrypted`` detail (an Anthropic redacted block is standard
    base64; an OpenAI token is URL-safe, with ``-`` and ``_``): a Converse client gets the
    bytes the text encodes, through ``ConverseStream`` and through boto3 (which decodes
    the standard alphabet only and drops any other character)."""
    blob = bytes(range(256)) * 3 + b"\xfb\xff\xfe"
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    data = encode(blob).decode()
    assert alphabet == "standard" or ("-" in data and "_" in data)
    chunks = [
        {"id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": "openai/o4-mini",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "reasoning": None,
                                            "reasoning_details": [{"type": "reasoning.encrypted", "data": data,
                                                                   "id": "rs_1", "format": "openai-responses-v1",
                                                                   "index": 0}]}}]},
        {"id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": "openai/o4-mini",
         "choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    upstream = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    t = ssewire.Translator("chat", "converse")
    out = b"".join(t.feed(upstream[i : i + 41]) for i in range(0, len(upstream), 41)) + t.finish()
    s = read_converse(out, [])
    assert s.error is None, s.error
    content = s.result()["output"]["message"]["content"]
    assert content[0] == {"reasoningContent": {"redactedContent": blob}}
    assert content[1] == {"text": "Done."}
    server, client = bedrock
    server.stream = out
    response = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
    got = []
    for n, event in enumerate(response["stream"]):
        assert n < 100
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        if "reasoningContent" in delta:
            got.append(delta["reasoningContent"]["redactedContent"])
    assert got == [blob]


# --- Converse's rows and columns of the translation matrix ----------------------------------------

#: Every SSE capture of ``tests/data``, as (dialect, name).
SSE_CAPTURES = [(d, p.stem) for d in __import__("support.registry").registry.NAMES
                for p in sorted((DATA / d).glob("*.sse"))]  # fmt: skip


def converse_view(events: List[Dict[str, Any]]) -> Dict[str, Any]:
    """boto3's parsed ``converse_stream`` events joined as a client joins them, in the shape
    ``converse()`` returns: blocks by index (text, reasoning text, tool calls with their
    input as the joined text), the stop reason, the usage."""
    blocks: Dict[int, Dict[str, Any]] = {}
    inputs: Dict[int, List[str]] = {}
    out: Dict[str, Any] = {}
    for e in events:
        if "contentBlockStart" in e:
            s = e["contentBlockStart"]
            if "toolUse" in s["start"]:
                blocks[s["contentBlockIndex"]] = {"toolUse": dict(s["start"]["toolUse"])}
                inputs[s["contentBlockIndex"]] = []
        elif "contentBlockDelta" in e:
            i, d = e["contentBlockDelta"]["contentBlockIndex"], e["contentBlockDelta"]["delta"]
            if "text" in d:
                blocks.setdefault(i, {"text": ""})["text"] += d["text"]
            elif "reasoningContent" in d and "text" in d["reasoningContent"]:
                b = blocks.setdefault(i, {"reasoningContent": {"reasoningText": {"text": ""}}})
                b["reasoningContent"]["reasoningText"]["text"] += d["reasoningContent"]["text"]
            elif "toolUse" in d:
                inputs[i].append(d["toolUse"]["input"])
        elif "messageStop" in e:
            out["stopReason"] = e["messageStop"]["stopReason"]
        elif "metadata" in e:
            out["usage"] = e["metadata"]["usage"]
    for i, pieces in inputs.items():
        blocks[i]["toolUse"]["input"] = "".join(pieces)  # read as the neutral reading reads text
    return {"output": {"message": {"content": [blocks[i] for i in sorted(blocks)]}}, **out}


def _complete(source: str, body: bytes) -> bool:
    s = __import__("support.registry").registry.STREAMS[source]()
    s.consume(body)
    s.finish()
    return s.done and s.error is None


def test_every_capture_reaches_a_converse_client_whole(bedrock: Tuple[Any, Any]) -> None:
    """The matrix's Converse column: every complete SSE capture, translated, read by boto3's
    ``converse_stream`` from a loopback Bedrock, carries the source's text, reasoning, tool
    calls (id, name, arguments), stop class and usage."""
    from support.neutral import comparable, lossy, neutral

    server, client = bedrock
    checked = 0
    for source, name in SSE_CAPTURES:
        body = (DATA / source / f"{name}.sse").read_bytes()
        if not _complete(source, body):
            continue
        t = ssewire.Translator(source, "converse")
        server.stream = t.feed(body) + t.finish()
        response = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
        events = []
        for n, event in enumerate(response["stream"]):
            assert n < 10_000
            events.append(event)
        src, got = comparable(neutral(source, t.source.result()), neutral("converse", converse_view(events)),
                              lossy(source, body))  # fmt: skip
        assert got == src, f"{source}/{name}: {t.notes}"
        checked += 1
    assert checked >= 80, checked


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_converse_upstream_reaches_every_client_sdk() -> None:
    """The matrix's Converse row: each complete SSE capture made a Converse stream (by the
    translation above, which boto3 reads), then translated for every other client and read by
    that client's SDK over a loopback socket, carries what the Converse stream's own result
    holds."""
    from support.loopback import LoopbackServer
    from support.neutral import comparable, lossy, neutral
    from support.sdks import SDKS, TIMEOUT

    checked = 0
    with LoopbackServer(timeout=TIMEOUT) as server:
        for i, (source, name) in enumerate(SSE_CAPTURES[::3]):
            body = (DATA / source / f"{name}.sse").read_bytes()
            if not _complete(source, body):
                continue
            upstream = ssewire.translate(body, source, "converse")
            want = neutral("converse", read_converse(upstream, []).result())
            warned = lossy("converse", upstream)
            for target in SDKS:
                if warned[0] and target == "messages":
                    continue  # tool input that is not JSON: the anthropic SDK raises on it
                t = ssewire.Translator("converse", target)
                out = t.feed(upstream) + t.finish()
                got = SDKS[target](server.url(server.add(out, seed=i, delay=0.0)))
                src, tgt = comparable(want, neutral(target, got), warned)
                assert tgt == src, f"{source}/{name} -> converse -> {target}: {t.notes}"
                checked += 1
    assert checked >= 100, checked

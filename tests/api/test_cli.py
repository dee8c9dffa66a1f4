"""The ``ssewire`` command (API.md section 4, issue 5): ``ssewire._cli.main(argv)`` called
directly, output captured with ``capsys``; plus one real run of the installed console script.

Covered: no FILE (the shipped samples), FILE, ``-`` (stdin), ``--events``, ``--json``,
``--dialect``; exit status 0 (complete), 3 (error or cut-off stream: partial result on stdout,
one line on stderr), 2 (bad arguments, unreadable file, input that is not an event stream,
never a traceback); ``ssewire bench`` with tiny sizes, its table, progress and ``--json``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any, List, Tuple

import pytest
import ssewire
import support as _bench
from ssewire import _cli

SAMPLES = {"chat": "chat.sse", "messages": "messages.sse", "responses": "responses.sse", "gemini": "gemini.sse",
           "ollama": "ollama.ndjson", "cohere": "cohere.sse", "sse": "events.sse"}  # fmt: skip

CHAT_TEXT = (
    "Server-Sent Events (SSE) let a server push updates over one long-lived HTTP response: each "
    "event is a few `field: value` lines ended by a blank line — that’s how LLM APIs stream tokens."
)
RATE_LIMIT = (
    b'{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-x on tokens per '
    b'min (TPM)","type":"tokens","param":null,"code":"rate_limit_exceeded"}}'
)


def sample(name: str) -> bytes:
    return (resources.files("ssewire") / "_samples" / name).read_bytes()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """The samples copied to a directory, plus broken inputs."""
    for name in SAMPLES.values():
        (tmp_path / name).write_bytes(sample(name))
    chat = sample("chat.sse")
    (tmp_path / "cut.sse").write_bytes(chat[: chat.index(b" push") + 150])
    (tmp_path / "rate_limit.json").write_bytes(RATE_LIMIT)
    (tmp_path / "empty.sse").write_bytes(b"")
    (tmp_path / "blank.sse").write_bytes(b"\n\r\n  \n")
    (tmp_path / "page.html").write_bytes(b"<html><body><h1>502 Bad Gateway</h1></body></html>\n")
    (tmp_path / "completion.json").write_bytes(
        b'{"id":"chatcmpl-1","object":"chat.completion","choices":[]}'
    )
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Tuple[int, str, str]:
    code = _cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def run_bench(capsys: pytest.CaptureFixture[str], *argv: str) -> Tuple[int, str, str]:
    """The side-by-side benchmark (``benches/side_by_side.py``, the harness in
    ``tests/support``), as the command runs it."""
    code = _bench.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


# --- no FILE: the samples --------------------------------------------------------------------


def split_samples(out: str) -> List[Tuple[str, str]]:
    """(header, body) per sample in the output of a no-FILE run."""
    parts: List[Tuple[str, str]] = []
    for line in out.splitlines(keepends=True):
        if line.startswith("== sample "):
            parts.append((line.strip(), ""))
        elif parts:
            parts[-1] = (parts[-1][0], parts[-1][1] + line)
    return parts


def test_no_file_runs_on_every_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 0
    parts = split_samples(out)
    assert [h.split()[2] for h, _ in parts] == ["chat.sse", "messages.sse", "responses.sse", "gemini.sse",
                                               "ollama.ndjson", "cohere.sse", "events.sse"]  # fmt: skip
    assert [h.split(", ")[1].split(")")[0] for h, _ in parts] == ["chat", "messages", "responses", "gemini", "ollama",
                                                                   "cohere", "sse"]  # fmt: skip
    results = [json.loads(body) for _, body in parts]
    assert results[0]["choices"][0]["message"]["content"] == CHAT_TEXT
    assert results[1]["content"][1]["input"] == {"location": "São Paulo, Brazil", "unit": "celsius"}
    assert results[2]["status"] == "completed"
    parts_3 = results[3]["candidates"][0]["content"]["parts"]
    assert [p.get("thought", False) for p in parts_3] == [True, False] and "thoughtSignature" in parts_3[1]
    assert results[4]["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "unit": "celsius"}
    assert results[4]["done_reason"] == "stop" and results[4]["eval_count"] == 41
    assert results[5]["message"]["content"][1]["text"] == "The Eiffel Tower is 330 metres (1,083 ft) tall."
    assert results[5]["message"]["citations"][0]["sources"][0]["type"] == "document"
    assert len(results[6]["events"]) == 5
    # Pretty by default: indented by two.
    assert '\n  "id": "chatcmpl-' in parts[0][1]
    assert "sample captures" in err


def test_no_file_json_is_one_line_per_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json")
    assert code == 0
    lines = out.splitlines()
    headers = [l for l in lines if l.startswith("== sample ")]
    bodies = [l for l in lines if l.startswith("{")]
    assert len(headers) == len(bodies) == 7
    assert json.loads(bodies[0]) == ssewire.accumulate(sample("chat.sse"))


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses", "gemini", "sse"])
def test_no_file_with_dialect_runs_that_sample(capsys: pytest.CaptureFixture[str], dialect: str) -> None:
    code, out, _ = run(capsys, "--dialect", dialect, "--json")
    assert code == 0
    parts = split_samples(out)
    assert len(parts) == 1 and SAMPLES[dialect] in parts[0][0]
    assert json.loads(parts[0][1]) == ssewire.accumulate(sample(SAMPLES[dialect]), dialect)


def test_no_file_events(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--events", "--dialect", "messages")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("== sample messages.sse")
    events = [json.loads(l) for l in lines[1:]]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"


# --- FILE and stdin --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses", "gemini", "sse"])
def test_file_prints_the_assembled_object(
    capsys: pytest.CaptureFixture[str], files: Path, dialect: str
) -> None:
    path = str(files / SAMPLES[dialect])
    want = ssewire.accumulate(sample(SAMPLES[dialect]))
    code, out, err = run(capsys, path)
    assert (code, err) == (0, "")
    assert json.loads(out) == want
    assert out.startswith("{\n  \"")  # indent 2
    code, out, _ = run(capsys, "--json", path)
    assert code == 0 and out.count("\n") == 1 and json.loads(out) == want
    code, out, _ = run(capsys, path, "--dialect", dialect, "--json")  # options after FILE
    assert code == 0 and json.loads(out) == want


def test_non_ascii_is_written_as_is(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    _, out, _ = run(capsys, "--json", str(files / "messages.sse"))
    assert "São Paulo" in out


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, sample("responses.sse"))
    code, out, err = run(capsys, "-")
    assert (code, err) == (0, "")
    assert json.loads(out) == ssewire.accumulate(sample("responses.sse"))


def test_stdin_cut_off(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    body = sample("messages.sse")
    set_stdin(monkeypatch, body[: body.index(b"event: content_block_stop")])
    code, out, err = run(capsys, "-", "--json")
    assert code == 3
    assert json.loads(out)["content"][0]["text"].startswith("I'll check")
    assert err == "ssewire: stream ended early: the stream ended before message_stop (code=incomplete_stream)\n"


def test_stdin_text_mode_replacement(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A stdin without a binary buffer (an embedding application's StringIO) still works.
    monkeypatch.setattr(sys, "stdin", io.StringIO(sample("events.sse").decode("utf-8")))
    code, out, _ = run(capsys, "-", "--json")
    assert code == 0 and len(json.loads(out)["events"]) == 5


# --- --events ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses", "gemini", "sse"])
def test_events_one_json_line_per_item(capsys: pytest.CaptureFixture[str], files: Path, dialect: str) -> None:
    code, out, err = run(capsys, "--events", str(files / SAMPLES[dialect]))
    assert (code, err) == (0, "")
    lines = [json.loads(l) for l in out.splitlines()]
    body = sample(SAMPLES[dialect])
    if dialect == "sse":
        parser = ssewire.SSEParser()
        want = parser.feed(body) + parser.finish()
        assert lines == [{"event": e.event, "data": e.data, "id": e.id, "retry": e.retry} for e in want]
        return
    classes: Any = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
                    "responses": ssewire.ResponsesStream, "gemini": ssewire.GeminiStream}  # fmt: skip
    stream = classes[dialect]()
    items = stream.feed(body) + stream.finish()
    assert len(lines) == len(items)
    assert all(isinstance(l, dict) and l for l in lines)
    if dialect == "chat":
        assert "".join(l.get("content", "") for l in lines) == CHAT_TEXT
        assert lines[0]["role"] == "assistant" and "refusal" not in lines[0]  # None left out
        assert lines[-1]["usage"]["total_tokens"] == 67 and "index" not in lines[-1]
    elif dialect == "messages":
        assert [l["type"] for l in lines][:2] == ["message_start", "content_block_start"]
        assert "".join(l.get("partial_json", "") for l in lines) == '{"location": "São Paulo, Brazil", "unit": "celsius"}'
        delta = next(l for l in lines if l["type"] == "message_delta")
        assert delta["stop_reason"] == "tool_use" and delta["usage"]["output_tokens"] == 89
        assert all("other" not in l for l in lines)  # the typed fields show everything here
    elif dialect == "gemini":
        thought = "".join(l.get("text", "") for l in lines if l.get("thought"))
        answer = "".join(l.get("text", "") for l in lines if not l.get("thought"))
        result = stream.result()["candidates"][0]["content"]["parts"]
        assert [thought, answer] == [p["text"] for p in result]
        assert lines[-1]["finish_reason"] == "STOP" and lines[-1]["thought_signature"]
        assert all(l["model_version"] == "gemini-2.5-pro" and "usage" in l for l in lines)
    else:
        assert lines[-1]["type"] == "response.completed"
        assert lines[-1]["response"]["status"] == "completed"
        assert [l["sequence_number"] for l in lines] == list(range(len(lines)))
        deltas = [l for l in lines if l["type"] == "response.output_text.delta"]
        assert "other" not in deltas[0]  # plain deltas carry no raw JSON


def test_events_tool_calls_and_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = (
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function",'
        b'"function":{"name":"f","arguments":""}}]},"finish_reason":null}]}\n\n'
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}\n\n'
        b"data: {oops\n\n"
        b'data: {"error":{"message":"upstream failed","type":"server_error","code":502}}\n\n'
    )
    path = tmp_path / "tools.sse"
    path.write_bytes(body)
    code, out, err = run(capsys, "--events", str(path))
    assert code == 3
    lines = [json.loads(l) for l in out.splitlines()]
    assert lines[0]["tool_calls"] == [{"index": 0, "id": "call_1", "type": "function", "name": "f", "arguments": ""}]
    assert lines[1]["tool_calls"] == [{"index": 0, "arguments": "{}"}]
    assert lines[2]["kind"] == "malformed_json" and lines[2]["data"] == "{oops"
    assert lines[3]["kind"] == "stream_error"
    assert lines[3]["error"]["message"] == "upstream failed"
    assert lines[3]["error"]["code"] == 502
    err_lines = err.splitlines()
    assert err_lines[0].startswith("ssewire: warning: skipped 1 frame whose JSON did not decode")
    assert err_lines[1] == "ssewire: stream error: upstream failed (type=server_error, code=502)"


def test_events_other_keys_of_unknown_events(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "annotated.sse"
    path.write_bytes(
        b'event: response.output_text.annotation.added\ndata: {"type":"response.output_text.annotation.added",'
        b'"item_id":"m1","output_index":0,"content_index":0,"annotation_index":0,'
        b'"annotation":{"type":"url_citation","url":"https://example.com"},"sequence_number":7}\n\n'
    )
    code, out, _ = run(capsys, "--events", "--dialect", "responses", str(path))
    assert code == 3  # no response.completed
    (line,) = [json.loads(l) for l in out.splitlines()]
    assert line["sequence_number"] == 7 and line["item_id"] == "m1"
    assert line["other"] == {"annotation_index": 0, "annotation": {"type": "url_citation", "url": "https://example.com"}}



def test_to_dict_other_keys_parts_and_bytes_of_each_dialect(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """What each item class's ``to_dict()`` (the ``--events`` line) keeps beyond its typed
    fields: Messages' unknown keys and untyped deltas, Gemini's non-text parts, candidate keys
    and prompt feedback, Converse's redacted bytes (base64 on the line)."""
    s = ssewire.MessagesStream()
    start, delta, stop = s.feed(
        b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""},"x":1}\n\n'
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"odd_delta","odd":2}}\n\n'
        b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}\n\n'
    )
    assert start.to_dict() == {"type": "content_block_start", "index": 0,
                               "content_block": {"type": "text", "text": ""}, "other": {"x": 1}}  # fmt: skip
    assert delta.to_dict()["other"] == {"delta": {"type": "odd_delta", "odd": 2}}
    assert stop.to_dict() == {"type": "message_delta", "stop_reason": "end_turn", "usage": {"output_tokens": 3}}
    g = ssewire.GeminiStream()
    call, = g.feed(
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},'
        b'"index":0,"safetyRatings":[]}],"promptFeedback":{"blockReason":null},"modelVersion":"m"}\n\n'
    )
    d = call.to_dict()
    assert d["parts"] == [{"functionCall": {"name": "f", "args": {}}}]
    assert d["function_call"] == {"name": "f", "args": {}} and "thought" not in d
    assert d["other"] == {"safetyRatings": []} and d["prompt_feedback"] == {"blockReason": None}
    (text,) = ssewire.GeminiStream().feed(b'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}\n\n')
    assert text.to_dict() == {"index": 0, "text": "hi"}
    body = ssewire.encode_eventstream_message(
        {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"},
        b'{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"AAE="}}}',
    )
    (redacted,) = ssewire.ConverseStream().feed(body)
    assert redacted.to_dict() == {"type": "contentBlockDelta", "content_block_index": 0, "redacted_content": b"\x00\x01"}
    path = tmp_path / "redacted.bin"
    path.write_bytes(body)
    code, out, _ = run(capsys, "--events", "--dialect", "converse", str(path))
    assert code == 3 and json.loads(out)["redacted_content"] == "AAE="

# --- exit status 3: errors and cut-off streams -------------------------------------------------


def test_cut_off_stream_prints_partial_result(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, out, err = run(capsys, str(files / "cut.sse"))
    assert code == 3
    content = json.loads(out)["choices"][0]["message"]["content"]
    assert content and CHAT_TEXT.startswith(content) and content != CHAT_TEXT
    assert err.count("\n") == 1
    assert err.startswith("ssewire: stream ended early: the stream ended before [DONE]")
    assert err.rstrip().endswith("(code=incomplete_stream)")


def test_json_error_body(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, out, err = run(capsys, "--json", str(files / "rate_limit.json"))
    assert code == 3
    assert json.loads(out)["choices"] == []
    assert err == (
        "ssewire: stream error: Rate limit reached for gpt-4o-mini in organization org-x on tokens "
        "per min (TPM) (type=tokens, code=rate_limit_exceeded)\n"
    )
    code, out, err = run(capsys, "--events", str(files / "rate_limit.json"))
    assert code == 3
    (line,) = [json.loads(l) for l in out.splitlines()]
    assert line["kind"] == "stream_error" and line["error"]["code"] == "rate_limit_exceeded"


def test_anthropic_error_event(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(
        monkeypatch,
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    )
    code, out, err = run(capsys, "-")
    assert code == 3
    assert json.loads(out)["type"] == "message"
    assert err == "ssewire: stream error: Overloaded (type=overloaded_error)\n"


def test_multiline_error_message_stays_on_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, b'data: {"error":{"message":"line one\\nline two"}}\n\n')
    code, _, err = run(capsys, "-")
    assert code == 3
    assert err == "ssewire: stream error: line one line two\n"


def test_wrong_dialect_is_its_own_error(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    """Issue 15: not "stream ended early" (a retry condition) but what it is."""
    code, _, err = run(capsys, "--dialect", "chat", str(files / "messages.sse"))
    assert code == 3
    assert "code=wrong_dialect" in err and "stream ended early" not in err


def test_sse_cut_mid_event(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, b"data: one\n\ndata: tw")
    code, out, err = run(capsys, "-", "--json")
    assert code == 3
    assert json.loads(out) == {"events": [{"event": "message", "data": "one", "id": None, "retry": None}]}
    assert "in the middle of an event" in err


def test_event_too_large_is_reported(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    big = b"data: " + b"x" * (ssewire.DEFAULT_MAX_EVENT_SIZE + 10) + b"\n\ndata: after\n\n"
    set_stdin(monkeypatch, big)
    code, out, err = run(capsys, "-", "--json", "--dialect", "sse")
    assert code == 3
    assert json.loads(out)["events"][-1]["data"] == "after"
    assert err.startswith("ssewire: event too large: ") and err.count("\n") == 1


# --- exit status 2 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("empty.sse", "ssewire: the input is empty\n"),
        ("blank.sse", "ssewire: the input is only white space\n"),
        ("page.html", "ssewire: the input is not an event stream: no data:, event:, id:, retry: or comment line"),
        ("completion.json", "ssewire: the input is a JSON document, not an event stream"),
        ("missing.sse", "ssewire: cannot read "),
    ],
)
def test_not_an_event_stream(capsys: pytest.CaptureFixture[str], files: Path, name: str, message: str) -> None:
    for extra in ([], ["--events"], ["--dialect", "sse"], ["--dialect", "chat"]):
        code, out, err = run(capsys, str(files / name), *extra)
        assert code == 2
        assert out == ""
        assert err.startswith(message) and err.count("\n") == 1


def test_not_an_event_stream_names_its_start(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    _, _, err = run(capsys, str(files / "page.html"))
    assert "(it starts with '<html><body><h1>502 Bad Gateway</h1></bo...')" in err


def test_empty_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, b"")
    assert run(capsys, "-") == (2, "", "ssewire: the input is empty\n")


def test_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("ssewire: cannot read ")


def test_a_file_named_bench_hint(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "--json", "bench")
    assert code == 2 and "benches/side_by_side.py" in err
    (tmp_path / "bench").write_bytes(b"data: x\n\n")
    code, out, _ = run(capsys, "./bench", "--json")
    assert code == 0 and json.loads(out)["events"][0]["data"] == "x"


@pytest.mark.parametrize(
    "argv",
    [["--bogus"], ["--dialect", "openai"], ["--dialect"], ["a.sse", "b.sse"], ["--events=yes"]],
)
def test_bad_arguments(capsys: pytest.CaptureFixture[str], argv: List[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("usage: ssewire") and "ssewire: error:" in err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "--dialect" in out and "exit status" in out and "benches/side_by_side.py" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"ssewire {ssewire.__version__}"


def test_broken_pipe_exits_quietly(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: Path) -> None:
    class ClosedPipe(io.StringIO):
        encoding = "utf-8"

        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            raise io.UnsupportedOperation("no fileno")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert _cli.main(["--events", str(files / "chat.sse")]) == 1


# --- bench ---------------------------------------------------------------------------------------

TINY = ["--chunks", "12", "--read-size", "256", "--budget", "0", "--min-repeats", "1"]


def test_bench_quick_tiny(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "figures.json"
    code, out, err = run_bench(
        capsys, "--quick", "--peers", "pure-python", "--json", str(out_file), *TINY
    )
    assert code == 0
    lines = out.splitlines()
    header = next(l for l in lines if l.startswith("task"))
    assert header.split() == ["task", "parser", "events/s", "MB/s", "ratio", "runs"]
    rows = [l for l in lines if l.startswith(("chat ", "messages ", "responses "))]
    assert len(rows) == 3 * 3 * 2  # dialects x tasks x (ssewire, pure-python)
    assert all(r.split("  ")[0] and any(w.endswith("x") for w in r.split()) for r in rows)
    assert any(l.startswith("chat framing") and " ssewire " in l and " 1.0x " in l for l in lines)
    # Each row says what it runs: ssewire's final object comes from consume() + result().
    assert all("consume() + result()" in l for l in rows if "feed+accumulate" in l and " ssewire " in l)
    # Progress: stderr is not a terminal here, so one plain line per case.
    progress = [l for l in err.splitlines() if l.startswith("ssewire bench: [")]
    assert len(progress) == 18 and progress[-1].startswith("ssewire bench: [18/18] ")
    assert "\r" not in err
    assert f"figures saved to {out_file}" in err

    figures = json.loads(out_file.read_text())
    assert figures["config"]["chunks"] == 12 and figures["config"]["quick"] is True
    assert figures["ssewire"] == ssewire.__version__
    results = figures["results"]
    assert {(r["dialect"], r["task"], r["parser"]) for r in results} == {
        (d, t, p) for d in ("chat", "messages", "responses")
        for t in ("framing", "feed", "feed+accumulate") for p in ("ssewire", "pure-python")
    }  # fmt: skip
    for r in results:
        assert r["seconds"] > 0 and r["events"] > 12 and r["bytes"] > 0
        assert r["events_per_s"] == pytest.approx(r["events"] / r["seconds"])
        assert r["mb_per_s"] == pytest.approx(r["bytes"] / r["seconds"] / 1e6)
        base = next(b for b in results if b["parser"] == "ssewire" and (b["dialect"], b["task"]) == (r["dialect"], r["task"]))
        assert r["ratio"] == pytest.approx(r["seconds"] / base["seconds"])


def test_bench_every_installed_peer_passes_its_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "all.json"
    code, out, err = run_bench(capsys, "--no-progress", "--json", str(out_file), *TINY)
    assert code == 0
    figures = json.loads(out_file.read_text())
    # The peers are test dependencies: every one must be installed and give ssewire's result.
    assert figures["skipped"] == []
    parsers = {(r["dialect"], r["task"], r["parser"]) for r in figures["results"]}
    for dialect in ("chat", "messages", "responses"):
        for peer in ("ssewire", "pure-python", "httpx-sse", "sseclient-py"):
            for task in ("framing", "feed", "feed+accumulate"):
                assert (dialect, task, peer) in parsers
        assert (dialect, "framing", "openai-sdk") in parsers
        assert (dialect, "framing", "anthropic-sdk") in parsers
    for dialect in ("chat", "responses"):
        assert (dialect, "feed+accumulate", "openai-sdk") in parsers
    assert ("messages", "feed+accumulate", "anthropic-sdk") in parsers
    assert "ssewire bench: [" not in err


def test_bench_skips_a_peer_that_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong(dialect: str) -> Any:
        runners = _bench._pure_python(dialect)
        runners["feed"] = _bench.Runner(lambda reads: [], lambda out: "not the text")
        runners["framing"] = _bench.Runner(lambda reads: 1 / 0, lambda out: out)
        return runners

    monkeypatch.setitem(_bench._PEER_FACTORIES, "pure-python", wrong)
    figures = _bench.run(("chat",), 8, 128, ["pure-python", "sseclient-py"], 0.0, 1)
    skipped = {(s["parser"], s.get("task")): s["reason"] for s in figures["skipped"]}
    assert skipped[("pure-python", "feed")] == "gave a different result than ssewire"
    assert skipped[("pure-python", "framing")].startswith("failed: ZeroDivisionError")
    done = {(r["task"], r["parser"]) for r in figures["results"]}
    assert ("feed+accumulate", "pure-python") in done and ("feed", "pure-python") not in done
    table = _bench.format_table(figures)
    assert "skipped: pure-python (chat feed): gave a different result than ssewire" in table


def test_bench_notes_a_missing_peer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_bench._PEER_MODULES, "sseclient-py", "no_such_module_for_ssewire_tests")
    figures = _bench.run(("messages",), 8, 128, ["sseclient-py"], 0.0, 1)
    assert figures["skipped"] == [
        {"parser": "sseclient-py", "reason": "not installed (no_such_module_for_ssewire_tests)"}
    ]
    assert {r["parser"] for r in figures["results"]} == {"ssewire"}


def test_bench_progress_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = _bench.Progress(3, stream)
    for label in ("a long first label", "b", "c"):
        progress.step(label)
    progress.close()
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") == 5  # 3 steps, then the line is cleared
    assert "3/3 c" in text and "[########################] 3/3" in text


@pytest.mark.parametrize(
    "argv",
    [["--chunks", "0"], ["--read-size", "x"], ["--dialect", "sse"], ["--peers", "nope"], ["--bogus"]],
)
def test_bench_bad_arguments(capsys: pytest.CaptureFixture[str], argv: List[str]) -> None:
    assert run(capsys, "bench")[0] == 2  # the command points to benches/side_by_side.py
    code, out, err = run_bench(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("usage: ssewire bench")


def test_bench_unwritable_json_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_bench(capsys, "--json", str(tmp_path / "no" / "such" / "dir.json"), *TINY)
    assert code == 2 and out == ""
    assert err.startswith("ssewire bench: cannot write ")


def test_bench_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_bench(capsys, "--help")
    assert code == 0
    for option in ("--quick", "--json FILE", "--dialect", "--chunks N", "--read-size BYTES"):
        assert option in out
    assert "--budget" not in out  # the test knobs stay hidden


# --- the installed console script, for real ------------------------------------------------------


def console_script() -> List[str]:
    bindir = Path(sys.executable).parent
    for candidate in (shutil.which("ssewire", path=str(bindir)), shutil.which("ssewire")):
        if candidate:
            return [candidate]
    return [sys.executable, "-m", "ssewire"]  # pragma: no cover - not installed as a script


def test_console_script_subprocess(files: Path) -> None:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        console_script() + ["--json", "-"],
        input=sample("messages.sse"),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    result = json.loads(proc.stdout)
    assert result == ssewire.accumulate(sample("messages.sse"))
    proc = subprocess.run(console_script() + [str(files / "cut.sse")], capture_output=True, env=env, timeout=60)
    assert proc.returncode == 3
    assert proc.stderr.decode().startswith("ssewire: stream ended early: ")
    assert json.loads(proc.stdout)["object"] == "chat.completion"


# --- issue 15: no such subcommand; bench rows say what they run -------------------------------


def test_accumulate_is_not_a_subcommand(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "accumulate", "x.sse")
    assert code == 2 and out == ""
    assert "no 'accumulate' subcommand" in err and "ssewire FILE" in err
    assert "unrecognized arguments" not in err


def test_bench_rows_say_what_they_run() -> None:
    figures = {"ssewire": "x", "python": "3", "platform": "p", "cpu_count": 2, "skipped": [],
               "config": {"chunks": 1, "read_size": 1},
               "results": [{"dialect": "chat", "task": "feed+accumulate", "parser": "ssewire",
                            "events_per_s": 1.0, "mb_per_s": 1.0, "ratio": 1.0,
                            "runs": "stream.consume() + result()"}]}  # fmt: skip
    table = _bench.format_table(figures)
    assert "stream.consume() + result()" in table
    runners = _bench._ssewire_runners("chat")
    assert "consume" in runners["feed+accumulate"].runs and "feed" in runners["feed"].runs


def test_translate_subcommand(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, out, err = run(capsys, "translate", str(files / "messages.sse"), "--to", "chat")
    assert code == 0 and err == ""
    assert out.endswith("data: [DONE]\n\n")
    chat = ssewire.ChatCompletionStream()
    chat.feed(out.encode())
    chat.finish()
    assert chat.done and chat.result()["choices"][0]["message"]["tool_calls"]
    code, out, err = run(capsys, "translate", str(files / "cut.sse"), "--to", "messages")
    assert code == 3 and "message_stop" not in out


def test_translate_subcommand_into_gemini(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    """Issue 27: ``--to gemini`` writes Gemini chunks that ssewire's Gemini stream reads back,
    the tool call whole with its id."""
    code, out, err = run(capsys, "translate", str(files / "messages.sse"), "--to", "gemini")
    assert code == 0 and err == ""
    gemini = ssewire.GeminiStream()
    gemini.feed(out.encode())
    gemini.finish()
    parts = gemini.result()["candidates"][0]["content"]["parts"]
    assert gemini.done and gemini.error is None
    assert any("functionCall" in p and p["functionCall"].get("id") for p in parts)

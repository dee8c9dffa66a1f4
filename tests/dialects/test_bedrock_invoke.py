"""``MessagesStream(framing="eventstream")``: Amazon Bedrock's InvokeModelWithResponseStream for
Claude. Every Messages capture of the suite, wrapped as Bedrock wraps it (one eventstream
``chunk`` message per event, its JSON base64 in ``{"bytes": ..., "p": padding}``, the invocation
metrics on the last event), folds to the same message as the SSE capture, plus the metrics;
whole, byte by byte and at random cuts. Exceptions are the stream's error; a bad CRC stops the
framing after what came before it."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import ssewire
from support import paths
from support.splitting import consume_cut

botocore_eventstream = pytest.importorskip("botocore.eventstream")

CAPTURES = sorted((paths.DATA / "messages").glob("*.sse"))
METRICS = {"inputTokenCount": 25, "outputTokenCount": 41, "invocationLatency": 1210, "firstByteLatency": 402}


def chunk(doc: Dict[str, Any], rng: random.Random) -> bytes:
    payload = {
        "bytes": base64.b64encode(json.dumps(doc).encode()).decode(),
        # Bedrock pads each payload with a random-length string under "p".
        "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"[: rng.randint(1, 50)],
    }
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return ssewire.encode_eventstream_message(headers, json.dumps(payload).encode())


def exception(kind: str, message: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return ssewire.encode_eventstream_message(headers, json.dumps({"message": message}).encode())


def documents(capture: Path) -> List[Dict[str, Any]]:
    docs = []
    for event in ssewire.SSEParser().feed(capture.read_bytes()):
        try:
            doc = json.loads(event.data)
        except ValueError:
            continue
        if isinstance(doc, dict) and doc.get("type") not in (None, "error", "ping"):
            docs.append(doc)
    return docs


def bedrock_body(docs: List[Dict[str, Any]], seed: int = 0) -> bytes:
    rng = random.Random(seed)
    docs = [dict(d) for d in docs]
    if docs and docs[-1].get("type") == "message_stop":
        docs[-1]["amazon-bedrock-invocationMetrics"] = METRICS
    return b"".join(chunk(d, rng) for d in docs)


def fold(body: bytes, cuts: List[int], **kwargs: Any) -> ssewire.MessagesStream:
    return consume_cut(ssewire.MessagesStream(framing="eventstream", **kwargs), body, cuts)


def sse_result(docs: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    s = ssewire.MessagesStream()
    s.consume(
        b"".join(b"event: %s\ndata: %s\n\n" % (d["type"].encode(), json.dumps(d).encode()) for d in docs)
    )
    s.finish()
    return s.result()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.stem)
def test_every_messages_capture_reads_the_same_in_bedrock_framing(capture: Path) -> None:
    docs = documents(capture)
    body = bedrock_body(docs)
    buf = botocore_eventstream.EventStreamBuffer()
    buf.add_data(body)
    assert len(list(buf)) == len(docs)  # botocore reads the framing written here
    whole = fold(body, [])
    expected = sse_result(docs)
    result = whole.result()
    ended = bool(docs) and docs[-1].get("type") == "message_stop"
    if ended:
        assert result.pop("amazon-bedrock-invocationMetrics") == METRICS
    assert result == expected
    assert whole.framing == "eventstream"
    rng = random.Random(capture.stem)
    for cuts in (
        [*range(1, min(len(body), 3000))],
        sorted(rng.sample(range(1, max(len(body), 1)), max(0, min(8, len(body) - 1)))),
    ):
        again = fold(body, cuts)
        assert again.result() == whole.result()
        assert again.done == whole.done
        assert (again.error is None) == (whole.error is None)


def test_feed_gives_the_messages_items() -> None:
    docs = documents(CAPTURES[0])
    s = ssewire.MessagesStream(framing="eventstream")
    items = s.feed(bedrock_body(docs)) + s.finish()
    assert [i.type for i in items] == [d["type"] for d in docs]
    assert s.done and s.error is None


@pytest.mark.parametrize(
    "kind",
    ["throttlingException", "modelStreamErrorException", "validationException", "internalServerException"],
)
def test_an_exception_message_is_the_streams_error(kind: str) -> None:
    docs = documents(CAPTURES[0])
    body = (
        bedrock_body(docs[:3]) + exception(kind, "Too many requests, please wait.") + bedrock_body(docs[3:4])
    )
    s = fold(body, [len(body) // 3])
    assert s.error is not None
    assert s.error.type == kind and s.error.message == "Too many requests, please wait."
    assert not s.done
    assert s.result()["content"] is not None


def test_a_bad_crc_stops_the_framing_after_what_came_before() -> None:
    docs = documents(CAPTURES[0])
    good = bedrock_body(docs[:2])
    bad = bytearray(bedrock_body(docs[2:3]))
    bad[-1] ^= 1
    s = ssewire.MessagesStream(framing="eventstream")
    items = s.feed(good + bytes(bad) + bedrock_body(docs[3:]))
    items += s.finish()
    assert [getattr(i, "type", None) for i in items[:2]] == [d["type"] for d in docs[:2]]
    errors = [i for i in items if isinstance(i, ssewire.ErrorItem)]
    assert s.error is not None and s.error.code == "message_crc_mismatch"
    assert errors[0].error.code == "message_crc_mismatch" and not s.done


def test_a_chunk_that_holds_no_document_is_malformed_and_the_stream_goes_on() -> None:
    docs = documents(CAPTURES[0])
    headers = {":event-type": "chunk", ":message-type": "event"}
    junk = ssewire.encode_eventstream_message(headers, b'{"nothing": 1}')
    s = ssewire.MessagesStream(framing="eventstream")
    items = s.feed(bedrock_body(docs[:1]) + junk + bedrock_body(docs[1:])) + s.finish()
    kinds = [i.kind for i in items if isinstance(i, ssewire.ErrorItem)]
    assert kinds == ["malformed_json"]
    assert s.done and s.error is None
    # A translation reading it says what it skipped.
    t = ssewire.Translator("messages", "chat", framing="eventstream")
    t.feed(bedrock_body(docs[:1]) + junk + bedrock_body(docs[1:]))
    t.finish()
    assert any("did not decode" in n for n in t.notes)


def test_other_framings_are_refused() -> None:
    with pytest.raises(ValueError, match="framing"):
        ssewire.MessagesStream(framing="websocket")
    assert ssewire.ChatCompletionStream().framing == "sse"


def test_accumulate_reads_the_bedrock_framing_when_told() -> None:
    docs = documents(CAPTURES[0])
    body = bedrock_body(docs)
    result = ssewire.accumulate([body[:100], body[100:]], "messages", framing="eventstream")
    assert result.pop("amazon-bedrock-invocationMetrics") == METRICS
    assert result == sse_result(docs)
    with pytest.raises(ValueError, match="dialect"):
        ssewire.accumulate(body, framing="eventstream")
    with pytest.raises(ssewire.AccumulateError) as e:
        ssewire.accumulate(bedrock_body(docs[:2]) + exception("throttlingException", "slow down"), "messages",
                           framing="eventstream")  # fmt: skip
    assert e.value.type == "throttlingException" and e.value.message == "slow down"

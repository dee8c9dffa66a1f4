"""Anthropic Messages benchmarks: ``ssewire.MessagesStream`` (+ ``MessageAccumulator``) against
the ways Python reads an Anthropic-compatible ``POST /v1/messages`` stream today.

Corpus (``_peers.DIALECTS["messages"]``, deterministic): named events - ``message_start``, a
``ping``, a thinking block (~330 ``thinking_delta``s and a ``signature_delta``), a text block of
1000 ``text_delta``s, a ``tool_use`` block whose input streams as ``input_json_delta``
fragments, ``message_delta``, ``message_stop``; cut into 4 KiB reads and one read per event
(1 B - 8 KiB).

Tasks and peers, all in the same run on the same reads:

* ``feed`` (framing + decoding to per-event objects):
  ``ssewire`` (``feed`` over all reads + ``finish()``); ``anthropic-sdk`` (``anthropic.Stream``
  iterated: the SDK's ``SSEDecoder``, ping/error handling, ``json.loads`` and
  ``RawMessageStreamEvent`` construction via ``construct_type``, exactly as
  ``client.messages.create(stream=True)`` yields); ``httpx-sse`` (+ ``orjson.loads``);
  ``pure-python`` (``PureSSEParser`` + ``orjson.loads``); ``msgspec`` (decode-only limit: the
  ``data`` payloads, extracted before timing, decoded into a ``msgspec.Struct`` shaped like
  ssewire's flat ``MessageEvent``; ``message``, ``content_block``, ``usage``, ``citation`` and
  ``error``, which ssewire converts only when read, are ``msgspec.Raw``).
* ``feed+accumulate`` (the final ``message``):
  ``ssewire`` (``acc.add_all(stream.feed(read))``, ``result()``); ``anthropic-sdk`` (what
  ``client.messages.stream()`` runs: ``anthropic.lib.streaming.MessageStream`` over the raw
  stream - ``accumulate_event`` and ``build_events`` per event - then ``get_final_message()``);
  ``httpx-sse`` and ``pure-python`` with the dict accumulator of ``_peers.py``.

The SDK reads its bytes from an in-memory ``Response`` of its own HTTP library (``httpx2``)
that replays the reads (no socket); that layer costs well under 1% of the SDK's time here.

Correctness before timing: every peer's assembled message (id, model, role, each block's type
and text / thinking + signature / tool id, name and parsed input; stop reason and sequence;
usage) must equal what ssewire's accumulator makes of the whole body; decoded objects of the
feed task are assembled for the check (outside the timing).

Run for real (``addopts`` disable benchmarks, so a plain ``pytest`` runs each once, on a
100-chunk corpus, as a test)::

    pytest benches --benchmark-enable --benchmark-group-by=group \\
        --benchmark-columns=min,mean,ops

On a shared or loaded machine add ``--benchmark-timer=time.thread_time`` (CPU time of the
benchmarking thread): with wall-clock time, a peer whose run lasts hundreds of milliseconds (the
SDKs) is preempted by other processes during most runs while ssewire's millisecond runs often
are not, which inflates the SDK ratios (about 2x on 2 cores at load 4).

Reading the results: one table per group ``messages <task> / <chunking>``; the machine is
shared, so read only ratios within a group (compare ``min``): a peer's multiple of the
``ssewire`` row is "ssewire is N times faster on this input". The summary after the tables
lists them. Targets (issue 4): feed >= 2x msgspec and >= 5x pure-python; feed+accumulate
>= 100x anthropic-sdk and >= 5x pure-python.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import _peers
import anthropic
import anthropic._streaming
import msgspec
import pytest
import ssewire
from anthropic._streaming import Stream as AnthropicStream
from anthropic.lib.streaming import MessageStream
from anthropic.types import RawMessageStreamEvent

DIALECT = "messages"

# -- the SDK path --------------------------------------------------------------------------

# The HTTP library the SDK itself uses (httpx2 in anthropic 2.x, httpx before).
_HTTP: Any = getattr(anthropic._streaming, "httpx2", None) or getattr(anthropic._streaming, "httpx")

# A client only for its response processing (`_process_response_data`); never contacted.
_CLIENT = anthropic.Anthropic(api_key="sk-ant-bench", base_url="http://127.0.0.1:9", max_retries=0)


def _raw_stream(reads: List[bytes]) -> Any:
    response = _HTTP.Response(
        200, headers={"content-type": "text/event-stream"}, content=iter(reads)
    )
    return AnthropicStream(cast_to=cast(Any, RawMessageStreamEvent), response=response, client=_CLIENT)


def sdk_feed(reads: List[bytes]) -> List[Any]:
    """``anthropic.Stream[RawMessageStreamEvent]`` iterated: decoder + JSON + event models."""
    return list(_raw_stream(reads))


def sdk_accumulate(reads: List[bytes]) -> Any:
    """``client.messages.stream()`` minus HTTP: ``MessageStream`` + final message."""
    stream = MessageStream(_raw_stream(reads), output_format=anthropic.NOT_GIVEN)
    return stream.get_final_message()  # iterates the stream (and its events) to the end


# -- msgspec: the decode-only limit --------------------------------------------------------


class _S(msgspec.Struct, gc=False):  # no reference cycles: skip GC tracking (msgspec's tip)
    pass


class MsDelta(_S):
    """``delta`` of content_block_delta (typed deltas) and of message_delta (stop fields)."""

    type: Optional[str] = None
    text: Optional[str] = None
    partial_json: Optional[str] = None
    thinking: Optional[str] = None
    signature: Optional[str] = None
    citation: msgspec.Raw = msgspec.Raw()
    stop_reason: Optional[str] = None
    stop_sequence: Optional[str] = None


class MsEvent(_S):
    type: str
    index: Optional[int] = None
    delta: Optional[MsDelta] = None
    message: msgspec.Raw = msgspec.Raw()
    content_block: msgspec.Raw = msgspec.Raw()
    usage: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


_DECODE = msgspec.json.Decoder(MsEvent).decode


def msgspec_assemble(events: List[MsEvent]) -> Dict[str, Any]:
    """The structs folded into a message dict (for the check only)."""
    dicts = [_peers.struct_to_builtins(e) for e in events]
    return _peers.dict_accumulate(_peers.MessageDictAccumulator, dicts)


# -- correctness ---------------------------------------------------------------------------


def _block(block: Dict[str, Any]) -> Tuple[Any, ...]:
    kind = block.get("type")
    if kind == "text":
        return (kind, block.get("text"))
    if kind == "thinking":
        return (kind, block.get("thinking"), block.get("signature"))
    if kind == "tool_use":
        return (kind, block.get("id"), block.get("name"), block.get("input"))
    return (kind,)


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """What every peer must agree on, from a message dict."""
    return {
        "id": result.get("id"),
        "model": result.get("model"),
        "role": result.get("role"),
        "content": [_block(b) for b in result.get("content") or ()],
        "stop_reason": result.get("stop_reason"),
        "stop_sequence": result.get("stop_sequence"),
        "usage": result.get("usage"),
    }


_REFERENCE: Dict[bool, Dict[str, Any]] = {}


def reference(quick: bool) -> Dict[str, Any]:
    """ssewire's accumulator on the whole body: the result every peer must reproduce."""
    if quick not in _REFERENCE:
        body = _peers.corpus(DIALECT, quick).body
        result = summary(_peers.ssewire_reference(ssewire.MessagesStream, ssewire.MessageAccumulator, body))
        assert [b[0] for b in result["content"]] == ["thinking", "text", "tool_use"]
        _REFERENCE[quick] = result
    return _REFERENCE[quick]


def _from_dicts(dicts: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(_peers.MessageDictAccumulator, dicts))


def _from_items(items: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(ssewire.MessageAccumulator, items))


Runner = Callable[[Any], Any]

#: feed peers: id -> (runner of the reads or payloads, decoded objects -> summary).
FEED: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    "ssewire": (partial(_peers.ssewire_feed, ssewire.MessagesStream), _from_items),
    "anthropic-sdk": (sdk_feed, lambda models: _from_dicts([m.to_dict() for m in models])),
    "httpx-sse": (_peers.httpx_sse_feed, _from_dicts),
    "pure-python": (_peers.pure_feed, _from_dicts),
    "msgspec": (partial(_peers.msgspec_decode, _DECODE), lambda s: summary(msgspec_assemble(s))),
}

#: feed+accumulate peers: id -> (runner of the reads, result -> summary).
ACCUMULATE: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    # The stream folds what it decodes (issue 8): feed() builds the items, consume() none.
    "ssewire": (partial(_peers.ssewire_result, ssewire.MessagesStream), summary),
    "ssewire-consume": (partial(_peers.ssewire_consume, ssewire.MessagesStream), summary),
    # The public accumulator over the items (items that come from elsewhere).
    "ssewire+acc": (
        partial(_peers.ssewire_accumulate, ssewire.MessagesStream, ssewire.MessageAccumulator),
        summary,
    ),
    "anthropic-sdk": (sdk_accumulate, lambda message: summary(message.to_dict())),
    "httpx-sse": (partial(_peers.httpx_sse_accumulate, _peers.MessageDictAccumulator), summary),
    "pure-python": (partial(_peers.pure_accumulate, _peers.MessageDictAccumulator), summary),
    "msgspec": FEED["msgspec"],
}


# -- benchmarks ----------------------------------------------------------------------------


@pytest.mark.parametrize("peer", list(FEED))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.FEED))
def test_messages_feed(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding of one stream into per-event objects."""
    _peers.bench_feed(benchmark, corpora, DIALECT, FEED, reference, chunking, peer)


@pytest.mark.parametrize("peer", list(ACCUMULATE))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.ACCUMULATE))
def test_messages_accumulate(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding + accumulation of one stream into the final message."""
    _peers.bench_accumulate(benchmark, corpora, DIALECT, ACCUMULATE, reference, chunking, peer)

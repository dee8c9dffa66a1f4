"""Chat Completions benchmarks: ``ssewire.ChatCompletionStream`` (+ ``ChatCompletionAccumulator``)
against the ways Python reads an OpenAI-compatible ``POST /v1/chat/completions`` stream today.

Corpus (``_peers.DIALECTS["chat"]``, deterministic): 1000 content chunks, two parallel tool
calls whose arguments stream in small fragments, the ``finish_reason`` chunk and the usage-only
last chunk, ``[DONE]``; cut into 4 KiB reads and one read per event.

Tasks and peers, all in the same run on the same reads:

* ``feed`` (framing + decoding to per-chunk objects):
  ``ssewire`` (``feed`` over all reads + ``finish()``); ``openai-sdk`` (``openai.Stream``
  iterated: the SDK's ``SSEDecoder`` + ``json.loads`` + ``ChatCompletionChunk`` construction via
  ``construct_type``, exactly as ``client.chat.completions.create(stream=True)`` yields);
  ``httpx-sse`` (+ ``orjson.loads``); ``pure-python`` (``PureSSEParser`` + ``orjson.loads``);
  ``msgspec`` (decode-only limit: the ``data`` payloads, extracted before timing, decoded into
  ``msgspec.Struct``s mirroring the chunk; parts ssewire converts only when read - ``usage``,
  ``logprobs``, ``reasoning_details`` - are ``msgspec.Raw``, the same deferral).
* ``feed+accumulate`` (the final ``chat.completion``):
  ``ssewire`` (``acc.add_all(stream.feed(read))``, ``result()``); ``openai-sdk`` (what
  ``client.chat.completions.stream()`` runs: ``openai.lib.streaming.chat.ChatCompletionStream``
  over the raw stream - ``ChatCompletionStreamState.handle_chunk`` per chunk and its events -
  then ``get_final_completion()``); ``httpx-sse`` and ``pure-python`` with the dict accumulator
  of ``_peers.py``.

The SDK reads its bytes from an in-memory ``Response`` of its own HTTP library (``httpx2``)
that replays the reads (no socket); that layer costs well under 1% of the SDK's time here.

Correctness before timing: every peer's assembled result (id, model, per choice role, content,
refusal, tool calls (id, name, arguments), finish reason; usage) must equal what ssewire's
accumulator makes of the whole body; decoded objects of the feed task are assembled for the
check (outside the timing).

Run for real (``addopts`` disable benchmarks, so a plain ``pytest`` runs each once, on a
100-chunk corpus, as a test)::

    pytest benches --benchmark-enable --benchmark-group-by=group \\
        --benchmark-columns=min,mean,ops

On a shared or loaded machine add ``--benchmark-timer=time.thread_time`` (CPU time of the
benchmarking thread): with wall-clock time, a peer whose run lasts hundreds of milliseconds (the
SDKs) is preempted by other processes during most runs while ssewire's millisecond runs often
are not, which inflates the SDK ratios (about 2x on 2 cores at load 4).

Reading the results: one table per group ``chat <task> / <chunking>``; the machine is shared,
so read only ratios within a group (compare ``min``): a peer's multiple of the ``ssewire`` row
is "ssewire is N times faster on this input". The summary after the tables lists them.
Targets (issue 3): feed >= 2x msgspec and >= 5x pure-python; feed+accumulate >= 300x
openai-sdk and >= 5x pure-python.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple

import _peers
import msgspec
import openai
import openai._streaming
import pytest
import ssewire
from openai._streaming import Stream as OpenAIStream
from openai._types import omit
from openai.lib.streaming.chat import ChatCompletionStream as OpenAIChatStream
from openai.types.chat import ChatCompletionChunk

DIALECT = "chat"

# -- the SDK path --------------------------------------------------------------------------

# The HTTP library the SDK itself uses (httpx2 in openai 3.x, httpx before).
_HTTP: Any = getattr(openai._streaming, "httpx2", None) or getattr(openai._streaming, "httpx")

# A client only for its response processing (`_process_response_data`); never contacted.
_CLIENT = openai.OpenAI(api_key="sk-bench", base_url="http://127.0.0.1:9/v1", max_retries=0)


def _raw_stream(reads: List[bytes]) -> Any:
    response = _HTTP.Response(
        200, headers={"content-type": "text/event-stream"}, content=iter(reads)
    )
    return OpenAIStream(cast_to=ChatCompletionChunk, response=response, client=_CLIENT)


def sdk_feed(reads: List[bytes]) -> List[Any]:
    """``openai.Stream[ChatCompletionChunk]`` iterated: decoder + JSON + chunk models."""
    return list(_raw_stream(reads))


def sdk_accumulate(reads: List[bytes]) -> Any:
    """``client.chat.completions.stream()`` minus HTTP: stream state + final completion."""
    stream = OpenAIChatStream(raw_stream=_raw_stream(reads), response_format=omit, input_tools=omit)
    return stream.get_final_completion()  # iterates the stream (and its events) to the end


# -- msgspec: the decode-only limit --------------------------------------------------------


class _S(msgspec.Struct, gc=False):  # no reference cycles: skip GC tracking (msgspec's tip)
    pass


class MsFunction(_S):
    name: Optional[str] = None
    arguments: Optional[str] = None


class MsToolCall(_S):
    index: int = 0
    id: Optional[str] = None
    type: Optional[str] = None
    function: Optional[MsFunction] = None


class MsDelta(_S):
    role: Optional[str] = None
    content: Optional[str] = None
    refusal: Optional[str] = None
    reasoning: Optional[str] = None
    reasoning_content: Optional[str] = None
    tool_calls: Optional[List[MsToolCall]] = None
    reasoning_details: msgspec.Raw = msgspec.Raw()


class MsChoice(_S):
    index: int = 0
    delta: Optional[MsDelta] = None
    logprobs: msgspec.Raw = msgspec.Raw()
    finish_reason: Optional[str] = None


class MsChunk(_S):
    id: Optional[str] = None
    object: Optional[str] = None
    created: Optional[int] = None
    model: Optional[str] = None
    system_fingerprint: Optional[str] = None
    service_tier: Optional[str] = None
    choices: List[MsChoice] = []
    usage: msgspec.Raw = msgspec.Raw()


_DECODE = msgspec.json.Decoder(MsChunk).decode


def msgspec_assemble(chunks: List[MsChunk]) -> Dict[str, Any]:
    """The structs folded into a chat.completion-like dict (for the check only)."""
    dicts = [_peers.struct_to_builtins(c) for c in chunks]
    return _peers.dict_accumulate(_peers.ChatDictAccumulator, dicts)


# -- correctness ---------------------------------------------------------------------------


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """What every peer must agree on, from a chat.completion dict."""
    choices = []
    for choice in result["choices"]:
        message = choice["message"]
        calls = [
            (c.get("id"), c["function"].get("name"), c["function"].get("arguments"))
            for c in message.get("tool_calls") or ()
        ]
        choices.append({
            "index": choice["index"],
            "role": message.get("role"),
            "content": message.get("content"),
            "refusal": message.get("refusal"),
            "tool_calls": calls,
            "finish_reason": choice.get("finish_reason"),
        })
    return {"id": result["id"], "model": result["model"], "choices": choices,
            "usage": result.get("usage")}


_REFERENCE: Dict[bool, Dict[str, Any]] = {}


def reference(quick: bool) -> Dict[str, Any]:
    """ssewire's accumulator on the whole body: the result every peer must reproduce."""
    if quick not in _REFERENCE:
        body = _peers.corpus(DIALECT, quick).body
        result = summary(_peers.ssewire_reference(ssewire.ChatCompletionStream, ssewire.ChatCompletionAccumulator, body))
        assert result["choices"][0]["tool_calls"] and result["usage"]  # the corpus has both
        _REFERENCE[quick] = result
    return _REFERENCE[quick]


def _from_dicts(dicts: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(_peers.ChatDictAccumulator, dicts))


def _from_items(items: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(ssewire.ChatCompletionAccumulator, items))


Runner = Callable[[Any], Any]

#: feed peers: id -> (runner of the reads or payloads, decoded objects -> summary).
FEED: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    "ssewire": (partial(_peers.ssewire_feed, ssewire.ChatCompletionStream), _from_items),
    "openai-sdk": (sdk_feed, lambda models: _from_dicts([m.to_dict() for m in models])),
    "httpx-sse": (_peers.httpx_sse_feed, _from_dicts),
    "pure-python": (_peers.pure_feed, _from_dicts),
    "msgspec": (partial(_peers.msgspec_decode, _DECODE), lambda s: summary(msgspec_assemble(s))),
}

#: feed+accumulate peers: id -> (runner of the reads, result -> summary).
ACCUMULATE: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    # The stream folds what it decodes (issue 8): feed() builds the items, consume() none.
    "ssewire": (partial(_peers.ssewire_result, ssewire.ChatCompletionStream), summary),
    "ssewire-consume": (partial(_peers.ssewire_consume, ssewire.ChatCompletionStream), summary),
    # The public accumulator over the items (items that come from elsewhere).
    "ssewire+acc": (
        partial(_peers.ssewire_accumulate, ssewire.ChatCompletionStream, ssewire.ChatCompletionAccumulator),
        summary,
    ),
    "openai-sdk": (sdk_accumulate, lambda completion: summary(completion.to_dict())),
    "httpx-sse": (partial(_peers.httpx_sse_accumulate, _peers.ChatDictAccumulator), summary),
    "pure-python": (partial(_peers.pure_accumulate, _peers.ChatDictAccumulator), summary),
    "msgspec": FEED["msgspec"],
}


# -- benchmarks ----------------------------------------------------------------------------


@pytest.mark.parametrize("peer", list(FEED))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.FEED))
def test_chat_feed(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding of one stream into per-chunk objects."""
    _peers.bench_feed(benchmark, corpora, DIALECT, FEED, reference, chunking, peer)


@pytest.mark.parametrize("peer", list(ACCUMULATE))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.ACCUMULATE))
def test_chat_accumulate(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding + accumulation of one stream into the final chat.completion."""
    _peers.bench_accumulate(benchmark, corpora, DIALECT, ACCUMULATE, reference, chunking, peer)

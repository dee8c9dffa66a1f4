"""OpenAI Responses benchmarks: ``ssewire.ResponsesStream`` (+ ``ResponseAccumulator``) against
the ways Python reads an OpenAI-compatible ``POST /v1/responses`` stream today.

Corpus (``_peers.DIALECTS["responses"]``, deterministic): ``event:`` + ``data:`` frames as
api.openai.com sends them - ``response.created``, ``response.in_progress``, a message item with
1000 ``response.output_text.delta``s and its ``*.done`` events, a ``function_call`` item whose
arguments stream as ``response.function_call_arguments.delta`` fragments, and
``response.completed`` carrying the full response; cut into 4 KiB reads and one read per event
(1 B - 8 KiB).

Tasks and peers, all in the same run on the same reads:

* ``feed`` (framing + decoding to per-event objects):
  ``ssewire`` (``feed`` over all reads + ``finish()``); ``openai-sdk`` (``openai.Stream``
  iterated: the SDK's ``SSEDecoder`` + ``json.loads`` + ``ResponseStreamEvent`` construction via
  ``construct_type`` - a discriminated union, so each event is first tried with pydantic
  validation - exactly as ``client.responses.create(stream=True)`` yields); ``httpx-sse``
  (+ ``orjson.loads``); ``pure-python`` (``PureSSEParser`` + ``orjson.loads``); ``msgspec``
  (decode-only limit: the ``data`` payloads, extracted before timing, decoded into a
  ``msgspec.Struct`` shaped like ssewire's flat ``ResponseEvent``; ``item``, ``part``,
  ``response`` and ``logprobs``, which ssewire converts only when read, are ``msgspec.Raw``).
* ``feed+accumulate`` (the final ``response`` object):
  ``ssewire`` (``acc.add_all(stream.feed(read))``, ``result()``); ``openai-sdk`` (what
  ``client.responses.stream()`` runs: ``openai.lib.streaming.responses.ResponseStream`` over the
  raw stream - ``ResponseStreamState.handle_event`` per event and its events - then
  ``get_final_response()``); ``httpx-sse`` and ``pure-python`` with the dict accumulator of
  ``_peers.py`` (which assembles the output items from the deltas; the terminal response wins).

The SDK reads its bytes from an in-memory ``Response`` of its own HTTP library (``httpx2``)
that replays the reads (no socket); that layer costs well under 1% of the SDK's time here.

Correctness before timing: every peer's final response (id, model, status, per output item:
message id, role and part texts / function call id, name and arguments; usage) must equal what
ssewire's accumulator makes of the whole body; decoded objects of the feed task are assembled
for the check (outside the timing), and the dict accumulator's output assembled from the
deltas alone must equal the terminal response's output.

Run for real (``addopts`` disable benchmarks, so a plain ``pytest`` runs each once, on a
100-chunk corpus, as a test)::

    pytest benches --benchmark-enable --benchmark-group-by=group \\
        --benchmark-columns=min,mean,ops

On a shared or loaded machine add ``--benchmark-timer=time.thread_time`` (CPU time of the
benchmarking thread): with wall-clock time, a peer whose run lasts hundreds of milliseconds (the
SDKs) is preempted by other processes during most runs while ssewire's millisecond runs often
are not, which inflates the SDK ratios (about 2x on 2 cores at load 4).

Reading the results: one table per group ``responses <task> / <chunking>``; the machine is
shared, so read only ratios within a group (compare ``min``): a peer's multiple of the
``ssewire`` row is "ssewire is N times faster on this input". The summary after the tables
lists them. Targets (issue 4): feed >= 2x msgspec and >= 5x pure-python; feed+accumulate
>= 300x openai-sdk and >= 5x pure-python.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import _peers
import msgspec
import openai
import openai._streaming
import pytest
import ssewire
from openai._streaming import Stream as OpenAIStream
from openai._types import omit
from openai.lib.streaming.responses import ResponseStream as OpenAIResponseStream
from openai.types.responses import ResponseStreamEvent

DIALECT = "responses"

# -- the SDK path --------------------------------------------------------------------------

# The HTTP library the SDK itself uses (httpx2 in openai 3.x, httpx before).
_HTTP: Any = getattr(openai._streaming, "httpx2", None) or getattr(openai._streaming, "httpx")

# A client only for its response processing (`_process_response_data`); never contacted.
_CLIENT = openai.OpenAI(api_key="sk-bench", base_url="http://127.0.0.1:9/v1", max_retries=0)


def _raw_stream(reads: List[bytes]) -> Any:
    response = _HTTP.Response(
        200, headers={"content-type": "text/event-stream"}, content=iter(reads)
    )
    return OpenAIStream(cast_to=cast(Any, ResponseStreamEvent), response=response, client=_CLIENT)


def sdk_feed(reads: List[bytes]) -> List[Any]:
    """``openai.Stream[ResponseStreamEvent]`` iterated: decoder + JSON + event models."""
    return list(_raw_stream(reads))


def sdk_accumulate(reads: List[bytes]) -> Any:
    """``client.responses.stream()`` minus HTTP: stream state + final response."""
    stream = OpenAIResponseStream(
        raw_stream=_raw_stream(reads), text_format=omit, input_tools=omit, starting_after=None
    )
    return stream.get_final_response()  # iterates the stream (and its events) to the end


# -- msgspec: the decode-only limit --------------------------------------------------------


class _S(msgspec.Struct, gc=False):  # no reference cycles: skip GC tracking (msgspec's tip)
    pass


class MsEvent(_S):
    type: str
    sequence_number: Optional[int] = None
    output_index: Optional[int] = None
    content_index: Optional[int] = None
    summary_index: Optional[int] = None
    item_id: Optional[str] = None
    delta: Optional[str] = None
    text: Optional[str] = None
    refusal: Optional[str] = None
    arguments: Optional[str] = None
    item: msgspec.Raw = msgspec.Raw()
    part: msgspec.Raw = msgspec.Raw()
    response: msgspec.Raw = msgspec.Raw()
    logprobs: msgspec.Raw = msgspec.Raw()


_DECODE = msgspec.json.Decoder(MsEvent).decode


def msgspec_assemble(events: List[MsEvent]) -> Dict[str, Any]:
    """The structs folded into a response dict (for the check only)."""
    return _dict_result([_peers.struct_to_builtins(e) for e in events])


# -- correctness ---------------------------------------------------------------------------


def _item(item: Dict[str, Any]) -> Tuple[Any, ...]:
    kind = item.get("type")
    if kind == "message":
        texts = [p.get("text") for p in item.get("content") or ()]
        return (kind, item.get("id"), item.get("role"), texts)
    if kind == "function_call":
        return (kind, item.get("call_id"), item.get("name"), item.get("arguments"))
    return (kind, item.get("id"))


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """What every peer must agree on, from a response dict."""
    return {
        "id": result.get("id"),
        "model": result.get("model"),
        "status": result.get("status"),
        "output": [_item(i) for i in result.get("output") or ()],
        "usage": result.get("usage"),
    }


_REFERENCE: Dict[bool, Dict[str, Any]] = {}


def reference(quick: bool) -> Dict[str, Any]:
    """ssewire's accumulator on the whole body: the result every peer must reproduce."""
    if quick not in _REFERENCE:
        body = _peers.corpus(DIALECT, quick).body
        result = summary(_peers.ssewire_reference(ssewire.ResponsesStream, ssewire.ResponseAccumulator, body))
        assert [i[0] for i in result["output"]] == ["message", "function_call"]
        _REFERENCE[quick] = result
    return _REFERENCE[quick]


def _dict_result(dicts: List[Any]) -> Dict[str, Any]:
    acc = _peers.ResponseDictAccumulator()
    for d in dicts:
        acc.add(d)
    result = acc.result()
    # The terminal response wins in result(); the deltas alone must build the same output.
    assembled = [_item(i) for i in acc.assembled_output()]
    assert assembled == summary(result)["output"], "output assembled from the deltas differs"
    return result


def _from_items(items: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(ssewire.ResponseAccumulator, items))


Runner = Callable[[Any], Any]

#: feed peers: id -> (runner of the reads or payloads, decoded objects -> summary).
FEED: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    "ssewire": (partial(_peers.ssewire_feed, ssewire.ResponsesStream), _from_items),
    "openai-sdk": (sdk_feed, lambda models: summary(_dict_result([m.to_dict() for m in models]))),
    "httpx-sse": (_peers.httpx_sse_feed, lambda dicts: summary(_dict_result(dicts))),
    "pure-python": (_peers.pure_feed, lambda dicts: summary(_dict_result(dicts))),
    "msgspec": (partial(_peers.msgspec_decode, _DECODE), lambda s: summary(msgspec_assemble(s))),
}

#: feed+accumulate peers: id -> (runner of the reads, result -> summary).
ACCUMULATE: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    # The stream folds what it decodes (issue 8): feed() builds the items, consume() none.
    "ssewire": (partial(_peers.ssewire_result, ssewire.ResponsesStream), summary),
    "ssewire-consume": (partial(_peers.ssewire_consume, ssewire.ResponsesStream), summary),
    # The public accumulator over the items (items that come from elsewhere).
    "ssewire+acc": (
        partial(_peers.ssewire_accumulate, ssewire.ResponsesStream, ssewire.ResponseAccumulator),
        summary,
    ),
    "openai-sdk": (sdk_accumulate, lambda response: summary(response.to_dict())),
    "httpx-sse": (partial(_peers.httpx_sse_accumulate, _peers.ResponseDictAccumulator), summary),
    "pure-python": (partial(_peers.pure_accumulate, _peers.ResponseDictAccumulator), summary),
    "msgspec": FEED["msgspec"],
}


# -- benchmarks ----------------------------------------------------------------------------


@pytest.mark.parametrize("peer", list(FEED))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.FEED))
def test_responses_feed(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding of one stream into per-event objects."""
    _peers.bench_feed(benchmark, corpora, DIALECT, FEED, reference, chunking, peer)


@pytest.mark.parametrize("peer", list(ACCUMULATE))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.ACCUMULATE))
def test_responses_accumulate(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding + accumulation of one stream into the final response."""
    _peers.bench_accumulate(benchmark, corpora, DIALECT, ACCUMULATE, reference, chunking, peer)

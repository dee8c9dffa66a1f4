"""Gemini benchmarks: ``ssewire.GeminiStream`` against the ways Python reads a Gemini
``streamGenerateContent?alt=sse`` stream today (issue 17).

Corpus (``_peers.DIALECTS["gemini"]``, deterministic): ``data:`` frames separated by CRLF blank
lines, as the Gemini API sends them; one candidate; ~330 thought chunks, then ~670 text
chunks of one token each, then a whole ``functionCall`` with a ``thoughtSignature``; a
cumulative ``usageMetadata``, ``modelVersion`` and ``responseId`` on every chunk; no
``[DONE]``. Cut into 4 KiB reads and one read per event; ``feed+accumulate`` also whole.

Tasks and peers, all in the same run on the same reads:

* ``feed`` (framing + decoding to per-chunk objects): ``ssewire`` (``feed`` over all reads +
  ``finish()``); ``google-genai`` (the SDK's own chunk path, driven offline: its
  ``HttpResponse`` line reader over an ``httpx.Response`` that replays the reads, ``json.loads``,
  ``_GenerateContentResponse_from_mldev`` and ``GenerateContentResponse._from_response``, what
  ``client.models.generate_content_stream`` yields); ``httpx-sse`` and ``pure-python``
  (``PureSSEParser``) with ``orjson.loads``.
* ``feed+accumulate`` (the final ``GenerateContentResponse``): ``ssewire`` (``feed`` +
  ``result()``), ``ssewire-consume`` (``consume`` + ``result()``: no per-chunk object);
  ``httpx-sse`` and ``pure-python`` with ``_peers.GeminiDictAccumulator`` (json + dict
  merging; the SDK has no accumulator of its own).

Correctness before timing: every peer's assembled response must agree with ``GeminiStream``'s
``result()`` for the whole body (``summary``: each part's kind and text or call, signatures
present, finish reason, token counts, model, id).

Run for real (a plain ``pytest`` runs each once, on a 100-chunk corpus, as a test)::

    pytest benches/bench_gemini.py --benchmark-enable --benchmark-group-by=group \\
        --benchmark-timer=time.thread_time

Targets (issue 17): feed + result >= 5x pure-python, consume + result >= 10x pure-python, one
event per read and whole bodies.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, List, Tuple

import _peers
import pytest
import ssewire

DIALECT = "gemini"


# -- the SDK path --------------------------------------------------------------------------


def _sdk() -> Any:
    """The google-genai parts the peer drives (private, so checked), or None when the SDK is
    not installed (it needs CPython 3.11 or later) or has changed."""
    try:
        from google.genai import _api_client, types
        from google.genai.models import _GenerateContentResponse_from_mldev
    except ImportError:
        return None
    if not hasattr(_api_client.HttpResponse, "_iter_response_stream"):
        return None
    return _api_client, types, _GenerateContentResponse_from_mldev


def sdk_feed(reads: List[bytes]) -> List[Any]:
    """google-genai: its streamed-response reader and chunk models, without a network."""
    import json

    import httpx

    _api_client, types, _GenerateContentResponse_from_mldev = _sdk()
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(reads))
    stream = _api_client.HttpResponse(response.headers, response_stream=response)
    out = []
    for text in stream._iter_response_stream():
        d = _GenerateContentResponse_from_mldev(json.loads(text), None, None)
        out.append(types.GenerateContentResponse._from_response(response=d, kwargs={}))
    return out


# -- correctness ---------------------------------------------------------------------------

def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """What every peer must agree on (the SDK re-encodes signatures and enums, so those are
    compared by presence and name)."""
    first = result["candidates"][0]
    parts = []
    for p in first["content"]["parts"]:
        if "functionCall" in p:
            call = p["functionCall"]
            parts.append(("call", call.get("name"), call.get("args"), "thoughtSignature" in p))
        else:
            parts.append(("thought" if p.get("thought") else "text", p.get("text"), "thoughtSignature" in p))
    usage = result.get("usageMetadata") or {}
    counts = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount")
    return {
        "parts": parts,
        "finish": str(first.get("finishReason")).rsplit(".", 1)[-1],
        "usage": {k: usage.get(k) for k in counts},
        "model": result.get("modelVersion"),
        "id": result.get("responseId"),
    }


_REFERENCE: Dict[bool, Dict[str, Any]] = {}


def reference(quick: bool) -> Dict[str, Any]:
    """GeminiStream's result for the whole body: what every peer must reproduce."""
    if quick not in _REFERENCE:
        stream = ssewire.GeminiStream()
        stream.consume(_peers.corpus(DIALECT, quick).body)
        stream.finish()
        assert stream.done and stream.error is None
        result = stream.result()
        kinds = [("thought" if p.get("thought") else "text") if "text" in p else "call"
                 for p in result["candidates"][0]["content"]["parts"]]  # fmt: skip
        assert kinds == ["thought", "text", "call"], kinds
        _REFERENCE[quick] = summary(result)
    return _REFERENCE[quick]


def _from_dicts(dicts: List[Any]) -> Dict[str, Any]:
    return summary(_peers.dict_accumulate(_peers.GeminiDictAccumulator, dicts))


def _from_models(models: List[Any]) -> Dict[str, Any]:
    return _from_dicts([m.model_dump(mode="json", exclude_none=True, by_alias=True) for m in models])


def _from_items(items: List[Any]) -> Dict[str, Any]:
    return _from_dicts([i.raw for i in items])


Runner = Callable[[Any], Any]

FEED: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    "ssewire": (partial(_peers.ssewire_feed, ssewire.GeminiStream), _from_items),
    "httpx-sse": (_peers.httpx_sse_feed, _from_dicts),
    "pure-python": (_peers.pure_feed, _from_dicts),
}
if _sdk() is not None:
    FEED["google-genai"] = (sdk_feed, _from_models)

ACCUMULATE: Dict[str, Tuple[Runner, Callable[[Any], Dict[str, Any]]]] = {
    "ssewire": (partial(_peers.ssewire_result, ssewire.GeminiStream), summary),
    "ssewire-consume": (partial(_peers.ssewire_consume, ssewire.GeminiStream), summary),
    "httpx-sse": (partial(_peers.httpx_sse_accumulate, _peers.GeminiDictAccumulator), summary),
    "pure-python": (partial(_peers.pure_accumulate, _peers.GeminiDictAccumulator), summary),
}


# -- benchmarks ----------------------------------------------------------------------------


@pytest.mark.parametrize("peer", list(FEED))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.FEED))
def test_gemini_feed(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding of one stream into per-chunk objects."""
    _peers.bench_feed(benchmark, corpora, DIALECT, FEED, reference, chunking, peer)


@pytest.mark.parametrize("peer", list(ACCUMULATE))
@pytest.mark.parametrize("chunking", _peers.cases(DIALECT, _peers.ACCUMULATE))
def test_gemini_accumulate(benchmark: Any, corpora: Any, chunking: str, peer: str) -> None:
    """Framing + decoding + accumulation of one stream into the final response."""
    _peers.bench_accumulate(benchmark, corpora, DIALECT, ACCUMULATE, reference, chunking, peer)


@pytest.mark.parametrize("peer", list(ACCUMULATE))
@pytest.mark.benchmark(group=f"{DIALECT} {_peers.ACCUMULATE} / whole body")
def test_gemini_accumulate_whole_body(benchmark: Any, corpora: Any, peer: str) -> None:
    """The same on the whole body in one read (a response read at once, a replayed capture)."""
    corpus = _peers.corpus(DIALECT, corpora.quick)
    run, summarize = ACCUMULATE[peer]
    reads = [corpus.body]
    assert summarize(run(reads)) == reference(corpora.quick), f"{peer} disagrees with ssewire"
    benchmark.extra_info.update({"events": corpus.events, "bytes": len(corpus.body), "reads": 1})
    benchmark(run, reads)


def test_gemini_vertex_runs() -> None:
    """``gemini_vertex.py`` runs (one small round): the Vertex-spelled answer is read whole
    and its result is the answer's text."""
    import gemini_vertex

    data = gemini_vertex.body()
    s = ssewire.GeminiStream()
    s.consume(data)
    parts = s.result()["candidates"][0]["content"]["parts"]
    assert len(ssewire.SSEParser().feed(data)) == 6
    assert "".join(p["text"] for p in parts).startswith("1. ")
    t = gemini_vertex.row(rounds=1, reps=2)
    assert set(t) == {"ssewire", "SSEParser", "msgspec"} and all(v > 0 for v in t.values())

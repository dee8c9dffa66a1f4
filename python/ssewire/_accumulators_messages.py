"""``MessageAccumulator``: fold ``MessagesStream`` items into Anthropic's non-streaming message.

Strategy: the Rust stream has framed the bytes and decoded every event into a flat
``MessageEvent`` (pings already dropped), so this layer reads attributes and never parses
event JSON. The frequent deltas carry typed fields (``text``, ``partial_json``, ``thinking``,
``signature``); ``add()`` appends them to per-block lists, kept in a dict by block ``index``,
and ``result()`` joins each list once. The only JSON decoded here is each tool block's input,
once, when its ``content_block_stop`` arrives (or in ``result()`` for a block never stopped).
Work is O(items + total fragment length); nothing is grown by repeated concatenation.
``result()`` returns a deep copy, so the caller may modify it.

The result has the shape of a non-streaming ``POST /v1/messages`` response::

    {"id", "type": "message", "role", "model", "content": [blocks], "stop_reason",
     "stop_sequence", "usage", ...}

- ``message_start``: ``id``, ``role``, ``model`` and every other key of its ``message`` (e.g.
  ``container``) are kept; its ``usage`` is the base of ``usage``.
- content blocks, in ``index`` order, each starting as its ``content_block_start`` block:
  ``text_delta`` text is appended to ``text`` (``citations_delta`` citations to a
  ``citations`` list), ``thinking_delta`` to ``thinking`` (the last ``signature_delta`` is
  the ``signature``), and the ``input_json_delta`` fragments of a ``tool_use`` /
  ``server_tool_use`` block are concatenated and parsed into ``input`` (with no fragment, or
  only empty ones, ``input`` stays as ``content_block_start`` sent it: ``{}``).
  Fragments that never form valid JSON are reported in ``warnings``; the block then keeps the
  ``input`` of its ``content_block_start`` and carries the joined text under ``partial_json``.
  ``redacted_thinking`` and unknown block types are kept as they came.
- ``message_delta``: ``stop_reason``, ``stop_sequence`` and any other delta key (e.g.
  ``container``) override the message's values when not null; its ``usage`` counts are
  cumulative, so each non-null value replaces the earlier one (``input_tokens``,
  ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``,
  ``server_tool_use``, ...) and keys seen only there are added.

Errors: ``errors`` lists every ``ErrorItem`` in arrival order, ``error`` is the ``StreamError``
of the first ``"stream_error"`` one (e.g. an ``overloaded_error``, whose ``type`` a caller can
retry on). The content that arrived before an error stays in ``result()``. ``warnings`` holds
human-readable notes about input the accumulator had to interpret (invalid tool input JSON,
deltas for a block that never started, delta types it does not know).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable, Optional

from ssewire import _core

# The Rust item class; `add()` compares exact types first (one pointer comparison) and falls
# back to duck typing for anything else with the same attributes.
_MessageEvent: Any = getattr(_core, "MessageEvent", None)

# Block types whose `input` streams as `input_json_delta` fragments and is `{}` when none came.
_TOOL_BLOCKS = frozenset(("tool_use", "server_tool_use", "mcp_tool_use"))

# The block a delta implies when it arrives for an index that never had `content_block_start`.
_IMPLIED_BLOCK: dict[str, dict[str, Any]] = {
    "text_delta": {"type": "text", "text": ""},
    "citations_delta": {"type": "text", "text": ""},
    "thinking_delta": {"type": "thinking", "thinking": ""},
    "signature_delta": {"type": "thinking", "thinking": ""},
    "input_json_delta": {"type": "tool_use", "input": {}},
}

_UNPARSED: Any = object()  # `_Block.parsed` before the input fragments were parsed


def _merge_non_null(target: dict[str, Any], source: Any) -> None:
    """Later non-null values override; a null only fills a key not seen before."""
    if not isinstance(source, dict):
        return
    for k, v in source.items():
        if v is not None or k not in target:
            target[k] = v



# No block remembered (see `add_all`).
_FORGOTTEN = object()

class _Block:
    """One content block being assembled: its start block and the fragments of its deltas."""

    __slots__ = ("index", "block", "text", "thinking", "json", "parsed", "warning",
                 "citations", "signature", "unknown")  # fmt: skip

    def __init__(self, index: Any, block: dict[str, Any]) -> None:
        self.index = index
        self.block = block
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.json: Optional[list[str]] = None  # `input_json_delta` fragments, once one came
        self.parsed: Any = _UNPARSED
        self.warning: Optional[str] = None  # the warning about input that is not JSON
        self.citations: Optional[list[Any]] = None
        self.signature: Optional[str] = None
        self.unknown: Optional[set[str]] = None  # delta types already warned about

    def describe(self) -> str:
        block = self.block
        name = f"content block {self.index} ({block.get('type')!s}"
        ident = block.get("id")
        return f"{name} {ident})" if ident else f"{name})"

    def parse_input(self, warnings: list[str]) -> None:
        """Parses the joined tool input fragments once; reports input that is not JSON."""
        if self.json is None or self.parsed is not _UNPARSED:
            return
        raw = "".join(self.json)
        self.json = [raw]  # a later join of one str is free
        if not raw.strip():
            self.parsed = None  # only empty fragments: as if none came
            return
        try:
            self.parsed = (json.loads(raw),)
        except ValueError as exc:
            self.parsed = exc
            self.warning = (
                f"{self.describe()}: the input_json_delta fragments never formed valid JSON "
                f"({exc}); 'input' is left as content_block_start sent it and the joined "
                f"text is kept under 'partial_json'"
            )
            warnings.append(self.warning)

    def add_json(self, fragment: str, warnings: list[str]) -> None:
        """One more input fragment: the input is parsed again when next needed, and a warning
        given by ``result()`` before the stream ended is withdrawn."""
        if self.json is None:
            self.json = [fragment]
        else:
            self.json.append(fragment)
        self.parsed = _UNPARSED
        if self.warning is not None:
            try:
                warnings.remove(self.warning)
            except ValueError:
                pass
            self.warning = None

    def build(self) -> dict[str, Any]:
        out = dict(self.block)
        if self.text:
            prefix = out.get("text")
            out["text"] = (prefix if isinstance(prefix, str) else "") + "".join(self.text)
        if self.thinking:
            prefix = out.get("thinking")
            out["thinking"] = (prefix if isinstance(prefix, str) else "") + "".join(self.thinking)
        if self.signature is not None:
            out["signature"] = self.signature
        if self.citations is not None:
            earlier = out.get("citations")
            out["citations"] = (list(earlier) if isinstance(earlier, list) else []) + self.citations
        parsed = self.parsed
        if parsed.__class__ is tuple:
            out["input"] = parsed[0]
        elif isinstance(parsed, ValueError) and self.json is not None:
            out["partial_json"] = "".join(self.json)
        if "input" not in out and out.get("type") in _TOOL_BLOCKS:
            out["input"] = {}
        return out


class MessageAccumulator:
    """Fold ``MessagesStream`` items into a non-streaming Anthropic ``message`` dict.

    ::

        stream = ssewire.MessagesStream()
        acc = ssewire.MessageAccumulator()
        for data in response.iter_bytes():
            acc.add_all(stream.feed(data))
        acc.add_all(stream.finish())
        message = acc.result()
    """

    __slots__ = ("error", "errors", "warnings", "_message", "_usage", "_delta", "_blocks")

    def __init__(self) -> None:
        #: The first server-reported error (``ErrorItem.kind == "stream_error"``), else ``None``.
        self.error: Any = None
        #: Every ``ErrorItem`` added (stream errors and malformed frames), in order.
        self.errors: list[Any] = []
        #: Notes about input that had to be interpreted (e.g. tool input that is not JSON).
        self.warnings: list[str] = []
        self._message: Optional[dict[str, Any]] = None  # the `message` of `message_start`
        self._usage: Optional[dict[str, Any]] = None
        self._delta: dict[str, Any] = {}  # merged `message_delta` delta fields
        self._blocks: dict[Any, _Block] = {}

    def add_all(self, items: Iterable[Any]) -> None:
        """Add every item of ``items`` (e.g. the list one ``feed()`` returned).

        The text and thinking deltas of a known block (nearly every item of a stream) are
        handled inline, with the block of the previous delta remembered; everything else goes
        through ``add()``, after which the remembered block is forgotten (any other event may
        replace it)."""
        add = self.add
        event_class = _MessageEvent
        blocks = self._blocks
        last_index: Any = _FORGOTTEN
        block: Any = None
        for item in items:
            if item.__class__ is event_class and item.type == "content_block_delta":
                index = item.index
                if index != last_index:
                    block = blocks.get(index)
                    last_index = index if block is not None else _FORGOTTEN
                if block is not None:
                    delta_type = item.delta_type
                    if delta_type == "text_delta":
                        v = item.text
                        if v is not None:
                            block.text.append(v)
                        continue
                    if delta_type == "thinking_delta":
                        v = item.thinking
                        if v is not None:
                            block.thinking.append(v)
                        continue
            add(item)
            blocks = self._blocks
            last_index = _FORGOTTEN

    def add(self, item: Any) -> None:
        """Add one ``MessageEvent`` or ``ErrorItem``."""
        if item.__class__ is not _MessageEvent:
            kind = getattr(item, "kind", None)
            if kind is not None:
                self.errors.append(item)
                if kind == "stream_error" and self.error is None:
                    self.error = item.error
                return
            if not hasattr(item, "delta_type"):
                return  # not a Messages event
        kind = item.type
        if kind == "content_block_delta":
            block = self._blocks.get(item.index)
            delta_type = item.delta_type
            if block is None:
                block = self._implied_block(item.index, delta_type)
            if delta_type == "text_delta":
                v = item.text
                if v is not None:
                    block.text.append(v)
            elif delta_type == "input_json_delta":
                v = item.partial_json
                if v is not None:
                    block.add_json(v, self.warnings)
            elif delta_type == "thinking_delta":
                v = item.thinking
                if v is not None:
                    block.thinking.append(v)
            elif delta_type == "signature_delta":
                v = item.signature
                if v is not None:
                    block.signature = v
            elif delta_type == "citations_delta":
                if block.citations is None:
                    block.citations = []
                block.citations.append(item.citation)
            else:
                self._unknown_delta(block, delta_type)
        elif kind == "content_block_start":
            index = item.index
            cb = item.content_block
            if not isinstance(cb, dict):
                cb = {"type": None}
            if index in self._blocks:
                self.warnings.append(
                    f"content block {index}: a second content_block_start replaced the first"
                )
            self._blocks[index] = _Block(index, cb)
        elif kind == "content_block_stop":
            block = self._blocks.get(item.index)
            if block is not None:
                block.parse_input(self.warnings)
        elif kind == "message_start":
            message = item.message
            if isinstance(message, dict):
                self._message = message
                usage = message.get("usage")
                self._usage = dict(usage) if isinstance(usage, dict) else None
        elif kind == "message_delta":
            raw = item.raw
            delta = raw.get("delta") if isinstance(raw, dict) else None
            if isinstance(delta, dict):
                delta.pop("type", None)
                _merge_non_null(self._delta, delta)
            else:
                _merge_non_null(self._delta, {"stop_reason": item.stop_reason,
                                              "stop_sequence": item.stop_sequence})  # fmt: skip
            usage = item.usage
            if isinstance(usage, dict):
                if self._usage is None:
                    self._usage = {}
                _merge_non_null(self._usage, usage)
        # `message_stop` and unknown event types carry nothing to accumulate.

    def _implied_block(self, index: Any, delta_type: Any) -> _Block:
        """A block for a delta whose index never had a `content_block_start`."""
        implied = _IMPLIED_BLOCK.get(delta_type)
        block = _Block(index, copy.deepcopy(implied) if implied is not None else {"type": None})
        self._blocks[index] = block
        self.warnings.append(
            f"content block {index}: {delta_type} before any content_block_start; "
            f"assumed a {block.block['type']} block"
        )
        return block

    def _unknown_delta(self, block: _Block, delta_type: Any) -> None:
        seen = block.unknown
        if seen is None:
            seen = block.unknown = set()
        if delta_type not in seen:
            seen.add(delta_type)
            self.warnings.append(f"{block.describe()}: delta type {delta_type!r} ignored")

    def result(self) -> dict[str, Any]:
        """The accumulated message dict (a new, independent dict on every call)."""
        message = self._message if self._message is not None else {}
        blocks = self._blocks
        if blocks:
            try:
                order = sorted(blocks)
            except TypeError:  # a non-integer index (garbage input): keep arrival order
                order = list(blocks)
            warnings = self.warnings
            content = []
            for i in order:
                block = blocks[i]
                block.parse_input(warnings)
                content.append(block.build())
        else:
            content = list(message.get("content") or [])
        delta = self._delta
        out: dict[str, Any] = {
            "id": message.get("id"),
            "type": "message",
            "role": message.get("role") or "assistant",
            "model": message.get("model"),
            "content": content,
            "stop_reason": delta.get("stop_reason", message.get("stop_reason")),
            "stop_sequence": delta.get("stop_sequence", message.get("stop_sequence")),
            "usage": dict(self._usage) if self._usage is not None else None,
        }
        for k, v in message.items():
            if k not in out:
                out[k] = v
        for k, v in delta.items():
            if k not in ("stop_reason", "stop_sequence") and (v is not None or k not in out):
                out[k] = v
        # Parsed tool inputs and server-sent blocks are kept and shared between calls; the
        # copy lets the caller modify the result freely.
        return copy.deepcopy(out)

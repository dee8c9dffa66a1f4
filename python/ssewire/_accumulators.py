"""Accumulators: fold the items a dialect stream decodes into the provider's final object.

Strategy: the Rust stream has already framed the bytes and decoded every JSON frame into flat
items, so this layer never parses JSON. It reads attributes, appends string fragments to lists
and joins each list once in ``result()``. Per-choice state lives in small ``__slots__`` objects
kept in a list indexed by the choice index, so ``add()`` builds no dict per chunk. Work is
O(items + total fragment length): no input makes it quadratic, because no string is grown by
repeated concatenation.

``ChatCompletionAccumulator`` turns ``ChatCompletionStream`` items (``ChatChunk``, ``ErrorItem``,
``Event``) into a dict shaped like OpenAI's non-streaming ``chat.completion`` response:

- ``id``, ``created``, ``model``: the first non-null value seen (an empty ``""`` / ``0``, as
  in Azure OpenAI's opening prompt-filter chunk, is replaced by the first real value);
  ``service_tier``, ``system_fingerprint``: the last non-null value (``None`` if never sent);
  ``usage``: the last non-null usage dict; unknown top-level chunk keys (vendor extras such as
  a router's routing object) are merged in at the top level, a later non-null value overriding
  an earlier one. ``obfuscation`` (OpenAI's per-chunk random padding) and an error frame's
  ``error`` envelope (reported on ``error`` instead) are left out.
- one entry in ``choices`` per choice index, sorted by index, each with ``message``,
  ``logprobs``, the last non-null ``finish_reason``, and the choice's unknown keys (e.g.
  ``native_finish_reason``, later non-null wins). ``message`` holds ``role`` (first seen, else
  ``"assistant"``), ``content`` and ``refusal`` (joined; ``None`` unless some chunk sent a
  non-null fragment), and ``tool_calls`` / ``reasoning`` / ``reasoning_content`` /
  ``reasoning_details`` only when the stream sent some (an empty list sends nothing).
  ``logprobs`` is ``None`` unless some chunk carried logprobs, else ``{"content", "refusal"}``
  with each chunk's lists concatenated.
- tool call fragments are merged by their ``index``: the first non-empty ``id`` and ``name``
  are kept (a provider that repeats them on every fragment does not get them doubled), the
  first ``type`` (``"function"`` when none was sent), and the ``arguments`` fragments are
  concatenated.
- ``reasoning_details`` blocks that carry an ``index`` are merged with the earlier block of the
  same index (``text``, ``summary`` and ``data`` concatenated, other fields: later non-null
  wins); blocks without ``index`` are appended.
- unknown delta keys (e.g. ``annotations``, ``audio``, the legacy ``function_call``) are merged
  into ``message``: strings concatenated, lists extended, dicts merged key by key with the same
  rules (so ``function_call.arguments`` and ``audio.transcript`` are concatenated, while the
  identifier keys ``id``, ``type``, ``index`` and ``name`` keep their first non-empty value),
  other values replaced; a ``null`` never overwrites a value.

Errors: ``acc.errors`` lists every ``ErrorItem`` in arrival order and ``acc.error`` is the
``StreamError`` of the first ``"stream_error"`` item. The content streamed before an error stays
in ``result()``. Plain ``Event`` items (named events the dialect does not know) are ignored.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ssewire import _core

# The Rust item class, when the extension provides it; `add()` compares exact types first (one
# pointer comparison) and falls back to duck typing for anything else with the same attributes.
_ChatChunk: Any = getattr(_core, "ChatChunk", None)

# Keys of a nested dict in an unknown delta field whose value identifies the thing rather than
# streams it: repeated on fragments by some providers, so they are never concatenated.
_IDENTITY_KEYS = frozenset(("id", "type", "index", "name"))

# String fields of a `reasoning_details` block that stream as fragments.
_REASONING_TEXT_KEYS = ("text", "summary", "data")

# Unknown top-level keys not copied into the result: OpenAI's per-chunk random padding, and the
# error envelope of an error frame (it is reported on `acc.error` / `stream.error` instead).
_DROPPED_EXTRAS = frozenset(("obfuscation", "error"))

# Choice indexes below this are kept in a list; larger (or negative) ones, which only garbage
# input produces, go to a dict so a bogus index cannot allocate a huge list.
_DENSE_CHOICES = 64


class _Parts(list):  # type: ignore[type-arg]
    """String fragments of one merged value, joined in ``result()``."""

    __slots__ = ()


class _Nested(dict):  # type: ignore[type-arg]
    """A dict value being merged fragment by fragment (its values may be ``_Parts``/``_Nested``)."""

    __slots__ = ()


class _Extended(list):  # type: ignore[type-arg]
    """A list value being extended (our own copy, so the caller's list is not mutated)."""

    __slots__ = ()


def _merge_value(target: dict[str, Any], key: str, value: Any, identity_keys: bool) -> None:
    """Merge one unknown-delta value into ``target[key]`` (see the module docs)."""
    if value is None:
        if key not in target:
            target[key] = None
        return
    cur = target.get(key)
    if isinstance(value, str):
        if identity_keys and key in _IDENTITY_KEYS:
            if not cur:
                target[key] = value
        elif cur.__class__ is _Parts:
            cur.append(value)
        else:
            target[key] = _Parts((value,))
    elif isinstance(value, list):
        if cur.__class__ is _Extended:
            cur.extend(value)
        else:
            target[key] = _Extended(value)
    elif isinstance(value, dict):
        if cur.__class__ is not _Nested:
            cur = target[key] = _Nested()
        for k, v in value.items():
            _merge_value(cur, k, v, True)
    else:
        target[key] = value


def _build_value(value: Any) -> Any:
    """Turn a merged value back into plain JSON-like Python values."""
    cls = value.__class__
    if cls is _Parts:
        return "".join(value)
    if cls is _Extended:
        return list(value)
    if cls is _Nested:
        return {k: _build_value(v) for k, v in value.items()}
    return value


def _merge_non_null(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Later non-null values override; a null only fills a key not seen before."""
    for k, v in source.items():
        if v is not None or k not in target:
            target[k] = v


class _ToolCall:
    """One tool call being assembled from its fragments."""

    __slots__ = ("index", "id", "type", "name", "arguments")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: Optional[str] = None
        self.type: Optional[str] = None
        self.name: Optional[str] = None
        self.arguments: list[str] = []

    def build(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type if self.type is not None else "function",
            "function": {"name": self.name, "arguments": "".join(self.arguments)},
        }


class _ReasoningBlock:
    """One indexed ``reasoning_details`` block: its fields, with streamed strings as parts."""

    __slots__ = ("fields",)

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}

    def add(self, block: dict[str, Any]) -> None:
        fields = self.fields
        for k, v in block.items():
            if k in _REASONING_TEXT_KEYS and isinstance(v, str):
                cur = fields.get(k)
                if cur.__class__ is _Parts:
                    cur.append(v)
                else:
                    fields[k] = _Parts((v,))
            elif v is not None or k not in fields:
                fields[k] = v

    def build(self) -> dict[str, Any]:
        return {k: _build_value(v) for k, v in self.fields.items()}


class _Choice:
    """Everything accumulated for one choice index."""

    __slots__ = (
        "index",
        "role",
        "content",
        "refusal",
        "reasoning",
        "reasoning_content",
        "tool_calls",
        "finish_reason",
        "details",
        "details_by_index",
        "logprobs_seen",
        "logprobs_content",
        "logprobs_refusal",
        "choice_extra",
        "delta_extra",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.role: Optional[str] = None
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_content: list[str] = []
        self.tool_calls: Optional[dict[int, _ToolCall]] = None
        self.finish_reason: Optional[str] = None
        # reasoning_details: `None` until sent; entries are raw blocks or `_ReasoningBlock`s.
        self.details: Optional[list[Any]] = None
        self.details_by_index: Optional[dict[Any, _ReasoningBlock]] = None
        self.logprobs_seen = False
        self.logprobs_content: Optional[list[Any]] = None
        self.logprobs_refusal: Optional[list[Any]] = None
        self.choice_extra: Optional[dict[str, Any]] = None
        self.delta_extra: Optional[dict[str, Any]] = None

    def add_tool_calls(self, fragments: Iterable[Any]) -> None:
        calls = self.tool_calls
        if calls is None:
            calls = self.tool_calls = {}
        for frag in fragments:
            index = frag.index
            call = calls.get(index)
            if call is None:
                call = calls[index] = _ToolCall(index)
            v = frag.arguments
            if v is not None:
                call.arguments.append(v)
            if not call.id:
                v = frag.id
                if v is not None:
                    call.id = v
            if not call.name:
                v = frag.name
                if v is not None:
                    call.name = v
            if call.type is None:
                call.type = frag.type

    def add_reasoning_details(self, blocks: Iterable[Any]) -> None:
        details = self.details
        if details is None:
            details = self.details = []
        for block in blocks:
            if isinstance(block, dict) and block.get("index") is not None:
                by_index = self.details_by_index
                if by_index is None:
                    by_index = self.details_by_index = {}
                key = block["index"]
                try:
                    merged = by_index.get(key)
                except TypeError:  # an unhashable index (garbage input): keep the block as is
                    details.append(block)
                    continue
                if merged is None:
                    merged = by_index[key] = _ReasoningBlock()
                    details.append(merged)
                merged.add(block)
            else:
                details.append(block)

    def add_logprobs(self, logprobs: Any) -> None:
        self.logprobs_seen = True
        if not isinstance(logprobs, dict):
            return
        v = logprobs.get("content")
        if isinstance(v, list):
            if self.logprobs_content is None:
                self.logprobs_content = list(v)
            else:
                self.logprobs_content.extend(v)
        v = logprobs.get("refusal")
        if isinstance(v, list):
            if self.logprobs_refusal is None:
                self.logprobs_refusal = list(v)
            else:
                self.logprobs_refusal.extend(v)

    def add_delta_extra(self, extra: dict[str, Any]) -> None:
        target = self.delta_extra
        if target is None:
            target = self.delta_extra = {}
        for k, v in extra.items():
            _merge_value(target, k, v, False)

    def build(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": self.role if self.role is not None else "assistant",
            "content": "".join(self.content) if self.content else None,
            "refusal": "".join(self.refusal) if self.refusal else None,
        }
        if self.tool_calls is not None:
            message["tool_calls"] = [
                self.tool_calls[i].build() for i in sorted(self.tool_calls)
            ]
        if self.reasoning:
            message["reasoning"] = "".join(self.reasoning)
        if self.reasoning_content:
            message["reasoning_content"] = "".join(self.reasoning_content)
        if self.details is not None:
            message["reasoning_details"] = [
                d.build() if d.__class__ is _ReasoningBlock else d for d in self.details
            ]
        if self.delta_extra:
            for k, v in self.delta_extra.items():
                message[k] = _build_value(v)
        logprobs = None
        if self.logprobs_seen:
            content, refusal = self.logprobs_content, self.logprobs_refusal
            logprobs = {
                "content": list(content) if content is not None else None,
                "refusal": list(refusal) if refusal is not None else None,
            }
        choice: dict[str, Any] = {
            "index": self.index,
            "message": message,
            "logprobs": logprobs,
            "finish_reason": self.finish_reason,
        }
        if self.choice_extra:
            choice.update(self.choice_extra)
        return choice


def _carries_choice(item: Any) -> bool:
    """True when an item without a choice index still carries per-choice data (a choice object
    that lacked its ``index`` key, e.g. ``"choices": [{"finish_reason": "error"}]``)."""
    return (
        item.finish_reason is not None
        or item.content is not None
        or item.role is not None
        or item.refusal is not None
        or item.reasoning is not None
        or item.reasoning_content is not None
        or item.tool_calls is not None
        or item.reasoning_details is not None
        or item.logprobs is not None
        or bool(item.choice_extra)
        or bool(item.delta_extra)
    )


class ChatCompletionAccumulator:
    """Fold ``ChatCompletionStream`` items into a non-streaming ``chat.completion`` dict.

    ::

        stream = ssewire.ChatCompletionStream()
        acc = ssewire.ChatCompletionAccumulator()
        for data in response.iter_bytes():
            acc.add_all(stream.feed(data))
        acc.add_all(stream.finish())
        completion = acc.result()
    """

    __slots__ = (
        "error",
        "errors",
        "_id",
        "_created",
        "_model",
        "_service_tier",
        "_system_fingerprint",
        "_usage",
        "_extra",
        "_head_missing",
        "_choices",
        "_sparse",
    )

    def __init__(self) -> None:
        #: The first server-reported error (``ErrorItem.kind == "stream_error"``), else ``None``.
        self.error: Any = None
        #: Every ``ErrorItem`` added (stream errors and malformed frames), in order.
        self.errors: list[Any] = []
        self._id: Optional[str] = None
        self._created: Optional[int] = None
        self._model: Optional[str] = None
        self._service_tier: Optional[str] = None
        self._system_fingerprint: Optional[str] = None
        self._usage: Optional[dict[str, Any]] = None
        self._extra: Optional[dict[str, Any]] = None
        self._head_missing = True
        self._choices: list[Optional[_Choice]] = []
        self._sparse: Optional[dict[int, _Choice]] = None

    def add(self, item: Any) -> None:
        """Add one ``ChatChunk``, ``ErrorItem`` or ``Event`` (the last is ignored)."""
        self.add_all((item,))

    def add_all(self, items: Iterable[Any]) -> None:
        """Add every item of ``items`` (e.g. the list one ``feed()`` returned).

        The loop body is the whole hot path, inline: no call per item. Nearly all of its cost is
        the ~15 attribute reads of each item."""
        chunk_class = _ChatChunk
        choices = self._choices
        last_index: Any = None  # the previous item's choice (n == 1: always the same one)
        choice: Any = None
        for item in items:
            if item.__class__ is not chunk_class:
                kind = getattr(item, "kind", None)
                if kind is not None:
                    self.errors.append(item)
                    if kind == "stream_error" and self.error is None:
                        self.error = item.error
                    continue
                if not hasattr(item, "delta_extra"):
                    continue  # an Event, or anything else that is not a chunk

            # Chunk-level fields, repeated on every item of one chunk.
            if self._head_missing:
                self._add_head(item)
            v = item.system_fingerprint
            if v is not None:
                self._system_fingerprint = v
            v = item.service_tier
            if v is not None:
                self._service_tier = v
            # The JSON-backed attributes are decoded on each read; `has_json` says whether any
            # is set, so plain content chunks skip all six reads.
            rare = item.has_json if item.__class__ is chunk_class else True
            if rare:
                v = item.usage
                if v is not None:
                    self._usage = v
                v = item.extra
                if v:
                    if self._extra is None:
                        self._extra = {}
                    _merge_non_null(self._extra, v)

            index = item.index
            if index is None:
                if not _carries_choice(item):
                    continue  # a chunk with `choices: []` (e.g. the usage-only last chunk)
                index = 0
            if index != last_index:
                if 0 <= index < len(choices):
                    choice = choices[index]
                    if choice is None:
                        choice = self._new_choice(index)
                else:
                    choice = self._new_choice(index)
                last_index = index

            v = item.content
            if v is not None:
                choice.content.append(v)
            if choice.role is None:
                choice.role = item.role
            v = item.refusal
            if v is not None:
                choice.refusal.append(v)
            v = item.reasoning
            if v is not None:
                choice.reasoning.append(v)
            v = item.reasoning_content
            if v is not None:
                choice.reasoning_content.append(v)
            v = item.tool_calls
            if v:  # an empty list streams no tool call
                choice.add_tool_calls(v)
            v = item.finish_reason
            if v is not None:
                choice.finish_reason = v
            if not rare:
                continue
            v = item.reasoning_details
            if v:  # OpenRouter sends `"reasoning_details": []` on plain content chunks
                choice.add_reasoning_details(v)
            v = item.logprobs
            if v is not None:
                choice.add_logprobs(v)
            v = item.choice_extra
            if v:
                if choice.choice_extra is None:
                    choice.choice_extra = {}
                _merge_non_null(choice.choice_extra, v)
            v = item.delta_extra
            if v:
                choice.add_delta_extra(v)

    def _add_head(self, item: Any) -> None:
        """id/created/model: the first non-empty value; an empty one ("" / 0) only stands in
        until a real one arrives (Azure OpenAI opens with a prompt-filter chunk whose id and
        model are "" and created 0)."""
        if not self._id:
            v = item.id
            if v is not None:
                self._id = v
        if not self._created:
            v = item.created
            if v is not None:
                self._created = v
        if not self._model:
            v = item.model
            if v is not None:
                self._model = v
        self._head_missing = not (self._id and self._created and self._model)

    def _new_choice(self, index: int) -> _Choice:
        """The state for a choice index not seen in the dense list (created if new)."""
        if 0 <= index < _DENSE_CHOICES:
            choices = self._choices
            if index >= len(choices):
                choices.extend([None] * (index + 1 - len(choices)))
            choice = choices[index]
            if choice is None:
                choice = choices[index] = _Choice(index)
            return choice
        sparse = self._sparse
        if sparse is None:
            sparse = self._sparse = {}
        choice = sparse.get(index)
        if choice is None:
            choice = sparse[index] = _Choice(index)
        return choice

    def result(self) -> dict[str, Any]:
        """The accumulated ``chat.completion`` dict (a new dict on every call)."""
        states = [c for c in self._choices if c is not None]
        if self._sparse:
            states.extend(self._sparse.values())
            states.sort(key=lambda c: c.index)
        out: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion",
            "created": self._created,
            "model": self._model,
            "service_tier": self._service_tier,
            "system_fingerprint": self._system_fingerprint,
            "choices": [c.build() for c in states],
            "usage": self._usage,
        }
        if self._extra:
            for k, v in self._extra.items():
                if k not in out and k not in _DROPPED_EXTRAS:
                    out[k] = v
        return out

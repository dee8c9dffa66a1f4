"""``ResponseAccumulator``: fold ``ResponsesStream`` items into the final ``response`` object.

Strategy: the Rust stream has framed the bytes and decoded every event into a flat
``ResponseEvent``; this layer never parses JSON. ``add()`` looks the event type up in a table
of handlers; text deltas are appended to per-part lists (kept in dicts by ``output_index`` and
``content_index`` / ``summary_index``) and joined once: in ``result()``, or when a ``.done``
event sends the full value, after which the list holds that one string (a later join of one
str is free). Consecutive text deltas of one part skip the lookups (the part is remembered).
Work is O(items + total fragment length); nothing grows by repeated concatenation.
``result()`` returns a deep copy, so the caller may modify it.

How the response is assembled:

- ``response.created`` / ``response.queued`` / ``response.in_progress``: the latest
  ``response`` snapshot is the base of the result (``id``, ``created_at``, ``model``,
  ``status``, ``usage``, ...).
- ``output`` items, in ``output_index`` order, each starting as its
  ``response.output_item.added`` item: message content parts (``response.content_part.added``)
  with ``output_text`` text joined from ``response.output_text.delta`` (annotations from the
  part and from ``response.output_text.annotation.added``, logprobs from the deltas) and
  ``refusal`` parts joined from ``response.refusal.delta``; ``function_call`` arguments (also
  ``mcp_call`` arguments, ``custom_tool_call`` input, ``code_interpreter_call`` code) joined
  from their deltas; ``reasoning`` summary parts from ``response.reasoning_summary_text.delta``
  and reasoning content from ``response.reasoning_text.delta``.
- A full value sent by the server wins over the pieces assembled before it, at every level:
  the text of a ``.done`` event over its deltas, the part of ``response.content_part.done``
  over the assembled part, the item of ``response.output_item.done`` over the assembled item,
  and the ``response`` of a terminal event (``response.completed`` / ``.incomplete`` /
  ``.failed``) over everything. When the full value's streamed text (or item type / id)
  differs from what was assembled, a human-readable note goes to ``mismatches`` (a debug aid,
  never an exception). A terminal response without ``output`` gets the assembled output.
- Without a terminal event, ``result()`` is the latest snapshot with the assembled ``output``
  and the status last seen.

Errors: ``errors`` lists every ``ErrorItem`` in arrival order, ``error`` is the ``StreamError``
of the first ``"stream_error"`` one (a top-level ``error`` event, or ``response.failed``, whose
terminal response is kept as the result with its ``error``). ``warnings`` holds notes about
events the accumulator had to interpret (e.g. a delta for an item never announced). Unknown
event types are ignored.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Optional

from ssewire import _core

_ResponseEvent: Any = getattr(_core, "ResponseEvent", None)

# Streamed string fields of an item (besides message / reasoning parts), by delta event type.
_FIELD_DELTAS = {
    "response.function_call_arguments.delta": "arguments",
    "response.mcp_call_arguments.delta": "arguments",
    "response.custom_tool_call_input.delta": "input",
    "response.code_interpreter_call_code.delta": "code",
}
_FIELD_DONES = {
    "response.function_call_arguments.done": "arguments",
    "response.mcp_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
    "response.code_interpreter_call_code.done": "code",
}

# The item type an event implies when it names an item that was never announced.
_IMPLIED_ITEM = {
    "arguments": "function_call",
    "input": "custom_tool_call",
    "code": "code_interpreter_call",
}

# Snapshot events: their response is the latest state of the response.
_SNAPSHOTS = frozenset(("response.created", "response.queued", "response.in_progress"))
_TERMINALS = frozenset(("response.completed", "response.incomplete", "response.failed"))

# Keys every result has (filled with these values when the server's object lacks them).
_RESPONSE_KEYS = (
    ("id", None), ("object", "response"), ("created_at", None), ("model", None),
    ("status", None), ("output", None), ("usage", None), ("error", None),
    ("incomplete_details", None),
)  # fmt: skip


def _short(text: Any) -> str:
    r = repr(text)
    return r if len(r) <= 60 else r[:57] + "..."


def _streamed_texts(item: Any) -> dict[str, Any]:
    """The streamed strings of an output item, by path (what a mismatch note compares)."""
    if not isinstance(item, dict):
        return {"item": item}
    out: dict[str, Any] = {}
    for key in ("content", "summary"):
        parts = item.get(key)
        if isinstance(parts, list):
            for i, part in enumerate(parts):
                if isinstance(part, dict):
                    for field in ("text", "refusal"):
                        if field in part:
                            out[f"{key}[{i}].{field}"] = part[field]
    for field in ("arguments", "input", "code"):
        value = item.get(field)
        if isinstance(value, str):
            out[field] = value
    return out


def _diff_items(where: str, assembled: Any, full: Any, source: str, notes: list[str]) -> None:
    """Adds a note for each difference between an assembled item and the server's full one."""
    if not isinstance(assembled, dict) or not isinstance(full, dict):
        if assembled != full:
            notes.append(f"{where}: assembled {_short(assembled)}, {source} sent {_short(full)}")
        return
    for key in ("type", "id"):
        a, b = assembled.get(key), full.get(key)
        if a != b:
            notes.append(f"{where}: {key} {_short(a)} assembled, {source} says {_short(b)}")
            return
    # Only what was assembled is compared: a part the stream never carried is not a mismatch.
    b_texts = _streamed_texts(full)
    for path, a in _streamed_texts(assembled).items():
        b = b_texts.get(path)
        if a != b:
            notes.append(
                f"{where} {path}: the deltas give {_short(a)}, {source} says {_short(b)}"
            )


class _Part:
    """One content / summary part: its announced part and its text fragments."""

    __slots__ = ("part", "field", "frags", "annotations", "logprobs", "done")

    def __init__(self, part: dict[str, Any], field: str) -> None:
        self.part = part
        self.field = field  # "text" or "refusal": where the fragments go
        self.frags: list[str] = []
        self.annotations: Optional[list[Any]] = None
        self.logprobs: Optional[list[Any]] = None
        self.done: Optional[dict[str, Any]] = None  # the part of a `.part.done` event

    def joined(self) -> str:
        """The part's text so far; leaves the fragments as one string (joined at most once)."""
        frags = self.frags
        prefix = self.part.get(self.field)
        if not frags:
            return prefix if isinstance(prefix, str) else ""
        if len(frags) > 1 or (isinstance(prefix, str) and prefix):
            text = (prefix if isinstance(prefix, str) else "") + "".join(frags)
            frags[:] = [text]
            self.part[self.field] = ""
            return text
        return frags[0]

    def set_full(self, text: str) -> None:
        """A `.done` event's full text: it replaces the fragments."""
        self.part[self.field] = ""
        self.frags[:] = [text]

    def assembled(self) -> dict[str, Any]:
        out = dict(self.part)
        out[self.field] = self.joined()
        for key in ("annotations", "logprobs"):
            added = self.annotations if key == "annotations" else self.logprobs
            if added is not None:
                earlier = out.get(key)
                out[key] = (list(earlier) if isinstance(earlier, list) else []) + added
        return out

    def build(self) -> dict[str, Any]:
        return dict(self.done) if self.done is not None else self.assembled()


class _Item:
    """One output item being assembled."""

    __slots__ = ("index", "item", "content", "summary", "fields", "done")

    def __init__(self, index: Any, item: dict[str, Any]) -> None:
        self.index = index
        self.item = item  # from `response.output_item.added`
        self.content: Optional[dict[Any, _Part]] = None  # message / reasoning content parts
        self.summary: Optional[dict[Any, _Part]] = None  # reasoning summary parts
        self.fields: Optional[dict[str, list[str]]] = None  # arguments / input / code fragments
        self.done: Optional[dict[str, Any]] = None  # the item of `response.output_item.done`

    def describe(self) -> str:
        return f"output[{self.index}] ({self.item.get('type')!s} {self.item.get('id')!s})"

    def assembled(self) -> dict[str, Any]:
        out = dict(self.item)
        for key in ("content", "summary"):
            parts = self.content if key == "content" else self.summary
            if parts:
                try:
                    order = sorted(parts)
                except TypeError:
                    order = list(parts)
                out[key] = [parts[i].build() for i in order]
        if self.fields:
            item = self.item
            for name, frags in self.fields.items():
                prefix = item.get(name)
                if len(frags) > 1 or (isinstance(prefix, str) and prefix):
                    frags[:] = [(prefix if isinstance(prefix, str) else "") + "".join(frags)]
                    item[name] = ""
                out[name] = frags[0]
        return out

    def build(self) -> dict[str, Any]:
        return dict(self.done) if self.done is not None else self.assembled()


def _part_for(item: _Item, kind: str, index: Any, field: str, part_type: str) -> _Part:
    """The content (``kind == "content"``) or summary part ``index`` of ``item`` (created)."""
    parts = item.content if kind == "content" else item.summary
    if parts is None:
        parts = {}
        if kind == "content":
            item.content = parts
        else:
            item.summary = parts
    part = parts.get(index)
    if part is None:
        part = parts[index] = _Part({"type": part_type, field: ""}, field)
        if part_type == "output_text":
            part.part["annotations"] = []
    return part


class ResponseAccumulator:
    """Fold ``ResponsesStream`` items into the final Responses API ``response`` dict.

    ::

        stream = ssewire.ResponsesStream()
        acc = ssewire.ResponseAccumulator()
        for data in response.iter_bytes():
            acc.add_all(stream.feed(data))
        acc.add_all(stream.finish())
        final = acc.result()
    """

    __slots__ = ("error", "errors", "warnings", "mismatches", "_base", "_final", "_items",
                 "_by_id", "_hot_key", "_hot_part")  # fmt: skip

    def __init__(self) -> None:
        #: The first server-reported error (``ErrorItem.kind == "stream_error"``), else ``None``.
        self.error: Any = None
        #: Every ``ErrorItem`` added (stream errors and malformed frames), in order.
        self.errors: list[Any] = []
        #: Notes about events that had to be interpreted (e.g. a delta for an unknown item).
        self.warnings: list[str] = []
        #: Notes where a full value sent by the server differs from the assembled deltas.
        self.mismatches: list[str] = []
        self._base: Optional[dict[str, Any]] = None  # the latest snapshot response
        self._final: Optional[dict[str, Any]] = None  # the terminal event's response
        self._items: dict[Any, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        # The part the last `response.output_text.delta` went to, by (output, content) index.
        self._hot_key: Any = None
        self._hot_part: Any = None

    def add_all(self, items: Iterable[Any]) -> None:
        """Add every item of ``items`` (e.g. the list one ``feed()`` returned).

        A plain text delta to the same part as the previous one (nearly every item of a stream)
        is handled inline, with that part kept in locals; everything else goes through
        ``add()``, after which the locals are refreshed from the accumulator's own state."""
        add = self.add
        event_class = _ResponseEvent
        hot = self._hot_key
        hot_output, hot_content = hot if hot is not None else (None, None)
        append = self._hot_part.frags.append if hot is not None else None
        for item in items:
            if (
                append is not None
                and item.__class__ is event_class
                and item.type == "response.output_text.delta"
                and item.output_index == hot_output
                and item.content_index == hot_content
                and not item.has_json  # no logprobs or other keys to place
            ):
                v = item.delta
                if v is not None:
                    append(v)
                continue
            add(item)
            hot = self._hot_key
            if hot is None:
                append = None
            else:
                hot_output, hot_content = hot
                append = self._hot_part.frags.append

    def add(self, item: Any) -> None:
        """Add one ``ResponseEvent`` or ``ErrorItem``."""
        if item.__class__ is not _ResponseEvent:
            kind = getattr(item, "kind", None)
            if kind is not None:
                self.errors.append(item)
                if kind == "stream_error" and self.error is None:
                    self.error = item.error
                return
            if not hasattr(item, "sequence_number"):
                return  # not a Responses event
        kind = item.type
        if kind == "response.output_text.delta":  # the hot path
            # Consecutive deltas go to the same part: remember it, skip the two lookups.
            key = (item.output_index, item.content_index)
            if key == self._hot_key:
                part = self._hot_part
            else:
                target = self._item(item, "message")
                if target is None:
                    return
                part = _part_for(target, "content", key[1], "text", "output_text")
                if key[0] is not None:
                    self._hot_key, self._hot_part = key, part
            v = item.delta
            if v is not None:
                part.frags.append(v)
            v = item.logprobs
            if v and isinstance(v, list):
                if part.logprobs is None:
                    part.logprobs = []
                part.logprobs.extend(v)
            return
        self._hot_key = None  # any other event may replace the part
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, item)
            return
        field = _FIELD_DELTAS.get(kind)
        if field is not None:
            self._field_delta(item, field)
            return
        field = _FIELD_DONES.get(kind)
        if field is not None:
            self._field_done(item, field, kind)
        # Other (unknown) event types carry nothing this accumulator knows how to place.

    # --- locating items and parts ------------------------------------------------------------

    def _item(self, ev: Any, implied_type: str) -> Optional[_Item]:
        """The item an event names (by ``output_index``, else ``item_id``); created, with a
        warning, when it was never announced."""
        index = ev.output_index
        if index is not None:
            found = self._items.get(index)
        else:
            item_id = ev.item_id
            found = self._by_id.get(item_id) if item_id is not None else None
            if found is None:
                self.warnings.append(f"{ev.type} names no output item; ignored")
                return None
            return found
        if found is None:
            item: dict[str, Any] = {"id": ev.item_id, "type": implied_type}
            if implied_type == "message":
                item.update(role="assistant", content=[])
            found = self._new_item(index, item)
            self.warnings.append(
                f"{ev.type} for output[{index}] before response.output_item.added; "
                f"assumed a {implied_type} item"
            )
        return found

    def _new_item(self, index: Any, item: dict[str, Any]) -> _Item:
        state = _Item(index, item)
        self._items[index] = state
        item_id = item.get("id")
        if isinstance(item_id, str):
            self._by_id[item_id] = state
        return state

    # --- handlers ----------------------------------------------------------------------------

    def _snapshot(self, ev: Any) -> None:
        response = ev.response
        if isinstance(response, dict):
            self._base = response

    def _terminal(self, ev: Any) -> None:
        response = ev.response
        if not isinstance(response, dict):
            self.warnings.append(f"{ev.type} without a response object")
            return
        self._final = response
        output = response.get("output")
        if output is None:
            return
        assembled = self._assembled_output()
        if not isinstance(output, list):
            self.mismatches.append(f"{ev.type}: output is {_short(output)}, not a list")
            return
        if assembled and len(output) != len(assembled):
            self.mismatches.append(
                f"{ev.type}: {len(output)} output items, {len(assembled)} assembled from the stream"
            )
        for i, (a, b) in enumerate(zip(assembled, output)):
            _diff_items(f"output[{i}]", a, b, ev.type, self.mismatches)

    def _item_added(self, ev: Any) -> None:
        item = ev.item
        if not isinstance(item, dict):
            return
        index = ev.output_index
        if index is None:
            index = len(self._items)
        if index in self._items:
            self.warnings.append(
                f"output[{index}]: a second response.output_item.added replaced the first"
            )
        self._new_item(index, item)

    def _item_done(self, ev: Any) -> None:
        item = ev.item
        if not isinstance(item, dict):
            return
        index = ev.output_index
        state = self._items.get(index) if index is not None else None
        if state is None:
            if index is None:
                index = len(self._items)
            state = self._new_item(index, item)
        else:
            _diff_items(
                f"output[{index}]", state.assembled(), item, "response.output_item.done",
                self.mismatches,
            )  # fmt: skip
        state.done = item

    def _content_part(self, ev: Any, kind: str, done: bool) -> None:
        part = ev.part
        target = self._item(ev, "message" if kind == "content" else "reasoning")
        if target is None or not isinstance(part, dict):
            return
        index = ev.content_index if kind == "content" else ev.summary_index
        field = "refusal" if part.get("type") == "refusal" else "text"
        parts = target.content if kind == "content" else target.summary
        state = parts.get(index) if parts is not None else None
        if not done:
            if state is not None and (state.frags or state.done is not None):
                return  # deltas came first; keep them
            if parts is None:
                parts = {}
                if kind == "content":
                    target.content = parts
                else:
                    target.summary = parts
            parts[index] = _Part(dict(part), field)
            return
        if state is None:
            state = _part_for(target, kind, index, field, str(part.get("type")))
        elif state.frags:
            where = f"{target.describe()} {kind}[{index}]"
            assembled = state.assembled()
            a, b = assembled.get(field), part.get(field)
            if a != b:
                self.mismatches.append(
                    f"{where}.{field}: the deltas give {_short(a)}, "
                    f"{ev.type} says {_short(b)}"
                )
        state.done = part

    def _text_delta(self, ev: Any, kind: str, field: str, part_type: str, implied: str) -> None:
        target = self._item(ev, implied)
        if target is None:
            return
        index = ev.content_index if kind == "content" else ev.summary_index
        part = _part_for(target, kind, index, field, part_type)
        v = ev.delta
        if v is not None:
            part.frags.append(v)

    def _text_done(self, ev: Any, kind: str, field: str, part_type: str, implied: str) -> None:
        target = self._item(ev, implied)
        if target is None:
            return
        full = ev.refusal if field == "refusal" else ev.text
        if full is None:
            return
        index = ev.content_index if kind == "content" else ev.summary_index
        part = _part_for(target, kind, index, field, part_type)
        if part.frags:
            joined = part.joined()
            if joined != full:
                self.mismatches.append(
                    f"{target.describe()} {kind}[{index}].{field}: the deltas give "
                    f"{_short(joined)}, {ev.type} says {_short(full)}"
                )
        part.set_full(full)

    def _annotation(self, ev: Any) -> None:
        target = self._item(ev, "message")
        raw = ev.raw
        if target is None or not isinstance(raw, dict) or "annotation" not in raw:
            return
        part = _part_for(target, "content", ev.content_index, "text", "output_text")
        if part.annotations is None:
            part.annotations = []
        part.annotations.append(raw["annotation"])

    def _field_delta(self, ev: Any, field: str) -> None:
        target = self._item(ev, _IMPLIED_ITEM[field])
        v = ev.delta
        if target is None or v is None:
            return
        fields = target.fields
        if fields is None:
            fields = target.fields = {}
        frags = fields.get(field)
        if frags is None:
            fields[field] = [v]
        else:
            frags.append(v)

    def _field_done(self, ev: Any, field: str, kind: str) -> None:
        target = self._item(ev, _IMPLIED_ITEM[field])
        if target is None:
            return
        if field == "arguments":
            full = ev.arguments
        else:
            raw = ev.raw
            full = raw.get(field) if isinstance(raw, dict) else None
        if not isinstance(full, str):
            return
        fields = target.fields
        if fields is None:
            fields = target.fields = {}
        frags = fields.get(field)
        if frags:
            prefix = target.item.get(field)
            joined = (prefix if isinstance(prefix, str) else "") + "".join(frags)
            if joined != full:
                self.mismatches.append(
                    f"{target.describe()} {field}: the deltas give {_short(joined)}, "
                    f"{kind} says {_short(full)}"
                )
        target.item[field] = ""
        fields[field] = [full]

    # --- result ------------------------------------------------------------------------------

    def _assembled_output(self) -> list[dict[str, Any]]:
        items = self._items
        try:
            order = sorted(items)
        except TypeError:
            order = list(items)
        return [items[i].build() for i in order]

    def result(self) -> dict[str, Any]:
        """The accumulated ``response`` dict (a new, independent dict on every call)."""
        final = self._final
        if final is not None:
            out = dict(final)
            if out.get("output") is None:
                out["output"] = self._assembled_output()
        else:
            out = dict(self._base) if self._base is not None else {}
            if self._items or out.get("output") is None:
                out["output"] = self._assembled_output()
        for key, default in _RESPONSE_KEYS:
            if key not in out:
                out[key] = default
        # Server-sent objects (the terminal response, `.done` items) are kept as they came and
        # shared between calls; the copy lets the caller modify the result freely.
        return copy.deepcopy(out)


def _handler(fn: Callable[..., None], *args: Any) -> Callable[[ResponseAccumulator, Any], None]:
    return lambda acc, ev: fn(acc, ev, *args)


_HANDLERS: dict[str, Callable[[ResponseAccumulator, Any], None]] = {
    "response.created": ResponseAccumulator._snapshot,
    "response.queued": ResponseAccumulator._snapshot,
    "response.in_progress": ResponseAccumulator._snapshot,
    "response.completed": ResponseAccumulator._terminal,
    "response.incomplete": ResponseAccumulator._terminal,
    "response.failed": ResponseAccumulator._terminal,
    "response.output_item.added": ResponseAccumulator._item_added,
    "response.output_item.done": ResponseAccumulator._item_done,
    "response.content_part.added": _handler(ResponseAccumulator._content_part, "content", False),
    "response.content_part.done": _handler(ResponseAccumulator._content_part, "content", True),
    "response.reasoning_summary_part.added": _handler(
        ResponseAccumulator._content_part, "summary", False
    ),
    "response.reasoning_summary_part.done": _handler(
        ResponseAccumulator._content_part, "summary", True
    ),
    "response.output_text.done": _handler(
        ResponseAccumulator._text_done, "content", "text", "output_text", "message"
    ),
    "response.refusal.delta": _handler(
        ResponseAccumulator._text_delta, "content", "refusal", "refusal", "message"
    ),
    "response.refusal.done": _handler(
        ResponseAccumulator._text_done, "content", "refusal", "refusal", "message"
    ),
    "response.reasoning_text.delta": _handler(
        ResponseAccumulator._text_delta, "content", "text", "reasoning_text", "reasoning"
    ),
    "response.reasoning_text.done": _handler(
        ResponseAccumulator._text_done, "content", "text", "reasoning_text", "reasoning"
    ),
    "response.reasoning_summary_text.delta": _handler(
        ResponseAccumulator._text_delta, "summary", "text", "summary_text", "reasoning"
    ),
    "response.reasoning_summary_text.done": _handler(
        ResponseAccumulator._text_done, "summary", "text", "summary_text", "reasoning"
    ),
    "response.output_text.annotation.added": ResponseAccumulator._annotation,
}

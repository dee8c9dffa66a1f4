//! The Cohere writer: the neutral calls as Cohere v2 chat stream events (what the cohere SDK's
//! `chat_stream` reads): `message-start` first (with the empty lists Cohere sends), a text or
//! thinking block as `content-start` / `content-delta` / `content-end` numbered in the order
//! opened, a tool call as `tool-call-start` (id, name, arguments `""`) / `tool-call-delta`
//! pieces / `tool-call-end` numbered apart, and at `end()` `message-end` (finish reason and
//! usage: `billed_units` and `tokens` both the counts read, `cached_tokens`) then
//! `data: [DONE]`. An error is a `message-end` with `finish_reason: "ERROR"` and its
//! message, then `[DONE]`; nothing follows it. Carried across calls: the blocks by key, the
//! stop and the usage. The target fold is Cohere's own, fed the events as written.

use super::{push_str, push_u64, Failure, Key, Kind, Meta, Notes, Sink, Stop, Usage, Writer};
use crate::fold::cohere::CohereFold;
use crate::fold::{take_better, IntMap, Out};

/// A block as written: its Cohere index, whether it is a tool call, and whether it is open.
#[derive(Debug, Clone, Copy)]
struct Block {
    index: u64,
    call: bool,
    thinking: bool,
    open: bool,
}

/// Writes a Cohere v2 chat stream.
#[derive(Debug, Default)]
pub struct CohereWriter {
    out: String,
    fold: CohereFold,
    notes: Notes,
    id: Option<String>,
    started: bool,
    blocks: IntMap<Block>,
    parts: u64,
    calls: u64,
    stop: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl CohereWriter {
    /// Writes one event of kind `kind` (`body`: its members after `type`, without braces, or
    /// empty) and folds it.
    fn event(&mut self, kind: &str, body: &str) {
        let mut j = String::with_capacity(body.len() + 40);
        j.push_str(r#"{"type":"#);
        push_str(&mut j, kind);
        if !body.is_empty() {
            j.push(',');
            j.push_str(body);
        }
        j.push('}');
        if let Ok(e) = crate::dialect::cohere::decode(&j) {
            self.fold.add(&e, kind.as_bytes());
        }
        self.out.push_str("event: ");
        self.out.push_str(kind);
        self.out.push_str("\ndata: ");
        self.out.push_str(&j);
        self.out.push_str("\n\n");
    }

    /// `message-start`, once, before anything else (its `id` first, as Cohere writes it).
    fn start(&mut self) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        let mut j = String::from(r#"{"id":"#);
        push_str(&mut j, self.id.as_deref().unwrap_or_default());
        j.push_str(r#","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}"#);
        if let Ok(e) = crate::dialect::cohere::decode(&j) {
            self.fold.add(&e, b"message-start");
        }
        self.out.push_str("event: message-start\ndata: ");
        self.out.push_str(&j);
        self.out.push_str("\n\n");
    }

    /// The block of `key`, opened as a content part of `thinking` or a call when new.
    fn block(&mut self, key: Key, kind: Kind<'_>) -> Block {
        if let Some(b) = self.blocks.get(key as i64) {
            return *b;
        }
        self.start();
        let call = matches!(kind, Kind::Tool { .. });
        let index = if call {
            &mut self.calls
        } else {
            &mut self.parts
        };
        let block = Block {
            index: *index,
            call,
            thinking: matches!(kind, Kind::Reasoning),
            open: true,
        };
        *index += 1;
        self.blocks.insert(key as i64, block);
        let mut b = String::from(r#""index":"#);
        push_u64(&mut b, block.index);
        match kind {
            Kind::Tool { id, name } => {
                b.push_str(r#","delta":{"message":{"tool_calls":{"id":"#);
                push_str(&mut b, id);
                b.push_str(r#","type":"function","function":{"name":"#);
                push_str(&mut b, name);
                b.push_str(r#","arguments":""}}}}"#);
                self.event("tool-call-start", &b);
            }
            Kind::Reasoning => {
                b.push_str(r#","delta":{"message":{"content":{"type":"thinking","thinking":""}}}"#);
                self.event("content-start", &b);
            }
            Kind::Text | Kind::Refusal => {
                b.push_str(r#","delta":{"message":{"content":{"type":"text","text":""}}}"#);
                self.event("content-start", &b);
            }
        }
        block
    }

    /// `message-end` (with `body`'s members) and `[DONE]`; nothing follows.
    fn finish(&mut self, body: &str) {
        self.start();
        let open: Vec<Block> = self
            .blocks
            .sorted()
            .into_iter()
            .filter(|(_, b)| b.open)
            .map(|(_, b)| *b)
            .collect();
        for b in open {
            self.end_block(b);
        }
        self.event("message-end", body);
        self.out.push_str("data: [DONE]\n\n");
        self.done = true;
    }

    fn end_block(&mut self, b: Block) {
        let mut body = String::from(r#""index":"#);
        push_u64(&mut body, b.index);
        self.event(
            if b.call {
                "tool-call-end"
            } else {
                "content-end"
            },
            &body,
        );
    }
}

impl Sink for CohereWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        if !self.started {
            take_better(&mut self.id, meta.id);
        }
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if !self.done {
            self.block(key, kind);
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done || text.is_empty() {
            return;
        }
        let b = self.block(key, Kind::Text);
        if !b.open {
            self.notes
                .add("a piece for a block already closed (Cohere cannot reopen one; skipped)");
            return;
        }
        let mut body = String::from(r#""index":"#);
        push_u64(&mut body, b.index);
        if b.call {
            body.push_str(r#","delta":{"message":{"tool_calls":{"function":{"arguments":"#);
            push_str(&mut body, text);
            body.push_str("}}}}");
            self.event("tool-call-delta", &body);
        } else {
            body.push_str(r#","delta":{"message":{"content":{"#);
            body.push_str(if b.thinking {
                r#""thinking":"#
            } else {
                r#""text":"#
            });
            push_str(&mut body, text);
            body.push_str("}}}");
            self.event("content-delta", &body);
        }
    }

    fn signature(&mut self, _: Key, _: &str) {
        self.notes
            .add("reasoning signatures (Cohere has no place for them)");
    }

    fn redacted(&mut self, _: Key, _: &str) {
        self.notes
            .add("redacted or encrypted reasoning (Cohere has no place for it)");
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        let Some(b) = self.blocks.get_mut(key as i64) else {
            return;
        };
        if !b.open {
            return;
        }
        b.open = false;
        let b = *b;
        self.end_block(b);
    }

    fn stop(&mut self, stop: Stop<'_>) {
        let reason = match stop {
            Stop::EndTurn => "COMPLETE",
            Stop::MaxTokens => "MAX_TOKENS",
            Stop::StopSequence(_) => "STOP_SEQUENCE",
            Stop::ToolUse => "TOOL_CALL",
            Stop::Filtered => {
                self.notes
                    .add("a filtered answer's stop reason (Cohere has none; written as COMPLETE)");
                "COMPLETE"
            }
            // Cohere's own reasons cross as they are.
            Stop::Other(other @ ("TIMEOUT" | "ERROR_TOXIC" | "ERROR_LIMIT" | "USER_CANCEL")) => {
                other
            }
            Stop::Other(other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (Cohere has no such finish_reason; written as COMPLETE)"
                ));
                "COMPLETE"
            }
        };
        self.stop = Some(reason.to_owned());
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut b = String::from(r#""delta":{"finish_reason":"ERROR","error":"#);
        push_str(&mut b, failure.message);
        if let Some(t) = failure.type_ {
            b.push_str(r#","error_type":"#);
            push_str(&mut b, t);
        }
        b.push_str(r#","usage":{}}"#);
        self.finish(&b);
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        let mut b = String::from(r#""delta":{"finish_reason":"#);
        push_str(&mut b, self.stop.as_deref().unwrap_or("COMPLETE"));
        if let Some(u) = &self.usage {
            let said_input = u.input.is_some() || u.uncached.is_some();
            let mut counts = String::from("{");
            if said_input {
                counts.push_str(r#""input_tokens":"#);
                push_u64(&mut counts, u.total_input());
            }
            if let Some(output) = u.output {
                if counts.len() > 1 {
                    counts.push(',');
                }
                counts.push_str(r#""output_tokens":"#);
                push_u64(&mut counts, output);
            }
            counts.push('}');
            b.push_str(r#","usage":{"billed_units":"#);
            b.push_str(&counts);
            b.push_str(r#","tokens":"#);
            b.push_str(&counts);
            if let Some(cached) = u.cache_read {
                b.push_str(r#","cached_tokens":"#);
                push_u64(&mut b, cached);
            }
            b.push('}');
        }
        b.push('}');
        self.finish(&b);
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

impl Writer for CohereWriter {
    fn output(&self) -> &[u8] {
        self.out.as_bytes()
    }

    fn clear(&mut self) {
        self.out.clear();
    }

    fn reserve(&mut self, additional: usize) {
        self.out.reserve(additional);
    }

    fn notes(&self) -> &[String] {
        self.notes.all()
    }

    fn result(&mut self) -> Out {
        self.fold.result()
    }
}

/// This dialect's output rules, for one event `v` written (`super::check`): every event has
/// its kind as `type`, `message-start` comes first, a delta's part or call was started and
/// not ended, nothing follows `message-end`.
pub(super) fn check(
    inv: &mut super::check::Invariants,
    event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    let kind = v.get("type").and_then(serde_json::Value::as_str);
    if kind != Some(event) {
        return Err(format!(
            "an event whose type is not its name {event:?}: {v:.200}"
        ));
    }
    if inv.message_stopped {
        return Err(format!("an event after message-end: {v:.200}"));
    }
    if inv.events == 1 && event != "message-start" {
        return Err(format!(
            "a stream that does not open with message-start: {v:.200}"
        ));
    }
    let index = v
        .get("index")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(-1);
    let (call, part) = (
        event.starts_with("tool-call-"),
        event.starts_with("content-"),
    );
    let slot = (i64::from(call), index);
    let ended = index.saturating_mul(2).saturating_add(i64::from(call));
    if event.ends_with("-start") && (call || part) {
        if !inv.calls.insert(slot) {
            return Err(format!("a part or call started twice: {v}"));
        }
    } else if (call || part) && (!inv.calls.contains(&slot) || inv.finished.contains(&ended)) {
        return Err(format!("a piece of a part or call not open: {v}"));
    }
    if event.ends_with("-end") && (call || part) {
        inv.finished.insert(ended);
    }
    if event == "message-end" {
        inv.message_stopped = true;
    }
    Ok(())
}

/// A client's error body (`translate_error`): Cohere's `{"message": "..."}`.
pub(super) fn error_body(
    _status: u16,
    _class: crate::translate::error::Class,
    message: &str,
    _code: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({ "message": message })
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<CohereWriter>::default()
}

//! The Anthropic Messages writer: `message_start`, one content block open at a time,
//! `message_delta` and `message_stop` at the end.

use super::*;
use crate::dialect::messages;
use crate::fold::messages::EventView as MessagesView;

impl TargetFold for MessagesFold {
    fn written(&mut self, event: Option<&str>, json: &str) {
        let Ok(ev) = messages::decode(json) else {
            return;
        };
        let kind = ev.kind_of(event.unwrap_or("message").as_bytes());
        if let messages::Read::Fold(v) = ev.read(&kind, json) {
            self.add(&v);
        }
    }

    fn delta(&mut self, run: &Run) {
        let text = Some(run.text.as_str());
        let is = |f: Field| if run.field == f { text } else { None };
        self.add(&MessagesView {
            kind: "content_block_delta",
            index: Some(run.index),
            delta_type: Some(run.kind),
            text: is(Field::Text),
            partial_json: is(Field::Arguments),
            thinking: is(Field::Reasoning),
            ..MessagesView::default()
        });
    }

    fn result(&mut self) -> Out {
        MessagesFold::result(self)
    }
}

// --- Messages ----------------------------------------------------------------------------------

/// Messages' `stop_reason` values: a reason from another dialect that is none of them is
/// written as `end_turn` (and noted).
const MESSAGES_STOP_REASONS: &[&str] = &[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MBlock {
    Text,
    Thinking,
    Tool,
}

/// Writes an Anthropic Messages stream.
#[derive(Debug, Default)]
pub struct MessagesWriter {
    out: Written<MessagesFold>,
    head: Head,
    started: bool,
    blocks: Blocks<MBlock>,
    stop: Option<(String, Option<String>)>,
    usage: Usage,
    done: bool,
    notes: Notes,
}

impl MessagesWriter {
    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        let mut j = String::with_capacity(256);
        j.push_str(r#"{"type":"message_start","message":{"id":"#);
        push_str(&mut j, self.head.id.as_deref().unwrap_or(""));
        j.push_str(r#","type":"message","role":"assistant","model":"#);
        push_str(&mut j, self.head.model.as_deref().unwrap_or(""));
        j.push_str(r#","content":[],"stop_reason":null,"stop_sequence":null,"usage":"#);
        // What is known now (a Messages upstream's message_start; 0 otherwise): the real
        // figures follow in message_delta, where the SDKs read them.
        self.push_usage(&mut j, 0);
        j.push_str("}}");
        self.out.event(Some("message_start"), &j);
    }

    fn push_usage(&self, j: &mut String, output: u64) {
        let u = &self.usage;
        j.push_str(r#"{"input_tokens":"#);
        push_u64(j, u.uncached_input());
        j.push_str(r#","cache_creation_input_tokens":"#);
        push_u64(j, u.cache_write.unwrap_or(0));
        j.push_str(r#","cache_read_input_tokens":"#);
        push_u64(j, u.cache_read.unwrap_or(0));
        j.push_str(r#","output_tokens":"#);
        push_u64(j, output);
        j.push('}');
    }

    fn close_open(&mut self) {
        if let Some(at) = self.blocks.open {
            self.stop_block(at);
        }
    }

    fn stop_block(&mut self, at: usize) {
        let mut j = String::from(r#"{"type":"content_block_stop","index":"#);
        push_num(&mut j, at);
        j.push('}');
        self.out.event(Some("content_block_stop"), &j);
        self.blocks.mark_closed(at);
    }

    fn start_block(&mut self, key: Key, block: MBlock, body: &str) -> usize {
        self.start();
        self.close_open();
        let at = self.blocks.push(key, block);
        let mut j = String::from(r#"{"type":"content_block_start","index":"#);
        push_num(&mut j, at);
        j.push_str(r#","content_block":"#);
        j.push_str(body);
        j.push('}');
        self.out.event(Some("content_block_start"), &j);
        at
    }

    fn block_delta(&mut self, at: usize, kind: &'static str, field: &str, text: &str) {
        if !self.blocks.is_open(at) {
            self.notes
                .add("a delta for a block the target had already closed (written under its index)");
        }
        // `kind` and `field` are this writer's own names: nothing to escape.
        let o = &mut self.out;
        o.open(Some("content_block_delta"));
        o.buf.push_str(r#"{"type":"content_block_delta","index":"#);
        push_num(&mut o.buf, at);
        o.buf.push_str(r#","delta":{"type":""#);
        o.buf.push_str(kind);
        o.buf.push_str(r#"",""#);
        o.buf.push_str(field);
        o.buf.push_str(r#"":"#);
        push_str(&mut o.buf, text);
        o.buf.push_str("}}");
        o.close();
        let field = match field {
            "text" => Field::Text,
            "thinking" => Field::Reasoning,
            "partial_json" => Field::Arguments,
            _ => {
                // A signature is set, not appended: folded on its own.
                self.out.fold_run();
                self.out.fold.add(&MessagesView {
                    kind: "content_block_delta",
                    index: Some(at as i64),
                    delta_type: Some(kind),
                    signature: Some(text),
                    ..MessagesView::default()
                });
                return;
            }
        };
        let place = Place {
            kind,
            index: at as i64,
            field,
            id: "",
            model: "",
            created: 0,
        };
        self.out.delta(place, text);
    }
}

impl Sink for MessagesWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done || self.blocks.find(key).is_some() {
            return;
        }
        match kind {
            Kind::Text => {
                self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#);
            }
            Kind::Refusal => {
                self.notes
                    .add("a refusal (Messages has no refusal block: written as text)");
                self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#);
            }
            Kind::Reasoning => {
                self.start_block(
                    key,
                    MBlock::Thinking,
                    r#"{"type":"thinking","thinking":"","signature":""}"#,
                );
            }
            Kind::Tool { id, name } => {
                let mut body = String::from(r#"{"type":"tool_use","id":"#);
                push_str(&mut body, id);
                body.push_str(r#","name":"#);
                push_str(&mut body, name);
                body.push_str(r#","input":{}}"#);
                self.start_block(key, MBlock::Tool, &body);
            }
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let at = match self.blocks.find(key) {
            Some(at) => at,
            None => self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#),
        };
        let (kind, field) = match self.blocks.get(at) {
            Some(MBlock::Thinking) => ("thinking_delta", "thinking"),
            Some(MBlock::Tool) => ("input_json_delta", "partial_json"),
            _ => ("text_delta", "text"),
        };
        self.block_delta(at, kind, field, text);
    }

    fn signature(&mut self, key: Key, signature: &str) {
        if self.done {
            return;
        }
        match self.blocks.find(key) {
            Some(at) if self.blocks.get(at) == Some(&MBlock::Thinking) => {
                self.block_delta(at, "signature_delta", "signature", signature)
            }
            _ => self
                .notes
                .add("a reasoning signature outside a thinking block"),
        }
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.done {
            return;
        }
        let mut body = String::from(r#"{"type":"redacted_thinking","data":"#);
        push_str(&mut body, data);
        body.push('}');
        let at = self.start_block(key, MBlock::Thinking, &body);
        self.stop_block(at);
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(at) = self.blocks.find(key).filter(|at| self.blocks.is_open(*at)) {
            self.stop_block(at);
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        let sequence = match stop {
            Stop::StopSequence(s) => s.map(str::to_owned),
            _ => None,
        };
        let reason = match stop {
            Stop::Other(other) if !MESSAGES_STOP_REASONS.contains(&other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (Messages has no such stop_reason; written as \"end_turn\")"
                ));
                "end_turn"
            }
            stop => stop.to_messages(),
        };
        self.stop = Some((reason.to_owned(), sequence));
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"type":"error","error":{"type":"#);
        push_str(&mut j, failure.type_.unwrap_or("api_error"));
        j.push_str(r#","message":"#);
        push_str(&mut j, failure.message);
        j.push_str("}}");
        self.out.event(Some("error"), &j);
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.start();
        self.close_open();
        let tool = self.blocks.all.iter().any(|(_, b, _)| *b == MBlock::Tool);
        let (reason, sequence) = self.stop.clone().unwrap_or_else(|| {
            let reason = if tool { "tool_use" } else { "end_turn" };
            (reason.to_owned(), None)
        });
        let mut j = String::from(r#"{"type":"message_delta","delta":{"stop_reason":"#);
        push_str(&mut j, &reason);
        j.push_str(r#","stop_sequence":"#);
        push_opt(&mut j, sequence.as_deref());
        j.push_str(r#"},"usage":"#);
        self.push_usage(&mut j, self.usage.output.unwrap_or(0));
        j.push('}');
        self.out.event(Some("message_delta"), &j);
        self.out
            .event(Some("message_stop"), r#"{"type":"message_stop"}"#);
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(MessagesWriter);

/// A client's error body (`translate_error`): Anthropic's, its class as `error.type`.
pub(super) fn error_body(
    _status: u16,
    class: crate::translate::error::Class,
    message: &str,
    _code: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({
        "type": "error",
        "error": {"type": class.anthropic(), "message": message},
    })
}

/// This dialect's output rules, for one event `v` written (`super::check`).
pub(super) fn check(
    inv: &mut super::check::Invariants,
    _event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    let kind = v
        .get("type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let index = v.get("index").and_then(serde_json::Value::as_i64);
    if (inv.events == 1) != (kind == "message_start") {
        return Err(format!("{kind} as event {}", inv.events));
    }
    match kind {
        "content_block_start" => {
            if let Some(open) = inv.open {
                return Err(format!("block {index:?} started while {open} is open"));
            }
            if index != Some(inv.next_block) {
                return Err(format!(
                    "block {index:?} started where {} was due",
                    inv.next_block
                ));
            }
            inv.open = index;
            inv.next_block += 1;
        }
        "content_block_delta" if !index.is_some_and(|i| (0..inv.next_block).contains(&i)) => {
            return Err(format!("a delta of block {index:?}, never started"));
        }
        "content_block_stop" => {
            if index.is_none() || inv.open != index {
                return Err(format!(
                    "block {index:?} stopped while {:?} is open",
                    inv.open
                ));
            }
            inv.open = None;
        }
        "message_delta" if inv.open.is_some() => {
            return Err(format!("message_delta with block {:?} open", inv.open));
        }
        "message_stop" => inv.ended = true,
        _ => {}
    }
    Ok(())
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<MessagesWriter>::default()
}

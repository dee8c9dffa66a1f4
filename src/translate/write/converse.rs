//! The Bedrock Converse writer: `messageStart`, the blocks by `contentBlockIndex` (a tool
//! block opens with `contentBlockStart`; text and reasoning blocks with their first delta),
//! `contentBlockStop`, then `messageStop` and `metadata` (usage) at the end. The events are
//! written as `event: <type>` / `data: <payload>` text here, which the translation's output
//! turns into event stream messages with their CRCs (`translate::eventstream_out`); an
//! upstream error becomes an exception message there.

use super::*;
use crate::dialect::converse;
use crate::fold::converse::ConverseFold;

impl TargetFold for ConverseFold {
    fn written(&mut self, event: Option<&str>, json: &str) {
        if let Ok(e) = converse::decode(json) {
            self.add(event.unwrap_or_default(), &e);
        }
    }

    fn delta(&mut self, _run: &Run) {}

    fn result(&mut self) -> Out {
        ConverseFold::result(self)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CBlock {
    Text,
    Reasoning,
    Tool,
}

/// Writes a Bedrock Converse stream.
#[derive(Debug, Default)]
pub struct ConverseWriter {
    out: Written<ConverseFold>,
    started: bool,
    blocks: Blocks<CBlock>,
    stop: Option<&'static str>,
    usage: Usage,
    done: bool,
    notes: Notes,
}

impl ConverseWriter {
    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        self.out
            .event(Some("messageStart"), r#"{"role":"assistant"}"#);
    }

    /// The block of `key`, made (as `kind`) when there is none.
    fn block(&mut self, key: Key, kind: CBlock) -> usize {
        self.start();
        match self.blocks.find(key) {
            Some(at) => at,
            None => self.blocks.push(key, kind),
        }
    }

    fn block_delta(&mut self, at: usize, delta: &str) {
        let mut j = String::with_capacity(delta.len() + 48);
        j.push_str(r#"{"contentBlockIndex":"#);
        push_num(&mut j, at);
        j.push_str(r#","delta":"#);
        j.push_str(delta);
        j.push('}');
        self.out.event(Some("contentBlockDelta"), &j);
    }

    fn stop_block(&mut self, at: usize) {
        let mut j = String::from(r#"{"contentBlockIndex":"#);
        push_num(&mut j, at);
        j.push('}');
        self.out.event(Some("contentBlockStop"), &j);
        self.blocks.mark_closed(at);
    }
}

impl Sink for ConverseWriter {
    fn meta(&mut self, _meta: Meta<'_>) {
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done || self.blocks.find(key).is_some() {
            return;
        }
        match kind {
            Kind::Text => {
                self.block(key, CBlock::Text);
            }
            Kind::Refusal => {
                self.notes
                    .add("a refusal (Converse has no refusal block: written as text)");
                self.block(key, CBlock::Text);
            }
            Kind::Reasoning => {
                self.block(key, CBlock::Reasoning);
            }
            Kind::Tool { id, name } => {
                let at = self.block(key, CBlock::Tool);
                let mut j = String::from(r#"{"contentBlockIndex":"#);
                push_num(&mut j, at);
                j.push_str(r#","start":{"toolUse":{"toolUseId":"#);
                push_str(&mut j, id);
                j.push_str(r#","name":"#);
                push_str(&mut j, name);
                j.push_str("}}}");
                self.out.event(Some("contentBlockStart"), &j);
            }
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done || text.is_empty() {
            return;
        }
        let at = self.block(key, CBlock::Text);
        let mut d = String::with_capacity(text.len() + 40);
        match self.blocks.get(at) {
            Some(CBlock::Tool) => {
                d.push_str(r#"{"toolUse":{"input":"#);
                push_str(&mut d, text);
                d.push_str("}}");
            }
            Some(CBlock::Reasoning) => {
                d.push_str(r#"{"reasoningContent":{"text":"#);
                push_str(&mut d, text);
                d.push_str("}}");
            }
            _ => {
                d.push_str(r#"{"text":"#);
                push_str(&mut d, text);
                d.push('}');
            }
        }
        self.block_delta(at, &d);
    }

    fn signature(&mut self, key: Key, signature: &str) {
        if self.done {
            return;
        }
        let at = self.block(key, CBlock::Reasoning);
        let mut d = String::from(r#"{"reasoningContent":{"signature":"#);
        push_str(&mut d, signature);
        d.push_str("}}");
        self.block_delta(at, &d);
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.done {
            return;
        }
        // A blob on the wire: standard base64, padded (botocore decodes it so, dropping any
        // other character). Base64 in either alphabet is its bytes (an OpenAI token through
        // OpenRouter is URL-safe: passed as it came, botocore read other bytes); an
        // upstream's opaque text that is not base64 is carried as the base64 of its bytes.
        let b64 = match crate::base64::decode(data) {
            Some(bytes) => crate::base64::encode(&bytes),
            None => crate::base64::encode(data.as_bytes()),
        };
        // A block of its own: Bedrock's reasoning block holds either text or redacted
        // content, and each redacted piece is whole (a second one, or one after the
        // reasoning text of the same key, was written into a block already stopped).
        self.start();
        let at = self.blocks.push_alone(key, CBlock::Reasoning);
        let mut d = String::from(r#"{"reasoningContent":{"redactedContent":"#);
        push_str(&mut d, &b64);
        d.push_str("}}");
        self.block_delta(at, &d);
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
        self.stop = Some(match (stop.to_converse(), stop) {
            (Some(reason), _) => reason,
            (None, other) => {
                self.notes.add(&format!(
                    "stop reason {:?} (Converse has no such stopReason; written as \"end_turn\")",
                    other.to_messages()
                ));
                "end_turn"
            }
        });
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"error":{"type":"#);
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
        let open: Vec<usize> = (0..self.blocks.all.len())
            .filter(|at| self.blocks.is_open(*at))
            .collect();
        for at in open {
            self.stop_block(at);
        }
        let tool = self.blocks.all.iter().any(|(_, b, _)| *b == CBlock::Tool);
        let reason = self
            .stop
            .unwrap_or(if tool { "tool_use" } else { "end_turn" });
        let mut j = String::from(r#"{"stopReason":"#);
        push_str(&mut j, reason);
        j.push('}');
        self.out.event(Some("messageStop"), &j);
        let u = &self.usage;
        let (input, output) = (u.uncached_input(), u.output.unwrap_or(0));
        let (read, write) = (u.cache_read.unwrap_or(0), u.cache_write.unwrap_or(0));
        let mut j = String::from(r#"{"usage":{"inputTokens":"#);
        push_u64(&mut j, input);
        j.push_str(r#","outputTokens":"#);
        push_u64(&mut j, output);
        j.push_str(r#","totalTokens":"#);
        push_u64(
            &mut j,
            input
                .saturating_add(output)
                .saturating_add(read)
                .saturating_add(write),
        );
        if read > 0 || write > 0 {
            j.push_str(r#","cacheReadInputTokens":"#);
            push_u64(&mut j, read);
            j.push_str(r#","cacheWriteInputTokens":"#);
            push_u64(&mut j, write);
        }
        j.push_str(r#"},"metrics":{"latencyMs":0}}"#);
        self.out.event(Some("metadata"), &j);
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(ConverseWriter);

/// A client's error body (`translate_error`): Bedrock's, its class in the
/// `x-amzn-ErrorType` header instead.
pub(super) fn error_body(
    _status: u16,
    _class: crate::translate::error::Class,
    message: &str,
    _code: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({"message": message})
}

/// This dialect's output rules, for one event `v` written (`super::check`).
pub(super) fn check(
    inv: &mut super::check::Invariants,
    event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    let index = v
        .get("contentBlockIndex")
        .and_then(serde_json::Value::as_i64);
    if (inv.events == 1) != (event == "messageStart") {
        return Err(format!("{event} as event {}", inv.events));
    }
    if inv.message_stopped && event != "metadata" {
        return Err(format!("{event} after messageStop"));
    }
    let block = || index.ok_or_else(|| format!("{event} without its contentBlockIndex"));
    match event {
        "contentBlockStart" => {
            let at = block()?;
            if !inv.items.insert(at) {
                return Err(format!("block {at} started twice"));
            }
        }
        "contentBlockDelta" => {
            let at = block()?;
            if inv.stopped.contains(&at) {
                return Err(format!("a delta of block {at} after its stop"));
            }
            inv.items.insert(at); // text and reasoning blocks start with their delta
        }
        "contentBlockStop" => {
            let at = block()?;
            if !inv.items.contains(&at) || !inv.stopped.insert(at) {
                return Err(format!("block {at} stopped while it is not open"));
            }
        }
        "messageStop" => inv.message_stopped = true,
        "metadata" => inv.ended = true,
        _ => {}
    }
    Ok(())
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<ConverseWriter>::default()
}

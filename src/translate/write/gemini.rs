//! The Gemini writer: `generateContent` stream chunks (`data:` frames of
//! `GenerateContentResponse` JSON, Google's field names), as `:streamGenerateContent?alt=sse`
//! sends them.
//!
//! - Text and reasoning go out as they come, one chunk per delta: a part `{"text": ...}`, with
//!   `"thought": true` for reasoning. A reasoning signature is a part of its own,
//!   `{"text": "", "thought": true, "thoughtSignature": ...}`, after the reasoning it signs.
//! - A tool call goes out whole when its block closes (Gemini has no argument deltas):
//!   `{"functionCall": {"id", "name", "args"}}` with the source's call id; arguments that are
//!   not a JSON object are written as `{}` and noted.
//! - The last chunk has the `finishReason` (`STOP`, `MAX_TOKENS`, `SAFETY`; a reason Gemini has
//!   no name for, such as Anthropic's `pause_turn`, is `STOP`, noted) and `usageMetadata`: `promptTokenCount` (every prompt
//!   token, cached ones included), `cachedContentTokenCount`, `candidatesTokenCount` (output
//!   without reasoning), `thoughtsTokenCount` (reasoning), `totalTokenCount` (their sum).
//! - An upstream error is `{"error": {"code", "message", "status"}}`, Google's error form, and
//!   nothing follows it.
//!
//! Every chunk names `modelVersion` and `responseId` once the upstream has said them. Gemini
//! has no terminal marker: the stream ends with the chunk that has the finish reason.

use super::{push_compact, take_better, Blocks, Field, Place, Run, TargetFold, Writer, Written};
use crate::dialect::gemini::{Candidate, Chunk, Part};
use crate::fold::gemini::GeminiFold;
use crate::fold::Out;
use crate::json::read::Str;
use crate::json::write::{push_num, push_str};
use crate::translate::{Failure, Key, Kind, Meta, Notes, Sink, Stop, Usage};
use std::borrow::Cow;

impl TargetFold for GeminiFold {
    fn written(&mut self, _: Option<&str>, json: &str) {
        if let Ok(chunk) = crate::dialect::gemini::decode(json) {
            if chunk.error.is_none() {
                self.add(&chunk);
            }
        }
    }

    fn delta(&mut self, run: &Run) {
        let part = Part {
            text: Some(Str(Cow::Borrowed(run.text.as_str()))),
            thought: run.field == Field::Reasoning,
            ..Part::default()
        };
        let chunk = Chunk {
            candidates: vec![Candidate {
                index: Some(0),
                has_content: true,
                role: Some(Str(Cow::Borrowed("model"))),
                parts: vec![part],
                ..Candidate::default()
            }],
            model_version: (!run.model.is_empty())
                .then_some(Str(Cow::Borrowed(run.model.as_str()))),
            response_id: (!run.id.is_empty()).then_some(Str(Cow::Borrowed(run.id.as_str()))),
            has_candidates: true,
            ..Chunk::default()
        };
        self.add(&chunk);
    }

    fn result(&mut self) -> Out {
        GeminiFold::result(self)
    }
}

#[derive(Debug)]
enum GBlock {
    Text,
    Reasoning,
    Refusal,
    /// A tool call: its id, name and the argument text so far (written whole at its close).
    Tool {
        id: String,
        name: String,
        args: String,
    },
}

/// Writes a Gemini `streamGenerateContent` stream.
#[derive(Debug, Default)]
pub struct GeminiWriter {
    out: Written<GeminiFold>,
    id: Option<String>,
    model: Option<String>,
    /// A chunk's closing after its parts: `],"role":"model"},"index":0}]`, the response's
    /// identity and the closing brace, written once per identity, not once per chunk.
    tail: String,
    blocks: Blocks<GBlock>,
    /// The tool blocks in the order they opened, and how many of them are written: a call
    /// goes out when it and every call opened before it have closed (the source's order).
    calls: Vec<usize>,
    calls_written: usize,
    stop: Option<&'static str>,
    usage: Option<Usage>,
    done: bool,
    notes: Notes,
}

/// Gemini's `finishReason` for a neutral stop reason (`None`: Gemini has no name for it; the
/// writer then ends the turn normally, `STOP`, as the other writers do).
fn finish_reason(stop: Stop<'_>) -> Option<&'static str> {
    match stop {
        Stop::EndTurn | Stop::StopSequence(_) | Stop::ToolUse => Some("STOP"),
        Stop::MaxTokens => Some("MAX_TOKENS"),
        Stop::Filtered => Some("SAFETY"),
        // Gemini's own (from a Gemini source) is kept; another dialect's has no name here.
        Stop::Other(other) => FINISH_REASONS.iter().find(|r| **r == other).copied(),
    }
}

/// Gemini's `finishReason` values.
const FINISH_REASONS: &[&str] = &[
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MODEL_ARMOR",
    "NO_IMAGE",
];

/// Google's error code and status for an upstream error's type or code.
fn error_status(failure: &Failure<'_>) -> (u16, &'static str) {
    crate::translate::error::classify(500, failure.type_, failure.code).google()
}

/// Whether `s` is base64 (standard or URL-safe alphabet, padding optional, a length an
/// encoding has): what google-genai reads a `thoughtSignature` as.
fn is_base64(s: &str) -> bool {
    !s.is_empty() && crate::base64::decode(s).is_some()
}

impl GeminiWriter {
    /// Appends the chunk's opening, up to and including `"parts":[`.
    fn open_chunk(j: &mut String) {
        j.push_str(r#"{"candidates":[{"content":{"parts":["#);
    }

    /// Closes a chunk opened by [`GeminiWriter::open_chunk`] after its parts: the role, the
    /// finish reason if any, the index, then the response's identity and usage.
    fn close_chunk(&self, j: &mut String, finish: Option<&str>, usage: Option<&Usage>) {
        j.push_str(r#"],"role":"model"}"#);
        if let Some(reason) = finish {
            j.push_str(r#","finishReason":"#);
            push_str(j, reason);
        }
        j.push_str(r#","index":0}]"#);
        if let Some(u) = usage {
            let prompt = u.total_input();
            let thoughts = u.reasoning.unwrap_or(0);
            let candidates = u.output.unwrap_or(0).saturating_sub(thoughts);
            j.push_str(r#","usageMetadata":{"promptTokenCount":"#);
            push_num(j, prompt);
            j.push_str(r#","candidatesTokenCount":"#);
            push_num(j, candidates);
            if let Some(cached) = u.cache_read.filter(|&n| n > 0) {
                j.push_str(r#","cachedContentTokenCount":"#);
                push_num(j, cached);
            }
            if thoughts > 0 {
                j.push_str(r#","thoughtsTokenCount":"#);
                push_num(j, thoughts);
            }
            j.push_str(r#","totalTokenCount":"#);
            push_num(
                j,
                prompt.saturating_add(candidates).saturating_add(thoughts),
            );
            j.push('}');
        }
        self.push_identity(j);
        j.push('}');
    }

    /// The closing of a chunk with no finish reason and no usage (see `tail`).
    fn plain_tail(&self) -> String {
        let mut j = String::from(r#"],"role":"model"},"index":0}]"#);
        self.push_identity(&mut j);
        j.push('}');
        j
    }

    fn push_identity(&self, j: &mut String) {
        if let Some(model) = self.model.as_deref().filter(|m| !m.is_empty()) {
            j.push_str(r#","modelVersion":"#);
            push_str(j, model);
        }
        if let Some(id) = self.id.as_deref().filter(|i| !i.is_empty()) {
            j.push_str(r#","responseId":"#);
            push_str(j, id);
        }
    }

    /// One chunk whose only part is `part` (a JSON object).
    fn part_chunk(&mut self, part: &str) {
        let mut j = String::with_capacity(part.len() + 120);
        Self::open_chunk(&mut j);
        j.push_str(part);
        self.close_chunk(&mut j, None, None);
        self.out.event(None, &j);
    }

    fn block(&mut self, key: Key, kind: Kind<'_>) -> usize {
        if let Some(at) = self.blocks.find(key) {
            return at;
        }
        let block = match kind {
            Kind::Text => GBlock::Text,
            Kind::Reasoning => GBlock::Reasoning,
            Kind::Refusal => {
                self.notes
                    .add("refusals (Gemini has no refusal part; written as text)");
                GBlock::Refusal
            }
            Kind::Tool { id, name } => GBlock::Tool {
                id: id.to_owned(),
                name: name.to_owned(),
                args: String::new(),
            },
        };
        let tool = matches!(block, GBlock::Tool { .. });
        let at = self.blocks.push(key, block);
        if tool {
            self.calls.push(at);
        }
        at
    }

    /// Writes the calls that are due: every closed one not preceded by an open one (`all`:
    /// every one, at the end), in the order they opened.
    fn write_calls(&mut self, all: bool) {
        while let Some(&at) = self.calls.get(self.calls_written) {
            if !all && self.blocks.is_open(at) {
                return;
            }
            self.blocks.mark_closed(at);
            self.calls_written += 1;
            self.write_call(at);
        }
    }

    /// Writes the tool call at `at` whole.
    fn write_call(&mut self, at: usize) {
        let Some(GBlock::Tool { id, name, args }) = self.blocks.get(at) else {
            return;
        };
        let trimmed = args.trim();
        let args_ok = trimmed.is_empty()
            || (trimmed.starts_with('{')
                && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok());
        let mut part = String::with_capacity(args.len() + id.len() + name.len() + 60);
        part.push_str(r#"{"functionCall":{"#);
        if !id.is_empty() {
            part.push_str(r#""id":"#);
            push_str(&mut part, id);
            part.push(',');
        }
        part.push_str(r#""name":"#);
        push_str(&mut part, name);
        part.push_str(r#","args":"#);
        // Arguments cut off (the upstream ended inside them): the object as far as it was
        // read, by the partial JSON rules (what `partial_arguments()` gives).
        let partial = (!args_ok && trimmed.starts_with('{'))
            .then(|| {
                let mut p = crate::json::partial::PartialJson::new();
                p.feed_str(trimmed).ok()?;
                p.value_json().filter(|v| v.starts_with('{'))
            })
            .flatten();
        if args_ok && !trimmed.is_empty() {
            push_compact(&mut part, trimmed); // one line: the frame's `data:` line
        } else if let Some(value) = &partial {
            push_compact(&mut part, value);
        } else {
            part.push_str("{}");
        }
        part.push_str("}}");
        if partial.is_some() {
            self.notes.add(
                "tool call arguments cut off before their end (written as far as they were read)",
            );
        } else if !args_ok {
            self.notes.add(
                "tool call arguments that are not a JSON object (Gemini's args is one; written as {})",
            );
        }
        self.part_chunk(&part);
    }
}

impl Sink for GeminiWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        let changed = take_better(&mut self.id, meta.id) | take_better(&mut self.model, meta.model);
        if changed {
            self.tail.clear();
        }
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if !self.done {
            self.block(key, kind);
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let at = self.block(key, Kind::Text);
        let field = match self.blocks.get_mut(at) {
            Some(GBlock::Tool { args, .. }) => {
                args.push_str(text);
                return;
            }
            Some(GBlock::Reasoning) => Field::Reasoning,
            _ => Field::Text,
        };
        if self.tail.is_empty() {
            self.tail = self.plain_tail();
        }
        let o = &mut self.out;
        o.open(None);
        Self::open_chunk(&mut o.buf);
        o.buf.push_str(r#"{"text":"#);
        push_str(&mut o.buf, text);
        if field == Field::Reasoning {
            o.buf.push_str(r#","thought":true"#);
        }
        o.buf.push('}');
        o.buf.push_str(&self.tail);
        o.close();
        let place = Place {
            kind: "",
            index: 0,
            field,
            id: self.id.as_deref().unwrap_or(""),
            model: self.model.as_deref().unwrap_or(""),
            created: 0,
        };
        self.out.delta(place, text);
    }

    fn signature(&mut self, key: Key, signature: &str) {
        if self.done {
            return;
        }
        if !is_base64(signature) {
            self.notes.add(
                "reasoning signatures that are not base64 (Gemini's thoughtSignature is bytes)",
            );
            return;
        }
        self.block(key, Kind::Reasoning);
        let mut part = String::from(r#"{"text":"","thought":true,"thoughtSignature":"#);
        push_str(&mut part, signature);
        part.push('}');
        self.part_chunk(&part);
    }

    fn redacted(&mut self, _: Key, _: &str) {
        self.notes
            .add("redacted or encrypted reasoning (Gemini has no place for it)");
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(at) = self.blocks.find(key) {
            self.blocks.mark_closed(at);
            if matches!(self.blocks.get(at), Some(GBlock::Tool { .. })) {
                self.write_calls(false);
            }
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        self.stop = Some(finish_reason(stop).unwrap_or_else(|| {
            if let Stop::Other(other) = stop {
                self.notes.add(&format!(
                    "stop reason {other:?} (Gemini has no such finishReason; written as STOP)"
                ));
            }
            "STOP"
        }));
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let (code, status) = error_status(&failure);
        let mut j = String::from(r#"{"error":{"code":"#);
        push_num(&mut j, u32::from(code));
        j.push_str(r#","message":"#);
        push_str(&mut j, failure.message);
        j.push_str(r#","status":"#);
        push_str(&mut j, status);
        j.push_str("}}");
        self.out.event(None, &j);
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.write_calls(true);
        let reason = self.stop.unwrap_or("STOP");
        if let Some(u) = &self.usage {
            if u.cache_write.is_some_and(|n| n > 0) {
                self.notes.add(
                    "cache_creation_input_tokens (Gemini usage has no field for them; they are in promptTokenCount)",
                );
            }
        }
        let mut j = String::with_capacity(300);
        Self::open_chunk(&mut j);
        let usage = self.usage;
        self.close_chunk(&mut j, Some(reason), usage.as_ref());
        self.out.event(None, &j);
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(GeminiWriter);

/// A client's error body (`translate_error`): Google's, with the HTTP code and its status.
pub(super) fn error_body(
    status: u16,
    class: crate::translate::error::Class,
    message: &str,
    _code: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({"error": {
        "code": status,
        "message": message,
        "status": class.google().1,
    }})
}

/// This dialect's output rules, for one event `v` written (`super::check`).
pub(super) fn check(
    inv: &mut super::check::Invariants,
    _event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    let candidates = v.get("candidates").and_then(serde_json::Value::as_array);
    if candidates.is_none() && v.get("promptFeedback").is_none() {
        return Err(format!("a chunk with no candidates: {v:.200}"));
    }
    for (at, c) in candidates.into_iter().flatten().enumerate() {
        let index = c
            .get("index")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(at as i64);
        let parts = c
            .pointer("/content/parts")
            .and_then(serde_json::Value::as_array);
        let parts = parts.map(Vec::as_slice).unwrap_or_default();
        if !parts.is_empty() && inv.finished.contains(&index) {
            return Err(format!("candidate {index} goes on after its finishReason"));
        }
        for part in parts {
            if let Some(call) = part.get("functionCall") {
                if !call.get("args").is_some_and(serde_json::Value::is_object) {
                    return Err(format!("a functionCall whose args is no object: {call}"));
                }
            }
        }
        if c.get("finishReason").is_some_and(|r| !r.is_null()) {
            inv.finished.insert(index);
        }
    }
    Ok(())
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<GeminiWriter>::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_json_keeps_strings() {
        let mut out = String::new();
        push_compact(&mut out, "{\n  \"a b\": \"x \\\" y\",\r\n \"c\": [1, 2]\n}");
        assert_eq!(out, r#"{"a b":"x \" y","c":[1,2]}"#);
    }

    #[test]
    fn base64_signatures_only() {
        assert!(is_base64("EqQBCkgIARABGAIiQH9v+/8="));
        assert!(!is_base64("gAAAAABo-fake-encrypted-reasoning=="));
        assert!(!is_base64("not base64!"));
        assert!(!is_base64(""));
    }

    #[test]
    fn foreign_stop_reasons_are_other() {
        assert_eq!(finish_reason(Stop::Other("pause_turn")), None);
        assert_eq!(finish_reason(Stop::Other("RECITATION")), Some("RECITATION"));
        assert_eq!(finish_reason(Stop::ToolUse), Some("STOP"));
    }
}

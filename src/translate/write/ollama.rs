//! The Ollama writer: the neutral calls as Ollama's `/api/chat` NDJSON lines, one JSON object
//! a line (what ollama-python's `ChatResponse` reads). Each text or thinking delta is a line
//! of its own; a tool call is held until it closes and written whole in one line, its
//! arguments a JSON object (Ollama sends them so); the terminal line (`done: true`,
//! `done_reason`, the counts) goes out at `end()`. An error is an `{"error": "..."}` line, and
//! nothing follows it. Carried across calls: the model, the open tool calls, the stop and the
//! usage. The target fold is Ollama's own, fed the lines as written.

use super::{push_str, Failure, Key, Kind, Meta, Notes, Sink, Stop, Usage, Writer};
use crate::fold::ollama::OllamaFold;
use crate::fold::{IntMap, Out};

/// A tool call held until it closes.
#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// Writes an Ollama chat stream.
#[derive(Debug, Default)]
pub struct OllamaWriter {
    out: String,
    fold: OllamaFold,
    notes: Notes,
    model: Option<String>,
    /// `created_at` of every line: the upstream's creation time, when it gave one.
    created_at: Option<String>,
    /// Whether each block opened is thinking, by key (as `i64`).
    thinking: IntMap<bool>,
    /// The tool calls held until they close, by key (`None` once written).
    calls: IntMap<Option<Call>>,
    stop: Option<&'static str>,
    called: bool,
    usage: Option<Usage>,
    done: bool,
    /// Whether the client is `/api/generate`'s: lines carry `response` (and `thinking`) at the
    /// top level, and there are no tool calls.
    generate: bool,
}

impl OllamaWriter {
    /// Writes one line (`body`: the members after `model`, without braces) and folds it.
    fn line(&mut self, body: &str) {
        let mut j = String::with_capacity(body.len() + 40);
        j.push_str(r#"{"model":"#);
        push_str(&mut j, self.model.as_deref().unwrap_or("unknown-model"));
        j.push(',');
        if let Some(at) = &self.created_at {
            j.push_str(r#""created_at":"#);
            push_str(&mut j, at);
            j.push(',');
        }
        j.push_str(body);
        j.push('}');
        if let Ok(line) = crate::dialect::ollama::decode(&j) {
            self.fold.add(&line);
        }
        self.out.push_str(&j);
        self.out.push('\n');
    }

    fn message(&mut self, field: &str, text: &str) {
        if self.generate {
            let mut b = String::from(r#""response":"#);
            if field == "content" {
                push_str(&mut b, text);
            } else {
                b.push_str(r#""","thinking":"#);
                push_str(&mut b, text);
            }
            b.push_str(r#","done":false"#);
            self.line(&b);
            return;
        }
        let mut b = String::from(r#""message":{"role":"assistant","content":"#);
        if field == "content" {
            push_str(&mut b, text);
        } else {
            b.push_str(r#""","thinking":"#);
            push_str(&mut b, text);
        }
        b.push_str(r#"},"done":false"#);
        self.line(&b);
    }

    fn write_call(&mut self, call: Call) {
        if self.generate {
            self.notes
                .add("tool calls (Ollama's /api/generate answers text only)");
            return;
        }
        // The arguments as sent (key order and numbers kept), on one line.
        let trimmed = call.arguments.trim();
        let is_object = trimmed.starts_with('{')
            && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok();
        let mut arguments = String::with_capacity(trimmed.len());
        if is_object {
            super::push_compact(&mut arguments, trimmed);
        } else {
            if !trimmed.is_empty() {
                self.notes.add(
                    "tool call arguments that are not a JSON object (Ollama's are one; written as {})",
                );
            }
            arguments.push_str("{}");
        }
        let mut b = String::from(r#""message":{"role":"assistant","content":"","tool_calls":[{"#);
        if !call.id.is_empty() {
            b.push_str(r#""id":"#);
            push_str(&mut b, &call.id);
            b.push(',');
        }
        b.push_str(r#""function":{"name":"#);
        push_str(&mut b, &call.name);
        b.push_str(r#","arguments":"#);
        b.push_str(&arguments);
        b.push_str(r#"}}]},"done":false"#);
        self.line(&b);
        self.called = true;
    }
}

/// Unix seconds as RFC 3339 in UTC (`2025-08-06T10:21:07Z`), as Ollama's `created_at` reads;
/// `None` before 1970 or past 9999.
fn rfc3339(secs: i64) -> Option<String> {
    if !(0..253_402_300_800).contains(&secs) {
        return None;
    }
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date of a day count (Howard Hinnant's algorithm, for days since 1970-01-01).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    ))
}

impl Sink for OllamaWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        if self.model.is_none() {
            self.model = meta.model.map(str::to_owned);
        }
        if self.created_at.is_none() {
            self.created_at = meta.created.and_then(rfc3339);
        }
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done {
            return;
        }
        match kind {
            Kind::Reasoning => self.thinking.insert(key as i64, true),
            Kind::Tool { id, name } if !self.calls.contains(key as i64) => {
                let call = Call {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: String::new(),
                };
                self.calls.insert(key as i64, Some(call));
            }
            _ => {}
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done || text.is_empty() {
            return;
        }
        if let Some(slot) = self.calls.get_mut(key as i64) {
            if let Some(call) = slot {
                call.arguments.push_str(text);
            }
            return;
        }
        let field = if self.thinking.get(key as i64) == Some(&true) {
            "thinking"
        } else {
            "content"
        };
        self.message(field, text);
    }

    fn signature(&mut self, _: Key, _: &str) {
        self.notes
            .add("reasoning signatures (Ollama has no place for them)");
    }

    fn redacted(&mut self, _: Key, _: &str) {
        self.notes
            .add("redacted or encrypted reasoning (Ollama has no place for it)");
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(call) = self.calls.get_mut(key as i64).and_then(Option::take) {
            self.write_call(call);
        }
        if let Some(thinking) = self.thinking.get_mut(key as i64) {
            *thinking = false;
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        self.stop = Some(match stop {
            Stop::MaxTokens => "length",
            Stop::EndTurn | Stop::StopSequence(_) | Stop::ToolUse => "stop",
            Stop::Filtered => {
                self.notes
                    .add("a filtered answer's stop reason (Ollama has none; written as stop)");
                "stop"
            }
            Stop::Other(other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (Ollama has no such done_reason; written as stop)"
                ));
                "stop"
            }
        });
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"error":"#);
        push_str(&mut j, failure.message);
        j.push('}');
        self.out.push_str(&j);
        self.out.push('\n');
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        let held: Vec<i64> = self
            .calls
            .sorted()
            .into_iter()
            .filter(|(_, c)| c.is_some())
            .map(|(k, _)| k)
            .collect();
        for key in held {
            if let Some(call) = self.calls.get_mut(key).and_then(Option::take) {
                self.write_call(call);
            }
        }
        let mut b = String::from(if self.generate {
            r#""response":"","done":true,"done_reason":"#
        } else {
            r#""message":{"role":"assistant","content":""},"done":true,"done_reason":"#
        });
        push_str(&mut b, self.stop.unwrap_or("stop"));
        if let Some(u) = &self.usage {
            let said_input = u.input.is_some() || u.uncached.is_some();
            if said_input {
                b.push_str(r#","prompt_eval_count":"#);
                b.push_str(&u.total_input().to_string());
            }
            if let Some(output) = u.output {
                b.push_str(r#","eval_count":"#);
                b.push_str(&output.to_string());
            }
        }
        self.line(&b);
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

impl Writer for OllamaWriter {
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

    fn set_endpoint(&mut self, path: &str) {
        self.generate = path.ends_with("/api/generate");
    }
}

/// This dialect's output rules, for one line `v` written (`super::check`): every line has
/// `model` and `done`, or is an error; a tool call's arguments are an object; nothing follows
/// the terminal line.
pub(super) fn check(
    inv: &mut super::check::Invariants,
    _event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    if v.get("model").is_none() || v.get("done").is_none() {
        return Err(format!("a line without model or done: {v:.200}"));
    }
    let calls = v
        .pointer("/message/tool_calls")
        .and_then(serde_json::Value::as_array);
    for call in calls.into_iter().flatten() {
        if !call
            .pointer("/function/arguments")
            .is_some_and(serde_json::Value::is_object)
        {
            return Err(format!("a tool call whose arguments is no object: {call}"));
        }
    }
    if v.get("done") == Some(&serde_json::Value::Bool(true)) {
        inv.ended = true;
    }
    Ok(())
}

/// A client's error body (`translate_error`): Ollama's `{"error": "..."}`.
pub(super) fn error_body(
    _status: u16,
    _class: crate::translate::error::Class,
    message: &str,
    _code: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<OllamaWriter>::default()
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn unix_seconds_as_rfc3339() {
        assert_eq!(rfc3339(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            rfc3339(1_754_475_667).as_deref(),
            Some("2025-08-06T10:21:07Z")
        );
        assert_eq!(
            rfc3339(951_782_400).as_deref(),
            Some("2000-02-29T00:00:00Z")
        );
        assert_eq!(rfc3339(-1), None);
    }
}

//! The OpenAI Responses writer: `response.created` / `in_progress`, items and parts added,
//! streamed and done, `sequence_number` from 0 without gaps, the final response.

use super::*;
use crate::dialect::responses;
use crate::fold::responses::{EventView as ResponsesView, ResponsesFold};

impl TargetFold for ResponsesFold {
    fn written(&mut self, event: Option<&str>, json: &str) {
        let Ok(ev) = responses::decode(json) else {
            return;
        };
        let kind = ev.kind_of(event.unwrap_or("message").as_bytes());
        if let responses::Read::Fold(v, _) = ev.read(&kind, json) {
            self.add(&v);
        }
    }

    fn delta(&mut self, run: &Run) {
        self.add(&responses_delta(
            run.kind, run.index, run.field, &run.id, &run.text,
        ));
    }

    fn result(&mut self) -> Out {
        ResponsesFold::result(self)
    }
}

/// The Responses view of deltas to one place (as the target's stream reads them).
fn responses_delta<'a>(
    kind: &'a str,
    index: i64,
    field: Field,
    item_id: &'a str,
    text: &'a str,
) -> ResponsesView<'a> {
    let (content_index, summary_index) = match field {
        Field::Text | Field::Refusal => (Some(0), None),
        Field::Reasoning => (None, Some(0)),
        Field::Arguments => (None, None),
    };
    ResponsesView {
        kind,
        output_index: Some(index),
        content_index,
        summary_index,
        item_id: Some(item_id),
        delta: Some(text),
        ..ResponsesView::default()
    }
}

// --- Responses ----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RKind {
    Text,
    Refusal,
    Reasoning,
    Tool,
}

impl RKind {
    /// The text this kind of item streams.
    fn field(self) -> Field {
        match self {
            RKind::Text => Field::Text,
            RKind::Refusal => Field::Refusal,
            RKind::Reasoning => Field::Reasoning,
            RKind::Tool => Field::Arguments,
        }
    }

    /// The event that streams this kind of item's text.
    fn delta_event(self) -> &'static str {
        match self {
            RKind::Text => "response.output_text.delta",
            RKind::Refusal => "response.refusal.delta",
            RKind::Reasoning => "response.reasoning_summary_text.delta",
            RKind::Tool => "response.function_call_arguments.delta",
        }
    }
}

/// One output item of a Responses target, kept whole for its `.done` events and the final
/// response.
#[derive(Debug)]
struct RItem {
    kind: RKind,
    id: String,
    /// The text, refusal, summary text or arguments written so far.
    text: String,
    call_id: String,
    name: String,
    /// A reasoning item's `encrypted_content` (a Messages signature or redacted data).
    encrypted: Option<String>,
    /// The wire bytes of this item's delta events up to the delta's text (`event:` line,
    /// `data: {"type":...,"delta":`): the same for every delta, written once.
    delta_head: String,
    /// The item as its `response.output_item.done` wrote it, once written.
    done_json: Option<String>,
}

/// Writes an OpenAI Responses stream (`response.*` events numbered from 0).
#[derive(Debug, Default)]
pub struct ResponsesWriter {
    /// Its fold does not check the full values against the deltas: both are ours.
    out: Written<ResponsesFold>,
    head: Head,
    /// The response id, fixed by the first event (clients check it never changes).
    id: Option<String>,
    started: bool,
    seq: u64,
    items: Blocks<RItem>,
    stop: Option<(Stop<'static>, Option<String>)>,
    usage: Option<Usage>,
    done: bool,
    notes: Notes,
    /// The terminal event's kind and its response object, written but folded only when the
    /// result is asked for (nothing is written after it; a gateway that never asks pays
    /// nothing for reading the whole response back).
    terminal: Option<(String, String)>,
    /// Deltas written to one item but not folded yet: the item's place and where in its
    /// `text` they start. Folded as one delta of that tail when anything else is written or
    /// the result is asked for: the item already holds the text, so a delta is not copied a
    /// third time into a [`Run`] nor compared with one (together ~5% of translating
    /// Messages to Responses).
    pending: Option<(usize, usize)>,
}

/// Finish reasons (Gemini's) that end a turn without a valid answer: a Responses target
/// writes them as `response.failed`, naming the reason (the other targets' vocabularies have
/// no failed turn: there they are the end of turn, noted).
const FAILED_TURNS: &[&str] = &[
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "OTHER",
    "LANGUAGE",
    "NO_IMAGE",
    "IMAGE_OTHER",
];

impl ResponsesWriter {
    /// A writer whose fold does not compare the terminal object with the deltas (it writes
    /// both from the same calls).
    pub fn new() -> Self {
        ResponsesWriter {
            out: Written {
                fold: ResponsesFold::unchecked(),
                ..Written::default()
            },
            ..ResponsesWriter::default()
        }
    }
}

impl ResponsesWriter {
    /// Appends one event: `{"type": kind, <fields>, "sequence_number": n}`.
    fn event(&mut self, kind: &str, fields: &str) {
        self.settle();
        let j = self.event_json(kind, fields);
        self.out.event(Some(kind), &j);
    }

    /// Folds the pending deltas and the terminal event, if any were written and not folded
    /// yet.
    fn settle(&mut self) {
        self.fold_pending();
        if let Some((kind, response)) = self.terminal.take() {
            self.out.fold_run();
            self.out.fold.add(&ResponsesView {
                kind: &kind,
                response: Some(&response),
                ..ResponsesView::default()
            });
        }
    }

    /// Folds the deltas written to one item since the last fold, as one delta of their text.
    fn fold_pending(&mut self) {
        let Some((at, start)) = self.pending.take() else {
            return;
        };
        let Some(item) = self.items.get(at) else {
            return;
        };
        let text = item.text.get(start..).unwrap_or_default();
        let (kind, field) = (item.kind.delta_event(), item.kind.field());
        self.out
            .fold
            .add(&responses_delta(kind, at as i64, field, &item.id, text));
    }

    /// The JSON of one event (`sequence_number` taken).
    fn event_json(&mut self, kind: &str, fields: &str) -> String {
        let mut j = String::with_capacity(fields.len() + kind.len() + 48);
        j.push_str(r#"{"type":"#);
        push_str(&mut j, kind);
        if !fields.is_empty() {
            j.push(',');
            j.push_str(fields);
        }
        j.push_str(r#","sequence_number":"#);
        push_u64(&mut j, self.seq);
        j.push('}');
        self.seq += 1;
        j
    }

    /// Writes event `kind` whose `fields` hold one whole object (an item or the response)
    /// from `object_at` to their end, and folds it from that object's own JSON: the event is
    /// not decoded back, which for the item's `.done` and the terminal response (the whole
    /// text again) was the writer's largest cost.
    fn event_with_object(
        &mut self,
        kind: &str,
        output_index: Option<usize>,
        fields: &str,
        object_at: usize,
    ) {
        self.settle();
        let j = self.event_json(kind, fields);
        self.out.repeat(Some(kind), &j);
        let object = fields.get(object_at..).unwrap_or_default();
        let Some(at) = output_index else {
            self.terminal = Some((kind.to_owned(), object.to_owned()));
            return;
        };
        self.out.fold_run();
        self.out.fold.add(&ResponsesView {
            kind,
            output_index: Some(at as i64),
            item: Some(object),
            ..ResponsesView::default()
        });
    }

    fn response_id(&mut self) -> String {
        let head = &self.head;
        self.id
            .get_or_insert_with(|| match head.id.as_deref() {
                Some(id) if !id.is_empty() => id.to_owned(),
                _ => "resp_ssewire".to_owned(),
            })
            .clone()
    }

    /// The response object: `status`, the items written so far, usage when final.
    fn push_response(&mut self, j: &mut String, status: &str, fin: bool) {
        let id = self.response_id();
        j.push_str(r#""response":{"id":"#);
        push_str(j, &id);
        j.push_str(r#","object":"response","created_at":"#);
        push_num(j, self.head.created.unwrap_or(0));
        j.push_str(r#","status":"#);
        push_str(j, status);
        j.push_str(r#","model":"#);
        push_str(j, self.head.model.as_deref().unwrap_or(""));
        j.push_str(r#","output":["#);
        if fin {
            for (i, (_, item, _)) in self.items.all.iter().enumerate() {
                if i > 0 {
                    j.push(',');
                }
                push_item(j, item, "completed");
            }
        }
        j.push(']');
        let incomplete = match (&self.stop, status) {
            (Some((Stop::MaxTokens, _)), "incomplete") => Some("max_output_tokens"),
            (Some((Stop::Filtered, _)), "incomplete") => Some("content_filter"),
            _ => None,
        };
        j.push_str(r#","incomplete_details":"#);
        match incomplete {
            Some(reason) => {
                j.push_str(r#"{"reason":"#);
                push_str(j, reason);
                j.push('}');
            }
            None => j.push_str("null"),
        }
        j.push_str(r#","usage":"#);
        match (fin, self.usage) {
            (true, Some(u)) => {
                let (input, output) = (u.total_input(), u.output.unwrap_or(0));
                j.push_str(r#"{"input_tokens":"#);
                push_u64(j, input);
                j.push_str(r#","input_tokens_details":{"cached_tokens":"#);
                push_u64(j, u.cache_read.unwrap_or(0));
                j.push_str(r#"},"output_tokens":"#);
                push_u64(j, output);
                j.push_str(r#","output_tokens_details":{"reasoning_tokens":"#);
                push_u64(j, u.reasoning.unwrap_or(0));
                j.push_str(r#"},"total_tokens":"#);
                push_u64(j, input + output);
                j.push('}');
            }
            _ => j.push_str("null"),
        }
        j.push('}');
    }

    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        for kind in ["response.created", "response.in_progress"] {
            let mut j = String::with_capacity(256);
            self.push_response(&mut j, "in_progress", false);
            self.event(kind, &j);
        }
    }

    fn item_fields(&self, at: usize) -> String {
        let mut j = String::from(r#""output_index":"#);
        push_num(&mut j, at);
        if let Some(item) = self.items.get(at) {
            j.push_str(r#","item_id":"#);
            push_str(&mut j, &item.id);
        }
        j
    }

    fn open_item(&mut self, key: Key, kind: RKind, call_id: &str, name: &str) -> usize {
        self.start();
        let n = self.items.all.len();
        let id = match kind {
            RKind::Text | RKind::Refusal => format!("msg_{n}"),
            RKind::Reasoning => format!("rs_{n}"),
            RKind::Tool => format!("fc_{n}"),
        };
        let item = RItem {
            kind,
            id,
            text: String::new(),
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            encrypted: None,
            delta_head: String::new(),
            done_json: None,
        };
        let at = self.items.push(key, item);
        let mut j = String::from(r#""output_index":"#);
        push_num(&mut j, at);
        j.push_str(r#","item":"#);
        if let Some(item) = self.items.get(at) {
            push_item(&mut j, item, "in_progress");
        }
        self.event("response.output_item.added", &j);
        let part = match kind {
            RKind::Text => Some((
                "response.content_part.added",
                r#""content_index":0,"part":{"type":"output_text","text":"","annotations":[]}"#,
            )),
            RKind::Refusal => Some((
                "response.content_part.added",
                r#""content_index":0,"part":{"type":"refusal","refusal":""}"#,
            )),
            RKind::Reasoning => Some((
                "response.reasoning_summary_part.added",
                r#""summary_index":0,"part":{"type":"summary_text","text":""}"#,
            )),
            RKind::Tool => None,
        };
        if let Some((event, fields)) = part {
            let j = format!("{},{fields}", self.item_fields(at));
            self.event(event, &j);
        }
        at
    }

    fn close_item(&mut self, at: usize) {
        if !self.items.is_open(at) {
            return;
        }
        let Some(item) = self.items.get(at) else {
            return;
        };
        let base = self.item_fields(at);
        let mut text = String::new();
        push_str(&mut text, &item.text);
        let events: Vec<(&str, String)> = match item.kind {
            RKind::Text => vec![
                (
                    "response.output_text.done",
                    format!(r#"{base},"content_index":0,"text":{text}"#),
                ),
                (
                    "response.content_part.done",
                    format!(
                        r#"{base},"content_index":0,"part":{{"type":"output_text","text":{text},"annotations":[]}}"#
                    ),
                ),
            ],
            RKind::Refusal => vec![
                (
                    "response.refusal.done",
                    format!(r#"{base},"content_index":0,"refusal":{text}"#),
                ),
                (
                    "response.content_part.done",
                    format!(
                        r#"{base},"content_index":0,"part":{{"type":"refusal","refusal":{text}}}"#
                    ),
                ),
            ],
            RKind::Reasoning => vec![
                (
                    "response.reasoning_summary_text.done",
                    format!(r#"{base},"summary_index":0,"text":{text}"#),
                ),
                (
                    "response.reasoning_summary_part.done",
                    format!(
                        r#"{base},"summary_index":0,"part":{{"type":"summary_text","text":{text}}}"#
                    ),
                ),
            ],
            RKind::Tool => vec![(
                "response.function_call_arguments.done",
                format!(r#"{base},"arguments":{text}"#),
            )],
        };
        let mut done = format!(r#""output_index":{at},"item":"#);
        let item_at = done.len();
        push_item_with(&mut done, item, "completed", &text);
        // The text's and the part's `.done` restate the deltas, and the item's `.done` that
        // follows holds all of it: the target's fold reads only the last (the result is the
        // same; a Responses stream of these bytes assembles it so, which the tests check).
        for (event, fields) in events {
            let j = self.event_json(event, &fields);
            self.out.repeat(Some(event), &j);
        }
        self.event_with_object("response.output_item.done", Some(at), &done, item_at);
        if let Some(item) = self.items.get_mut(at) {
            // `response.completed` repeats the item: written once, copied then.
            item.done_json = done.get(item_at..).map(str::to_owned);
        }
        self.items.mark_closed(at);
    }

    fn finish(&mut self, status: &str, kind: &str, failure: Option<Failure<'_>>) {
        self.start();
        for at in 0..self.items.all.len() {
            self.close_item(at);
        }
        let mut j = String::with_capacity(512);
        self.push_response(&mut j, status, true);
        if let Some(f) = failure {
            // `"error":{...}` inside the response object: reopen its closing brace.
            j.pop();
            j.push_str(r#","error":{"code":"#);
            push_str(&mut j, f.code.or(f.type_).unwrap_or("server_error"));
            j.push_str(r#","message":"#);
            push_str(&mut j, f.message);
            j.push_str("}}");
        }
        self.event_with_object(kind, None, &j, r#""response":"#.len());
        self.done = true;
    }
}

/// One output item as the Responses API shows it.
fn push_item(j: &mut String, item: &RItem, status: &str) {
    if let (Some(done), "completed") = (&item.done_json, status) {
        j.push_str(done); // the item as its `.done` event sent it
        return;
    }
    let mut text = String::new();
    push_str(
        &mut text,
        if status == "completed" {
            &item.text
        } else {
            ""
        },
    );
    push_item_with(j, item, status, &text);
}

/// [`push_item`] with the item's text already escaped as a JSON string (`text`).
fn push_item_with(j: &mut String, item: &RItem, status: &str, text: &str) {
    let fin = status == "completed";
    match item.kind {
        RKind::Text | RKind::Refusal => {
            j.push_str(r#"{"type":"message","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","status":"#);
            push_str(j, status);
            j.push_str(r#","role":"assistant","content":["#);
            if fin {
                if item.kind == RKind::Text {
                    j.push_str(&format!(
                        r#"{{"type":"output_text","text":{text},"annotations":[]}}"#
                    ));
                } else {
                    j.push_str(&format!(r#"{{"type":"refusal","refusal":{text}}}"#));
                }
            }
            j.push_str("]}");
        }
        RKind::Reasoning => {
            j.push_str(r#"{"type":"reasoning","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","summary":["#);
            if fin {
                j.push_str(&format!(r#"{{"type":"summary_text","text":{text}}}"#));
            }
            j.push(']');
            if let Some(encrypted) = &item.encrypted {
                j.push_str(r#","encrypted_content":"#);
                push_str(j, encrypted);
            }
            j.push('}');
        }
        RKind::Tool => {
            j.push_str(r#"{"type":"function_call","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","call_id":"#);
            push_str(j, &item.call_id);
            j.push_str(r#","name":"#);
            push_str(j, &item.name);
            j.push_str(r#","arguments":"#);
            j.push_str(text);
            j.push_str(r#","status":"#);
            push_str(j, status);
            j.push('}');
        }
    }
}

impl Sink for ResponsesWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done || self.items.find(key).is_some() {
            return;
        }
        match kind {
            Kind::Text => self.open_item(key, RKind::Text, "", ""),
            Kind::Refusal => self.open_item(key, RKind::Refusal, "", ""),
            Kind::Reasoning => self.open_item(key, RKind::Reasoning, "", ""),
            Kind::Tool { id, name } => self.open_item(key, RKind::Tool, id, name),
        };
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let at = match self.items.find(key) {
            Some(at) => at,
            None => self.open_item(key, RKind::Text, "", ""),
        };
        if !self.items.is_open(at) {
            self.notes
                .add("a delta for an item the target had already closed (dropped)");
            return;
        }
        match self.pending {
            Some((pending, _)) if pending == at => {}
            _ => {
                self.fold_pending();
                let start = self.items.get(at).map_or(0, |item| item.text.len());
                self.pending = Some((at, start));
            }
        }
        let Some(item) = self.items.get_mut(at) else {
            return;
        };
        item.text.push_str(text);
        let kind = item.kind;
        let event = kind.delta_event();
        if item.delta_head.is_empty() {
            let fields = match kind {
                RKind::Text | RKind::Refusal => r#","content_index":0"#,
                RKind::Reasoning => r#","summary_index":0"#,
                RKind::Tool => "",
            };
            let h = &mut item.delta_head;
            h.push_str("event: ");
            h.push_str(event);
            h.push_str("\ndata: ");
            h.push_str(r#"{"type":""#);
            h.push_str(event);
            h.push_str(r#"","output_index":"#);
            push_num(h, at);
            h.push_str(r#","item_id":"#);
            push_str(h, &item.id);
            h.push_str(fields);
            h.push_str(r#","delta":"#);
        }
        let buf = &mut self.out.buf;
        buf.push_str(&item.delta_head);
        push_str(buf, text);
        if kind == RKind::Text {
            buf.push_str(r#","logprobs":[]"#);
        }
        buf.push_str(r#","sequence_number":"#);
        push_num(buf, self.seq);
        buf.push_str("}\n\n");
        self.seq += 1;
    }

    fn signature(&mut self, key: Key, signature: &str) {
        match self.items.find(key).and_then(|at| self.items.get_mut(at)) {
            Some(item) if item.kind == RKind::Reasoning => {
                item.encrypted = Some(signature.to_owned());
            }
            _ => self
                .notes
                .add("a reasoning signature outside a reasoning item"),
        }
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.done {
            return;
        }
        let at = self.open_item(key, RKind::Reasoning, "", "");
        if let Some(item) = self.items.get_mut(at) {
            item.encrypted = Some(data.to_owned());
        }
        self.close_item(at);
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(at) = self.items.find(key) {
            self.close_item(at);
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        let owned = match stop {
            Stop::EndTurn => Stop::EndTurn,
            Stop::StopSequence(_) => Stop::StopSequence(None),
            Stop::MaxTokens => Stop::MaxTokens,
            Stop::ToolUse => Stop::ToolUse,
            Stop::Filtered => Stop::Filtered,
            Stop::Other(_) => Stop::Other(""),
        };
        let other = match stop {
            Stop::Other(o) if FAILED_TURNS.contains(&o) => Some(o.to_owned()),
            Stop::Other(o) => {
                self.notes.add(&format!(
                    "stop reason {o:?} (Responses has no such status; written as completed)"
                ));
                Some(o.to_owned())
            }
            _ => None,
        };
        self.stop = Some((owned, other));
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        self.finish("failed", "response.failed", Some(failure));
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        let failed = match &self.stop {
            Some((_, Some(reason))) if FAILED_TURNS.contains(&reason.as_str()) => {
                Some(reason.clone())
            }
            _ => None,
        };
        if let Some(reason) = failed {
            let message = format!(
                "the model's turn ended with {reason} (no valid answer: the upstream's finish reason)"
            );
            let failure = Failure {
                message: &message,
                type_: Some("server_error"),
                code: Some("server_error"),
            };
            return self.finish("failed", "response.failed", Some(failure));
        }
        match self.stop.as_ref().map(|(s, _)| *s) {
            Some(Stop::MaxTokens | Stop::Filtered) => {
                self.finish("incomplete", "response.incomplete", None)
            }
            _ => self.finish("completed", "response.completed", None),
        }
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

impl Writer for ResponsesWriter {
    fn output(&self) -> &[u8] {
        self.out.buf.as_bytes()
    }

    fn clear(&mut self) {
        self.out.buf.clear();
    }

    fn reserve(&mut self, additional: usize) {
        self.out.buf.reserve(additional);
    }

    fn result(&mut self) -> Out {
        self.settle();
        self.out.result()
    }

    fn notes(&self) -> &[String] {
        self.notes.all()
    }
}

/// A client's error body (`translate_error`): OpenAI's, as for chat.
pub(super) fn error_body(
    _status: u16,
    class: crate::translate::error::Class,
    message: &str,
    code: Option<&str>,
) -> serde_json::Value {
    class.openai_body(message, code)
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
    let seq = v.get("sequence_number").and_then(serde_json::Value::as_i64);
    if seq != Some(inv.events as i64 - 1) {
        return Err(format!(
            "sequence_number {seq:?} where {} was due",
            inv.events - 1
        ));
    }
    let index = v.get("output_index").and_then(serde_json::Value::as_i64);
    if (inv.events == 1) != (kind == "response.created") {
        return Err(format!("{kind} as event {}", inv.events));
    }
    match (kind, index) {
        ("response.output_item.added", Some(i)) if !inv.items.insert(i) => {
            return Err(format!("item {i} added twice"));
        }
        (_, Some(i)) if !inv.items.contains(&i) => {
            return Err(format!("{kind} of item {i}, never added"));
        }
        ("response.completed" | "response.incomplete" | "response.failed", _) => {
            inv.ended = true;
        }
        _ => {}
    }
    Ok(())
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::new(ResponsesWriter::new())
}

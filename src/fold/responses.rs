//! The OpenAI Responses fold: stream events folded into the final `response` object, its
//! `output` assembled from the deltas.
//!
//! Input is an [`EventView`]: one decoded event (error events never reach the fold, but
//! `response.failed` does), borrowing its strings; the stream builds it from the decoded
//! frame, the accumulator from a `ResponseEvent` item, and both feed [`ResponsesFold::add`].
//! How the response is assembled:
//!
//! - `response.created` / `.queued` / `.in_progress`: the latest `response` snapshot is the
//!   base of the result (`id`, `created_at`, `model`, `status`, `usage`, ...).
//! - `output` items, in `output_index` order, each starting as its
//!   `response.output_item.added` item: message content parts (`content_part.added`) with
//!   `output_text` text joined from `output_text.delta` (annotations from the part and from
//!   `output_text.annotation.added`, logprobs from the deltas), `refusal` parts joined from
//!   `refusal.delta`; `function_call` arguments (also `mcp_call` arguments,
//!   `custom_tool_call` input, `code_interpreter_call` code) joined from their deltas (the
//!   `arguments` also read as partial JSON as they arrive, for `partial_arguments`);
//!   `reasoning` summary parts from `reasoning_summary_text.delta` and reasoning content from
//!   `reasoning_text.delta`. An event naming an item never announced implies one (with a
//!   warning); an event naming no item at all is ignored (with a warning).
//! - A full value sent by the server wins over the pieces assembled before it, at every level:
//!   the text of a `.done` event over its deltas, the part of `content_part.done` over the
//!   assembled part, the item of `output_item.done` over the assembled item, and the
//!   `response` of a terminal event (`response.completed` / `.incomplete` / `.failed`) over
//!   everything. Where the full value's streamed text (or item type / id) differs from what
//!   was assembled, a human-readable note goes to `mismatches` (a debug aid). A terminal
//!   response without `output` gets the assembled output.
//! - Without a terminal event, the result is the latest snapshot with the assembled `output`.
//!   Every result has `id`, `object`, `created_at`, `model`, `status`, `output`, `usage`,
//!   `error` and `incomplete_details` (null when the server sent none).
//!
//! Carried across feeds: the fold state (owned; nothing borrows the input). It holds the text
//! once: an item's assembled pieces are dropped when its full `output_item.done` item arrives,
//! and every item's when a terminal response with an `output` list arrives (the arguments
//! readers of `partial_arguments` stay). Cost: each delta is appended once
//! (O(total input)); server objects are read one JSON level deep and kept as raw text; a note
//! compares values once per `.done` event.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use super::summary::{texts, Node};
use super::{entry, list_of, note, object_map, string_of, Json, Map, Out};
pub use crate::dialect::responses::EventView;
use crate::json::partial::Joined;

mod notes;
#[allow(unused_imports)]
pub use notes::*;

mod item;
#[allow(unused_imports)]
pub use item::*;

/// Keys every result has, with the value used when the server's object lacks them.
const RESPONSE_KEYS: [(&str, Option<&str>); 9] = [
    ("id", None),
    ("object", Some("response")),
    ("created_at", None),
    ("model", None),
    ("status", None),
    ("output", None),
    ("usage", None),
    ("error", None),
    ("incomplete_details", None),
];

/// The Responses fold: everything accumulated so far.
#[derive(Debug, Default)]
pub struct ResponsesFold {
    base: Option<Box<str>>,
    /// The `response` of the terminal event, as sent with the keys every result has that it
    /// lacks added at its end, and whether its `output` is there (not null): it is then the
    /// result as it is.
    final_: Option<(Box<str>, bool)>,
    items: BTreeMap<i64, Item>,
    by_id: HashMap<String, i64>,
    warnings: Vec<String>,
    mismatches: Vec<String>,
    /// Whether full values are compared with what was assembled (`mismatches`); off for a
    /// fold of our own writing (a translation's target), whose full values are built from
    /// the same pieces.
    unchecked: bool,
}

impl ResponsesFold {
    /// An empty fold, before the first event.
    pub fn new() -> Self {
        ResponsesFold::default()
    }

    /// A fold that does not compare full values with the assembled pieces (no `mismatches`):
    /// for events whose full values were built from the same pieces (a translation's own).
    pub fn unchecked() -> Self {
        ResponsesFold {
            unchecked: true,
            ..ResponsesFold::default()
        }
    }

    /// Notes about events the fold had to interpret (e.g. a delta for an unknown item).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Notes where a full value sent by the server differs from the assembled deltas.
    pub fn mismatches(&self) -> &[String] {
        &self.mismatches
    }

    /// Folds one event.
    pub fn add(&mut self, v: &EventView<'_>) {
        match v.kind {
            "response.output_text.delta" => {
                let Some(item) = self.item(v, "message") else {
                    return;
                };
                let part = item.part_for(false, v.content_index, "text", "output_text");
                if let Some(delta) = v.delta {
                    part.push(delta);
                }
                if let Some(Json::Array(items)) = v.logprobs.and_then(Json::read) {
                    if !items.is_empty() {
                        part.logprobs
                            .get_or_insert_with(Vec::new)
                            .extend(items.iter().map(|i| Out::json(i.get())));
                    }
                }
            }
            "response.created" | "response.queued" | "response.in_progress" => {
                // Kept as sent, read only if no terminal response replaces it (the usual
                // stream has two of these, each a whole response object: decoding them
                // into maps was a fixed cost of every stream).
                if let Some(response) = v.response.filter(|r| r.trim_start().starts_with('{')) {
                    self.base = Some(response.into());
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => self.terminal(v),
            "response.output_item.added" => self.item_added(v),
            "response.output_item.done" => self.item_done(v),
            "response.content_part.added" => self.content_part(v, false, false),
            "response.content_part.done" => self.content_part(v, false, true),
            "response.reasoning_summary_part.added" => self.content_part(v, true, false),
            "response.reasoning_summary_part.done" => self.content_part(v, true, true),
            "response.output_text.done" => {
                self.text_done(v, false, "text", "output_text", "message")
            }
            "response.refusal.delta" => self.text_delta(v, false, "refusal", "refusal", "message"),
            "response.refusal.done" => self.text_done(v, false, "refusal", "refusal", "message"),
            "response.reasoning_text.delta" => {
                self.text_delta(v, false, "text", "reasoning_text", "reasoning")
            }
            "response.reasoning_text.done" => {
                self.text_done(v, false, "text", "reasoning_text", "reasoning")
            }
            "response.reasoning_summary_text.delta" => {
                self.text_delta(v, true, "text", "summary_text", "reasoning")
            }
            "response.reasoning_summary_text.done" => {
                self.text_done(v, true, "text", "summary_text", "reasoning")
            }
            "response.output_text.annotation.added" => self.annotation(v),
            kind => match streamed_field(kind) {
                Some((field, implied, false)) => self.field_delta(v, field, implied),
                Some((field, implied, true)) => self.field_done(v, field, implied),
                // Other (unknown) event types carry nothing the fold knows how to place.
                None => {}
            },
        }
    }

    /// The item an event names (by `output_index`, else `item_id`); created, with a warning,
    /// when it was never announced.
    fn item(&mut self, v: &EventView<'_>, implied: &str) -> Option<&mut Item> {
        let Some(index) = v.output_index else {
            let found = v.item_id.and_then(|id| self.by_id.get(id).copied());
            if found.is_none() {
                note(
                    &mut self.warnings,
                    format!("{} names no output item; ignored", v.kind),
                );
            }
            return self.items.get_mut(&found?);
        };
        if !self.items.contains_key(&index) {
            let mut item = Map::new();
            item.set("id", Out::str_or_null(v.item_id));
            item.set("type", Out::Str(implied.into()));
            if implied == "message" {
                item.set("role", Out::Str("assistant".into()));
                item.set("content", Out::List(Vec::new()));
            }
            self.new_item(index, item);
            note(&mut self.warnings, format!(
                "{} for output[{index}] before response.output_item.added; assumed a {implied} item",
                v.kind
            ));
        }
        self.items.get_mut(&index)
    }

    fn new_item(&mut self, index: i64, item: Map) {
        if let Some(id) = string_of(item.get("id")) {
            self.by_id.insert(id, index);
        }
        self.items.insert(index, Item::new(index, item));
    }

    fn next_index(&self) -> i64 {
        i64::try_from(self.items.len()).unwrap_or(i64::MAX)
    }

    fn item_added(&mut self, v: &EventView<'_>) {
        let Some(item) = v.item.and_then(object_map) else {
            return;
        };
        let index = v.output_index.unwrap_or_else(|| self.next_index());
        if self.items.contains_key(&index) {
            note(
                &mut self.warnings,
                format!("output[{index}]: a second response.output_item.added replaced the first"),
            );
        }
        self.new_item(index, item);
    }

    fn item_done(&mut self, v: &EventView<'_>) {
        // The item is read once, when something needs its entries: its `arguments` (the last
        // of duplicate keys, as a `Map` keeps them), a comparison, or a new item. A stream's
        // usual message item (announced, no arguments, compared with nothing) is kept as sent:
        // an object, as the decoder read it.
        let known = v.output_index.filter(|i| self.items.contains_key(i));
        // (A key spelled with escapes has a `\u` in it.)
        let read = |t: &str| {
            known.is_none() || !self.unchecked || t.contains("\"arguments\"") || t.contains("\\u")
        };
        let Some((text, entries)) = v.item.and_then(|t| match read(t) {
            true => Some((t, Json::object(t)?)),
            false => t.trim_start().starts_with('{').then(|| (t, Vec::new())),
        }) else {
            return;
        };
        let arguments =
            entry(&entries, "arguments").and_then(|value| match Json::read(value.get()) {
                Some(Json::Str(s)) => Some(s.into_owned()),
                _ => None,
            });
        let full = Out::json(text);
        let index = match v.output_index {
            Some(index) if self.items.contains_key(&index) => {
                if let Some(state) = self.items.get(&index).filter(|_| !self.unchecked) {
                    let where_ = format!("output[{index}]");
                    let source = "response.output_item.done";
                    match state.assembled() {
                        Out::Map(a) => {
                            // The full item as a map from the entries just read (not read
                            // again).
                            let b: Map = entries
                                .iter()
                                .map(|(k, v)| (k.to_string(), Out::json(v.get())))
                                .collect();
                            diff_maps(&where_, &a, &b, source, &mut self.mismatches)
                        }
                        other => diff_items(&where_, &other, &full, source, &mut self.mismatches),
                    }
                }
                index
            }
            other => {
                let index = other.unwrap_or_else(|| self.next_index());
                let item = entries
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), Out::json(v.get())))
                    .collect();
                self.new_item(index, item);
                index
            }
        };
        if let Some(state) = self.items.get_mut(&index) {
            state.arguments_from(arguments.as_deref());
            // The full item wins from now on: the assembled pieces are not needed again, and
            // dropping them keeps the text in memory once.
            state.done = Some(full);
            state.content = None;
            state.summary = None;
            state.fields.clear();
        }
    }

    fn content_part(&mut self, v: &EventView<'_>, summary: bool, done: bool) {
        let implied = if summary { "reasoning" } else { "message" };
        let part_text = v.part;
        let kind = v.kind;
        let index = if summary {
            v.summary_index
        } else {
            v.content_index
        };
        let mut notes = Vec::new();
        let unchecked = self.unchecked;
        let Some(target) = self.item(v, implied) else {
            return;
        };
        // Only what a comparison reports needs the item's description.
        let describe = (!unchecked).then(|| target.describe());
        let parts = if summary {
            &mut target.summary
        } else {
            &mut target.content
        };
        let position = parts
            .as_ref()
            .and_then(|p| p.iter().position(|(i, _)| *i == index));
        if let (true, Some(at), Some(text)) = (done && unchecked, position, part_text) {
            // A stream's done part of a part that came before: its full value as sent (an
            // object, as the decoder read it), read only when the result is built from it.
            let slot = parts.as_mut().and_then(|p| p.get_mut(at));
            if let (Some((_, state)), true) = (slot, text.trim_start().starts_with('{')) {
                state.done = Some(Out::json(text));
                return;
            }
        }
        let Some(part) = part_text.and_then(object_map) else {
            return;
        };
        let field = if string_of(part.get("type")).as_deref() == Some("refusal") {
            "refusal"
        } else {
            "text"
        };
        if !done {
            if let (Some(at), Some(parts)) = (position, parts.as_ref()) {
                if parts
                    .get(at)
                    .is_some_and(|(_, s)| s.text.is_some() || s.done.is_some())
                {
                    return; // deltas came first; keep them
                }
            }
            let parts = parts.get_or_insert_with(Vec::new);
            let new = Part::new(part, field);
            match position {
                Some(at) => {
                    if let Some(slot) = parts.get_mut(at) {
                        slot.1 = new;
                    }
                }
                None => parts.push((index, new)),
            }
            return;
        }
        let part_type = show(part.get("type"));
        let state = match position {
            None => target.part_for(summary, index, field, &part_type),
            Some(at) => {
                let Some((_, state)) = parts.as_mut().and_then(|p| p.get_mut(at)) else {
                    return;
                };
                if let (Some(describe), true) = (&describe, state.text.is_some()) {
                    let where_ = format!(
                        "{describe} {}[{}]",
                        if summary { "summary" } else { "content" },
                        index.map_or_else(|| "None".into(), |i| i.to_string())
                    );
                    let assembled = state.assembled();
                    let (a, b) = (assembled.get(field), part.get(field));
                    if !same(a, b) {
                        notes.push(format!(
                            "{where_}.{field}: the deltas give {}, {kind} says {}",
                            short(a),
                            short(b)
                        ));
                    }
                }
                state
            }
        };
        state.done = Some(Out::Map(part));
        for text in notes {
            note(&mut self.mismatches, text);
        }
    }

    fn text_delta(
        &mut self,
        v: &EventView<'_>,
        summary: bool,
        field: &'static str,
        part_type: &str,
        implied: &str,
    ) {
        let index = if summary {
            v.summary_index
        } else {
            v.content_index
        };
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let part = target.part_for(summary, index, field, part_type);
        if let Some(delta) = v.delta {
            part.push(delta);
        }
    }

    fn text_done(
        &mut self,
        v: &EventView<'_>,
        summary: bool,
        field: &'static str,
        part_type: &str,
        implied: &str,
    ) {
        let index = if summary {
            v.summary_index
        } else {
            v.content_index
        };
        let kind = v.kind;
        let full = if field == "refusal" {
            v.refusal
        } else {
            v.text
        };
        let unchecked = self.unchecked;
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(full) = full else {
            return;
        };
        let describe = (!unchecked).then(|| target.describe());
        let part = target.part_for(summary, index, field, part_type);
        if let (Some(describe), true) = (describe, part.text.is_some()) {
            let joined = part.joined();
            if joined != full {
                let text = format!(
                    "{describe} {}[{}].{field}: the deltas give {}, {kind} says {}",
                    if summary { "summary" } else { "content" },
                    index.map_or_else(|| "None".into(), |i| i.to_string()),
                    short(Some(&Out::Str(joined))),
                    short(Some(&Out::Str(full.into())))
                );
                part.set_full(full);
                note(&mut self.mismatches, text);
                return;
            }
        }
        part.set_full(full);
    }

    fn annotation(&mut self, v: &EventView<'_>) {
        let index = v.content_index;
        let annotation = v.raw.and_then(Json::object).and_then(|entries| {
            entries
                .iter()
                .find(|(k, _)| k == "annotation")
                .map(|(_, a)| Out::json(a.get()))
        });
        let Some(target) = self.item(v, "message") else {
            return;
        };
        let Some(annotation) = annotation else {
            return;
        };
        let part = target.part_for(false, index, "text", "output_text");
        part.annotations
            .get_or_insert_with(Vec::new)
            .push(annotation);
    }

    fn field_delta(&mut self, v: &EventView<'_>, field: &str, implied: &str) {
        let delta = v.delta;
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(delta) = delta else {
            return;
        };
        let first = match target.field_text(field) {
            Some(text) => {
                text.push_str(delta);
                None
            }
            None => {
                // The first fragment starts from the item's own value of the field.
                let prefix = string_of(target.item.get(field)).unwrap_or_default();
                target.item.set(field, Out::Str(String::new()));
                target
                    .fields
                    .push((field.to_owned(), prefix.clone() + delta));
                Some(prefix)
            }
        };
        if field == "arguments" {
            // Read when asked (`partial_arguments`); not JSON: kept as sent in `fields`.
            let joined = target.arguments.get_or_insert_with(Joined::new);
            if let Some(prefix) = &first {
                joined.push(prefix);
            }
            joined.push(delta);
        }
    }

    fn field_done(&mut self, v: &EventView<'_>, field: &str, implied: &str) {
        let full = if field == "arguments" {
            v.arguments.map(str::to_owned)
        } else {
            v.raw.and_then(Json::object).and_then(|entries| {
                entries
                    .iter()
                    .find(|(k, _)| k == field)
                    .and_then(|(_, value)| match Json::read(value.get()) {
                        Some(Json::Str(s)) => Some(s.into_owned()),
                        _ => None,
                    })
            })
        };
        let kind = v.kind;
        let unchecked = self.unchecked;
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(full) = full else {
            return;
        };
        if field == "arguments" {
            target.arguments_from(Some(&full));
        }
        let describe = (!unchecked).then(|| target.describe());
        let note_text = match (target.field_text(field), describe) {
            (Some(joined), Some(describe)) if *joined != full => Some(format!(
                "{describe} {field}: the deltas give {}, {kind} says {}",
                short(Some(&Out::Str(joined.clone()))),
                short(Some(&Out::Str(full.clone())))
            )),
            _ => None,
        };
        target.item.set(field, Out::Str(String::new()));
        match target.field_text(field) {
            Some(text) => *text = full,
            None => target.fields.push((field.to_owned(), full)),
        }
        if let Some(text) = note_text {
            note(&mut self.mismatches, text);
        }
    }

    /// The arguments of the call at `output_index` read so far (`partial_arguments`), `None`
    /// if none came for it.
    pub fn arguments(&self, output_index: i64) -> Option<&Joined> {
        self.items.get(&output_index)?.arguments.as_ref()
    }
}

mod end;
/// The answer's text in a Responses `response` (`crate::fold::summary`): its message items'
/// text (a reasoning item's content, open-weight models' `reasoning_text`, is not the answer).
pub fn final_text(result: Node<'_>) -> String {
    result
        .key("output")
        .map(Node::items)
        .unwrap_or_default()
        .into_iter()
        .filter(|item| item.key("type").and_then(Node::text).as_deref() == Some("message"))
        .map(|item| texts(item.key("content"), &|_| false))
        .collect()
}

#[cfg(test)]
mod tests;

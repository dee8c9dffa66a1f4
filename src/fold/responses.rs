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

use super::{list_of, note, object_map, string_of, Json, Map, Out};
use crate::partial::PartialJson;

/// One event of a Responses stream (an item's worth of data). JSON-valued fields hold raw
/// JSON text; `raw` is the whole event (for all but the plain deltas).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventView<'a> {
    pub kind: &'a str,
    pub output_index: Option<i64>,
    pub content_index: Option<i64>,
    pub summary_index: Option<i64>,
    pub item_id: Option<&'a str>,
    pub delta: Option<&'a str>,
    pub text: Option<&'a str>,
    pub refusal: Option<&'a str>,
    pub arguments: Option<&'a str>,
    pub item: Option<&'a str>,
    pub part: Option<&'a str>,
    pub response: Option<&'a str>,
    pub logprobs: Option<&'a str>,
    pub raw: Option<&'a str>,
}

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
    base: Option<Map>,
    final_: Option<Map>,
    items: BTreeMap<i64, Item>,
    by_id: HashMap<String, i64>,
    warnings: Vec<String>,
    mismatches: Vec<String>,
    /// Whether full values are compared with what was assembled (`mismatches`); off for a
    /// fold of our own writing (a translation's target), whose full values are built from
    /// the same pieces.
    unchecked: bool,
}

#[derive(Debug)]
struct Item {
    index: i64,
    item: Map,
    content: Option<Parts>,
    summary: Option<Parts>,
    /// Streamed string fields (`arguments`, `input`, `code`): their text so far.
    fields: Vec<(String, String)>,
    /// The `arguments` deltas read as partial JSON as they arrive (`partial_arguments`); a
    /// full value (`.done`, `output_item.done`) only starts it when no delta came.
    arguments: Option<PartialJson>,
    done: Option<Out>,
}

/// Parts by index, in arrival order (sorted when every index is known).
type Parts = Vec<(Option<i64>, Part)>;

#[derive(Debug)]
struct Part {
    part: Map,
    /// `"text"` or `"refusal"`: where the fragments go.
    field: &'static str,
    /// The part's text once a fragment came (its start text included).
    text: Option<String>,
    annotations: Option<Vec<Out>>,
    logprobs: Option<Vec<Out>>,
    done: Option<Out>,
}

/// A value's text as Python's `repr()` shows it, cut to 60 characters (for notes).
fn short(value: Option<&Out>) -> String {
    let r = repr(value);
    if r.chars().count() <= 60 {
        return r;
    }
    let cut: String = r.chars().take(57).collect();
    cut + "..."
}

fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn repr(value: Option<&Out>) -> String {
    let Some(value) = value else {
        return "None".into();
    };
    match serde_json::from_str::<serde_json::Value>(&value.to_json()) {
        Ok(v) => repr_value(&v),
        Err(_) => value.to_json(),
    }
}

fn repr_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => (if *b { "True" } else { "False" }).into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => repr_str(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(repr_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", repr_str(k), repr_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// JSON equality of two values (`None`: absent, which equals only `null` or absent, as a
/// Python `dict.get` would see it).
fn same(a: Option<&Out>, b: Option<&Out>) -> bool {
    // The common cases without a round trip through `serde_json::Value`: the streamed text
    // against the server's (a string against a string literal), the same text twice.
    fn literal(t: &str) -> Option<std::borrow::Cow<'_, str>> {
        match Json::read(t) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
    match (a, b) {
        (Some(Out::Str(x)), Some(Out::Str(y))) => return x == y,
        (Some(Out::Json(x)), Some(Out::Json(y))) if x.trim() == y.trim() => return true,
        (Some(Out::Str(x)), Some(Out::Json(t))) | (Some(Out::Json(t)), Some(Out::Str(x))) => {
            if let Some(s) = literal(t) {
                return *x == *s;
            }
        }
        _ => {}
    }
    let value = |v: Option<&Out>| -> Option<serde_json::Value> {
        match v {
            None => Some(serde_json::Value::Null),
            Some(v) => serde_json::from_str(&v.to_json()).ok(),
        }
    };
    match (value(a), value(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.map(Out::to_json) == b.map(Out::to_json),
    }
}

/// `str()` of a value in a note.
fn show(value: Option<&Out>) -> String {
    match value {
        None => "None".into(),
        Some(v) => string_of(Some(v)).unwrap_or_else(|| repr(Some(v))),
    }
}

/// The streamed strings of an output item, by path (what a mismatch note compares).
fn streamed_texts(map: &Map) -> Vec<(String, Out)> {
    let mut out = Vec::new();
    for key in ["content", "summary"] {
        let parsed;
        let parts: &[Out] = match map.get(key) {
            Some(Out::List(items)) => items,
            other => {
                parsed = list_of(other).unwrap_or_default();
                &parsed
            }
        };
        for (i, part) in parts.iter().enumerate() {
            if let Some(part) = map_of(part) {
                for field in ["text", "refusal"] {
                    if let Some(v) = part.get(field) {
                        out.push((format!("{key}[{i}].{field}"), v.clone()));
                    }
                }
            }
        }
    }
    for field in ["arguments", "input", "code"] {
        if let Some(s) = string_of(map.get(field)) {
            out.push((field.into(), Out::Str(s)));
        }
    }
    out
}

/// A value as a map: borrowed when it is one, read one level deep when it is JSON text.
fn map_of(value: &Out) -> Option<Cow<'_, Map>> {
    match value {
        Out::Map(m) => Some(Cow::Borrowed(m)),
        Out::Json(t) => object_map(t).map(Cow::Owned),
        _ => None,
    }
}

/// Notes each difference between an assembled item and the server's full one.
fn diff_items(where_: &str, assembled: &Out, full: &Out, source: &str, notes: &mut Vec<String>) {
    // The terminal response repeats each item its `.done` event sent: the same text needs no
    // walk through its parts.
    if let (Out::Json(a), Out::Json(b)) = (assembled, full) {
        if a.trim() == b.trim() {
            return;
        }
    }
    let (Some(a), Some(b)) = (map_of(assembled), map_of(full)) else {
        if !same(Some(assembled), Some(full)) {
            note(
                notes,
                format!(
                    "{where_}: assembled {}, {source} sent {}",
                    short(Some(assembled)),
                    short(Some(full))
                ),
            );
        }
        return;
    };
    diff_maps(where_, &a, &b, source, notes);
}

/// [`diff_items`] of two items that are maps. Each is read once: the full item's text was
/// parsed five times here (as a map twice, its content list, each part, the text literal),
/// ~7% of consuming a Responses body whose `.done` events repeat a few KB of text.
fn diff_maps(where_: &str, a: &Map, b: &Map, source: &str, notes: &mut Vec<String>) {
    for key in ["type", "id"] {
        if !same(a.get(key), b.get(key)) {
            note(
                notes,
                format!(
                    "{where_}: {key} {} assembled, {source} says {}",
                    short(a.get(key)),
                    short(b.get(key))
                ),
            );
            return;
        }
    }
    // Only what was assembled is compared: a part the stream never carried is not a mismatch.
    let theirs = streamed_texts(b);
    for (path, mine) in streamed_texts(a) {
        let other = theirs.iter().find(|(p, _)| *p == path).map(|(_, v)| v);
        if !same(Some(&mine), other) {
            note(
                notes,
                format!(
                    "{where_} {path}: the deltas give {}, {source} says {}",
                    short(Some(&mine)),
                    short(other)
                ),
            );
        }
    }
}

impl Part {
    fn new(part: Map, field: &'static str) -> Self {
        Part {
            part,
            field,
            text: None,
            annotations: None,
            logprobs: None,
            done: None,
        }
    }

    /// A fragment: the first one starts from the part's own text.
    fn push(&mut self, fragment: &str) {
        match &mut self.text {
            Some(text) => text.push_str(fragment),
            None => {
                let prefix = string_of(self.part.get(self.field)).unwrap_or_default();
                self.text = Some(prefix + fragment);
                self.part.set(self.field, Out::Str(String::new()));
            }
        }
    }

    fn joined(&self) -> String {
        match &self.text {
            Some(text) => text.clone(),
            None => string_of(self.part.get(self.field)).unwrap_or_default(),
        }
    }

    /// A `.done` event's full text replaces the fragments.
    fn set_full(&mut self, text: &str) {
        self.part.set(self.field, Out::Str(String::new()));
        self.text = Some(text.to_owned());
    }

    fn assembled(&self) -> Map {
        let mut out = self.part.clone();
        out.set(self.field, Out::Str(self.joined()));
        for (key, added) in [
            ("annotations", &self.annotations),
            ("logprobs", &self.logprobs),
        ] {
            if let Some(added) = added {
                let mut all = list_of(out.get(key)).unwrap_or_default();
                all.extend(added.iter().cloned());
                out.set(key, Out::List(all));
            }
        }
        out
    }

    fn build(&self) -> Out {
        match &self.done {
            Some(done) => done.clone(),
            None => Out::Map(self.assembled()),
        }
    }
}

fn sorted_parts(parts: &Parts) -> Vec<&Part> {
    let mut order: Vec<&(Option<i64>, Part)> = parts.iter().collect();
    if order.iter().all(|(i, _)| i.is_some()) {
        order.sort_by_key(|(i, _)| *i);
    }
    order.into_iter().map(|(_, p)| p).collect()
}

impl Item {
    fn new(index: i64, item: Map) -> Self {
        Item {
            index,
            item,
            content: None,
            summary: None,
            fields: Vec::new(),
            arguments: None,
            done: None,
        }
    }

    /// Starts the arguments reader from a full value, unless deltas already started it.
    fn arguments_from(&mut self, full: Option<&str>) {
        if let (None, Some(full)) = (&self.arguments, full) {
            let mut p = PartialJson::new();
            // Arguments that are not JSON are kept as sent; the reader just stops.
            let _ = p.feed_str(full);
            self.arguments = Some(p);
        }
    }

    fn describe(&self) -> String {
        format!(
            "output[{}] ({} {})",
            self.index,
            show(self.item.get("type")),
            show(self.item.get("id"))
        )
    }

    fn assembled(&self) -> Out {
        let mut out = self.item.clone();
        for (key, parts) in [("content", &self.content), ("summary", &self.summary)] {
            if let Some(parts) = parts.as_ref().filter(|p| !p.is_empty()) {
                let built = sorted_parts(parts).into_iter().map(Part::build).collect();
                out.set(key, Out::List(built));
            }
        }
        for (name, text) in &self.fields {
            out.set(name, Out::Str(text.clone()));
        }
        Out::Map(out)
    }

    fn build(&self) -> Out {
        match &self.done {
            Some(done) => done.clone(),
            None => self.assembled(),
        }
    }

    /// The content (`summary == false`) or summary part `index` (created when missing).
    fn part_for(
        &mut self,
        summary: bool,
        index: Option<i64>,
        field: &'static str,
        part_type: &str,
    ) -> &mut Part {
        let parts = if summary {
            self.summary.get_or_insert_with(Vec::new)
        } else {
            self.content.get_or_insert_with(Vec::new)
        };
        let at = match parts.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                let mut part = Map::new();
                part.set("type", Out::Str(part_type.into()));
                part.set(field, Out::Str(String::new()));
                if part_type == "output_text" {
                    part.set("annotations", Out::List(Vec::new()));
                }
                parts.push((index, Part::new(part, field)));
                parts.len() - 1
            }
        };
        #[allow(clippy::indexing_slicing)] // `at` was found or just pushed
        &mut parts[at].1
    }

    fn field_text(&mut self, name: &str) -> Option<&mut String> {
        self.fields
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }
}

/// The item type an event implies when it names an item that was never announced, and the
/// item field its deltas stream into.
fn streamed_field(kind: &str) -> Option<(&'static str, &'static str, bool)> {
    // (field, implied item type, is the `.done` event)
    Some(match kind {
        "response.function_call_arguments.delta" | "response.mcp_call_arguments.delta" => {
            ("arguments", "function_call", false)
        }
        "response.custom_tool_call_input.delta" => ("input", "custom_tool_call", false),
        "response.code_interpreter_call_code.delta" => ("code", "code_interpreter_call", false),
        "response.function_call_arguments.done" | "response.mcp_call_arguments.done" => {
            ("arguments", "function_call", true)
        }
        "response.custom_tool_call_input.done" => ("input", "custom_tool_call", true),
        "response.code_interpreter_call_code.done" => ("code", "code_interpreter_call", true),
        _ => return None,
    })
}

impl ResponsesFold {
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
                if let Some(response) = v.response.and_then(object_map) {
                    self.base = Some(response);
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

    fn terminal(&mut self, v: &EventView<'_>) {
        let Some(response) = v.response.and_then(object_map) else {
            note(
                &mut self.warnings,
                format!("{} without a response object", v.kind),
            );
            return;
        };
        let output = response.get("output").filter(|o| !o.is_null()).cloned();
        self.final_ = Some(response);
        let Some(output) = output else {
            return;
        };
        if self.unchecked {
            self.drop_assembled();
            return;
        }
        let assembled = self.assembled_output();
        let Some(output) = list_of(Some(&output)) else {
            note(
                &mut self.mismatches,
                format!("{}: output is {}, not a list", v.kind, short(Some(&output))),
            );
            return;
        };
        if !assembled.is_empty() && output.len() != assembled.len() {
            note(
                &mut self.mismatches,
                format!(
                    "{}: {} output items, {} assembled from the stream",
                    v.kind,
                    output.len(),
                    assembled.len()
                ),
            );
        }
        for (i, (a, b)) in assembled.iter().zip(&output).enumerate() {
            diff_items(&format!("output[{i}]"), a, b, v.kind, &mut self.mismatches);
        }
        self.drop_assembled();
    }

    /// The terminal response's output is the result's from now on: the pieces assembled from
    /// the stream are not needed again (this keeps the text in memory once). Each item's
    /// arguments reader stays, for `partial_arguments`.
    fn drop_assembled(&mut self) {
        for item in self.items.values_mut() {
            item.content = None;
            item.summary = None;
            item.fields.clear();
            item.done = None;
        }
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
        // The item is read once: checked to be an object, and its `arguments` taken (the
        // last of duplicate keys, as a `Map` keeps them).
        let Some((text, entries)) = v.item.and_then(|t| Some((t, Json::object(t)?))) else {
            return;
        };
        let arguments = entries
            .iter()
            .rev()
            .find(|(k, _)| k == "arguments")
            .and_then(|(_, value)| match Json::read(value.get()) {
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
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(part) = part_text.and_then(object_map) else {
            return;
        };
        let field = if string_of(part.get("type")).as_deref() == Some("refusal") {
            "refusal"
        } else {
            "text"
        };
        let describe = target.describe();
        let parts = if summary {
            &mut target.summary
        } else {
            &mut target.content
        };
        let position = parts
            .as_ref()
            .and_then(|p| p.iter().position(|(i, _)| *i == index));
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
        let full = Out::Map(part.clone());
        let state = match position {
            None => target.part_for(summary, index, field, &part_type),
            Some(at) => {
                let Some((_, state)) = parts.as_mut().and_then(|p| p.get_mut(at)) else {
                    return;
                };
                if state.text.is_some() {
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
        state.done = Some(full);
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
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(full) = full else {
            return;
        };
        let describe = target.describe();
        let part = target.part_for(summary, index, field, part_type);
        if part.text.is_some() {
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
            let reader = target.arguments.get_or_insert_with(PartialJson::new);
            // Not JSON: kept as sent in `fields`; the reader just stops.
            if let Some(prefix) = &first {
                let _ = reader.feed_str(prefix);
            }
            let _ = reader.feed_str(delta);
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
        let Some(target) = self.item(v, implied) else {
            return;
        };
        let Some(full) = full else {
            return;
        };
        if field == "arguments" {
            target.arguments_from(Some(&full));
        }
        let describe = target.describe();
        let note_text = match target.field_text(field) {
            Some(joined) if *joined != full => Some(format!(
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

    fn assembled_output(&self) -> Vec<Out> {
        self.items.values().map(Item::build).collect()
    }

    /// The arguments of the call at `output_index` read so far (`partial_arguments`), `None`
    /// if none came for it.
    pub fn arguments(&self, output_index: i64) -> Option<&PartialJson> {
        self.items.get(&output_index)?.arguments.as_ref()
    }

    /// The `response` object folded so far.
    pub fn result(&self) -> Out {
        let mut out = match &self.final_ {
            Some(final_) => {
                let mut out = final_.clone();
                if out.get("output").is_none_or(Out::is_null) {
                    out.set("output", Out::List(self.assembled_output()));
                }
                out
            }
            None => {
                let mut out = self.base.clone().unwrap_or_default();
                if !self.items.is_empty() || out.get("output").is_none_or(Out::is_null) {
                    out.set("output", Out::List(self.assembled_output()));
                }
                out
            }
        };
        for (key, default) in RESPONSE_KEYS {
            if !out.contains_key(key) {
                out.set(key, default.map_or(Out::Null, |d| Out::Str(d.into())));
            }
        }
        Out::Map(out)
    }
}

#[cfg(test)]
mod tests;

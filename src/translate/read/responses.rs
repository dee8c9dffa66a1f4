//! The OpenAI Responses reader.

use super::*;
use crate::fold::responses;

// --- Responses --------------------------------------------------------------------------------

fn item_key(output_index: i64) -> Key {
    (output_index as u64) << 20
}

fn part_key(output_index: i64, content_index: i64) -> Key {
    item_key(output_index).wrapping_add(1 + (content_index as u64 & 0xFFFFF))
}

/// Reads an OpenAI Responses stream.
#[derive(Debug, Default)]
pub struct ResponsesReader {
    /// Function calls whose arguments streamed (the others are written from `.done`).
    streamed: IntMap<()>,
    tools: bool,
    /// Reasoning items opened (their summary parts continue one block).
    reasoning: IntMap<()>,
    /// The text each open message part streamed so far (by [`part_key`]), to hold against
    /// the text its `.done` events restate: what they add is written before the part closes.
    texts: IntMap<String>,
    /// Message items whose `output_item.done` came (the terminal object restates the rest).
    items_done: IntMap<()>,
    /// Each item's output index, by its id (from `output_item.added`): an event that names
    /// its item by id is read against that item, whatever its `output_index` says.
    ids: std::collections::HashMap<String, i64>,
    /// The output indexes (as sent) an item was added at, each with whether that item's
    /// `output_item.done` came: only such a place is moved when an item is added there again
    /// (an `added` repeated while its item is open is the same item).
    places: IntMap<bool>,
    /// An output index added at again (a proxy that numbers every item 0, or reuses one
    /// item id and call id for two calls, as Bedrock's Responses endpoint does): the place
    /// its events are read at from then on, a fresh one (the first item is whole: its
    /// `output_item.done` came first).
    moved: IntMap<i64>,
    /// How many places [`ResponsesReader::moved`] handed out.
    fresh: i64,
    /// Each item's place, in the order the items were added: where the terminal object's
    /// n-th item is when it names no id.
    order: Vec<i64>,
}

/// The first of the places [`ResponsesReader::moved`] hands out (past any real index).
const FRESH: i64 = 1 << 32;

/// A content part that is reasoning, not answer text (open-weight models' `reasoning_text`,
/// a summary's `summary_text`): its text streams through the reasoning events.
fn reasoning_part(part: Option<&str>) -> bool {
    matches!(
        part.and_then(|p| str_field(p, "type")).as_deref(),
        Some("reasoning_text") | Some("summary_text")
    )
}

impl ResponsesReader {
    /// One event, as the Responses fold reads it (errors, `response.failed`'s included,
    /// come to the translation apart).
    pub fn view(&mut self, v: &responses::EventView<'_>, sink: &mut dyn Sink) {
        let kind = v.kind.as_bytes();
        // Whether this event adds an item at a place of its own.
        let mut new_item = false;
        if kind == b"response.output_item.added" {
            if let Some(at) = v.output_index {
                match self.places.get_mut(at) {
                    None => {
                        self.places.insert(at, false);
                        new_item = true;
                    }
                    Some(done) if *done => {
                        *done = false;
                        self.moved.insert(at, FRESH + self.fresh);
                        self.fresh += 1;
                        new_item = true;
                    }
                    Some(_) => {}
                }
            }
        }
        if kind == b"response.output_item.done" {
            if let Some(done) = v.output_index.and_then(|at| self.places.get_mut(at)) {
                *done = true;
            }
        }
        let place = |at: i64| self.moved.get(at).copied().unwrap_or(at);
        let oi = match v.item_id {
            Some(id) if !self.ids.is_empty() => {
                match (self.ids.get(id), v.output_index) {
                    (Some(&at), _) => at,
                    // An id the stream never added, with the item's place: read there (a
                    // proxy that gives an item a new id on each kind of event, as GitHub
                    // Copilot's does, still names its place).
                    (None, Some(at)) => {
                        sink.drop_note(
                            "Responses events naming an item by an id never added (read by their output_index)",
                        );
                        place(at)
                    }
                    (None, None) => {
                        // Nothing says which item it is: nothing to add it to.
                        sink.drop_note(
                            "Responses events for an item that was never added (ignored)",
                        );
                        return;
                    }
                }
            }
            _ => place(v.output_index.unwrap_or(0)),
        };
        let delta = v.delta;
        match kind {
            b"response.created" | b"response.in_progress" => {
                if let Some(r) = v.response {
                    let [id, model, created] = fields(r, ["id", "model", "created_at"]);
                    let (id, model) = (id.and_then(json_string), model.and_then(json_string));
                    sink.meta(Meta {
                        id: id.as_deref(),
                        model: model.as_deref(),
                        created: created.and_then(|c| c.trim().parse().ok()),
                    });
                }
            }
            b"response.output_item.added" => {
                let Some(item) = v.item else {
                    return;
                };
                if let Some(id) = str_field(item, "id") {
                    self.ids.insert(id.into_owned(), oi);
                }
                if new_item {
                    self.order.push(oi);
                }
                match str_field(item, "type").as_deref() {
                    Some("function_call") => {
                        self.tools = true;
                        let id = str_field(item, "call_id").unwrap_or_default();
                        let name = str_field(item, "name").unwrap_or_default();
                        sink.open(
                            item_key(oi),
                            Kind::Tool {
                                id: &id,
                                name: &name,
                            },
                        );
                    }
                    Some("reasoning") => {
                        self.reasoning.add(oi);
                        sink.open(item_key(oi), Kind::Reasoning);
                    }
                    Some("message") => {}
                    _ => sink.drop_note("output items of a type the target has no place for"),
                }
            }
            b"response.content_part.added" | b"response.content_part.done"
                if reasoning_part(v.part) => {}
            b"response.content_part.added" => {
                let key = part_key(oi, v.content_index.unwrap_or(0));
                let type_ = v.part.and_then(|p| str_field(p, "type"));
                match type_.as_deref() {
                    Some("refusal") => sink.open(key, Kind::Refusal),
                    _ => sink.open(key, Kind::Text),
                }
            }
            b"response.output_text.delta" | b"response.refusal.delta" => {
                if let Some(d) = delta {
                    let key = part_key(oi, v.content_index.unwrap_or(0));
                    sink.delta(key, d);
                    self.texts
                        .get_or_insert_with(key as i64, String::new)
                        .push_str(d);
                }
            }
            b"response.output_text.done" | b"response.refusal.done" => {
                if let Some(full) = v.text.or(v.refusal) {
                    self.restated(part_key(oi, v.content_index.unwrap_or(0)), full, sink);
                }
            }
            b"response.content_part.done" => {
                let key = part_key(oi, v.content_index.unwrap_or(0));
                let [text, refusal] = v.part.map_or([None; 2], |p| fields(p, ["text", "refusal"]));
                if let Some(full) = text.or(refusal).and_then(json_string) {
                    self.restated(key, &full, sink);
                }
                sink.close(key);
            }
            b"response.reasoning_summary_text.delta" | b"response.reasoning_text.delta" => {
                if let Some(d) = delta {
                    if self.reasoning.add(oi) {
                        sink.open(item_key(oi), Kind::Reasoning);
                    }
                    sink.delta(item_key(oi), d);
                }
            }
            b"response.reasoning_summary_part.added" if v.summary_index.is_some_and(|i| i > 0) => {
                sink.delta(item_key(oi), "\n\n")
            }
            b"response.function_call_arguments.delta" => {
                if let Some(d) = delta.filter(|d| !d.is_empty()) {
                    self.streamed.add(oi);
                    sink.delta(item_key(oi), d);
                }
            }
            b"response.output_item.done" => {
                let [type_, arguments, encrypted, id] = v.item.map_or([None; 4], |i| {
                    fields(i, ["type", "arguments", "encrypted_content", "id"])
                });
                match type_.and_then(json_string).as_deref() {
                    Some("function_call") => {
                        if !self.streamed.contains(oi) {
                            if let Some(args) = arguments.and_then(json_string) {
                                if !args.is_empty() {
                                    sink.delta(item_key(oi), &args);
                                }
                            }
                        }
                        sink.close(item_key(oi));
                    }
                    Some("reasoning") => {
                        if let Some(id) = id.and_then(json_string) {
                            sink.reasoning_id(item_key(oi), &id);
                        }
                        if let Some(enc) = encrypted.and_then(json_string) {
                            sink.signature(item_key(oi), &enc);
                        }
                        sink.close(item_key(oi));
                    }
                    Some("message") => self.message_done(oi, v.item.unwrap_or("{}"), sink),
                    _ => {}
                }
            }
            b"response.completed" | b"response.incomplete" => {
                // The entries the decoder read, else a read of the text.
                let keys = ["usage", "incomplete_details", "output"];
                let [usage, details, output] = match (v.response_entries, v.response) {
                    (Some(entries), _) => fields_in(entries, keys),
                    (None, Some(r)) => fields(r, keys),
                    (None, None) => [None; 3],
                };
                // The terminal object restates every item: the text of a message whose
                // `.done` events never came is held against its deltas too.
                // Each item is the one of its id the stream added, wherever the array puts it
                // (a proxy's `output_index` need not be the item's place in `output`: a
                // position read as an index wrote a message's text again into another).
                if let Some(Json::Array(items)) = output.and_then(Json::read) {
                    for (at, item) in items.iter().enumerate() {
                        let item = item.get();
                        if str_field(item, "type").as_deref() == Some("message") {
                            let oi = str_field(item, "id")
                                .and_then(|id| self.ids.get(id.as_ref()).copied())
                                .or_else(|| self.order.get(at).copied())
                                .unwrap_or(at as i64);
                            self.message_done(oi, item, sink);
                        }
                    }
                }
                if let Some(usage) = usage.and_then(openai_usage) {
                    sink.usage(&usage);
                }
                let reason = details.and_then(|d| str_field(d, "reason"));
                let stop = match (kind, reason.as_deref()) {
                    (b"response.incomplete", Some("content_filter")) => Stop::Filtered,
                    (b"response.incomplete", _) => Stop::MaxTokens,
                    _ if self.tools => Stop::ToolUse,
                    _ => Stop::EndTurn,
                };
                sink.stop(stop);
                sink.end();
            }
            _ => {}
        }
    }
}

impl ResponsesReader {
    /// A `.done` event restates part `key`'s whole text: what it adds to the deltas (a stream
    /// that elided them, a server that sends a part whole) is written now, before the part
    /// closes; a text that is not the deltas' continued is noted (the deltas stand: they were
    /// written).
    fn restated(&mut self, key: Key, full: &str, sink: &mut dyn Sink) {
        let have = self.texts.get_or_insert_with(key as i64, String::new);
        if full.len() > have.len() && full.starts_with(have.as_str()) {
            let missing = full.get(have.len()..).unwrap_or_default();
            sink.delta(key, missing);
            have.push_str(missing);
        } else if full != have.as_str() {
            sink.drop_note(
                "Responses text whose final form differs from its deltas (the deltas were written)",
            );
        }
    }

    /// A message item is done: each of its content parts' text restated (a part that never
    /// streamed is written whole), then the parts closed and their text let go.
    fn message_done(&mut self, oi: i64, item: &str, sink: &mut dyn Sink) {
        if !self.items_done.add(oi) {
            return;
        }
        let Some(Json::Array(parts)) = field(item, "content").and_then(Json::read) else {
            return;
        };
        for (ci, part) in parts.iter().enumerate() {
            let key = part_key(oi, ci as i64);
            let [text, refusal] = fields(part.get(), ["text", "refusal"]);
            if let Some(full) = text.or(refusal).and_then(json_string) {
                if refusal.is_some() && text.is_none() && !self.texts.contains(key as i64) {
                    sink.open(key, Kind::Refusal);
                }
                self.restated(key, &full, sink);
            }
            sink.close(key);
            if let Some(text) = self.texts.get_mut(key as i64) {
                *text = String::new(); // its memory freed (the part is closed)
            }
        }
    }
}

impl super::Ends for ResponsesReader {}

impl super::ReadsUsage for ResponsesReader {
    fn usage(text: &str) -> Option<Usage> {
        openai_usage(text)
    }
}

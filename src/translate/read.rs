//! The source readers: each dialect's decoded documents (`crate::dialect`'s structs) as calls
//! on a [`Sink`]. A reader keeps only which block is open and what it must not repeat (a chat
//! tool call's opening, whether a Responses call streamed its arguments).
//!
//! Keys: chat text 1, reasoning 2, refusal 3, tool call `i` is `16 + i`; Messages content block
//! `i` is `i`; Responses output item `i` is `i << 20` and its content part `c` is
//! `(i << 20) + 1 + c`.

use std::borrow::Cow;

use super::{json_string, Failure, Key, Kind, Meta, Sink, Stop, Usage};
use crate::dialect::ErrorInfo;
use crate::fold::chat::{ChunkView, ContentView, ToolView};
use crate::fold::{messages, responses};
use crate::fold::{IntMap, Json};

/// The raw JSON of `key` in the object `text`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let [value] = fields(text, [key]);
    value
}

/// The raw JSON of each of `keys` in the object `text` (the first of duplicates), read in one
/// pass: an item or a whole response holds the whole text once more.
fn fields<'a, const N: usize>(text: &'a str, keys: [&str; N]) -> [Option<&'a str>; N] {
    let mut found = [None; N];
    for (k, v) in Json::object(text).unwrap_or_default() {
        if let Some(at) = keys.iter().position(|key| *key == k) {
            if let Some(slot @ None) = found.get_mut(at) {
                *slot = Some(v.get());
            }
        }
    }
    found
}

fn str_field<'a>(text: &'a str, key: &str) -> Option<Cow<'a, str>> {
    json_string(field(text, key)?)
}

fn u64_field(text: &str, key: &str) -> Option<u64> {
    field(text, key)?.trim().parse::<u64>().ok()
}

/// An error read out of the wire, as a sink takes it.
pub fn failure_of<'a>(
    info: &'a ErrorInfo<'a>,
) -> (Cow<'a, str>, Option<Cow<'a, str>>, Option<Cow<'a, str>>) {
    let plain = |raw: Option<&'a str>| -> Option<Cow<'a, str>> {
        let raw = raw?;
        json_string(raw).or(Some(Cow::Borrowed(raw)))
    };
    (
        Cow::Borrowed(info.message.as_ref()),
        plain(info.type_),
        plain(info.code),
    )
}

/// Sends an error read out of the wire to `sink`.
pub fn send_error(info: &ErrorInfo<'_>, sink: &mut dyn Sink) {
    let (message, type_, code) = failure_of(info);
    sink.error(Failure {
        message: &message,
        type_: type_.as_deref(),
        code: code.as_deref(),
    });
}

/// OpenAI usage (chat or Responses names) in neutral terms.
fn openai_usage(text: &str) -> Option<Usage> {
    let entries = Json::object(text)?;
    let mut u = Usage::default();
    for (key, value) in entries {
        let v = value.get();
        match key.as_ref() {
            "prompt_tokens" | "input_tokens" => u.input = v.trim().parse().ok(),
            "completion_tokens" | "output_tokens" => u.output = v.trim().parse().ok(),
            "prompt_tokens_details" | "input_tokens_details" => {
                u.cache_read = u64_field(v, "cached_tokens");
                if let Some(n) = u64_field(v, "cache_write_tokens") {
                    u.cache_write = Some(n);
                }
            }
            "completion_tokens_details" | "output_tokens_details" => {
                u.reasoning = u64_field(v, "reasoning_tokens");
            }
            _ => {}
        }
    }
    Some(u)
}

/// Anthropic usage in neutral terms (its `input_tokens` excludes the cached ones).
fn anthropic_usage(text: &str) -> Option<Usage> {
    Some(Usage {
        input: None,
        uncached: u64_field(text, "input_tokens"),
        cache_read: u64_field(text, "cache_read_input_tokens"),
        cache_write: u64_field(text, "cache_creation_input_tokens"),
        output: u64_field(text, "output_tokens"),
        reasoning: None,
    })
}

// --- chat -----------------------------------------------------------------------------------------

const CHAT_TEXT: Key = 1;
const CHAT_REASONING: Key = 2;
const CHAT_REFUSAL: Key = 3;
const CHAT_TOOL: Key = 16;

/// Reads a chat completions stream (choice 0; other choices are noted and dropped).
#[derive(Debug, Default)]
pub struct ChatReader {
    /// The open text, reasoning or refusal block (one at a time: chat sends them in turn).
    open: Option<Key>,
    /// The tool calls opened, in order; they stay open until `[DONE]` (fragments of parallel
    /// calls may interleave). `opened` answers "seen?" in O(1) for hostile streams of many.
    tools: Vec<i64>,
    opened: IntMap<()>,
    /// Whether the stream has said its reasoning as `reasoning` / `reasoning_content`.
    said_reasoning: bool,
}

impl ChatReader {
    fn text(&mut self, key: Key, kind: Kind<'_>, text: &str, sink: &mut dyn Sink) {
        if text.is_empty() && self.open != Some(key) {
            return; // an empty opening fragment opens nothing
        }
        if self.open != Some(key) {
            if let Some(open) = self.open.take() {
                sink.close(open);
            }
            sink.open(key, kind);
            self.open = Some(key);
        }
        sink.delta(key, text);
    }

    fn tool(
        &mut self,
        index: i64,
        id: &str,
        name: &str,
        arguments: Option<&str>,
        sink: &mut dyn Sink,
    ) {
        let key = CHAT_TOOL.wrapping_add(index as u64);
        if self.opened.add(index) {
            if let Some(open) = self.open.take() {
                sink.close(open);
            }
            self.tools.push(index);
            sink.open(key, Kind::Tool { id, name });
        }
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            sink.delta(key, arguments);
        }
    }

    /// One view of a chunk (one choice, or the chunk-level fields of a chunk without
    /// choices): the view the chat fold reads.
    pub fn view(&mut self, v: &ChunkView<'_>, sink: &mut dyn Sink) {
        sink.meta(Meta {
            id: v.id,
            model: v.model,
            created: v.created,
        });
        match v.index {
            Some(0) => self.choice(v, sink),
            Some(_) => sink.drop_note("a second chat choice (only choice 0 is translated)"),
            None => {}
        }
        if let Some(usage) = v.usage.and_then(openai_usage) {
            sink.usage(&usage);
        }
    }

    fn choice(&mut self, v: &ChunkView<'_>, sink: &mut dyn Sink) {
        for reasoning in [v.reasoning_content, v.reasoning].into_iter().flatten() {
            self.text(CHAT_REASONING, Kind::Reasoning, reasoning, sink);
        }
        // OpenRouter's `reasoning_details` (`[]` on every content chunk: nothing).
        self.said_reasoning |= v.reasoning_content.or(v.reasoning).is_some();
        if let Some(details) = v.reasoning_details.filter(|d| d.len() > 2) {
            self.details(details, self.said_reasoning, sink);
        }
        match v.content {
            Some(ContentView::Text(text)) => self.text(CHAT_TEXT, Kind::Text, text, sink),
            Some(ContentView::Parts(parts)) => self.parts(parts, sink),
            None => {}
        }
        if let Some(refusal) = v.refusal {
            self.text(CHAT_REFUSAL, Kind::Refusal, refusal, sink);
        }
        // Calls in index order: one chunk may carry several calls' fragments in any order.
        if let [call] = v.tool_calls {
            self.call(call, sink);
        } else if !v.tool_calls.is_empty() {
            let mut calls: Vec<&ToolView<'_>> = v.tool_calls.iter().collect();
            calls.sort_by_key(|c| c.index);
            for call in calls {
                self.call(call, sink);
            }
        }
        // The legacy `function_call` delta: one call, with no id. (A vendor object without
        // the name, nor an escape that could spell it, is not read: Together sends one with
        // every chunk.)
        let may_hold = |extra: &&str| extra.contains("function_call") || extra.contains('\\');
        if let Some(f) = v
            .delta_extra
            .filter(may_hold)
            .and_then(|extra| field(extra, "function_call"))
        {
            let name = str_field(f, "name").unwrap_or_default();
            let arguments = str_field(f, "arguments");
            self.tool(0, "", &name, arguments.as_deref(), sink);
        }
        if let Some(reason) = v.finish_reason {
            sink.stop(Stop::from_chat(reason));
        }
    }

    /// OpenRouter's `reasoning_details` entries: a `reasoning.text` entry's text is reasoning
    /// (unless the stream says its reasoning as `reasoning`: OpenRouter repeats it there; the
    /// fold's `reasoning` is then the message's) and its
    /// `signature` the reasoning's signature; a `reasoning.summary` entry's summary is
    /// reasoning; a `reasoning.encrypted` entry's `data` is redacted reasoning.
    fn details(&mut self, details: &str, said: bool, sink: &mut dyn Sink) {
        let Some(Json::Array(entries)) = Json::read(details) else {
            return;
        };
        fn string(v: Option<&str>) -> Option<Cow<'_, str>> {
            v.and_then(json_string).filter(|s| !s.is_empty())
        }
        for entry in entries {
            let entry = entry.get();
            let [kind, text, summary, signature, data] =
                fields(entry, ["type", "text", "summary", "signature", "data"]);
            match string(kind).as_deref() {
                Some("reasoning.text") | Some("reasoning.summary") => {
                    if !said {
                        if let Some(text) = string(text).or_else(|| string(summary)) {
                            self.text(CHAT_REASONING, Kind::Reasoning, &text, sink);
                        }
                    }
                    if let Some(signature) = string(signature) {
                        sink.signature(CHAT_REASONING, &signature);
                    }
                }
                Some("reasoning.encrypted") => {
                    if let Some(data) = string(data) {
                        sink.redacted(CHAT_REASONING, &data);
                    }
                }
                _ => {}
            }
        }
    }

    fn call(&mut self, call: &ToolView<'_>, sink: &mut dyn Sink) {
        let id = call.id.unwrap_or("");
        let name = call.name.unwrap_or("");
        self.tool(call.index, id, name, call.arguments, sink);
    }

    /// Mistral's content parts: `text` parts are text, `thinking` parts' inner text is
    /// reasoning.
    fn parts(&mut self, parts: &str, sink: &mut dyn Sink) {
        let Some(Json::Array(parts)) = Json::read(parts) else {
            return;
        };
        for part in parts {
            let part = part.get();
            match str_field(part, "type").as_deref() {
                Some("text") => {
                    if let Some(text) = str_field(part, "text") {
                        self.text(CHAT_TEXT, Kind::Text, &text, sink);
                    }
                }
                Some("thinking") => {
                    let inner = field(part, "thinking").and_then(Json::read);
                    if let Some(Json::Array(inner)) = inner {
                        for p in inner {
                            if let Some(text) = str_field(p.get(), "text") {
                                self.text(CHAT_REASONING, Kind::Reasoning, &text, sink);
                            }
                        }
                    }
                }
                _ => sink.drop_note("a chat content part that is neither text nor thinking"),
            }
        }
    }

    /// `[DONE]`.
    pub fn done(&mut self, sink: &mut dyn Sink) {
        if let Some(open) = self.open.take() {
            sink.close(open);
        }
        self.opened.clear();
        for index in std::mem::take(&mut self.tools) {
            sink.close(CHAT_TOOL.wrapping_add(index as u64));
        }
        sink.end();
    }
}

// --- Messages ---------------------------------------------------------------------------------

/// Reads an Anthropic Messages stream.
#[derive(Debug, Default)]
pub struct MessagesReader {
    /// Blocks whose type the target cannot hold (server tool results...): their deltas go.
    dropped: IntMap<()>,
}

impl MessagesReader {
    /// One event, as the Messages fold reads it (errors come to the translation apart).
    pub fn view(&mut self, v: &messages::EventView<'_>, sink: &mut dyn Sink) {
        let kind = v.kind.as_bytes();
        let index = v.index.unwrap_or(0);
        let key = index as u64;
        match kind {
            b"message_start" => {
                let Some(message) = v.message else {
                    return;
                };
                if let Some(usage) = field(message, "usage").and_then(anthropic_usage) {
                    sink.usage(&usage);
                }
                let id = str_field(message, "id");
                let model = str_field(message, "model");
                sink.meta(Meta {
                    id: id.as_deref(),
                    model: model.as_deref(),
                    created: None,
                });
            }
            b"content_block_start" => {
                let Some(block) = v.content_block else {
                    return;
                };
                let type_ = str_field(block, "type");
                match type_.as_deref() {
                    Some("text") => {
                        sink.open(key, Kind::Text);
                        if let Some(text) = str_field(block, "text").filter(|t| !t.is_empty()) {
                            sink.delta(key, &text);
                        }
                    }
                    Some("thinking") => {
                        sink.open(key, Kind::Reasoning);
                        if let Some(text) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                            sink.delta(key, &text);
                        }
                    }
                    Some("redacted_thinking") => {
                        self.dropped.add(index);
                        let data = str_field(block, "data").unwrap_or_default();
                        sink.redacted(key, &data);
                    }
                    Some("tool_use") => {
                        let id = str_field(block, "id").unwrap_or_default();
                        let name = str_field(block, "name").unwrap_or_default();
                        sink.open(
                            key,
                            Kind::Tool {
                                id: &id,
                                name: &name,
                            },
                        );
                    }
                    other => {
                        self.dropped.add(index);
                        let what = match other {
                            Some(t) if t.ends_with("_tool_use") || t.ends_with("_tool_result") => {
                                "server tool calls and results (run by the upstream; the target has no place for them)"
                            }
                            _ => "content blocks of a type the target has no place for",
                        };
                        sink.drop_note(what);
                    }
                }
            }
            b"content_block_delta" => {
                if self.dropped.contains(index) {
                    return;
                }
                match v.delta_type {
                    Some("text_delta") => {
                        if let Some(t) = v.text {
                            sink.delta(key, t);
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = v.thinking {
                            sink.delta(key, t);
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = v.partial_json.filter(|t| !t.is_empty()) {
                            sink.delta(key, t);
                        }
                    }
                    Some("signature_delta") => {
                        if let Some(s) = v.signature {
                            sink.signature(key, s);
                        }
                    }
                    Some("citations_delta") => sink.drop_note("citations"),
                    _ => sink.drop_note("content deltas of a type the target has no place for"),
                }
            }
            b"content_block_stop" if !self.dropped.contains(index) => sink.close(key),
            b"message_delta" => {
                if let Some(reason) = v.stop_reason {
                    sink.stop(Stop::from_messages(reason, v.stop_sequence));
                }
                if let Some(usage) = v.usage.and_then(anthropic_usage) {
                    sink.usage(&usage);
                }
            }
            b"message_stop" => sink.end(),
            _ => {}
        }
    }
}

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
}

impl ResponsesReader {
    /// One event, as the Responses fold reads it (errors, `response.failed`'s included,
    /// come to the translation apart).
    pub fn view(&mut self, v: &responses::EventView<'_>, sink: &mut dyn Sink) {
        let kind = v.kind.as_bytes();
        let oi = v.output_index.unwrap_or(0);
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
                let [type_, arguments, encrypted] = v.item.map_or([None; 3], |i| {
                    fields(i, ["type", "arguments", "encrypted_content"])
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
                let [usage, details, output] = v.response.map_or([None; 3], |r| {
                    fields(r, ["usage", "incomplete_details", "output"])
                });
                // The terminal object restates every item: the text of a message whose
                // `.done` events never came is held against its deltas too.
                if let Some(Json::Array(items)) = output.and_then(Json::read) {
                    for (oi, item) in items.iter().enumerate() {
                        let item = item.get();
                        if str_field(item, "type").as_deref() == Some("message") {
                            self.message_done(oi as i64, item, sink);
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

// --- Gemini -----------------------------------------------------------------------------------

/// Gemini usage in neutral terms: its prompt count includes cached tokens (as OpenAI's does),
/// and its answer is counted in two figures, `candidatesTokenCount` and `thoughtsTokenCount`,
/// both output. Tokens of tool-use prompts are prompt tokens too.
fn gemini_usage(text: &str) -> Option<Usage> {
    let [prompt, tool_prompt, candidates, thoughts, cached] = fields(
        text,
        [
            "promptTokenCount",
            "toolUsePromptTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
            "cachedContentTokenCount",
        ],
    );
    let n = |v: Option<&str>| v.and_then(|v| v.trim().parse::<u64>().ok());
    let (candidates, thoughts) = (n(candidates), n(thoughts));
    Some(Usage {
        input: n(prompt).map(|p| p.saturating_add(n(tool_prompt).unwrap_or(0))),
        uncached: None,
        cache_read: n(cached),
        cache_write: None,
        output: (candidates.is_some() || thoughts.is_some()).then(|| {
            candidates
                .unwrap_or(0)
                .saturating_add(thoughts.unwrap_or(0))
        }),
        reasoning: thoughts,
    })
}

/// The Unix time of an RFC 3339 timestamp (Vertex's `createTime`,
/// `2026-11-20T10:00:00.123456Z`; fractions dropped, an offset applied); `None` otherwise.
fn unix_seconds(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let sep = |at: usize, c: u8| (b.get(at) == Some(&c)).then_some(());
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    sep(4, b'-')?;
    sep(7, b'-')?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    sep(13, b':')?;
    sep(16, b':')?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
    }
    let offset = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        &sign @ (b'+' | b'-') if at + 6 == b.len() => {
            sep(at + 3, b':')?;
            let minutes = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    // Days from 1970-01-01 of a proleptic Gregorian date (March-based years).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second - offset)
}

/// Whether a `usageMetadata` counts the answer (Google's last usage of a stream does).
fn counts_answer(usage: &str) -> bool {
    usage.contains("\"candidatesTokenCount\"")
}

/// What the Gemini reader has open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GeminiOpen {
    Text,
    Reasoning,
    /// A Vertex streamed call.
    Call,
}

/// Reads a Gemini stream (candidate 0; other candidates are noted and dropped). Each run of
/// parts of one kind is a block; calls carry no id, so each gets one made up from the
/// response id (or, without one, from a hash of what the stream said before and of the call
/// itself: the same stream gives the same ids, however it is cut) and its number. The stream has no
/// terminal marker: candidate 0's `finishReason` ends the target.
#[derive(Debug)]
pub struct GeminiReader {
    open: Option<(Key, GeminiOpen)>,
    /// The open streamed call's arguments writer.
    streamed: Option<crate::fold::gemini::ArgsText>,
    /// The open reasoning block's signature, written when the block closes (where Messages
    /// has it: after the thinking). Gemini signs the first part of a run.
    signature: Option<String>,
    next: Key,
    calls: u64,
    meta: bool,
    /// Candidate 0 has its `finishReason`: its blocks are closed and its stop reason given.
    finished: bool,
    /// The target's closing events are written. When the finish reason came without the
    /// answer's usage (`candidatesTokenCount`), they wait for the next chunk that has usage (a
    /// trailing usage-only chunk), or the end of the upstream.
    ended: bool,
    /// FNV-1a over the text and calls seen so far (ids for a stream without a response id).
    seen: u64,
    /// The last `usageMetadata` (its text: it is cumulative and comes with every chunk, and
    /// the targets write usage only when they open and when they end, so it is read only then).
    usage: String,
    /// `usage` was handed on.
    usage_sent: bool,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: `hash` with `bytes` added.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Default for GeminiReader {
    fn default() -> Self {
        GeminiReader {
            open: None,
            streamed: None,
            signature: None,
            next: 0,
            calls: 0,
            meta: false,
            finished: false,
            ended: false,
            seen: FNV_OFFSET,
            usage: String::new(),
            usage_sent: false,
        }
    }
}

impl GeminiReader {
    fn close_open(&mut self, sink: &mut dyn Sink) {
        if let Some((key, kind)) = self.open.take() {
            if kind == GeminiOpen::Call {
                if let Some(mut w) = self.streamed.take() {
                    let mut text = String::new();
                    w.close(&mut text);
                    sink.delta(key, &text);
                }
            }
            if let Some(sig) = self.signature.take() {
                sink.signature(key, &sig);
            }
            sink.close(key);
        }
    }

    /// Hands on the last usage, unless it was.
    fn send_usage(&mut self, sink: &mut dyn Sink) {
        if self.usage_sent {
            return;
        }
        self.usage_sent = true;
        if let Some(u) = gemini_usage(&self.usage) {
            sink.usage(&u);
        }
    }

    fn new_key(&mut self) -> Key {
        self.next += 1;
        self.next
    }

    fn call_id(&mut self, sent: Option<&str>, response_id: Option<&str>, name: &str) -> String {
        self.calls += 1;
        if response_id.is_none() {
            self.seen = fnv1a(self.seen, name.as_bytes());
        }
        match (sent, response_id) {
            (Some(id), _) if !id.is_empty() => id.to_owned(),
            (_, Some(r)) => format!("call_{r}_{}", self.calls),
            _ => format!("call_{:016x}_{}", self.seen, self.calls),
        }
    }

    /// Writes the target's closing events (candidate 0 has finished).
    fn end(&mut self, sink: &mut dyn Sink) {
        self.send_usage(sink);
        self.ended = true;
        sink.end();
    }

    /// The end of the upstream: closing events still owed are written (the finish reason came,
    /// and no usage after it). A stream cut before candidate 0 finished gets none.
    pub fn end_of_input(&mut self, sink: &mut dyn Sink) {
        if self.finished && !self.ended {
            self.end(sink);
        }
    }

    /// One chunk, as the Gemini fold reads it (errors come to the translation apart).
    pub fn view(&mut self, chunk: &crate::dialect::gemini::Chunk<'_>, sink: &mut dyn Sink) {
        if self.ended {
            if chunk.usage.is_some_and(|u| u != self.usage) {
                sink.drop_note("usage sent after the target's closing events (not written)");
            }
            return;
        }
        let response_id = chunk.response_id.as_ref().map(|s| s.as_str());
        if let Some(u) = chunk.usage.filter(|u| *u != self.usage) {
            self.usage.clear();
            self.usage.push_str(u);
            self.usage_sent = false;
        }
        if self.finished {
            // Candidate 0 is over: what follows is other candidates and the usage. A chunk of
            // usage alone, or one that counts the answer, is the last usage; another
            // candidate's chunk (Vertex: `{"trafficType": ...}` until the end) is not.
            let last = chunk
                .usage
                .is_some_and(|u| chunk.candidates.is_empty() || counts_answer(u));
            if last {
                self.end(sink);
            }
            return;
        }
        if !self.meta && (response_id.is_some() || chunk.model_version.is_some()) {
            self.meta = true;
            // The prompt's figures as the target opens (a Messages `message_start`).
            self.send_usage(sink);
            let created = chunk
                .extra
                .0
                .iter()
                .find(|(k, _)| k.as_str() == "createTime")
                .and_then(|(_, v)| json_string(v.get()))
                .and_then(|t| unix_seconds(&t));
            sink.meta(Meta {
                id: response_id,
                model: chunk.model_version.as_ref().map(|s| s.as_str()),
                created,
            });
        }
        let mut first = None;
        for (index, c) in chunk.indexed() {
            if index == 0 && first.is_none() {
                first = Some(c);
            } else {
                sink.drop_note("candidates other than the first (candidateCount above 1)");
            }
        }
        let Some(c) = first else {
            return;
        };
        for (key, value) in &c.extra.0 {
            let dropped = match key.as_str() {
                "citationMetadata" | "groundingMetadata" => {
                    "citations and grounding metadata (citationMetadata, groundingMetadata)"
                }
                "finishMessage" => "the finish message (finishMessage)",
                _ => continue,
            };
            if value.get() != "null" {
                sink.drop_note(dropped);
            }
        }
        for part in &c.parts {
            if let Some(call) = &part.function_call {
                if part.thought_signature.is_some() {
                    sink.drop_note("thought signatures of function calls");
                }
                let continues = self.streamed.is_some() && call.name.is_none();
                if !continues {
                    self.close_open(sink);
                }
                if call.is_empty() && !continues {
                    continue;
                }
                let name = call.name.as_ref().map_or("", |n| n.as_str());
                if !call.is_streamed() && !continues {
                    let key = self.new_key();
                    let id = self.call_id(call.id.as_ref().map(|s| s.as_str()), response_id, name);
                    sink.open(key, Kind::Tool { id: &id, name });
                    sink.delta(key, call.args.map_or("{}", |a| a.get()));
                    sink.close(key);
                    continue;
                }
                if !continues {
                    let key = self.new_key();
                    let id = self.call_id(call.id.as_ref().map(|s| s.as_str()), response_id, name);
                    sink.open(key, Kind::Tool { id: &id, name });
                    self.open = Some((key, GeminiOpen::Call));
                    self.streamed = Some(crate::fold::gemini::ArgsText::default());
                }
                let (Some((key, _)), Some(writer)) = (self.open, self.streamed.as_mut()) else {
                    continue;
                };
                let mut text = String::new();
                for piece in &call.partial_args {
                    let path = piece.json_path.as_ref().map_or("", |p| p.as_str());
                    // A piece that does not fit is skipped (the fold notes it).
                    let _ = writer.add(path, &piece.value, piece.will_continue, &mut text);
                }
                if !call.will_continue {
                    writer.close(&mut text);
                }
                if !text.is_empty() {
                    sink.delta(key, &text);
                }
                if !call.will_continue {
                    self.streamed = None;
                    self.open = None;
                    sink.close(key);
                }
            } else if let Some(text) = part.text_or_signature() {
                let signature = part.thought_signature.as_ref().map(|s| s.as_str());
                if !part.thought {
                    if !text.is_empty() {
                        let key = self.block(GeminiOpen::Text, sink);
                        self.text(key, text, response_id, sink);
                    }
                    if signature.is_some() {
                        sink.drop_note("thought signatures on answer text");
                    }
                    continue;
                }
                if text.is_empty() && signature.is_none() {
                    continue; // says nothing (and opens no block)
                }
                if signature.is_some() && self.signature.is_some() {
                    // A second signed run: a block of its own (as the fold keeps two signed
                    // parts apart), so no signature is lost.
                    self.close_open(sink);
                }
                let key = self.block(GeminiOpen::Reasoning, sink);
                self.text(key, text, response_id, sink);
                if let Some(sig) = signature {
                    self.signature = Some(sig.to_owned());
                }
            } else {
                self.close_open(sink);
                sink.drop_note(
                    "parts other than text, thoughts and function calls (code execution, inline data, ...)",
                );
            }
        }
        if let Some(reason) = &c.finish_reason {
            self.close_open(sink);
            sink.stop(Stop::from_gemini(reason.as_str(), self.calls > 0));
            self.finished = true;
            // Google's last chunk counts the answer with the finish reason; a usage without
            // that count is not the last one yet.
            if counts_answer(&self.usage) {
                self.end(sink);
            }
        }
    }

    /// The open block when it is of kind `want`, else a new one (the open one closed).
    fn block(&mut self, want: GeminiOpen, sink: &mut dyn Sink) -> Key {
        match self.open {
            Some((key, kind)) if kind == want => key,
            _ => {
                self.close_open(sink);
                let key = self.new_key();
                sink.open(
                    key,
                    if want == GeminiOpen::Reasoning {
                        Kind::Reasoning
                    } else {
                        Kind::Text
                    },
                );
                self.open = Some((key, want));
                key
            }
        }
    }

    /// A text delta of block `key` (nothing for an empty one).
    fn text(&mut self, key: Key, text: &str, response_id: Option<&str>, sink: &mut dyn Sink) {
        if text.is_empty() {
            return;
        }
        if response_id.is_none() {
            self.seen = fnv1a(self.seen, text.as_bytes());
        }
        sink.delta(key, text);
    }
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn create_times_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_seconds("2026-11-20T10:00:00.123456Z"),
            Some(1_795_168_800)
        );
        assert_eq!(unix_seconds("2000-02-29T12:00:00+02:00"), Some(951_818_400));
        assert_eq!(unix_seconds("1969-12-31T23:59:59-05:30"), Some(19_799));
        for bad in [
            "",
            "2026-11-20",
            "2026-13-20T10:00:00Z",
            "2026-11-20T10:00:00",
            "2026-11-20T10:00:00Zx",
            "2026-11-20T10:00:00+0200",
            "２026-11-20T10:00:00Z",
            "2026-11-20T25:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }
}

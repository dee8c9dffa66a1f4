//! The Anthropic Messages fold: stream events folded into the dict a non-streaming
//! `POST /v1/messages` response would be:
//! `{"id", "type": "message", "role", "model", "content": [blocks], "stop_reason",
//! "stop_sequence", "usage", ...}`.
//!
//! Input is an [`EventView`]: one decoded event (pings and errors never reach the fold),
//! borrowing its strings; the stream builds it from the decoded frame, the accumulator from a
//! `MessageEvent` item, and both feed the same [`MessagesFold::add`]. The rules:
//!
//! - `message_start`: `id`, `role`, `model` and every other key of its `message` (e.g.
//!   `container`) are kept; its `usage` is the base of `usage`. A second one replaces the first.
//! - content blocks, in `index` order (arrival order if an index is missing), each starting as
//!   its `content_block_start` block: `text_delta` text is appended to `text`
//!   (`citations_delta` citations to `citations`), `thinking_delta` to `thinking` (the last
//!   `signature_delta` is the `signature`), and the `input_json_delta` fragments of a tool
//!   block are concatenated and, once the block stops (or the result is built), checked as
//!   JSON and kept as its `input` (with no fragment, or only empty ones, `input` stays as
//!   `content_block_start` sent it, `{}` for the tool block types). Fragments that do not form
//!   valid JSON (or JSON nested deeper than the decoder's limit of 128 levels) are reported in
//!   `warnings`, and the block carries the joined text under `partial_json`; its `input` is
//!   the partial value read so far (`crate::json::partial`'s rules, as the anthropic SDK's final
//!   message holds it) when the fragments are valid JSON that stops early (a stream cut off or
//!   stopped by `max_tokens` mid-input), else the start `input`. The fragments are read as
//!   partial JSON as they arrive (linear in their length), for `partial_arguments`. A delta for a block that never started implies one (with a warning); an
//!   unknown delta type is ignored (one warning per block and type).
//! - `message_delta`: `stop_reason`, `stop_sequence` and any other delta key override the
//!   message's values when not null; its `usage` counts are cumulative, so each non-null value
//!   replaces the earlier one and keys seen only there are added.
//!
//! Carried across feeds: the fold state (owned; nothing borrows the input). Cost: each text
//! fragment is appended once; a tool input is validated once per stop or result after new
//! fragments (validation is linear, the nesting depth is bounded by serde_json's limit, so no
//! input recurses without bound); the other JSON is read one level deep and kept as text.

use super::summary::{texts, Node};
use super::{
    check_json, entry, json_string, list_of, note, object_entries, object_map, string_of, IntMap,
    Json, Map, Out, Patched,
};
pub use crate::dialect::messages::EventView;
use crate::json::build::{tree, Build, OutBuild};
use crate::json::partial::{Joined, SoFar};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::convert::Infallible;

/// Block types whose `input` streams as `input_json_delta` fragments and is `{}` when none came.
/// Each ends in `tool_use` (a block kept as sent is read only when its text has that).
const TOOL_BLOCKS: [&str; 3] = ["tool_use", "server_tool_use", "mcp_tool_use"];

/// Where each content block is in `blocks`, by its `index` (`None`: events that carry none).
/// A message has a handful of blocks: no hashing per delta (SipHash was ~9% of translating a
/// Messages stream).
#[derive(Debug, Default)]
struct BlockIndex {
    indexed: IntMap<usize>,
    unindexed: Option<usize>,
}

impl BlockIndex {
    fn get(&self, index: Option<i64>) -> Option<usize> {
        match index {
            Some(i) => self.indexed.get(i).copied(),
            None => self.unindexed,
        }
    }

    fn insert(&mut self, index: Option<i64>, at: usize) {
        match index {
            Some(i) => self.indexed.insert(i, at),
            None => self.unindexed = Some(at),
        }
    }
}

/// The Messages fold: everything accumulated so far.
#[derive(Debug, Default)]
pub struct MessagesFold {
    /// The `message` of the last `message_start`, as sent: read when the result is built.
    message: Option<Box<str>>,
    /// The `usage` objects of the `message_delta` events since the last `message_start`, as
    /// sent: folded over the message's own `usage` when the result is built (reading the
    /// message and the counts as they arrive was a fixed cost of every stream).
    usages: Vec<Box<str>>,
    delta: Map,
    blocks: Vec<(Option<i64>, Block)>,
    by_index: BlockIndex,
    /// The model a `fallback` block says answered (`to.model` of the last one): the message's
    /// `model`, as the non-streaming message is relabelled.
    answered_by: Option<Out>,
    /// Amazon Bedrock's `amazon-bedrock-invocationMetrics`, from the last event.
    bedrock_metrics: Option<Out>,
    warnings: Vec<String>,
}

/// The key of Amazon Bedrock's invocation metrics (token counts and latencies) on the last
/// event of an InvokeModelWithResponseStream body, and in the result.
pub const BEDROCK_METRICS: &str = "amazon-bedrock-invocationMetrics";

#[derive(Debug, Default)]
struct Block {
    start: Start,
    text: Option<String>,
    thinking: Option<String>,
    /// The joined `input_json_delta` fragments, read as partial JSON when asked.
    json: Option<Joined>,
    /// The partial value of input that stops early, set when the input is checked.
    partial: Option<Box<str>>,
    parsed: Parsed,
    /// The warning about input that is not JSON, while it stands.
    warning: Option<String>,
    citations: Option<Vec<Out>>,
    signature: Option<String>,
    /// How the notes name the block (its type and id), read from its start once: a start
    /// kept as sent is read whole to say it, and a note may come on every event.
    label: Option<String>,
    /// Keys a delta sets on the block, replacing what `content_block_start` sent (a
    /// `compaction_delta`'s `content` and `encrypted_content`).
    sets: Map,
    unknown: Vec<String>,
}

#[derive(Debug, Default, PartialEq)]
enum Parsed {
    /// New fragments since the last check.
    #[default]
    Unparsed,
    /// Only whitespace came: as if no fragment had.
    Empty,
    Valid,
    Invalid,
}

/// A block as it started.
#[derive(Debug)]
enum Start {
    /// The `content_block` of `content_block_start`, a JSON object's text as sent (valid JSON:
    /// the decoder's raw value, or a known shape's span): read when the result is built, and
    /// given as sent when no delta changed the block (a server tool's result block is
    /// kilobytes that no delta follows).
    Sent(Box<str>),
    /// A block the fold made up: implied by a delta, or a start that was not an object.
    Made(Map),
}

impl Default for Start {
    fn default() -> Self {
        Start::Made(Map::new())
    }
}

impl Start {
    /// The block a `content_block_start` sent (`implied_block(None)` when it sent no object).
    fn of(block: Option<&str>) -> Start {
        match block.filter(|b| b.trim_start().starts_with('{')) {
            Some(text) => Start::Sent(text.into()),
            None => Start::Made(implied_block(None)),
        }
    }

    /// The block's keys as a map (the last of duplicate keys counts).
    fn map(&self) -> Map {
        match self {
            Start::Sent(text) => object_map(text).unwrap_or_else(|| implied_block(None)),
            Start::Made(map) => map.clone(),
        }
    }
}

/// A type a block kept as sent is read for.
#[derive(Clone, Copy)]
enum Word {
    /// `fallback`.
    Fallback,
    /// A type in [`TOOL_BLOCKS`]: the end of its JSON string, `tool_use"`.
    ToolUse,
}

/// Whether the JSON text `text` may hold the string `word` names: it has the word's bytes, or
/// a `\u` escape (no other escape is a letter, so the word can be spelled no other way). Both
/// are SIMD scans, no slower than the copy of the text (a server tool's result block is tens
/// of kilobytes; `str::contains` was a fifth of reading one).
fn may_say(text: &str, word: Word) -> bool {
    use memchr::memmem::Finder;
    use std::sync::OnceLock;
    static FALLBACK: OnceLock<Finder<'static>> = OnceLock::new();
    static TOOL_USE: OnceLock<Finder<'static>> = OnceLock::new();
    let finder = match word {
        Word::Fallback => FALLBACK.get_or_init(|| Finder::new(b"fallback")),
        Word::ToolUse => TOOL_USE.get_or_init(|| Finder::new(b"tool_use\"")),
    };
    let bytes = text.as_bytes();
    finder.find(bytes).is_some()
        || memchr::memchr_iter(b'\\', bytes).any(|at| bytes.get(at + 1) == Some(&b'u'))
}

/// A JSON value's text as Python's `str()` would print it in a note.
fn show(value: Option<&Out>) -> String {
    match value {
        None => "None".into(),
        Some(Out::Str(s)) => s.clone(),
        Some(Out::Json(t)) => match Json::read(t) {
            Some(Json::Str(s)) => s.into_owned(),
            Some(Json::Null) => "None".into(),
            _ => t.trim().to_owned(),
        },
        Some(other) => other.to_json(),
    }
}

fn index_text(index: Option<i64>) -> String {
    index.map_or_else(|| "None".into(), |i| i.to_string())
}

impl Block {
    fn new(start: Start) -> Self {
        Block {
            start,
            ..Block::default()
        }
    }

    fn describe(&mut self, index: Option<i64>) -> String {
        let label = self.label.get_or_insert_with(|| {
            let start = self.start.map();
            let kind = show(start.get("type"));
            match start.get("id").filter(|v| !v.is_null()) {
                Some(id) if !show(Some(id)).is_empty() => format!("{kind} {}", show(Some(id))),
                _ => kind,
            }
        });
        format!("content block {} ({label})", index_text(index))
    }

    /// Checks the joined tool input once after new fragments; reports input that is not
    /// JSON in `warnings`.
    fn parse_input(&mut self, index: Option<i64>, warnings: &mut Vec<String>) {
        let Some(raw) = self.json.as_ref().map(SoFar::text) else {
            return;
        };
        if self.parsed != Parsed::Unparsed {
            return;
        }
        if raw.trim().is_empty() {
            self.parsed = Parsed::Empty;
            return;
        }
        match check_json(raw) {
            Ok(_) => self.parsed = Parsed::Valid,
            Err(err) => {
                self.parsed = Parsed::Invalid;
                self.partial = self.cut_off_value();
                let warning = if self.partial.is_some() {
                    format!(
                        "{}: the input_json_delta fragments end before the JSON does ({err}); \
                         'input' is the partial value read so far (as the SDK's final message \
                         holds it) and the joined text is kept under 'partial_json'",
                        self.describe(index)
                    )
                } else {
                    format!(
                        "{}: the input_json_delta fragments never formed valid JSON ({err}); \
                         'input' is left as content_block_start sent it and the joined text is \
                         kept under 'partial_json'",
                        self.describe(index)
                    )
                };
                if note(warnings, warning.clone()) {
                    self.warning = Some(warning);
                }
            }
        }
    }

    /// The partial value of tool input that is valid JSON so far but stops early (a stream
    /// cut off, or stopped by `max_tokens`, in the middle of it), when the decoder can hold
    /// it (nesting within its limit).
    fn cut_off_value(&mut self) -> Option<Box<str>> {
        let p = self.json.as_mut()?.read();
        if p.error().is_some() || p.complete() {
            return None;
        }
        let value = p.value_json()?;
        check_json(&value).is_ok().then(|| value.into())
    }

    fn add_json(&mut self, fragment: &str, warnings: &mut Vec<String>) {
        // Read when asked: input that is not JSON is kept as sent.
        self.json.get_or_insert_with(Joined::new).push(fragment);
        self.parsed = Parsed::Unparsed;
        if let Some(warning) = self.warning.take() {
            if let Some(at) = warnings.iter().position(|w| *w == warning) {
                warnings.remove(at);
            }
        }
    }

    /// Whether a delta changed the block (else it is as `content_block_start` sent it).
    fn changed(&self) -> bool {
        self.text.is_some()
            || self.thinking.is_some()
            || self.signature.is_some()
            || !self.sets.is_empty()
            || self.citations.is_some()
            || matches!(self.parsed, Parsed::Valid | Parsed::Invalid)
    }

    #[cfg(test)]
    fn build(&self) -> Out {
        match self.as_sent() {
            Some(text) => Out::json(text),
            None => self.build_changed(),
        }
    }

    /// The block written to `b`: as sent when it is ([`Block::as_sent`], no copy), else built.
    fn build_in<B: Build>(&self, b: &mut B) -> Result<B::Value, B::Error> {
        if let Some(text) = self.as_sent() {
            return b.json(text);
        }
        if let Some(block) = self.build_plain_in(b)? {
            return Ok(block);
        }
        if let Some(block) = self.build_over_in(b)? {
            return Ok(block);
        }
        b.out(&self.build_changed())
    }

    /// A block that took only values set whole (a tool's input, a signature, a delta's keys:
    /// no text joined to its start's, no citations), written to `b` as its start as sent with
    /// those set over it, as [`Block::build_changed`] builds it (the start read once, by the
    /// builder). `None` for any other block, for a start with a `\u` escape (the one-level
    /// reader and the builder read its keys alike only without one), and for input that is
    /// not JSON.
    fn build_over_in<B: Build>(&self, b: &mut B) -> Result<Option<B::Value>, B::Error> {
        let Start::Sent(start) = &self.start else {
            return Ok(None);
        };
        let input = match (&self.parsed, &self.json) {
            (Parsed::Valid, Some(p)) => Some(p.text()),
            (Parsed::Invalid, Some(_)) => return Ok(None),
            _ => None,
        };
        if self.text.is_some()
            || self.thinking.is_some()
            || self.citations.is_some()
            || has_unicode_escape(start)
        {
            return Ok(None);
        }
        // A tool block without input gets `"input": {}` (its type read then): only a start
        // that cannot be a tool's, or that has an input, is taken here without a read.
        if input.is_none() && may_say(start, Word::ToolUse) {
            return Ok(None);
        }
        let Some(mut out) = b.object(start)? else {
            return Ok(None);
        };
        if let Some(signature) = &self.signature {
            let signature = b.str(signature)?;
            b.set(&mut out, "signature", signature)?;
        }
        b.set_all(&mut out, &self.sets)?;
        if let Some(text) = input {
            let input = b.json(text)?;
            b.set(&mut out, "input", input)?;
        }
        Ok(Some(b.done(out)))
    }

    /// A text or thinking block that started empty ([`empty_start_keys`]) and took only its
    /// own text (a thinking block: its thinking and signature), written to `b` as
    /// [`Block::build_changed`] builds it, the text not copied on the way; `None` for any
    /// other block.
    fn build_plain_in<B: Build>(&self, b: &mut B) -> Result<Option<B::Value>, B::Error> {
        let Start::Sent(start) = &self.start else {
            return Ok(None);
        };
        let Some(keys) = empty_start_keys(start) else {
            return Ok(None);
        };
        let came = [
            ("text", self.text.as_deref()),
            ("thinking", self.thinking.as_deref()),
            ("signature", self.signature.as_deref()),
        ];
        let only_its_own = came
            .iter()
            .all(|(key, value)| value.is_none() || keys.contains(key));
        if !only_its_own || !self.sets.is_empty() || self.citations.is_some() || self.json.is_some()
        {
            return Ok(None);
        }
        let mut map = b.map(1 + keys.len())?;
        let kind = b.str(keys.first().copied().unwrap_or_default())?;
        b.set_new(&mut map, "type", kind)?;
        for &key in keys {
            let value = came
                .iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| *v)
                .unwrap_or_default();
            let value = b.str(value)?;
            b.set_new(&mut map, key, value)?;
        }
        Ok(Some(b.done(map)))
    }

    /// The start's text when the block is that start as sent: nothing changed it, and it is
    /// not a tool block without an `input` (the rule of [`Block::build_changed`]). Only a
    /// block whose type may be a tool's is read.
    fn as_sent(&self) -> Option<&str> {
        let (Start::Sent(text), false) = (&self.start, self.changed()) else {
            return None;
        };
        if !may_say(text, Word::ToolUse) {
            return Some(text);
        }
        let entries = object_entries(text)?;
        let kind = entry(&entries, "type").and_then(json_string);
        (!gets_empty_input(kind.as_deref(), entry(&entries, "input").is_some())).then_some(text)
    }

    /// The block with what came after its start set over the start.
    fn build_changed(&self) -> Out {
        let mut out = Draft::of(&self.start);
        if let Some(text) = &self.text {
            let prefix = string_of(out.get("text").as_deref()).unwrap_or_default();
            out.set("text", Out::Str(prefix + text));
        }
        if let Some(thinking) = &self.thinking {
            let prefix = string_of(out.get("thinking").as_deref()).unwrap_or_default();
            out.set("thinking", Out::Str(prefix + thinking));
        }
        if let Some(signature) = &self.signature {
            out.set("signature", Out::Str(signature.clone()));
        }
        for (key, value) in self.sets.iter() {
            out.set(key, value.clone());
        }
        if let Some(citations) = &self.citations {
            let mut all = list_of(out.get("citations").as_deref()).unwrap_or_default();
            all.extend(citations.iter().cloned());
            out.set("citations", Out::List(all));
        }
        match (&self.parsed, &self.json) {
            (Parsed::Valid, Some(p)) => out.set("input", Out::json(p.text())),
            (Parsed::Invalid, Some(p)) => {
                if let Some(partial) = &self.partial {
                    out.set("input", Out::json(partial));
                }
                out.set("partial_json", Out::Str(p.text().to_owned()));
            }
            _ => {}
        }
        let kind = string_of(out.get("type").as_deref());
        if gets_empty_input(kind.as_deref(), out.contains_key("input")) {
            out.set("input", Out::Map(Map::new()));
        }
        out.built()
    }
}

/// A changed block as [`Block::build`] makes it: a start kept as sent (a JSON object's text,
/// its entries read once, not copied into a map) with the changed keys set over it, or a made
/// start's map, changed. A start the one-level reader cannot read (a key that is a lone
/// surrogate's escape) is read as [`Start::map`] reads it, so the result's JSON and its
/// Python objects are the same.
enum Draft<'a> {
    Over(&'a str, Vec<(Cow<'a, str>, &'a str)>, Map),
    Made(Map),
}

impl<'a> Draft<'a> {
    fn of(start: &'a Start) -> Draft<'a> {
        // Read whole here: every build asks at least for the type.
        if let Start::Sent(text) = start {
            // The start of every text and thinking block, in Anthropic's spelling or Python's:
            // its map made without a read (the block's text is set over it at once).
            if let Some(map) = empty_start(text) {
                return Draft::Made(map);
            }
            if let Some(entries) = object_entries(text) {
                return Draft::Over(text, entries, Map::new());
            }
        }
        Draft::Made(start.map())
    }

    fn get(&self, key: &str) -> Option<Cow<'_, Out>> {
        match self {
            Draft::Over(_, entries, over) => match over.get(key) {
                Some(value) => Some(Cow::Borrowed(value)),
                None => entry(entries, key).map(|v| Cow::Owned(Out::json(v))),
            },
            Draft::Made(map) => map.get(key).map(Cow::Borrowed),
        }
    }

    fn contains_key(&self, key: &str) -> bool {
        match self {
            Draft::Over(_, entries, over) => {
                over.contains_key(key) || entry(entries, key).is_some()
            }
            Draft::Made(map) => map.contains_key(key),
        }
    }

    fn set(&mut self, key: &str, value: Out) {
        match self {
            Draft::Over(_, _, map) | Draft::Made(map) => map.set(key, value),
        }
    }

    fn built(self) -> Out {
        match self {
            Draft::Over(text, _, over) => Out::Patched(Box::new(Patched::new(text, over))),
            Draft::Made(map) => Out::Map(map),
        }
    }
}

/// The map of an empty text or thinking block's start spelled as Anthropic or Python's
/// `json.dumps` spells it (`{"type":"text","text":""}`; a thinking block's with its empty
/// signature), as reading it would make it; `None` for any other text.
fn empty_start(text: &str) -> Option<Map> {
    let keys = empty_start_keys(text)?;
    let mut map = Map::with_capacity(1 + keys.len());
    map.set_new("type", Out::Str(keys.first()?.to_string()));
    for key in keys {
        map.set_new(key, Out::Str(String::new()));
    }
    Some(map)
}

/// The keys of an empty text or thinking block's start ([`empty_start`]) after its `type`,
/// the first named as its type too; `None` for any other text.
fn empty_start_keys(text: &str) -> Option<&'static [&'static str]> {
    const STARTS: [(&str, &[&str]); 4] = [
        (r#"{"type":"text","text":""}"#, &["text"]),
        (r#"{"type": "text", "text": ""}"#, &["text"]),
        (
            r#"{"type":"thinking","thinking":"","signature":""}"#,
            &["thinking", "signature"],
        ),
        (
            r#"{"type": "thinking", "thinking": "", "signature": ""}"#,
            &["thinking", "signature"],
        ),
    ];
    STARTS
        .iter()
        .find(|(spelled, _)| *spelled == text)
        .map(|(_, keys)| *keys)
}

/// Whether a block of type `kind` gets `"input": {}`: a tool block ([`TOOL_BLOCKS`]) that has
/// no `input` (none came with its start, and no fragment made one).
fn gets_empty_input(kind: Option<&str>, has_input: bool) -> bool {
    !has_input && kind.is_some_and(|t| TOOL_BLOCKS.contains(&t))
}

/// The block a delta implies when it arrives for an index that never had a start.
fn implied_block(delta_type: Option<&str>) -> Map {
    let mut m = Map::new();
    let (kind, field) = match delta_type {
        Some("text_delta" | "citations_delta") => ("text", Some(("text", Out::Str(String::new())))),
        Some("thinking_delta" | "signature_delta") => {
            ("thinking", Some(("thinking", Out::Str(String::new()))))
        }
        Some("input_json_delta") => ("tool_use", Some(("input", Out::Map(Map::new())))),
        _ => {
            m.set("type", Out::Null);
            return m;
        }
    };
    m.set("type", Out::Str(kind.into()));
    if let Some((key, value)) = field {
        m.set(key, value);
    }
    m
}

impl MessagesFold {
    /// An empty fold, before the first event.
    pub fn new() -> Self {
        MessagesFold::default()
    }

    /// Notes about input the fold had to interpret (tool input that is not JSON, deltas for a
    /// block that never started, delta types it does not know), in order. Checks the tool
    /// input of blocks that have new fragments first, so input that is not JSON is reported
    /// while the stream is still open too.
    pub fn warnings(&mut self) -> &[String] {
        self.check_inputs();
        &self.warnings
    }

    fn check_inputs(&mut self) {
        for (index, block) in &mut self.blocks {
            block.parse_input(*index, &mut self.warnings);
        }
    }

    /// A `fallback` block names the model that answered (`to.model`): the message's `model`.
    fn note_fallback(&mut self, start: &Map) {
        if string_of(start.get("type")).as_deref() != Some("fallback") {
            return;
        }
        let to = match start.get("to") {
            Some(Out::Json(text)) => object_map(text),
            Some(Out::Map(m)) => Some(m.clone()),
            _ => None,
        };
        if let Some(model) = to.as_ref().and_then(|to| to.get("model")) {
            if !model.is_null() {
                self.answered_by = Some(model.clone());
            }
        }
    }

    fn block_at(&mut self, index: Option<i64>) -> Option<usize> {
        self.by_index.get(index)
    }

    /// Folds one event.
    pub fn add(&mut self, v: &EventView<'_>) {
        match v.kind {
            "content_block_delta" => self.delta(v),
            "content_block_start" => {
                let start = Start::of(v.content_block);
                // Only a block that may be a `fallback` is read here.
                let fallback = match &start {
                    Start::Sent(text) => may_say(text, Word::Fallback),
                    Start::Made(_) => false,
                };
                if fallback {
                    self.note_fallback(&start.map());
                }
                match self.block_at(v.index) {
                    Some(at) => {
                        note(
                            &mut self.warnings,
                            format!(
                                "content block {}: a second content_block_start replaced the first",
                                index_text(v.index)
                            ),
                        );
                        if let Some(slot) = self.blocks.get_mut(at) {
                            slot.1 = Block::new(start);
                        }
                    }
                    None => {
                        self.by_index.insert(v.index, self.blocks.len());
                        self.blocks.push((v.index, Block::new(start)));
                    }
                }
            }
            "content_block_stop" => {
                if let Some(at) = self.block_at(v.index) {
                    if let Some((index, block)) = self.blocks.get_mut(at) {
                        block.parse_input(*index, &mut self.warnings);
                    }
                }
            }
            "message_start" => {
                // A JSON object (the decoder read it as a JSON value): kept as sent.
                if let Some(message) = v.message.filter(|m| m.trim_start().starts_with('{')) {
                    self.message = Some(message.into());
                    self.usages.clear();
                }
            }
            "message_delta" => {
                // Read as a map: the last of duplicate keys counts.
                let delta = v
                    .raw
                    .and_then(Json::object)
                    .and_then(|entries| object_map(entry(&entries, "delta")?.get()));
                match delta {
                    Some(delta) => {
                        for (key, value) in delta.iter() {
                            if key != "type" && (!value.is_null() || !self.delta.contains_key(key))
                            {
                                self.delta.set(key, value.clone());
                            }
                        }
                    }
                    None => {
                        for (key, value) in [
                            ("stop_reason", v.stop_reason),
                            ("stop_sequence", v.stop_sequence),
                        ] {
                            if value.is_some() || !self.delta.contains_key(key) {
                                self.delta.set(key, Out::str_or_null(value));
                            }
                        }
                    }
                }
                // An object (the decoder read it as a JSON value): merged by the result.
                if let Some(usage) = v.usage.filter(|u| u.trim_start().starts_with('{')) {
                    self.usages.push(usage.into());
                }
            }
            // Amazon Bedrock's InvokeModelWithResponseStream puts its invocation metrics on
            // the last event: kept under the same key in the result.
            "message_stop" => {
                // Read only when the key is there (the usual last event is `{"type": ...}`).
                let bedrock = v.raw.filter(|raw| raw.contains(BEDROCK_METRICS));
                let metrics = bedrock.and_then(Json::object).and_then(|entries| {
                    let (_, value) = entries.iter().find(|(k, _)| k == BEDROCK_METRICS)?;
                    Some(Out::json(value.get()))
                });
                if metrics.is_some() {
                    self.bedrock_metrics = metrics;
                }
            }
            // Unknown event types carry nothing to accumulate.
            _ => {}
        }
    }

    fn delta(&mut self, v: &EventView<'_>) {
        let at = match self.block_at(v.index) {
            Some(at) => at,
            None => {
                let start = implied_block(v.delta_type);
                note(
                    &mut self.warnings,
                    format!(
                        "content block {}: {} before any content_block_start; assumed a {} block",
                        index_text(v.index),
                        v.delta_type.unwrap_or("None"),
                        show(start.get("type"))
                    ),
                );
                self.by_index.insert(v.index, self.blocks.len());
                self.blocks.push((v.index, Block::new(Start::Made(start))));
                self.blocks.len() - 1
            }
        };
        let Some((index, block)) = self.blocks.get_mut(at) else {
            return;
        };
        match v.delta_type {
            Some("text_delta") => {
                if let Some(text) = v.text {
                    block.text.get_or_insert_with(String::new).push_str(text);
                }
            }
            Some("input_json_delta") => {
                if let Some(fragment) = v.partial_json {
                    block.add_json(fragment, &mut self.warnings);
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = v.thinking {
                    block
                        .thinking
                        .get_or_insert_with(String::new)
                        .push_str(text);
                }
            }
            Some("signature_delta") => {
                if let Some(signature) = v.signature {
                    block.signature = Some(signature.to_owned());
                }
            }
            Some("citations_delta") => {
                let citation = v.citation.map_or(Out::Null, Out::json);
                block.citations.get_or_insert_with(Vec::new).push(citation);
            }
            Some("compaction_delta") => {
                // `content` streams as text does: each delta's is appended (a null one adds
                // nothing), as the TypeScript SDK's accumulator does. Every other value
                // (`encrypted_content`, sent whole) replaces the one before, unless null.
                let delta = v.raw.and_then(Json::object).and_then(|entries| {
                    object_map(entries.iter().find(|(k, _)| k == "delta")?.1.get())
                });
                for (key, value) in delta.iter().flat_map(Map::iter) {
                    let null = matches!(value, Out::Json(v) if &**v == "null");
                    if key == "type" || (null && block.sets.get(key).is_some()) {
                        continue;
                    }
                    let more = (key == "content").then(|| string_of(Some(value))).flatten();
                    let Some(more) = more else {
                        block.sets.set(key, value.clone());
                        continue;
                    };
                    // Appended in place (linear in the content however many deltas come).
                    match block.sets.get_mut(key) {
                        Some(Out::Str(old)) => old.push_str(&more),
                        Some(old) if string_of(Some(old)).is_some() => {
                            let mut text = string_of(Some(old)).unwrap_or_default();
                            text.push_str(&more);
                            *old = Out::Str(text);
                        }
                        _ => block.sets.set(key, Out::Str(more)),
                    }
                }
            }
            other => {
                let name = other.unwrap_or("None").to_owned();
                if !block.unknown.contains(&name) {
                    let shown = other.map_or_else(|| "None".into(), |t| format!("'{t}'"));
                    note(
                        &mut self.warnings,
                        format!("{}: delta type {shown} ignored", block.describe(*index)),
                    );
                    // No more types are remembered than notes are kept (a list searched on
                    // every unknown delta).
                    if block.unknown.len() < super::MAX_NOTES {
                        block.unknown.push(name);
                    }
                }
            }
        }
    }

    /// The tool input of content block `index` read so far (`partial_arguments`), `None` if
    /// no `input_json_delta` came for it.
    pub fn arguments(&self, index: i64) -> Option<&Joined> {
        let at = self.by_index.get(Some(index))?;
        self.blocks.get(at)?.1.json.as_ref()
    }

    /// The `usage` of the result: the message's (`base`, its raw JSON) with each
    /// `message_delta`'s non-null counts over it (they are cumulative: each replaces the one
    /// before; keys seen only in a delta are added).
    fn usage(&self, base: Option<&str>) -> Out {
        // The start's usage kept as sent, each later usage's keys set over it: a key's new
        // value unless it is null (`Map::merge_non_null`'s rule). The start's keys are read
        // once, and hashed only if a null asks whether the start had its key (a usage of
        // thousands of null keys stays linear). A usage the one-level reader cannot read is
        // none, as `object_map` makes it.
        let base = base.and_then(|text| Some((text, object_entries(text)?)));
        if base.is_none() && self.usages.is_empty() {
            return Out::Null;
        }
        let base_keys: OnceCell<std::collections::HashSet<&str>> = OnceCell::new();
        let mut over = Map::new();
        let had = |over: &mut Map, key: &str| {
            Ok::<_, Infallible>(
                over.contains_key(key)
                    || base.as_ref().is_some_and(|(_, entries)| {
                        base_keys
                            .get_or_init(|| entries.iter().map(|(k, _)| k.as_ref()).collect())
                            .contains(key)
                    }),
            )
        };
        let set = |over: &mut Map, key: &str, value: &str| {
            over.set(key, Out::json(value));
            Ok(())
        };
        if let Err(never) = self.each_usage_count(&mut over, had, set) {
            match never {}
        }
        match base {
            Some((text, _)) => Out::Patched(Box::new(Patched::new(text, over))),
            None => Out::Map(over),
        }
    }

    /// The `usage` of [`MessagesFold::result`], built alone (the message's entries are read
    /// one level deep; no block is built).
    pub fn result_usage(&self) -> Out {
        let entries = self
            .message
            .as_deref()
            .and_then(object_entries)
            .unwrap_or_default();
        self.usage(entry(&entries, "usage"))
    }

    /// The `message` object folded so far. Checks the tool input of blocks that have new
    /// fragments (which may add a warning).
    pub fn result(&mut self) -> Out {
        tree(self.result_in(&mut OutBuild))
    }

    /// [`result`](Self::result) written to `b`: the message's own values go to the builder
    /// as the text it sent (no copy, no tree where the builder makes none).
    pub fn result_in<B: Build>(&mut self, b: &mut B) -> Result<B::Value, B::Error> {
        self.check_inputs();
        match self.result_over_sent(b)? {
            Some(out) => Ok(out),
            None => self.result_by_entries(b),
        }
    }

    /// [`result_in`](Self::result_in) built key by key from the message's entries (read one
    /// level deep), for any message.
    fn result_by_entries<B: Build>(&self, b: &mut B) -> Result<B::Value, B::Error> {
        // The message's entries, read once, in order; the last of duplicate keys wins.
        let entries = self
            .message
            .as_deref()
            .and_then(object_entries)
            .unwrap_or_default();
        let message = |key: &str| entry(&entries, key);
        let content = if self.blocks.is_empty() {
            let mut content = Vec::new();
            let sent = message("content").map(Json::read);
            if let Some(Some(Json::Array(items))) = sent {
                for item in items {
                    content.push(b.json(item.get())?);
                }
            }
            content
        } else {
            self.blocks_in(b)?
        };
        let get = |b: &mut B, key: &str| match message(key) {
            Some(text) => b.json(text),
            None => b.null(),
        };
        let mut out = b.map(8 + entries.len())?;
        let id = get(b, "id")?;
        b.set_new(&mut out, "id", id)?;
        let kind = b.str("message")?;
        b.set_new(&mut out, "type", kind)?;
        let role = match message("role") {
            Some(r) if !said_nothing(r) => b.json(r)?,
            _ => b.str("assistant")?,
        };
        b.set_new(&mut out, "role", role)?;
        let model = match &self.answered_by {
            Some(model) => b.out(model)?,
            None => get(b, "model")?,
        };
        b.set_new(&mut out, "model", model)?;
        let content = b.list(content)?;
        b.set_new(&mut out, "content", content)?;
        for key in ["stop_reason", "stop_sequence"] {
            let value = match self.delta.get(key) {
                Some(value) => b.out(value)?,
                None => get(b, key)?,
            };
            b.set_new(&mut out, key, value)?;
        }
        let usage = b.out(&self.usage(entry(&entries, "usage")))?;
        b.set_new(&mut out, "usage", usage)?;
        for (key, text) in entries.iter() {
            if !b.has(&out, key)? {
                // The last of duplicate keys.
                let value = b.json(entry(&entries, key).unwrap_or(text))?;
                b.set(&mut out, key, value)?;
            }
        }
        self.set_delta_keys(b, &mut out)?;
        Ok(b.done(out))
    }
}

/// The keys a `message_start`'s message begins with, in Anthropic's order: the result's first
/// keys (`MessagesFold::result_in`).
const MESSAGE_KEYS: [&str; 8] = [
    "id",
    "type",
    "role",
    "model",
    "content",
    "stop_reason",
    "stop_sequence",
    "usage",
];

impl MessagesFold {
    /// The result as [`MessagesFold::result_in`] builds it, made by setting keys over the
    /// message as sent, when that gives the same object: the message begins with
    /// [`MESSAGE_KEYS`] in their order (as Anthropic writes it), its `usage` is an object, a
    /// block came, and it has no `\u` escape (the one-level reader and the builder then read
    /// its keys alike). The message is read once, by the builder, with no entry copied.
    /// `None` otherwise.
    fn result_over_sent<B: Build>(&self, b: &mut B) -> Result<Option<B::Value>, B::Error> {
        let Some(text) = self.message.as_deref() else {
            return Ok(None);
        };
        if self.blocks.is_empty() || has_unicode_escape(text) {
            return Ok(None);
        }
        let Some(mut out) = b.object(text)? else {
            return Ok(None);
        };
        if !b.first_keys(&out, &MESSAGE_KEYS)? {
            return Ok(None);
        }
        let Some(mut usage) = b.child(&mut out, "usage")? else {
            return Ok(None);
        };
        let content = self.blocks_in(b)?;
        let kind = b.str("message")?;
        b.set(&mut out, "type", kind)?;
        if b.blank(&out, "role")? {
            let role = b.str("assistant")?;
            b.set(&mut out, "role", role)?;
        }
        if let Some(model) = &self.answered_by {
            let model = b.out(model)?;
            b.set(&mut out, "model", model)?;
        }
        let content = b.list(content)?;
        b.set(&mut out, "content", content)?;
        for key in ["stop_reason", "stop_sequence"] {
            if let Some(value) = self.delta.get(key) {
                let value = b.out(value)?;
                b.set(&mut out, key, value)?;
            }
        }
        self.each_usage_count(
            &mut (&mut *b, &mut usage),
            |(b, usage), key| b.has(usage, key),
            |(b, usage), key, value| {
                let value = b.json(value)?;
                b.set(usage, key, value)
            },
        )?;
        let usage = b.done(usage);
        b.set(&mut out, "usage", usage)?;
        self.set_delta_keys(b, &mut out)?;
        Ok(Some(b.done(out)))
    }

    /// The content blocks written to `b`, in `index` order (arrival order if an index is
    /// missing).
    fn blocks_in<B: Build>(&self, b: &mut B) -> Result<Vec<B::Value>, B::Error> {
        let mut order: Vec<&(Option<i64>, Block)> = self.blocks.iter().collect();
        if order.iter().all(|(i, _)| i.is_some()) {
            order.sort_by_key(|(i, _)| *i);
        }
        let mut content = Vec::with_capacity(order.len());
        for (_, block) in order {
            content.push(block.build_in(b)?);
        }
        Ok(content)
    }

    /// The rule of `usage`: each `message_delta`'s counts, in order, handed to `set` (key,
    /// JSON text) over the message's own; a null count only where the key is new (`has`:
    /// whether the usage so far has it). The counts are cumulative: each replaces the one
    /// before.
    fn each_usage_count<T, E>(
        &self,
        usage: &mut T,
        mut has: impl FnMut(&mut T, &str) -> Result<bool, E>,
        mut set: impl FnMut(&mut T, &str, &str) -> Result<(), E>,
    ) -> Result<(), E> {
        for delta in &self.usages {
            for (key, value) in object_entries(delta).unwrap_or_default() {
                if value.trim() != "null" || !has(usage, &key)? {
                    set(usage, &key, value)?;
                }
            }
        }
        Ok(())
    }

    /// The keys of the `message_delta`s and Bedrock's metrics, set over the result.
    fn set_delta_keys<B: Build>(&self, b: &mut B, out: &mut B::Map) -> Result<(), B::Error> {
        for (key, value) in self.delta.iter() {
            // `stop_details: null` clears what `message_start` sent, as a null stop sequence
            // does; other null delta values leave the message's.
            if key != "stop_reason"
                && key != "stop_sequence"
                && (!value.is_null() || key == "stop_details" || !b.has(out, key)?)
            {
                let value = b.out(value)?;
                b.set(out, key, value)?;
            }
        }
        if let Some(metrics) = &self.bedrock_metrics {
            let metrics = b.out(metrics)?;
            b.set(out, BEDROCK_METRICS, metrics)?;
        }
        Ok(())
    }
}

/// Whether JSON text holds a `\u` escape.
fn has_unicode_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\\', bytes).any(|at| bytes.get(at + 1) == Some(&b'u'))
}

/// Whether a message's `role` (its JSON text) says nothing: `null`, or a value Python's
/// `str()` prints empty (`""`); the result then says `"assistant"`.
fn said_nothing(role: &str) -> bool {
    let role = Out::json(role);
    role.is_null() || show(Some(&role)).is_empty()
}

/// The answer's text in a Messages `message` (`crate::fold::summary`): its text blocks.
pub fn final_text(result: Node<'_>) -> String {
    texts(result.key("content"), &|_| false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str) -> EventView<'_> {
        EventView {
            kind,
            ..EventView::default()
        }
    }

    fn result(f: &mut MessagesFold) -> serde_json::Value {
        serde_json::from_str(&f.result().to_json()).unwrap()
    }

    #[test]
    fn text_and_tool_blocks() {
        let mut f = MessagesFold::new();
        f.add(&EventView {
            message: Some(r#"{"id":"msg_1","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":5,"output_tokens":1},"container":null}"#),
            ..ev("message_start")
        });
        f.add(&EventView {
            index: Some(1),
            content_block: Some(r#"{"type":"tool_use","id":"t","name":"f","input":{}}"#),
            ..ev("content_block_start")
        });
        f.add(&EventView {
            index: Some(0),
            content_block: Some(r#"{"type":"text","text":""}"#),
            ..ev("content_block_start")
        });
        for (i, dt, text) in [
            (0, "text_delta", "Hel"),
            (0, "text_delta", "lo"),
            (1, "input_json_delta", "{\"a\":"),
            (1, "input_json_delta", "[1]}"),
        ] {
            f.add(&EventView {
                index: Some(i),
                delta_type: Some(dt),
                text: (dt == "text_delta").then_some(text),
                partial_json: (dt != "text_delta").then_some(text),
                ..ev("content_block_delta")
            });
        }
        f.add(&EventView {
            index: Some(1),
            ..ev("content_block_stop")
        });
        f.add(&EventView {
            raw: Some(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}"#),
            usage: Some(r#"{"output_tokens":9}"#),
            ..ev("message_delta")
        });
        let v = result(&mut f);
        assert_eq!(v["content"][0]["text"], "Hello");
        assert_eq!(v["content"][1]["input"], serde_json::json!({"a": [1]}));
        assert_eq!(v["stop_reason"], "tool_use");
        assert_eq!(
            v["usage"],
            serde_json::json!({"input_tokens": 5, "output_tokens": 9})
        );
        assert_eq!(v["container"], serde_json::Value::Null);
        assert!(f.warnings().is_empty());
    }

    /// A `message_delta`'s delta is read as a map (the last of duplicate keys counts), and
    /// its usage is merged over the message's when the result is built.
    #[test]
    fn message_delta_keys_and_usage() {
        let mut f = MessagesFold::new();
        f.add(&EventView {
            message: Some(r#"{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}"#),
            ..ev("message_start")
        });
        for (raw, usage) in [
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_reason":"max_tokens","x":1},"usage":{"output_tokens":7}}"#,
                r#"{"output_tokens":7}"#,
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":9,"input_tokens":null}}"#,
                r#"{"output_tokens":9,"input_tokens":null}"#,
            ),
        ] {
            f.add(&EventView {
                raw: Some(raw),
                usage: Some(usage),
                ..ev("message_delta")
            });
        }
        // The usage built alone is the result's.
        assert_eq!(Some(f.result_usage()), f.result().key("usage"));
        let v = result(&mut f);
        assert_eq!(v["stop_reason"], "max_tokens");
        assert_eq!(v["x"], 1);
        assert_eq!(
            v["usage"],
            serde_json::json!({"input_tokens": 5, "output_tokens": 9})
        );
    }

    #[test]
    fn input_cut_off_is_its_partial_value_with_the_raw_text() {
        let mut f = MessagesFold::new();
        f.add(&EventView {
            index: Some(0),
            content_block: Some(r#"{"type":"tool_use","id":"t","input":{}}"#),
            ..ev("content_block_start")
        });
        for fragment in ["{\"q\": \"lo", "ng\", \"n\": [1, 2"] {
            f.add(&EventView {
                index: Some(0),
                delta_type: Some("input_json_delta"),
                partial_json: Some(fragment),
                ..ev("content_block_delta")
            });
        }
        // Joined, not read, while nobody asks (issue 47); the result reads it.
        assert_eq!(f.arguments(0).map(Joined::fed), Some(0));
        let v = result(&mut f);
        assert_eq!(f.arguments(0).map(Joined::fed), Some(24));
        assert_eq!(
            v["content"][0]["input"],
            serde_json::json!({"q": "long", "n": [1]})
        );
        assert_eq!(
            v["content"][0]["partial_json"],
            "{\"q\": \"long\", \"n\": [1, 2"
        );
        assert!(f.warnings()[0].contains("end before the JSON does"));
        assert_eq!(
            f.arguments(0).map(SoFar::text),
            Some("{\"q\": \"long\", \"n\": [1, 2")
        );
        assert!(f.arguments(1).is_none());
    }

    #[test]
    fn invalid_or_deep_input_is_a_warning_not_a_panic() {
        for input in [
            "{\"a\":",
            &"[".repeat(5000),
            &format!("{}{}", "[".repeat(300), "]".repeat(300)),
        ] {
            let mut f = MessagesFold::new();
            f.add(&EventView {
                index: Some(0),
                content_block: Some(r#"{"type":"tool_use","id":"t","input":{}}"#),
                ..ev("content_block_start")
            });
            f.add(&EventView {
                index: Some(0),
                delta_type: Some("input_json_delta"),
                partial_json: Some(input),
                ..ev("content_block_delta")
            });
            let v = result(&mut f);
            assert_eq!(v["content"][0]["input"], serde_json::json!({}));
            assert_eq!(v["content"][0]["partial_json"], input);
            assert_eq!(f.warnings().len(), 1, "{:?}", f.warnings());
            assert!(f.warnings()[0].contains("content block 0 (tool_use t)"));
            // A new fragment withdraws the warning; reading the warnings checks the input
            // again, so the input that is still not JSON is reported once, not twice.
            f.add(&EventView {
                index: Some(0),
                delta_type: Some("input_json_delta"),
                partial_json: Some(" "),
                ..ev("content_block_delta")
            });
            assert_eq!(f.warnings().len(), 1, "{:?}", f.warnings());
        }
    }

    #[test]
    fn implied_blocks_and_unknown_deltas() {
        let mut f = MessagesFold::new();
        f.add(&EventView {
            index: Some(2),
            delta_type: Some("thinking_delta"),
            thinking: Some("hm"),
            ..ev("content_block_delta")
        });
        for _ in 0..2 {
            f.add(&EventView {
                index: Some(2),
                delta_type: Some("new_delta"),
                ..ev("content_block_delta")
            });
        }
        let v = result(&mut f);
        assert_eq!(
            v["content"][0],
            serde_json::json!({"type": "thinking", "thinking": "hm"})
        );
        assert_eq!(v["role"], "assistant");
        assert_eq!(f.warnings().len(), 2, "{:?}", f.warnings());
        assert!(f.warnings()[1].contains("'new_delta' ignored"));
    }

    /// A block as the fold read it before it kept blocks as sent: its keys as a map, with the
    /// tool blocks' `{}` input rule.
    fn read_block(text: &str) -> serde_json::Value {
        serde_json::from_str(&read_block_out(text).to_json()).unwrap()
    }

    fn read_block_out(text: &str) -> Out {
        let mut m = object_map(text).unwrap_or_else(|| implied_block(None));
        let tool = string_of(m.get("type")).is_some_and(|t| TOOL_BLOCKS.contains(&t.as_str()));
        if tool && !m.contains_key("input") {
            m.set("input", Out::Map(Map::new()));
        }
        Out::Map(m)
    }

    /// An object as Python's `dict` holds it: keys in the order they first came, each with
    /// its last value.
    fn as_dict(out: &Out) -> Vec<(String, serde_json::Value)> {
        let entries: Vec<(String, String)> = match out {
            Out::Map(m) => m.iter().map(|(k, v)| (k.to_owned(), v.to_json())).collect(),
            Out::Json(t) => object_entries(t)
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.to_owned()))
                .collect(),
            // As `py::json` converts it: the object's entries, then the keys set over them.
            Out::Patched(p) => object_entries(p.base())
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.to_owned()))
                .chain(p.over().iter().map(|(k, v)| (k.to_owned(), v.to_json())))
                .collect(),
            other => panic!("not an object: {other:?}"),
        };
        let mut dict: Vec<(String, serde_json::Value)> = Vec::new();
        for (key, value) in entries {
            let value = serde_json::from_str(&value).unwrap();
            match dict.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => dict.push((key, value)),
            }
        }
        dict
    }

    fn started(blocks: &[&str]) -> MessagesFold {
        let mut f = MessagesFold::new();
        for (i, block) in blocks.iter().enumerate() {
            f.add(&EventView {
                index: Some(i as i64),
                content_block: Some(block),
                ..ev("content_block_start")
            });
        }
        f
    }

    /// An empty text or thinking block's start is made without a read, as reading it makes
    /// it; a start spelled any other way is read.
    #[test]
    fn an_empty_start_is_made_as_its_read_makes_it() {
        for text in [
            r#"{"type":"text","text":""}"#,
            r#"{"type": "text", "text": ""}"#,
            r#"{"type":"thinking","thinking":"","signature":""}"#,
            r#"{"type": "thinking", "thinking": "", "signature": ""}"#,
        ] {
            let made = empty_start(text).expect(text);
            assert_eq!(
                Out::Map(made).to_json(),
                Out::Map(object_map(text).unwrap()).to_json()
            );
        }
        for other in [
            r#"{"type":"text","text":"a"}"#,
            r#"{"type":"text","text":"","citations":[]}"#,
            r#"{"text":"","type":"text"}"#,
            r#"{"type":"text", "text":""}"#,
            r#" {"type":"text","text":""}"#,
            r#"{"type":"thinking","thinking":""}"#,
        ] {
            assert!(empty_start(other).is_none(), "{other}");
        }
    }

    #[test]
    fn blocks_no_delta_changed_are_kept_as_sent() {
        assert!(TOOL_BLOCKS.iter().all(|t| t.ends_with("tool_use")));
        let result_block = r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"\"q\"","url":"https://example.com","encrypted_content":"EqQB"}]}"#;
        let blocks = [
            result_block,
            r#"{"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"q"}}"#,
            // A tool block without an input gets `{}`, its type however spelled, the last of
            // duplicate types counting.
            r#"{"type":"server_tool_use","id":"s","name":"web_search"}"#,
            r#"{"type":"mcp_t\u006fol_use","id":"m"}"#,
            r#"{"type":"text","id":"x","type":"tool_use"}"#,
            r#"{"type":"tool_use","id":"x","type":"text"}"#,
            r#"{ "type" : "text" , "text" : "" , "text" : "kept" }"#,
        ];
        let mut f = started(&blocks);
        let built: Vec<Out> = f.blocks.iter().map(|(_, b)| b.build()).collect();
        // Read by nobody: the text as sent, not a map.
        assert!(matches!(&built[0], Out::Json(t) if &**t == result_block));
        assert!(matches!(&built[1], Out::Json(_)));
        let v = result(&mut f);
        for (i, block) in blocks.iter().enumerate() {
            assert_eq!(v["content"][i], read_block(block), "{block}");
        }
        assert_eq!(v["content"][2]["input"], serde_json::json!({}));
        assert_eq!(v["content"][3]["input"], serde_json::json!({}));
        assert_eq!(v["content"][4]["input"], serde_json::json!({}));
        assert!(v["content"][5].get("input").is_none());
        assert_eq!(v["content"][6]["text"], "kept");
        // A delta changes a block: it is read then.
        f.add(&EventView {
            index: Some(6),
            delta_type: Some("text_delta"),
            text: Some("!"),
            ..ev("content_block_delta")
        });
        assert_eq!(result(&mut f)["content"][6]["text"], "kept!");
        // Read, not copied: the start as sent with the text set over it, in its place.
        let changed = f.blocks[6].1.build();
        assert!(matches!(&changed, Out::Patched(p) if p.over().len() == 1));
        assert_eq!(
            as_dict(&changed),
            [
                ("type".to_owned(), "text".into()),
                ("text".to_owned(), "kept!".into())
            ]
        );
    }

    /// A start or a usage the one-level reader cannot read (a key that is a lone surrogate's
    /// escape: the decoder keeps the value raw) is read as a map reads it, not given as sent
    /// with keys set over it: its Python objects would then show what its JSON does not.
    #[test]
    fn an_unreadable_start_or_usage_is_read_as_a_map_reads_it() {
        let block = r#"{"type":"text","text":"a","\ud800":1}"#;
        assert!(object_entries(block).is_none());
        let mut f = started(&[block]);
        f.add(&EventView {
            index: Some(0),
            delta_type: Some("text_delta"),
            text: Some("b"),
            ..ev("content_block_delta")
        });
        let built = f.blocks[0].1.build();
        assert!(matches!(&built, Out::Map(_)), "{built:?}");
        assert_eq!(built.key("text"), Some(Out::Str("b".into())));
        let mut f = MessagesFold::new();
        f.add(&EventView {
            message: Some(r#"{"id":"m","usage":{"input_tokens":5,"\ud800":1}}"#),
            ..ev("message_start")
        });
        f.add(&EventView {
            usage: Some(r#"{"output_tokens":3}"#),
            ..ev("message_delta")
        });
        let usage = f.result_usage();
        assert!(matches!(&usage, Out::Map(_)), "{usage:?}");
        assert_eq!(usage.to_json(), r#"{"output_tokens":3}"#);
        // A readable one: the usage as sent, the new count set over it in its place.
        let mut f = MessagesFold::new();
        f.add(&EventView {
            message: Some(r#"{"id":"m","usage":{"input_tokens":5,"output_tokens":1,"x":2}}"#),
            ..ev("message_start")
        });
        f.add(&EventView {
            usage: Some(r#"{"output_tokens":3,"x":null,"y":null}"#),
            ..ev("message_delta")
        });
        let usage = f.result_usage();
        assert!(matches!(&usage, Out::Patched(_)), "{usage:?}");
        assert_eq!(
            usage.to_json(),
            r#"{"input_tokens":5,"output_tokens":3,"x":2,"y":null}"#
        );
    }

    /// A block's name in the notes is read from its start once: a note may come on every
    /// event, and a start kept as sent is read whole to say it (a 4 MiB block and a note on
    /// each of thousands of events was quadratic).
    #[test]
    fn a_blocks_name_is_read_once() {
        let mut f = started(&[r#"{"type":"tool_use","id":"t1","name":"f","input":{}}"#]);
        for j in 0..3 {
            f.add(&EventView {
                index: Some(0),
                delta_type: Some(["x", "y", "z"][j]),
                ..ev("content_block_delta")
            });
        }
        assert_eq!(f.warnings().len(), 3);
        assert!(
            f.warnings()[2].starts_with("content block 0 (tool_use t1)"),
            "{:?}",
            f.warnings()
        );
        let block = &mut f.blocks[0].1;
        assert_eq!(block.label.as_deref(), Some("tool_use t1"));
        // Read from the label from now on, not the start.
        block.start = Start::Made(Map::new());
        assert_eq!(block.describe(Some(0)), "content block 0 (tool_use t1)");
    }

    #[test]
    fn a_fallback_block_is_read_however_its_type_is_spelled() {
        for block in [
            r#"{"type":"fallback","to":{"model":"claude-b"}}"#,
            r#"{"type":"fallbac\u006b","to":{"model":"claude-b"}}"#,
            r#"{"type" : "fallback" , "to" : { "model" : "claude-b" } }"#,
        ] {
            let mut f = started(&[block]);
            assert_eq!(result(&mut f)["model"], "claude-b", "{block}");
        }
        let mut f = started(&[r#"{"type":"text","to":{"model":"claude-b"}}"#]);
        assert_eq!(result(&mut f)["model"], serde_json::Value::Null);
    }

    /// The keys and values the block proptests below build blocks of (tool and result types,
    /// escapes, duplicate keys, a signature).
    const BLOCK_KEYS: [&str; 8] = [
        "\"type\"",
        "\"input\"",
        "\"id\"",
        "\"tool_use_id\"",
        "\"signature\"",
        "\"t\\u0079pe\"",
        "\"content\"",
        "\"type\"",
    ];
    const BLOCK_VALUES: [&str; 14] = [
        "\"tool_use\"",
        "\"server_tool_use\"",
        "\"mcp_tool_use\"",
        "\"text\"",
        "\"web_search_tool_result\"",
        "\"tool\\u005fuse\"",
        "{}",
        "{\"q\":[1,\"\\\"\"]}",
        "[{\"type\":\"tool_use\"}]",
        "null",
        "\"tool_use_x\"",
        "\"compaction\"",
        "\"redacted_thinking\"",
        "\"x\"",
    ];

    proptest::proptest! {
        /// Blocks of keys and values like the providers' (tool and result types, escapes,
        /// duplicate keys, spacing), no delta after them: the result is each block read as a
        /// map, with the tool blocks' input rule.
        #[test]
        fn blocks_kept_as_sent_read_as_maps_do(
            members in proptest::collection::vec((0usize..8, 0usize..14, 0usize..3), 0..7),
        ) {
            let block = crate::json::cursor::tests::object_text(&members, &BLOCK_KEYS, &BLOCK_VALUES);
            let mut f = started(&[&block]);
            proptest::prop_assert_eq!(&result(&mut f)["content"][0], &read_block(&block), "{}", block);
            // The keys in the same order too, as Python's dict holds them.
            let built = f.blocks[0].1.build();
            proptest::prop_assert_eq!(as_dict(&built), as_dict(&read_block_out(&block)), "{}", block);
        }
    }

    proptest::proptest! {
        /// Blocks like those above, then changed by values set whole (input fragments that
        /// are JSON, are not, or are blank; a signature; a compaction delta's keys): a block
        /// written as its start with those set over it is the block built key by key, keys in
        /// the same order (as Python's dict holds them); and which blocks are written so.
        #[test]
        fn a_block_set_over_its_start_is_the_one_built_key_by_key(
            members in proptest::collection::vec((0usize..8, 0usize..14, 0usize..3), 0..7),
            input in 0usize..5,
            signature in proptest::bool::ANY,
            sets in 0usize..3,
        ) {
            let block = crate::json::cursor::tests::object_text(&members, &BLOCK_KEYS, &BLOCK_VALUES);
            let mut f = started(&[&block]);
            let delta = |kind| EventView { index: Some(0), delta_type: Some(kind), ..ev("content_block_delta") };
            let fragments: &[&str] = match input {
                0 => &[],
                1 => &["{\"a\": [1, ", "\"b\"]}"],
                2 => &["{\"a\": "],
                3 => &["  "],
                _ => &["[]"],
            };
            for fragment in fragments {
                f.add(&EventView { partial_json: Some(fragment), ..delta("input_json_delta") });
            }
            if signature {
                f.add(&EventView { signature: Some("sig"), ..delta("signature_delta") });
            }
            let raw = [
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","encrypted_content":"e"}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"c","id":null}}"#,
            ];
            if let Some(raw) = raw.get(sets) {
                f.add(&EventView { raw: Some(raw), ..delta("compaction_delta") });
            }
            f.check_inputs();
            let b = &f.blocks[0].1;
            let over = b.build_over_in(&mut OutBuild).unwrap_or_else(|never| match never {});
            if let Some(over) = &over {
                proptest::prop_assert_eq!(as_dict(over), as_dict(&b.build_changed()), "{}", block);
            }
            // Taken unless the input is not JSON, or none came to a block that may be a tool's.
            let taken = match input {
                1 | 4 => true,
                2 => false,
                _ => !block.contains("tool_use\""),
            };
            proptest::prop_assert_eq!(over.is_some(), taken && !block.contains("\\u"), "{}", block);
        }
    }

    /// A message's entries for the proptest below: Anthropic's keys in its order or not, a
    /// role that says nothing or something, a usage or none, a key of its own.
    fn message_text(order: usize, role: usize, usage: usize, extra: bool) -> String {
        let role = ["\"assistant\"", "\"\"", "null", "\"user\""][role % 4];
        let usage = [
            r#"{"input_tokens":5,"output_tokens":1,"x":2}"#,
            r#"{}"#,
            "null",
            r#"{"input_tokens":5,"input_tokens":6}"#,
        ][usage % 4];
        let mut keys = vec![
            ("id", r#""msg_1""#.to_owned()),
            ("type", r#""message""#.to_owned()),
            ("role", role.to_owned()),
            ("model", r#""claude-x""#.to_owned()),
            ("content", "[]".to_owned()),
            ("stop_reason", "null".to_owned()),
            ("stop_sequence", "null".to_owned()),
            ("usage", usage.to_owned()),
        ];
        match order % 4 {
            1 => keys.swap(0, 3),
            2 => {
                keys.remove(2);
            }
            3 => keys.push(("id", r#""msg_2""#.to_owned())),
            _ => {}
        }
        if extra {
            keys.push(("container", r#"{"id":"c"}"#.to_owned()));
        }
        let body: Vec<String> = keys.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(","))
    }

    proptest::proptest! {
        /// The result set over the message as sent is the result built key by key from its
        /// entries, whenever it is made; and it is made for Anthropic's order with a usage
        /// object and a block.
        #[test]
        fn a_result_set_over_the_message_is_the_one_built_key_by_key(
            order in 0usize..4,
            role in 0usize..4,
            usage in 0usize..4,
            extra: bool,
            blocks in proptest::collection::vec(0usize..4, 0..4),
            deltas in proptest::collection::vec((0usize..6, 0usize..5), 0..4),
            fallback: bool,
        ) {
            let mut f = MessagesFold::new();
            let message = message_text(order, role, usage, extra);
            f.add(&EventView { message: Some(&message), ..ev("message_start") });
            let starts = [
                r#"{"type":"text","text":""}"#,
                r#"{"type":"thinking","thinking":"","signature":""}"#,
                r#"{"type":"tool_use","id":"t","name":"f","input":{}}"#,
                r#"{"type": "text", "text": "", "citations": []}"#,
            ];
            for (i, &kind) in blocks.iter().enumerate() {
                let index = Some(i as i64);
                let start = starts[kind];
                f.add(&EventView { index, content_block: Some(start), ..ev("content_block_start") });
                let delta = match kind {
                    1 => EventView { index, delta_type: Some("thinking_delta"), thinking: Some("hm"), ..ev("content_block_delta") },
                    2 => EventView { index, delta_type: Some("input_json_delta"), partial_json: Some(r#"{"a":1}"#), ..ev("content_block_delta") },
                    _ => EventView { index, delta_type: Some("text_delta"), text: Some("a\"b"), ..ev("content_block_delta") },
                };
                if i % 2 == 0 {
                    f.add(&delta);
                }
                if kind == 1 && i % 3 == 0 {
                    f.add(&EventView { index, delta_type: Some("signature_delta"), signature: Some("sig"), ..ev("content_block_delta") });
                }
            }
            if fallback {
                let index = Some(blocks.len() as i64);
                let start = r#"{"type":"fallback","to":{"model":"claude-y"}}"#;
                f.add(&EventView { index, content_block: Some(start), ..ev("content_block_start") });
            }
            let delta_keys = [
                r#""stop_reason":"end_turn""#,
                r#""stop_sequence":null"#,
                r#""stop_details":null"#,
                r#""stop_details":{"type":"x"}"#,
                r#""container":null"#,
                r#""new_key":1"#,
            ];
            let usages = [
                r#"{"output_tokens":3}"#,
                r#"{"output_tokens":null,"y":null}"#,
                r#"{"x":null,"z":4}"#,
                r#"{}"#,
                r#"{"input_tokens":7,"input_tokens":8}"#,
            ];
            for &(key, usage) in &deltas {
                let raw = format!(r#"{{"type":"message_delta","delta":{{{}}},"usage":{}}}"#, delta_keys[key], usages[usage]);
                f.add(&EventView { raw: Some(&raw), usage: Some(usages[usage]), ..ev("message_delta") });
            }
            f.check_inputs();
            let by_entries = tree(f.result_by_entries(&mut OutBuild)).to_json();
            let over = match f.result_over_sent(&mut OutBuild) {
                Ok(over) => over,
                Err(never) => match never {},
            };
            let expected = matches!(order % 4, 0 | 3) && usage % 4 != 2 && !f.blocks.is_empty();
            proptest::prop_assert_eq!(over.is_some(), expected, "{}", message);
            if let Some(over) = over {
                proptest::prop_assert_eq!(&over.to_json(), &by_entries, "{}", message);
            }
            proptest::prop_assert_eq!(&f.result().to_json(), &by_entries);
        }
    }
}

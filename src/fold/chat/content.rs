//! A choice's message parts: `content` as a string or as typed parts (Mistral's thinking and
//! text parts joined run by run), `reasoning_details` blocks merged by `index`, and
//! `logprobs` lists concatenated.

#[allow(clippy::wildcard_imports)]
use super::*;
use std::borrow::Cow;

use crate::fold::Entry;
use crate::json::cursor::Cursor;
use crate::json::read::scan_string;

/// String fields of a `reasoning_details` block that stream as fragments.
pub(super) const REASONING_TEXT_KEYS: [&str; 3] = ["text", "summary", "data"];

#[derive(Debug, Default)]
pub(super) enum Content {
    #[default]
    None,
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, PartialEq)]
pub(super) enum Part {
    /// `{"type": "text", "text": ...}`
    Text(String),
    /// `{"type": "thinking", "thinking": [inner parts]}`
    Thinking(Vec<Part>),
    /// Any other part, as sent.
    Other(Box<str>),
}

/// `reasoning_details`: a list of blocks, or (garbage input) a value that is not a list, kept
/// as sent until a list comes.
#[derive(Debug)]
pub(super) enum DetailsState {
    Value(Box<str>),
    List(Details),
}

#[derive(Debug, Default)]
pub(super) struct Details {
    pub(super) blocks: Vec<Block>,
    /// Merged blocks by the JSON text of their `index`.
    pub(super) by_index: HashMap<Box<str>, usize>,
    /// The index of the block merged last and where it is: the next delta's, most often
    /// (looked up without hashing).
    pub(super) last: Option<(Box<str>, usize)>,
}

#[derive(Debug)]
pub(super) enum Block {
    Raw(Box<str>),
    Merged(Keyed<Merged>),
}

#[derive(Debug, Default)]
pub(super) struct Logprobs {
    pub(super) content: Option<Vec<Box<str>>>,
    pub(super) refusal: Option<Vec<Box<str>>>,
}

impl Content {
    pub(super) fn add_text(&mut self, text: &str) {
        match self {
            Content::None => *self = Content::Text(text.to_owned()),
            Content::Text(s) => s.push_str(text),
            // An empty fragment adds no part (Mistral opens with `"content": ""`).
            Content::Parts(_) if text.is_empty() => {}
            Content::Parts(parts) => push_part(parts, Part::Text(text.to_owned())),
        }
    }

    /// Adds a thinking part of one text part, as [`add_parts`](Self::add_parts) adds its
    /// JSON ([`crate::dialect::chat::thinking_parts`]).
    pub(super) fn add_thinking(&mut self, text: &str) {
        let mut parts = self.take_parts();
        push_part(
            &mut parts,
            Part::Thinking(vec![Part::Text(text.to_owned())]),
        );
        *self = Content::Parts(parts);
    }

    /// The parts so far, taken (text that came before them is the first text part).
    fn take_parts(&mut self) -> Vec<Part> {
        match std::mem::take(self) {
            Content::None => Vec::new(),
            Content::Text(s) if s.is_empty() => Vec::new(),
            Content::Text(s) => vec![Part::Text(s)],
            Content::Parts(parts) => parts,
        }
    }

    pub(super) fn add_parts(&mut self, json: &str) {
        let mut parts = self.take_parts();
        // Mistral's reasoning models send every delta as parts: read in one pass.
        if let Some(read) = parts_in_one_pass(json) {
            for part in read {
                push_part(&mut parts, part);
            }
            *self = Content::Parts(parts);
            return;
        }
        match Json::read(json) {
            Some(Json::Array(items)) => {
                for item in items {
                    push_part(&mut parts, Part::read(item.get(), true));
                }
            }
            Some(Json::Null) | None => {}
            Some(_) => push_part(&mut parts, Part::Other(json.into())),
        }
        *self = Content::Parts(parts);
    }

    pub(super) fn build(&self) -> Out {
        match self {
            Content::None => Out::Null,
            Content::Text(s) => Out::Str(s.clone()),
            Content::Parts(parts) => Out::List(parts.iter().map(Part::build).collect()),
        }
    }
}

/// Appends `part`, merging it into the last part when both are text, or both thinking.
pub(super) fn push_part(parts: &mut Vec<Part>, part: Part) {
    match (parts.last_mut(), part) {
        (Some(Part::Text(last)), Part::Text(text)) => last.push_str(&text),
        (Some(Part::Thinking(last)), Part::Thinking(inner)) => {
            for p in inner {
                push_part(last, p);
            }
        }
        (_, part) => parts.push(part),
    }
}

/// The parts of a `content` list as [`Part::read`] reads each item, in one pass over the list
/// (each item read once, a thinking part's inner parts too); `None` when `json` is not a list
/// or the strict reader is not sure (the caller then reads it with serde_json).
pub(super) fn parts_in_one_pass(json: &str) -> Option<Vec<Part>> {
    let mut c = Cursor::new(json);
    c.open_array()?;
    let mut parts = Vec::new();
    let mut first = true;
    while c.next_item(&mut first)? {
        parts.push(Part::read_at(&mut c, true)?);
    }
    c.at_end().then_some(parts)
}

impl Part {
    /// [`Part::read`] of the value at the cursor, read once: its first `type`, `text` and
    /// `thinking` values noted as the members go by, the rule applied at its end.
    fn read_at(c: &mut Cursor<'_>, outer: bool) -> Option<Part> {
        let start = c.mark();
        if c.peek()? != b'{' {
            return Some(Part::Other(c.value()?.into()));
        }
        // Each field's first value: `Some(None)` when it is not of the type the rule reads.
        let mut kind: Option<Option<Cow<'_, str>>> = None;
        let mut text: Option<Option<Cow<'_, str>>> = None;
        let mut thinking: Option<Option<Vec<Part>>> = None;
        let mut count = 0usize;
        c.members(|c, key| {
            count += 1;
            match key {
                "type" if kind.is_none() => kind = Some(string_at(c)?),
                "text" if text.is_none() => text = Some(string_at(c)?),
                "thinking" if thinking.is_none() && outer && c.peek()? == b'[' => {
                    c.open_array()?;
                    let mut inner = Vec::new();
                    let mut first = true;
                    while c.next_item(&mut first)? {
                        push_part(&mut inner, Part::read_at(c, false)?);
                    }
                    thinking = Some(Some(inner));
                }
                "thinking" if thinking.is_none() => {
                    c.value()?;
                    thinking = Some(None);
                }
                _ => {
                    c.value()?;
                }
            }
            Some(())
        })?;
        match (kind.flatten().as_deref(), count) {
            (Some("text"), 2) => {
                if let Some(Some(text)) = text {
                    return Some(Part::Text(text.into_owned()));
                }
            }
            (Some("thinking"), 2) => {
                if let Some(Some(inner)) = thinking {
                    return Some(Part::Thinking(inner));
                }
            }
            _ => {}
        }
        Some(Part::Other(c.since(start)?.into()))
    }

    /// Reads one part; `outer` allows a `thinking` part (whose inner parts are read as text
    /// or kept as sent, one level only).
    pub(super) fn read(json: &str, outer: bool) -> Part {
        let Some(entries) = Json::object(json) else {
            return Part::Other(json.into());
        };
        let field = |name: &str| {
            entries
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.get())
        };
        let kind = field("type").and_then(|t| match Json::read(t) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        });
        match (kind.as_deref(), entries.len()) {
            (Some("text"), 2) => {
                if let Some(Json::Str(text)) = field("text").and_then(Json::read) {
                    return Part::Text(text.into_owned());
                }
            }
            (Some("thinking"), 2) if outer => {
                if let Some(Json::Array(inner)) = field("thinking").and_then(Json::read) {
                    let mut parts = Vec::new();
                    for p in inner {
                        push_part(&mut parts, Part::read(p.get(), false));
                    }
                    return Part::Thinking(parts);
                }
            }
            _ => {}
        }
        Part::Other(json.into())
    }

    pub(super) fn build(&self) -> Out {
        match self {
            Part::Text(text) => {
                let mut m = Map::new();
                m.set("type", Out::Str("text".into()));
                m.set("text", Out::Str(text.clone()));
                Out::Map(m)
            }
            Part::Thinking(inner) => {
                let mut m = Map::new();
                m.set("type", Out::Str("thinking".into()));
                m.set(
                    "thinking",
                    Out::List(inner.iter().map(Part::build).collect()),
                );
                Out::Map(m)
            }
            Part::Other(json) => Out::json(json),
        }
    }
}

/// The string at the cursor (`Some(None)`: another value, skipped).
fn string_at<'a>(c: &mut Cursor<'a>) -> Option<Option<Cow<'a, str>>> {
    if c.peek()? == b'"' {
        return Some(Some(c.string()?.0));
    }
    c.value()?;
    Some(None)
}

/// One field of a `reasoning_details` block as the merge reads it: the value of a fragment
/// key ([`REASONING_TEXT_KEYS`]) that is a string, decoded; any other value as its JSON text.
#[derive(Debug, PartialEq)]
pub(super) enum Field<'a> {
    Text(Cow<'a, str>),
    Json(&'a str),
}

/// A `reasoning_details` block's fields, in order.
pub(super) type Fields<'a> = Vec<(Cow<'a, str>, Field<'a>)>;

/// The field of `key` whose value is the JSON `text`.
fn field<'a>(key: &str, text: &'a str) -> Field<'a> {
    if REASONING_TEXT_KEYS.contains(&key) {
        if let Some(Json::Str(s)) = Json::read(text) {
            return Field::Text(s);
        }
    }
    Field::Json(text)
}

fn fields<'a>(entries: Vec<Entry<'a>>) -> Fields<'a> {
    entries
        .into_iter()
        .map(|(key, value)| {
            let f = field(&key, value.get());
            (key, f)
        })
        .collect()
}

/// The blocks of a `reasoning_details` value when it is a JSON array of objects only (as
/// [`Json::objects`] reads it), each field read once: by the strict one-pass reader
/// (`json::cursor`), or by serde_json when that reader is not sure (a key with an escape...).
/// OpenRouter sends one on every reasoning chunk; reading it with serde_json and each text
/// again was a fifth of consuming such a stream.
pub(super) fn blocks(text: &str) -> Option<Vec<Fields<'_>>> {
    blocks_in_one_pass(text).or_else(|| blocks_by_serde(text))
}

/// serde_json's reading of the blocks (`Json::objects`, each fragment's text read again).
pub(super) fn blocks_by_serde(text: &str) -> Option<Vec<Fields<'_>>> {
    Some(Json::objects(text)?.into_iter().map(fields).collect())
}

pub(super) fn blocks_in_one_pass(text: &str) -> Option<Vec<Fields<'_>>> {
    let mut c = Cursor::new(text);
    c.open_array()?;
    // No room set aside ahead: a hostile list of empty blocks costs no allocation a block.
    let mut all = Vec::new();
    let mut first = true;
    while c.next_item(&mut first)? {
        let mut block = Vec::new();
        c.members(|c, key| {
            let value = if REASONING_TEXT_KEYS.contains(&key) && c.peek()? == b'"' {
                Field::Text(c.string()?.0)
            } else {
                Field::Json(c.value()?)
            };
            block.push((Cow::Borrowed(key), value));
            Some(())
        })?;
        all.push(block);
    }
    c.at_end().then_some(all)
}

/// The index a detail block is merged by: its `index` value as sent, unless missing, null or
/// unhashable (an object or a list: garbage input), when the block is kept as is.
fn merge_index<'a>(fields: &[(Cow<'_, str>, Field<'a>)]) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == "index")
        .and_then(|(_, v)| match v {
            Field::Json(text) => Some(text.trim()),
            Field::Text(_) => None,
        })
        .filter(|v| *v != "null" && !v.starts_with(['{', '[']))
}

/// A `reasoning_details` text that was one block with one text field (OpenRouter's, on every
/// reasoning chunk: `[{"type":"reasoning.text","text":"...","format":...,"index":0}]`), merged
/// whole: its text before and after that string's contents, and where it merged. A next text
/// with the same two ends is that block with more text: merging it would append the string and
/// set every other field to the value it holds already, so the string is appended without a
/// read ([`Details::continue_run`]).
#[derive(Debug)]
pub(super) struct DetailsRun {
    /// Up to the text field's opening quote, included.
    head: Box<str>,
    /// From its closing quote, included.
    tail: Box<str>,
    /// The merged block's place in [`Details::blocks`], and the field.
    at: usize,
    key: &'static str,
}

impl DetailsRun {
    /// The run `text` starts, when it is one block with one text field whose string the merge
    /// just appended to block `at`; `None` otherwise (or when the strict reader is not sure).
    pub(super) fn of(text: &str, at: usize) -> Option<DetailsRun> {
        let mut c = Cursor::new(text);
        c.open_array()?;
        let mut first = true;
        if !c.next_item(&mut first)? {
            return None;
        }
        let mut hole = None;
        let mut texts = 0;
        let mut keys = Vec::new();
        c.members(|c, key| {
            keys.push(key);
            match REASONING_TEXT_KEYS.iter().find(|k| **k == key) {
                Some(&known) if c.peek()? == b'"' => {
                    let (_, literal) = c.string()?;
                    texts += 1;
                    hole = Some((known, literal));
                }
                _ => {
                    c.value()?;
                }
            }
            Some(())
        })?;
        if c.next_item(&mut first)? || !c.at_end() || texts != 1 {
            return None;
        }
        let (key, literal) = hole?;
        // The field once: a second value of its key would replace the text, not follow it.
        if keys.iter().filter(|k| **k == key).count() != 1 {
            return None;
        }
        // The literal is a slice of `text`.
        let (start, end) = crate::dialect::template::span_of(text, literal)?;
        Some(DetailsRun {
            head: text.get(..start)?.into(),
            tail: text.get(end..)?.into(),
            at,
            key,
        })
    }
}

impl Details {
    /// Appends `text`'s string to the block `run` merged into when `text` is `run`'s two ends
    /// around another string's contents (checked as JSON); whether it did.
    pub(super) fn continue_run(&mut self, run: &DetailsRun, text: &str) -> bool {
        let Some(rest) = text.strip_prefix(&*run.head) else {
            return false;
        };
        // The string runs to the tail's quote exactly (a quote before it, or an escape taking
        // it, is another text).
        match scan_string(rest.as_bytes()) {
            Some((len, value)) if rest.get(len..) == Some(&*run.tail) => {
                match self.blocks.get_mut(run.at) {
                    Some(Block::Merged(merged)) => match merged.get_mut(run.key) {
                        Some(Merged::Parts(cur)) => {
                            cur.push_str(&value);
                            true
                        }
                        _ => false,
                    },
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether a block has an index to be merged by ([`merge_index`]).
    pub(super) fn mergeable(fields: &Fields<'_>) -> bool {
        merge_index(fields).is_some()
    }

    /// Adds one block (its JSON): merged by its index, else kept as is.
    pub(super) fn add(&mut self, block: &str) {
        match Json::object(block).map(fields) {
            Some(fields) if merge_index(&fields).is_some() => self.merge(fields),
            _ => self.blocks.push(Block::Raw(block.into())),
        }
    }

    /// Merges a block into the block of its index ([`merge_index`]; one without is ignored:
    /// callers check [`Details::mergeable`] first).
    pub(super) fn merge(&mut self, fields: Fields<'_>) {
        let Some(index) = merge_index(&fields) else {
            return;
        };
        let at = match &self.last {
            Some((last, at)) if **last == *index => *at,
            _ => {
                let at = match self.by_index.get(index) {
                    Some(&at) => at,
                    None => {
                        self.blocks.push(Block::Merged(Keyed::new()));
                        let at = self.blocks.len() - 1;
                        self.by_index.insert(index.into(), at);
                        at
                    }
                };
                self.last = Some((index.into(), at));
                at
            }
        };
        let Some(Block::Merged(merged)) = self.blocks.get_mut(at) else {
            return;
        };
        for (key, value) in fields {
            let text = match value {
                Field::Text(s) => {
                    match merged.get_mut(&key) {
                        Some(Merged::Parts(cur)) => cur.push_str(&s),
                        Some(slot) => *slot = Merged::Parts(s.into_owned()),
                        None => merged.set(&key, Merged::Parts(s.into_owned())),
                    }
                    continue;
                }
                Field::Json(text) => text,
            };
            let null = is_null(text);
            match merged.get_mut(&key) {
                // The same value again (a block's type, format and index on every delta).
                Some(Merged::Json(same)) if **same == *text => {}
                Some(slot) if !null => *slot = Merged::Json(text.into()),
                Some(_) => {}
                None => merged.set(&key, Merged::Json(text.into())),
            }
        }
    }

    pub(super) fn build(&self) -> Out {
        Out::List(
            self.blocks
                .iter()
                .map(|b| match b {
                    Block::Raw(json) => Out::json(json),
                    Block::Merged(fields) => build_object(fields),
                })
                .collect(),
        )
    }
}

impl Logprobs {
    pub(super) fn add(&mut self, text: &str) {
        let Some(entries) = Json::object(text) else {
            return; // seen, but nothing to concatenate
        };
        for (key, value) in entries {
            let slot = match key.as_ref() {
                "content" => &mut self.content,
                "refusal" => &mut self.refusal,
                _ => continue,
            };
            if let Some(Json::Array(items)) = Json::read(value.get()) {
                slot.get_or_insert_with(Vec::new)
                    .extend(items.into_iter().map(|i| Box::from(i.get())));
            }
        }
    }

    pub(super) fn build(&self) -> Out {
        let list = |items: &Option<Vec<Box<str>>>| match items {
            Some(items) => Out::List(items.iter().map(|i| Out::json(i)).collect()),
            None => Out::Null,
        };
        let mut m = Map::new();
        m.set("content", list(&self.content));
        m.set("refusal", list(&self.refusal));
        Out::Map(m)
    }
}

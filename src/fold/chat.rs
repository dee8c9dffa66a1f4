//! The chat-completions fold: `chat.completion.chunk` items folded into the dict OpenAI's
//! non-streaming `chat.completion` response would be.
//!
//! Input is a [`ChunkView`]: one choice of one chunk, flattened, borrowing its strings (the
//! stream builds it from the decoded frame, the accumulator from a `ChatChunk` item; both feed
//! the same [`ChatFold::add`]). The rules, which the result keeps:
//!
//! - `id`, `created`, `model`: the first non-empty value (an empty `""` / `0`, as in Azure
//!   OpenAI's opening prompt-filter chunk, only stands in until a real one arrives);
//!   `service_tier`, `system_fingerprint`: the last non-null value; `usage`: the last non-null
//!   usage; unknown top-level chunk keys (vendor extras such as a router's routing object) are
//!   merged at the top level (later non-null wins), except `obfuscation` and an error frame's
//!   `error` envelope, and never over a key the result already has.
//! - one entry in `choices` per choice index, sorted by index, each with `message`,
//!   `logprobs`, the last non-null `finish_reason` and the choice's unknown keys (later non-null
//!   wins). `message` holds `role` (first seen, else `"assistant"`), `content` and `refusal`
//!   (joined; `null` unless some chunk sent a non-null fragment), and `tool_calls` /
//!   `reasoning` / `reasoning_content` / `reasoning_details` only when the stream sent some.
//! - `content` sent as a list of typed parts (Mistral's reasoning models:
//!   `[{"type":"thinking","thinking":[{"type":"text","text":"..."}]}]`, then
//!   `[{"type":"text","text":"..."}]`) makes `content` a list of parts, as Mistral's
//!   non-streaming response holds it: consecutive `text` parts are joined into one, consecutive
//!   `thinking` parts into one whose inner text parts are joined likewise; string fragments
//!   that come after (or before) parts count as `text` parts (empty ones add nothing); other
//!   parts are kept as sent.
//! - tool-call fragments are merged by `index`: the first non-empty `id` and `name` (a
//!   provider repeating them on every fragment does not get them doubled), the first `type`
//!   (`"function"` when none came), `arguments` concatenated (and read as partial JSON as
//!   they arrive, in linear time: `crate::partial`, for `partial_arguments`).
//! - `reasoning_details` blocks with an `index` are merged with the earlier block of that index
//!   (`text`, `summary` and `data` strings concatenated, other keys: later non-null wins);
//!   blocks without one are appended. A value that is not a list is kept as sent (the last
//!   such value, until a list comes; after a list it is one more element).
//! - `logprobs`: `null` unless a chunk carried some, else `{"content", "refusal"}` with each
//!   chunk's lists concatenated.
//! - unknown delta keys (`annotations`, `audio`, the legacy `function_call`) are merged into
//!   `message`: strings concatenated, lists extended, objects merged key by key with the same
//!   rules except that their `id`, `type`, `index` and `name` keep the first non-empty value,
//!   other values replaced; a `null` never overwrites a value.
//!
//! Carried across feeds: the fold state (owned text; nothing borrows the input). Cost: each
//! fragment is appended once, so folding is O(total input); rare parts (usage, extras,
//! logprobs) are read one JSON level at a time and kept as raw JSON text until the result is
//! built. Nested values recurse at most as deep as the JSON decoder allowed (its limit is 128).

use std::borrow::Cow;
use std::collections::HashMap;

use super::{IntMap, Json, Keyed, Map, Out};
use crate::partial::PartialJson;

/// One fragment of a tool call, as a view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolView<'a> {
    pub index: i64,
    pub id: Option<&'a str>,
    pub type_: Option<&'a str>,
    pub name: Option<&'a str>,
    pub arguments: Option<&'a str>,
}

/// `delta.content`: a text fragment, or the raw JSON of a list of typed parts.
#[derive(Debug, Clone, Copy)]
pub enum ContentView<'a> {
    Text(&'a str),
    Parts(&'a str),
}

/// One choice of one chunk, flattened (an item's worth of data). JSON-valued fields hold raw
/// JSON text.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChunkView<'a> {
    pub id: Option<&'a str>,
    pub created: Option<i64>,
    pub model: Option<&'a str>,
    pub system_fingerprint: Option<&'a str>,
    pub service_tier: Option<&'a str>,
    pub usage: Option<&'a str>,
    /// The chunk's unknown top-level keys, as one JSON object.
    pub extra: Option<&'a str>,
    /// The choice index; `None` for a chunk with `choices: []`.
    pub index: Option<i64>,
    pub role: Option<&'a str>,
    pub content: Option<ContentView<'a>>,
    pub refusal: Option<&'a str>,
    pub reasoning: Option<&'a str>,
    pub reasoning_content: Option<&'a str>,
    pub tool_calls: &'a [ToolView<'a>],
    pub finish_reason: Option<&'a str>,
    pub reasoning_details: Option<&'a str>,
    pub logprobs: Option<&'a str>,
    pub choice_extra: Option<&'a str>,
    pub delta_extra: Option<&'a str>,
    /// Non-zero when the vendor objects were written by a frame template's recipe (the
    /// template's number in its stream): objects of one recipe differ only in string contents
    /// and number tokens, so the fold need not compare their skeletons. 0: not known.
    pub skeleton: u64,
}

impl ChunkView<'_> {
    /// Whether an item without a choice index still carries per-choice data (a choice object
    /// that lacked its `index` key).
    fn carries_choice(&self) -> bool {
        self.finish_reason.is_some()
            || self.content.is_some()
            || self.role.is_some()
            || self.refusal.is_some()
            || self.reasoning.is_some()
            || self.reasoning_content.is_some()
            || !self.tool_calls.is_empty()
            || self.reasoning_details.is_some()
            || self.logprobs.is_some()
            || self.choice_extra.is_some()
            || self.delta_extra.is_some()
    }
}

/// A text field of a chunk that a frame template can leave open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    Content,
    Reasoning,
    ReasoningContent,
    Refusal,
    /// The arguments of the chunk's one tool-call fragment.
    Arguments,
}

/// An owned copy of a [`ChunkView`], kept by a frame template: a frame that matches the
/// template folds as this view with new text in its hole.
#[derive(Debug, Default)]
pub struct ChunkOwned {
    id: Option<Box<str>>,
    created: Option<i64>,
    model: Option<Box<str>>,
    system_fingerprint: Option<Box<str>>,
    service_tier: Option<Box<str>>,
    usage: Option<Box<str>>,
    extra: Option<Box<str>>,
    index: Option<i64>,
    role: Option<Box<str>>,
    content: Option<Box<str>>,
    refusal: Option<Box<str>>,
    reasoning: Option<Box<str>>,
    reasoning_content: Option<Box<str>>,
    tools: Vec<(i64, [Option<Box<str>>; 4])>,
    finish_reason: Option<Box<str>>,
    reasoning_details: Option<Box<str>>,
    logprobs: Option<Box<str>>,
    choice_extra: Option<Box<str>>,
    delta_extra: Option<Box<str>>,
    /// The number of the template whose recipes write the vendor objects of its fits.
    skeleton: u64,
}

fn own(s: Option<&str>) -> Option<Box<str>> {
    s.map(Box::from)
}

impl ChunkOwned {
    /// A copy of `v`; `None` when its content is a list of parts (no template then).
    pub fn new(v: &ChunkView<'_>) -> Option<Self> {
        let content = match v.content {
            Some(ContentView::Parts(_)) => return None,
            Some(ContentView::Text(t)) => Some(t.into()),
            None => None,
        };
        Some(ChunkOwned {
            id: own(v.id),
            created: v.created,
            model: own(v.model),
            system_fingerprint: own(v.system_fingerprint),
            service_tier: own(v.service_tier),
            usage: own(v.usage),
            extra: own(v.extra),
            index: v.index,
            role: own(v.role),
            content,
            refusal: own(v.refusal),
            reasoning: own(v.reasoning),
            reasoning_content: own(v.reasoning_content),
            tools: v
                .tool_calls
                .iter()
                .map(|t| {
                    (
                        t.index,
                        [own(t.id), own(t.type_), own(t.name), own(t.arguments)],
                    )
                })
                .collect(),
            finish_reason: own(v.finish_reason),
            reasoning_details: own(v.reasoning_details),
            logprobs: own(v.logprobs),
            choice_extra: own(v.choice_extra),
            delta_extra: own(v.delta_extra),
            skeleton: 0,
        })
    }

    /// This chunk's view with `text` in place of its `hole` field (and, with `extras`, those
    /// texts in place of its `extra`, `choice_extra` and `delta_extra`), handed to `f`.
    pub fn view_with(
        &self,
        hole: Hole,
        text: &str,
        extras: Option<&[Option<Cow<'_, str>>; 4]>,
        f: impl FnOnce(&ChunkView<'_>),
    ) {
        fn pick_extra<'s>(
            extras: Option<&'s [Option<Cow<'_, str>>; 4]>,
            n: usize,
            own: &'s Option<Box<str>>,
        ) -> Option<&'s str> {
            match extras {
                Some(built) => built.get(n).and_then(|e| e.as_deref()),
                None => own.as_deref(),
            }
        }
        type Owned = (i64, [Option<Box<str>>; 4]);
        fn call<'s>(n: usize, owned: &'s Owned, hole: Hole, text: &'s str) -> ToolView<'s> {
            let (index, [id, type_, name, arguments]) = owned;
            ToolView {
                index: *index,
                id: id.as_deref(),
                type_: type_.as_deref(),
                name: name.as_deref(),
                arguments: if n == 0 && hole == Hole::Arguments {
                    Some(text)
                } else {
                    arguments.as_deref()
                },
            }
        }
        let tool = |n: usize, owned| call(n, owned, hole, text);
        // A template frame has at most one call fragment: no vector for it (this runs for
        // every frame that fits the template).
        let one: [ToolView<'_>; 1];
        let many: Vec<ToolView<'_>>;
        let tools: &[ToolView<'_>] = match self.tools.as_slice() {
            [] => &[],
            [only] => {
                one = [tool(0, only)];
                &one
            }
            all => {
                many = all.iter().enumerate().map(|(n, t)| tool(n, t)).collect();
                &many
            }
        };
        fn pick<'s>(
            hole: Hole,
            field: Hole,
            text: &'s str,
            value: &'s Option<Box<str>>,
        ) -> Option<&'s str> {
            if hole == field {
                Some(text)
            } else {
                value.as_deref()
            }
        }
        f(&ChunkView {
            id: self.id.as_deref(),
            created: self.created,
            model: self.model.as_deref(),
            system_fingerprint: self.system_fingerprint.as_deref(),
            service_tier: self.service_tier.as_deref(),
            usage: self.usage.as_deref(),
            extra: pick_extra(extras, 0, &self.extra),
            index: self.index,
            role: self.role.as_deref(),
            content: pick(hole, Hole::Content, text, &self.content).map(ContentView::Text),
            refusal: pick(hole, Hole::Refusal, text, &self.refusal),
            reasoning: pick(hole, Hole::Reasoning, text, &self.reasoning),
            reasoning_content: pick(hole, Hole::ReasoningContent, text, &self.reasoning_content),
            tool_calls: tools,
            finish_reason: self.finish_reason.as_deref(),
            reasoning_details: pick_extra(extras, 3, &self.reasoning_details),
            logprobs: self.logprobs.as_deref(),
            choice_extra: pick_extra(extras, 1, &self.choice_extra),
            delta_extra: pick_extra(extras, 2, &self.delta_extra),
            skeleton: if extras.is_some() { self.skeleton } else { 0 },
        });
    }

    /// Numbers the template this copy belongs to (see [`ChunkView::skeleton`]).
    pub fn with_skeleton(self, skeleton: u64) -> Self {
        ChunkOwned { skeleton, ..self }
    }
}

/// Top-level extras never copied into the result: OpenAI's random padding, and the error
/// envelope of an error frame (reported as the stream's error instead).
const DROPPED_EXTRAS: [&str; 2] = ["obfuscation", "error"];

/// Keys of an object nested in an unknown delta field that identify rather than stream.
const IDENTITY_KEYS: [&str; 4] = ["id", "type", "index", "name"];

/// String fields of a `reasoning_details` block that stream as fragments.
const REASONING_TEXT_KEYS: [&str; 3] = ["text", "summary", "data"];

/// The chat fold: everything accumulated so far.
#[derive(Debug, Default)]
pub struct ChatFold {
    id: Option<String>,
    created: Option<i64>,
    model: Option<String>,
    service_tier: Option<String>,
    system_fingerprint: Option<String>,
    usage: Option<Box<str>>,
    extra: Option<Map>,
    /// The last chunk-level extras merged: merging the same again changes nothing (objects
    /// merge key by key, a null only fills an absent key), so it is skipped.
    same_extra: Option<Box<str>>,
    choices: IntMap<Choice>,
}

/// One choice: what every stream has inline, the rest boxed on first use, so a chunk of many
/// choices (hostile, or `n` > 1) costs a small constant per choice.
#[derive(Debug, Default)]
struct Choice {
    role: Option<String>,
    content: Content,
    tool_calls: Option<IntMap<ToolCall>>,
    finish_reason: Option<String>,
    more: Option<Box<ChoiceMore>>,
}

#[derive(Debug, Default)]
struct ChoiceMore {
    refusal: Option<String>,
    reasoning: Option<String>,
    reasoning_content: Option<String>,
    details: Option<DetailsState>,
    logprobs: Option<Logprobs>,
    choice_extra: Option<Map>,
    delta_extra: Option<Keyed<Merged>>,
    /// The last `choice_extra` and `delta_extra` texts, not merged yet. A run of chunks whose
    /// vendor objects differ only in the values of their strings and numbers (the same keys,
    /// nulls and nesting: Together's `text`, `seed` and `token_id` on every chunk) merges as
    /// its last object alone: a choice's extras merge key by key with the last non-null value
    /// winning, and a delta's whose values are all numbers, booleans or null replace theirs.
    /// So such a run costs a comparison and a copy per chunk, and one merge at its end (or
    /// when the result is built), not a parse and a merge per chunk. A delta object with
    /// strings (which concatenate) or containers is merged at once.
    pending_choice_extra: Option<String>,
    pending_delta_extra: Option<String>,
    /// The recipes that wrote the pending objects (see [`ChunkView::skeleton`]).
    pending_skeletons: (u64, u64),
}

#[derive(Debug, Default)]
struct ToolCall {
    id: Option<String>,
    type_: Option<String>,
    name: Option<String>,
    /// The joined `arguments`, read as partial JSON as they arrive (`partial_arguments`).
    arguments: PartialJson,
}

#[derive(Debug, Default)]
enum Content {
    #[default]
    None,
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug)]
enum Part {
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
enum DetailsState {
    Value(Box<str>),
    List(Details),
}

#[derive(Debug, Default)]
struct Details {
    blocks: Vec<Block>,
    /// Merged blocks by the JSON text of their `index`.
    by_index: HashMap<Box<str>, usize>,
}

#[derive(Debug)]
enum Block {
    Raw(Box<str>),
    Merged(Keyed<Merged>),
}

#[derive(Debug, Default)]
struct Logprobs {
    content: Option<Vec<Box<str>>>,
    refusal: Option<Vec<Box<str>>>,
}

/// A value being merged fragment by fragment.
#[derive(Debug, Clone)]
enum Merged {
    /// A string that identifies (kept, not concatenated).
    Str(String),
    /// String fragments, concatenated.
    Parts(String),
    /// A list, extended; elements that are objects with an `index` merge into the earlier
    /// element of that index (Groq's `executed_tools`: a tool's call, then its output).
    List(MergedList),
    /// An object, merged key by key.
    Object(Keyed<Merged>),
    /// Any other value, as sent (the last one wins).
    Json(Box<str>),
}

/// Sets `slot` to `value` unless it already holds it (no allocation for a repeated value).
fn keep_last(slot: &mut Option<String>, value: &str) {
    if slot.as_deref() != Some(value) {
        *slot = Some(value.to_owned());
    }
}

impl ChatFold {
    pub fn new() -> Self {
        ChatFold::default()
    }

    /// Folds one item's worth of data.
    pub fn add(&mut self, v: &ChunkView<'_>) {
        self.add_head(v);
        // The last value wins; most chunks repeat it, which costs a compare, not an allocation.
        if let Some(s) = v.system_fingerprint {
            keep_last(&mut self.system_fingerprint, s);
        }
        if let Some(s) = v.service_tier {
            keep_last(&mut self.service_tier, s);
        }
        if let Some(usage) = v.usage.filter(|u| !is_null(u)) {
            self.usage = Some(usage.into());
        }
        if let Some(extra) = v.extra.filter(|e| self.same_extra.as_deref() != Some(*e)) {
            self.same_extra = Some(extra.into());
            self.extra.get_or_insert_with(Map::new).merge_objects(extra);
        }
        let index = match v.index {
            Some(i) => i,
            None if v.carries_choice() => 0,
            None => return, // a chunk with `choices: []` (e.g. the usage-only last chunk)
        };
        self.choices
            .get_or_insert_with(index, Choice::default)
            .add(v);
    }

    fn add_head(&mut self, v: &ChunkView<'_>) {
        super::take_better(&mut self.id, v.id);
        super::take_better_time(&mut self.created, v.created);
        super::take_better(&mut self.model, v.model);
    }

    /// The arguments of tool call `index` of choice `choice` so far, `None` if there is no
    /// such call.
    pub fn arguments(&self, choice: i64, index: i64) -> Option<&PartialJson> {
        let calls = self.choices.get(choice)?.tool_calls.as_ref()?;
        calls.get(index).map(|call| &call.arguments)
    }

    /// Notes about what the result cannot show as sent: tool-call arguments that are not
    /// valid JSON (kept as sent in `arguments`, where a tool runner would fail to read them).
    /// Computed when asked, in choice and call order.
    pub fn warnings(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (c, choice) in self.choices.sorted() {
            let calls = choice.tool_calls.as_ref().map(IntMap::sorted);
            for (i, call) in calls.into_iter().flatten() {
                if let Some(err) = call.arguments.error() {
                    let id = call
                        .id
                        .as_deref()
                        .map_or_else(String::new, |id| format!(" ({id})"));
                    super::note(
                        &mut notes,
                        format!(
                            "choice {c} tool call {i}{id}: the arguments are not valid JSON \
                             ({err}); 'arguments' holds the text as sent"
                        ),
                    );
                }
            }
        }
        notes
    }

    /// The `chat.completion` object folded so far.
    pub fn result(&self) -> Out {
        let mut out = Map::new();
        out.set("id", Out::str_or_null(self.id.as_deref()));
        out.set("object", Out::Str("chat.completion".into()));
        out.set("created", self.created.map_or(Out::Null, Out::Int));
        out.set("model", Out::str_or_null(self.model.as_deref()));
        out.set(
            "service_tier",
            Out::str_or_null(self.service_tier.as_deref()),
        );
        out.set(
            "system_fingerprint",
            Out::str_or_null(self.system_fingerprint.as_deref()),
        );
        let choices = self
            .choices
            .sorted()
            .into_iter()
            .map(|(i, c)| c.build(i))
            .collect();
        out.set("choices", Out::List(choices));
        out.set("usage", self.usage.as_deref().map_or(Out::Null, Out::json));
        if let Some(extra) = &self.extra {
            for (key, value) in extra.iter() {
                if !out.contains_key(key) && !DROPPED_EXTRAS.contains(&key) {
                    out.set(key, value.clone());
                }
            }
        }
        Out::Map(out)
    }
}

fn is_null(text: &str) -> bool {
    text.trim() == "null"
}

fn append(slot: &mut Option<String>, text: Option<&str>) {
    if let Some(text) = text {
        slot.get_or_insert_with(String::new).push_str(text);
    }
}

impl Choice {
    fn add(&mut self, v: &ChunkView<'_>) {
        match v.content {
            Some(ContentView::Text(text)) => self.content.add_text(text),
            Some(ContentView::Parts(json)) => self.content.add_parts(json),
            None => {}
        }
        if self.role.is_none() {
            self.role = v.role.map(str::to_owned);
        }
        if !v.tool_calls.is_empty() {
            let calls = self.tool_calls.get_or_insert_with(IntMap::default);
            for fragment in v.tool_calls {
                calls
                    .get_or_insert_with(fragment.index, ToolCall::default)
                    .add(fragment);
            }
        }
        if let Some(reason) = v.finish_reason {
            self.finish_reason = Some(reason.to_owned());
        }
        let rare = v.refusal.is_some()
            || v.reasoning.is_some()
            || v.reasoning_content.is_some()
            || v.reasoning_details.is_some()
            || v.logprobs.is_some()
            || v.choice_extra.is_some()
            || v.delta_extra.is_some();
        if rare {
            self.more.get_or_insert_with(Box::default).add(v);
        }
    }

    fn build(&self, index: i64) -> Out {
        let mut message = Map::new();
        message.set(
            "role",
            Out::Str(self.role.clone().unwrap_or_else(|| "assistant".into())),
        );
        message.set("content", self.content.build());
        let more = self.more.as_deref();
        message.set(
            "refusal",
            Out::str_or_null(more.and_then(|m| m.refusal.as_deref())),
        );
        if let Some(calls) = &self.tool_calls {
            let calls = calls.sorted().into_iter().map(|(_, c)| c.build()).collect();
            message.set("tool_calls", Out::List(calls));
        }
        if let Some(more) = more {
            more.build_message(&mut message);
        }
        let mut choice = Map::new();
        choice.set("index", Out::Int(index));
        choice.set("message", Out::Map(message));
        choice.set(
            "logprobs",
            more.and_then(|m| m.logprobs.as_ref())
                .map_or(Out::Null, Logprobs::build),
        );
        choice.set(
            "finish_reason",
            Out::str_or_null(self.finish_reason.as_deref()),
        );
        if let Some(extra) = more.and_then(ChoiceMore::choice_extra_now) {
            for (key, value) in extra.iter() {
                choice.set(key, value.clone());
            }
        }
        Out::Map(choice)
    }
}

impl ChoiceMore {
    fn add(&mut self, v: &ChunkView<'_>) {
        append(&mut self.refusal, v.refusal);
        append(&mut self.reasoning, v.reasoning);
        append(&mut self.reasoning_content, v.reasoning_content);
        // OpenRouter's `"reasoning_details": []` on every content chunk adds nothing.
        if let Some(details) = v.reasoning_details.filter(|d| *d != "[]") {
            self.add_details(details);
        }
        if let Some(logprobs) = v.logprobs.filter(|l| !is_null(l)) {
            self.logprobs
                .get_or_insert_with(Logprobs::default)
                .add(logprobs);
        }
        if let Some(extra) = v.choice_extra {
            let (ids, id) = (&mut self.pending_skeletons.0, v.skeleton);
            if !continues_run(&mut self.pending_choice_extra, ids, extra, id) {
                if let Some(earlier) = self.pending_choice_extra.replace(extra.to_owned()) {
                    self.choice_extra
                        .get_or_insert_with(Map::new)
                        .merge_non_null(&earlier);
                }
            }
        }
        if let Some(extra) = v.delta_extra {
            let (ids, id) = (&mut self.pending_skeletons.1, v.skeleton);
            if !continues_run(&mut self.pending_delta_extra, ids, extra, id) {
                if let Some(earlier) = self.pending_delta_extra.take() {
                    merge_delta_extra(&mut self.delta_extra, &earlier);
                }
                let scalars = Json::object(extra).is_some_and(|entries| {
                    entries.iter().all(|(_, v)| {
                        matches!(Json::read(v.get()), Some(Json::Null | Json::Scalar(_)))
                    })
                });
                if scalars {
                    self.pending_delta_extra = Some(extra.to_owned());
                } else {
                    merge_delta_extra(&mut self.delta_extra, extra);
                }
            }
        }
    }

    fn add_details(&mut self, text: &str) {
        match Json::read(text) {
            None | Some(Json::Null) => {}
            // OpenRouter sends `"reasoning_details": []` on plain content chunks.
            Some(Json::Array(blocks)) if blocks.is_empty() => {}
            Some(Json::Array(blocks)) => {
                let mut details = match self.details.take() {
                    Some(DetailsState::List(details)) => details,
                    Some(DetailsState::Value(value)) => Details {
                        blocks: vec![Block::Raw(value)],
                        ..Details::default()
                    },
                    None => Details::default(),
                };
                for block in blocks {
                    details.add(block.get());
                }
                self.details = Some(DetailsState::List(details));
            }
            // Not a list (garbage input): kept as sent; after a list, it is one more block.
            Some(_) => match &mut self.details {
                Some(DetailsState::List(details)) => details.blocks.push(Block::Raw(text.into())),
                slot => *slot = Some(DetailsState::Value(text.into())),
            },
        }
    }

    /// The rare keys of the choice's `message`, in the order the result has them.
    fn build_message(&self, message: &mut Map) {
        if let Some(text) = &self.reasoning {
            message.set("reasoning", Out::Str(text.clone()));
        }
        if let Some(text) = &self.reasoning_content {
            message.set("reasoning_content", Out::Str(text.clone()));
        }
        match &self.details {
            Some(DetailsState::List(details)) => message.set("reasoning_details", details.build()),
            Some(DetailsState::Value(value)) => message.set("reasoning_details", Out::json(value)),
            None => {}
        }
        let mut delta_extra = self.delta_extra.clone();
        if let Some(pending) = &self.pending_delta_extra {
            merge_delta_extra(&mut delta_extra, pending);
        }
        if let Some(extra) = &delta_extra {
            for (key, value) in extra.iter() {
                message.set(key, value.build());
            }
        }
    }

    /// The choice's vendor keys with the pending object merged.
    fn choice_extra_now(&self) -> Option<Cow<'_, Map>> {
        match (&self.choice_extra, &self.pending_choice_extra) {
            (map, None) => map.as_ref().map(Cow::Borrowed),
            (map, Some(pending)) => {
                let mut merged = map.clone().unwrap_or_default();
                merged.merge_non_null(pending);
                Some(Cow::Owned(merged))
            }
        }
    }
}

/// Whether the vendor object `extra` continues the run of `pending` (see
/// `ChoiceMore::pending_choice_extra`): the same object again (one comparison: Azure's filter
/// results, OpenRouter's `native_finish_reason`), or one of its skeleton (one walk over both),
/// which then becomes the pending one.
/// `skeleton` is the view's (see [`ChunkView::skeleton`]); `pending_skeleton`, the pending
/// object's, is set to it.
fn continues_run(
    pending: &mut Option<String>,
    pending_skeleton: &mut u64,
    extra: &str,
    skeleton: u64,
) -> bool {
    let same = skeleton != 0 && skeleton == *pending_skeleton;
    let continues = match pending {
        Some(p) if p == extra => true,
        Some(p) if same || same_skeleton(p, extra) => {
            p.clear();
            p.push_str(extra);
            true
        }
        _ => false,
    };
    *pending_skeleton = skeleton;
    continues
}

/// Merges a delta's vendor object `text` into `target`, key by key.
fn merge_delta_extra(target: &mut Option<Keyed<Merged>>, text: &str) {
    if let Some(entries) = Json::object(text) {
        let target = target.get_or_insert_with(Keyed::new);
        for (key, value) in entries {
            merge_value(target, &key, value.get(), false);
        }
    }
}

/// Whether the JSON texts `a` and `b` differ only in the contents of value strings and in
/// number tokens: the same keys in the same order, the same literals, nesting and
/// punctuation. Merged key by key with the last value winning, `b` then overrides `a` wholly.
/// One pass over both.
fn same_skeleton(a: &str, b: &str) -> bool {
    /// The end of the string literal whose opening quote is at `at`, and whether a colon
    /// follows it (a key).
    fn string_end(t: &[u8], at: usize) -> Option<(usize, bool)> {
        let mut k = at + 1;
        loop {
            k += memchr::memchr2(b'"', b'\\', t.get(k..)?)?;
            match t.get(k)? {
                b'"' => break,
                _ => k += 2,
            }
        }
        let rest = t.get(k + 1..).unwrap_or_default();
        let key = rest.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':');
        Some((k + 1, key))
    }
    let number = |c: &u8| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E');
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    loop {
        match (a.get(i), b.get(j)) {
            (None, None) => return true,
            (Some(b'"'), Some(b'"')) => {
                let (Some((ea, key_a)), Some((eb, key_b))) = (string_end(a, i), string_end(b, j))
                else {
                    return false;
                };
                if key_a != key_b || (key_a && a.get(i..ea) != b.get(j..eb)) {
                    return false;
                }
                i = ea;
                j = eb;
            }
            (Some(x), Some(y)) if number(x) && number(y) => {
                while a.get(i).is_some_and(number) {
                    i += 1;
                }
                while b.get(j).is_some_and(number) {
                    j += 1;
                }
            }
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            _ => return false,
        }
    }
}

impl ToolCall {
    fn add(&mut self, f: &ToolView<'_>) {
        if let Some(arguments) = f.arguments {
            // Arguments that are not JSON are kept as sent: the error only ends the reading.
            let _ = self.arguments.feed_str(arguments);
        }
        if self.id.as_deref().is_none_or(str::is_empty) {
            if let Some(id) = f.id {
                self.id = Some(id.to_owned());
            }
        }
        if self.name.as_deref().is_none_or(str::is_empty) {
            if let Some(name) = f.name {
                self.name = Some(name.to_owned());
            }
        }
        if self.type_.is_none() {
            self.type_ = f.type_.map(str::to_owned);
        }
    }

    fn build(&self) -> Out {
        let mut function = Map::new();
        function.set("name", Out::str_or_null(self.name.as_deref()));
        function.set("arguments", Out::Str(self.arguments.text().to_owned()));
        let mut call = Map::new();
        call.set("id", Out::str_or_null(self.id.as_deref()));
        call.set(
            "type",
            Out::Str(self.type_.clone().unwrap_or_else(|| "function".into())),
        );
        call.set("function", Out::Map(function));
        Out::Map(call)
    }
}

impl Content {
    fn add_text(&mut self, text: &str) {
        match self {
            Content::None => *self = Content::Text(text.to_owned()),
            Content::Text(s) => s.push_str(text),
            // An empty fragment adds no part (Mistral opens with `"content": ""`).
            Content::Parts(_) if text.is_empty() => {}
            Content::Parts(parts) => push_part(parts, Part::Text(text.to_owned())),
        }
    }

    fn add_parts(&mut self, json: &str) {
        let parts = match std::mem::take(self) {
            Content::None => Vec::new(),
            Content::Text(s) if s.is_empty() => Vec::new(),
            // Text that came before the parts is the first text part.
            Content::Text(s) => vec![Part::Text(s)],
            Content::Parts(parts) => parts,
        };
        let mut parts = parts;
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

    fn build(&self) -> Out {
        match self {
            Content::None => Out::Null,
            Content::Text(s) => Out::Str(s.clone()),
            Content::Parts(parts) => Out::List(parts.iter().map(Part::build).collect()),
        }
    }
}

/// Appends `part`, merging it into the last part when both are text, or both thinking.
fn push_part(parts: &mut Vec<Part>, part: Part) {
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

impl Part {
    /// Reads one part; `outer` allows a `thinking` part (whose inner parts are read as text
    /// or kept as sent, one level only).
    fn read(json: &str, outer: bool) -> Part {
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

    fn build(&self) -> Out {
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

impl Details {
    fn add(&mut self, block: &str) {
        let entries = match Json::object(block) {
            Some(entries) => entries,
            None => return self.blocks.push(Block::Raw(block.into())),
        };
        let index = entries
            .iter()
            .find(|(k, _)| k == "index")
            .map(|(_, v)| v.get().trim())
            .filter(|v| *v != "null");
        let Some(index) = index else {
            return self.blocks.push(Block::Raw(block.into()));
        };
        if index.starts_with(['{', '[']) {
            // An unhashable index (garbage input): the block is kept as is.
            return self.blocks.push(Block::Raw(block.into()));
        }
        let at = match self.by_index.get(index) {
            Some(&at) => at,
            None => {
                self.blocks.push(Block::Merged(Keyed::new()));
                let at = self.blocks.len() - 1;
                self.by_index.insert(index.into(), at);
                at
            }
        };
        let Some(Block::Merged(fields)) = self.blocks.get_mut(at) else {
            return;
        };
        for (key, value) in entries {
            let text = value.get();
            if REASONING_TEXT_KEYS.contains(&key.as_ref()) {
                if let Some(Json::Str(s)) = Json::read(text) {
                    match fields.get_mut(&key) {
                        Some(Merged::Parts(cur)) => cur.push_str(&s),
                        Some(slot) => *slot = Merged::Parts(s.into_owned()),
                        None => fields.set(&key, Merged::Parts(s.into_owned())),
                    }
                    continue;
                }
            }
            let null = is_null(text);
            match fields.get_mut(&key) {
                // The same value again (a block's type, format and index on every delta).
                Some(Merged::Json(same)) if **same == *text => {}
                Some(slot) if !null => *slot = Merged::Json(text.into()),
                Some(_) => {}
                None => fields.set(&key, Merged::Json(text.into())),
            }
        }
    }

    fn build(&self) -> Out {
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
    fn add(&mut self, text: &str) {
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

    fn build(&self) -> Out {
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

/// Merges one unknown-delta value into `target[key]` (see the module docs). A `null` only
/// fills a key not seen before. Nested objects recurse once per JSON level.
fn merge_value(target: &mut Keyed<Merged>, key: &str, value: &str, identity: bool) {
    let Some(json) = Json::read(value) else {
        return;
    };
    // Looked up by the hashed index past a few keys: one frame may carry tens of thousands.
    let slot = target.get_mut(key);
    match (json, slot) {
        (Json::Null, Some(_)) => {}
        (Json::Null, None) => target.set(key, Merged::Json("null".into())),
        (Json::Str(s), slot) if identity && IDENTITY_KEYS.contains(&key) => match slot {
            Some(cur) if !cur.is_empty_like() => {}
            Some(cur) => *cur = Merged::Str(s.into_owned()),
            None => target.set(key, Merged::Str(s.into_owned())),
        },
        (Json::Str(s), Some(Merged::Parts(cur))) => cur.push_str(&s),
        (Json::Str(s), Some(cur)) => *cur = Merged::Parts(s.into_owned()),
        (Json::Str(s), None) => target.set(key, Merged::Parts(s.into_owned())),
        (Json::Array(items), slot) => {
            let list = match slot {
                Some(Merged::List(cur)) => cur,
                Some(cur) => {
                    *cur = Merged::List(MergedList::default());
                    match cur {
                        Merged::List(list) => list,
                        _ => return,
                    }
                }
                None => match target.entry(key, || Merged::List(MergedList::default())) {
                    Merged::List(list) => list,
                    _ => return,
                },
            };
            for item in items {
                list.add(item.get());
            }
        }
        (Json::Object(entries), slot) => {
            let inner = match slot {
                Some(Merged::Object(inner)) => inner,
                Some(cur) => {
                    *cur = Merged::Object(Keyed::new());
                    match cur {
                        Merged::Object(inner) => inner,
                        _ => return,
                    }
                }
                None => match target.entry(key, || Merged::Object(Keyed::new())) {
                    Merged::Object(inner) => inner,
                    _ => return,
                },
            };
            for (k, v) in entries {
                merge_value(inner, &k, v.get(), true);
            }
        }
        (Json::Scalar(s), Some(cur)) => *cur = Merged::Json(s.into()),
        (Json::Scalar(s), None) => target.set(key, Merged::Json(s.into())),
    }
}

impl Merged {
    /// Whether an identity key's current value may be replaced (Python-falsy: `""`, `0`,
    /// `false`, `null`, an empty list or object).
    fn is_empty_like(&self) -> bool {
        match self {
            Merged::Str(s) | Merged::Parts(s) => s.is_empty(),
            Merged::List(list) => list.items.is_empty(),
            Merged::Object(fields) => fields.is_empty(),
            Merged::Json(text) => matches!(text.trim(), "null" | "0" | "false" | "0.0"),
        }
    }

    fn build(&self) -> Out {
        match self {
            Merged::Str(s) | Merged::Parts(s) => Out::Str(s.clone()),
            Merged::List(list) => Out::List(list.items.clone()),
            Merged::Object(fields) => build_object(fields),
            Merged::Json(text) => Out::json(text),
        }
    }
}

/// A list merged chunk by chunk: elements appended, except an object with an `index` that an
/// earlier object had, which is merged into that one key by key (later non-null wins).
#[derive(Debug, Default, Clone)]
struct MergedList {
    items: Vec<Out>,
    /// Where the object of each `index` (by its JSON text) is.
    by_index: HashMap<Box<str>, usize>,
}

impl MergedList {
    fn add(&mut self, item: &str) {
        let index = Json::object(item)
            .and_then(|entries| entries.into_iter().find(|(k, _)| k == "index"))
            .map(|(_, v)| Box::<str>::from(v.get().trim()));
        let Some(index) = index else {
            self.items.push(Out::json(item));
            return;
        };
        if let Some(Out::Map(earlier)) = self
            .by_index
            .get(&index)
            .and_then(|at| self.items.get_mut(*at))
        {
            earlier.merge_non_null(item);
            return;
        }
        self.by_index.insert(index, self.items.len());
        self.items
            .push(Out::Map(super::object_map(item).unwrap_or_default()));
    }
}

fn build_object(fields: &Keyed<Merged>) -> Out {
    Out::Map(
        fields
            .iter()
            .map(|(k, v)| (k.to_owned(), v.build()))
            .collect(),
    )
}

#[cfg(test)]
mod tests;

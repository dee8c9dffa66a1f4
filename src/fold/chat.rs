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
//!   they arrive, in linear time: `crate::json::partial`, for `partial_arguments`).
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

use super::summary::{texts, Node};
use super::{IntMap, Json, Keyed, Map, Out};
use crate::json::build::{tree, Build, OutBuild};
use crate::json::partial::{Joined, SoFar};

pub use crate::dialect::chat::{ChunkOwned, ChunkView, ContentView, Hole, ToolView};

mod merge;
#[allow(unused_imports)]
pub use merge::*;

mod content;
#[allow(unused_imports)]
pub use content::*;

/// Top-level extras never copied into the result: OpenAI's random padding, and the error
/// envelope of an error frame (reported as the stream's error instead).
const DROPPED_EXTRAS: [&str; 2] = ["obfuscation", "error"];

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
    /// The last `reasoning_details` text when it was one block with one text field: the next
    /// with the same ends only appends its string ([`DetailsRun`]).
    details_run: Option<DetailsRun>,
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
    /// The joined `arguments`, read as partial JSON when asked (`partial_arguments`, the
    /// warnings).
    arguments: Joined,
}

/// Sets `slot` to `value` unless it already holds it (no allocation for a repeated value).
fn keep_last(slot: &mut Option<String>, value: &str) {
    if slot.as_deref() != Some(value) {
        *slot = Some(value.to_owned());
    }
}

impl ChatFold {
    /// An empty fold, before the first chunk.
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
    pub fn arguments(&self, choice: i64, index: i64) -> Option<&Joined> {
        let calls = self.choices.get(choice)?.tool_calls.as_ref()?;
        calls.get(index).map(|call| &call.arguments)
    }

    /// Notes about what the result cannot show as sent: tool-call arguments that are not
    /// valid JSON (kept as sent in `arguments`, where a tool runner would fail to read them).
    /// Computed when asked (the arguments read then, as far as they came), in choice and call
    /// order.
    pub fn warnings(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for (c, choice) in self.choices.sorted_mut() {
            let calls = choice.tool_calls.as_mut().map(IntMap::sorted_mut);
            for (i, call) in calls.into_iter().flatten() {
                if let Some(err) = call.arguments.read().error() {
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
        tree(self.result_in(&mut OutBuild))
    }

    /// [`result`](Self::result) written to `b`: the text of a plain choice goes to the
    /// builder as it is held (no tree where the builder makes none).
    pub fn result_in<B: Build>(&self, b: &mut B) -> Result<B::Value, B::Error> {
        let mut out = b.map(8)?;
        let id = b.opt_str(self.id.as_deref())?;
        b.set_new(&mut out, "id", id)?;
        let object = b.str("chat.completion")?;
        b.set_new(&mut out, "object", object)?;
        let created = match self.created {
            Some(created) => b.int(created)?,
            None => b.null()?,
        };
        b.set_new(&mut out, "created", created)?;
        let model = b.opt_str(self.model.as_deref())?;
        b.set_new(&mut out, "model", model)?;
        let tier = b.opt_str(self.service_tier.as_deref())?;
        b.set_new(&mut out, "service_tier", tier)?;
        let fingerprint = b.opt_str(self.system_fingerprint.as_deref())?;
        b.set_new(&mut out, "system_fingerprint", fingerprint)?;
        let mut choices = Vec::with_capacity(1);
        for (i, c) in self.choices.sorted() {
            choices.push(c.build_in(i, b)?);
        }
        let choices = b.list(choices)?;
        b.set_new(&mut out, "choices", choices)?;
        let usage = match self.usage.as_deref() {
            Some(usage) => b.json(usage)?,
            None => b.null()?,
        };
        b.set_new(&mut out, "usage", usage)?;
        if let Some(extra) = &self.extra {
            for (key, value) in extra.iter() {
                if !DROPPED_EXTRAS.contains(&key) && !b.has(&out, key)? {
                    let value = b.out(value)?;
                    b.set(&mut out, key, value)?;
                }
            }
        }
        Ok(b.done(out))
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
            Some(ContentView::Thinking(text)) => self.content.add_thinking(text),
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

    /// The choice written to `b`: a choice with nothing rare ([`ChoiceMore`]) straight, as
    /// [`Choice::build`] builds it; any other built and handed over.
    fn build_in<B: Build>(&self, index: i64, b: &mut B) -> Result<B::Value, B::Error> {
        if self.more.is_some() {
            return b.out(&self.build(index));
        }
        let mut message = b.map(4)?;
        let role = b.str(self.role.as_deref().unwrap_or("assistant"))?;
        b.set_new(&mut message, "role", role)?;
        let content = match &self.content {
            Content::None => b.null()?,
            Content::Text(text) => b.str(text)?,
            parts @ Content::Parts(_) => b.out(&parts.build())?,
        };
        b.set_new(&mut message, "content", content)?;
        let refusal = b.null()?;
        b.set_new(&mut message, "refusal", refusal)?;
        if let Some(calls) = &self.tool_calls {
            let calls = calls.sorted();
            let mut built = Vec::with_capacity(calls.len());
            for (_, call) in calls {
                built.push(b.out(&call.build())?);
            }
            let calls = b.list(built)?;
            b.set_new(&mut message, "tool_calls", calls)?;
        }
        let mut choice = b.map(4)?;
        let index = b.int(index)?;
        b.set_new(&mut choice, "index", index)?;
        let message = b.done(message);
        b.set_new(&mut choice, "message", message)?;
        let logprobs = b.null()?;
        b.set_new(&mut choice, "logprobs", logprobs)?;
        let reason = b.opt_str(self.finish_reason.as_deref())?;
        b.set_new(&mut choice, "finish_reason", reason)?;
        Ok(b.done(choice))
    }

    fn build(&self, index: i64) -> Out {
        let mut message = Map::with_capacity(4);
        message.set_new(
            "role",
            Out::Str(self.role.clone().unwrap_or_else(|| "assistant".into())),
        );
        message.set_new("content", self.content.build());
        let more = self.more.as_deref();
        message.set_new(
            "refusal",
            Out::str_or_null(more.and_then(|m| m.refusal.as_deref())),
        );
        if let Some(calls) = &self.tool_calls {
            let calls = calls.sorted().into_iter().map(|(_, c)| c.build()).collect();
            message.set_new("tool_calls", Out::List(calls));
        }
        if let Some(more) = more {
            more.build_message(&mut message);
        }
        let mut choice = Map::with_capacity(4);
        choice.set_new("index", Out::Int(index));
        choice.set_new("message", Out::Map(message));
        choice.set_new(
            "logprobs",
            more.and_then(|m| m.logprobs.as_ref())
                .map_or(Out::Null, Logprobs::build),
        );
        choice.set_new(
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
        if let (Some(run), Some(DetailsState::List(details))) =
            (&self.details_run, &mut self.details)
        {
            if details.continue_run(run, text) {
                return;
            }
        }
        self.details_run = None;
        // The usual list (objects that each have an index) read in one pass.
        if let Some(all) = content::blocks(text).filter(|all| all.iter().all(Details::mergeable)) {
            // OpenRouter sends `"reasoning_details": []` on plain content chunks.
            if all.is_empty() {
                return;
            }
            let one = all.len() == 1;
            if let Some(details) = self.details_list() {
                for entries in all {
                    details.merge(entries);
                }
                // The block merged last is this one's.
                let at = details.last.as_ref().map(|(_, at)| *at);
                self.details_run = at.filter(|_| one).and_then(|at| DetailsRun::of(text, at));
            }
            return;
        }
        match Json::read(text) {
            None | Some(Json::Null) => {}
            Some(Json::Array(blocks)) if blocks.is_empty() => {}
            Some(Json::Array(blocks)) => {
                if let Some(details) = self.details_list() {
                    for block in blocks {
                        details.add(block.get());
                    }
                }
            }
            // Not a list (garbage input): kept as sent; after a list, it is one more block.
            Some(_) => match &mut self.details {
                Some(DetailsState::List(details)) => details.blocks.push(Block::Raw(text.into())),
                slot => *slot = Some(DetailsState::Value(text.into())),
            },
        }
    }

    /// The `reasoning_details` blocks so far as a list (a value that was not a list is its
    /// first block).
    fn details_list(&mut self) -> Option<&mut Details> {
        if let Some(DetailsState::Value(value)) = self
            .details
            .take_if(|d| matches!(d, DetailsState::Value(_)))
        {
            self.details = Some(DetailsState::List(Details {
                blocks: vec![Block::Raw(value)],
                ..Details::default()
            }));
        }
        match self
            .details
            .get_or_insert_with(|| DetailsState::List(Details::default()))
        {
            DetailsState::List(details) => Some(details),
            DetailsState::Value(_) => None,
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

impl ToolCall {
    fn add(&mut self, f: &ToolView<'_>) {
        if let Some(arguments) = f.arguments {
            // Read when asked: arguments that are not JSON are kept as sent.
            self.arguments.push(arguments);
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
        let mut function = Map::with_capacity(2);
        function.set_new("name", Out::str_or_null(self.name.as_deref()));
        function.set_new("arguments", Out::Str(self.arguments.text().to_owned()));
        let mut call = Map::with_capacity(3);
        call.set_new("id", Out::str_or_null(self.id.as_deref()));
        call.set_new(
            "type",
            Out::Str(self.type_.clone().unwrap_or_else(|| "function".into())),
        );
        call.set_new("function", Out::Map(function));
        Out::Map(call)
    }
}

/// The answer's text in a `chat.completion` (`crate::fold::summary`): the first choice's
/// content, a string or a list of parts (Mistral's content chunks).
pub fn final_text(result: Node<'_>) -> String {
    let content = result
        .key("choices")
        .and_then(Node::first)
        .and_then(|c| c.path(&["message", "content"]));
    match content.and_then(Node::text) {
        Some(text) => text.into_owned(),
        None => texts(content, &|_| false),
    }
}

#[cfg(test)]
mod tests;

//! The Gemini fold: `generateContent` stream chunks folded into the non-streaming
//! `GenerateContentResponse` (API.md section 9).
//!
//! Rules:
//! - Candidates are told apart by `index`, else by their position in the chunk's `candidates`
//!   array, and listed by index. `index` is in the result only if the stream sent it;
//!   `content` only if some chunk sent it (its `role` the last one sent, `parts` merged).
//! - Parts merge as the non-streaming response holds them. A text part joins the previous
//!   part when that is a text part of the same kind (`thought` or not) and not both carry a
//!   `thoughtSignature` (the signature stays with the text it signs: a last
//!   `{"text": "", "thoughtSignature": ...}` lands on the text before it). A whole
//!   `functionCall` part is kept as sent. Vertex's streamed calls (`willContinue`,
//!   `partialArgs`) are assembled into one part `{"functionCall": {"name", "args"}}` by
//!   [`ArgsText`]; a call whose closing piece never came is closed by the next part that does
//!   not continue it, by the candidate's `finishReason`, or when the result is built. An empty
//!   `functionCall` (`{}`) only closes the open streamed call: it is never a call of its own.
//!   Any other part is kept as sent.
//! - Every other key of a candidate (`finishReason`, `safetyRatings`, ...) and of the chunk
//!   (`usageMetadata`, which is cumulative, `promptFeedback`, `modelVersion`, `responseId`,
//!   ...): the last non-null value sent wins.
//!
//! Carried across chunks: per candidate its merged parts (owned text), its keys, its open
//! streamed call; the chunk's last top-level values. Cost: each text fragment is appended once,
//! each argument piece is written once as JSON text and read once by the call's
//! [`PartialJson`]; memory is linear in what was sent.

use crate::dialect::gemini::{ArgValue, Call, Candidate, Chunk, Part};
use crate::json::build::{tree, Build, OutBuild};
use crate::json::partial::PartialJson;
use crate::json::read::Extra;
use crate::json::write::{push_escaped, push_str};
use serde_json::value::RawValue;
use std::borrow::Cow;

use super::summary::{texts, Node};
use super::{note, IntMap, Json, Map, Out};

mod args;
#[allow(unused_imports)]
pub use args::*;

/// One part of a candidate's merged content.
#[derive(Debug)]
enum PartOut {
    Text {
        text: String,
        thought: bool,
        signature: Option<String>,
        extra: Map,
    },
    Call {
        /// The `functionCall` as sent (a whole call).
        whole: Option<Box<str>>,
        name: Option<String>,
        id: Option<String>,
        /// The arguments' JSON text, readable while it streams (boxed: the parser is large).
        args: Box<PartialJson>,
        /// A streamed call's writer (Vertex `partialArgs`).
        streamed: Option<ArgsText>,
        signature: Option<String>,
        extra: Map,
    },
    Other(Map),
}

fn extra_map(extra: &Extra<'_>, into: &mut Map) {
    // A key the map had before this part keeps its value (the first part's, of parts joined);
    // a key the part repeats takes its last value in its first place, as `json.loads` reads
    // the part.
    let before = into.len();
    for (key, value) in &extra.0 {
        if into.position(key.as_str()).is_none_or(|at| at >= before) {
            into.set(key.as_str(), Out::json(value.get()));
        }
    }
}

/// The items of a `citationMetadata` object whose only key is a `citations` list (Gemini's
/// shape), as raw JSON values; `None` for any other shape.
fn citations_of(text: &str) -> Option<Vec<Out>> {
    let entries = Json::object(text)?;
    let [(key, value)] = entries.as_slice() else {
        return None;
    };
    if key != "citations" {
        return None;
    }
    match Json::read(value.get())? {
        Json::Array(items) => Some(items.iter().map(|i| Out::json(i.get())).collect()),
        _ => None,
    }
}

/// One candidate, folded.
#[derive(Debug, Default)]
struct Cand {
    index_sent: bool,
    content: bool,
    role: Option<String>,
    parts: Vec<PartOut>,
    keys: Map,
    /// The part of the streamed call still open, if any.
    streaming: Option<usize>,
    /// The parts that are function calls, in order (`partial_arguments(index)`).
    calls: Vec<usize>,
}

impl Cand {
    fn add(&mut self, c: &Candidate<'_>, warnings: &mut Vec<String>) {
        self.index_sent |= c.index.is_some();
        if c.has_content {
            self.content = true;
            if let Some(role) = &c.role {
                if self.role.as_deref() != Some(role.as_str()) {
                    self.role = Some(role.as_str().to_owned());
                }
            }
        }
        for part in &c.parts {
            self.part(part, warnings);
        }
        if let Some(reason) = &c.finish_reason {
            self.end_call(warnings);
            self.keys
                .set("finishReason", Out::Str(reason.as_str().to_owned()));
        }
        for (key, value) in &c.extra.0 {
            if value.get() == "null" {
                continue;
            }
            // Citations come with the chunk whose text they cite: the response's are all of
            // them, in order (every other key is the last one sent). Each chunk's list is read
            // once and appended: the joined list is never read again.
            if key.as_str() == "citationMetadata" {
                if let Some(items) = citations_of(value.get()) {
                    match self.keys.get_mut("citationMetadata") {
                        Some(Out::Map(old)) => {
                            if let Some(Out::List(all)) = old.get_mut("citations") {
                                all.extend(items);
                                continue;
                            }
                        }
                        _ => {
                            let mut m = Map::new();
                            m.set("citations", Out::List(items));
                            self.keys.set("citationMetadata", Out::Map(m));
                            continue;
                        }
                    }
                }
            }
            self.keys.set(key.as_str(), Out::json(value.get()));
        }
    }

    fn part(&mut self, p: &Part<'_>, warnings: &mut Vec<String>) {
        if let Some(call) = &p.function_call {
            return self.call(p, call, warnings);
        }
        self.end_call(warnings);
        let Some(text) = p.text.as_ref().filter(|_| p.is_text()).map(|t| t.as_str()) else {
            // Kept as sent (`{"thought": true, "thoughtSignature": ...}` alone too).
            let mut map = Map::new();
            if p.thought {
                map.set("thought", Out::Bool(true));
            }
            if let Some(sig) = &p.thought_signature {
                map.set("thoughtSignature", Out::Str(sig.as_str().to_owned()));
            }
            extra_map(&p.extra, &mut map);
            self.parts.push(PartOut::Other(map));
            return;
        };
        let sig = p.thought_signature.as_ref().map(|s| s.as_str());
        if let Some(PartOut::Text {
            text: joined,
            thought,
            signature,
            extra,
        }) = self.parts.last_mut()
        {
            if *thought == p.thought && !(signature.is_some() && sig.is_some()) {
                joined.push_str(text);
                if let Some(sig) = sig {
                    *signature = Some(sig.to_owned());
                }
                extra_map(&p.extra, extra);
                return;
            }
        }
        let mut extra = Map::new();
        extra_map(&p.extra, &mut extra);
        self.parts.push(PartOut::Text {
            text: text.to_owned(),
            thought: p.thought,
            signature: sig.map(str::to_owned),
            extra,
        });
    }

    fn call(&mut self, p: &Part<'_>, call: &Call<'_>, warnings: &mut Vec<String>) {
        let continues = self.streaming.is_some() && call.name.is_none();
        if !continues {
            self.end_call(warnings);
        }
        if call.is_empty() && !continues {
            return; // a closing piece with no call open: nothing to add
        }
        if !call.is_streamed() && !continues {
            // A whole call.
            let mut args = Box::new(PartialJson::new());
            if let Some(a) = call.args {
                // Valid JSON within the depth limit (the decoder checked it).
                let _ = args.feed_str(a.get());
            }
            let mut extra = Map::new();
            extra_map(&p.extra, &mut extra);
            self.calls.push(self.parts.len());
            self.parts.push(PartOut::Call {
                whole: call.raw.map(|r| r.get().into()),
                name: None,
                id: None,
                args,
                streamed: None,
                signature: p.thought_signature.as_ref().map(|s| s.as_str().to_owned()),
                extra,
            });
            return;
        }
        if !continues {
            self.streaming = Some(self.parts.len());
            self.calls.push(self.parts.len());
            self.parts.push(PartOut::Call {
                whole: None,
                name: call.name.as_ref().map(|n| n.as_str().to_owned()),
                id: call.id.as_ref().map(|n| n.as_str().to_owned()),
                args: Box::new(PartialJson::new()),
                streamed: Some(ArgsText::default()),
                signature: None,
                extra: Map::new(),
            });
        }
        let Some(PartOut::Call {
            args,
            streamed: Some(writer),
            signature,
            extra,
            id,
            ..
        }) = self.streaming.and_then(|at| self.parts.get_mut(at))
        else {
            return;
        };
        if let Some(sig) = &p.thought_signature {
            signature.get_or_insert_with(|| sig.as_str().to_owned());
        }
        if id.is_none() {
            *id = call.id.as_ref().map(|n| n.as_str().to_owned());
        }
        extra_map(&p.extra, extra);
        let mut text = String::new();
        for piece in &call.partial_args {
            let path = piece.json_path.as_ref().map_or("", |p| p.as_str());
            if let Err(e) = writer.add(path, &piece.value, piece.will_continue, &mut text) {
                note(
                    warnings,
                    format!("streamed function call arguments: {e} (skipped)"),
                );
            }
        }
        if !call.will_continue {
            writer.close(&mut text);
            self.streaming = None;
        }
        // Text the writer made is valid JSON so far.
        let _ = args.feed_str(&text);
    }

    /// Closes the open streamed call, if any (its closing piece never came).
    fn end_call(&mut self, _warnings: &mut [String]) {
        let Some(at) = self.streaming.take() else {
            return;
        };
        if let Some(PartOut::Call {
            args,
            streamed: Some(writer),
            ..
        }) = self.parts.get_mut(at)
        {
            let mut text = String::new();
            writer.close(&mut text);
            let _ = args.feed_str(&text);
        }
    }

    fn result_in<B: Build>(&self, index: i64, b: &mut B) -> Result<B::Value, B::Error> {
        let mut m = b.map(self.keys.len() + 2)?;
        if self.content {
            let mut content = b.map(2)?;
            let role = b.str(self.role.as_deref().unwrap_or("model"))?;
            b.set_new(&mut content, "role", role)?;
            let mut parts = Vec::with_capacity(self.parts.len());
            for part in &self.parts {
                parts.push(part.result_in(b)?);
            }
            let parts = b.list(parts)?;
            b.set_new(&mut content, "parts", parts)?;
            let content = b.done(content);
            b.set_new(&mut m, "content", content)?;
        }
        b.set_all(&mut m, &self.keys)?;
        if self.index_sent {
            let index = b.int(index)?;
            b.set(&mut m, "index", index)?;
        }
        Ok(b.done(m))
    }
}

impl PartOut {
    fn result_in<B: Build>(&self, b: &mut B) -> Result<B::Value, B::Error> {
        match self {
            PartOut::Text {
                text,
                thought,
                signature,
                extra,
            } => {
                let mut m = b.map(1 + extra.len())?;
                let text = b.str(text)?;
                b.set_new(&mut m, "text", text)?;
                if *thought {
                    let thought = b.bool(true)?;
                    b.set_new(&mut m, "thought", thought)?;
                }
                if let Some(sig) = signature {
                    let sig = b.str(sig)?;
                    b.set_new(&mut m, "thoughtSignature", sig)?;
                }
                b.set_all(&mut m, extra)?;
                Ok(b.done(m))
            }
            PartOut::Call {
                whole,
                name,
                id,
                args,
                streamed,
                signature,
                extra,
            } => {
                let mut m = b.map(2 + extra.len())?;
                let call = match whole {
                    Some(raw) => b.json(raw)?,
                    None => {
                        let mut c = b.map(3)?;
                        if let Some(name) = name {
                            let name = b.str(name)?;
                            b.set(&mut c, "name", name)?;
                        }
                        let text = match streamed {
                            Some(w) => Cow::Owned(format!("{}{}", args.text(), w.closing())),
                            None => Cow::Borrowed(args.text()),
                        };
                        let text = b.json(&text)?;
                        b.set(&mut c, "args", text)?;
                        if let Some(id) = id {
                            let id = b.str(id)?;
                            b.set(&mut c, "id", id)?;
                        }
                        b.done(c)
                    }
                };
                b.set(&mut m, "functionCall", call)?;
                if let Some(sig) = signature {
                    let sig = b.str(sig)?;
                    b.set(&mut m, "thoughtSignature", sig)?;
                }
                b.set_all(&mut m, extra)?;
                Ok(b.done(m))
            }
            PartOut::Other(map) => {
                let mut m = b.map(map.len())?;
                b.set_all(&mut m, map)?;
                Ok(b.done(m))
            }
        }
    }
}

/// The fold of one Gemini stream.
#[derive(Debug, Default)]
pub struct GeminiFold {
    candidates: IntMap<Cand>,
    top: Map,
    warnings: Vec<String>,
}

impl GeminiFold {
    /// An empty fold, before the first chunk.
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes about input the fold had to interpret (streamed call arguments it skipped), in order.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Folds one chunk.
    pub fn add(&mut self, chunk: &Chunk<'_>) {
        for (index, c) in chunk.indexed() {
            self.candidates
                .get_or_insert_with(index, Cand::default)
                .add(c, &mut self.warnings);
        }
        let top = &mut self.top;
        let mut set_raw = |key: &str, value: Option<&str>| {
            if let Some(v) = value {
                match top.get_mut(key) {
                    // The same key again (usage comes with every chunk): replaced in place,
                    // in the room the last value had (a chunk's counts are mostly as long as
                    // the last one's: no allocation then).
                    Some(Out::Json(old)) => {
                        if **old != *v {
                            let mut text = std::mem::take(old).into_string();
                            text.clear();
                            text.push_str(v);
                            *old = text.into_boxed_str();
                        }
                    }
                    _ => top.set(key, Out::json(v)),
                }
            }
        };
        set_raw("promptFeedback", chunk.prompt_feedback.map(RawValue::get));
        set_raw("usageMetadata", chunk.usage);
        for (key, value) in [
            ("modelVersion", &chunk.model_version),
            ("responseId", &chunk.response_id),
        ] {
            if let Some(v) = value {
                if !matches!(self.top.get(key), Some(Out::Str(s)) if s == v.as_str()) {
                    self.top.set(key, Out::Str(v.as_str().to_owned()));
                }
            }
        }
        for (key, value) in &chunk.extra.0 {
            if value.get() != "null" {
                self.top.set(key.as_str(), Out::json(value.get()));
            }
        }
    }

    /// Whether candidate 0 has a finish reason (the stream is done).
    pub fn finished(&self) -> bool {
        self.candidates
            .get(0)
            .is_some_and(|c| c.keys.contains_key("finishReason"))
    }

    /// The arguments of function call `index` of candidate `candidate`.
    pub fn arguments(&self, candidate: i64, index: i64) -> Option<&PartialJson> {
        let c = self.candidates.get(candidate)?;
        let at = *c.calls.get(usize::try_from(index).ok()?)?;
        match c.parts.get(at)? {
            PartOut::Call { args, .. } => Some(args),
            _ => None,
        }
    }

    /// The `GenerateContentResponse` folded so far.
    pub fn result(&self) -> Out {
        tree(self.result_in(&mut OutBuild))
    }

    /// [`result`](Self::result) written to `b`: the fold's text and kept values handed to the
    /// builder where they lie (no tree copied on the way where the builder makes none).
    pub fn result_in<B: Build>(&self, b: &mut B) -> Result<B::Value, B::Error> {
        let sorted = self.candidates.sorted();
        let mut candidates = Vec::with_capacity(sorted.len());
        for (index, c) in sorted {
            candidates.push(c.result_in(index, b)?);
        }
        let mut m = b.map(1 + self.top.len())?;
        let candidates = b.list(candidates)?;
        b.set_new(&mut m, "candidates", candidates)?;
        b.set_all(&mut m, &self.top)?;
        Ok(b.done(m))
    }
}

/// The answer's text in a Gemini response (`crate::fold::summary`): the first candidate's
/// text parts that are not thoughts.
pub fn final_text(result: Node<'_>) -> String {
    texts(
        result
            .key("candidates")
            .and_then(Node::first)
            .and_then(|c| c.path(&["content", "parts"])),
        &|p| p.key("thought").is_some_and(Node::is_true),
    )
}

#[cfg(test)]
mod tests;

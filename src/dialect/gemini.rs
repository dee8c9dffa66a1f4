//! Google Gemini `generateContent` stream chunks (`:streamGenerateContent`, Gemini API and
//! Vertex AI), decoded straight into borrowed structs: the chunk, its candidates, their parts.
//!
//! A chunk is one `GenerateContentResponse`: `candidates[]` (each with `content.parts[]`, a
//! `finishReason` and rarely read keys such as `safetyRatings`), `usageMetadata` (cumulative,
//! repeated on every chunk), `modelVersion`, `responseId`, `promptFeedback`, or an `error`
//! object. The parts the folds and the translation read are typed (`text`, `thought`,
//! `thoughtSignature`, `functionCall` with Vertex's streamed `partialArgs`); every other key
//! of a chunk, a candidate or a part stays raw JSON ([`Extra`]). Nothing is carried across
//! chunks. Cost: one pass over each chunk's JSON (a `functionCall` is read twice: raw for the
//! item, typed for the fold).

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::Belongs;
use crate::json::read::{map_struct, raw, raw_opt, Extra, Int, Str};

/// One chunk of a Gemini stream.
#[derive(Debug, Default)]
pub struct Chunk<'a> {
    /// The chunk's `candidates` (empty when it has none).
    pub candidates: Vec<Candidate<'a>>,
    /// `usageMetadata` (raw JSON): cumulative, so the last one is the whole answer's.
    pub usage: Option<&'a str>,
    /// The `promptFeedback` object, as raw JSON.
    pub prompt_feedback: Option<&'a RawValue>,
    /// The `modelVersion` that wrote the chunk.
    pub model_version: Option<Str<'a>>,
    /// The chunk's `responseId`.
    pub response_id: Option<Str<'a>>,
    /// The `error` object of an error document, as raw JSON.
    pub error: Option<&'a RawValue>,
    /// Whether the chunk has a `candidates` key (of any value).
    pub has_candidates: bool,
    /// Other top-level keys (`createTime`, ...).
    pub extra: Extra<'a>,
}

/// One candidate of a chunk.
#[derive(Debug, Default)]
pub struct Candidate<'a> {
    /// The candidate's `index`, when sent (proto3 JSON leaves a zero out).
    pub index: Option<i64>,
    /// Whether the candidate has a `content` object.
    pub has_content: bool,
    /// The `role` of the candidate's `content` (`model`).
    pub role: Option<Str<'a>>,
    /// The `parts` of the candidate's `content`.
    pub parts: Vec<Part<'a>>,
    /// The candidate's `finishReason`, in its last chunk.
    pub finish_reason: Option<Str<'a>>,
    /// Other keys (`safetyRatings`, `citationMetadata`, `groundingMetadata`, ...).
    pub extra: Extra<'a>,
}

/// One part of a candidate's content.
#[derive(Debug, Default)]
pub struct Part<'a> {
    /// The part's `text`, when it is a string.
    pub text: Option<Str<'a>>,
    /// Whether the part has `thought: true` (its text is a thought summary).
    pub thought: bool,
    /// The part's `thoughtSignature`.
    pub thought_signature: Option<Str<'a>>,
    /// The part's `functionCall`, when it has one.
    pub function_call: Option<Call<'a>>,
    /// Other keys (`executableCode`, `codeExecutionResult`, `inlineData`, ...).
    pub extra: Extra<'a>,
    /// Where the text's literal lies in the chunk's JSON (between its quotes), when the
    /// one-pass reading read it (a frame template leaves it open without looking for it).
    pub text_literal: Place<'a>,
}

/// A place in a chunk's JSON, when known: not part of the chunk's value, so two readings of
/// one chunk show the same (`Debug` prints nothing of it).
#[derive(Default, Clone, Copy)]
pub struct Place<'a>(pub Option<&'a str>);

impl std::fmt::Debug for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

impl Part<'_> {
    /// Whether this is a text part (a string `text`, no call).
    pub fn is_text(&self) -> bool {
        self.text.is_some() && self.function_call.is_none()
    }

    /// The text of a text part; `""` for a part that holds only a `thoughtSignature` (and
    /// `thought`): a translation reads it as a thought with no text (its signature goes to a
    /// reasoning block), where the fold keeps it as sent.
    pub fn text_or_signature(&self) -> Option<&str> {
        if self.is_text() {
            return self.text.as_ref().map(|t| t.as_str());
        }
        let signature_only = self.text.is_none()
            && self.function_call.is_none()
            && self.extra.0.is_empty()
            && self.thought_signature.is_some();
        signature_only.then_some("")
    }
}

/// A `functionCall`, whole or (Vertex) one piece of a streamed call.
#[derive(Debug, Default)]
pub struct Call<'a> {
    /// The whole `functionCall` object as sent.
    pub raw: Option<&'a RawValue>,
    /// The called function's `name`.
    pub name: Option<Str<'a>>,
    /// The call's `id`, when the server sends one.
    pub id: Option<Str<'a>>,
    /// The call's `args` object, as raw JSON.
    pub args: Option<&'a RawValue>,
    /// The call's `partialArgs`: the pieces of a streamed call's arguments.
    pub partial_args: Vec<PartialArg<'a>>,
    /// The call's `willContinue`: more pieces of this call follow.
    pub will_continue: bool,
}

impl Call<'_> {
    /// Whether this is an empty `functionCall` (`{}`: no name, arguments or pieces): Vertex's
    /// closing piece of a streamed call, never a call of its own.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.args.is_none()
            && self.partial_args.is_empty()
            && !self.will_continue
    }

    /// Whether this piece belongs to a streamed call (Vertex `streamFunctionCallArguments`).
    /// An opener may carry `"args": {}` (proto3 JSON writes an empty `Struct` that is set):
    /// that is no argument yet, not a whole call.
    pub fn is_streamed(&self) -> bool {
        let no_args = self.args.is_none_or(|a| {
            let a = a.get().as_bytes();
            a.first() == Some(&b'{')
                && a.last() == Some(&b'}')
                && a.iter()
                    .skip(1)
                    .take(a.len().saturating_sub(2))
                    .all(u8::is_ascii_whitespace)
        });
        no_args && (self.will_continue || !self.partial_args.is_empty())
    }
}

/// One `partialArgs` entry: a value at a JSON path; a string may come in pieces.
#[derive(Debug, Default)]
pub struct PartialArg<'a> {
    /// The entry's `jsonPath`: where in the arguments its value goes.
    pub json_path: Option<Str<'a>>,
    /// The entry's value (`stringValue`, `numberValue`, `boolValue` or `nullValue`).
    pub value: ArgValue<'a>,
    /// The entry's `willContinue`: the string at this path goes on in a later piece.
    pub will_continue: bool,
}

/// The value of a `partialArgs` entry.
#[derive(Debug, Default)]
pub enum ArgValue<'a> {
    /// No value key (a piece that only says the string goes on or ends).
    #[default]
    None,
    /// A `stringValue`, or one piece of it.
    Str(Str<'a>),
    /// A number or a boolean, as raw JSON.
    Raw(&'a RawValue),
    /// `nullValue` (protobuf JSON writes it as the enum `NULL_VALUE`).
    Null,
}

impl<'a> Chunk<'a> {
    /// The candidates with their indexes. A candidate without `index` is candidate 0 — the
    /// proto3 JSON of Vertex AI leaves a zero out, so `{"index":1,...},{...}` is candidates 1
    /// and 0 — unless every candidate of the chunk lacks one and there are several (no server
    /// sends that; read as their places in the chunk, they stay apart).
    pub fn indexed(&self) -> impl Iterator<Item = (i64, &Candidate<'a>)> {
        let by_place =
            self.candidates.len() > 1 && self.candidates.iter().all(|c| c.index.is_none());
        self.candidates.iter().enumerate().map(move |(pos, c)| {
            let index = match c.index {
                Some(index) => index,
                None if by_place => i64::try_from(pos).unwrap_or(i64::MAX),
                None => 0,
            };
            (index, c)
        })
    }

    /// A Gemini chunk has candidates, usage, prompt feedback or a model version; an error
    /// object is every dialect's.
    pub fn belongs(&self) -> Belongs {
        if self.has_candidates
            || self.usage.is_some()
            || self.prompt_feedback.is_some()
            || self.model_version.is_some()
        {
            Belongs::Own
        } else if self.error.is_some() {
            Belongs::Neutral
        } else {
            Belongs::Foreign
        }
    }

    /// The `blockReason` of a blocked prompt: prompt feedback with a block reason and no
    /// candidate.
    pub fn block_reason(&self) -> Option<String> {
        if !self.candidates.is_empty() {
            return None;
        }
        let feedback = self.prompt_feedback?;
        #[derive(Default)]
        struct Feedback<'a> {
            reason: Option<Str<'a>>,
        }
        map_struct!(Feedback, "prompt feedback", |f, key, map| {
            match key.as_str() {
                "blockReason" => f.reason = crate::json::read::str_or_skip(&mut map)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        });
        serde_json::from_str::<Feedback<'_>>(feedback.get())
            .ok()?
            .reason
            .map(|r| r.0.into_owned())
    }
}

/// The error of a blocked prompt (`promptFeedback.blockReason` and no candidate).
pub struct Blocked<'a> {
    message: String,
    type_: String,
    doc: &'a str,
}

/// The error a blocked prompt is reported as: code `prompt_blocked`, type the block reason.
pub fn blocked<'a>(reason: &str, doc: &'a str) -> Blocked<'a> {
    Blocked {
        message: format!("the prompt was blocked ({reason}): no candidate was generated"),
        type_: crate::json::write::string(reason),
        doc,
    }
}

impl Blocked<'_> {
    /// The blocked prompt as an error report.
    pub fn info(&self) -> super::ErrorInfo<'_> {
        super::ErrorInfo {
            message: std::borrow::Cow::Borrowed(&self.message),
            type_: Some(&self.type_),
            code: super::ErrorKind::PromptBlocked.code_json(),
            raw: Some(self.doc),
        }
    }
}

/// Decodes one chunk: in one pass by hand ([`read`]), or, for what that pass leaves (a key
/// with an escape, a float index, ...: see `crate::json::cursor`) and for every malformed
/// chunk, by serde_json, which then decides. Either reads a chunk the same.
pub fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
    match read::chunk(doc) {
        Some(chunk) => Ok(chunk),
        None => decode_serde(doc),
    }
}

/// Decodes one chunk with serde_json alone (the reading [`decode`]'s own pass must agree with).
pub fn decode_serde(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// A chunk read in one pass over its JSON (`crate::json::cursor`), as the `map_struct!`
/// readers below read it, key for key: the last of a repeated key wins, unknown keys of a
/// chunk, a candidate and a part are kept raw (checked for depth), `null` is absence. Every
/// byte is read once: a value kept as a `RawValue` (prompt feedback, an error, a function
/// call) is read by serde_json where it lies; an unknown key's value and the usage every chunk
/// repeats are kept as the text read. `None` hands the chunk to serde_json.
mod read {
    use super::{Candidate, Chunk, Part, Place};
    use crate::json::cursor::field::{keep, opt_int, opt_str, raw, raw_opt};
    use crate::json::cursor::Cursor;
    use crate::json::read::{depth_ok, Str};

    /// A boolean or `null` (`false`).
    fn opt_bool(c: &mut Cursor<'_>) -> Option<bool> {
        if c.null()? {
            return Some(false);
        }
        c.boolean()
    }

    pub(super) fn chunk(doc: &str) -> Option<Chunk<'_>> {
        let mut c = Cursor::new(doc);
        let mut chunk = Chunk::default();
        c.members(|c, key| {
            match key {
                "candidates" => {
                    chunk.has_candidates = true;
                    chunk.candidates = c.items(candidate)?;
                }
                "usageMetadata" => {
                    let text = c.value()?;
                    if !depth_ok(text) {
                        return None;
                    }
                    chunk.usage = (text != "null").then_some(text);
                }
                "promptFeedback" => chunk.prompt_feedback = raw_opt(c)?,
                "modelVersion" => chunk.model_version = opt_str(c)?,
                "responseId" => chunk.response_id = opt_str(c)?,
                "error" => chunk.error = raw_opt(c)?,
                _ => keep(&mut chunk.extra, key, c)?,
            }
            Some(())
        })?;
        c.at_end().then_some(chunk)
    }

    fn candidate<'a>(c: &mut Cursor<'a>) -> Option<Candidate<'a>> {
        let mut cand = Candidate::default();
        c.members(|c, key| {
            match key {
                "index" => cand.index = opt_int(c)?,
                "content" => {
                    if !c.null()? {
                        let (mut role, mut parts) = (None, Vec::new());
                        c.members(|c, key| {
                            match key {
                                "role" => role = opt_str(c)?,
                                "parts" => parts = c.items(part)?,
                                _ => {
                                    c.value()?;
                                }
                            }
                            Some(())
                        })?;
                        cand.has_content = true;
                        cand.role = role;
                        cand.parts = parts;
                    }
                }
                "finishReason" => cand.finish_reason = opt_str(c)?,
                _ => keep(&mut cand.extra, key, c)?,
            }
            Some(())
        })?;
        Some(cand)
    }

    fn part<'a>(c: &mut Cursor<'a>) -> Option<Part<'a>> {
        let mut part = Part::default();
        c.members(|c, key| {
            match key {
                "text" => {
                    (part.text, part.text_literal) = if c.peek()? == b'"' {
                        let (text, literal) = c.string()?;
                        (Some(Str(text)), Place(Some(literal)))
                    } else {
                        c.value()?;
                        (None, Place(None))
                    };
                }
                "thought" => part.thought = opt_bool(c)?,
                "thoughtSignature" => part.thought_signature = opt_str(c)?,
                "functionCall" => {
                    // Rare (a call a stream): its own serde reader, on its text.
                    let value = raw(c)?;
                    if value.get() != "null" {
                        let mut call: super::Call<'_> = serde_json::from_str(value.get()).ok()?;
                        call.raw = Some(value);
                        part.function_call = Some(call);
                    }
                }
                _ => keep(&mut part.extra, key, c)?,
            }
            Some(())
        })?;
        Some(part)
    }
}

/// Whether `doc` (a frame's data, `event` its SSE event name) is this dialect's own: the
/// dialect's sniff rule in the registry (`super::registry`).
pub fn owns(_event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|c| c.belongs() == super::Belongs::Own)
}

/// `Option<T>` of a value that may be JSON `null`.
fn opt<'a, A: serde::de::MapAccess<'a>, T: serde::Deserialize<'a>>(
    map: &mut A,
) -> Result<Option<T>, A::Error> {
    map.next_value::<Option<T>>()
}

map_struct!(Chunk, "a Gemini stream chunk", |chunk, key, map| {
    match key.as_str() {
        "candidates" => {
            chunk.has_candidates = true;
            chunk.candidates = opt::<_, Vec<Candidate>>(&mut map)?.unwrap_or_default();
        }
        "usageMetadata" => chunk.usage = raw_opt(&mut map)?.map(RawValue::get),
        "promptFeedback" => chunk.prompt_feedback = raw_opt(&mut map)?,
        "modelVersion" => chunk.model_version = opt(&mut map)?,
        "responseId" => chunk.response_id = opt(&mut map)?,
        "error" => chunk.error = raw_opt(&mut map)?,
        _ => chunk.extra.keep(key, &mut map)?,
    }
});

/// A candidate's `content`: its role and parts.
#[derive(Default)]
struct Content<'a> {
    role: Option<Str<'a>>,
    parts: Vec<Part<'a>>,
}

map_struct!(Content, "a content object", |content, key, map| {
    match key.as_str() {
        "role" => content.role = opt(&mut map)?,
        "parts" => content.parts = opt::<_, Vec<Part>>(&mut map)?.unwrap_or_default(),
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

map_struct!(Candidate, "a candidate object", |c, key, map| {
    match key.as_str() {
        "index" => c.index = map.next_value::<Option<Int>>()?.map(|i| i.0),
        "content" => {
            if let Some(content) = opt::<_, Content>(&mut map)? {
                c.has_content = true;
                c.role = content.role;
                c.parts = content.parts;
            }
        }
        "finishReason" => c.finish_reason = opt(&mut map)?,
        _ => c.extra.keep(key, &mut map)?,
    }
});

map_struct!(Part, "a content part", |part, key, map| {
    match key.as_str() {
        "text" => part.text = crate::json::read::str_or_skip(&mut map)?,
        "thought" => part.thought = opt::<_, bool>(&mut map)?.unwrap_or(false),
        "thoughtSignature" => part.thought_signature = opt(&mut map)?,
        "functionCall" => {
            let value = raw(&mut map)?;
            if value.get() != "null" {
                let mut call: Call<'_> =
                    serde_json::from_str(value.get()).map_err(serde::de::Error::custom)?;
                call.raw = Some(value);
                part.function_call = Some(call);
            }
        }
        _ => part.extra.keep(key, &mut map)?,
    }
});

map_struct!(Call, "a functionCall object", |call, key, map| {
    match key.as_str() {
        "name" => call.name = opt(&mut map)?,
        "id" => call.id = opt(&mut map)?,
        "args" => call.args = raw_opt(&mut map)?,
        "partialArgs" => {
            call.partial_args = opt::<_, Vec<PartialArg>>(&mut map)?.unwrap_or_default()
        }
        "willContinue" => call.will_continue = opt::<_, bool>(&mut map)?.unwrap_or(false),
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

map_struct!(PartialArg, "a partialArgs entry", |arg, key, map| {
    match key.as_str() {
        "jsonPath" => arg.json_path = opt(&mut map)?,
        "stringValue" => {
            if let Some(s) = opt::<_, Str>(&mut map)? {
                arg.value = ArgValue::Str(s);
            }
        }
        "numberValue" | "boolValue" | "nullValue" => {
            let value = raw(&mut map)?;
            arg.value = if key.as_str() == "nullValue" {
                ArgValue::Null
            } else {
                ArgValue::Raw(value)
            };
        }
        "willContinue" => arg.will_continue = opt::<_, bool>(&mut map)?.unwrap_or(false),
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

/// What a `GeminiChunk`'s typed fields leave out of its chunk: see [`unshown`].
#[derive(Debug, Default, PartialEq)]
pub struct Unshown<'a> {
    /// The candidate's members other than `content`, `finishReason` and `index`
    /// (`safetyRatings`, `citationMetadata`, `groundingMetadata`, ...), as a JSON object.
    pub candidate: Option<String>,
    /// Whether a part of the candidate holds more than `text`, `thought` and
    /// `thoughtSignature` (a function call, inline data, ...): the parts are then shown whole.
    pub parts: bool,
    /// The chunk's `promptFeedback`, as sent.
    pub prompt_feedback: Option<&'a str>,
}

/// What the typed fields of the item of candidate `position` (`None`: a chunk without
/// candidates) leave out of the chunk's JSON `raw`.
pub fn unshown(raw: &str, position: Option<usize>) -> Unshown<'_> {
    use crate::json::tree::{members_except, Json};
    let mut out = Unshown::default();
    let Some(entries) = Json::object(raw) else {
        return out;
    };
    for (key, value) in entries {
        if key == "promptFeedback" {
            out.prompt_feedback = Some(value.get());
        }
        let (Some(at), "candidates") = (position, key.as_ref()) else {
            continue;
        };
        let Some(Json::Array(candidates)) = Json::read(value.get()) else {
            continue;
        };
        let Some(candidate) = candidates.get(at) else {
            continue;
        };
        out.candidate = members_except(candidate.get(), |k, _| {
            matches!(k, "content" | "finishReason" | "index")
        });
        let parts = Json::object(candidate.get())
            .and_then(|c| c.into_iter().find(|(k, _)| k == "content"))
            .and_then(|(_, content)| Json::object(content.get()))
            .and_then(|c| c.into_iter().find(|(k, _)| k == "parts"))
            .and_then(|(_, parts)| Json::objects(parts.get()));
        out.parts = parts.is_some_and(|parts| {
            parts
                .iter()
                .flatten()
                .any(|(k, _)| !matches!(k.as_ref(), "text" | "thought" | "thoughtSignature"))
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk as text, the borrowing of each of its strings included (a template reads only
    /// a borrowed text), for comparing the two readings.
    fn shown(c: &Chunk<'_>) -> String {
        fn b(s: &Option<Str<'_>>) -> &'static str {
            match s {
                Some(Str(Cow::Borrowed(_))) => "b",
                Some(Str(Cow::Owned(_))) => "o",
                None => "-",
            }
        }
        use std::borrow::Cow;
        let mut out = format!("{c:?}|{}{}", b(&c.model_version), b(&c.response_id));
        for cand in &c.candidates {
            out.push_str(b(&cand.role));
            out.push_str(b(&cand.finish_reason));
            for p in &cand.parts {
                out.push_str(b(&p.text));
                out.push_str(b(&p.thought_signature));
            }
        }
        out
    }

    /// Each text's literal (the one-pass reading's) is its place in the chunk: inside it,
    /// between quotes, and read back, the text.
    fn literals_are_their_texts(c: &Chunk<'_>, doc: &str) {
        for p in c.candidates.iter().flat_map(|c| &c.parts) {
            let Some(text) = &p.text else {
                assert!(p.text_literal.0.is_none());
                continue;
            };
            let literal = p.text_literal.0.unwrap();
            let at = literal.as_ptr() as usize - doc.as_ptr() as usize;
            assert_eq!(&doc[at..at + literal.len()], literal);
            assert_eq!(&doc[at - 1..at], "\"");
            assert_eq!(&doc[at + literal.len()..at + literal.len() + 1], "\"");
            let read: String = serde_json::from_str(&format!("\"{literal}\"")).unwrap();
            assert_eq!(read, text.as_str());
        }
    }

    /// The chunks of the Gemini captures and the shipped sample, whole: the one-pass reading
    /// takes each (none is left to serde_json) and reads it as serde_json does.
    fn captured() -> Vec<String> {
        let docs = crate::json::cursor::tests::captured_docs("gemini");
        assert!(docs.len() > 20, "{}", docs.len());
        docs
    }

    #[test]
    fn one_pass_reads_as_serde_json_reads() {
        let mut fast = 0;
        for doc in captured() {
            let slow = decode_serde(&doc);
            match read::chunk(&doc) {
                Some(c) => {
                    fast += 1;
                    assert_eq!(shown(&c), shown(slow.as_ref().unwrap()), "{doc}");
                    literals_are_their_texts(&c, &doc);
                }
                None => assert!(slow.is_err(), "left to serde_json: {doc}"),
            }
        }
        assert!(fast > 20, "{fast}");
    }

    /// Each rule of the readers, on chunks written for it: `null` as absence, the last of a
    /// repeated key, raw keys kept, values of another type, a text that is not a string.
    #[test]
    fn one_pass_rules_are_serde_jsons() {
        let docs = [
            r#"{"candidates":[{"content":{"parts":[{"text":"a","thought":null,"thoughtSignature":null}],"role":null},"index":null,"finishReason":null}],"modelVersion":null,"responseId":null,"usageMetadata":null,"promptFeedback":null,"error":null}"#,
            r#"{"candidates":null}"#,
            r#"{"candidates":[{"content":null,"content":{"parts":null,"role":"model"}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"a"}]},"content":{"role":"x"}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"a","text":5,"thought":true,"thought":false}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":{"x":[1]},"inlineData":{"data":"QQ=="},"x":null}],"other":[1,{}]},"safetyRatings":[],"index":3,"index":-1}],"createTime":"t","x":{"y":null}}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}},"functionCall":null}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.a","stringValue":"x","willContinue":true}],"willContinue":true}}]}}]}"#,
            r#"{"usageMetadata":{"promptTokenCount":3},"usageMetadata":{"promptTokenCount":4},"modelVersion":"a","modelVersion":"b\n"}"#,
            r#"{"promptFeedback":{"blockReason":"SAFETY"},"error":{"code":1}}"#,
            "{\"candidates\": [ {\"content\": {\"parts\": [{\"text\": \"\\u00e9\\n\"}]}} ] }\r\n ",
            r#"{}"#,
        ];
        for doc in docs {
            let fast = read::chunk(doc).unwrap_or_else(|| panic!("left to serde_json: {doc}"));
            assert_eq!(shown(&fast), shown(&decode_serde(doc).unwrap()), "{doc}");
        }
        // Left to serde_json, which reads or refuses them.
        for doc in [
            r#"{"candidates":[{"index":1.0}]}"#,
            r#"{"candidates":[{"index":"1"}]}"#,
            r#"{"modelVersion":1}"#,
            r#"{"candidates":[{"content":{"parts":[{"thought":"yes"}]}}]}"#,
            r#"{"candidates":[null]}"#,
            r#"{"a\n":1}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":5}}]}}]}"#,
            r#"[]"#,
            r#"{} x"#,
        ] {
            assert!(read::chunk(doc).is_none(), "{doc}");
        }
    }

    proptest::proptest! {
        /// A captured chunk with bytes cut out, doubled or put in (JSON's own punctuation,
        /// white space, escapes): what the one-pass reading accepts, serde_json accepts and
        /// reads the same; what serde_json refuses, the one pass leaves to it.
        #[test]
        fn one_pass_never_accepts_what_serde_json_refuses(
            pick in 0usize..1000,
            edits in proptest::collection::vec(
                (0usize..4096, 0usize..3, proptest::sample::select(
                    crate::json::cursor::tests::edit_pieces(&[
                        "\"index\": 1.0, ", "\"text\": 5, ", "\"content\": null, ",
                        "\"parts\": null, ",
                    ]),
                )), 1..4),
        ) {
            let docs = captured();
            let Some(doc) = crate::json::cursor::tests::edited(&docs[pick % docs.len()], &edits) else {
                return Ok(());
            };
            let slow = decode_serde(&doc);
            if let Some(fast) = read::chunk(&doc) {
                proptest::prop_assert!(slow.is_ok(), "serde_json refuses {doc}");
                proptest::prop_assert_eq!(shown(&fast), shown(slow.as_ref().unwrap()));
                literals_are_their_texts(&fast, &doc);
            }
        }
    }

    #[test]
    fn text_chunk() {
        let c = decode(r#"{"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 3},"modelVersion": "gemini-2.5-flash","responseId": "r1"}"#).unwrap();
        assert_eq!(c.candidates.len(), 1);
        let cand = &c.candidates[0];
        assert_eq!(cand.index, Some(0));
        assert!(cand.has_content && cand.parts[0].is_text());
        assert_eq!(cand.parts[0].text.as_ref().unwrap().as_str(), "Hi");
        assert_eq!(
            c.model_version.as_ref().unwrap().as_str(),
            "gemini-2.5-flash"
        );
        assert_eq!(c.belongs(), Belongs::Own);
    }

    #[test]
    fn streamed_call_pieces() {
        let c = decode(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x","willContinue":true},{"jsonPath":"$.n","numberValue":2},{"jsonPath":"$.z","nullValue":"NULL_VALUE"}],"willContinue":true}}]}}]}"#).unwrap();
        let call = c.candidates[0].parts[0].function_call.as_ref().unwrap();
        assert!(call.is_streamed() && call.will_continue);
        assert_eq!(call.partial_args.len(), 3);
        assert!(matches!(&call.partial_args[0].value, ArgValue::Str(s) if s.as_str() == "x"));
        assert!(matches!(call.partial_args[1].value, ArgValue::Raw(r) if r.get() == "2"));
        assert!(matches!(call.partial_args[2].value, ArgValue::Null));
    }

    #[test]
    fn blocked_prompt_and_error() {
        let c =
            decode(r#"{"promptFeedback":{"blockReason":"SAFETY"},"modelVersion":"m"}"#).unwrap();
        assert_eq!(c.block_reason().as_deref(), Some("SAFETY"));
        let c = decode(r#"{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}"#)
            .unwrap();
        assert_eq!(c.belongs(), Belongs::Neutral);
        assert_eq!(
            decode(r#"{"choices":[]}"#).unwrap().belongs(),
            Belongs::Foreign
        );
    }
}

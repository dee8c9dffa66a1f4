//! LLM dialects: the JSON of each frame decoded straight into flat Rust structs that borrow
//! from the frame text (no intermediate `serde_json::Value`).
//!
//! This module holds what the dialects share: how one frame's data splits into JSON documents
//! (normally one; a data buffer holding several newline-separated documents, or a trailing
//! `[DONE]` line, is split into each of them), how an error is read out of any of its wire
//! forms, and the body sniffer that tells an event stream from a bare JSON error body.
//! Nothing here is carried across frames except the sniffer's state. Cost: one decode of each
//! frame; the multi-document fallback runs only when the one-document decode failed.

use std::borrow::Cow;

use serde_json::value::RawValue;

registry::dialects!(registry::modules, pub);
pub mod detect;
pub mod registry;
pub mod template;
pub use registry::{Dialect, Family, Spec, SNIFF_ORDER, SPECS};

use crate::json::read::{map_struct, raw, str_or_skip, Str};

/// One JSON document of a frame, or the `[DONE]` sentinel.
#[derive(Debug)]
pub enum Doc<'a, T> {
    /// The stream's terminal sentinel.
    Done,
    /// A decoded document, with its text.
    Value(&'a str, T),
    /// A document that did not decode: the parser's message (it says where it broke).
    Malformed(String),
}

/// Whether a decoded document has the shape of the dialect that decoded it: a stream none of
/// whose documents is its own (a chat body read as Messages, ...) reports that instead of an
/// empty result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Belongs {
    /// The dialect's own event or chunk.
    Own,
    /// An error document: every dialect has them.
    Neutral,
    /// Something else (another dialect's event, an unknown object).
    Foreign,
}

/// Whether a data value is the `[DONE]` sentinel: exactly that, nothing around it (content
/// that mentions `[DONE]` is content, and `data: [DONE] ` is not the sentinel either).
pub fn is_done(data: &str) -> bool {
    data == "[DONE]"
}

/// Splits one frame's data into its documents, decoding each with `decode` and handing each
/// to `emit` as soon as it is decoded (no intermediate vector: decoded structs are large, and
/// moving them through one cost ~9% of a chat-stream profile).
pub fn split_docs<'a, T>(
    data: &'a str,
    decode: impl Fn(&'a str) -> Result<T, serde_json::Error>,
    mut emit: impl FnMut(Doc<'a, T>),
) {
    if is_done(data) {
        emit(Doc::Done);
        return;
    }
    if data.trim().is_empty() {
        return; // `data:` with nothing in it (a named event without payload): no document
    }
    match decode(data) {
        Ok(value) => emit(Doc::Value(data, value)),
        Err(err) if !data.contains('\n') => emit(Doc::Malformed(err.to_string())),
        Err(_) => split_lines(data, &decode, &mut emit),
    }
}

/// The cold path: several documents (and `[DONE]` lines) in one data buffer, as some servers
/// and some documentation print them (consecutive `data:` lines without blank lines).
fn split_lines<'a, T>(
    data: &'a str,
    decode: &impl Fn(&'a str) -> Result<T, serde_json::Error>,
    emit: &mut impl FnMut(Doc<'a, T>),
) {
    let mut segment_start = 0;
    let mut line_start = 0;
    for line in data.split('\n') {
        let line_end = line_start + line.len();
        if is_done(line) {
            segment(
                data.get(segment_start..line_start).unwrap_or_default(),
                decode,
                emit,
            );
            emit(Doc::Done);
            segment_start = (line_end + 1).min(data.len());
        }
        line_start = line_end + 1;
    }
    segment(data.get(segment_start..).unwrap_or_default(), decode, emit);
}

fn segment<'a, T>(
    text: &'a str,
    decode: &impl Fn(&'a str) -> Result<T, serde_json::Error>,
    emit: &mut impl FnMut(Doc<'a, T>),
) {
    if text.trim().is_empty() {
        return;
    }
    for value in serde_json::Deserializer::from_str(text).into_iter::<&'a RawValue>() {
        match value {
            Ok(raw) => emit(match decode(raw.get()) {
                Ok(v) => Doc::Value(raw.get(), v),
                Err(err) => Doc::Malformed(err.to_string()),
            }),
            Err(err) => {
                emit(Doc::Malformed(err.to_string()));
                return;
            }
        }
    }
}

/// The error of an `event: error` frame: read out of the first JSON document its data holds,
/// or its whole text when it holds none; and whether a `[DONE]` line came with it.
pub fn frame_error(data: &str) -> (ErrorInfo<'_>, bool) {
    let mut first = None;
    let mut done = false;
    let is_json = |d| serde_json::from_str::<serde::de::IgnoredAny>(d).map(|_| ());
    split_docs(data, is_json, |doc| match doc {
        Doc::Done => done = true,
        Doc::Value(text, ()) => {
            first.get_or_insert(text);
        }
        Doc::Malformed(_) => {}
    });
    (ErrorInfo::from_document(first.unwrap_or(data)), done)
}

/// An event's kind: its JSON `type`, else the frame's `event:` name; `error` for a document
/// with a top-level `error` key, whatever else it says (Messages and Responses events).
pub fn kind_of<'e>(type_: Option<&'e Str<'_>>, error: bool, frame_event: &'e [u8]) -> Cow<'e, str> {
    match type_ {
        _ if error => Cow::Borrowed("error"),
        Some(t) => Cow::Borrowed(t.as_str()),
        None => String::from_utf8_lossy(frame_event),
    }
}

/// The errors of ssewire's own reading (not sent by a server), each with its `type` and
/// `code` (README: "Errors"), in one place. A server's error keeps what the server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A frame whose data is not JSON: reported, and the stream goes on.
    MalformedJson,
    /// Documents came but none is the dialect's own (a chat body read as Messages).
    WrongDialect,
    /// The body ended before the dialect's terminal marker.
    IncompleteStream,
    /// The body is one JSON document that is not an error object, not an event stream.
    JsonBody,
    /// The body is neither an event stream nor JSON (a proxy's HTML page, a plain-text 404).
    NotEventStream,
    /// Gemini blocked the prompt: no candidate came (the type is the block reason).
    PromptBlocked,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [ErrorKind; 6] = [
        ErrorKind::MalformedJson,
        ErrorKind::WrongDialect,
        ErrorKind::IncompleteStream,
        ErrorKind::JsonBody,
        ErrorKind::NotEventStream,
        ErrorKind::PromptBlocked,
    ];

    /// The `type` readers and exceptions see, as the raw JSON an [`ErrorInfo`] keeps (`None`:
    /// the kind fixes none).
    pub const fn type_json(self) -> Option<&'static str> {
        match self {
            ErrorKind::MalformedJson => Some("\"malformed_json\""),
            ErrorKind::IncompleteStream => Some("\"incomplete_stream\""),
            ErrorKind::WrongDialect | ErrorKind::JsonBody | ErrorKind::NotEventStream => {
                Some(INVALID_RESPONSE_JSON)
            }
            ErrorKind::PromptBlocked => None,
        }
    }

    /// The `code`, as the raw JSON an [`ErrorInfo`] keeps (`None`: the kind has none).
    pub const fn code_json(self) -> Option<&'static str> {
        match self {
            ErrorKind::MalformedJson => None,
            ErrorKind::WrongDialect => Some("\"wrong_dialect\""),
            ErrorKind::IncompleteStream => Some("\"incomplete_stream\""),
            ErrorKind::JsonBody => Some("\"json_body\""),
            ErrorKind::NotEventStream => Some("\"not_event_stream\""),
            ErrorKind::PromptBlocked => Some("\"prompt_blocked\""),
        }
    }

    /// The error of this kind with `message` (and the document that carried it, if any).
    pub fn info<'a>(self, message: Cow<'a, str>, raw: Option<&'a str>) -> ErrorInfo<'a> {
        ErrorInfo {
            message,
            type_: self.type_json(),
            code: self.code_json(),
            raw,
        }
    }
}

/// The `type` of a body or message that is not what its framing or dialect says (the kinds
/// above, and each fault of the AWS event stream, whose code is the fault's kind).
pub const INVALID_RESPONSE: &str = "invalid_response";
/// [`INVALID_RESPONSE`] as raw JSON.
pub const INVALID_RESPONSE_JSON: &str = "\"invalid_response\"";

/// An error the server reported, read out of whichever wire form carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo<'a> {
    /// The error's message, as text.
    pub message: Cow<'a, str>,
    /// The raw JSON of the error's `type`, if any (usually a string).
    pub type_: Option<&'a str>,
    /// The raw JSON of the error's `code`, if any (a string or a number).
    pub code: Option<&'a str>,
    /// The JSON text of the whole document that carried the error, if it was JSON.
    pub raw: Option<&'a str>,
}

#[derive(Default)]
struct ErrorFields<'a> {
    message: Option<Str<'a>>,
    error: Option<&'a RawValue>,
    type_: Option<&'a RawValue>,
    /// Google's name for the kind of error (`"RESOURCE_EXHAUSTED"`): the type when there is
    /// no `type`.
    status: Option<&'a RawValue>,
    code: Option<&'a RawValue>,
}

map_struct!(ErrorFields, "an error object", |fields, key, map| {
    match key.as_str() {
        "message" => fields.message = str_or_skip(&mut map)?,
        "error" => fields.error = Some(raw(&mut map)?),
        "type" => fields.type_ = Some(raw(&mut map)?),
        "code" => fields.code = Some(raw(&mut map)?),
        "status" => fields.status = Some(raw(&mut map)?),
        _ => {
            map.next_value::<serde::de::IgnoredAny>()?;
        }
    }
});

impl<'a> ErrorInfo<'a> {
    /// Reads the error out of a document `doc` whose `error` value is `error`: an object with
    /// `message` / `type` / `code` (the OpenAI and Anthropic forms), or a bare string.
    pub fn from_error_value(doc: Option<&'a str>, error: &'a RawValue) -> Self {
        let text = error.get();
        if let Ok(message) = serde_json::from_str::<Str<'a>>(text) {
            return ErrorInfo {
                message: message.0,
                type_: None,
                code: None,
                raw: doc,
            };
        }
        match serde_json::from_str::<ErrorFields<'a>>(text) {
            Ok(f) => ErrorInfo {
                message: f
                    .message
                    .map(|m| m.0)
                    .or_else(|| f.error.map(|e| Cow::Borrowed(e.get())))
                    .unwrap_or(Cow::Borrowed(text)),
                type_: f
                    .type_
                    .map(RawValue::get)
                    .filter(|t| *t != "null")
                    .or_else(|| f.status.map(RawValue::get).filter(|t| *t != "null")),
                code: f.code.map(RawValue::get).filter(|c| *c != "null"),
                raw: doc,
            },
            Err(_) => ErrorInfo {
                message: Cow::Borrowed(text),
                type_: None,
                code: None,
                raw: doc,
            },
        }
    }

    /// The error of an error document `doc`: its `error` value when it has one, else the
    /// document itself.
    pub fn of_document(doc: &'a str, error: Option<&'a RawValue>) -> Self {
        match error {
            Some(e) => ErrorInfo::from_error_value(Some(doc), e),
            None => ErrorInfo::from_document(doc),
        }
    }

    /// Reads a response body that was JSON instead of an event stream: an error object in any
    /// form `from_document` knows, or else a "not an event stream" error.
    pub fn from_body(doc: &'a str) -> Self {
        let trimmed = doc.trim();
        match serde_json::from_str::<ErrorFields<'a>>(trimmed) {
            Ok(f) if f.error.is_some_and(|e| e.get() != "null") || f.message.is_some() => {
                ErrorInfo::from_document(trimmed)
            }
            _ => ErrorKind::JsonBody.info(
                Cow::Borrowed("the response body is a JSON document, not an event stream"),
                serde_json::from_str::<serde::de::IgnoredAny>(trimmed)
                    .is_ok()
                    .then_some(trimmed),
            ),
        }
    }

    /// Reads the error out of a whole document: its `error` key if it has one, else the
    /// document itself (`{"message": ..., "type": ...}`), else the text as the message (an
    /// `event: error` frame whose data is not JSON).
    pub fn from_document(doc: &'a str) -> Self {
        let trimmed = doc.trim();
        match serde_json::from_str::<ErrorFields<'a>>(trimmed) {
            Ok(ErrorFields {
                error: Some(error), ..
            }) if error.get() != "null" => ErrorInfo::from_error_value(Some(trimmed), error),
            Ok(f) => ErrorInfo {
                message: f.message.map(|m| m.0).unwrap_or(Cow::Borrowed(trimmed)),
                // In `{"type": "error", "message": ...}` (the Responses form) `type` names the
                // event, not the kind of error.
                type_: f.type_.map(RawValue::get).filter(|t| {
                    !matches!(*t, "null" | "\"error\"") && !t.starts_with("\"response.")
                }),
                code: f.code.map(RawValue::get).filter(|c| *c != "null"),
                raw: Some(trimmed),
            },
            Err(_) => ErrorInfo {
                message: Cow::Borrowed(trimmed),
                type_: None,
                code: None,
                raw: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(data: &str) -> Vec<String> {
        let mut out = Vec::new();
        split_docs(
            data,
            |d| serde_json::from_str::<&RawValue>(d).map(|r| r.get().to_string()),
            |d| out.push(d),
        );
        out.into_iter()
            .map(|d| match d {
                Doc::Done => "DONE".into(),
                Doc::Value(_, v) => v,
                Doc::Malformed(m) => format!("ERR {m}"),
            })
            .collect()
    }

    #[test]
    fn one_document_and_done() {
        assert_eq!(docs(r#"{"a":1}"#), vec![r#"{"a":1}"#]);
        assert_eq!(docs("[DONE]"), vec!["DONE"]);
        assert_eq!(docs("{\n  \"a\": 1\n}"), vec!["{\n  \"a\": 1\n}"]);
    }

    #[test]
    fn empty_data_has_no_document() {
        assert!(docs("").is_empty());
        assert!(docs(" \n").is_empty());
    }

    #[test]
    fn done_is_exact() {
        assert_eq!(docs("[DONE]"), vec!["DONE"]);
        assert!(docs("[DONE] ")[0].starts_with("ERR "));
    }

    #[test]
    fn several_documents_in_one_buffer() {
        assert_eq!(
            docs("{\"a\":1}\n{\"b\":2}\n[DONE]"),
            vec![r#"{"a":1}"#, r#"{"b":2}"#, "DONE"]
        );
    }

    #[test]
    fn malformed_says_where() {
        let d = docs(r#"{"a":"#);
        assert!(
            d[0].starts_with("ERR ") && d[0].contains("line 1 column"),
            "{d:?}"
        );
        let d = docs("{\"a\":1}\n{\"b\":");
        assert_eq!(d[0], r#"{"a":1}"#);
        assert!(d[1].starts_with("ERR "));
    }

    #[test]
    fn error_forms() {
        let e = ErrorInfo::from_document(
            r#"{"error":{"message":"m","type":"timeout_error","code":"timeout"}}"#,
        );
        assert_eq!(e.message, "m");
        assert_eq!(e.type_, Some(r#""timeout_error""#));
        assert_eq!(e.code, Some(r#""timeout""#));
        let e = ErrorInfo::from_document(r#"{"error":"plain"}"#);
        assert_eq!(e.message, "plain");
        let e = ErrorInfo::from_document("Internal error");
        assert_eq!(e.message, "Internal error");
        assert_eq!(e.raw, None);
        let e = ErrorInfo::from_body(r#"{"object":"chat.completion","error":null}"#);
        assert_eq!(e.type_, Some(r#""invalid_response""#));
        let e = ErrorInfo::from_document(r#"{"type":"error","message":"m","code":"c"}"#);
        assert_eq!(e.type_, None);
        let e = ErrorInfo::from_document(
            r#"{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}"#,
        );
        assert_eq!(e.type_, Some(r#""UNAVAILABLE""#));
        assert_eq!(e.code, Some("503"));
        let e = ErrorInfo::from_document(r#"{"message":"x","code":429}"#);
        assert_eq!((e.message.as_ref(), e.code), ("x", Some("429")));
    }
}

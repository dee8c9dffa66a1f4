//! OpenAI-compatible Responses stream events (`response.created`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.completed`, `error`, ...), decoded
//! straight into one flat borrowed struct.
//!
//! The event kind is the JSON `type`. Deltas and the final texts of `.done` events land in
//! typed fields; items, parts and whole responses stay raw JSON until read. Unknown event
//! types decode like any other (their raw JSON is kept), never fatal. Nothing is carried
//! across frames. Cost: one pass over each frame's JSON.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::ErrorInfo;
use crate::json::read::{map_struct, raw_opt, str_or_raw, str_or_skip, Extra, Int, Str};
use crate::json::tree::{object_text, Entry, ObjectOr};

/// One event of a Responses stream (an item's worth of data). JSON-valued fields hold raw
/// JSON text; `raw` is the whole event (for all but the plain deltas).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventView<'a> {
    /// The event's kind: its JSON `type`, else the frame's `event:` name.
    pub kind: &'a str,
    /// The output item's `output_index`, when the event has one.
    pub output_index: Option<i64>,
    /// The content part's `content_index`, when the event has one.
    pub content_index: Option<i64>,
    /// The reasoning summary part's `summary_index`, when the event has one.
    pub summary_index: Option<i64>,
    /// The `item_id` of the output item the event is about.
    pub item_id: Option<&'a str>,
    /// The `delta` of a `.delta` event (a string, or the raw JSON text of any other value).
    pub delta: Option<&'a str>,
    /// The `text` of a `.done` event: the part's whole text.
    pub text: Option<&'a str>,
    /// The `refusal` of a `response.refusal.done` event: the whole refusal text.
    pub refusal: Option<&'a str>,
    /// The `arguments` of a `response.function_call_arguments.done` event: the call's whole
    /// arguments text.
    pub arguments: Option<&'a str>,
    /// The `item` of an `output_item.added` or `.done` event, as raw JSON text.
    pub item: Option<&'a str>,
    /// The `part` of a content or summary part's `.added` or `.done` event, as raw JSON text.
    pub part: Option<&'a str>,
    /// The `response` object of a created, in-progress or terminal event, as raw JSON text.
    pub response: Option<&'a str>,
    /// `response`'s entries, when the decoder read them (see `dialect::responses::Event`).
    pub response_entries: Option<&'a [Entry<'a>]>,
    /// The event's `logprobs`, as raw JSON text (absent when `[]`).
    pub logprobs: Option<&'a str>,
    /// The whole event's JSON text, for all but the plain deltas.
    pub raw: Option<&'a str>,
}

/// One Responses stream event, flattened.
#[derive(Debug, Default)]
pub struct Event<'a> {
    /// The event's JSON `type`.
    pub type_: Option<Str<'a>>,
    /// The event's `sequence_number`.
    pub sequence_number: Option<i64>,
    /// The output item's `output_index`, when the event has one.
    pub output_index: Option<i64>,
    /// The content part's `content_index`, when the event has one.
    pub content_index: Option<i64>,
    /// The reasoning summary part's `summary_index`, when the event has one.
    pub summary_index: Option<i64>,
    /// The `item_id` of the output item the event is about.
    pub item_id: Option<Str<'a>>,
    /// The `delta` of a `.delta` event (a string, or the raw JSON text of any other value).
    pub delta: Option<Str<'a>>,
    /// The `text` of a `.done` event: the part's whole text.
    pub text: Option<Str<'a>>,
    /// The `refusal` of a `response.refusal.done` event: the whole refusal text.
    pub refusal: Option<Str<'a>>,
    /// The `arguments` of a `response.function_call_arguments.done` event (a string, or the
    /// raw JSON text of any other value).
    pub arguments: Option<Str<'a>>,
    /// The `item` of an `output_item.added` or `.done` event, as raw JSON.
    pub item: Option<&'a RawValue>,
    /// The `part` of a content or summary part's `.added` or `.done` event, as raw JSON.
    pub part: Option<&'a RawValue>,
    /// The response object's text (a created, in-progress or terminal event's).
    pub response: Option<&'a str>,
    /// A terminal event's response read one level deep by the decode itself (when the type
    /// came before it, as OpenAI writes it): the fold reads these, not the text again.
    pub response_entries: Option<Vec<Entry<'a>>>,
    /// The event's `logprobs`, as raw JSON (absent when `[]`).
    pub logprobs: Option<&'a RawValue>,
    /// `error` of an error event that nests it (`{"type": "error", "error": {...}}`).
    pub error: Option<&'a RawValue>,
    /// Keys this decoder does not know (a vendor's, or a new event's such as a shell call
    /// delta's `command_index`): the raw event is kept for them.
    pub extra: Extra<'a>,
    /// OpenAI's `obfuscation` padding, if sent (not part of any item).
    pub obfuscation: Option<Str<'a>>,
}

/// The terminal event types.
pub const TERMINAL: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

impl Event<'_> {
    /// The event's JSON `type`, or `""` when it has none.
    pub fn kind(&self) -> &str {
        self.type_.as_ref().map_or("", Str::as_str)
    }

    /// Whether this is a Responses event (its `type`, else the frame's `event:` name, starts
    /// with `response.`), an error, or something else.
    pub fn belongs(&self, event: &[u8]) -> super::Belongs {
        let kind = self.type_.as_ref().map_or(event, |t| t.as_str().as_bytes());
        if kind.starts_with(b"response.") {
            super::Belongs::Own
        } else if kind == b"error" || self.error.is_some() {
            super::Belongs::Neutral
        } else {
            super::Belongs::Foreign
        }
    }

    /// Whether all of this event is in typed fields (a plain text or arguments delta). Such an
    /// event is a flat JSON object: no value of it is an object or a non-empty array.
    pub fn is_common_delta(&self) -> bool {
        self.extra.is_empty() && self.is_delta()
    }

    /// Whether this is a delta event with no item, part, response, logprobs or error (what
    /// other keys it has aside): a frame template can be made from it.
    pub fn is_delta(&self) -> bool {
        self.logprobs.is_none()
            && self.item.is_none()
            && self.part.is_none()
            && self.response.is_none()
            && self.error.is_none()
            && self.delta.is_some()
            && self.kind().ends_with(".delta")
    }
}

#[derive(Debug, Default)]
struct ResponseError<'a> {
    error: Option<&'a RawValue>,
}

map_struct!(ResponseError, "a response object", |r, key, map| {
    match key.as_str() {
        "error" => r.error = raw_opt(&mut map)?,
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

/// The `error` object of a response (`response.failed` nests its error there), if any.
pub fn response_error(response: &str) -> Option<&RawValue> {
    serde_json::from_str::<ResponseError<'_>>(response)
        .ok()
        .and_then(|r| r.error)
}

/// What one decoded Responses document is to the fold (and to a translation reading the
/// same stream): an error (reported, not folded), or an event to fold, with the error it
/// reports (`response.failed`). Lives on the stack for one document: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Read<'e> {
    /// An error event (`error`, `response.error`), reported rather than folded.
    Error(ErrorInfo<'e>),
    /// An event to fold, with the error it reports (`response.failed`), if any.
    Fold(EventView<'e>, Option<ErrorInfo<'e>>),
}

impl<'a> Event<'a> {
    /// The event's kind: its JSON `type`, else the frame's `event:` name; `error` for a
    /// document with a top-level `error` key, whatever else it says.
    pub fn kind_of<'e>(&'e self, frame_event: &'e [u8]) -> Cow<'e, str> {
        super::kind_of(self.type_.as_ref(), self.error.is_some(), frame_event)
    }

    /// How this document (of text `doc`, kind `kind` from [`Event::kind_of`]) is read.
    pub fn read<'e>(&'e self, kind: &'e str, doc: &'e str) -> Read<'e> {
        let failed = match kind {
            "error" | "response.error" => {
                return Read::Error(ErrorInfo::of_document(doc, self.error))
            }
            "response.failed" => {
                let mut info = match self.response.and_then(response_error) {
                    Some(e) => ErrorInfo::from_error_value(Some(doc), e),
                    None => ErrorInfo::from_document(r#"{"message":"the response failed"}"#),
                };
                info.raw = Some(doc);
                Some(info)
            }
            _ => None,
        };
        let view = EventView {
            kind,
            output_index: self.output_index,
            content_index: self.content_index,
            summary_index: self.summary_index,
            item_id: self.item_id.as_ref().map(Str::as_str),
            delta: self.delta.as_ref().map(Str::as_str),
            text: self.text.as_ref().map(Str::as_str),
            refusal: self.refusal.as_ref().map(Str::as_str),
            arguments: self.arguments.as_ref().map(Str::as_str),
            item: self.item.map(RawValue::get),
            part: self.part.map(RawValue::get),
            response: self.response,
            response_entries: self.response_entries.as_deref(),
            logprobs: self.logprobs.map(RawValue::get),
            raw: (!self.is_common_delta()).then_some(doc),
        };
        Read::Fold(view, failed)
    }
}

/// Decodes one document of a Responses stream.
pub fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
    let mut event: Event<'_> = serde_json::from_str(doc)?;
    if let Some(entries) = &event.response_entries {
        // The object's text, found around the entries the decode read (no second pass).
        event.response = object_text(doc, entries);
    }
    Ok(event)
}

/// Whether `doc` (a frame's data, `event` its SSE event name) is this dialect's own: the
/// dialect's sniff rule in the registry (`super::registry`).
pub fn owns(event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|c| c.belongs(event) == super::Belongs::Own)
}

map_struct!(
    Event,
    "a Responses stream event object",
    |event, key, map| {
        match key.as_str() {
            "type" => event.type_ = map.next_value()?,
            "sequence_number" => {
                event.sequence_number = map.next_value::<Option<Int>>()?.map(|i| i.0)
            }
            "output_index" => event.output_index = map.next_value::<Option<Int>>()?.map(|i| i.0),
            "content_index" => event.content_index = map.next_value::<Option<Int>>()?.map(|i| i.0),
            "summary_index" => event.summary_index = map.next_value::<Option<Int>>()?.map(|i| i.0),
            "item_id" => event.item_id = map.next_value()?,
            "delta" => event.delta = str_or_raw(&mut map)?,
            "text" => event.text = str_or_raw(&mut map)?,
            "refusal" => event.refusal = str_or_raw(&mut map)?,
            "arguments" => event.arguments = str_or_raw(&mut map)?,
            "item" => event.item = raw_opt(&mut map)?,
            "part" => event.part = raw_opt(&mut map)?,
            "response" => {
                let terminal = event.type_.as_ref().map(Str::as_str);
                if terminal.is_some_and(|t| TERMINAL.contains(&t)) {
                    // Its entries, read in this one pass (the text is found around them).
                    event.response_entries = match map.next_value::<Option<ObjectOr<'_>>>()? {
                        Some(ObjectOr::Object(entries)) => Some(entries),
                        // A value that is no object: a terminal without a response.
                        _ => None,
                    };
                    event.response = None;
                } else {
                    event.response = raw_opt(&mut map)?.map(RawValue::get);
                    event.response_entries = None;
                }
            }
            "logprobs" => {
                event.logprobs = raw_opt(&mut map)?.filter(|l| l.get() != "[]");
            }
            "error" => event.error = raw_opt(&mut map)?,
            // "obfuscation" pads delta events to hide their length: no item holds it; its
            // place is recorded for the frame template.
            "obfuscation" => event.obfuscation = str_or_skip(&mut map)?,
            _ => event.extra.keep(key, &mut map)?,
        }
    }
);

/// The keys of an event a `ResponseEvent`'s typed fields show (the fields bear their names).
const SHOWN: [&str; 14] = [
    "type",
    "sequence_number",
    "output_index",
    "content_index",
    "summary_index",
    "item_id",
    "delta",
    "text",
    "refusal",
    "arguments",
    "item",
    "part",
    "response",
    "logprobs",
];

/// The members of an event's JSON that no typed field of its item shows, as a JSON object;
/// `None` when the fields show it all.
pub fn unshown(raw: &str) -> Option<String> {
    crate::json::tree::members_except(raw, |key, _| SHOWN.contains(&key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_delta() {
        let e = decode(r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"sequence_number":3}"#).unwrap();
        assert!(e.is_common_delta());
        assert_eq!(e.delta.unwrap().as_str(), "Hi");
        assert_eq!(e.sequence_number, Some(3));
    }

    /// A terminal event's response (its type sent first) is read one level deep by the decode
    /// itself, and its text is found around the entries: the same text a raw read gives, for
    /// any spacing and any key (escaped quotes too).
    #[test]
    fn a_terminal_response_is_read_in_the_decode() {
        for response in [
            r#"{"id":"r","status":"completed","output":[{"a":{"b":"}"}}]}"#,
            r#"{ "id" : "r" , "a\"b\\" : [1, {"c": "\""}] , "z":null }"#,
            "{\n\t\"k\\\\\": 1\r\n}",
            r#"{"only":{}}"#,
        ] {
            let doc = format!(
                r#"{{"type":"response.completed","sequence_number":3,"response":{response}}}"#
            );
            let e = decode(&doc).unwrap();
            assert_eq!(e.response, Some(response), "{doc}");
            let entries = e.response_entries.as_ref().unwrap();
            let read = crate::json::tree::Json::object(response).unwrap();
            assert_eq!(entries.len(), read.len());
            for ((k1, v1), (k2, v2)) in entries.iter().zip(&read) {
                assert_eq!((k1, v1.get()), (k2, v2.get()));
            }
        }
        // An empty object; the type after the response (read as text, entries left to the
        // fold); a value that is no object (no response).
        let e = decode(r#"{"type":"response.completed","response":{ }}"#).unwrap();
        assert_eq!(
            (e.response, e.response_entries.map(|e| e.len())),
            (Some("{}"), Some(0))
        );
        let e = decode(r#"{"response":{"id":"r"},"type":"response.completed"}"#).unwrap();
        assert_eq!(e.response, Some(r#"{"id":"r"}"#));
        assert!(e.response_entries.is_none());
        for value in ["\"x\"", "1", "[1,{}]", "null", "true"] {
            let doc = format!(r#"{{"type":"response.failed","response":{value}}}"#);
            let e = decode(&doc).unwrap();
            assert!(
                e.response.is_none() && e.response_entries.is_none(),
                "{doc}"
            );
        }
        assert!(decode(r#"{"type":"response.completed","response":{"a":1,}}"#).is_err());
    }

    #[test]
    fn completed_keeps_the_response_raw() {
        let e = decode(r#"{"type":"response.completed","response":{"id":"r","status":"completed"},"sequence_number":9}"#).unwrap();
        assert!(TERMINAL.contains(&e.kind()));
        assert_eq!(e.response.unwrap(), r#"{"id":"r","status":"completed"}"#);
        assert!(!e.is_common_delta());
    }
}

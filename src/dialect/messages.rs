//! Anthropic-compatible Messages stream events (`message_start`, `content_block_start`,
//! `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`, `ping`,
//! `error`), decoded straight into one flat borrowed struct.
//!
//! The event kind comes from the JSON `type` (proxies that send only `data:` lines are common),
//! falling back to the `event:` name. The common deltas (`text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`) land in typed fields; rarely read parts (the message
//! of `message_start`, a content block, usage, a citation) stay raw JSON. Unknown delta keys
//! are kept. Nothing is carried across frames. Cost: one pass over each frame's JSON.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::ErrorInfo;
use crate::json::read::{map_struct, raw_opt, Extra, Int, Str};

/// One event of a Messages stream (an item's worth of data). JSON-valued fields hold raw
/// JSON text; `raw` is the whole event (for all but the common deltas).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventView<'a> {
    /// The event's kind: its JSON `type`, else the frame's `event:` name.
    pub kind: &'a str,
    /// The content block's `index`, when the event has one.
    pub index: Option<i64>,
    /// The delta's `type` (`text_delta`, `input_json_delta`, ...), when the event has a delta.
    pub delta_type: Option<&'a str>,
    /// The text of a `text_delta`.
    pub text: Option<&'a str>,
    /// The `partial_json` of an `input_json_delta`: a piece of the tool input's JSON text.
    pub partial_json: Option<&'a str>,
    /// The text of a `thinking_delta`.
    pub thinking: Option<&'a str>,
    /// The `signature` of a `signature_delta`.
    pub signature: Option<&'a str>,
    /// The `stop_reason` of a `message_delta`.
    pub stop_reason: Option<&'a str>,
    /// The `stop_sequence` of a `message_delta`.
    pub stop_sequence: Option<&'a str>,
    /// The `content_block` of a `content_block_start`, as raw JSON text.
    pub content_block: Option<&'a str>,
    /// The `message` of a `message_start`, as raw JSON text.
    pub message: Option<&'a str>,
    /// The event's top-level `usage`, as raw JSON text.
    pub usage: Option<&'a str>,
    /// The delta's `citation` (of a `citations_delta`), as raw JSON text.
    pub citation: Option<&'a str>,
    /// The whole event's JSON text, for all but the common deltas.
    pub raw: Option<&'a str>,
}

/// One Messages stream event, flattened.
#[derive(Debug, Default)]
pub struct Event<'a> {
    /// The event's JSON `type`.
    pub type_: Option<Str<'a>>,
    /// The content block's `index`, when the event has one.
    pub index: Option<i64>,
    /// The event's `delta` (empty when it has none).
    pub delta: Delta<'a>,
    /// The `content_block` of a `content_block_start`, as raw JSON.
    pub content_block: Option<&'a RawValue>,
    /// The `message` of a `message_start`, as raw JSON.
    pub message: Option<&'a RawValue>,
    /// The event's top-level `usage`, as raw JSON.
    pub usage: Option<&'a RawValue>,
    /// The `error` object of an error event, as raw JSON.
    pub error: Option<&'a RawValue>,
    /// Keys of the event this decoder does not know (kept for the frame template's raw
    /// holes; the raw event is kept for them).
    pub extra: Extra<'a>,
}

/// The `delta` of `content_block_delta` (a typed delta) or of `message_delta` (stop fields).
#[derive(Debug, Default)]
pub struct Delta<'a> {
    /// The delta's `type` (`text_delta`, `input_json_delta`, ...).
    pub type_: Option<Str<'a>>,
    /// The text of a `text_delta`.
    pub text: Option<Str<'a>>,
    /// The `partial_json` of an `input_json_delta`: a piece of the tool input's JSON text.
    pub partial_json: Option<Str<'a>>,
    /// The text of a `thinking_delta`.
    pub thinking: Option<Str<'a>>,
    /// The `signature` of a `signature_delta`.
    pub signature: Option<Str<'a>>,
    /// The `stop_reason` of a `message_delta`.
    pub stop_reason: Option<Str<'a>>,
    /// The `stop_sequence` of a `message_delta`.
    pub stop_sequence: Option<Str<'a>>,
    /// The `citation` of a `citations_delta`, as raw JSON.
    pub citation: Option<&'a RawValue>,
    /// Keys of the delta this decoder does not know.
    pub extra: Extra<'a>,
}

impl Event<'_> {
    /// Whether this is a Messages event (its `type`, else the frame's `event:` name, is one of
    /// the Messages event types), an error, or something else.
    pub fn belongs(&self, event: &[u8]) -> super::Belongs {
        let kind = self.type_.as_ref().map_or(event, |t| t.as_str().as_bytes());
        match kind {
            b"message_start"
            | b"message_delta"
            | b"message_stop"
            | b"content_block_start"
            | b"content_block_delta"
            | b"content_block_stop"
            | b"ping" => super::Belongs::Own,
            _ if kind == b"error" || self.error.is_some() => super::Belongs::Neutral,
            _ => super::Belongs::Foreign,
        }
    }

    /// Whether this is one of the frequent delta events whose fields are all typed (no need
    /// to keep the raw JSON of the event).
    pub fn is_common_delta(&self) -> bool {
        self.extra.is_empty() && self.delta.extra.is_empty() && self.is_typed_delta()
    }

    /// Whether this is a delta of one of the common types (what other keys it has aside): a
    /// frame template can be made from it.
    pub fn is_typed_delta(&self) -> bool {
        self.type_.as_ref().map(Str::as_str) == Some("content_block_delta")
            && matches!(
                self.delta.type_.as_ref().map(Str::as_str),
                Some("text_delta" | "input_json_delta" | "thinking_delta" | "signature_delta")
            )
    }
}

/// What one decoded Messages document is to the fold (and to a translation reading the
/// same stream): nothing (`ping`), an error (reported, not folded), or an event to fold.
pub enum Read<'e> {
    /// A `ping`: nothing to fold.
    Skip,
    /// An error event, reported rather than folded.
    Error(ErrorInfo<'e>),
    /// An event to fold.
    Fold(EventView<'e>),
}

impl<'a> Event<'a> {
    /// The event's kind: its JSON `type`, else the frame's `event:` name; `error` for a
    /// document with an `error` key, whatever else it says.
    pub fn kind_of<'e>(&'e self, frame_event: &'e [u8]) -> Cow<'e, str> {
        super::kind_of(self.type_.as_ref(), self.error.is_some(), frame_event)
    }

    /// How this document (of text `doc`, kind `kind` from [`Event::kind_of`]) is read.
    pub fn read<'e>(&'e self, kind: &'e str, doc: &'e str) -> Read<'e> {
        match kind {
            "ping" => Read::Skip,
            "error" => Read::Error(ErrorInfo::of_document(doc, self.error)),
            _ => {
                let d = &self.delta;
                Read::Fold(EventView {
                    kind,
                    index: self.index,
                    delta_type: d.type_.as_ref().map(Str::as_str),
                    text: d.text.as_ref().map(Str::as_str),
                    partial_json: d.partial_json.as_ref().map(Str::as_str),
                    thinking: d.thinking.as_ref().map(Str::as_str),
                    signature: d.signature.as_ref().map(Str::as_str),
                    stop_reason: d.stop_reason.as_ref().map(Str::as_str),
                    stop_sequence: d.stop_sequence.as_ref().map(Str::as_str),
                    content_block: self.content_block.map(RawValue::get),
                    message: self.message.map(RawValue::get),
                    usage: self.usage.map(RawValue::get),
                    citation: d.citation.map(RawValue::get),
                    raw: (!self.is_common_delta()).then_some(doc),
                })
            }
        }
    }
}

/// Decodes one document of a Messages stream.
pub fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Whether `doc` (a frame's data, `event` its SSE event name) is this dialect's own: the
/// dialect's sniff rule in the registry (`super::registry`).
pub fn owns(event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|c| c.belongs(event) == super::Belongs::Own)
}

map_struct!(
    Event,
    "a Messages stream event object",
    |event, key, map| {
        match key.as_str() {
            "type" => event.type_ = map.next_value()?,
            "index" => event.index = map.next_value::<Option<Int>>()?.map(|i| i.0),
            "delta" => event.delta = map.next_value::<Option<Delta>>()?.unwrap_or_default(),
            "content_block" => event.content_block = raw_opt(&mut map)?,
            "message" => event.message = raw_opt(&mut map)?,
            "usage" => event.usage = raw_opt(&mut map)?,
            "error" => event.error = raw_opt(&mut map)?,
            _ => event.extra.keep(key, &mut map)?,
        }
    }
);

map_struct!(Delta, "a delta object", |delta, key, map| {
    match key.as_str() {
        "type" => delta.type_ = map.next_value()?,
        "text" => delta.text = map.next_value()?,
        "partial_json" => delta.partial_json = map.next_value()?,
        "thinking" => delta.thinking = map.next_value()?,
        "signature" => delta.signature = map.next_value()?,
        "stop_reason" => delta.stop_reason = map.next_value()?,
        "stop_sequence" => delta.stop_sequence = map.next_value()?,
        "citation" => delta.citation = raw_opt(&mut map)?,
        _ => delta.extra.keep(key, &mut map)?,
    }
});

/// The delta types whose every key a `MessageEvent`'s typed fields show.
const TYPED_DELTAS: [&str; 5] = [
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "signature_delta",
    "citations_delta",
];

/// The members of an event's JSON that no typed field of its item shows (`type`, `index`,
/// `message`, `content_block`, `usage`; `delta` when its type is a typed one or it holds only
/// `stop_reason` / `stop_sequence`), as a JSON object; `None` when the fields show it all.
pub fn unshown(raw: &str, delta_type: Option<&str>) -> Option<String> {
    let typed_delta = delta_type.is_some_and(|t| TYPED_DELTAS.contains(&t));
    crate::json::tree::members_except(raw, |key, value| match key {
        "type" | "index" | "message" | "content_block" | "usage" => true,
        "delta" => {
            typed_delta
                || crate::json::tree::Json::object(value.get()).is_some_and(|entries| {
                    entries
                        .iter()
                        .all(|(k, _)| k == "stop_reason" || k == "stop_sequence")
                })
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_delta_is_common() {
        let e = decode(
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        )
        .unwrap();
        assert!(e.is_common_delta());
        assert_eq!(e.delta.text.unwrap().as_str(), "Hi");
    }

    #[test]
    fn message_delta_and_start() {
        let e = decode(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}"#).unwrap();
        assert_eq!(e.delta.stop_reason.unwrap().as_str(), "end_turn");
        assert!(e.delta.stop_sequence.is_none());
        assert_eq!(e.usage.unwrap().get(), r#"{"output_tokens":12}"#);
        assert!(!decode(r#"{"type":"message_start","message":{"id":"m"}}"#)
            .unwrap()
            .is_common_delta());
    }

    #[test]
    fn citations_delta_is_kept_raw() {
        let e = decode(r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"cited_text":"x"}}}"#).unwrap();
        assert!(!e.is_common_delta());
        assert_eq!(e.delta.citation.unwrap().get(), r#"{"cited_text":"x"}"#);
    }
}

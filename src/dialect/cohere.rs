//! Cohere's v2 chat stream (`POST /v2/chat`, `stream: true`): typed SSE events, each decoded
//! into one borrowed struct.
//!
//! Each event names its kind twice: the SSE `event:` line and the JSON `type` (recorders that
//! keep only the data keep the type). The kinds: `message-start` (the id; empty lists of
//! content, tool calls and citations), `content-start` / `content-delta` / `content-end` (a
//! text or thinking part by `index`), `tool-plan-delta` (text written before the calls),
//! `tool-call-start` / `tool-call-delta` / `tool-call-end` (a call by `index`, arguments as
//! string pieces), `citation-start` / `citation-end`, `message-end` (`finish_reason`, `usage`;
//! with `finish_reason: "ERROR"` also `error` and `error_type`), `debug`. The same key holds
//! a list in `message-start` and one object in the other events (`content`, `tool_calls`,
//! `citations`): a list is read as nothing. Strings are borrowed from the frame unless they
//! hold escapes. Nothing is carried across frames. Cost: one pass over each frame's JSON.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Belongs, ErrorInfo};
use crate::json::read::{Int, Str};

/// The event kinds of a Cohere v2 chat stream.
pub const KINDS: [&str; 12] = [
    "message-start",
    "content-start",
    "content-delta",
    "content-end",
    "tool-plan-delta",
    "tool-call-start",
    "tool-call-delta",
    "tool-call-end",
    "citation-start",
    "citation-end",
    "message-end",
    "debug",
];

/// One event of a Cohere stream.
#[derive(Debug, Default, Deserialize)]
pub struct Event<'a> {
    /// The event's kind.
    #[serde(borrow, default, rename = "type")]
    pub type_: Option<Str<'a>>,
    /// The message's id (`message-start`).
    #[serde(borrow, default)]
    pub id: Option<Str<'a>>,
    /// The content part's, tool call's or citation's index.
    #[serde(default)]
    pub index: Option<Int>,
    /// What the event adds.
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    /// A content delta's log probabilities, as sent.
    #[serde(borrow, default)]
    pub logprobs: Option<&'a RawValue>,
}

/// An event's `delta`.
#[derive(Debug, Default, Deserialize)]
pub struct Delta<'a> {
    /// The message piece.
    #[serde(borrow, default)]
    pub message: Option<Message<'a>>,
    /// `message-end`'s reason: `COMPLETE`, `TOOL_CALL`, `MAX_TOKENS`, `STOP_SEQUENCE`,
    /// `ERROR`, `TIMEOUT`.
    #[serde(borrow, default)]
    pub finish_reason: Option<Str<'a>>,
    /// `message-end`'s usage (`billed_units`, `tokens`, `cached_tokens`), as sent.
    #[serde(borrow, default)]
    pub usage: Option<&'a RawValue>,
    /// `message-end`'s error message (with `finish_reason: "ERROR"`), as sent.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
    /// `message-end`'s kind of error (`INVALID_TOOL_GENERATION`, ...), as sent.
    #[serde(borrow, default)]
    pub error_type: Option<&'a RawValue>,
}

/// A delta's `message`.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// `assistant` (`message-start`).
    #[serde(borrow, default)]
    pub role: Option<Str<'a>>,
    /// A content part's start or piece (a list in `message-start`: nothing).
    #[serde(borrow, default)]
    pub content: One<Content<'a>>,
    /// A piece of the tool plan.
    #[serde(borrow, default)]
    pub tool_plan: Option<Str<'a>>,
    /// A tool call's start or argument piece (a list in `message-start`: nothing).
    #[serde(borrow, default)]
    pub tool_calls: One<Call<'a>>,
    /// A citation (`citation-start`), as sent: an object, or the empty list of
    /// `message-start`.
    #[serde(borrow, default)]
    pub citations: Option<&'a RawValue>,
}

/// A content part's start (`type`, empty text) or piece.
#[derive(Debug, Default, Deserialize)]
pub struct Content<'a> {
    /// `text` or `thinking` (`content-start`).
    #[serde(borrow, default, rename = "type")]
    pub type_: Option<Str<'a>>,
    /// A piece of text.
    #[serde(borrow, default)]
    pub text: Option<Str<'a>>,
    /// A piece of thinking.
    #[serde(borrow, default)]
    pub thinking: Option<Str<'a>>,
}

/// A tool call's start (`id`, `type`, the function's name) or argument piece.
#[derive(Debug, Default, Deserialize)]
pub struct Call<'a> {
    /// The call's id.
    #[serde(borrow, default)]
    pub id: Option<Str<'a>>,
    /// `function`.
    #[serde(borrow, default, rename = "type")]
    pub type_: Option<Str<'a>>,
    /// The function called.
    #[serde(borrow, default)]
    pub function: Option<Function<'a>>,
}

/// A tool call's `function`.
#[derive(Debug, Default, Deserialize)]
pub struct Function<'a> {
    /// The tool's name.
    #[serde(borrow, default)]
    pub name: Option<Str<'a>>,
    /// A piece of the arguments' JSON text.
    #[serde(borrow, default)]
    pub arguments: Option<Str<'a>>,
}

/// A value that is one object where an event adds one thing, and a list where
/// `message-start` states the empty message: the object, or nothing.
#[derive(Debug)]
pub struct One<T>(pub Option<T>);

impl<T> Default for One<T> {
    fn default() -> Self {
        One(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for One<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = One<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object or a list")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<One<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| One(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<One<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(One(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<One<T>, E> {
                Ok(One(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'a> Event<'a> {
    /// The event's kind: its JSON `type`, else the frame's `event:` name.
    pub fn kind<'e>(&'e self, event: &'e [u8]) -> &'e str {
        match &self.type_ {
            Some(t) => t,
            None => std::str::from_utf8(event).unwrap_or_default(),
        }
    }

    /// The delta's message, if any.
    pub fn message(&self) -> Option<&Message<'a>> {
        self.delta.as_ref()?.message.as_ref()
    }

    /// The content part of a `content-start` or `content-delta`.
    pub fn content(&self) -> Option<&Content<'a>> {
        self.message()?.content.0.as_ref()
    }

    /// The tool call of a `tool-call-start` or `tool-call-delta`.
    pub fn call(&self) -> Option<&Call<'a>> {
        self.message()?.tool_calls.0.as_ref()
    }

    /// A piece of a call's arguments.
    pub fn arguments(&self) -> Option<&str> {
        self.call()?.function.as_ref()?.arguments.as_deref()
    }

    /// The tool plan piece of a `tool-plan-delta`.
    pub fn tool_plan(&self) -> Option<&str> {
        self.message()?.tool_plan.as_deref()
    }

    /// The citation of a `citation-start`, as sent (an object; never `message-start`'s list).
    pub fn citation(&self) -> Option<&'a RawValue> {
        self.message()?
            .citations
            .filter(|c| c.get().starts_with('{'))
    }

    /// `message-end`'s finish reason.
    pub fn finish_reason(&self) -> Option<&str> {
        self.delta.as_ref()?.finish_reason.as_deref()
    }

    /// `message-end`'s usage, as sent.
    pub fn usage(&self) -> Option<&'a RawValue> {
        self.delta.as_ref()?.usage.filter(|u| u.get() != "null")
    }

    /// The index, as sent (an integer).
    pub fn index(&self) -> Option<i64> {
        self.index.map(|i| i.0)
    }

    /// The stream's error, when this is a `message-end` that ended in one: its `error` (the
    /// message) and `error_type`; `doc` is the event's JSON.
    pub fn failure(&self, doc: &'a str) -> Option<ErrorInfo<'a>> {
        let delta = self.delta.as_ref()?;
        let error = delta.error.filter(|e| e.get() != "null");
        if error.is_none() && delta.finish_reason.as_deref() != Some("ERROR") {
            return None;
        }
        let message = match error {
            Some(e) => match serde_json::from_str::<Str<'a>>(e.get()) {
                Ok(s) => s.0,
                Err(_) => std::borrow::Cow::Borrowed(e.get()),
            },
            None => {
                std::borrow::Cow::Borrowed("the model's generation failed (finish_reason ERROR)")
            }
        };
        Some(ErrorInfo {
            message,
            type_: delta.error_type.map(RawValue::get).filter(|t| *t != "null"),
            code: None,
            raw: Some(doc),
        })
    }

    /// Whether the event is Cohere's: its kind is one of [`KINDS`].
    pub fn belongs(&self, event: &[u8]) -> Belongs {
        if KINDS.contains(&self.kind(event)) {
            Belongs::Own
        } else {
            Belongs::Foreign
        }
    }
}

/// Decodes one event's JSON.
pub fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Whether `doc` (one event's JSON, of SSE event `event`) is this dialect's own: the
/// dialect's sniff rule in the registry. Its JSON `type` must say so (an `event:` name alone
/// is not enough: another dialect's data could sit under it).
pub fn owns(_event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|e| e.type_.as_deref().is_some_and(|t| KINDS.contains(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_kind() {
        let e = decode(r#"{"id":"abc","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}"#).unwrap();
        assert_eq!(e.kind(b""), "message-start");
        assert_eq!(e.id.as_deref(), Some("abc"));
        assert!(e.content().is_none() && e.call().is_none() && e.citation().is_none());
        let e = decode(r#"{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"thinking","thinking":""}}}}"#).unwrap();
        assert_eq!(e.content().unwrap().type_.as_deref(), Some("thinking"));
        let e = decode(r#"{"type":"content-delta","index":1,"delta":{"message":{"content":{"text":"Hi \"x\""}}}}"#).unwrap();
        assert_eq!(e.content().unwrap().text.as_deref(), Some("Hi \"x\""));
        assert_eq!(e.index(), Some(1));
        let e = decode(r#"{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"get_weather_1","type":"function","function":{"name":"get_weather","arguments":""}}}}}"#).unwrap();
        assert_eq!(e.call().unwrap().id.as_deref(), Some("get_weather_1"));
        let e = decode(r#"{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\n \""}}}}}"#).unwrap();
        assert_eq!(e.arguments(), Some("{\n \""));
        let e = decode(r#"{"type":"citation-start","index":0,"delta":{"message":{"citations":{"start":1,"end":5,"text":"Paris","sources":[{"type":"tool","id":"t1","tool_output":{"a":1}}]}}}}"#).unwrap();
        assert!(e.citation().unwrap().get().starts_with("{\"start\""));
        let e = decode(r#"{"type":"message-end","delta":{"finish_reason":"ERROR","error":"bad \"tool\"","error_type":"INVALID_TOOL_GENERATION","usage":{}}}"#).unwrap();
        let f = e.failure("doc").unwrap();
        assert_eq!(f.message, "bad \"tool\"");
        assert_eq!(f.type_, Some("\"INVALID_TOOL_GENERATION\""));
        let e = decode(r#"{"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":{"tokens":{"input_tokens":3,"output_tokens":2}}}}"#).unwrap();
        assert!(e.failure("doc").is_none());
        assert_eq!(e.belongs(b""), Belongs::Own);
        assert!(owns(
            b"",
            r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I"}}}"#
        ));
        assert!(!owns(b"content-delta", r#"{"choices":[]}"#));
        assert!(!owns(b"", r#"{"type":"content_block_delta","index":0}"#));
    }
}

//! Amazon Bedrock Converse stream events (`ConverseStream`): the payload of one event stream
//! message, whose `:event-type` header names the event (`messageStart`, `contentBlockStart`,
//! `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata`), decoded into one flat
//! borrowed struct. Bedrock pads each payload with a random string under `p` (ignored).
//!
//! The common deltas (text, tool input, reasoning text and signature) land in typed fields;
//! the rare parts (a block's `start`, a citation, usage, metrics, trace, the model's extra
//! response fields) stay raw JSON. Nothing is carried across events. Cost: one pass over each
//! payload.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Belongs;

/// The event types of a Converse stream.
pub const EVENTS: [&str; 6] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

/// One Converse stream event's payload, flattened.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event<'a> {
    /// `messageStart`.
    #[serde(borrow, default)]
    pub role: Option<Cow<'a, str>>,
    /// The block's `contentBlockIndex`, in the events of a content block.
    #[serde(default)]
    pub content_block_index: Option<i64>,
    /// `contentBlockStart`: `{"toolUse": {"toolUseId", "name"}}` and others, as sent.
    #[serde(borrow, default)]
    pub start: Option<&'a RawValue>,
    /// `contentBlockDelta`.
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    /// `messageStop`.
    #[serde(borrow, default)]
    pub stop_reason: Option<Cow<'a, str>>,
    /// `messageStop`: the model's `additionalModelResponseFields`, as raw JSON.
    #[serde(borrow, default)]
    pub additional_model_response_fields: Option<&'a RawValue>,
    /// `metadata`.
    #[serde(borrow, default)]
    pub usage: Option<&'a RawValue>,
    /// `metadata`: the `metrics` object (`latencyMs`), as raw JSON.
    #[serde(borrow, default)]
    pub metrics: Option<&'a RawValue>,
    /// `metadata`: the `trace` object (guardrail and prompt router traces), as raw JSON.
    #[serde(borrow, default)]
    pub trace: Option<&'a RawValue>,
    /// `metadata`: the `performanceConfig` object, as raw JSON.
    #[serde(borrow, default)]
    pub performance_config: Option<&'a RawValue>,
    /// An exception's payload, or an error document.
    #[serde(borrow, default, alias = "Message")]
    pub message: Option<Cow<'a, str>>,
}

/// The `delta` of `contentBlockDelta`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta<'a> {
    /// A piece of the block's text.
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    /// A piece of a tool call's input.
    #[serde(borrow, default)]
    pub tool_use: Option<ToolUseDelta<'a>>,
    /// A piece of reasoning: its text, its signature or redacted reasoning.
    #[serde(borrow, default)]
    pub reasoning_content: Option<ReasoningDelta<'a>>,
    /// A citation of the block's text, as raw JSON.
    #[serde(borrow, default)]
    pub citation: Option<&'a RawValue>,
    /// A server tool's result, in pieces: a list of `{"text"}` or `{"json"}`.
    #[serde(borrow, default)]
    pub tool_result: Option<&'a RawValue>,
}

/// `delta.toolUse`: a piece of the call's JSON input.
#[derive(Debug, Default, Deserialize)]
pub struct ToolUseDelta<'a> {
    /// A piece of the call's input, as JSON text.
    #[serde(borrow, default)]
    pub input: Option<Cow<'a, str>>,
}

/// `delta.reasoningContent`: reasoning text, its signature, or redacted reasoning (base64).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningDelta<'a> {
    /// A piece of the reasoning text.
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    /// The signature of the reasoning text.
    #[serde(borrow, default)]
    pub signature: Option<Cow<'a, str>>,
    /// Redacted reasoning, base64-encoded.
    #[serde(borrow, default)]
    pub redacted_content: Option<Cow<'a, str>>,
}

/// `start.toolUse`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStart<'a> {
    /// The call's `toolUseId`.
    #[serde(borrow, default)]
    pub tool_use_id: Option<Cow<'a, str>>,
    /// The called tool's `name`.
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// `server_tool_use` for a tool the provider runs itself.
    #[serde(borrow, default, rename = "type")]
    pub type_: Option<Cow<'a, str>>,
}

/// `start.toolResult`: a server tool's result block (its content comes in deltas).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultStart<'a> {
    /// The `toolUseId` of the call this result answers.
    #[serde(borrow, default)]
    pub tool_use_id: Option<Cow<'a, str>>,
    /// The result's `type`.
    #[serde(borrow, default, rename = "type")]
    pub type_: Option<Cow<'a, str>>,
    /// The result's `status` (`success`, `error`).
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start<'a> {
    #[serde(borrow, default)]
    tool_use: Option<ToolStart<'a>>,
    #[serde(borrow, default)]
    tool_result: Option<ResultStart<'a>>,
}

impl<'a> Event<'a> {
    /// The tool call a `contentBlockStart` opens, if it opens one.
    pub fn tool_start(&self) -> Option<ToolStart<'a>> {
        let start: Start<'a> = serde_json::from_str(self.start?.get()).ok()?;
        start.tool_use
    }

    /// The server tool result a `contentBlockStart` opens, if it opens one.
    pub fn result_start(&self) -> Option<ResultStart<'a>> {
        let start: Start<'a> = serde_json::from_str(self.start?.get()).ok()?;
        start.tool_result
    }

    /// Whether `event` (the `:event-type`) is a Converse event.
    pub fn belongs(&self, event: &[u8]) -> Belongs {
        if EVENTS.iter().any(|e| e.as_bytes() == event) {
            Belongs::Own
        } else if self.message.is_some() {
            Belongs::Neutral
        } else {
            Belongs::Foreign
        }
    }
}

/// Decodes one event's payload.
pub fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Whether `doc` (a payload, `event` its `:event-type`) is this dialect's own: the dialect's
/// sniff rule in the registry (`super::registry`).
pub fn owns(event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|e| e.belongs(event) == Belongs::Own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_each_event_kind() {
        let e =
            decode(r#"{"contentBlockIndex":0,"delta":{"text":"Hi \"there\""},"p":"abc"}"#).unwrap();
        assert_eq!(e.content_block_index, Some(0));
        assert_eq!(e.delta.unwrap().text.as_deref(), Some("Hi \"there\""));
        let e =
            decode(r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}"#)
                .unwrap();
        let t = e.tool_start().unwrap();
        assert_eq!(
            (t.tool_use_id.as_deref(), t.name.as_deref()),
            (Some("t1"), Some("f"))
        );
        let e =
            decode(r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":"}}}"#).unwrap();
        assert_eq!(
            e.delta.unwrap().tool_use.unwrap().input.as_deref(),
            Some("{\"a\":")
        );
        let e =
            decode(r#"{"delta":{"reasoningContent":{"signature":"sig"}},"contentBlockIndex":0}"#)
                .unwrap();
        assert_eq!(
            e.delta
                .unwrap()
                .reasoning_content
                .unwrap()
                .signature
                .as_deref(),
            Some("sig")
        );
        let e = decode(r#"{"stopReason":"tool_use"}"#).unwrap();
        assert_eq!(e.stop_reason.as_deref(), Some("tool_use"));
        let e = decode(r#"{"usage":{"inputTokens":3},"metrics":{"latencyMs":10}}"#).unwrap();
        assert_eq!(e.usage.unwrap().get(), r#"{"inputTokens":3}"#);
        assert!(owns(b"metadata", r#"{"usage":{}}"#));
        assert!(!owns(b"message", r#"{"choices":[]}"#));
    }
}

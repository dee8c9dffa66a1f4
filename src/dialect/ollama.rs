//! Ollama's native stream (`POST /api/chat`, `POST /api/generate`): NDJSON, one JSON object a
//! line, each decoded into one flat borrowed struct.
//!
//! A chat line carries `message` (`role`, `content`, `thinking`, whole `tool_calls`,
//! `images`); a generate line carries `response` (and `thinking`) at the top level instead.
//! The last line has `done: true`, `done_reason`, the token counts and the server's durations
//! in nanoseconds (and, for generate, `context`). `{"error": "..."}` is an error line. Counts
//! and durations stay raw JSON (a server may write them as it likes; the fold copies them).
//! Strings are borrowed from the line unless they hold escapes ([`Str`]: a frame template can
//! then leave them open). Nothing is carried across lines. Cost: one pass over each line.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Belongs;
use crate::json::read::Str;

/// The terminal line's counts and durations, in the order Ollama writes them.
pub const COUNTS: [&str; 6] = [
    "total_duration",
    "load_duration",
    "prompt_eval_count",
    "prompt_eval_duration",
    "eval_count",
    "eval_duration",
];

/// One line of an Ollama stream.
#[derive(Debug, Default, Deserialize)]
pub struct Line<'a> {
    /// The model that answers.
    #[serde(borrow, default)]
    pub model: Option<Str<'a>>,
    /// When the line was made (RFC 3339).
    #[serde(borrow, default)]
    pub created_at: Option<Str<'a>>,
    /// A chat line's piece of the assistant message.
    #[serde(borrow, default)]
    pub message: Option<Message<'a>>,
    /// A generate line's piece of text.
    #[serde(borrow, default)]
    pub response: Option<Str<'a>>,
    /// A generate line's piece of thinking.
    #[serde(borrow, default)]
    pub thinking: Option<Str<'a>>,
    /// `true` on the terminal line.
    #[serde(default)]
    pub done: Option<bool>,
    /// Why the answer ended: `stop`, `length`, `load`, `unload`.
    #[serde(borrow, default)]
    pub done_reason: Option<Str<'a>>,
    /// The terminal line's `total_duration`, as sent.
    #[serde(borrow, default)]
    pub total_duration: Option<&'a RawValue>,
    /// `load_duration`, as sent.
    #[serde(borrow, default)]
    pub load_duration: Option<&'a RawValue>,
    /// `prompt_eval_count` (left out when the prompt came from the cache), as sent.
    #[serde(borrow, default)]
    pub prompt_eval_count: Option<&'a RawValue>,
    /// `prompt_eval_duration`, as sent.
    #[serde(borrow, default)]
    pub prompt_eval_duration: Option<&'a RawValue>,
    /// `eval_count`, as sent.
    #[serde(borrow, default)]
    pub eval_count: Option<&'a RawValue>,
    /// `eval_duration`, as sent.
    #[serde(borrow, default)]
    pub eval_duration: Option<&'a RawValue>,
    /// Generate's `context` (the conversation's tokens), as sent.
    #[serde(borrow, default)]
    pub context: Option<&'a RawValue>,
    /// A line's token log probabilities (`"logprobs": true` in the request), as sent.
    #[serde(borrow, default)]
    pub logprobs: Option<&'a RawValue>,
    /// The model a local server forwards to (a cloud model run through a local Ollama).
    #[serde(borrow, default)]
    pub remote_model: Option<Str<'a>>,
    /// The host a local server forwards to.
    #[serde(borrow, default)]
    pub remote_host: Option<Str<'a>>,
    /// An error line's `error` (a string, or an object from a proxy).
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// A chat line's `message`.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// `assistant`.
    #[serde(borrow, default)]
    pub role: Option<Str<'a>>,
    /// A piece of the answer's text.
    #[serde(borrow, default)]
    pub content: Option<Str<'a>>,
    /// A piece of the model's thinking.
    #[serde(borrow, default)]
    pub thinking: Option<Str<'a>>,
    /// Whole tool calls (`[{"function": {"name", "arguments": {...}}}]`), as sent.
    #[serde(borrow, default)]
    pub tool_calls: Option<&'a RawValue>,
    /// Images the message carries, as sent.
    #[serde(borrow, default)]
    pub images: Option<&'a RawValue>,
}

impl Line<'_> {
    /// The line's counts and durations, by name, in [`COUNTS`]' order.
    pub fn counts(&self) -> [(&'static str, Option<&RawValue>); 6] {
        [
            (COUNTS[0], self.total_duration),
            (COUNTS[1], self.load_duration),
            (COUNTS[2], self.prompt_eval_count),
            (COUNTS[3], self.prompt_eval_duration),
            (COUNTS[4], self.eval_count),
            (COUNTS[5], self.eval_duration),
        ]
    }

    /// Whether the line is Ollama's: it carries a message or a response, and `done` or when
    /// it was made (a terminal line may carry `done` and `created_at` alone); an error line is
    /// neutral.
    pub fn belongs(&self) -> Belongs {
        let said = self.message.is_some() || self.response.is_some();
        let own = (said && (self.done.is_some() || self.created_at.is_some()))
            || (self.done.is_some() && self.created_at.is_some());
        if own {
            Belongs::Own
        } else if self.error.is_some() {
            Belongs::Neutral
        } else {
            Belongs::Foreign
        }
    }
}

/// Decodes one line.
pub fn decode(doc: &str) -> Result<Line<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Whether `doc` (one line) is this dialect's own: the dialect's sniff rule in the registry.
pub fn owns(_event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|l| l.belongs() == Belongs::Own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_chat_generate_terminal_and_error_lines() {
        let l = decode(
            r#"{"model":"qwen3","created_at":"2025-06-01T00:00:00Z","message":{"role":"assistant","content":"Hi \"you\"","thinking":"hm"},"done":false}"#,
        )
        .unwrap();
        let m = l.message.as_ref().unwrap();
        assert_eq!(m.content.as_deref(), Some("Hi \"you\""));
        assert_eq!(m.thinking.as_deref(), Some("hm"));
        assert_eq!(l.belongs(), Belongs::Own);
        let l = decode(r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":false}"#).unwrap();
        assert_eq!(
            l.message.unwrap().tool_calls.unwrap().get(),
            r#"[{"function":{"name":"f","arguments":{"a":1}}}]"#
        );
        let l = decode(r#"{"model":"m","created_at":"t","response":"","done":true,"done_reason":"length","total_duration":5,"eval_count":2,"context":[1,2]}"#).unwrap();
        assert_eq!(l.done_reason.as_deref(), Some("length"));
        assert_eq!(l.counts()[0].1.map(RawValue::get), Some("5"));
        assert!(l.counts()[2].1.is_none());
        assert_eq!(l.context.unwrap().get(), "[1,2]");
        let l = decode(r#"{"error":"model \"x\" not found"}"#).unwrap();
        assert_eq!(l.belongs(), Belongs::Neutral);
        assert!(owns(
            b"message",
            r#"{"model":"m","created_at":"t","done":true}"#
        ));
        assert!(!owns(b"message", r#"{"model":"m","choices":[]}"#));
    }
}

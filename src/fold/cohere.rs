//! The fold of a Cohere v2 chat stream: its events assembled into the non-streaming v2 chat
//! response (`{"id", "finish_reason", "message": {"role", "content", "tool_plan",
//! "tool_calls", "citations"}, "usage"}`).
//!
//! Rules: content parts (text or thinking) and tool calls are kept by their `index`, in index
//! order; their pieces are joined; a call with no argument pieces keeps the arguments its
//! start sent (`""`); tool plan pieces are joined; citations are kept as streamed, in the order
//! they started; `message-end` gives the finish reason and the usage as sent. `content`,
//! `tool_plan`, `tool_calls` and `citations` are left out when empty, as Cohere leaves them.
//! Carried across events: the pieces so far. Cost: O(the answer); parts and calls are found
//! by index through an [`IntMap`], so hostile indexes cannot make it quadratic.

use crate::dialect::cohere::{Content, Event};
use crate::json::partial::{Joined, SoFar};

use super::summary::{texts, Node};
use super::{IntMap, Map, Out};

/// A content part.
#[derive(Debug, Default)]
struct Part {
    thinking: bool,
    text: String,
}

/// A tool call.
#[derive(Debug, Default)]
struct Call {
    id: Option<String>,
    type_: Option<String>,
    name: Option<String>,
    /// The argument pieces joined, read as partial JSON when asked (`partial_arguments`).
    arguments: Joined,
}

/// Whether a content part is thinking, the one rule the fold and the translation follow: its
/// `content-start`'s `type`; for a part whose start was not read, whether its first piece
/// came under `thinking` alone. Its pieces are then the ones under that key.
pub fn is_thinking(c: &Content<'_>) -> bool {
    match c.type_.as_deref() {
        Some(t) => t == "thinking",
        None => c.thinking.is_some() && c.text.is_none(),
    }
}

/// The piece of `c` a part of kind `thinking` takes.
pub fn piece<'c>(c: &'c Content<'_>, thinking: bool) -> Option<&'c str> {
    if thinking {
        c.thinking.as_deref()
    } else {
        c.text.as_deref()
    }
}

/// The fold's state.
#[derive(Debug, Default)]
pub struct CohereFold {
    id: Option<String>,
    role: Option<String>,
    parts: IntMap<Part>,
    tool_plan: String,
    calls: IntMap<Call>,
    citations: Vec<Box<str>>,
    logprobs: Vec<Box<str>>,
    finish_reason: Option<String>,
    usage: Option<Box<str>>,
    done: bool,
}

impl CohereFold {
    /// Folds one event (`event`: its SSE `event:` name). Nothing after `message-end` counts
    /// (as the translation reads it).
    pub fn add(&mut self, e: &Event<'_>, event: &[u8]) {
        if self.done {
            return;
        }
        let index = e.index().unwrap_or(0);
        match e.kind(event) {
            "message-start" => {
                if let Some(id) = e.id.as_deref() {
                    self.id = Some(id.to_owned());
                }
                if let Some(role) = e.message().and_then(|m| m.role.as_deref()) {
                    self.role = Some(role.to_owned());
                }
            }
            "content-start" | "content-delta" => {
                if let Some(c) = e.content() {
                    let part = self.parts.get_or_insert_with(index, || Part {
                        thinking: is_thinking(c),
                        text: String::new(),
                    });
                    part.text
                        .push_str(piece(c, part.thinking).unwrap_or_default());
                }
                if let Some(l) = e.logprobs.filter(|l| l.get() != "null") {
                    self.logprobs.push(l.get().into());
                }
            }
            "tool-plan-delta" => self.tool_plan.push_str(e.tool_plan().unwrap_or_default()),
            "tool-call-start" | "tool-call-delta" => {
                if let Some(c) = e.call() {
                    let call = self.calls.get_or_insert_with(index, Call::default);
                    if let Some(id) = c.id.as_deref() {
                        call.id = Some(id.to_owned());
                    }
                    if let Some(t) = c.type_.as_deref() {
                        call.type_ = Some(t.to_owned());
                    }
                    if let Some(f) = &c.function {
                        if let Some(name) = f.name.as_deref() {
                            call.name = Some(name.to_owned());
                        }
                        // Kept as sent (read when asked).
                        call.arguments
                            .push(f.arguments.as_deref().unwrap_or_default());
                    }
                }
            }
            "citation-start" => {
                if let Some(c) = e.citation() {
                    self.citations.push(c.get().into());
                }
            }
            "message-end" => {
                self.done = true;
                if let Some(reason) = e.finish_reason() {
                    self.finish_reason = Some(reason.to_owned());
                }
                if let Some(usage) = e.usage() {
                    self.usage = Some(usage.get().into());
                }
            }
            _ => {}
        }
    }

    /// The arguments of tool call `index` read so far (`partial_arguments`).
    pub fn arguments(&self, index: i64) -> Option<&Joined> {
        self.calls.get(index).map(|c| &c.arguments)
    }

    /// Whether `message-end` was read.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The usage `message-end` gave, as sent.
    pub fn usage(&self) -> Option<Out> {
        self.usage.as_deref().map(Out::json)
    }

    /// The non-streaming response the events so far make.
    pub fn result(&self) -> Out {
        let mut message = Map::new();
        message.set(
            "role",
            Out::Str(self.role.as_deref().unwrap_or("assistant").to_owned()),
        );
        let parts = self.parts.sorted();
        if !parts.is_empty() {
            let content = parts.iter().map(|(_, p)| {
                let (kind, key) = if p.thinking {
                    ("thinking", "thinking")
                } else {
                    ("text", "text")
                };
                let mut m = Map::new();
                m.set("type", Out::Str(kind.to_owned()));
                m.set(key, Out::Str(p.text.clone()));
                Out::Map(m)
            });
            message.set("content", Out::List(content.collect()));
        }
        if !self.tool_plan.is_empty() {
            message.set("tool_plan", Out::Str(self.tool_plan.clone()));
        }
        let calls = self.calls.sorted();
        if !calls.is_empty() {
            let calls = calls.iter().map(|(_, c)| {
                let mut function = Map::new();
                function.set("name", Out::str_or_null(c.name.as_deref()));
                function.set("arguments", Out::Str(c.arguments.text().to_owned()));
                let mut m = Map::new();
                m.set("id", Out::str_or_null(c.id.as_deref()));
                m.set(
                    "type",
                    Out::Str(c.type_.as_deref().unwrap_or("function").to_owned()),
                );
                m.set("function", Out::Map(function));
                Out::Map(m)
            });
            message.set("tool_calls", Out::List(calls.collect()));
        }
        if !self.citations.is_empty() {
            let citations = self.citations.iter().map(|c| Out::json(c));
            message.set("citations", Out::List(citations.collect()));
        }
        let mut m = Map::new();
        m.set("id", Out::str_or_null(self.id.as_deref()));
        m.set(
            "finish_reason",
            Out::str_or_null(self.finish_reason.as_deref()),
        );
        m.set("message", Out::Map(message));
        if let Some(usage) = &self.usage {
            m.set("usage", Out::json(usage));
        }
        if !self.logprobs.is_empty() {
            let logprobs = self.logprobs.iter().map(|l| Out::json(l));
            m.set("logprobs", Out::List(logprobs.collect()));
        }
        Out::Map(m)
    }
}

/// The answer's text in a Cohere response (`crate::fold::summary`): its text parts, joined.
pub fn final_text(result: Node<'_>) -> String {
    let content = result.path(&["message", "content"]);
    texts(content, &|part| {
        part.key("type")
            .and_then(Node::text)
            .is_some_and(|t| t == "thinking")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::cohere::decode;

    fn fold(events: &[&str]) -> CohereFold {
        let mut f = CohereFold::default();
        for e in events {
            f.add(&decode(e).unwrap(), b"");
        }
        f
    }

    #[test]
    fn a_turn_with_thinking_a_plan_a_call_and_a_citation() {
        let f = fold(&[
            r#"{"id":"m1","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}"#,
            r#"{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"thinking","thinking":""}}}}"#,
            r#"{"type":"content-delta","index":0,"delta":{"message":{"content":{"thinking":"Hm."}}}}"#,
            r#"{"type":"content-end","index":0}"#,
            r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will"}}}"#,
            r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":" look."}}}"#,
            r#"{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c1","type":"function","function":{"name":"f","arguments":""}}}}}"#,
            r#"{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"a\":"}}}}}"#,
            r#"{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"1}"}}}}}"#,
            r#"{"type":"tool-call-end","index":0}"#,
            r#"{"type":"content-start","index":1,"delta":{"message":{"content":{"type":"text","text":""}}}}"#,
            r#"{"type":"content-delta","index":1,"delta":{"message":{"content":{"text":"Paris"}}}}"#,
            r#"{"type":"citation-start","index":0,"delta":{"message":{"citations":{"start":0,"end":5,"text":"Paris","sources":[{"type":"tool","id":"c1:0","tool_output":{"x":1}}],"type":"TEXT_CONTENT"}}}}"#,
            r#"{"type":"citation-end","index":0}"#,
            r#"{"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":5,"output_tokens":3},"tokens":{"input_tokens":70,"output_tokens":3},"cached_tokens":0}}}"#,
        ]);
        assert!(f.done());
        assert_eq!(
            f.result().to_json(),
            r#"{"id":"m1","finish_reason":"COMPLETE","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Hm."},{"type":"text","text":"Paris"}],"tool_plan":"I will look.","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}],"citations":[{"start":0,"end":5,"text":"Paris","sources":[{"type":"tool","id":"c1:0","tool_output":{"x":1}}],"type":"TEXT_CONTENT"}]},"usage":{"billed_units":{"input_tokens":5,"output_tokens":3},"tokens":{"input_tokens":70,"output_tokens":3},"cached_tokens":0}}"#
        );
        assert_eq!(final_text(Node::Out(&f.result())), "Paris");
    }

    #[test]
    fn a_cut_stream_and_a_call_without_pieces() {
        let f = fold(&[
            r#"{"id":"m2","type":"message-start","delta":{"message":{"role":"assistant"}}}"#,
            r#"{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c","type":"function","function":{"name":"now","arguments":""}}}}}"#,
        ]);
        assert!(!f.done());
        assert_eq!(
            f.result().to_json(),
            r#"{"id":"m2","finish_reason":null,"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"now","arguments":""}}]}}"#
        );
    }
}

//! What one final object says in brief, the same way for every dialect: the assistant's
//! answer text, the model, the provider's usage. The gateway's log line and metrics read a
//! stream through this (one reading of each dialect's final shape, here beside the folds that
//! build those shapes), not through a reader of its own per dialect.
//!
//! The result is walked where it is read: its built parts directly, a part kept as sent (raw
//! JSON) one level at a time, so nothing is written out and parsed again, and a raw part
//! reads as it did when it was decoded (its depth counted from itself; a number out of any
//! float's range is only skipped).

use std::borrow::Cow;

use super::{Json, Out};
use crate::dialect::Dialect;

/// A final object in brief.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Summary {
    /// The answer's text: every text block of the first choice / candidate / message, in
    /// order (reasoning and tool calls are not text).
    pub text: String,
    /// The model the final object names (`None` where the dialect's shape names none:
    /// Converse's).
    pub model: Option<String>,
    /// The provider's own usage object as the final object holds it.
    pub usage: Option<Out>,
}

/// The summary of `result`, a final object of `dialect`.
pub fn summary(dialect: Dialect, result: &Out) -> Summary {
    let (model_key, usage_key) = dialect.spec().result_keys;
    let root = Node::Out(result);
    let model = (!model_key.is_empty())
        .then(|| root.key(model_key))
        .flatten()
        .and_then(Node::text)
        .map(Cow::into_owned);
    let usage = result.key(usage_key).filter(|u| !u.is_null());
    Summary {
        text: final_text(dialect, root),
        model,
        usage,
    }
}

/// [`final_text`] of a final object given as JSON text (`""` for text that is not JSON).
pub fn final_text_of_json(dialect: Dialect, result: &str) -> String {
    final_text(dialect, Node::Raw(result))
}

/// A place in a final object: a built part, or a part kept as sent.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    /// A part the fold built.
    Out(&'a Out),
    /// A part kept as sent, as raw JSON text.
    Raw(&'a str),
}

impl<'a> Node<'a> {
    /// See [`Node`].
    pub fn key(self, key: &str) -> Option<Node<'a>> {
        match self {
            Node::Out(Out::Map(map)) => map.get(key).map(Node::Out),
            Node::Out(Out::Json(text)) => Node::Raw(text).key(key),
            Node::Out(Out::Patched(p)) => match p.over().get(key) {
                Some(value) => Some(Node::Out(value)),
                None => Node::Raw(p.base()).key(key),
            },
            // The last of duplicate keys, as a map (and Python's `dict`) keeps it.
            Node::Raw(text) => match Json::read(text)? {
                Json::Object(entries) => entries
                    .into_iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| Node::Raw(v.get())),
                _ => None,
            },
            Node::Out(_) => None,
        }
    }

    /// See [`Node`].
    pub fn path(self, keys: &[&str]) -> Option<Node<'a>> {
        keys.iter().try_fold(self, |node, key| node.key(key))
    }

    /// See [`Node`].
    pub fn items(self) -> Vec<Node<'a>> {
        match self {
            Node::Out(Out::List(list)) => list.iter().map(Node::Out).collect(),
            Node::Out(Out::Json(text)) => Node::Raw(text).items(),
            Node::Raw(text) => match Json::read(text) {
                Some(Json::Array(items)) => items.into_iter().map(|v| Node::Raw(v.get())).collect(),
                _ => Vec::new(),
            },
            Node::Out(_) => Vec::new(),
        }
    }

    /// See [`Node`].
    pub fn first(self) -> Option<Node<'a>> {
        self.items().into_iter().next()
    }

    /// See [`Node`].
    pub fn text(self) -> Option<Cow<'a, str>> {
        match self {
            Node::Out(Out::Str(s)) => Some(Cow::Borrowed(s)),
            Node::Out(Out::Json(text)) => Node::Raw(text).text(),
            Node::Raw(text) => match Json::read(text)? {
                Json::Str(s) => Some(s),
                _ => None,
            },
            Node::Out(_) => None,
        }
    }

    /// See [`Node`].
    pub fn is_true(self) -> bool {
        match self {
            Node::Out(Out::Bool(b)) => *b,
            Node::Out(Out::Json(text)) => text.trim() == "true",
            Node::Raw(text) => text.trim() == "true",
            Node::Out(_) => false,
        }
    }
}

/// The `text` of each block of a list, in order (a block whose `skip` holds left out; a
/// Converse `citationsContent` block's cited texts read as its text).
pub fn texts(blocks: Option<Node<'_>>, skip: &dyn Fn(Node<'_>) -> bool) -> String {
    let mut out = String::new();
    for block in blocks.map(Node::items).unwrap_or_default() {
        if skip(block) {
            continue;
        }
        if let Some(text) = block.key("text").and_then(Node::text) {
            out.push_str(&text);
        } else if let Some(cited) = block.path(&["citationsContent", "content"]) {
            out.push_str(&texts(Some(cited), &|_| false));
        }
    }
    out
}

/// Declares [`final_text`] from the dialect list: each fold module reads its own shape.
macro_rules! final_text {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// The answer's text in a final object of `dialect` (a shape that is not the
        /// dialect's gives what it holds in the dialect's places, else "").
        pub fn final_text(dialect: Dialect, result: Node<'_>) -> String {
            match dialect {
                $(Dialect::$d => super::$m::final_text(result),)*
            }
        }
    };
}
crate::dialect::registry::dialects!(final_text);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn built(value: &serde_json::Value) -> Out {
        // The top level built (as the folds build it), every value below kept as sent.
        match value {
            serde_json::Value::Object(map) => {
                let mut m = super::super::Map::new();
                for (k, v) in map {
                    m.set(k, Out::json(&v.to_string()));
                }
                Out::Map(m)
            }
            other => Out::json(&other.to_string()),
        }
    }

    #[test]
    fn each_dialects_answer_text_model_and_usage() {
        let cases = [
            (
                Dialect::Chat,
                json!({"model": "gpt", "choices": [{"message": {"content": "Hi there"}}],
                       "usage": {"prompt_tokens": 1}}),
                "Hi there",
                Some("gpt"),
            ),
            (
                Dialect::Chat,
                json!({"model": "mistral", "choices": [{"message": {"content": [
                       {"type": "thinking", "thinking": []}, {"type": "text", "text": "Hi there"}]}}],
                       "usage": {"prompt_tokens": 1}}),
                "Hi there",
                Some("mistral"),
            ),
            (
                Dialect::Messages,
                json!({"model": "claude", "content": [{"type": "thinking", "thinking": "hm"},
                       {"type": "text", "text": "Hi "}, {"type": "tool_use", "input": {}},
                       {"type": "text", "text": "there"}], "usage": {"input_tokens": 1}}),
                "Hi there",
                Some("claude"),
            ),
            (
                Dialect::Responses,
                json!({"model": "gpt", "output": [{"type": "reasoning", "summary": [],
                       "content": [{"type": "reasoning_text", "text": "hm"}]},
                       {"type": "message", "content": [{"type": "output_text", "text": "Hi "}]},
                       {"type": "message", "content": [{"type": "output_text", "text": "there"}]}],
                       "usage": {"input_tokens": 1}}),
                "Hi there",
                Some("gpt"),
            ),
            (
                Dialect::Gemini,
                json!({"modelVersion": "gemini", "candidates": [{"content": {"parts": [
                       {"text": "hm", "thought": true}, {"text": "Hi there"}]}}],
                       "usageMetadata": {"promptTokenCount": 1}}),
                "Hi there",
                Some("gemini"),
            ),
            (
                Dialect::Converse,
                json!({"output": {"message": {"content": [{"reasoningContent": {}},
                       {"text": "Hi "}, {"citationsContent": {"content": [{"text": "the"},
                       {"text": "re"}], "citations": []}}]}}, "usage": {"inputTokens": 1}}),
                "Hi there",
                None,
            ),
        ];
        for (dialect, value, text, model) in cases {
            for out in [Out::json(&value.to_string()), built(&value)] {
                let s = summary(dialect, &out);
                assert_eq!(s.text, text, "{dialect:?}");
                assert_eq!(s.model.as_deref(), model, "{dialect:?}");
                assert!(s.usage.is_some(), "{dialect:?}");
            }
            assert_eq!(final_text_of_json(dialect, &value.to_string()), text);
            // Another dialect's shape, text that is not JSON, or no object at all: no text.
            assert_eq!(final_text_of_json(dialect, r#"[1, {"choices": 2}]"#), "");
            assert_eq!(final_text_of_json(dialect, "{not json"), "");
            assert_eq!(summary(dialect, &Out::Null), Summary::default());
        }
    }

    #[test]
    fn a_raw_part_out_of_range_or_deep_does_not_hide_the_text() {
        // As the Converse fold builds its result: blocks built, a tool input kept as sent
        // (nested as deep as a decoder takes it: 125 levels), a usage count no float holds.
        // The text reads: nothing below the blocks is parsed (a write-out and parse of the
        // whole result refused both, and logged no text).
        use super::super::Map;
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(125), "]".repeat(125));
        let block = |key: &str, value: Out| {
            let mut m = Map::new();
            m.set(key, value);
            Out::Map(m)
        };
        let mut tool = Map::new();
        tool.set("name", Out::Str("f".into()));
        tool.set("input", Out::json(&deep));
        let content = Out::List(vec![
            block("text", Out::Str("Hi".into())),
            block("toolUse", Out::Map(tool)),
        ]);
        let mut root = Map::new();
        root.set("output", block("message", block("content", content)));
        root.set("usage", Out::json(r#"{"inputTokens": 1e400}"#));
        let root = Out::Map(root);
        assert!(serde_json::from_str::<serde_json::Value>(&root.to_json()).is_err());
        let s = summary(Dialect::Converse, &root);
        assert_eq!(s.text, "Hi");
        assert!(s.usage.is_some());
    }

    /// A part kept as sent with duplicate keys reads as a map does: the last one counts (a
    /// Messages block no delta changed is kept as sent).
    #[test]
    fn the_last_of_duplicate_keys_counts() {
        let block = r#"{"type":"text","text":"first","text":"last"}"#;
        let mut root = super::super::Map::new();
        root.set("content", Out::List(vec![Out::json(block)]));
        let s = summary(Dialect::Messages, &Out::Map(root));
        assert_eq!(s.text, "last");
        assert_eq!(
            Node::Raw(block).key("text").and_then(Node::text).as_deref(),
            Some("last")
        );
    }
}

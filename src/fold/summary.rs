//! What one final object says in brief, the same way for every dialect: the assistant's
//! answer text, the model, the provider's usage. The gateway's log line and metrics read a
//! stream through this (one reading of each dialect's final shape, here beside the folds that
//! build those shapes), not through a reader of its own per dialect.

use serde_json::Value;

use super::Out;
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
    let model = (!model_key.is_empty())
        .then(|| result.key(model_key))
        .flatten()
        .and_then(|m| match m {
            Out::Str(s) => Some(s),
            Out::Json(text) => serde_json::from_str::<String>(&text).ok(),
            _ => None,
        });
    let usage = result.key(usage_key).filter(|u| !u.is_null());
    let value = serde_json::from_str::<Value>(&result.to_json()).unwrap_or(Value::Null);
    Summary {
        text: final_text(dialect, &value),
        model,
        usage,
    }
}

/// The answer's text in a final object of `dialect` (any JSON value: a shape that is not the
/// dialect's gives what it holds in the dialect's places, else "").
pub fn final_text(dialect: Dialect, result: &Value) -> String {
    let texts = |blocks: Option<&Value>, skip: &dyn Fn(&Value) -> bool| -> String {
        blocks
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| !skip(b))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect()
    };
    let never = |_: &Value| false;
    match dialect {
        // A string, or a list of parts (Mistral's content chunks).
        Dialect::Chat => match result.pointer("/choices/0/message/content") {
            Some(Value::String(text)) => text.clone(),
            parts => texts(parts, &never),
        },
        Dialect::Gemini => texts(result.pointer("/candidates/0/content/parts"), &|p| {
            p.get("thought").and_then(Value::as_bool).unwrap_or(false)
        }),
        Dialect::Messages => texts(result.get("content"), &never),
        Dialect::Converse => texts(result.pointer("/output/message/content"), &never),
        Dialect::Responses => result
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            // Message items only: a reasoning item's content (open-weight models'
            // `reasoning_text`) is not the answer.
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
            .map(|item| texts(item.get("content"), &never))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
                       {"text": "Hi there"}]}}, "usage": {"inputTokens": 1}}),
                "Hi there",
                None,
            ),
        ];
        for (dialect, value, text, model) in cases {
            let out = Out::json(&value.to_string());
            let s = summary(dialect, &out);
            assert_eq!(s.text, text, "{dialect:?}");
            assert_eq!(s.model.as_deref(), model, "{dialect:?}");
            assert!(s.usage.is_some(), "{dialect:?}");
            // Another dialect's shape, or no object at all: no text, no panic.
            assert_eq!(final_text(dialect, &json!([1, {"choices": 2}])), "");
            assert_eq!(summary(dialect, &Out::Null), Summary::default());
        }
    }
}

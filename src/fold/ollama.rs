//! The fold of an Ollama stream: its lines assembled into the non-streaming `/api/chat`
//! response (`{"model", "created_at", "message": {"role", "content", "thinking"?,
//! "tool_calls"?, "images"?}, "done", "done_reason", counts and durations}`), or `/api/generate`'s
//! (`"response"` and `"thinking"` at the top level, and `"context"`) when the lines were
//! generate's.
//!
//! Rules: text and thinking pieces are joined; tool calls come whole, each kept as sent, in
//! order; the model and `created_at` are the last line's; the terminal line's reason, counts,
//! durations and context are copied as sent. Carried across lines: the pieces so far. Cost:
//! O(the answer).

use crate::dialect::ollama::{Line, COUNTS};

use super::summary::{texts, Node};
use super::{Map, Out};

/// `slot` holds `value` when one is given (its buffer reused).
fn set(slot: &mut Option<String>, value: Option<&str>) {
    let Some(value) = value else {
        return;
    };
    match slot {
        Some(held) if held == value => {}
        Some(held) => {
            held.clear();
            held.push_str(value);
        }
        None => *slot = Some(value.to_owned()),
    }
}

/// The fold's state.
#[derive(Debug, Default)]
pub struct OllamaFold {
    model: Option<String>,
    created_at: Option<String>,
    /// Whether the lines were generate's (`response` without `message`).
    generate: bool,
    role: Option<String>,
    content: String,
    thinking: String,
    tool_calls: Vec<Out>,
    images: Option<Box<str>>,
    done: bool,
    done_reason: Option<String>,
    counts: [Option<Box<str>>; 6],
    context: Option<Box<str>>,
    /// Each line's log probabilities, joined (the non-streaming response's one list).
    logprobs: Vec<Box<str>>,
    remote_model: Option<String>,
    remote_host: Option<String>,
}

impl OllamaFold {
    /// Folds one line.
    pub fn add(&mut self, line: &Line<'_>) {
        // The same strings come on every line: kept, not copied again.
        set(&mut self.model, line.model.as_deref());
        set(&mut self.created_at, line.created_at.as_deref());
        if let Some(m) = &line.message {
            set(&mut self.role, m.role.as_deref());
            self.content
                .push_str(m.content.as_deref().unwrap_or_default());
            self.thinking
                .push_str(m.thinking.as_deref().unwrap_or_default());
            if let Some(calls) = m.tool_calls {
                let calls = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(calls.get());
                self.tool_calls
                    .extend(calls.unwrap_or_default().iter().map(|c| Out::json(c.get())));
            }
            if let Some(images) = m.images.filter(|i| i.get() != "null") {
                self.images = Some(images.get().into());
            }
        } else if line.response.is_some() {
            self.generate = true;
        }
        self.content
            .push_str(line.response.as_deref().unwrap_or_default());
        if line.message.is_none() {
            self.thinking
                .push_str(line.thinking.as_deref().unwrap_or_default());
        }
        if line.done == Some(true) {
            self.done = true;
        }
        if let Some(reason) = &line.done_reason {
            self.done_reason = Some(reason.to_string());
        }
        for (slot, (_, value)) in self.counts.iter_mut().zip(line.counts()) {
            if let Some(value) = value {
                *slot = Some(value.get().into());
            }
        }
        if let Some(context) = line.context {
            self.context = Some(context.get().into());
        }
        if let Some(logprobs) = line.logprobs {
            match serde_json::from_str::<Vec<&serde_json::value::RawValue>>(logprobs.get()) {
                Ok(list) => self.logprobs.extend(list.iter().map(|l| l.get().into())),
                Err(_) if logprobs.get() != "null" => self.logprobs.push(logprobs.get().into()),
                Err(_) => {}
            }
        }
        set(&mut self.remote_model, line.remote_model.as_deref());
        set(&mut self.remote_host, line.remote_host.as_deref());
    }

    /// Whether the terminal line (`done: true`) was read.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The counts the terminal line gave (`prompt_eval_count`, `eval_count`, ...), as an
    /// object: what the stream's usage reads.
    pub fn usage(&self) -> Option<Out> {
        let mut m = Map::new();
        for (name, value) in COUNTS.iter().zip(&self.counts) {
            if let Some(value) = value {
                m.set(name, Out::json(value));
            }
        }
        (!m.is_empty()).then_some(Out::Map(m))
    }

    /// The non-streaming response the lines so far make.
    pub fn result(&self) -> Out {
        let mut m = Map::new();
        m.set("model", Out::str_or_null(self.model.as_deref()));
        if let Some(at) = &self.created_at {
            m.set("created_at", Out::Str(at.clone()));
        }
        if self.generate {
            m.set("response", Out::Str(self.content.clone()));
            if !self.thinking.is_empty() {
                m.set("thinking", Out::Str(self.thinking.clone()));
            }
        } else {
            let mut message = Map::new();
            let role = self.role.as_deref().unwrap_or("assistant");
            message.set("role", Out::Str(role.to_owned()));
            message.set("content", Out::Str(self.content.clone()));
            if !self.thinking.is_empty() {
                message.set("thinking", Out::Str(self.thinking.clone()));
            }
            if !self.tool_calls.is_empty() {
                message.set("tool_calls", Out::List(self.tool_calls.clone()));
            }
            if let Some(images) = &self.images {
                message.set("images", Out::json(images));
            }
            m.set("message", Out::Map(message));
        }
        m.set("done", Out::Bool(self.done));
        if let Some(reason) = &self.done_reason {
            m.set("done_reason", Out::Str(reason.clone()));
        }
        for (name, value) in COUNTS.iter().zip(&self.counts) {
            if let Some(value) = value {
                m.set(name, Out::json(value));
            }
        }
        if let Some(context) = &self.context {
            m.set("context", Out::json(context));
        }
        if !self.logprobs.is_empty() {
            let list = self.logprobs.iter().map(|l| Out::json(l)).collect();
            m.set("logprobs", Out::List(list));
        }
        if let Some(remote) = &self.remote_model {
            m.set("remote_model", Out::Str(remote.clone()));
        }
        if let Some(host) = &self.remote_host {
            m.set("remote_host", Out::Str(host.clone()));
        }
        Out::Map(m)
    }
}

/// The answer's text in an Ollama response (`crate::fold::summary`): the message's content,
/// or generate's response.
pub fn final_text(result: Node<'_>) -> String {
    let text = result
        .path(&["message", "content"])
        .or_else(|| result.key("response"));
    match text.and_then(Node::text) {
        Some(text) => text.into_owned(),
        None => texts(text, &|_| false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::ollama::decode;

    fn fold(lines: &[&str]) -> OllamaFold {
        let mut f = OllamaFold::default();
        for l in lines {
            f.add(&decode(l).unwrap());
        }
        f
    }

    #[test]
    fn a_chat_stream_with_thinking_and_a_tool_call() {
        let f = fold(&[
            r#"{"model":"qwen3","created_at":"t1","message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}"#,
            r#"{"model":"qwen3","created_at":"t2","message":{"role":"assistant","content":"","thinking":" see."},"done":false}"#,
            r#"{"model":"qwen3","created_at":"t3","message":{"role":"assistant","content":"Checking.","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}"#,
            r#"{"model":"qwen3","created_at":"t4","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":900,"load_duration":10,"prompt_eval_count":26,"prompt_eval_duration":100,"eval_count":12,"eval_duration":700}"#,
        ]);
        assert!(f.done());
        assert_eq!(
            f.result().to_json(),
            r#"{"model":"qwen3","created_at":"t4","message":{"role":"assistant","content":"Checking.","thinking":"Let me see.","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":true,"done_reason":"stop","total_duration":900,"load_duration":10,"prompt_eval_count":26,"prompt_eval_duration":100,"eval_count":12,"eval_duration":700}"#
        );
        assert_eq!(
            f.usage().unwrap().to_json(),
            r#"{"total_duration":900,"load_duration":10,"prompt_eval_count":26,"prompt_eval_duration":100,"eval_count":12,"eval_duration":700}"#
        );
    }

    #[test]
    fn a_generate_stream_cut_before_done() {
        let f = fold(&[
            r#"{"model":"llama3.2","created_at":"t1","response":"The","done":false}"#,
            r#"{"model":"llama3.2","created_at":"t2","response":" sky","done":false}"#,
        ]);
        assert!(!f.done());
        assert_eq!(
            f.result().to_json(),
            r#"{"model":"llama3.2","created_at":"t2","response":"The sky","done":false}"#
        );
        assert_eq!(f.usage(), None);
        let text = final_text(Node::Out(&f.result()));
        assert_eq!(text, "The sky");
    }
}

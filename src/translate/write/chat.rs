//! The chat completions writer: `chat.completion.chunk` frames, a usage chunk, `[DONE]`.

use super::*;
use crate::dialect::chat;
use crate::fold::chat::{ChunkView, ContentView, ToolView};

impl TargetFold for ChatFold {
    fn written(&mut self, _: Option<&str>, json: &str) {
        let Ok(chunk) = chat::decode(json) else {
            return; // `[DONE]`
        };
        if chunk.error.is_some() && chunk.choices.is_empty() {
            return; // an error: reported by the stream, not folded
        }
        chat::views(&chunk, |v, _| self.add(v));
    }

    fn delta(&mut self, run: &Run) {
        let text = run.text.as_str();
        let tool = [ToolView {
            index: run.index,
            arguments: Some(text),
            ..ToolView::default()
        }];
        let mut view = ChunkView {
            id: Some(&run.id),
            created: Some(run.created),
            model: Some(&run.model),
            index: Some(0),
            ..ChunkView::default()
        };
        match run.field {
            Field::Text => view.content = Some(ContentView::Text(text)),
            Field::Reasoning => view.reasoning_content = Some(text),
            Field::Refusal => view.refusal = Some(text),
            Field::Arguments => view.tool_calls = &tool,
        }
        self.add(&view);
    }

    fn result(&mut self) -> Out {
        ChatFold::result(self)
    }
}

// --- Chat completions -------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CBlock {
    Text,
    Reasoning,
    Refusal,
    /// A tool call and its `tool_calls[].index`.
    Tool(u32),
}

/// A chunk's opening fields, up to `choices`.
fn push_head(j: &mut String, head: &Head) {
    if head.chunk_prefix.is_empty() {
        head.write_chunk_prefix(j);
    } else {
        j.push_str(&head.chunk_prefix);
    }
}

/// Writes an OpenAI chat completions stream (`chat.completion.chunk` frames, `[DONE]`).
#[derive(Debug, Default)]
pub struct ChatWriter {
    out: Written<ChatFold>,
    head: Head,
    started: bool,
    blocks: Blocks<CBlock>,
    tools: u32,
    stop: Option<String>,
    usage: Option<Usage>,
    done: bool,
    notes: Notes,
}

impl ChatWriter {
    /// Appends one chunk whose choice 0 has `delta` (the JSON object's inside) and
    /// `finish_reason`.
    fn chunk(&mut self, delta: &str, finish: Option<&str>) {
        let j = self.chunk_json(delta, finish);
        self.out.event(None, &j);
    }

    fn chunk_json(&self, delta: &str, finish: Option<&str>) -> String {
        let mut j = String::with_capacity(delta.len() + 160);
        push_head(&mut j, &self.head);
        j.push_str(r#","choices":[{"index":0,"delta":{"#);
        j.push_str(delta);
        j.push_str(r#"},"logprobs":null,"finish_reason":"#);
        push_opt(&mut j, finish);
        j.push_str("}]}");
        j
    }

    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        self.chunk(r#""role":"assistant","content":"""#, None);
    }

    fn block(&mut self, key: Key, kind: Kind<'_>) -> CBlock {
        self.start();
        if let Some(at) = self.blocks.find(key) {
            if let Some(block) = self.blocks.get(at) {
                return *block;
            }
        }
        let block = match kind {
            Kind::Text => CBlock::Text,
            Kind::Reasoning => CBlock::Reasoning,
            Kind::Refusal => CBlock::Refusal,
            Kind::Tool { id, name } => {
                let index = self.tools;
                self.tools += 1;
                let mut d = String::from(r#""tool_calls":[{"index":"#);
                push_num(&mut d, index);
                d.push_str(r#","id":"#);
                push_str(&mut d, id);
                d.push_str(r#","type":"function","function":{"name":"#);
                push_str(&mut d, name);
                d.push_str(r#","arguments":""}}]"#);
                self.chunk(&d, None);
                CBlock::Tool(index)
            }
        };
        self.blocks.push(key, block);
        block
    }
}

impl Sink for ChatWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if !self.done {
            self.block(key, kind);
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let block = self.block(key, Kind::Text);
        let (mut field, mut index) = (Field::Text, 0);
        let o = &mut self.out;
        o.open(None);
        push_head(&mut o.buf, &self.head);
        o.buf.push_str(r#","choices":[{"index":0,"delta":{"#);
        match block {
            CBlock::Text => {
                o.buf.push_str(r#""content":"#);
            }
            CBlock::Reasoning => {
                o.buf.push_str(r#""reasoning_content":"#);
                field = Field::Reasoning;
            }
            CBlock::Refusal => {
                o.buf.push_str(r#""refusal":"#);
                field = Field::Refusal;
            }
            CBlock::Tool(call) => {
                o.buf.push_str(r#""tool_calls":[{"index":"#);
                push_num(&mut o.buf, call);
                o.buf.push_str(r#","function":{"arguments":"#);
                (field, index) = (Field::Arguments, i64::from(call));
            }
        }
        push_str(&mut o.buf, text);
        if let CBlock::Tool(_) = block {
            o.buf.push_str("}}]");
        }
        o.buf
            .push_str(r#"},"logprobs":null,"finish_reason":null}]}"#);
        o.close();
        let head = &self.head;
        let place = Place {
            kind: "",
            index,
            field,
            id: head.id.as_deref().unwrap_or(""),
            model: head.model.as_deref().unwrap_or(""),
            created: head.created.unwrap_or(0),
        };
        self.out.delta(place, text);
    }

    fn signature(&mut self, _: Key, _: &str) {
        self.notes
            .add("reasoning signatures (chat has no place for them)");
    }

    fn redacted(&mut self, _: Key, _: &str) {
        self.notes
            .add("redacted or encrypted reasoning (chat has no place for it)");
    }

    fn close(&mut self, _: Key) {}

    fn stop(&mut self, stop: Stop<'_>) {
        let reason = match stop {
            Stop::Other(other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (chat has no such finish_reason; written as \"stop\")"
                ));
                "stop"
            }
            stop => stop.to_chat(),
        };
        self.stop = Some(reason.to_owned());
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"error":{"message":"#);
        push_str(&mut j, failure.message);
        j.push_str(r#","type":"#);
        push_opt(&mut j, failure.type_);
        j.push_str(r#","code":"#);
        push_opt(&mut j, failure.code);
        j.push_str("}}");
        self.out.event(None, &j);
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.start();
        let tool = self.tools > 0;
        let reason = self
            .stop
            .clone()
            .unwrap_or_else(|| if tool { "tool_calls" } else { "stop" }.to_owned());
        self.chunk("", Some(&reason));
        if let Some(u) = self.usage {
            let mut j = String::with_capacity(320);
            push_head(&mut j, &self.head);
            let (input, output) = (u.total_input(), u.output.unwrap_or(0));
            j.push_str(r#","choices":[],"usage":{"prompt_tokens":"#);
            push_u64(&mut j, input);
            j.push_str(r#","completion_tokens":"#);
            push_u64(&mut j, output);
            j.push_str(r#","total_tokens":"#);
            push_u64(&mut j, input + output);
            j.push_str(r#","prompt_tokens_details":{"cached_tokens":"#);
            push_u64(&mut j, u.cache_read.unwrap_or(0));
            j.push_str(r#"},"completion_tokens_details":{"reasoning_tokens":"#);
            push_u64(&mut j, u.reasoning.unwrap_or(0));
            j.push_str("}}}");
            self.out.event(None, &j);
            if u.cache_write.is_some_and(|n| n > 0) {
                self.notes
                    .add("cache_creation_input_tokens (chat usage has no field for them; they are in prompt_tokens)");
            }
        }
        self.out.event(None, "[DONE]");
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(ChatWriter);

/// A client's error body (`translate_error`): OpenAI's (`code`: the upstream's own, kept
/// where the class has none).
pub(super) fn error_body(
    _status: u16,
    class: crate::translate::error::Class,
    message: &str,
    code: Option<&str>,
) -> serde_json::Value {
    class.openai_body(message, code)
}

/// This dialect's output rules, for one event `v` written (`super::check`).
pub(super) fn check(
    inv: &mut super::check::Invariants,
    _event: &str,
    v: &serde_json::Value,
) -> Result<(), String> {
    let Some(choices) = v.get("choices").and_then(serde_json::Value::as_array) else {
        return Err(format!("a chunk without a choices list: {v:.200}"));
    };
    for choice in choices {
        let index = choice
            .get("index")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        if inv.finished.contains(&index) {
            return Err(format!("choice {index} goes on after its finish_reason"));
        }
        let calls = choice
            .pointer("/delta/tool_calls")
            .and_then(serde_json::Value::as_array);
        for call in calls.into_iter().flatten() {
            let at = call.get("index").and_then(serde_json::Value::as_i64);
            let Some(at) = at else {
                return Err(format!("a tool call without its index: {call}"));
            };
            if inv.calls.insert((index, at)) {
                let named = call.get("id").is_some_and(serde_json::Value::is_string)
                    && call
                        .pointer("/function/name")
                        .is_some_and(serde_json::Value::is_string);
                if !named {
                    return Err(format!("tool call {at} starts without its id and name"));
                }
            }
        }
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            inv.finished.insert(index);
        }
    }
    Ok(())
}

/// A new writer of this dialect (the dialect list's `writer`).
pub(super) fn new_writer() -> Box<dyn super::Writer + Send + Sync> {
    Box::<ChatWriter>::default()
}

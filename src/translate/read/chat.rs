//! The chat completions reader (choice 0; other choices are noted and dropped).

use super::*;

// --- chat -----------------------------------------------------------------------------------------

const CHAT_TEXT: Key = 1;
const CHAT_REASONING: Key = 2;
const CHAT_REFUSAL: Key = 3;
const CHAT_TOOL: Key = 16;

/// Reads a chat completions stream (choice 0; other choices are noted and dropped).
#[derive(Debug, Default)]
pub struct ChatReader {
    /// The open text, reasoning or refusal block (one at a time: chat sends them in turn).
    open: Option<Key>,
    /// The tool calls opened, in order; they stay open until `[DONE]` (fragments of parallel
    /// calls may interleave). `opened` answers "seen?" in O(1) for hostile streams of many.
    tools: Vec<i64>,
    opened: IntMap<()>,
    /// Whether the stream has said its reasoning as `reasoning` / `reasoning_content`.
    said_reasoning: bool,
}

impl ChatReader {
    fn text(&mut self, key: Key, kind: Kind<'_>, text: &str, sink: &mut dyn Sink) {
        if text.is_empty() && self.open != Some(key) {
            return; // an empty opening fragment opens nothing
        }
        if self.open != Some(key) {
            if let Some(open) = self.open.take() {
                sink.close(open);
            }
            sink.open(key, kind);
            self.open = Some(key);
        }
        sink.delta(key, text);
    }

    fn tool(
        &mut self,
        index: i64,
        id: &str,
        name: &str,
        arguments: Option<&str>,
        sink: &mut dyn Sink,
    ) {
        let key = CHAT_TOOL.wrapping_add(index as u64);
        if self.opened.add(index) {
            if let Some(open) = self.open.take() {
                sink.close(open);
            }
            self.tools.push(index);
            sink.open(key, Kind::Tool { id, name });
        }
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            sink.delta(key, arguments);
        }
    }

    /// One view of a chunk (one choice, or the chunk-level fields of a chunk without
    /// choices): the view the chat fold reads.
    pub fn view(&mut self, v: &ChunkView<'_>, sink: &mut dyn Sink) {
        sink.meta(Meta {
            id: v.id,
            model: v.model,
            created: v.created,
        });
        match v.index {
            Some(0) => self.choice(v, sink),
            Some(_) => sink.drop_note("a second chat choice (only choice 0 is translated)"),
            None => {}
        }
        if let Some(usage) = v.usage.and_then(openai_usage) {
            sink.usage(&usage);
        }
    }

    fn choice(&mut self, v: &ChunkView<'_>, sink: &mut dyn Sink) {
        for reasoning in [v.reasoning_content, v.reasoning].into_iter().flatten() {
            self.text(CHAT_REASONING, Kind::Reasoning, reasoning, sink);
        }
        // OpenRouter's `reasoning_details` (`[]` on every content chunk: nothing).
        self.said_reasoning |= v.reasoning_content.or(v.reasoning).is_some();
        if let Some(details) = v.reasoning_details.filter(|d| d.len() > 2) {
            self.details(details, self.said_reasoning, sink);
        }
        match v.content {
            Some(ContentView::Text(text)) => self.text(CHAT_TEXT, Kind::Text, text, sink),
            Some(ContentView::Parts(parts)) => self.parts(parts, sink),
            Some(ContentView::Thinking(text)) => {
                self.text(CHAT_REASONING, Kind::Reasoning, text, sink)
            }
            None => {}
        }
        if let Some(refusal) = v.refusal {
            self.text(CHAT_REFUSAL, Kind::Refusal, refusal, sink);
        }
        // Calls in index order: one chunk may carry several calls' fragments in any order.
        if let [call] = v.tool_calls {
            self.call(call, sink);
        } else if !v.tool_calls.is_empty() {
            let mut calls: Vec<&ToolView<'_>> = v.tool_calls.iter().collect();
            calls.sort_by_key(|c| c.index);
            for call in calls {
                self.call(call, sink);
            }
        }
        // The legacy `function_call` delta: one call, with no id. (A vendor object without
        // the name, nor an escape that could spell it, is not read: Together sends one with
        // every chunk.)
        let may_hold = |extra: &&str| extra.contains("function_call") || extra.contains('\\');
        if let Some(f) = v
            .delta_extra
            .filter(may_hold)
            .and_then(|extra| field(extra, "function_call"))
        {
            let name = str_field(f, "name").unwrap_or_default();
            let arguments = str_field(f, "arguments");
            self.tool(0, "", &name, arguments.as_deref(), sink);
        }
        if let Some(reason) = v.finish_reason {
            sink.stop(Stop::from_chat(reason));
        }
    }

    /// OpenRouter's `reasoning_details` entries: a `reasoning.text` entry's text is reasoning
    /// (unless the stream says its reasoning as `reasoning`: OpenRouter repeats it there; the
    /// fold's `reasoning` is then the message's) and its
    /// `signature` the reasoning's signature; a `reasoning.summary` entry's summary is
    /// reasoning; a `reasoning.encrypted` entry's `data` is redacted reasoning.
    fn details(&mut self, details: &str, said: bool, sink: &mut dyn Sink) {
        let Some(Json::Array(entries)) = Json::read(details) else {
            return;
        };
        fn string(v: Option<&str>) -> Option<Cow<'_, str>> {
            v.and_then(json_string).filter(|s| !s.is_empty())
        }
        for entry in entries {
            let entry = entry.get();
            let [kind, text, summary, signature, data] =
                fields(entry, ["type", "text", "summary", "signature", "data"]);
            match string(kind).as_deref() {
                Some("reasoning.text") | Some("reasoning.summary") => {
                    if !said {
                        if let Some(text) = string(text).or_else(|| string(summary)) {
                            self.text(CHAT_REASONING, Kind::Reasoning, &text, sink);
                        }
                    }
                    if let Some(signature) = string(signature) {
                        sink.signature(CHAT_REASONING, &signature);
                    }
                }
                Some("reasoning.encrypted") => {
                    if let Some(data) = string(data) {
                        sink.redacted(CHAT_REASONING, &data);
                    }
                }
                _ => {}
            }
        }
    }

    fn call(&mut self, call: &ToolView<'_>, sink: &mut dyn Sink) {
        let id = call.id.unwrap_or("");
        let name = call.name.unwrap_or("");
        self.tool(call.index, id, name, call.arguments, sink);
    }

    /// Mistral's content parts: `text` parts are text, `thinking` parts' inner text is
    /// reasoning.
    fn parts(&mut self, parts: &str, sink: &mut dyn Sink) {
        let Some(Json::Array(parts)) = Json::read(parts) else {
            return;
        };
        for part in parts {
            let part = part.get();
            match str_field(part, "type").as_deref() {
                Some("text") => {
                    if let Some(text) = str_field(part, "text") {
                        self.text(CHAT_TEXT, Kind::Text, &text, sink);
                    }
                }
                Some("thinking") => {
                    let inner = field(part, "thinking").and_then(Json::read);
                    if let Some(Json::Array(inner)) = inner {
                        for p in inner {
                            if let Some(text) = str_field(p.get(), "text") {
                                self.text(CHAT_REASONING, Kind::Reasoning, &text, sink);
                            }
                        }
                    }
                }
                _ => sink.drop_note("a chat content part that is neither text nor thinking"),
            }
        }
    }
}

impl super::Ends for ChatReader {
    /// `[DONE]`.
    fn done(&mut self, sink: &mut dyn Sink) {
        if let Some(open) = self.open.take() {
            sink.close(open);
        }
        self.opened.clear();
        for index in std::mem::take(&mut self.tools) {
            sink.close(CHAT_TOOL.wrapping_add(index as u64));
        }
        sink.end();
    }
}

impl super::ReadsUsage for ChatReader {
    fn usage(text: &str) -> Option<Usage> {
        openai_usage(text)
    }
}

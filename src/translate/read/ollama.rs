//! The Ollama reader: an Ollama stream's lines as the neutral calls every target writes.
//! Thinking and text pieces open a block of their kind when the other kind was open; tool
//! calls come whole (a block each: opened, its arguments in one piece, closed); the terminal
//! line closes the open block and gives the stop (`length` is the token limit; a turn that
//! called tools stops for them) and the usage (input: `prompt_eval_count`, output:
//! `eval_count`).

use super::*;
use crate::dialect::ollama::Line;

/// Reads an Ollama stream.
#[derive(Debug, Default)]
pub struct OllamaReader {
    started: bool,
    /// The open text or thinking block: its key, and whether it is thinking.
    open: Option<(u64, bool)>,
    next: u64,
    /// The tool calls read so far (for their ids, and the stop).
    calls: u64,
    ended: bool,
}

/// Ollama's usage: the terminal line's counts (`prompt_eval_count` is left out when the
/// prompt came from the cache: the input is then not known).
pub(super) fn ollama_usage(text: &str) -> Option<Usage> {
    Some(Usage {
        input: u64_field(text, "prompt_eval_count"),
        uncached: None,
        cache_read: None,
        cache_write: None,
        output: u64_field(text, "eval_count"),
        reasoning: None,
    })
}

/// One whole tool call of a line.
#[derive(serde::Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(serde::Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a serde_json::value::RawValue>,
}

impl OllamaReader {
    /// One line.
    pub fn view(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        if self.ended {
            return;
        }
        if !self.started {
            self.started = true;
            sink.meta(Meta {
                id: None,
                model: line.model.as_deref(),
                created: None,
            });
        }
        let message = line.message.as_ref();
        let thinking = message
            .and_then(|m| m.thinking.as_deref())
            .or(line.thinking.as_deref());
        if let Some(text) = thinking.filter(|t| !t.is_empty()) {
            let key = self.block(true, sink);
            sink.delta(key, text);
        }
        let content = message
            .and_then(|m| m.content.as_deref())
            .or(line.response.as_deref());
        if let Some(text) = content.filter(|t| !t.is_empty()) {
            let key = self.block(false, sink);
            sink.delta(key, text);
        }
        if let Some(calls) = message.and_then(|m| m.tool_calls) {
            self.tool_calls(calls.get(), sink);
        }
        if line.done == Some(true) {
            self.close(sink);
            let stop = match line.done_reason.as_deref() {
                Some("length") => Stop::MaxTokens,
                _ if self.calls > 0 => Stop::ToolUse,
                None | Some("stop") => Stop::EndTurn,
                Some(other) => Stop::Other(other),
            };
            sink.stop(stop);
            let counts = line.counts();
            if counts.iter().any(|(_, v)| v.is_some()) {
                let mut text = String::from("{");
                for (name, value) in counts {
                    if let Some(value) = value {
                        if text.len() > 1 {
                            text.push(',');
                        }
                        crate::json::write::push_str(&mut text, name);
                        text.push(':');
                        text.push_str(value.get());
                    }
                }
                text.push('}');
                if let Some(usage) = ollama_usage(&text) {
                    sink.usage(&usage);
                }
            }
            self.ended = true;
            sink.end();
        }
    }

    /// The key of the open block of this kind, opening it (and closing the other) when needed.
    fn block(&mut self, thinking: bool, sink: &mut dyn Sink) -> u64 {
        match self.open {
            Some((key, kind)) if kind == thinking => key,
            _ => {
                self.close(sink);
                let key = self.next;
                self.next += 1;
                sink.open(
                    key,
                    if thinking {
                        Kind::Reasoning
                    } else {
                        Kind::Text
                    },
                );
                self.open = Some((key, thinking));
                key
            }
        }
    }

    fn close(&mut self, sink: &mut dyn Sink) {
        if let Some((key, _)) = self.open.take() {
            sink.close(key);
        }
    }

    fn tool_calls(&mut self, calls: &str, sink: &mut dyn Sink) {
        let Ok(calls) = serde_json::from_str::<Vec<Call<'_>>>(calls) else {
            sink.drop_note("tool calls of a shape Ollama does not send (skipped)");
            return;
        };
        if calls.is_empty() {
            return; // an empty list on a text line: the text block stays open
        }
        self.close(sink);
        for call in calls {
            let function = call.function.as_ref();
            let name = function.and_then(|f| f.name.as_deref()).unwrap_or_default();
            let own_id;
            let id = match call.id.as_deref() {
                Some(id) if !id.is_empty() => id,
                _ => {
                    own_id = format!("call_{}", self.calls);
                    own_id.as_str()
                }
            };
            let key = self.next;
            self.next += 1;
            self.calls += 1;
            sink.open(key, Kind::Tool { id, name });
            let arguments = function.and_then(|f| f.arguments).map_or("{}", |a| a.get());
            sink.delta(key, arguments);
            sink.close(key);
        }
    }
}

impl super::Ends for OllamaReader {}

impl super::ReadsUsage for OllamaReader {
    fn usage(text: &str) -> Option<Usage> {
        ollama_usage(text)
    }
}

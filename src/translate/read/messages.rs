//! The Anthropic Messages reader.

use super::*;
use crate::fold::messages;

// --- Messages ---------------------------------------------------------------------------------

/// Reads an Anthropic Messages stream.
#[derive(Debug, Default)]
pub struct MessagesReader {
    /// Blocks whose type the target cannot hold (server tool results...): their deltas go.
    dropped: IntMap<()>,
}

impl MessagesReader {
    /// One event, as the Messages fold reads it (errors come to the translation apart).
    pub fn view(&mut self, v: &messages::EventView<'_>, sink: &mut dyn Sink) {
        let kind = v.kind.as_bytes();
        let index = v.index.unwrap_or(0);
        let key = index as u64;
        match kind {
            b"message_start" => {
                let Some(message) = v.message else {
                    return;
                };
                if let Some(usage) = field(message, "usage").and_then(anthropic_usage) {
                    sink.usage(&usage);
                }
                let id = str_field(message, "id");
                let model = str_field(message, "model");
                sink.meta(Meta {
                    id: id.as_deref(),
                    model: model.as_deref(),
                    created: None,
                });
            }
            b"content_block_start" => {
                let Some(block) = v.content_block else {
                    return;
                };
                let type_ = str_field(block, "type");
                match type_.as_deref() {
                    Some("text") => {
                        sink.open(key, Kind::Text);
                        if let Some(text) = str_field(block, "text").filter(|t| !t.is_empty()) {
                            sink.delta(key, &text);
                        }
                    }
                    Some("thinking") => {
                        sink.open(key, Kind::Reasoning);
                        if let Some(text) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                            sink.delta(key, &text);
                        }
                    }
                    Some("redacted_thinking") => {
                        self.dropped.add(index);
                        let data = str_field(block, "data").unwrap_or_default();
                        sink.redacted(key, &data);
                    }
                    Some("tool_use") => {
                        let id = str_field(block, "id").unwrap_or_default();
                        let name = str_field(block, "name").unwrap_or_default();
                        sink.open(
                            key,
                            Kind::Tool {
                                id: &id,
                                name: &name,
                            },
                        );
                    }
                    other => {
                        self.dropped.add(index);
                        let what = match other {
                            Some(t) if t.ends_with("_tool_use") || t.ends_with("_tool_result") => {
                                "server tool calls and results (run by the upstream; the target has no place for them)"
                            }
                            _ => "content blocks of a type the target has no place for",
                        };
                        sink.drop_note(what);
                    }
                }
            }
            b"content_block_delta" => {
                if self.dropped.contains(index) {
                    return;
                }
                match v.delta_type {
                    Some("text_delta") => {
                        if let Some(t) = v.text {
                            sink.delta(key, t);
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = v.thinking {
                            sink.delta(key, t);
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = v.partial_json.filter(|t| !t.is_empty()) {
                            sink.delta(key, t);
                        }
                    }
                    Some("signature_delta") => {
                        if let Some(s) = v.signature {
                            sink.signature(key, s);
                        }
                    }
                    Some("citations_delta") => sink.drop_note("citations"),
                    _ => sink.drop_note("content deltas of a type the target has no place for"),
                }
            }
            b"content_block_stop" if !self.dropped.contains(index) => sink.close(key),
            b"message_delta" => {
                if let Some(reason) = v.stop_reason {
                    sink.stop(Stop::from_messages(reason, v.stop_sequence));
                }
                if let Some(usage) = v.usage.and_then(anthropic_usage) {
                    sink.usage(&usage);
                }
            }
            b"message_stop" => sink.end(),
            _ => {}
        }
    }
}

impl super::Ends for MessagesReader {}

impl super::ReadsUsage for MessagesReader {
    fn usage(text: &str) -> Option<Usage> {
        anthropic_usage(text)
    }
}

//! The Bedrock Converse reader: a Converse stream's events as the neutral calls every target
//! writes. Text blocks have no start event (their first delta opens them); a reasoning block
//! is opened on its first reasoning delta; a tool block starts with `start.toolUse`. The
//! usage comes after `messageStop`, in `metadata`: the target's closing events wait for it
//! (or for the end of the body, when no `metadata` came).

use super::*;

/// Reads a Bedrock Converse stream.
#[derive(Debug, Default)]
pub struct ConverseReader {
    /// The blocks opened, by index.
    opened: IntMap<()>,
    /// `messageStop` came; the end waits for `metadata`.
    stopped: bool,
    ended: bool,
}

/// Converse's usage: `inputTokens` counts what was not read from or written to the cache
/// (the cache counts are apart, as in Anthropic's usage).
pub(super) fn converse_usage(text: &str) -> Option<Usage> {
    Some(Usage {
        input: None,
        uncached: u64_field(text, "inputTokens"),
        cache_read: u64_field(text, "cacheReadInputTokens"),
        cache_write: u64_field(text, "cacheWriteInputTokens"),
        output: u64_field(text, "outputTokens"),
        reasoning: None,
    })
}

impl ConverseReader {
    /// One event (`kind`: its `:event-type`).
    pub fn view(&mut self, v: &crate::stream::converse::View<'_>, sink: &mut dyn Sink) {
        let (kind, e) = (v.kind, v.event);
        let index = e.content_block_index.unwrap_or(0);
        let key = index as u64;
        match kind {
            "messageStart" => sink.meta(Meta {
                id: None,
                model: None,
                created: None,
            }),
            "contentBlockStart" => match e.tool_start() {
                Some(t) => {
                    self.opened.add(index);
                    let id = t.tool_use_id.as_deref().unwrap_or_default();
                    let name = t.name.as_deref().unwrap_or_default();
                    sink.open(key, Kind::Tool { id, name });
                }
                None => sink.drop_note("content blocks of a type the target has no place for"),
            },
            "contentBlockDelta" => {
                let Some(delta) = &e.delta else {
                    return;
                };
                if let Some(text) = &delta.text {
                    if self.opened.add(index) {
                        sink.open(key, Kind::Text);
                    }
                    sink.delta(key, text);
                }
                if let Some(input) = delta.tool_use.as_ref().and_then(|t| t.input.as_deref()) {
                    if !input.is_empty() {
                        sink.delta(key, input);
                    }
                }
                if let Some(r) = &delta.reasoning_content {
                    if let Some(data) = &r.redacted_content {
                        self.opened.add(index);
                        sink.redacted(key, data);
                    }
                    if r.text.is_some() || r.signature.is_some() {
                        if self.opened.add(index) {
                            sink.open(key, Kind::Reasoning);
                        }
                        if let Some(text) = r.text.as_deref().filter(|t| !t.is_empty()) {
                            sink.delta(key, text);
                        }
                        if let Some(sig) = &r.signature {
                            sink.signature(key, sig);
                        }
                    }
                }
                if delta.citation.is_some() {
                    sink.drop_note("citations");
                }
            }
            "contentBlockStop" => sink.close(key),
            "messageStop" => {
                if let Some(reason) = &e.stop_reason {
                    sink.stop(Stop::from_converse(reason));
                }
                self.stopped = true;
            }
            "metadata" => {
                if let Some(usage) = e.usage.and_then(|u| converse_usage(u.get())) {
                    sink.usage(&usage);
                }
                if self.stopped {
                    self.end(sink);
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, sink: &mut dyn Sink) {
        if !self.ended {
            self.ended = true;
            sink.end();
        }
    }
}

impl super::Ends for ConverseReader {
    /// The end of the body: a stream that stopped but sent no `metadata` is closed now.
    fn end_of_input(&mut self, sink: &mut dyn Sink) {
        if self.stopped {
            self.end(sink);
        }
    }
}

impl super::ReadsUsage for ConverseReader {
    fn usage(text: &str) -> Option<Usage> {
        converse_usage(text)
    }
}

//! The Cohere reader: a Cohere v2 chat stream's events as the neutral calls every target
//! writes. Content parts are text or reasoning blocks by their index; the tool plan (the text
//! a model writes before its calls) is a text block of its own, never reasoning; tool calls
//! are tool blocks whose arguments stream as pieces; citations have no neutral place (noted).
//! `message-end` closes what is open and gives the stop and the usage (input
//! `tokens.input_tokens`, output `tokens.output_tokens`, `cached_tokens` read from cache;
//! `billed_units` only when `tokens` is missing); a `message-end` that failed reaches the
//! translation as the stream's error instead. `[DONE]` after it adds nothing.
//!
//! Keys: each content part, each tool call and each run of the plan gets the next key of a
//! counter when it opens (never one computed from an index a stream sends).

use super::*;
use crate::fold::cohere::{is_thinking, piece};
use crate::stream::cohere::View;

/// A content part or tool call read: its key, whether it is open, whether it is thinking.
#[derive(Debug, Clone, Copy)]
struct Block {
    key: Key,
    open: bool,
    thinking: bool,
}

/// Reads a Cohere stream.
#[derive(Debug, Default)]
pub struct CohereReader {
    started: bool,
    next: Key,
    /// The content parts by index.
    parts: IntMap<Block>,
    /// The tool calls by index.
    calls: IntMap<Block>,
    /// The open run of the tool plan's key.
    plan: Option<Key>,
    /// Whether a tool call was read (a turn that called tools stops for them).
    called: bool,
    ended: bool,
}

/// Cohere's usage in neutral terms: `tokens` (what the model read and wrote), else
/// `billed_units`; `cached_tokens` were read from the cache (counted in the input).
pub(super) fn cohere_usage(text: &str) -> Option<Usage> {
    let [tokens, billed, cached] = fields(text, ["tokens", "billed_units", "cached_tokens"]);
    let counts = tokens.or(billed)?;
    let count = |key| {
        field(counts, key)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u64)
    };
    let cache_read = cached
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|n| n.is_finite() && *n > 0.0)
        .map(|n| n as u64);
    Some(Usage {
        input: count("input_tokens"),
        uncached: None,
        cache_read,
        cache_write: None,
        output: count("output_tokens"),
        reasoning: None,
    })
}

impl CohereReader {
    fn key(&mut self) -> Key {
        let key = self.next;
        self.next += 1;
        key
    }

    /// One event.
    pub fn view(&mut self, v: &View<'_>, sink: &mut dyn Sink) {
        if self.ended {
            return;
        }
        let e = v.event;
        if !self.started {
            self.started = true;
            sink.meta(Meta {
                id: e.id.as_deref(),
                model: None,
                created: None,
            });
        }
        let index = e.index().unwrap_or(0);
        match v.kind {
            "content-start" | "content-delta" => {
                let Some(c) = e.content() else {
                    return;
                };
                let block = match self.parts.get(index) {
                    Some(b) => *b,
                    None => {
                        self.close_plan(sink);
                        let thinking = is_thinking(c);
                        let b = Block {
                            key: self.key(),
                            open: true,
                            thinking,
                        };
                        let kind = if thinking {
                            Kind::Reasoning
                        } else {
                            Kind::Text
                        };
                        sink.open(b.key, kind);
                        self.parts.insert(index, b);
                        b
                    }
                };
                match piece(c, block.thinking) {
                    Some(p) if block.open && !p.is_empty() => sink.delta(block.key, p),
                    _ => {}
                }
            }
            "content-end" => Self::close(&mut self.parts, index, sink),
            "tool-plan-delta" => {
                let Some(plan) = e.tool_plan().filter(|p| !p.is_empty()) else {
                    return;
                };
                let key = match self.plan {
                    Some(key) => key,
                    None => {
                        let key = self.key();
                        sink.open(key, Kind::Text);
                        self.plan = Some(key);
                        key
                    }
                };
                sink.delta(key, plan);
            }
            "tool-call-start" | "tool-call-delta" => {
                let Some(call) = e.call() else {
                    return;
                };
                let block = match self.calls.get(index) {
                    Some(b) => *b,
                    None => {
                        self.close_plan(sink);
                        let function = call.function.as_ref();
                        let name = function.and_then(|f| f.name.as_deref());
                        let b = Block {
                            key: self.key(),
                            open: true,
                            thinking: false,
                        };
                        sink.open(
                            b.key,
                            Kind::Tool {
                                id: call.id.as_deref().unwrap_or_default(),
                                name: name.unwrap_or_default(),
                            },
                        );
                        self.calls.insert(index, b);
                        self.called = true;
                        b
                    }
                };
                match e.arguments() {
                    Some(p) if block.open && !p.is_empty() => sink.delta(block.key, p),
                    _ => {}
                }
            }
            "tool-call-end" => Self::close(&mut self.calls, index, sink),
            "citation-start" => sink.drop_note("citations (the target has no place for them)"),
            "message-end" => {
                self.close_plan(sink);
                let mut open: Vec<Key> = [&self.parts, &self.calls]
                    .iter()
                    .flat_map(|m| m.sorted())
                    .filter(|(_, b)| b.open)
                    .map(|(_, b)| b.key)
                    .collect();
                open.sort_unstable();
                for key in open {
                    sink.close(key);
                }
                self.ended = true;
                if e.failure("").is_some() {
                    return; // the stream's error, which reached the translation already
                }
                let stop = match e.finish_reason() {
                    Some("MAX_TOKENS") => Stop::MaxTokens,
                    Some("STOP_SEQUENCE") => Stop::StopSequence(None),
                    Some("TOOL_CALL") => Stop::ToolUse,
                    None | Some("COMPLETE") if self.called => Stop::ToolUse,
                    None | Some("COMPLETE") => Stop::EndTurn,
                    // TIMEOUT and reasons to come: as sent (a call cut off is no tool stop).
                    Some(other) => Stop::Other(other),
                };
                sink.stop(stop);
                if let Some(usage) = e.usage().and_then(|u| cohere_usage(u.get())) {
                    sink.usage(&usage);
                }
                sink.end();
            }
            _ => {}
        }
    }

    fn close(blocks: &mut IntMap<Block>, index: i64, sink: &mut dyn Sink) {
        if let Some(b @ Block { open: true, .. }) = blocks.get_mut(index) {
            b.open = false;
            sink.close(b.key);
        }
    }

    fn close_plan(&mut self, sink: &mut dyn Sink) {
        if let Some(key) = self.plan.take() {
            sink.close(key);
        }
    }
}

impl super::Ends for CohereReader {
    /// `[DONE]`: after `message-end` nothing; before it (a cut answer), the end.
    fn done(&mut self, sink: &mut dyn Sink) {
        if !self.ended {
            self.ended = true;
            sink.end();
        }
    }
}

impl super::ReadsUsage for CohereReader {
    fn usage(text: &str) -> Option<Usage> {
        cohere_usage(text)
    }
}

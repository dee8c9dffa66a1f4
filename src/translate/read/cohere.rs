//! The Cohere reader: a Cohere v2 chat stream's events as the neutral calls every target
//! writes. Content parts are text or reasoning blocks by their index; the tool plan (the text
//! a model writes before its calls) is a text block of its own, never reasoning; tool calls
//! are tool blocks whose arguments stream as pieces; citations have no neutral place (noted).
//! `message-end` closes what is open and gives the stop and the usage (input
//! `tokens.input_tokens`, output `tokens.output_tokens`, `cached_tokens` read from cache;
//! `billed_units` only when `tokens` is missing); a `message-end` that failed reaches the
//! translation as the stream's error instead. `[DONE]` after it adds nothing.
//!
//! Keys: content part `i` is `2i`, tool call `i` is `2i + 1`, the tool plan [`PLAN`].

use super::*;
use crate::stream::cohere::View;

/// The tool plan's block key.
const PLAN: Key = u64::MAX;

/// Reads a Cohere stream.
#[derive(Debug, Default)]
pub struct CohereReader {
    started: bool,
    /// The blocks opened, by key (as `i64`): whether each is open still.
    open: IntMap<bool>,
    /// Whether the tool plan block is open.
    plan: bool,
    /// Whether a tool call was read (a turn that called tools stops for them).
    called: bool,
    ended: bool,
}

fn content_key(index: i64) -> Key {
    (index as u64).wrapping_mul(2)
}

fn call_key(index: i64) -> Key {
    (index as u64).wrapping_mul(2).wrapping_add(1)
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
                let key = content_key(index);
                if !self.open.contains(key as i64) {
                    self.close_plan(sink);
                    let thinking = c.type_.as_deref() == Some("thinking")
                        || (c.type_.is_none() && c.thinking.is_some() && c.text.is_none());
                    sink.open(
                        key,
                        if thinking {
                            Kind::Reasoning
                        } else {
                            Kind::Text
                        },
                    );
                    self.open.insert(key as i64, true);
                }
                for piece in [&c.text, &c.thinking].into_iter().flatten() {
                    if !piece.is_empty() {
                        sink.delta(key, piece);
                    }
                }
            }
            "content-end" => self.close(content_key(index), sink),
            "tool-plan-delta" => {
                let Some(plan) = e.tool_plan().filter(|p| !p.is_empty()) else {
                    return;
                };
                if !self.plan {
                    self.plan = true;
                    sink.open(PLAN, Kind::Text);
                }
                sink.delta(PLAN, plan);
            }
            "tool-call-start" | "tool-call-delta" => {
                let Some(call) = e.call() else {
                    return;
                };
                let key = call_key(index);
                if !self.open.contains(key as i64) {
                    self.close_plan(sink);
                    let function = call.function.as_ref();
                    let name = function.and_then(|f| f.name.as_deref());
                    sink.open(
                        key,
                        Kind::Tool {
                            id: call.id.as_deref().unwrap_or_default(),
                            name: name.unwrap_or_default(),
                        },
                    );
                    self.open.insert(key as i64, true);
                    self.called = true;
                }
                if let Some(piece) = e.arguments().filter(|p| !p.is_empty()) {
                    sink.delta(key, piece);
                }
            }
            "tool-call-end" => self.close(call_key(index), sink),
            "citation-start" => sink.drop_note("citations (the target has no place for them)"),
            "message-end" => {
                self.close_plan(sink);
                for (key, open) in std::mem::take(&mut self.open).sorted() {
                    if *open {
                        sink.close(key as u64);
                    }
                }
                self.ended = true;
                if e.failure("").is_some() {
                    return; // the stream's error, which reached the translation already
                }
                let stop = match e.finish_reason() {
                    Some("MAX_TOKENS") => Stop::MaxTokens,
                    Some("STOP_SEQUENCE") => Stop::StopSequence(None),
                    Some("TOOL_CALL") => Stop::ToolUse,
                    _ if self.called => Stop::ToolUse,
                    None | Some("COMPLETE") => Stop::EndTurn,
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

    fn close(&mut self, key: Key, sink: &mut dyn Sink) {
        if let Some(open @ true) = self.open.get_mut(key as i64) {
            *open = false;
            sink.close(key);
        }
    }

    fn close_plan(&mut self, sink: &mut dyn Sink) {
        if std::mem::take(&mut self.plan) {
            sink.close(PLAN);
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

//! The writers' protocol invariants, checked on every byte a translation hands out in debug
//! builds (`debug_assert!` in `Translation::take`; the Rust tests, the fuzz targets and a
//! debug build of the extension run it): whatever the upstream sent, what a target client
//! reads follows its dialect's event order.
//!
//! - every target: nothing after the terminal event (`[DONE]`, `message_stop`,
//!   `response.completed` / `.incomplete` / `.failed`) or an error event;
//! - Messages: `message_start` first; content blocks started with indices 0, 1, 2, ... and at
//!   most one open at a time; a delta names a started block; a stop closes the open block;
//!   `message_delta` with no block open;
//! - Responses: `sequence_number` from 0 without a gap; `response.created` first; an event
//!   naming an `output_index` comes after that item's `output_item.added`;
//! - chat: every chunk has a `choices` list; a tool call's first fragment carries its `id` and
//!   `function.name` (the openai SDK's stream state needs both); nothing of a choice follows
//!   its `finish_reason`;
//! - Gemini: every chunk has a `candidates` list or `promptFeedback`; a `functionCall`'s
//!   `args` is an object; no part of a candidate follows its `finishReason`;
//! - Converse: `messageStart` first; a block starts once, and its deltas and stop come between
//!   its start (or, for text and reasoning, its first delta) and its stop; `messageStop` once,
//!   then only `metadata`, which ends the stream.
//!
//! Each dialect's rules are its writer module's (`check`), called through the dialect list.
//!
//! Cost: one JSON decode per event written, in debug builds only.

use std::collections::HashSet;

use crate::translate::Dialect;

/// The state of one translation's output, as a client of the target would track it.
#[derive(Debug)]
pub struct Invariants {
    pub(super) target: Dialect,
    /// Bytes of a frame not closed by its blank line yet.
    pub(super) partial: String,
    pub(super) events: u64,
    pub(super) ended: bool,
    /// Messages: the next block index; the open block.
    pub(super) next_block: i64,
    pub(super) open: Option<i64>,
    /// Responses: the items added.
    pub(super) items: HashSet<i64>,
    /// Chat: the (choice, call) pairs seen; the choices finished. Gemini: the candidates
    /// finished. Converse: the blocks started, the blocks stopped, whether `messageStop` came.
    pub(super) calls: HashSet<(i64, i64)>,
    pub(super) finished: HashSet<i64>,
    pub(super) stopped: HashSet<i64>,
    pub(super) message_stopped: bool,
}

impl Invariants {
    /// A checker for output written in `target`.
    pub fn new(target: Dialect) -> Self {
        Invariants {
            target,
            partial: String::new(),
            events: 0,
            ended: false,
            next_block: 0,
            open: None,
            items: HashSet::new(),
            calls: HashSet::new(),
            finished: HashSet::new(),
            stopped: HashSet::new(),
            message_stopped: false,
        }
    }

    /// Checks the next bytes of output; the first broken rule, described.
    pub fn check(&mut self, out: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(out).map_err(|e| format!("output not UTF-8: {e}"))?;
        self.partial.push_str(text);
        if self.target.spec().framing == crate::framing::Framing::Ndjson {
            while let Some(end) = self.partial.find('\n') {
                let line: String = self.partial.drain(..=end).collect();
                self.frame(&format!("data: {}", line.trim_end_matches('\n')))?;
            }
            return Ok(());
        }
        while let Some(end) = self.partial.find("\n\n") {
            let frame: String = self.partial.drain(..end + 2).collect();
            self.frame(frame.trim_end_matches('\n'))?;
        }
        Ok(())
    }

    fn frame(&mut self, frame: &str) -> Result<(), String> {
        let mut data = String::new();
        let mut event = "";
        for line in frame.split('\n') {
            if let Some(name) = line.strip_prefix("event: ") {
                event = name;
            }
            if let Some(v) = line.strip_prefix("data: ").or(line.strip_prefix("data:")) {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(v);
            }
        }
        if data.is_empty() {
            return Ok(()); // a comment
        }
        if self.ended {
            return Err(format!("an event after the stream's end: {frame:.200}"));
        }
        self.events += 1;
        if data == "[DONE]" {
            self.ended = true;
            return Ok(());
        }
        let v: serde_json::Value = serde_json::from_str(&data)
            .map_err(|e| format!("data is not JSON ({e}): {data:.200}"))?;
        let kind = v
            .get("type")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if kind == "error" || (kind.is_empty() && v.get("error").is_some()) {
            self.ended = true;
            return Ok(());
        }
        super::check_event(self.target, self, event, &v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(target: Dialect, events: &[&str]) -> Result<(), String> {
        let mut c = Invariants::new(target);
        for e in events {
            c.check(format!("data: {e}\n\n").as_bytes())?;
        }
        Ok(())
    }

    #[test]
    fn messages_blocks_open_in_order_and_one_at_a_time() {
        let start = r#"{"type":"message_start","message":{}}"#;
        let b0 = r#"{"type":"content_block_start","index":0,"content_block":{}}"#;
        let b1 = r#"{"type":"content_block_start","index":1,"content_block":{}}"#;
        let d0 = r#"{"type":"content_block_delta","index":0,"delta":{}}"#;
        let d1 = r#"{"type":"content_block_delta","index":1,"delta":{}}"#;
        let s0 = r#"{"type":"content_block_stop","index":0}"#;
        let stop = r#"{"type":"message_stop"}"#;
        assert_eq!(
            run(Dialect::Messages, &[start, b0, d0, s0, b1, stop]),
            Ok(())
        );
        assert!(run(Dialect::Messages, &[b0]).is_err(), "no message_start");
        assert!(run(Dialect::Messages, &[start, b1]).is_err(), "index gap");
        assert!(
            run(Dialect::Messages, &[start, b0, b1]).is_err(),
            "two open"
        );
        assert!(
            run(Dialect::Messages, &[start, b0, d1]).is_err(),
            "delta before open"
        );
        assert!(
            run(Dialect::Messages, &[start, s0]).is_err(),
            "stop of no block"
        );
        assert!(
            run(Dialect::Messages, &[start, stop, d0]).is_err(),
            "after the end"
        );
    }

    #[test]
    fn responses_sequence_numbers_have_no_gap() {
        let created = r#"{"type":"response.created","sequence_number":0}"#;
        let added = r#"{"type":"response.output_item.added","output_index":0,"sequence_number":1}"#;
        let delta = r#"{"type":"response.output_text.delta","output_index":0,"sequence_number":2}"#;
        let gap = r#"{"type":"response.output_text.delta","output_index":0,"sequence_number":3}"#;
        let stray = r#"{"type":"response.output_text.delta","output_index":4,"sequence_number":2}"#;
        assert_eq!(run(Dialect::Responses, &[created, added, delta]), Ok(()));
        assert!(run(Dialect::Responses, &[created, added, gap]).is_err());
        assert!(run(Dialect::Responses, &[created, added, stray]).is_err());
        assert!(run(Dialect::Responses, &[added]).is_err());
    }

    #[test]
    fn chat_ends_at_done() {
        assert_eq!(run(Dialect::Chat, &[r#"{"choices":[]}"#, "[DONE]"]), Ok(()));
        assert!(run(Dialect::Chat, &["[DONE]", r#"{"choices":[]}"#]).is_err());
    }

    #[test]
    fn chat_calls_start_named_and_a_choice_ends_at_its_finish_reason() {
        let first = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}}]}"#;
        let more = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#;
        let finish = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;
        let usage = r#"{"choices":[],"usage":{}}"#;
        assert_eq!(
            run(Dialect::Chat, &[first, more, finish, usage, "[DONE]"]),
            Ok(())
        );
        assert!(
            run(Dialect::Chat, &[more]).is_err(),
            "a call without id and name"
        );
        assert!(
            run(Dialect::Chat, &[finish, more]).is_err(),
            "after the finish"
        );
        assert!(
            run(Dialect::Chat, &[r#"{"id":"x"}"#]).is_err(),
            "no choices"
        );
    }

    #[test]
    fn gemini_candidates_end_at_their_finish_reason() {
        let text = r#"{"candidates":[{"content":{"parts":[{"text":"a"}]},"index":0}]}"#;
        let call =
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}"#;
        let bad =
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"{}"}}]}}]}"#;
        let finish = r#"{"candidates":[{"content":{"parts":[]},"finishReason":"STOP","index":0}],"usageMetadata":{}}"#;
        assert_eq!(run(Dialect::Gemini, &[text, call, finish]), Ok(()));
        assert!(run(Dialect::Gemini, &[bad]).is_err(), "args as text");
        assert!(
            run(Dialect::Gemini, &[finish, text]).is_err(),
            "after the finish"
        );
        assert!(
            run(Dialect::Gemini, &[r#"{"modelVersion":"m"}"#]).is_err(),
            "no candidates"
        );
    }

    #[test]
    fn converse_blocks_start_once_and_metadata_ends() {
        let ev = |name: &str, data: &str| format!("event: {name}\ndata: {data}\n\n");
        let check = |events: &[(&str, &str)]| {
            let mut c = Invariants::new(Dialect::Converse);
            events
                .iter()
                .try_for_each(|(n, d)| c.check(ev(n, d).as_bytes()))
        };
        let start = ("messageStart", r#"{"role":"assistant"}"#);
        let text = (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"a"}}"#,
        );
        let stop0 = ("contentBlockStop", r#"{"contentBlockIndex":0}"#);
        let tool = (
            "contentBlockStart",
            r#"{"contentBlockIndex":1,"start":{"toolUse":{}}}"#,
        );
        let stop1 = ("contentBlockStop", r#"{"contentBlockIndex":1}"#);
        let end = ("messageStop", r#"{"stopReason":"tool_use"}"#);
        let meta = ("metadata", r#"{"usage":{}}"#);
        assert_eq!(check(&[start, text, stop0, tool, stop1, end, meta]), Ok(()));
        assert!(check(&[text]).is_err(), "no messageStart");
        assert!(check(&[start, tool, tool]).is_err(), "started twice");
        assert!(
            check(&[start, text, stop0, text]).is_err(),
            "a delta after the stop"
        );
        assert!(check(&[start, stop1]).is_err(), "a stop of no block");
        assert!(check(&[start, end, text]).is_err(), "after messageStop");
        assert!(check(&[start, end, meta, meta]).is_err(), "after metadata");
    }
}

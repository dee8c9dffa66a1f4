//! The Google Gemini reader.

use super::*;

// --- Gemini -----------------------------------------------------------------------------------

/// Gemini usage in neutral terms: its prompt count includes cached tokens (as OpenAI's does),
/// and its answer is counted in two figures, `candidatesTokenCount` and `thoughtsTokenCount`,
/// both output. Tokens of tool-use prompts are prompt tokens too.
pub(super) fn gemini_usage(text: &str) -> Option<Usage> {
    let [prompt, tool_prompt, candidates, thoughts, cached] = fields(
        text,
        [
            "promptTokenCount",
            "toolUsePromptTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
            "cachedContentTokenCount",
        ],
    );
    let n = |v: Option<&str>| v.and_then(|v| v.trim().parse::<u64>().ok());
    let (candidates, thoughts) = (n(candidates), n(thoughts));
    Some(Usage {
        input: n(prompt).map(|p| p.saturating_add(n(tool_prompt).unwrap_or(0))),
        uncached: None,
        cache_read: n(cached),
        cache_write: None,
        output: (candidates.is_some() || thoughts.is_some()).then(|| {
            candidates
                .unwrap_or(0)
                .saturating_add(thoughts.unwrap_or(0))
        }),
        reasoning: thoughts,
    })
}

/// The Unix time of an RFC 3339 timestamp (Vertex's `createTime`,
/// `2026-11-20T10:00:00.123456Z`; fractions dropped, an offset applied); `None` otherwise.
fn unix_seconds(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let sep = |at: usize, c: u8| (b.get(at) == Some(&c)).then_some(());
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    sep(4, b'-')?;
    sep(7, b'-')?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    sep(13, b':')?;
    sep(16, b':')?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
    }
    let offset = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        &sign @ (b'+' | b'-') if at + 6 == b.len() => {
            sep(at + 3, b':')?;
            let minutes = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    // Days from 1970-01-01 of a proleptic Gregorian date (March-based years).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second - offset)
}

/// Whether a `usageMetadata` counts the answer (Google's last usage of a stream does).
fn counts_answer(usage: &str) -> bool {
    usage.contains("\"candidatesTokenCount\"")
}

/// What the Gemini reader has open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GeminiOpen {
    Text,
    Reasoning,
    /// A Vertex streamed call.
    Call,
}

/// Reads a Gemini stream (candidate 0; other candidates are noted and dropped). Each run of
/// parts of one kind is a block; calls carry no id, so each gets one made up from the
/// response id (or, without one, from a hash of what the stream said before and of the call
/// itself: the same stream gives the same ids, however it is cut) and its number. The stream has no
/// terminal marker: candidate 0's `finishReason` ends the target.
#[derive(Debug)]
pub struct GeminiReader {
    open: Option<(Key, GeminiOpen)>,
    /// The open streamed call's arguments writer.
    streamed: Option<crate::fold::gemini::ArgsText>,
    /// The open reasoning block's signature, written when the block closes (where Messages
    /// has it: after the thinking). Gemini signs the first part of a run.
    signature: Option<String>,
    next: Key,
    calls: u64,
    meta: bool,
    /// Candidate 0 has its `finishReason`: its blocks are closed and its stop reason given.
    finished: bool,
    /// The target's closing events are written. When the finish reason came without the
    /// answer's usage (`candidatesTokenCount`), they wait for the next chunk that has usage (a
    /// trailing usage-only chunk), or the end of the upstream.
    ended: bool,
    /// FNV-1a over the text and calls seen so far (ids for a stream without a response id).
    seen: u64,
    /// The last `usageMetadata` (its text: it is cumulative and comes with every chunk, and
    /// the targets write usage only when they open and when they end, so it is read only then).
    usage: String,
    /// `usage` was handed on.
    usage_sent: bool,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: `hash` with `bytes` added.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Default for GeminiReader {
    fn default() -> Self {
        GeminiReader {
            open: None,
            streamed: None,
            signature: None,
            next: 0,
            calls: 0,
            meta: false,
            finished: false,
            ended: false,
            seen: FNV_OFFSET,
            usage: String::new(),
            usage_sent: false,
        }
    }
}

impl GeminiReader {
    fn close_open(&mut self, sink: &mut dyn Sink) {
        if let Some((key, kind)) = self.open.take() {
            if kind == GeminiOpen::Call {
                if let Some(mut w) = self.streamed.take() {
                    let mut text = String::new();
                    w.close(&mut text);
                    sink.delta(key, &text);
                }
            }
            if let Some(sig) = self.signature.take() {
                sink.signature(key, &sig);
            }
            sink.close(key);
        }
    }

    /// Hands on the last usage, unless it was.
    fn send_usage(&mut self, sink: &mut dyn Sink) {
        if self.usage_sent {
            return;
        }
        self.usage_sent = true;
        if let Some(u) = gemini_usage(&self.usage) {
            sink.usage(&u);
        }
    }

    fn new_key(&mut self) -> Key {
        self.next += 1;
        self.next
    }

    fn call_id(&mut self, sent: Option<&str>, response_id: Option<&str>, name: &str) -> String {
        self.calls += 1;
        if response_id.is_none() {
            self.seen = fnv1a(self.seen, name.as_bytes());
        }
        match (sent, response_id) {
            (Some(id), _) if !id.is_empty() => id.to_owned(),
            (_, Some(r)) => format!("call_{r}_{}", self.calls),
            _ => format!("call_{:016x}_{}", self.seen, self.calls),
        }
    }

    /// Writes the target's closing events (candidate 0 has finished).
    fn end(&mut self, sink: &mut dyn Sink) {
        self.send_usage(sink);
        self.ended = true;
        sink.end();
    }

    /// One chunk, as the Gemini fold reads it (errors come to the translation apart).
    pub fn view(&mut self, chunk: &crate::dialect::gemini::Chunk<'_>, sink: &mut dyn Sink) {
        if self.ended {
            if chunk.usage.is_some_and(|u| u != self.usage) {
                sink.drop_note("usage sent after the target's closing events (not written)");
            }
            return;
        }
        let response_id = chunk.response_id.as_ref().map(|s| s.as_str());
        if let Some(u) = chunk.usage.filter(|u| *u != self.usage) {
            self.usage.clear();
            self.usage.push_str(u);
            self.usage_sent = false;
        }
        if self.finished {
            // Candidate 0 is over: what follows is other candidates and the usage. A chunk of
            // usage alone, or one that counts the answer, is the last usage; another
            // candidate's chunk (Vertex: `{"trafficType": ...}` until the end) is not.
            let last = chunk
                .usage
                .is_some_and(|u| chunk.candidates.is_empty() || counts_answer(u));
            if last {
                self.end(sink);
            }
            return;
        }
        if !self.meta && (response_id.is_some() || chunk.model_version.is_some()) {
            self.meta = true;
            // The prompt's figures as the target opens (a Messages `message_start`).
            self.send_usage(sink);
            let created = chunk
                .extra
                .0
                .iter()
                .find(|(k, _)| k.as_str() == "createTime")
                .and_then(|(_, v)| json_string(v.get()))
                .and_then(|t| unix_seconds(&t));
            sink.meta(Meta {
                id: response_id,
                model: chunk.model_version.as_ref().map(|s| s.as_str()),
                created,
            });
        }
        let mut first = None;
        for (index, c) in chunk.indexed() {
            if index == 0 && first.is_none() {
                first = Some(c);
            } else {
                sink.drop_note("candidates other than the first (candidateCount above 1)");
            }
        }
        let Some(c) = first else {
            return;
        };
        for (key, value) in &c.extra.0 {
            let dropped = match key.as_str() {
                "citationMetadata" | "groundingMetadata" => {
                    "citations and grounding metadata (citationMetadata, groundingMetadata)"
                }
                "finishMessage" => "the finish message (finishMessage)",
                _ => continue,
            };
            if value.get() != "null" {
                sink.drop_note(dropped);
            }
        }
        for part in &c.parts {
            if let Some(call) = &part.function_call {
                let continues = self.streamed.is_some() && call.name.is_none();
                if !continues {
                    self.close_open(sink);
                }
                if let (false, Some(signature)) = (continues, &part.thought_signature) {
                    sink.call_signature(self.next + 1, signature.as_str());
                }
                if call.is_empty() && !continues {
                    continue;
                }
                let name = call.name.as_ref().map_or("", |n| n.as_str());
                if !call.is_streamed() && !continues {
                    let key = self.new_key();
                    let id = self.call_id(call.id.as_ref().map(|s| s.as_str()), response_id, name);
                    sink.open(key, Kind::Tool { id: &id, name });
                    sink.delta(key, call.args.map_or("{}", |a| a.get()));
                    sink.close(key);
                    continue;
                }
                if !continues {
                    let key = self.new_key();
                    let id = self.call_id(call.id.as_ref().map(|s| s.as_str()), response_id, name);
                    sink.open(key, Kind::Tool { id: &id, name });
                    self.open = Some((key, GeminiOpen::Call));
                    self.streamed = Some(crate::fold::gemini::ArgsText::default());
                }
                let (Some((key, _)), Some(writer)) = (self.open, self.streamed.as_mut()) else {
                    continue;
                };
                let mut text = String::new();
                for piece in &call.partial_args {
                    let path = piece.json_path.as_ref().map_or("", |p| p.as_str());
                    // A piece that does not fit is skipped (the fold notes it).
                    let _ = writer.add(path, &piece.value, piece.will_continue, &mut text);
                }
                if !call.will_continue {
                    writer.close(&mut text);
                }
                if !text.is_empty() {
                    sink.delta(key, &text);
                }
                if !call.will_continue {
                    self.streamed = None;
                    self.open = None;
                    sink.close(key);
                }
            } else if let Some(text) = part.text_or_signature() {
                let signature = part.thought_signature.as_ref().map(|s| s.as_str());
                if !part.thought {
                    if !text.is_empty() {
                        let key = self.block(GeminiOpen::Text, sink);
                        self.text(key, text, response_id, sink);
                    }
                    if signature.is_some() {
                        sink.drop_note("thought signatures on answer text");
                    }
                    continue;
                }
                if text.is_empty() && signature.is_none() {
                    continue; // says nothing (and opens no block)
                }
                if signature.is_some() && self.signature.is_some() {
                    // A second signed run: a block of its own (as the fold keeps two signed
                    // parts apart), so no signature is lost.
                    self.close_open(sink);
                }
                let key = self.block(GeminiOpen::Reasoning, sink);
                self.text(key, text, response_id, sink);
                if let Some(sig) = signature {
                    self.signature = Some(sig.to_owned());
                }
            } else {
                self.close_open(sink);
                sink.drop_note(
                    "parts other than text, thoughts and function calls (code execution, inline data, ...)",
                );
            }
        }
        if let Some(reason) = &c.finish_reason {
            self.close_open(sink);
            sink.stop(Stop::from_gemini(reason.as_str(), self.calls > 0));
            self.finished = true;
            // Google's last chunk counts the answer with the finish reason; a usage without
            // that count is not the last one yet.
            if counts_answer(&self.usage) {
                self.end(sink);
            }
        }
    }

    /// The open block when it is of kind `want`, else a new one (the open one closed).
    fn block(&mut self, want: GeminiOpen, sink: &mut dyn Sink) -> Key {
        match self.open {
            Some((key, kind)) if kind == want => key,
            _ => {
                self.close_open(sink);
                let key = self.new_key();
                sink.open(
                    key,
                    if want == GeminiOpen::Reasoning {
                        Kind::Reasoning
                    } else {
                        Kind::Text
                    },
                );
                self.open = Some((key, want));
                key
            }
        }
    }

    /// A text delta of block `key` (nothing for an empty one).
    fn text(&mut self, key: Key, text: &str, response_id: Option<&str>, sink: &mut dyn Sink) {
        if text.is_empty() {
            return;
        }
        if response_id.is_none() {
            self.seen = fnv1a(self.seen, text.as_bytes());
        }
        sink.delta(key, text);
    }
}

impl super::Ends for GeminiReader {
    /// The end of the upstream: closing events still owed are written (the finish reason came,
    /// and no usage after it). A stream cut before candidate 0 finished gets none.
    fn end_of_input(&mut self, sink: &mut dyn Sink) {
        if self.finished && !self.ended {
            self.end(sink);
        }
    }
}

impl super::ReadsUsage for GeminiReader {
    fn usage(text: &str) -> Option<Usage> {
        gemini_usage(text)
    }
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn create_times_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_seconds("2026-11-20T10:00:00.123456Z"),
            Some(1_795_168_800)
        );
        assert_eq!(unix_seconds("2000-02-29T12:00:00+02:00"), Some(951_818_400));
        assert_eq!(unix_seconds("1969-12-31T23:59:59-05:30"), Some(19_799));
        for bad in [
            "",
            "2026-11-20",
            "2026-13-20T10:00:00Z",
            "2026-11-20T10:00:00",
            "2026-11-20T10:00:00Zx",
            "2026-11-20T10:00:00+0200",
            "２026-11-20T10:00:00Z",
            "2026-11-20T25:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }
}

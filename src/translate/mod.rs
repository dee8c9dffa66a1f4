//! Live translation between dialects (API.md section 8): an upstream stream in one dialect
//! read into one neutral event model, and the target dialect written from that model, event
//! by event, as the upstream's events arrive.
//!
//! - [`read`]: each source dialect's views (the ones its fold reads: `crate::fold`'s
//!   `ChunkView` / `EventView`, handed over as [`Upstream`] calls) as calls on a [`Sink`]:
//!   message metadata, blocks (text, reasoning, refusal, tool call) opened, streamed and closed
//!   under a key the reader chooses, the stop reason, usage, an error, the end of the stream.
//! - [`write`]: one writer per target dialect, a [`Sink`] that turns those calls into the
//!   target's SSE events with the target's lifecycle (its opening events before the first
//!   content, its blocks or items opened and closed in order, its numbering, its closing
//!   events only when the upstream ended), and folds them as it writes them (the target's
//!   result, without reading its own bytes back).
//!
//! The lifecycle rules live once per target (in its writer) and the reading rules once per
//! source (in its reader); no pair has code of its own. What a target cannot hold is dropped and
//! named in the writer's notes, once per kind. Nothing here frames or decodes: the Python
//! `Translator` taps its source stream's own decode (one pass for both), and
//! [`Standalone`] puts a translation on the tap of a stream of its own for
//! pure-Rust use.
//!
//! Carried across feeds: each writer's open blocks, what its closing events need (the text of
//! the open items for Responses' `.done` events and the final response), and the target's fold.
//! Cost: each upstream fragment is written once (escaped into the target's JSON), appended
//! once to the target fold's pending run and, for a Responses target, once to its item.

use std::borrow::Cow;

use crate::json::write::push_str;

pub mod carry;
pub mod error;
pub mod eventstream_out;
pub mod read;
mod standalone;
pub mod write;

// The dialects and their detector live below translation, in `dialect` (re-exported here
// for the paths that named them here).
pub use crate::dialect::detect::{detect, sniff, Sniffer, SNIFF_BYTES, SNIFF_EVENTS};
pub use crate::dialect::Dialect;
pub use crate::stream::Upstream;
pub use standalone::Standalone;

/// The message's identity, as far as the upstream has said it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Meta<'a> {
    /// The message's (or response's) id.
    pub id: Option<&'a str>,
    /// The model that answers.
    pub model: Option<&'a str>,
    /// When the message was created, in Unix seconds.
    pub created: Option<i64>,
}

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    /// The answer's text.
    Text,
    /// Reasoning the user may see (chat `reasoning_content`, Messages `thinking`, Responses
    /// reasoning summaries).
    Reasoning,
    /// A refusal (chat `refusal`, a Responses refusal part).
    Refusal,
    /// A tool / function call: its id and name (arguments follow as deltas).
    Tool {
        /// The call's id.
        id: &'a str,
        /// The name of the tool called.
        name: &'a str,
    },
}

/// A block's identity, chosen by the reader (unique within one stream).
pub type Key = u64;

/// Why the message stopped, in neutral terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop<'a> {
    /// The model finished its turn.
    EndTurn,
    /// A stop sequence matched (the sequence, when the upstream names it).
    StopSequence(Option<&'a str>),
    /// The output hit its token limit.
    MaxTokens,
    /// The model called tools and waits for their results.
    ToolUse,
    /// Content filtered or refused.
    Filtered,
    /// A reason the neutral model has no name for, as the upstream sent it.
    Other(&'a str),
}

impl<'a> Stop<'a> {
    /// Chat's `finish_reason`.
    pub fn from_chat(reason: &'a str) -> Stop<'a> {
        match reason {
            "stop" => Stop::EndTurn,
            "length" => Stop::MaxTokens,
            "tool_calls" | "function_call" => Stop::ToolUse,
            "content_filter" => Stop::Filtered,
            other => Stop::Other(other),
        }
    }

    /// Messages' `stop_reason`.
    pub fn from_messages(reason: &'a str, sequence: Option<&'a str>) -> Stop<'a> {
        match reason {
            "end_turn" => Stop::EndTurn,
            "stop_sequence" => Stop::StopSequence(sequence),
            "max_tokens" | "model_context_window_exceeded" => Stop::MaxTokens,
            "tool_use" => Stop::ToolUse,
            "refusal" => Stop::Filtered,
            other => Stop::Other(other),
        }
    }

    /// Gemini's `finishReason` (`STOP` also ends a turn that called tools: Gemini has no
    /// reason of its own for it).
    pub fn from_gemini(reason: &'a str, called_tools: bool) -> Stop<'a> {
        match reason {
            "STOP" if called_tools => Stop::ToolUse,
            "STOP" => Stop::EndTurn,
            "MAX_TOKENS" => Stop::MaxTokens,
            "SAFETY"
            | "MODEL_ARMOR"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION" => Stop::Filtered,
            other => Stop::Other(other),
        }
    }

    /// Chat's `finish_reason` for the reason.
    pub fn to_chat(self) -> &'a str {
        match self {
            Stop::EndTurn | Stop::StopSequence(_) => "stop",
            Stop::MaxTokens => "length",
            Stop::ToolUse => "tool_calls",
            Stop::Filtered => "content_filter",
            Stop::Other(other) => other,
        }
    }

    /// Messages' `stop_reason` for the reason.
    pub fn to_messages(self) -> &'a str {
        match self {
            Stop::EndTurn => "end_turn",
            Stop::StopSequence(_) => "stop_sequence",
            Stop::MaxTokens => "max_tokens",
            Stop::ToolUse => "tool_use",
            Stop::Filtered => "refusal",
            Stop::Other(other) => other,
        }
    }

    /// Bedrock Converse's `stopReason`.
    pub fn from_converse(reason: &'a str) -> Stop<'a> {
        match reason {
            "end_turn" => Stop::EndTurn,
            "stop_sequence" => Stop::StopSequence(None),
            "max_tokens" | "model_context_window_exceeded" => Stop::MaxTokens,
            "tool_use" => Stop::ToolUse,
            "guardrail_intervened" | "content_filtered" => Stop::Filtered,
            other => Stop::Other(other),
        }
    }

    /// Converse's name for the reason (`None` for a reason Converse has no name for).
    pub fn to_converse(self) -> Option<&'static str> {
        Some(match self {
            Stop::EndTurn => "end_turn",
            Stop::StopSequence(_) => "stop_sequence",
            Stop::MaxTokens => "max_tokens",
            Stop::ToolUse => "tool_use",
            Stop::Filtered => "content_filtered",
            Stop::Other(_) => return None,
        })
    }
}

/// Token counts in neutral terms, as each upstream says them: OpenAI's prompt figure counts
/// every prompt token, cached ones included (`input`); Anthropic's `input_tokens` counts only
/// those neither read from nor written to a cache (`uncached`). `None`: not said.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Every prompt token, cached ones included (OpenAI's `prompt_tokens`).
    pub input: Option<u64>,
    /// The prompt tokens neither read from nor written to a cache (Anthropic's `input_tokens`).
    pub uncached: Option<u64>,
    /// The prompt tokens read from a cache.
    pub cache_read: Option<u64>,
    /// The prompt tokens written to a cache.
    pub cache_write: Option<u64>,
    /// The output tokens, reasoning included.
    pub output: Option<u64>,
    /// The output tokens spent on reasoning.
    pub reasoning: Option<u64>,
}

impl Usage {
    /// Later figures replace earlier ones where given (usage is cumulative in every dialect).
    pub fn merge(&mut self, later: &Usage) {
        let pick = |a: &mut Option<u64>, b: Option<u64>| {
            if b.is_some() {
                *a = b;
            }
        };
        pick(&mut self.input, later.input);
        pick(&mut self.uncached, later.uncached);
        pick(&mut self.cache_read, later.cache_read);
        pick(&mut self.cache_write, later.cache_write);
        pick(&mut self.output, later.output);
        pick(&mut self.reasoning, later.reasoning);
    }

    fn cached(&self) -> u64 {
        self.cache_read
            .unwrap_or(0)
            .saturating_add(self.cache_write.unwrap_or(0))
    }

    /// Every prompt token, cached ones included (OpenAI's `prompt_tokens` / `input_tokens`).
    pub fn total_input(&self) -> u64 {
        match (self.input, self.uncached) {
            (Some(total), _) => total,
            (None, uncached) => uncached.unwrap_or(0).saturating_add(self.cached()),
        }
    }

    /// The one usage shape of every dialect (API.md section 12), as the OpenTelemetry GenAI
    /// conventions count: input includes cached tokens (read and written), output includes
    /// reasoning, and the total is their sum. `None`: the provider did not say.
    pub fn normalized(&self) -> [(&'static str, Option<u64>); 6] {
        let said_input = self.input.is_some() || self.uncached.is_some();
        let input = said_input.then(|| self.total_input());
        let total = match (input, self.output) {
            (Some(i), Some(o)) => Some(i.saturating_add(o)),
            _ => None,
        };
        [
            ("input_tokens", input),
            ("output_tokens", self.output),
            ("cached_input_tokens", self.cache_read),
            ("cache_write_tokens", self.cache_write),
            ("reasoning_tokens", self.reasoning),
            ("total_tokens", total),
        ]
    }

    /// Prompt tokens not read from or written to a cache (Anthropic's `input_tokens`).
    pub fn uncached_input(&self) -> u64 {
        match (self.uncached, self.input) {
            (Some(uncached), _) => uncached,
            (None, total) => total.unwrap_or(0).saturating_sub(self.cached()),
        }
    }
}

/// An error the upstream reported.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    /// The error's message.
    pub message: &'a str,
    /// The error's type, as a plain string.
    pub type_: Option<&'a str>,
    /// The error's code, as a plain string.
    pub code: Option<&'a str>,
}

/// What a reader calls as it reads the upstream; a writer implements it.
pub trait Sink {
    /// The message's identity (the first call opens the target stream; later calls may fill
    /// in what was missing).
    fn meta(&mut self, meta: Meta<'_>);
    /// A block starts.
    fn open(&mut self, key: Key, kind: Kind<'_>);
    /// Text of an open block (a tool call's argument fragment for a tool block); opens a text
    /// block with this key if none is open under it.
    fn delta(&mut self, key: Key, text: &str);
    /// The signature of a reasoning block.
    fn signature(&mut self, key: Key, signature: &str);
    /// Opaque reasoning the target may carry (Messages `redacted_thinking` data, Responses
    /// `encrypted_content`).
    fn redacted(&mut self, key: Key, data: &str);
    /// The id of the reasoning block `key` (a Responses reasoning item's), which an upstream
    /// wants back with it; no target writes it (the carry keeps it: [`carry`]).
    fn reasoning_id(&mut self, _key: Key, _id: &str) {}
    /// The signature of the tool call that opens next under `key` (Gemini's `thoughtSignature`
    /// on a `functionCall` part): no target has a place for it, only the carry ([`carry`]).
    fn call_signature(&mut self, _key: Key, _signature: &str) {
        self.drop_note("thought signatures of function calls");
    }
    /// A block ends.
    fn close(&mut self, key: Key);
    /// Why the message stopped.
    fn stop(&mut self, stop: Stop<'_>);
    /// Token counts (each call's figures merge with earlier ones).
    fn usage(&mut self, usage: &Usage);
    /// The upstream's error: the target's error event.
    fn error(&mut self, failure: Failure<'_>);
    /// The upstream's terminal marker: the target's closing events.
    fn end(&mut self);
    /// Something the target cannot hold was dropped (once per kind).
    fn drop_note(&mut self, what: &str);
}

/// Notes: what was dropped, once per kind, at most a bounded number.
#[derive(Debug, Default)]
pub struct Notes(Vec<String>);

impl Notes {
    /// Notes `what`, unless it is noted already or the notes are full.
    pub fn add(&mut self, what: &str) {
        if self.0.len() < crate::fold::MAX_NOTES && !self.0.iter().any(|n| n == what) {
            self.0.push(what.to_owned());
        }
    }

    /// Every note, in the order noted.
    pub fn all(&self) -> &[String] {
        &self.0
    }
}

/// `s` as a JSON string, or `null`.
pub fn push_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

/// A string value read out of raw JSON text (`"..."`), unescaped; `None` for anything else.
pub fn json_string(raw: &str) -> Option<Cow<'_, str>> {
    serde_json::from_str::<crate::json::read::Str<'_>>(raw)
        .ok()
        .map(|s| s.0)
}

/// Declares `Reader`, one source reader of each dialect, and `reader_for`, from the dialect
/// list.
macro_rules! readers {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// One source reader.
        #[derive(Debug)]
        enum Reader {
            $($d(read::$reader),)*
        }

        fn reader_for(source: Dialect) -> Reader {
            match source {
                $(Dialect::$d => Reader::$d(read::$reader::default()),)*
            }
        }

        impl Reader {
            /// Reads one view, `[DONE]` or the end of the body (another dialect's view cannot
            /// come from the source's own stream, and is passed over).
            fn read(&mut self, up: Upstream<'_>, sink: &mut dyn Sink) {
                use read::Ends;
                match (up, self) {
                    $((Upstream::$d(v), Reader::$d(r)) => r.view(v, sink),)*
                    $((Upstream::Done, Reader::$d(r)) => r.done(sink),)*
                    $((Upstream::End, Reader::$d(r)) => r.end_of_input(sink),)*
                    _ => {}
                }
            }
        }
    };
}
crate::dialect::registry::dialects!(readers);

/// A translation: what the upstream stream reads (as [`Upstream`] calls) into the neutral
/// model, and the target written from it, with the target's own fold (what the client's SDK
/// assembles from the bytes written) kept as they are written.
pub struct Translation {
    reader: Option<Reader>,
    source: Option<Dialect>,
    writer: Box<dyn write::Writer + Send + Sync>,
    target: Dialect,
    /// The signed reasoning kept for the next tool call's id, when the pair carries it.
    carry: Option<carry::CarryState>,
    /// The store form of the carrier ids, when asked for (`set_carry_store`).
    stored: Option<carry::Stored>,
    /// The upstream has ended (`finish()`): what comes after is not read.
    ended: bool,
    /// The output in Bedrock's InvokeModelWithResponseStream framing, when asked for.
    framing_out: Option<Box<eventstream_out::EventStreamOut>>,
    /// The target protocol's rules, checked on the output in debug builds.
    #[cfg(debug_assertions)]
    invariants: write::check::Invariants,
}

/// The most output room [`Translation::reserve_for`] makes ahead of one read.
const RESERVE_MAX: usize = 4 << 20;

impl crate::stream::Tap for Translation {
    fn read(&mut self, up: Upstream<'_>) {
        Translation::read(self, up);
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl Translation {
    /// A translation from `source` (`None`: not told yet, see [`Translation::set_source`]) to
    /// `target`.
    pub fn new(source: Option<Dialect>, target: Dialect) -> Self {
        Translation {
            reader: source.map(reader_for),
            source,
            writer: write::writer(target),
            target,
            carry: source
                .filter(|s| carry::carries(*s, target))
                .map(|_| carry::CarryState::default()),
            stored: None,
            ended: false,
            // Converse is written in its own framing: event stream messages.
            framing_out: (target.spec().framing == crate::framing::Framing::EventStream)
                .then(|| Box::new(eventstream_out::EventStreamOut::native())),
            #[cfg(debug_assertions)]
            invariants: write::check::Invariants::new(target),
        }
    }

    /// The client's endpoint path (`Writer::set_endpoint`): the form its answer takes there.
    pub fn set_endpoint(&mut self, path: &str) {
        self.writer.set_endpoint(path);
    }

    /// Writes carrier ids in the store form ([`carry::Stored`]) with `token`; false for a
    /// token that is not 8 to 64 ASCII letters and digits.
    pub fn set_carry_store(&mut self, token: &str) -> bool {
        let Some(stored) = carry::Stored::new(token) else {
            return false;
        };
        if let Some(state) = self.carry.as_mut() {
            *state.stored_mut() = Some(stored.clone());
        }
        self.stored = Some(stored);
        true
    }

    /// The (short id, carrier) pairs of the store form written since the last call: the
    /// caller keeps them where the next request's translation finds them.
    pub fn take_stored(&mut self) -> Vec<(String, String)> {
        self.carry
            .as_mut()
            .and_then(|c| c.stored_mut().as_mut())
            .map(carry::Stored::take)
            .unwrap_or_default()
    }

    /// The upstream has ended (its `finish()` ran): from now on nothing is read or written,
    /// so that no event follows the target's terminal one.
    pub fn end_input(&mut self) {
        self.ended = true;
    }

    /// Whether the upstream has ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Whether the upstream has ended; input offered after it is refused here, and noted
    /// (once). The drivers ask before feeding their source stream.
    pub fn refuse_after_end(&mut self) -> bool {
        if self.ended {
            self.writer.drop_note(
                "upstream input after finish() (ignored: the client's stream has ended)",
            );
        }
        self.ended
    }

    /// Tells the source dialect (once; later calls are ignored).
    pub fn set_source(&mut self, source: Dialect) {
        if self.source.is_none() {
            self.source = Some(source);
            self.reader = Some(reader_for(source));
            if carry::carries(source, self.target) {
                self.carry = Some(carry::CarryState::with_stored(self.stored.clone()));
            }
        }
    }

    /// The source dialect, once known.
    pub fn source(&self) -> Option<Dialect> {
        self.source
    }

    /// The target dialect.
    pub fn target(&self) -> Dialect {
        self.target
    }

    /// What the target could not hold, once per kind.
    pub fn notes(&self) -> &[String] {
        self.writer.notes()
    }

    /// Writes the output in Amazon Bedrock's InvokeModelWithResponseStream framing (event
    /// stream `chunk` messages) instead of SSE.
    pub fn write_eventstream(&mut self) {
        // Converse is written in the event stream framing already (its own events).
        if self.target.spec().framing != crate::framing::Framing::EventStream {
            self.framing_out = Some(Box::default());
        }
    }

    /// Whether the output is in Bedrock's event stream framing.
    pub fn writes_eventstream(&self) -> bool {
        self.framing_out.is_some()
    }

    /// The bytes of the target's events written since the last [`Translation::clear`].
    pub fn output(&mut self) -> &[u8] {
        match &mut self.framing_out {
            Some(framing) => framing.convert(self.writer.output()),
            None => self.writer.output(),
        }
    }

    /// Forgets the output (its buffer is kept for the next events).
    pub fn clear(&mut self) {
        #[cfg(debug_assertions)]
        {
            let checked = self.invariants.check(self.writer.output());
            debug_assert!(
                checked.is_ok(),
                "the {} output broke its protocol: {checked:?}",
                self.target.name()
            );
        }
        self.writer.clear();
        if let Some(framing) = &mut self.framing_out {
            framing.clear();
        }
    }

    /// Makes room for the output of `input` more upstream bytes: twice as many (a target's
    /// stream is 0.35-1.8x as long as the source's on the bench corpora, Messages to chat the
    /// longest), at most [`RESERVE_MAX`] (the buffer keeps its capacity between feeds: a huge
    /// read of events the target drops must not leave a huge buffer). Growing by doubling
    /// instead cost ~4% of translating a whole Messages body to Responses (a copy a step).
    pub fn reserve_for(&mut self, input: usize) {
        self.writer
            .reserve(input.saturating_mul(2).min(RESERVE_MAX));
    }

    /// The output, taken.
    pub fn take(&mut self) -> Vec<u8> {
        let out = self.output().to_vec();
        self.clear();
        out
    }

    /// The final object in the target dialect, folded from the events written so far.
    pub fn result(&mut self) -> crate::fold::Out {
        self.writer.result()
    }

    /// Reads one thing off the upstream stream and writes what the target owes for it.
    pub fn read(&mut self, up: Upstream<'_>) {
        if self.ended {
            return;
        }
        let writer: &mut dyn Sink = self.writer.as_mut();
        let mut carrying;
        let sink: &mut dyn Sink = match (self.carry.as_mut(), self.source) {
            (Some(state), Some(source)) => {
                carrying = carry::Carrying {
                    sink: writer,
                    state,
                    source,
                };
                &mut carrying
            }
            _ => writer,
        };
        match (up, self.reader.as_mut()) {
            (Upstream::Error(info), _) => read::send_error(info, sink),
            (Upstream::Malformed, _) => {
                sink.drop_note("upstream frames whose JSON did not decode (skipped)")
            }
            (_, None) => {}
            (up, Some(reader)) => reader.read(up, sink),
        }
    }
}

#[cfg(test)]
mod tests;

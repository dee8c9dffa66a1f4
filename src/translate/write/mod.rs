//! The target writers: one [`Sink`] per dialect (a file each: `chat`, `messages`, `responses`,
//! `gemini`), writing its SSE events into a byte buffer that the caller takes after each feed.
//! Here: what they share (the [`Writer`] trait, the target folds' [`TargetFold`], the output
//! buffer with its run of unfolded deltas, the message head, the block table).
//!
//! Shared rules (each writer applies them in its own wire form):
//! - the opening events go out with the first call (`meta`, or content before it);
//! - a key opens once: opening it again is nothing (an upstream may repeat the event that
//!   adds an item; the Messages and Responses writers opened a second block for it);
//! - Messages: one content block is open at a time (its protocol is sequential): opening
//!   another closes the open one; a delta for a block already closed is written under its own
//!   index and noted. Responses: items stay open until the reader closes them or the stream
//!   ends (every event names its `output_index`, so interleaved tool calls stay whole);
//! - an upstream error is written in the target's error form after what was already written,
//!   and nothing follows it;
//! - the closing events (stop reason, usage, terminal marker) go out only at `end()`, the
//!   upstream's own terminal marker: a cut upstream gets no made-up ending.

use super::{push_opt, Failure, Key, Kind, Meta, Notes, Sink, Stop, Usage};
use crate::fold::chat::ChatFold;
use crate::fold::messages::MessagesFold;
pub(crate) use crate::fold::{take_better, take_better_time};
use crate::fold::{IntMap, Out};
use crate::json::write::{push_num, push_str};

/// A target writer: a [`Sink`] whose output is taken after each feed.
pub trait Writer: Sink {
    /// The bytes written since the last [`Writer::clear`].
    fn output(&self) -> &[u8];
    /// Empties the output (after the caller took it).
    fn clear(&mut self);
    /// Makes room for `additional` more bytes of output (one allocation instead of a run of
    /// doublings, each a copy, when a large read is translated at once).
    fn reserve(&mut self, additional: usize);
    /// What the writer dropped or could not write as sent, one note per kind.
    fn notes(&self) -> &[String];
    /// The target's fold of everything written: what its stream's `result()` gives.
    fn result(&mut self) -> Out;
    /// The client's endpoint path, when the dialect answers another form there (Ollama's
    /// `/api/generate`): by default every path reads the same form.
    fn set_endpoint(&mut self, _path: &str) {}
}

/// The target dialect's fold, fed with each event as it is written: the same view the
/// target's stream would decode from the bytes (the common deltas are handed over as views
/// directly; the rest is decoded back from the JSON just written, as the stream reads it).
pub trait TargetFold: Default {
    /// Folds one written event (its `event:` name and its data).
    fn written(&mut self, event: Option<&str>, json: &str);
    /// Folds a run of deltas written one after another to the same place, as one delta of
    /// their joined text (the folds append: the same state as folding each).
    fn delta(&mut self, run: &Run);
    /// The final object folded so far, shaped like the target's non-streaming response.
    fn result(&mut self) -> Out;
}

/// Which text a delta appends to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Field {
    #[default]
    Text,
    Reasoning,
    Refusal,
    Arguments,
}

/// Where a delta goes, as written: the event kind (Messages: the delta type), the block or
/// output index, the field, and what else the target's event names (the Responses item id;
/// the chat chunk's id, model and created).
#[derive(Debug, Clone, Copy)]
struct Place<'a> {
    kind: &'static str,
    index: i64,
    field: Field,
    id: &'a str,
    model: &'a str,
    created: i64,
}

/// The deltas written since the last fold, to one [`Place`].
#[derive(Debug, Default)]
pub struct Run {
    live: bool,
    kind: &'static str,
    index: i64,
    field: Field,
    id: String,
    model: String,
    created: i64,
    text: String,
}

impl Run {
    fn is_at(&self, p: &Place<'_>) -> bool {
        self.live
            && self.kind == p.kind
            && self.index == p.index
            && self.field == p.field
            && self.created == p.created
            && self.id == p.id
            && self.model == p.model
    }
}

/// A writer's output: the bytes owed to the client, and the target's fold of them.
#[derive(Debug, Default)]
struct Written<F> {
    buf: String,
    fold: F,
    /// Deltas written but not folded yet (folded as one when anything else is written, or
    /// when the result is asked for): a delta costs an append, not a fold step.
    run: Run,
}

impl<F: TargetFold> Written<F> {
    /// Appends one event whose data is `json` (one line: our JSON has no raw line breaks,
    /// `push_str` escapes them), and folds it.
    fn event(&mut self, event: Option<&str>, json: &str) {
        self.repeat(event, json);
        self.fold_run();
        self.fold.written(event, json);
    }

    /// Appends one event without decoding it back into the fold: it repeats what the fold
    /// holds or is about to be given directly (a `.done` event restating the deltas, an
    /// object the caller folds from its own JSON).
    fn repeat(&mut self, event: Option<&str>, json: &str) {
        self.open(event);
        self.buf.push_str(json);
        self.close();
    }

    /// Notes a delta just written (its text appended at `place`), to fold with its run.
    fn delta(&mut self, place: Place<'_>, text: &str) {
        if !self.run.is_at(&place) {
            self.fold_run();
            let run = &mut self.run;
            run.live = true;
            run.kind = place.kind;
            run.index = place.index;
            run.field = place.field;
            run.created = place.created;
            run.id.clear();
            run.id.push_str(place.id);
            run.model.clear();
            run.model.push_str(place.model);
        }
        self.run.text.push_str(text);
    }

    /// Folds the pending run of deltas, if any.
    fn fold_run(&mut self) {
        if self.run.live {
            self.fold.delta(&self.run);
            self.run.live = false;
            self.run.text.clear();
        }
    }

    fn result(&mut self) -> Out {
        self.fold_run();
        self.fold.result()
    }

    /// Starts an event whose data the caller appends to `buf` (one line), then [`close`]s.
    fn open(&mut self, event: Option<&str>) {
        if let Some(event) = event {
            self.buf.push_str("event: ");
            self.buf.push_str(event);
            self.buf.push('\n');
        }
        self.buf.push_str("data: ");
    }

    fn close(&mut self) {
        self.buf.push_str("\n\n");
    }
}

/// The [`Writer`] side of a writer struct with `out` and `notes` fields.
macro_rules! writer_impl {
    ($name:ident) => {
        impl Writer for $name {
            fn output(&self) -> &[u8] {
                self.out.buf.as_bytes()
            }

            fn clear(&mut self) {
                self.out.buf.clear();
            }

            fn reserve(&mut self, additional: usize) {
                self.out.buf.reserve(additional);
            }

            fn result(&mut self) -> Out {
                self.out.result()
            }

            fn notes(&self) -> &[String] {
                self.notes.all()
            }
        }
    };
}

crate::dialect::registry::dialects!(crate::dialect::registry::modules);
pub mod check;

/// Declares [`writer`] and [`error_body`] from the dialect list: each dialect's module says
/// its own.
macro_rules! writers {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// A new writer for `target`.
        pub fn writer(target: super::Dialect) -> Box<dyn Writer + Send + Sync> {
            match target {
                $(super::Dialect::$d => $m::new_writer(),)*
            }
        }

        /// Checks one event written in `target` against its rules (`check`).
        pub fn check_event(
            target: super::Dialect,
            inv: &mut check::Invariants,
            event: &str,
            v: &serde_json::Value,
        ) -> Result<(), String> {
            match target {
                $(super::Dialect::$d => $m::check(inv, event, v),)*
            }
        }

        /// The error object of `class` with `message`, as a client of `target` reads it
        /// (`code`: the upstream's own code, for clients that read one).
        pub fn error_body(
            target: super::Dialect,
            status: u16,
            class: super::error::Class,
            message: &str,
            code: Option<&str>,
        ) -> serde_json::Value {
            match target {
                $(super::Dialect::$d => $m::error_body(status, class, message, code),)*
            }
        }
    };
}
crate::dialect::registry::dialects!(writers);

/// Valid JSON `json` without the whitespace between its tokens (strings kept as they are).
pub(super) fn push_compact(out: &mut String, json: &str) {
    let (mut in_string, mut escaped) = (false, false);
    out.extend(json.chars().filter(|&c| {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            true
        } else if c == '"' {
            in_string = true;
            true
        } else {
            !matches!(c, ' ' | '\t' | '\n' | '\r')
        }
    }));
}

fn push_u64(out: &mut String, n: u64) {
    push_num(out, n);
}

/// The message identity kept by a writer.
#[derive(Debug, Default)]
struct Head {
    id: Option<String>,
    model: Option<String>,
    created: Option<i64>,
    /// A chat chunk's opening fields as JSON, up to `choices` (see [`push_head`]); empty until
    /// the first update. Written once per identity, not once per chunk.
    chunk_prefix: String,
}

impl Head {
    fn update(&mut self, meta: Meta<'_>) {
        let mut changed = self.chunk_prefix.is_empty();
        changed |= take_better(&mut self.id, meta.id);
        changed |= take_better(&mut self.model, meta.model);
        changed |= take_better_time(&mut self.created, meta.created);
        if changed {
            let mut j = String::new();
            self.write_chunk_prefix(&mut j);
            self.chunk_prefix = j;
        }
    }

    fn write_chunk_prefix(&self, j: &mut String) {
        j.push_str(r#"{"id":"#);
        push_str(j, self.id.as_deref().unwrap_or(""));
        j.push_str(r#","object":"chat.completion.chunk","created":"#);
        push_num(j, self.created.unwrap_or(0));
        j.push_str(r#","model":"#);
        push_str(j, self.model.as_deref().unwrap_or(""));
    }
}

/// Keys to target indexes, in opening order, and which key is open.
#[derive(Debug)]
struct Blocks<T> {
    all: Vec<(Key, T, bool)>,
    by_key: IntMap<usize>,
    open: Option<usize>,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            all: Vec::new(),
            by_key: IntMap::default(),
            open: None,
        }
    }
}

impl<T> Blocks<T> {
    fn find(&self, key: Key) -> Option<usize> {
        self.by_key.get(key as i64).copied()
    }

    fn push(&mut self, key: Key, value: T) -> usize {
        let at = self.all.len();
        self.all.push((key, value, true));
        self.by_key.insert(key as i64, at);
        self.open = Some(at);
        at
    }

    /// A block of its own that no key names (written whole at once: later deltas of `key`
    /// still go to the block the key names).
    fn push_alone(&mut self, key: Key, value: T) -> usize {
        let at = self.all.len();
        self.all.push((key, value, true));
        at
    }

    fn get(&self, at: usize) -> Option<&T> {
        self.all.get(at).map(|(_, v, _)| v)
    }

    fn get_mut(&mut self, at: usize) -> Option<&mut T> {
        self.all.get_mut(at).map(|(_, v, _)| v)
    }

    fn is_open(&self, at: usize) -> bool {
        self.all.get(at).is_some_and(|(_, _, open)| *open)
    }

    fn mark_closed(&mut self, at: usize) {
        if let Some(entry) = self.all.get_mut(at) {
            entry.2 = false;
        }
        if self.open == Some(at) {
            self.open = None;
        }
    }
}

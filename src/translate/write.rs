//! The target writers: one [`Sink`] per dialect, writing its SSE events into a byte buffer
//! that the caller takes after each feed ([`Writer::take`]).
//!
//! Shared rules (each writer applies them in its own wire form):
//! - the opening events go out with the first call (`meta`, or content before it);
//! - Messages: one content block is open at a time (its protocol is sequential): opening
//!   another closes the open one; a delta for a block already closed is written under its own
//!   index and noted. Responses: items stay open until the reader closes them or the stream
//!   ends (every event names its `output_index`, so interleaved tool calls stay whole);
//! - an upstream error is written in the target's error form after what was already written,
//!   and nothing follows it;
//! - the closing events (stop reason, usage, terminal marker) go out only at `end()`, the
//!   upstream's own terminal marker: a cut upstream gets no made-up ending.

use super::{push_opt, Failure, Key, Kind, Meta, Notes, Sink, Stop, Usage};
use crate::dialect::{chat, messages, responses};
use crate::fold::chat::{ChatFold, ChunkView, ContentView, ToolView};
use crate::fold::messages::{EventView as MessagesView, MessagesFold};
use crate::fold::responses::{EventView as ResponsesView, ResponsesFold};
use crate::fold::{IntMap, Out};
use crate::jsonw::{push_num, push_str};

/// A target writer: a [`Sink`] whose output is taken after each feed.
pub trait Writer: Sink {
    /// The bytes written since the last [`Writer::clear`].
    fn output(&self) -> &[u8];
    fn clear(&mut self);
    /// Makes room for `additional` more bytes of output (one allocation instead of a run of
    /// doublings, each a copy, when a large read is translated at once).
    fn reserve(&mut self, additional: usize);
    fn notes(&self) -> &[String];
    /// The target's fold of everything written: what its stream's `result()` gives.
    fn result(&mut self) -> Out;
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

impl TargetFold for ChatFold {
    fn written(&mut self, _: Option<&str>, json: &str) {
        let Ok(chunk) = chat::decode(json) else {
            return; // `[DONE]`
        };
        if chunk.error.is_some() && chunk.choices.is_empty() {
            return; // an error: reported by the stream, not folded
        }
        chat::views(&chunk, |v, _| self.add(v));
    }

    fn delta(&mut self, run: &Run) {
        let text = run.text.as_str();
        let tool = [ToolView {
            index: run.index,
            arguments: Some(text),
            ..ToolView::default()
        }];
        let mut view = ChunkView {
            id: Some(&run.id),
            created: Some(run.created),
            model: Some(&run.model),
            index: Some(0),
            ..ChunkView::default()
        };
        match run.field {
            Field::Text => view.content = Some(ContentView::Text(text)),
            Field::Reasoning => view.reasoning_content = Some(text),
            Field::Refusal => view.refusal = Some(text),
            Field::Arguments => view.tool_calls = &tool,
        }
        self.add(&view);
    }

    fn result(&mut self) -> Out {
        ChatFold::result(self)
    }
}

impl TargetFold for MessagesFold {
    fn written(&mut self, event: Option<&str>, json: &str) {
        let Ok(ev) = messages::decode(json) else {
            return;
        };
        let kind = ev.kind_of(event.unwrap_or("message").as_bytes());
        if let messages::Read::Fold(v) = ev.read(&kind, json) {
            self.add(&v);
        }
    }

    fn delta(&mut self, run: &Run) {
        let text = Some(run.text.as_str());
        let is = |f: Field| if run.field == f { text } else { None };
        self.add(&MessagesView {
            kind: "content_block_delta",
            index: Some(run.index),
            delta_type: Some(run.kind),
            text: is(Field::Text),
            partial_json: is(Field::Arguments),
            thinking: is(Field::Reasoning),
            ..MessagesView::default()
        });
    }

    fn result(&mut self) -> Out {
        MessagesFold::result(self)
    }
}

impl TargetFold for ResponsesFold {
    fn written(&mut self, event: Option<&str>, json: &str) {
        let Ok(ev) = responses::decode(json) else {
            return;
        };
        let kind = ev.kind_of(event.unwrap_or("message").as_bytes());
        if let responses::Read::Fold(v, _) = ev.read(&kind, json) {
            self.add(&v);
        }
    }

    fn delta(&mut self, run: &Run) {
        self.add(&responses_delta(
            run.kind, run.index, run.field, &run.id, &run.text,
        ));
    }

    fn result(&mut self) -> Out {
        ResponsesFold::result(self)
    }
}

/// The Responses view of deltas to one place (as the target's stream reads them).
fn responses_delta<'a>(
    kind: &'a str,
    index: i64,
    field: Field,
    item_id: &'a str,
    text: &'a str,
) -> ResponsesView<'a> {
    let (content_index, summary_index) = match field {
        Field::Text | Field::Refusal => (Some(0), None),
        Field::Reasoning => (None, Some(0)),
        Field::Arguments => (None, None),
    };
    ResponsesView {
        kind,
        output_index: Some(index),
        content_index,
        summary_index,
        item_id: Some(item_id),
        delta: Some(text),
        ..ResponsesView::default()
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

mod gemini;
pub use gemini::GeminiWriter;

/// A new writer for `target`.
pub fn writer(target: super::Target) -> Box<dyn Writer + Send + Sync> {
    match target {
        super::Target::Chat => Box::<ChatWriter>::default(),
        super::Target::Messages => Box::<MessagesWriter>::default(),
        super::Target::Gemini => Box::<GeminiWriter>::default(),
        super::Target::Responses => Box::new(ResponsesWriter {
            out: Written {
                fold: ResponsesFold::unchecked(),
                ..Written::default()
            },
            ..ResponsesWriter::default()
        }),
    }
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
        // An empty id or model is taken until a real one comes (Together sends `"id": ""`
        // with every chunk: the same again changes nothing).
        let better = |now: &Option<String>, new: Option<&str>| match (now.as_deref(), new) {
            (None, Some(_)) => true,
            (Some(""), Some(new)) => !new.is_empty(),
            _ => false,
        };
        if better(&self.id, meta.id) {
            self.id = meta.id.map(str::to_owned);
            changed = true;
        }
        if better(&self.model, meta.model) {
            self.model = meta.model.map(str::to_owned);
            changed = true;
        }
        if self.created.is_none() && meta.created.is_some() {
            self.created = meta.created;
            changed = true;
        }
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

// --- Messages ----------------------------------------------------------------------------------

/// Messages' `stop_reason` values: a reason from another dialect that is none of them is
/// written as `end_turn` (and noted).
const MESSAGES_STOP_REASONS: &[&str] = &[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MBlock {
    Text,
    Thinking,
    Tool,
}

/// Writes an Anthropic Messages stream.
#[derive(Debug, Default)]
pub struct MessagesWriter {
    out: Written<MessagesFold>,
    head: Head,
    started: bool,
    blocks: Blocks<MBlock>,
    stop: Option<(String, Option<String>)>,
    usage: Usage,
    done: bool,
    notes: Notes,
}

impl MessagesWriter {
    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        let mut j = String::with_capacity(256);
        j.push_str(r#"{"type":"message_start","message":{"id":"#);
        push_str(&mut j, self.head.id.as_deref().unwrap_or(""));
        j.push_str(r#","type":"message","role":"assistant","model":"#);
        push_str(&mut j, self.head.model.as_deref().unwrap_or(""));
        j.push_str(r#","content":[],"stop_reason":null,"stop_sequence":null,"usage":"#);
        // What is known now (a Messages upstream's message_start; 0 otherwise): the real
        // figures follow in message_delta, where the SDKs read them.
        self.push_usage(&mut j, 0);
        j.push_str("}}");
        self.out.event(Some("message_start"), &j);
    }

    fn push_usage(&self, j: &mut String, output: u64) {
        let u = &self.usage;
        j.push_str(r#"{"input_tokens":"#);
        push_u64(j, u.uncached_input());
        j.push_str(r#","cache_creation_input_tokens":"#);
        push_u64(j, u.cache_write.unwrap_or(0));
        j.push_str(r#","cache_read_input_tokens":"#);
        push_u64(j, u.cache_read.unwrap_or(0));
        j.push_str(r#","output_tokens":"#);
        push_u64(j, output);
        j.push('}');
    }

    fn close_open(&mut self) {
        if let Some(at) = self.blocks.open {
            self.stop_block(at);
        }
    }

    fn stop_block(&mut self, at: usize) {
        let mut j = String::from(r#"{"type":"content_block_stop","index":"#);
        push_num(&mut j, at);
        j.push('}');
        self.out.event(Some("content_block_stop"), &j);
        self.blocks.mark_closed(at);
    }

    fn start_block(&mut self, key: Key, block: MBlock, body: &str) -> usize {
        self.start();
        self.close_open();
        let at = self.blocks.push(key, block);
        let mut j = String::from(r#"{"type":"content_block_start","index":"#);
        push_num(&mut j, at);
        j.push_str(r#","content_block":"#);
        j.push_str(body);
        j.push('}');
        self.out.event(Some("content_block_start"), &j);
        at
    }

    fn block_delta(&mut self, at: usize, kind: &'static str, field: &str, text: &str) {
        if !self.blocks.is_open(at) {
            self.notes
                .add("a delta for a block the target had already closed (written under its index)");
        }
        // `kind` and `field` are this writer's own names: nothing to escape.
        let o = &mut self.out;
        o.open(Some("content_block_delta"));
        o.buf.push_str(r#"{"type":"content_block_delta","index":"#);
        push_num(&mut o.buf, at);
        o.buf.push_str(r#","delta":{"type":""#);
        o.buf.push_str(kind);
        o.buf.push_str(r#"",""#);
        o.buf.push_str(field);
        o.buf.push_str(r#"":"#);
        push_str(&mut o.buf, text);
        o.buf.push_str("}}");
        o.close();
        let field = match field {
            "text" => Field::Text,
            "thinking" => Field::Reasoning,
            "partial_json" => Field::Arguments,
            _ => {
                // A signature is set, not appended: folded on its own.
                self.out.fold_run();
                self.out.fold.add(&MessagesView {
                    kind: "content_block_delta",
                    index: Some(at as i64),
                    delta_type: Some(kind),
                    signature: Some(text),
                    ..MessagesView::default()
                });
                return;
            }
        };
        let place = Place {
            kind,
            index: at as i64,
            field,
            id: "",
            model: "",
            created: 0,
        };
        self.out.delta(place, text);
    }
}

impl Sink for MessagesWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done {
            return;
        }
        match kind {
            Kind::Text => {
                self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#);
            }
            Kind::Refusal => {
                self.notes
                    .add("a refusal (Messages has no refusal block: written as text)");
                self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#);
            }
            Kind::Reasoning => {
                self.start_block(
                    key,
                    MBlock::Thinking,
                    r#"{"type":"thinking","thinking":"","signature":""}"#,
                );
            }
            Kind::Tool { id, name } => {
                let mut body = String::from(r#"{"type":"tool_use","id":"#);
                push_str(&mut body, id);
                body.push_str(r#","name":"#);
                push_str(&mut body, name);
                body.push_str(r#","input":{}}"#);
                self.start_block(key, MBlock::Tool, &body);
            }
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let at = match self.blocks.find(key) {
            Some(at) => at,
            None => self.start_block(key, MBlock::Text, r#"{"type":"text","text":""}"#),
        };
        let (kind, field) = match self.blocks.get(at) {
            Some(MBlock::Thinking) => ("thinking_delta", "thinking"),
            Some(MBlock::Tool) => ("input_json_delta", "partial_json"),
            _ => ("text_delta", "text"),
        };
        self.block_delta(at, kind, field, text);
    }

    fn signature(&mut self, key: Key, signature: &str) {
        if self.done {
            return;
        }
        match self.blocks.find(key) {
            Some(at) if self.blocks.get(at) == Some(&MBlock::Thinking) => {
                self.block_delta(at, "signature_delta", "signature", signature)
            }
            _ => self
                .notes
                .add("a reasoning signature outside a thinking block"),
        }
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.done {
            return;
        }
        let mut body = String::from(r#"{"type":"redacted_thinking","data":"#);
        push_str(&mut body, data);
        body.push('}');
        let at = self.start_block(key, MBlock::Thinking, &body);
        self.stop_block(at);
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(at) = self.blocks.find(key).filter(|at| self.blocks.is_open(*at)) {
            self.stop_block(at);
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        let sequence = match stop {
            Stop::StopSequence(s) => s.map(str::to_owned),
            _ => None,
        };
        let reason = match stop {
            Stop::Other(other) if !MESSAGES_STOP_REASONS.contains(&other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (Messages has no such stop_reason; written as \"end_turn\")"
                ));
                "end_turn"
            }
            stop => stop.to_messages(),
        };
        self.stop = Some((reason.to_owned(), sequence));
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"type":"error","error":{"type":"#);
        push_str(&mut j, failure.type_.unwrap_or("api_error"));
        j.push_str(r#","message":"#);
        push_str(&mut j, failure.message);
        j.push_str("}}");
        self.out.event(Some("error"), &j);
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.start();
        self.close_open();
        let tool = self.blocks.all.iter().any(|(_, b, _)| *b == MBlock::Tool);
        let (reason, sequence) = self.stop.clone().unwrap_or_else(|| {
            let reason = if tool { "tool_use" } else { "end_turn" };
            (reason.to_owned(), None)
        });
        let mut j = String::from(r#"{"type":"message_delta","delta":{"stop_reason":"#);
        push_str(&mut j, &reason);
        j.push_str(r#","stop_sequence":"#);
        push_opt(&mut j, sequence.as_deref());
        j.push_str(r#"},"usage":"#);
        self.push_usage(&mut j, self.usage.output.unwrap_or(0));
        j.push('}');
        self.out.event(Some("message_delta"), &j);
        self.out
            .event(Some("message_stop"), r#"{"type":"message_stop"}"#);
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(MessagesWriter);

// --- Chat completions -------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CBlock {
    Text,
    Reasoning,
    Refusal,
    /// A tool call and its `tool_calls[].index`.
    Tool(u32),
}

/// A chunk's opening fields, up to `choices`.
fn push_head(j: &mut String, head: &Head) {
    if head.chunk_prefix.is_empty() {
        head.write_chunk_prefix(j);
    } else {
        j.push_str(&head.chunk_prefix);
    }
}

/// Writes an OpenAI chat completions stream (`chat.completion.chunk` frames, `[DONE]`).
#[derive(Debug, Default)]
pub struct ChatWriter {
    out: Written<ChatFold>,
    head: Head,
    started: bool,
    blocks: Blocks<CBlock>,
    tools: u32,
    stop: Option<String>,
    usage: Option<Usage>,
    done: bool,
    notes: Notes,
}

impl ChatWriter {
    /// Appends one chunk whose choice 0 has `delta` (the JSON object's inside) and
    /// `finish_reason`.
    fn chunk(&mut self, delta: &str, finish: Option<&str>) {
        let j = self.chunk_json(delta, finish);
        self.out.event(None, &j);
    }

    fn chunk_json(&self, delta: &str, finish: Option<&str>) -> String {
        let mut j = String::with_capacity(delta.len() + 160);
        push_head(&mut j, &self.head);
        j.push_str(r#","choices":[{"index":0,"delta":{"#);
        j.push_str(delta);
        j.push_str(r#"},"logprobs":null,"finish_reason":"#);
        push_opt(&mut j, finish);
        j.push_str("}]}");
        j
    }

    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        self.chunk(r#""role":"assistant","content":"""#, None);
    }

    fn block(&mut self, key: Key, kind: Kind<'_>) -> CBlock {
        self.start();
        if let Some(at) = self.blocks.find(key) {
            if let Some(block) = self.blocks.get(at) {
                return *block;
            }
        }
        let block = match kind {
            Kind::Text => CBlock::Text,
            Kind::Reasoning => CBlock::Reasoning,
            Kind::Refusal => CBlock::Refusal,
            Kind::Tool { id, name } => {
                let index = self.tools;
                self.tools += 1;
                let mut d = String::from(r#""tool_calls":[{"index":"#);
                push_num(&mut d, index);
                d.push_str(r#","id":"#);
                push_str(&mut d, id);
                d.push_str(r#","type":"function","function":{"name":"#);
                push_str(&mut d, name);
                d.push_str(r#","arguments":""}}]"#);
                self.chunk(&d, None);
                CBlock::Tool(index)
            }
        };
        self.blocks.push(key, block);
        block
    }
}

impl Sink for ChatWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if !self.done {
            self.block(key, kind);
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let block = self.block(key, Kind::Text);
        let (mut field, mut index) = (Field::Text, 0);
        let o = &mut self.out;
        o.open(None);
        push_head(&mut o.buf, &self.head);
        o.buf.push_str(r#","choices":[{"index":0,"delta":{"#);
        match block {
            CBlock::Text => {
                o.buf.push_str(r#""content":"#);
            }
            CBlock::Reasoning => {
                o.buf.push_str(r#""reasoning_content":"#);
                field = Field::Reasoning;
            }
            CBlock::Refusal => {
                o.buf.push_str(r#""refusal":"#);
                field = Field::Refusal;
            }
            CBlock::Tool(call) => {
                o.buf.push_str(r#""tool_calls":[{"index":"#);
                push_num(&mut o.buf, call);
                o.buf.push_str(r#","function":{"arguments":"#);
                (field, index) = (Field::Arguments, i64::from(call));
            }
        }
        push_str(&mut o.buf, text);
        if let CBlock::Tool(_) = block {
            o.buf.push_str("}}]");
        }
        o.buf
            .push_str(r#"},"logprobs":null,"finish_reason":null}]}"#);
        o.close();
        let head = &self.head;
        let place = Place {
            kind: "",
            index,
            field,
            id: head.id.as_deref().unwrap_or(""),
            model: head.model.as_deref().unwrap_or(""),
            created: head.created.unwrap_or(0),
        };
        self.out.delta(place, text);
    }

    fn signature(&mut self, _: Key, _: &str) {
        self.notes
            .add("reasoning signatures (chat has no place for them)");
    }

    fn redacted(&mut self, _: Key, _: &str) {
        self.notes
            .add("redacted or encrypted reasoning (chat has no place for it)");
    }

    fn close(&mut self, _: Key) {}

    fn stop(&mut self, stop: Stop<'_>) {
        let reason = match stop {
            Stop::Other(other) => {
                self.notes.add(&format!(
                    "stop reason {other:?} (chat has no such finish_reason; written as \"stop\")"
                ));
                "stop"
            }
            stop => stop.to_chat(),
        };
        self.stop = Some(reason.to_owned());
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        let mut j = String::from(r#"{"error":{"message":"#);
        push_str(&mut j, failure.message);
        j.push_str(r#","type":"#);
        push_opt(&mut j, failure.type_);
        j.push_str(r#","code":"#);
        push_opt(&mut j, failure.code);
        j.push_str("}}");
        self.out.event(None, &j);
        self.done = true;
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.start();
        let tool = self.tools > 0;
        let reason = self
            .stop
            .clone()
            .unwrap_or_else(|| if tool { "tool_calls" } else { "stop" }.to_owned());
        self.chunk("", Some(&reason));
        if let Some(u) = self.usage {
            let mut j = String::with_capacity(320);
            push_head(&mut j, &self.head);
            let (input, output) = (u.total_input(), u.output.unwrap_or(0));
            j.push_str(r#","choices":[],"usage":{"prompt_tokens":"#);
            push_u64(&mut j, input);
            j.push_str(r#","completion_tokens":"#);
            push_u64(&mut j, output);
            j.push_str(r#","total_tokens":"#);
            push_u64(&mut j, input + output);
            j.push_str(r#","prompt_tokens_details":{"cached_tokens":"#);
            push_u64(&mut j, u.cache_read.unwrap_or(0));
            j.push_str(r#"},"completion_tokens_details":{"reasoning_tokens":"#);
            push_u64(&mut j, u.reasoning.unwrap_or(0));
            j.push_str("}}}");
            self.out.event(None, &j);
            if u.cache_write.is_some_and(|n| n > 0) {
                self.notes
                    .add("cache_creation_input_tokens (chat usage has no field for them; they are in prompt_tokens)");
            }
        }
        self.out.event(None, "[DONE]");
        self.done = true;
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

writer_impl!(ChatWriter);

// --- Responses ----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RKind {
    Text,
    Refusal,
    Reasoning,
    Tool,
}

impl RKind {
    /// The text this kind of item streams.
    fn field(self) -> Field {
        match self {
            RKind::Text => Field::Text,
            RKind::Refusal => Field::Refusal,
            RKind::Reasoning => Field::Reasoning,
            RKind::Tool => Field::Arguments,
        }
    }

    /// The event that streams this kind of item's text.
    fn delta_event(self) -> &'static str {
        match self {
            RKind::Text => "response.output_text.delta",
            RKind::Refusal => "response.refusal.delta",
            RKind::Reasoning => "response.reasoning_summary_text.delta",
            RKind::Tool => "response.function_call_arguments.delta",
        }
    }
}

/// One output item of a Responses target, kept whole for its `.done` events and the final
/// response.
#[derive(Debug)]
struct RItem {
    kind: RKind,
    id: String,
    /// The text, refusal, summary text or arguments written so far.
    text: String,
    call_id: String,
    name: String,
    /// A reasoning item's `encrypted_content` (a Messages signature or redacted data).
    encrypted: Option<String>,
    /// The wire bytes of this item's delta events up to the delta's text (`event:` line,
    /// `data: {"type":...,"delta":`): the same for every delta, written once.
    delta_head: String,
    /// The item as its `response.output_item.done` wrote it, once written.
    done_json: Option<String>,
}

/// Writes an OpenAI Responses stream (`response.*` events numbered from 0).
#[derive(Debug, Default)]
pub struct ResponsesWriter {
    /// Its fold does not check the full values against the deltas: both are ours.
    out: Written<ResponsesFold>,
    head: Head,
    /// The response id, fixed by the first event (clients check it never changes).
    id: Option<String>,
    started: bool,
    seq: u64,
    items: Blocks<RItem>,
    stop: Option<(Stop<'static>, Option<String>)>,
    usage: Option<Usage>,
    done: bool,
    notes: Notes,
    /// The terminal event's kind and its response object, written but folded only when the
    /// result is asked for (nothing is written after it; a gateway that never asks pays
    /// nothing for reading the whole response back).
    terminal: Option<(String, String)>,
    /// Deltas written to one item but not folded yet: the item's place and where in its
    /// `text` they start. Folded as one delta of that tail when anything else is written or
    /// the result is asked for: the item already holds the text, so a delta is not copied a
    /// third time into a [`Run`] nor compared with one (together ~5% of translating
    /// Messages to Responses).
    pending: Option<(usize, usize)>,
}

impl ResponsesWriter {
    /// Appends one event: `{"type": kind, <fields>, "sequence_number": n}`.
    fn event(&mut self, kind: &str, fields: &str) {
        self.settle();
        let j = self.event_json(kind, fields);
        self.out.event(Some(kind), &j);
    }

    /// Folds the pending deltas and the terminal event, if any were written and not folded
    /// yet.
    fn settle(&mut self) {
        self.fold_pending();
        if let Some((kind, response)) = self.terminal.take() {
            self.out.fold_run();
            self.out.fold.add(&ResponsesView {
                kind: &kind,
                response: Some(&response),
                ..ResponsesView::default()
            });
        }
    }

    /// Folds the deltas written to one item since the last fold, as one delta of their text.
    fn fold_pending(&mut self) {
        let Some((at, start)) = self.pending.take() else {
            return;
        };
        let Some(item) = self.items.get(at) else {
            return;
        };
        let text = item.text.get(start..).unwrap_or_default();
        let (kind, field) = (item.kind.delta_event(), item.kind.field());
        self.out
            .fold
            .add(&responses_delta(kind, at as i64, field, &item.id, text));
    }

    /// The JSON of one event (`sequence_number` taken).
    fn event_json(&mut self, kind: &str, fields: &str) -> String {
        let mut j = String::with_capacity(fields.len() + kind.len() + 48);
        j.push_str(r#"{"type":"#);
        push_str(&mut j, kind);
        if !fields.is_empty() {
            j.push(',');
            j.push_str(fields);
        }
        j.push_str(r#","sequence_number":"#);
        push_u64(&mut j, self.seq);
        j.push('}');
        self.seq += 1;
        j
    }

    /// Writes event `kind` whose `fields` hold one whole object (an item or the response)
    /// from `object_at` to their end, and folds it from that object's own JSON: the event is
    /// not decoded back, which for the item's `.done` and the terminal response (the whole
    /// text again) was the writer's largest cost.
    fn event_with_object(
        &mut self,
        kind: &str,
        output_index: Option<usize>,
        fields: &str,
        object_at: usize,
    ) {
        self.settle();
        let j = self.event_json(kind, fields);
        self.out.repeat(Some(kind), &j);
        let object = fields.get(object_at..).unwrap_or_default();
        let Some(at) = output_index else {
            self.terminal = Some((kind.to_owned(), object.to_owned()));
            return;
        };
        self.out.fold_run();
        self.out.fold.add(&ResponsesView {
            kind,
            output_index: Some(at as i64),
            item: Some(object),
            ..ResponsesView::default()
        });
    }

    fn response_id(&mut self) -> String {
        let head = &self.head;
        self.id
            .get_or_insert_with(|| match head.id.as_deref() {
                Some(id) if !id.is_empty() => id.to_owned(),
                _ => "resp_ssewire".to_owned(),
            })
            .clone()
    }

    /// The response object: `status`, the items written so far, usage when final.
    fn push_response(&mut self, j: &mut String, status: &str, fin: bool) {
        let id = self.response_id();
        j.push_str(r#""response":{"id":"#);
        push_str(j, &id);
        j.push_str(r#","object":"response","created_at":"#);
        push_num(j, self.head.created.unwrap_or(0));
        j.push_str(r#","status":"#);
        push_str(j, status);
        j.push_str(r#","model":"#);
        push_str(j, self.head.model.as_deref().unwrap_or(""));
        j.push_str(r#","output":["#);
        if fin {
            for (i, (_, item, _)) in self.items.all.iter().enumerate() {
                if i > 0 {
                    j.push(',');
                }
                push_item(j, item, "completed");
            }
        }
        j.push(']');
        let incomplete = match (&self.stop, status) {
            (Some((Stop::MaxTokens, _)), "incomplete") => Some("max_output_tokens"),
            (Some((Stop::Filtered, _)), "incomplete") => Some("content_filter"),
            _ => None,
        };
        j.push_str(r#","incomplete_details":"#);
        match incomplete {
            Some(reason) => {
                j.push_str(r#"{"reason":"#);
                push_str(j, reason);
                j.push('}');
            }
            None => j.push_str("null"),
        }
        j.push_str(r#","usage":"#);
        match (fin, self.usage) {
            (true, Some(u)) => {
                let (input, output) = (u.total_input(), u.output.unwrap_or(0));
                j.push_str(r#"{"input_tokens":"#);
                push_u64(j, input);
                j.push_str(r#","input_tokens_details":{"cached_tokens":"#);
                push_u64(j, u.cache_read.unwrap_or(0));
                j.push_str(r#"},"output_tokens":"#);
                push_u64(j, output);
                j.push_str(r#","output_tokens_details":{"reasoning_tokens":"#);
                push_u64(j, u.reasoning.unwrap_or(0));
                j.push_str(r#"},"total_tokens":"#);
                push_u64(j, input + output);
                j.push('}');
            }
            _ => j.push_str("null"),
        }
        j.push('}');
    }

    fn start(&mut self) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        for kind in ["response.created", "response.in_progress"] {
            let mut j = String::with_capacity(256);
            self.push_response(&mut j, "in_progress", false);
            self.event(kind, &j);
        }
    }

    fn item_fields(&self, at: usize) -> String {
        let mut j = String::from(r#""output_index":"#);
        push_num(&mut j, at);
        if let Some(item) = self.items.get(at) {
            j.push_str(r#","item_id":"#);
            push_str(&mut j, &item.id);
        }
        j
    }

    fn open_item(&mut self, key: Key, kind: RKind, call_id: &str, name: &str) -> usize {
        self.start();
        let n = self.items.all.len();
        let id = match kind {
            RKind::Text | RKind::Refusal => format!("msg_{n}"),
            RKind::Reasoning => format!("rs_{n}"),
            RKind::Tool => format!("fc_{n}"),
        };
        let item = RItem {
            kind,
            id,
            text: String::new(),
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            encrypted: None,
            delta_head: String::new(),
            done_json: None,
        };
        let at = self.items.push(key, item);
        let mut j = String::from(r#""output_index":"#);
        push_num(&mut j, at);
        j.push_str(r#","item":"#);
        if let Some(item) = self.items.get(at) {
            push_item(&mut j, item, "in_progress");
        }
        self.event("response.output_item.added", &j);
        let part = match kind {
            RKind::Text => Some((
                "response.content_part.added",
                r#""content_index":0,"part":{"type":"output_text","text":"","annotations":[]}"#,
            )),
            RKind::Refusal => Some((
                "response.content_part.added",
                r#""content_index":0,"part":{"type":"refusal","refusal":""}"#,
            )),
            RKind::Reasoning => Some((
                "response.reasoning_summary_part.added",
                r#""summary_index":0,"part":{"type":"summary_text","text":""}"#,
            )),
            RKind::Tool => None,
        };
        if let Some((event, fields)) = part {
            let j = format!("{},{fields}", self.item_fields(at));
            self.event(event, &j);
        }
        at
    }

    fn close_item(&mut self, at: usize) {
        if !self.items.is_open(at) {
            return;
        }
        let Some(item) = self.items.get(at) else {
            return;
        };
        let base = self.item_fields(at);
        let mut text = String::new();
        push_str(&mut text, &item.text);
        let events: Vec<(&str, String)> = match item.kind {
            RKind::Text => vec![
                (
                    "response.output_text.done",
                    format!(r#"{base},"content_index":0,"text":{text}"#),
                ),
                (
                    "response.content_part.done",
                    format!(
                        r#"{base},"content_index":0,"part":{{"type":"output_text","text":{text},"annotations":[]}}"#
                    ),
                ),
            ],
            RKind::Refusal => vec![
                (
                    "response.refusal.done",
                    format!(r#"{base},"content_index":0,"refusal":{text}"#),
                ),
                (
                    "response.content_part.done",
                    format!(
                        r#"{base},"content_index":0,"part":{{"type":"refusal","refusal":{text}}}"#
                    ),
                ),
            ],
            RKind::Reasoning => vec![
                (
                    "response.reasoning_summary_text.done",
                    format!(r#"{base},"summary_index":0,"text":{text}"#),
                ),
                (
                    "response.reasoning_summary_part.done",
                    format!(
                        r#"{base},"summary_index":0,"part":{{"type":"summary_text","text":{text}}}"#
                    ),
                ),
            ],
            RKind::Tool => vec![(
                "response.function_call_arguments.done",
                format!(r#"{base},"arguments":{text}"#),
            )],
        };
        let mut done = format!(r#""output_index":{at},"item":"#);
        let item_at = done.len();
        push_item_with(&mut done, item, "completed", &text);
        // The text's and the part's `.done` restate the deltas, and the item's `.done` that
        // follows holds all of it: the target's fold reads only the last (the result is the
        // same; a Responses stream of these bytes assembles it so, which the tests check).
        for (event, fields) in events {
            let j = self.event_json(event, &fields);
            self.out.repeat(Some(event), &j);
        }
        self.event_with_object("response.output_item.done", Some(at), &done, item_at);
        if let Some(item) = self.items.get_mut(at) {
            // `response.completed` repeats the item: written once, copied then.
            item.done_json = done.get(item_at..).map(str::to_owned);
        }
        self.items.mark_closed(at);
    }

    fn finish(&mut self, status: &str, kind: &str, failure: Option<Failure<'_>>) {
        self.start();
        for at in 0..self.items.all.len() {
            self.close_item(at);
        }
        let mut j = String::with_capacity(512);
        self.push_response(&mut j, status, true);
        if let Some(f) = failure {
            // `"error":{...}` inside the response object: reopen its closing brace.
            j.pop();
            j.push_str(r#","error":{"code":"#);
            push_str(&mut j, f.code.or(f.type_).unwrap_or("server_error"));
            j.push_str(r#","message":"#);
            push_str(&mut j, f.message);
            j.push_str("}}");
        }
        self.event_with_object(kind, None, &j, r#""response":"#.len());
        self.done = true;
    }
}

/// One output item as the Responses API shows it.
fn push_item(j: &mut String, item: &RItem, status: &str) {
    if let (Some(done), "completed") = (&item.done_json, status) {
        j.push_str(done); // the item as its `.done` event sent it
        return;
    }
    let mut text = String::new();
    push_str(
        &mut text,
        if status == "completed" {
            &item.text
        } else {
            ""
        },
    );
    push_item_with(j, item, status, &text);
}

/// [`push_item`] with the item's text already escaped as a JSON string (`text`).
fn push_item_with(j: &mut String, item: &RItem, status: &str, text: &str) {
    let fin = status == "completed";
    match item.kind {
        RKind::Text | RKind::Refusal => {
            j.push_str(r#"{"type":"message","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","status":"#);
            push_str(j, status);
            j.push_str(r#","role":"assistant","content":["#);
            if fin {
                if item.kind == RKind::Text {
                    j.push_str(&format!(
                        r#"{{"type":"output_text","text":{text},"annotations":[]}}"#
                    ));
                } else {
                    j.push_str(&format!(r#"{{"type":"refusal","refusal":{text}}}"#));
                }
            }
            j.push_str("]}");
        }
        RKind::Reasoning => {
            j.push_str(r#"{"type":"reasoning","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","summary":["#);
            if fin {
                j.push_str(&format!(r#"{{"type":"summary_text","text":{text}}}"#));
            }
            j.push(']');
            if let Some(encrypted) = &item.encrypted {
                j.push_str(r#","encrypted_content":"#);
                push_str(j, encrypted);
            }
            j.push('}');
        }
        RKind::Tool => {
            j.push_str(r#"{"type":"function_call","id":"#);
            push_str(j, &item.id);
            j.push_str(r#","call_id":"#);
            push_str(j, &item.call_id);
            j.push_str(r#","name":"#);
            push_str(j, &item.name);
            j.push_str(r#","arguments":"#);
            j.push_str(text);
            j.push_str(r#","status":"#);
            push_str(j, status);
            j.push('}');
        }
    }
}

impl Sink for ResponsesWriter {
    fn meta(&mut self, meta: Meta<'_>) {
        self.head.update(meta);
        self.start();
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        if self.done {
            return;
        }
        match kind {
            Kind::Text => self.open_item(key, RKind::Text, "", ""),
            Kind::Refusal => self.open_item(key, RKind::Refusal, "", ""),
            Kind::Reasoning => self.open_item(key, RKind::Reasoning, "", ""),
            Kind::Tool { id, name } => self.open_item(key, RKind::Tool, id, name),
        };
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.done {
            return;
        }
        let at = match self.items.find(key) {
            Some(at) => at,
            None => self.open_item(key, RKind::Text, "", ""),
        };
        if !self.items.is_open(at) {
            self.notes
                .add("a delta for an item the target had already closed (dropped)");
            return;
        }
        match self.pending {
            Some((pending, _)) if pending == at => {}
            _ => {
                self.fold_pending();
                let start = self.items.get(at).map_or(0, |item| item.text.len());
                self.pending = Some((at, start));
            }
        }
        let Some(item) = self.items.get_mut(at) else {
            return;
        };
        item.text.push_str(text);
        let kind = item.kind;
        let event = kind.delta_event();
        if item.delta_head.is_empty() {
            let fields = match kind {
                RKind::Text | RKind::Refusal => r#","content_index":0"#,
                RKind::Reasoning => r#","summary_index":0"#,
                RKind::Tool => "",
            };
            let h = &mut item.delta_head;
            h.push_str("event: ");
            h.push_str(event);
            h.push_str("\ndata: ");
            h.push_str(r#"{"type":""#);
            h.push_str(event);
            h.push_str(r#"","output_index":"#);
            push_num(h, at);
            h.push_str(r#","item_id":"#);
            push_str(h, &item.id);
            h.push_str(fields);
            h.push_str(r#","delta":"#);
        }
        let buf = &mut self.out.buf;
        buf.push_str(&item.delta_head);
        push_str(buf, text);
        if kind == RKind::Text {
            buf.push_str(r#","logprobs":[]"#);
        }
        buf.push_str(r#","sequence_number":"#);
        push_num(buf, self.seq);
        buf.push_str("}\n\n");
        self.seq += 1;
    }

    fn signature(&mut self, key: Key, signature: &str) {
        match self.items.find(key).and_then(|at| self.items.get_mut(at)) {
            Some(item) if item.kind == RKind::Reasoning => {
                item.encrypted = Some(signature.to_owned());
            }
            _ => self
                .notes
                .add("a reasoning signature outside a reasoning item"),
        }
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.done {
            return;
        }
        let at = self.open_item(key, RKind::Reasoning, "", "");
        if let Some(item) = self.items.get_mut(at) {
            item.encrypted = Some(data.to_owned());
        }
        self.close_item(at);
    }

    fn close(&mut self, key: Key) {
        if self.done {
            return;
        }
        if let Some(at) = self.items.find(key) {
            self.close_item(at);
        }
    }

    fn stop(&mut self, stop: Stop<'_>) {
        let owned = match stop {
            Stop::EndTurn => Stop::EndTurn,
            Stop::StopSequence(_) => Stop::StopSequence(None),
            Stop::MaxTokens => Stop::MaxTokens,
            Stop::ToolUse => Stop::ToolUse,
            Stop::Filtered => Stop::Filtered,
            Stop::Other(_) => Stop::Other(""),
        };
        let other = match stop {
            Stop::Other(o) => {
                self.notes.add(&format!(
                    "stop reason {o:?} (Responses has no such status; written as completed)"
                ));
                Some(o.to_owned())
            }
            _ => None,
        };
        self.stop = Some((owned, other));
    }

    fn usage(&mut self, usage: &Usage) {
        self.usage.get_or_insert_with(Usage::default).merge(usage);
    }

    fn error(&mut self, failure: Failure<'_>) {
        if self.done {
            return;
        }
        self.finish("failed", "response.failed", Some(failure));
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        match self.stop.as_ref().map(|(s, _)| *s) {
            Some(Stop::MaxTokens | Stop::Filtered) => {
                self.finish("incomplete", "response.incomplete", None)
            }
            _ => self.finish("completed", "response.completed", None),
        }
    }

    fn drop_note(&mut self, what: &str) {
        self.notes.add(what);
    }
}

impl Writer for ResponsesWriter {
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
        self.settle();
        self.out.result()
    }

    fn notes(&self) -> &[String] {
        self.notes.all()
    }
}

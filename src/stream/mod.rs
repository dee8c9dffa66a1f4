//! The stream machine, in pure Rust: bytes of one dialect's response body in; its documents
//! decoded, checked and folded; what the caller asked for out through a [`Sink`].
//!
//! One type drives every reader of a dialect body: the Python stream classes (`crate::py`,
//! whose sink builds item objects, or none for `consume()`), `crate::translate::Standalone` (a whole
//! translation in pure Rust) and the fuzz targets (whose sink, [`Quiet`], builds nothing). Per read:
//!
//! - [`Stream::run`] takes the common frames in one pass: while the framer is between events,
//!   a frame at the start of the bytes that has the shape of the dialect's template (the last
//!   text frame's, `crate::dialect::template`) is read straight from them; anything else goes
//!   to the framer (`crate::framing::body`: SSE, a JSON error body, a Gemini JSON array).
//! - [`Stream::convert`] routes each frame by its event type (decode, error report,
//!   pass-through) and splits its data into documents; `[DONE]`, malformed JSON (one report per
//!   frame) and `event: error` frames are handled here, each document by the dialect
//!   ([`Reader`], one module per dialect: [`chat`], [`messages`], [`responses`], [`gemini`]).
//! - [`State`] keeps what every dialect shares: whether the terminal marker came, the first
//!   error (owned, [`Failure`]), whether any document was the dialect's own (else a
//!   `wrong_dialect` error), and what taps the stream ([`Tap`]: a translation).
//!
//! Carried across reads: the body state, [`State`] and the reader (its fold and template).

use std::borrow::Cow;

use crate::dialect::template::{Pieces, RawHole, Shape, MAX_RAW};
use crate::dialect::{split_docs, Belongs, Doc, ErrorInfo, ErrorKind};
use crate::framing::body::{Body, End};
use crate::framing::sse::{RawEvent, TooLarge};
use crate::framing::Framing;
use crate::text::{fix_lone_surrogates, lossy_cow};

mod sink;
#[allow(unused_imports)]
pub use sink::*;

mod tap;
pub mod timing;
#[allow(unused_imports)]
pub use tap::*;

mod fast;
#[allow(unused_imports)]
pub use fast::*;

crate::dialect::registry::dialects!(crate::dialect::registry::modules, pub);
mod eventstream;

/// An input of this many bytes or more is framed whole, without the template fast path (a
/// binding may release its interpreter lock meanwhile: [`Sink::detached`]).
pub const DETACH_THRESHOLD: usize = 1 << 20;

/// One frame of a dialect stream: its event type and its data as text.
pub struct Frame<'a> {
    /// The event type as sent (an SSE `event:` line, a Bedrock message's `:event-type`); `None`
    /// when there is none.
    pub event: Option<Cow<'a, [u8]>>,
    /// The event's data as text (an SSE event's `data:` lines joined, a Bedrock message's
    /// payload); invalid UTF-8 is replaced.
    pub data: Cow<'a, str>,
}

impl Frame<'_> {
    /// The event type, `message` when none was sent (as SSE has it).
    pub fn event_type(&self) -> &[u8] {
        self.event.as_deref().unwrap_or(b"message")
    }
}

fn to_frame(ev: RawEvent<'_>) -> Frame<'_> {
    Frame {
        event: ev.event,
        data: fix_lone_surrogates(lossy_cow(ev.data)),
    }
}

/// How a dialect treats a frame, by its event type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Decode the data as the dialect's documents.
    Decode,
    /// The frame is an error report (`event: error`).
    Error,
    /// Hand the frame on as a plain event.
    Pass,
}

/// What every dialect stream keeps besides its reader.
#[derive(Default)]
pub struct State {
    /// Whether the terminal marker was seen.
    pub done: bool,
    /// The first error (server-reported, or the stream's own: wrong dialect, cut short).
    pub error: Option<Failure>,
    /// Whether a document of the dialect's own shape came.
    own: bool,
    /// The start of the first document that was not the dialect's own (nor an error), while
    /// no own document came.
    foreign: Option<String>,
    /// A translation reading this stream: it is handed every view the fold gets, every
    /// error, `[DONE]`, the end.
    pub tap: Option<Box<dyn Tap>>,
    /// How many frames the template fast path took (read without a decode).
    pub fast: u64,
    /// How many frames carried output (text, reasoning or a tool call's piece).
    pub outputs: u64,
    /// Set by a fast-path hit that carried no output (a block's start or stop): the frame is
    /// not counted in `outputs`.
    pub quiet_hit: bool,
}

impl State {
    /// Counts a frame the fast path took.
    fn fast_hit(&mut self) {
        self.fast += 1;
        if !std::mem::take(&mut self.quiet_hit) {
            self.outputs += 1;
        }
    }
}

impl State {
    /// Hands `up` to the translation reading this stream, if any.
    #[inline]
    pub fn tap(&mut self, up: Upstream<'_>) {
        if let Some(t) = &mut self.tap {
            t.read(up);
        }
    }

    /// A server-reported error in `frame` (or in the body, `frame == None`): tapped, recorded
    /// when it is the first, reported.
    pub fn report<S: Sink>(
        &mut self,
        sink: &mut S,
        info: &ErrorInfo<'_>,
        event: Option<&[u8]>,
        data: &str,
    ) -> Result<(), S::Error> {
        self.tap(Upstream::Error(info));
        let first = self.error.is_none();
        if first {
            self.error = Some(Failure::of(info));
        }
        sink.report(Report {
            kind: ReportKind::Stream { first },
            info,
            event,
            data,
        })
    }

    /// A frame (or an event stream chunk) whose document did not decode: tapped (a
    /// translation notes it) and reported as a `malformed_json` item; the stream goes on.
    pub fn malformed<S: Sink>(
        &mut self,
        sink: &mut S,
        message: String,
        event: Option<&[u8]>,
        data: &str,
    ) -> Result<(), S::Error> {
        self.tap(Upstream::Malformed);
        let info = ErrorKind::MalformedJson.info(Cow::Owned(message), None);
        sink.report(Report {
            kind: ReportKind::Malformed,
            info: &info,
            event,
            data,
        })
    }

    /// [`report`](Self::report) for an error carried by `frame`.
    pub fn report_in<S: Sink>(
        &mut self,
        sink: &mut S,
        info: &ErrorInfo<'_>,
        frame: &Frame<'_>,
    ) -> Result<(), S::Error> {
        self.report(sink, info, frame.event.as_deref(), &frame.data)
    }

    /// Notes whether a decoded document is the dialect's own (a frame of a shape known ahead
    /// is: `Belongs::Own`).
    pub fn saw(&mut self, belongs: Belongs, doc: &str) {
        match belongs {
            Belongs::Own => {
                self.own = true;
                self.foreign = None;
            }
            Belongs::Foreign if !self.own && self.foreign.is_none() => {
                self.foreign = Some(doc.chars().take(60).collect());
            }
            _ => {}
        }
    }

    /// Records a `wrong_dialect` error when documents came but none was the dialect's own (a
    /// chat body read as Messages, ...): checked when the terminal marker arrives and at the
    /// end, unless an error was already recorded.
    fn check_dialect(&mut self, dialect: &str) {
        let Some(first) = self.foreign.as_deref().filter(|_| !self.own) else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let message = format!(
            "no event of this stream is {dialect} event (the first starts: {first}): the \
             body is another dialect's; read it with the matching stream class or \
             dialect=\"auto\""
        );
        let failure = Failure::own(message, ErrorKind::WrongDialect);
        // A translation writes it as the target's error: the client must not take a body it
        // could not read for an empty, successful answer.
        if let Some(t) = &mut self.tap {
            t.read(Upstream::Error(&failure.info()));
        }
        self.error = Some(failure);
    }

    /// Records the incomplete-stream error unless the stream is done or already failed.
    fn incomplete(&mut self, cut_off: bool, marker: &str) {
        if self.done || self.error.is_some() {
            return;
        }
        let message = if cut_off {
            format!("the stream ended before {marker}; its last frame was cut off")
        } else {
            format!("the stream ended before {marker}")
        };
        self.error = Some(Failure::own(message, ErrorKind::IncompleteStream));
    }
}

/// A decoded document, handed to the dialect.
pub struct Value<'f, 'x, T> {
    /// The frame the document came in.
    pub frame: &'x Frame<'f>,
    /// The document's JSON text (the frame's data, or one document of it).
    pub doc: &'f str,
    /// The decoded document.
    pub value: T,
}

impl<T> Value<'_, '_, T> {
    /// Whether the document is the frame's whole data (only then can a template be made).
    pub fn whole_frame(&self) -> bool {
        self.doc.len() == self.frame.data.len()
    }
}

/// What a dialect decodes and how, whatever the caller wants of it.
pub trait Dialect: Default {
    /// One decoded document, borrowing the frame text.
    type Doc<'f>;

    /// The dialect's name in messages ("a chat completions stream", ...).
    const NAME: &'static str;

    /// What ends a complete stream, for the incomplete-stream message ("[DONE]", ...).
    const MARKER: &'static str;

    /// The dialect this reader reads (its row of the registry).
    const REGISTRY: crate::dialect::Dialect;

    /// Whether a decoded document (of a frame with event type `event`) is the dialect's own.
    fn belongs(doc: &Self::Doc<'_>, event: &[u8]) -> Belongs;

    /// Whether a decoded document carries output: a piece of text, reasoning or a tool call
    /// (what `timing` counts; every template hit is one).
    fn is_output(doc: &Self::Doc<'_>, event: &[u8]) -> bool;

    /// How a frame is treated, by its event type: every named event is decoded (the dialects
    /// whose events are named), but `error`, an error report.
    fn route(event: &[u8]) -> Route {
        match event {
            b"error" => Route::Error,
            _ => Route::Decode,
        }
    }

    /// Decodes one document.
    fn decode(doc: &str) -> Result<Self::Doc<'_>, serde_json::Error>;

    /// Whether the dialect has a frame template (whole frames may then be read without the
    /// framer, [`Stream::run`]).
    fn has_template(&self) -> bool;

    /// The arguments of tool call `index` (the dialect's own index; `choice` for chat) read so
    /// far, `None` if there is no such call.
    fn arguments(&self, _choice: i64, _index: i64) -> Option<&dyn crate::json::partial::SoFar> {
        None
    }

    /// Notes about input the fold had to interpret or could not hold as sent.
    fn warnings(&mut self) -> Vec<String>;

    /// The final object folded so far, shaped like the provider's non-streaming response.
    fn result(&mut self) -> crate::fold::Out;

    /// [`Dialect::result`] written to `b` (a fold that writes its result to a builder
    /// directly does so; the others' tree is handed over).
    fn result_in<B: crate::json::build::Build>(&mut self, b: &mut B) -> Result<B::Value, B::Error>
    where
        Self: Sized,
    {
        let out = self.result();
        b.out(&out)
    }

    /// The usage of [`Dialect::result`] (its registry's usage key), `None` when it has none; a
    /// fold that can build it alone does so without building the rest (`s.usage`, read by
    /// every meter at each stream's end).
    fn result_usage(&mut self) -> Option<crate::fold::Out> {
        let key = Self::REGISTRY.spec().result_keys.1;
        self.result().key(key).filter(|u| !u.is_null())
    }
}

/// A dialect reading for sink `S`: each document folded, tapped and, when `S` wants items,
/// handed to the sink's items trait of the dialect.
pub trait Reader<S: Sink>: Dialect {
    /// Folds one decoded document and hands its items to the sink.
    fn value<'f>(
        &mut self,
        state: &mut State,
        value: Value<'f, '_, Self::Doc<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error>;

    /// The frame-template fast path: when the frame (framed, or whole at the start of the
    /// wire's bytes) has the shape of the last text frame, handles it without a decode and
    /// returns the bytes it took (0 for a framed frame); else `None`, and the frame is framed
    /// and decoded in full.
    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error>;
}

/// One dialect body being read: the framer, the shared state and the dialect's reader.
pub struct Stream<R> {
    body: Body,
    /// What every dialect stream keeps: the end marker, the first error, the tap, the counts.
    pub state: State,
    /// The dialect's reader (its fold and frame template).
    pub reader: R,
    /// Bedrock's event stream framing in front of the dialect, when asked for
    /// ([`Stream::read_eventstream`]).
    eventstream: Option<Box<crate::framing::eventstream::Decoder>>,
    /// When bytes and output arrived.
    pub timing: timing::Timing,
}

impl<R: Dialect> Stream<R> {
    /// A stream of dialect `R` that refuses events larger than `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        let framing = R::REGISTRY.spec().framing;
        Stream {
            body: framing.body(max_event_size),
            state: State::default(),
            reader: R::default(),
            eventstream: (framing == Framing::EventStream)
                .then(|| Box::new(crate::framing::eventstream::Decoder::new(max_event_size))),
            timing: timing::Timing::default(),
        }
    }

    /// The largest event the stream accepts, in bytes.
    pub fn max_event_size(&self) -> usize {
        self.body.max_event_size()
    }

    /// Frames, decodes and folds `bytes`, handing `sink` what it asked for.
    ///
    /// The common frames take one pass: while the framer is between events, a frame at the
    /// start of the bytes that has the shape of the dialect's template is read straight from
    /// them, without the framer, the UTF-8 check of its data or a decode (see
    /// `Shape::fill_raw`: the framer would read it the same way). Anything else goes to the
    /// framer one event at a time (up to the next blank line), so the fast path can take over
    /// as soon as a template is made. An input of [`DETACH_THRESHOLD`] bytes or more is framed whole
    /// through [`Sink::detached`] instead (no fast path then).
    pub fn run<S: Sink>(&mut self, bytes: &[u8], sink: &mut S) -> Result<Option<TooLarge>, S::Error>
    where
        R: Reader<S>,
    {
        // One clock read per call: when these bytes reached the stream.
        let now = std::time::Instant::now();
        let result = self.run_bytes(bytes, sink);
        self.timing.read(now, bytes.len(), self.state.outputs);
        result
    }

    fn run_bytes<S: Sink>(
        &mut self,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<Option<TooLarge>, S::Error>
    where
        R: Reader<S>,
    {
        if let Some(decoder) = &self.eventstream {
            match bytes.first() {
                // A body that cannot be an event stream (a JSON error from the service, an
                // HTML page from a proxy) is read as such, by the framer below.
                Some(&first) if decoder.fresh() && !decoder.can_start_with(first) => {
                    self.eventstream = None;
                }
                _ => {
                    self.run_eventstream(bytes, sink)?;
                    return Ok(None);
                }
            }
        }
        if bytes.len() >= DETACH_THRESHOLD {
            let body = &mut self.body;
            let (frames, too_large) = sink.detached(move || frame(body, bytes));
            self.convert(&frames, false, sink)?;
            self.take_json_body(sink)?;
            return Ok(too_large);
        }
        let mut too_large = None;
        let mut rest = bytes;
        // A frame longer than the event size limit is left to the framer, which refuses it.
        let limit = self.body.max_event_size();
        while !rest.is_empty() {
            // Whether the next frame has been tried on the fast path as it was sent: the same
            // frame out of the framer is not tried again.
            let mut tried = false;
            while self.body.idle() && self.reader.has_template() {
                if self.state.done {
                    self.state.check_dialect(R::NAME);
                }
                sink.next_frame();
                let window = rest.get(..limit).unwrap_or(rest);
                match self
                    .reader
                    .shortcut(&mut self.state, Subject::Raw(window), sink)?
                {
                    Some(len) if len > 0 => {
                        self.state.fast_hit();
                        rest = rest.get(len..).unwrap_or_default();
                    }
                    _ => {
                        tried = true;
                        break;
                    }
                }
            }
            if rest.is_empty() {
                break;
            }
            // One event at a time, so the fast path can take over at the next frame (handing
            // the framer 4 KiB at once before a template existed measured 7-17% slower on
            // chat streams of 50 and 1,000 events).
            let lines = self.body.is_lines();
            let end = if lines {
                line_end(rest)
            } else {
                blank_line_end(rest, 0)
            };
            let (now, later) = rest.split_at(end);
            let (frames, tl) = frame(&mut self.body, now);
            too_large = too_large.or(tl);
            // Tried only if the fast path saw the whole frame (one at the size limit did not).
            let tried = tried
                && now.len() <= limit
                && matches!(&frames[..], [f] if spelled_as_template(f, now, lines));
            self.convert_frames(&frames, false, tried, sink)?;
            rest = later;
        }
        self.take_json_body(sink)?;
        Ok(too_large)
    }

    /// Ends the body: decodes a last frame never closed by a blank line (lenient), reports a
    /// JSON body or a body that is not an event stream, and records an `incomplete_stream`
    /// error if the terminal marker never came (unless an error was already recorded).
    pub fn finish<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error>
    where
        R: Reader<S>,
    {
        let now = std::time::Instant::now();
        let result = self.finish_input(sink);
        self.timing.finish(now, self.state.outputs);
        result
    }

    fn finish_input<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error>
    where
        R: Reader<S>,
    {
        self.finish_eventstream(sink)?;
        let End {
            last_event,
            mut cut_off,
            json,
            not_sse,
        } = self.body.finish();
        if let Some(text) = json {
            self.json_body(&text, sink)?;
        }
        if let Some(text) = not_sse {
            self.not_event_stream(&text, sink)?;
        }
        if let Some(frame) = last_event.map(to_frame) {
            cut_off = self.convert(&[frame], true, sink)?;
        }
        self.state.check_dialect(R::NAME);
        self.state.tap(Upstream::End);
        self.state.incomplete(cut_off, R::MARKER);
        Ok(())
    }

    /// A complete JSON body (a pre-stream error passed through), if one arrived.
    fn take_json_body<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        match self.body.take_json() {
            Some(text) => self.json_body(&text, sink),
            None => Ok(()),
        }
    }

    fn json_body<S: Sink>(&mut self, text: &str, sink: &mut S) -> Result<(), S::Error> {
        sink.next_frame();
        self.state
            .report(sink, &ErrorInfo::from_body(text), None, text)
    }

    /// A body that was not an event stream at all (an HTML error page, a plain-text 404): a
    /// stream error with code `not_event_stream` whose `raw` keeps the body's start under
    /// `"body"`, not a stream cut short.
    fn not_event_stream<S: Sink>(&mut self, text: &str, sink: &mut S) -> Result<(), S::Error> {
        let first = text.trim_start().lines().next().unwrap_or_default();
        let shown: String = first.chars().take(80).collect();
        let more = if shown.len() < first.len() { "..." } else { "" };
        let message = format!(
            "the response body is not an event stream (no SSE field or comment line; it \
             starts: {shown:?}{more}); check the HTTP status before reading"
        );
        let raw = serde_json::json!({ "body": text }).to_string();
        let info = ErrorKind::NotEventStream.info(Cow::Owned(message), Some(&raw));
        sink.next_frame();
        self.state.report(sink, &info, None, text)
    }

    /// Routes frames by event type; the dialect decodes and folds their documents; the cases
    /// every dialect shares (`[DONE]`, malformed JSON, `event: error`, pass-through) are
    /// handled here. With `at_end` (the lenient flush of [`finish`](Self::finish)), a frame
    /// that does not decode is taken as cut off rather than malformed; the return value tells.
    pub fn convert<S: Sink>(
        &mut self,
        frames: &[Frame<'_>],
        at_end: bool,
        sink: &mut S,
    ) -> Result<bool, S::Error>
    where
        R: Reader<S>,
    {
        self.convert_frames(frames, at_end, false, sink)
    }

    /// [`convert`](Self::convert); with `tried`, the first frame was already tried on the fast
    /// path as raw bytes, and is not tried again (a frame the raw bytes did not fit does not
    /// fit framed either: the framer reads a template's bytes as the template does).
    fn convert_frames<S: Sink>(
        &mut self,
        frames: &[Frame<'_>],
        at_end: bool,
        tried: bool,
        sink: &mut S,
    ) -> Result<bool, S::Error>
    where
        R: Reader<S>,
    {
        let mut cut = false;
        let (state, reader) = (&mut self.state, &mut self.reader);
        for (i, frame) in frames.iter().enumerate() {
            // Checked frame by frame (not once per call), so the outcome depends on the
            // stream's order only, never on how the reads were cut.
            if state.done {
                state.check_dialect(R::NAME);
            }
            sink.next_frame();
            match R::route(frame.event_type()) {
                Route::Decode => {
                    if !(tried && i == 0)
                        && reader
                            .shortcut(state, Subject::Frame(frame), sink)?
                            .is_some()
                    {
                        state.fast_hit();
                        continue; // same shape as the last text frame: no decode
                    }
                    let mut result = Ok(());
                    // One malformed report per frame: the documents of a frame that holds
                    // many (one per line) are each decoded, but only the first that fails is
                    // reported, so a frame of N bad documents costs one report, not N.
                    let mut malformed = false;
                    split_docs(&frame.data, R::decode, |doc| {
                        if result.is_err() {
                            return;
                        }
                        result = match doc {
                            Doc::Done if !R::REGISTRY.spec().framing.has_done_marker() => state
                                .malformed(
                                    sink,
                                    "malformed JSON in frame: [DONE] is no record of this framing"
                                        .to_owned(),
                                    frame.event.as_deref(),
                                    &frame.data,
                                ),
                            Doc::Done => {
                                state.done = true;
                                // Before the marker reaches a translation: a body of another
                                // dialect is an error there, not a clean end.
                                state.check_dialect(R::NAME);
                                state.tap(Upstream::Done);
                                Ok(())
                            }
                            Doc::Value(doc, value) => {
                                state.saw(R::belongs(&value, frame.event_type()), doc);
                                if R::is_output(&value, frame.event_type()) {
                                    state.outputs += 1;
                                }
                                reader.value(state, Value { frame, doc, value }, sink)
                            }
                            Doc::Malformed(_) if at_end => {
                                cut = true;
                                Ok(())
                            }
                            Doc::Malformed(_) if malformed => Ok(()),
                            Doc::Malformed(message) => {
                                malformed = true;
                                state.malformed(
                                    sink,
                                    format!("malformed JSON in frame: {message}"),
                                    frame.event.as_deref(),
                                    &frame.data,
                                )
                            }
                        };
                    });
                    result?;
                }
                Route::Error => {
                    // One error, read out of the first JSON document the frame holds (a
                    // `[DONE]` line in it also counts), or its whole text as the message.
                    let (info, done) = crate::dialect::frame_error(&frame.data);
                    if done {
                        state.done = true;
                    }
                    state.report_in(sink, &info, frame)?;
                }
                Route::Pass => {
                    // A named event the dialect does not decode (another dialect's).
                    state.saw(Belongs::Foreign, &frame.data);
                    if sink.items() {
                        sink.pass(frame)?;
                    }
                }
            }
        }
        if state.done {
            state.check_dialect(R::NAME);
        }
        Ok(cut)
    }
}

/// Whether `frame` was sent as `bytes` in the one spelling the fast path reads raw
/// (`Shape::fill_raw_all`): `event: <type>` LF (when it has a type), `data: ` + its data, then
/// LF LF or CRLF CRLF. The raw bytes of such a frame fit a template exactly when the frame
/// does; a frame spelled otherwise (no space after a colon, an `id:` line, CR line ends, data
/// on many lines) may fit framed only. A JSON line (`line`) is its data, then LF or CRLF.
/// (Only a shortcut: a frame tried twice or once folds the same.)
fn spelled_as_template(frame: &Frame<'_>, bytes: &[u8], line: bool) -> bool {
    if line {
        // A JSON line: its data (no CR in it: the fast path stops at one, a shape made from
        // such a line is never read raw) and the line end, as `Shape::as_line` reads it.
        return frame.event.is_none()
            && memchr::memchr(b'\r', frame.data.as_bytes()).is_none()
            && matches!(
                bytes.strip_prefix(frame.data.as_bytes()),
                Some(b"\n" | b"\r\n")
            );
    }
    let data_at = match frame.event.as_deref() {
        Some(event) => {
            let line = [&b"event: "[..], event, b"\n"];
            let mut at = 0;
            for part in line {
                if bytes.get(at..at + part.len()) != Some(part) {
                    return false;
                }
                at += part.len();
            }
            at
        }
        None => 0,
    };
    let end = data_at + b"data: ".len() + frame.data.len();
    bytes
        .get(data_at..)
        .is_some_and(|b| b.starts_with(b"data: "))
        && matches!(bytes.get(end..), Some(b"\n\n" | b"\r\n\r\n"))
}

/// Frames `bytes` into text frames.
fn frame<'a>(body: &mut Body, bytes: &'a [u8]) -> (Vec<Frame<'a>>, Option<TooLarge>) {
    let mut raw = Vec::new();
    let too_large = body.feed(bytes, &mut raw);
    (raw.into_iter().map(to_frame).collect(), too_large)
}

/// Where the first line of `bytes` ends (after its LF; all of them when none), with the
/// empty lines (LF, CRLF) right after it: a run of them goes to the framer in one piece. Apart
/// from the read loop: inlined, it cost each SSE frame there a few instructions.
#[inline(never)]
fn line_end(bytes: &[u8]) -> usize {
    let Some(at) = memchr::memchr(b'\n', bytes) else {
        return bytes.len();
    };
    let mut end = at + 1;
    loop {
        match bytes.get(end..) {
            Some([b'\n', ..]) => end += 1,
            Some([b'\r', b'\n', ..]) => end += 2,
            _ => return end,
        }
    }
}

/// Where the first blank line (LF LF, or LF CR LF) that ends at or after `from` ends in
/// `bytes`, with the blank lines right after it (the whole length when there is none). A
/// searcher would cost more to build than the two or three line ends of a frame cost to visit.
fn blank_line_end(bytes: &[u8], from: usize) -> usize {
    let start = from.saturating_sub(1).min(bytes.len());
    let tail = bytes.get(start..).unwrap_or_default();
    // An empty line after a line end: LF, or CRLF (Gemini's frames end so).
    let empty = |at: usize| match bytes.get(at..) {
        Some([b'\n', ..]) => Some(1),
        Some([b'\r', b'\n', ..]) => Some(2),
        _ => None,
    };
    let Some((at, len)) = memchr::memchr_iter(b'\n', tail)
        .find_map(|at| empty(start + at + 1).map(|len| (start + at, len)))
    else {
        return bytes.len();
    };
    let mut end = at + 1 + len;
    // A run of empty lines goes to the framer in one piece, not a line at a time.
    while let Some(len) = empty(end) {
        end += len;
    }
    end
}

#[cfg(test)]
mod tests;

/// `json` (compact JSON, or a piece of it) as Python's `json.dumps` spells it: a space after
/// each `:` and `,` outside strings.
pub(crate) fn spaced(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 4);
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        out.push(c);
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ':' || c == ',' {
            out.push(' ');
        }
    }
    out
}

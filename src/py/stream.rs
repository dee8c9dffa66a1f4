//! What the three dialect streams share on the Python side: the body (sniffer + framer), the
//! `done` / `error` state, `ErrorItem`, and turning an `ErrorInfo` into a `StreamError`.
//!
//! Carried across feeds: the body state, whether the terminal marker was seen, the first error
//! recorded, and the reused event-name strings. Per feed: frame in pure Rust (with the GIL
//! released for a large immutable input), then the dialect decodes and converts.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::errors;
use super::json;
use super::sse::{EventStrings, DETACH_THRESHOLD};
use super::strings::decode;
use crate::dialect::body::{Body, End};
use crate::dialect::template::{RawHole, Shape, MAX_RAW};
use crate::dialect::{split_docs, Belongs, Doc, ErrorInfo};
use crate::sse::{RawEvent, TooLarge};
use crate::text::{fix_lone_surrogates, lossy_cow};
use crate::translate::{Translation, Upstream};

/// A frame that carried an error: `kind` is `"stream_error"` (the server reported one; the
/// stream records the same error on `.error`) or `"malformed_json"` (the frame did not decode;
/// the next frames still do).
#[pyclass(frozen, module = "ssewire", name = "ErrorItem")]
pub struct ErrorItem {
    #[pyo3(get)]
    kind: Py<PyString>,
    #[pyo3(get)]
    error: Py<PyAny>,
    /// The event type of the frame (`"message"` for plain `data:` frames).
    #[pyo3(get)]
    event: Py<PyString>,
    /// The frame's data as received.
    #[pyo3(get)]
    data: Py<PyString>,
}

impl ErrorItem {
    /// Whether the server reported it (`kind == "stream_error"`), not a malformed frame.
    pub fn is_stream_error(&self, py: Python<'_>) -> bool {
        self.kind
            .bind(py)
            .to_cow()
            .is_ok_and(|k| k == "stream_error")
    }
}

/// What every accumulator does with items that are not its dialect's own: an `ErrorItem` is
/// recorded (the first server-reported one is `error`), an `Event` (a named event the
/// dialect does not decode) is ignored, anything else is a `TypeError` naming what was
/// expected.
#[derive(Default)]
pub struct AccumulatorErrors {
    pub error: Option<Py<PyAny>>,
    pub errors: Vec<Py<PyAny>>,
}

impl AccumulatorErrors {
    /// Visits the Python objects held (for the garbage collector).
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        traverse_errors(self.error.as_ref(), &self.errors, visit)
    }

    pub fn other(&mut self, item: &Bound<'_, PyAny>, expected: &str) -> PyResult<()> {
        let py = item.py();
        if let Ok(error_item) = item.cast::<ErrorItem>() {
            let e = error_item.get();
            if self.error.is_none() && e.is_stream_error(py) {
                self.error = Some(e.error.clone_ref(py));
            }
            self.errors.push(item.clone().unbind());
            return Ok(());
        }
        if item.is_instance_of::<super::sse::Event>() {
            return Ok(());
        }
        let type_name = item
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "expected an item of {expected} (or an ErrorItem / Event), not {type_name}"
        )))
    }

    pub fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    pub fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.errors.iter().map(|e| e.clone_ref(py)))
    }
}

#[pymethods]
impl ErrorItem {
    /// The garbage collector's view of the error it holds (a raised error's traceback can lead
    /// back here: a cycle only the collector can break).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.error)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ErrorItem(kind={}, error={})",
            self.kind.bind(py).repr()?,
            self.error.bind(py).repr()?
        ))
    }
}

/// One frame of a dialect stream: its event type and its data as text.
pub struct Frame<'a> {
    pub event: Option<Cow<'a, [u8]>>,
    pub data: Cow<'a, str>,
}

impl Frame<'_> {
    pub fn event_type(&self) -> &[u8] {
        self.event.as_deref().unwrap_or(b"message")
    }
}

/// The state every dialect stream has.
pub struct StreamCore {
    body: Body,
    pub done: bool,
    pub error: Option<Py<PyAny>>,
    /// Every `ErrorItem` of the stream so far, in arrival order (`s.errors`).
    pub errors: Vec<Py<PyAny>>,
    names: EventStrings,
    /// The `data` string of the frame being converted, shared by all its `ErrorItem`s (one
    /// copy per frame, not one per item: what one frame's items hold stays linear in its
    /// size). Keyed by the text's address and length; cleared before each frame.
    frame_data: Option<(usize, usize, Py<PyString>)>,
    stream_error: Py<PyString>,
    malformed_json: Py<PyString>,
    /// Whether a document of the dialect's own shape came.
    own: bool,
    /// The start of the first document that was not the dialect's own (nor an error), while
    /// no own document came.
    foreign: Option<String>,
    /// A translation reading this stream (`ssewire.Translator`'s source stream, while the
    /// translator feeds it): it is handed every view the fold gets, every error, `[DONE]`.
    pub tap: Option<Box<Translation>>,
}

impl StreamCore {
    pub fn new(py: Python<'_>, max_event_size: usize) -> Self {
        StreamCore {
            body: Body::new(max_event_size),
            done: false,
            error: None,
            errors: Vec::new(),
            names: EventStrings::new(py),
            frame_data: None,
            stream_error: PyString::intern(py, "stream_error").unbind(),
            malformed_json: PyString::intern(py, "malformed_json").unbind(),
            own: false,
            foreign: None,
            tap: None,
        }
    }

    /// Hands `up` to the translation reading this stream, if any.
    #[inline]
    pub fn tap(&mut self, up: Upstream<'_>) {
        if let Some(t) = &mut self.tap {
            t.read(up);
        }
    }

    pub fn max_event_size(&self) -> usize {
        self.body.max_event_size()
    }

    /// Reads a JSON-array body element by element (see `Body::read_json_arrays`).
    pub fn read_json_arrays(&mut self) {
        self.body.read_json_arrays();
    }

    /// Frames `bytes` into text frames (pure Rust; GIL released for a large input, which is
    /// immutable or our own copy).
    pub fn frame<'a>(
        &mut self,
        py: Python<'_>,
        bytes: &'a [u8],
    ) -> (Vec<Frame<'a>>, Option<TooLarge>) {
        let body = &mut self.body;
        let mut run = move || {
            let mut raw = Vec::new();
            let too_large = body.feed(bytes, &mut raw);
            (raw.into_iter().map(to_frame).collect(), too_large)
        };
        if bytes.len() >= DETACH_THRESHOLD {
            py.detach(run)
        } else {
            run()
        }
    }

    /// A complete JSON body (a pre-stream error passed through), if one arrived.
    pub fn take_json_body(
        &mut self,
        py: Python<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        if let Some(text) = self.body.take_json() {
            self.json_body(py, &text, out)?;
        }
        Ok(())
    }

    fn json_body(
        &mut self,
        py: Python<'_>,
        text: &str,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        self.body_error(py, &ErrorInfo::from_body(text), text, out)
    }

    /// An error about the body as a whole (not one frame's): recorded, and its item emitted.
    fn body_error(
        &mut self,
        py: Python<'_>,
        info: &ErrorInfo<'_>,
        text: &str,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        self.frame_data = None;
        let name = self.names.event_type(py, None);
        let item = self.stream_error_item(py, info, name, text)?;
        emit(out, item)
    }

    /// Ends the body: returns the unclosed last frame (lenient flush) for the dialect to
    /// decode, and handles a JSON body.
    pub fn end(
        &mut self,
        py: Python<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<(Option<Frame<'static>>, bool)> {
        let End {
            last_event,
            cut_off,
            json,
            not_sse,
        } = self.body.finish();
        if let Some(text) = json {
            self.json_body(py, &text, out)?;
        }
        if let Some(text) = not_sse {
            self.not_event_stream(py, &text, out)?;
        }
        Ok((last_event.map(to_frame), cut_off))
    }

    /// A body that was not an event stream at all (an HTML error page, a plain-text 404): a
    /// stream error with code `not_event_stream` whose `raw` keeps the body's start under
    /// `"body"`, not a stream cut short.
    fn not_event_stream(
        &mut self,
        py: Python<'_>,
        text: &str,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        let first = text.trim_start().lines().next().unwrap_or_default();
        let shown: String = first.chars().take(80).collect();
        let more = if shown.len() < first.len() { "..." } else { "" };
        let message = format!(
            "the response body is not an event stream (no SSE field or comment line; it \
             starts: {shown:?}{more}); check the HTTP status before reading"
        );
        let raw = serde_json::json!({ "body": text }).to_string();
        let info = ErrorInfo {
            message: Cow::Owned(message),
            type_: Some("\"invalid_response\""),
            code: Some("\"not_event_stream\""),
            raw: Some(&raw),
        };
        self.body_error(py, &info, text, out)
    }

    /// Notes whether a decoded document is the dialect's own.
    fn saw(&mut self, belongs: Belongs, doc: &str) {
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
    /// chat body read by `MessagesStream`, ...): checked when the terminal marker arrives and
    /// at `finish()`, unless an error was already recorded.
    pub fn check_dialect(&mut self, py: Python<'_>, dialect: &str) -> PyResult<()> {
        let Some(first) = self.foreign.as_deref().filter(|_| !self.own) else {
            return Ok(());
        };
        if self.error.is_some() {
            return Ok(());
        }
        let message = format!(
            "no event of this stream is {dialect} event (the first starts: {first}): the \
             body is another dialect's; read it with the matching stream class or \
             dialect=\"auto\""
        );
        let code = PyString::new(py, "wrong_dialect").into_any().unbind();
        let type_ = PyString::new(py, "invalid_response").into_any().unbind();
        self.error = Some(errors::stream_error(
            py,
            &message,
            Some(type_),
            Some(code),
            None,
        )?);
        Ok(())
    }

    /// Records the incomplete-stream error unless the stream is done or already failed.
    pub fn incomplete(&mut self, py: Python<'_>, cut_off: bool, marker: &str) -> PyResult<()> {
        if self.done || self.error.is_some() {
            return Ok(());
        }
        let message = if cut_off {
            format!("the stream ended before {marker}; its last frame was cut off")
        } else {
            format!("the stream ended before {marker}")
        };
        let code = PyString::new(py, "incomplete_stream").into_any().unbind();
        let err = errors::stream_error(py, &message, Some(code.clone_ref(py)), Some(code), None)?;
        self.error = Some(err);
        Ok(())
    }

    /// The event type of a frame as a (reused) Python string.
    pub fn event_name(&mut self, py: Python<'_>, frame: &Frame<'_>) -> Py<PyString> {
        self.names.event_type(py, frame.event.as_deref())
    }

    /// A plain `Event` for a frame the dialect does not decode (unknown named events).
    pub fn passthrough(&mut self, py: Python<'_>, frame: &Frame<'_>) -> PyResult<Py<PyAny>> {
        let raw = RawEvent {
            event: frame.event.as_deref().map(Cow::Borrowed),
            data: Cow::Borrowed(frame.data.as_bytes()),
            id: None,
            retry: None,
        };
        Ok(Py::new(py, self.names.event(py, &raw))?.into_any())
    }

    /// An `ErrorItem` for a server-reported error; the first one is recorded on `.error`, and
    /// every one on `.errors`.
    pub fn stream_error_item(
        &mut self,
        py: Python<'_>,
        info: &ErrorInfo<'_>,
        event: Py<PyString>,
        data: &str,
    ) -> PyResult<Py<PyAny>> {
        self.tap(Upstream::Error(info));
        let error = stream_error(py, info)?;
        if self.error.is_none() {
            self.error = Some(error.clone_ref(py));
        }
        let item = ErrorItem {
            kind: self.stream_error.clone_ref(py),
            error,
            event,
            data: self.data_string(py, data),
        };
        let item = Py::new(py, item)?.into_any();
        self.errors.push(item.clone_ref(py));
        Ok(item)
    }

    /// An `ErrorItem` for a frame whose JSON did not decode (`.error` is not touched; the item
    /// is recorded on `.errors`).
    pub fn malformed_item(
        &mut self,
        py: Python<'_>,
        message: &str,
        event: Py<PyString>,
        data: &str,
    ) -> PyResult<Py<PyAny>> {
        let kind = self.malformed_json.clone_ref(py);
        let error = errors::stream_error(
            py,
            &format!("malformed JSON in frame: {message}"),
            Some(kind.clone_ref(py).into_any()),
            None,
            None,
        )?;
        let item = ErrorItem {
            kind,
            error,
            event,
            data: self.data_string(py, data),
        };
        let item = Py::new(py, item)?.into_any();
        self.errors.push(item.clone_ref(py));
        Ok(item)
    }

    /// The Python string of `data` (the text of the frame being converted), built once per
    /// frame.
    fn data_string(&mut self, py: Python<'_>, data: &str) -> Py<PyString> {
        let key = (data.as_ptr() as usize, data.len());
        if let Some((ptr, len, s)) = &self.frame_data {
            if (*ptr, *len) == key {
                return s.clone_ref(py);
            }
        }
        let s = decode(py, data.as_bytes()).unbind();
        self.frame_data = Some((key.0, key.1, s.clone_ref(py)));
        s
    }

    /// Raises `EventTooLargeError` carrying `out` when the limit was hit, else returns `out`.
    pub fn result<'py>(
        py: Python<'py>,
        out: Bound<'py, PyList>,
        too_large: Option<TooLarge>,
    ) -> PyResult<Bound<'py, PyList>> {
        match too_large {
            Some(err) => Err(errors::too_large(py, err, out)),
            None => Ok(out),
        }
    }

    pub fn error_ref(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    /// Visits the Python objects held (for the garbage collector): the errors, which a user
    /// may raise (`raise stream.error`), so that their tracebacks lead back to the stream.
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        traverse_errors(self.error.as_ref(), &self.errors, visit)
    }
}

/// Shows the garbage collector an error and a list of error items (a stream's or an
/// accumulator's).
fn traverse_errors(
    error: Option<&Py<PyAny>>,
    errors: &[Py<PyAny>],
    visit: &pyo3::PyVisit<'_>,
) -> Result<(), pyo3::PyTraverseError> {
    if let Some(e) = error {
        visit.call(e)?;
    }
    for e in errors {
        visit.call(e)?;
    }
    Ok(())
}

/// How a dialect treats a frame, by its event type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Decode the data as the dialect's documents.
    Decode,
    /// The frame is an error report (`event: error`).
    Error,
    /// Hand the frame on as a plain `Event`.
    Pass,
}

impl StreamCore {
    /// An `event: error` frame: one error, read out of the first JSON document it holds (a
    /// `[DONE]` line in it also counts), or its whole text as the message when it holds no
    /// JSON. One item per frame, however many documents it holds, so what the frame's items
    /// hold stays within a constant times its size.
    fn error_frame(
        &mut self,
        py: Python<'_>,
        frame: &Frame<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        let (info, done) = crate::dialect::frame_error(&frame.data);
        if done {
            self.done = true;
        }
        let name = self.event_name(py, frame);
        let item = self.stream_error_item(py, &info, name, &frame.data)?;
        emit(out, item)
    }
}

/// Appends `item` to `out` when the caller wants items (`feed`), drops it otherwise
/// (`consume`).
pub fn emit<T>(out: Option<&Bound<'_, PyList>>, item: Py<T>) -> PyResult<()> {
    match out {
        Some(out) => out.append(item.into_any()),
        None => Ok(()),
    }
}

/// A decoded document, handed to the dialect to turn into items.
pub struct Value<'f, 'x, T> {
    pub frame: &'x Frame<'f>,
    pub doc: &'f str,
    pub value: T,
}

/// What a dialect stream decodes and how: the per-stream state of one dialect, including its
/// fold (the final object assembled as the documents arrive, API.md section 5).
pub trait Dialect: Default {
    /// One decoded document, borrowing the frame text.
    type Doc<'f>;

    /// The dialect's name in messages ("a chat completions stream", ...).
    const NAME: &'static str;

    /// Whether a body that is a JSON array is read element by element, one document each
    /// (Gemini without `?alt=sse`), rather than as one JSON (error) body.
    const JSON_ARRAYS: bool = false;

    /// Whether a decoded document (of a frame with event type `event`) is the dialect's own.
    fn belongs(doc: &Self::Doc<'_>, event: &[u8]) -> Belongs;

    /// How a frame is treated, by its event type.
    fn route(event: &[u8]) -> Route;

    /// Decodes one document (pure Rust).
    fn decode(doc: &str) -> Result<Self::Doc<'_>, serde_json::Error>;

    /// Folds one decoded document and, when `out` is given (`feed`), appends its items to it.
    /// With `out == None` (`consume`) no Python object is built for it.
    fn value<'f>(
        &mut self,
        core: &mut StreamCore,
        py: Python<'_>,
        value: Value<'f, '_, Self::Doc<'f>>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()>;

    /// The frame-template fast path (see [`Template`]): when the frame (framed, or whole at
    /// the start of the wire's bytes) has the shape of the last text frame, handles it without
    /// a decode (folds its text and, with `out`, appends its item) and returns the bytes it
    /// took (0 for a framed frame); else `None`, and the frame is framed and decoded in full.
    fn shortcut(
        &mut self,
        py: Python<'_>,
        core: &mut StreamCore,
        frame: Subject<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<usize>>;

    /// Whether the dialect has a frame template (whole frames may then be read without the
    /// framer, [`StreamCore::run`]).
    fn has_template(&self) -> bool;

    /// The arguments of tool call `index` (the dialect's own index; `choice` for chat) read so
    /// far, `None` if there is no such call (`partial_arguments` then raises `KeyError`).
    fn arguments(&self, _choice: i64, _index: i64) -> Option<&crate::partial::PartialJson> {
        None
    }

    /// Notes about input the fold had to interpret or could not hold as sent (tool input that
    /// is not JSON, ...): the same list the dialect's accumulator gives.
    fn warnings(&mut self) -> Vec<String>;

    /// The final object folded so far, shaped like the provider's non-streaming response (a
    /// new dict on every call).
    fn result<'py>(&mut self, core: &StreamCore, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
}

impl StreamCore {
    /// Frames, decodes and folds `bytes` for dialect `D`, appending items to `out` when given.
    ///
    /// The common frames take one pass: while the framer is between events, a frame at the
    /// start of the bytes that has the shape of the dialect's template (the last text frame's)
    /// is read straight from them, without the framer, the UTF-8 check of its data or a
    /// decode (see `Shape::fill_raw`: the framer would read it the same way). Anything else
    /// goes to the framer: one event at a time (up to the next blank line) while there is a
    /// template, else about [`SLOW_PATH_RUN`] bytes at a time, so the fast path can take over
    /// as soon as a template is made. An input of [`DETACH_THRESHOLD`] bytes or more is framed
    /// whole with the GIL released instead, as documented (no fast path then).
    pub fn run<D: Dialect>(
        &mut self,
        py: Python<'_>,
        dialect: &mut D,
        bytes: &[u8],
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<TooLarge>> {
        if bytes.len() >= DETACH_THRESHOLD {
            let (frames, too_large) = self.frame(py, bytes);
            self.convert(py, dialect, &frames, false, out)?;
            self.take_json_body(py, out)?;
            return Ok(too_large);
        }
        let mut too_large = None;
        let mut rest = bytes;
        // A frame longer than the event size limit is left to the framer, which refuses it.
        let limit = self.body.max_event_size();
        while !rest.is_empty() {
            while self.body.idle() && dialect.has_template() {
                if self.done {
                    self.check_dialect(py, D::NAME)?;
                }
                self.frame_data = None;
                let window = rest.get(..limit).unwrap_or(rest);
                match dialect.shortcut(py, self, Subject::Raw(window), out)? {
                    Some(len) if len > 0 => rest = rest.get(len..).unwrap_or_default(),
                    _ => break,
                }
            }
            if rest.is_empty() {
                break;
            }
            let from = if dialect.has_template() {
                0
            } else {
                SLOW_PATH_RUN
            };
            let (now, later) = rest.split_at(blank_line_end(rest, from));
            let (frames, tl) = self.frame(py, now);
            too_large = too_large.or(tl);
            self.convert(py, dialect, &frames, false, out)?;
            rest = later;
        }
        self.take_json_body(py, out)?;
        Ok(too_large)
    }

    /// Turns frames into items appended to `out` (`feed`), or only folds them (`consume`,
    /// `out == None`). Each frame is routed by its event type; the dialect decodes its
    /// documents (pure Rust) and folds each; the cases every dialect shares (`[DONE]`,
    /// malformed JSON, `event: error`, pass-through) are handled here. With `at_end` (the
    /// lenient flush of `finish()`), a frame that does not decode is taken as cut off rather
    /// than malformed; the return value tells.
    pub fn convert<D: Dialect>(
        &mut self,
        py: Python<'_>,
        dialect: &mut D,
        frames: &[Frame<'_>],
        at_end: bool,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<bool> {
        let mut cut = false;
        for frame in frames {
            // Checked frame by frame (not once per call), so the outcome depends on the
            // stream's order only, never on how the reads were cut.
            if self.done {
                self.check_dialect(py, D::NAME)?;
            }
            self.frame_data = None;
            match D::route(frame.event_type()) {
                Route::Decode => {
                    if dialect
                        .shortcut(py, self, Subject::Frame(frame), out)?
                        .is_some()
                    {
                        continue; // same shape as the last text frame: no decode
                    }
                    let mut result = Ok(());
                    // One malformed item per frame: the documents of a frame that holds many
                    // (one per line) are each decoded, but only the first that fails is
                    // reported, so a frame of N bad documents costs one item, not N.
                    let mut malformed = false;
                    split_docs(&frame.data, D::decode, |doc| {
                        if result.is_err() {
                            return;
                        }
                        result = match doc {
                            Doc::Done => {
                                self.done = true;
                                self.tap(Upstream::Done);
                                Ok(())
                            }
                            Doc::Value(doc, value) => {
                                self.saw(D::belongs(&value, frame.event_type()), doc);
                                dialect.value(self, py, Value { frame, doc, value }, out)
                            }
                            Doc::Malformed(_) if at_end => {
                                cut = true;
                                Ok(())
                            }
                            Doc::Malformed(_) if malformed => Ok(()),
                            Doc::Malformed(message) => {
                                malformed = true;
                                self.tap(Upstream::Malformed);
                                let name = self.event_name(py, frame);
                                self.malformed_item(py, &message, name, &frame.data)
                                    .and_then(|item| emit(out, item))
                            }
                        };
                    });
                    result?;
                }
                Route::Error => self.error_frame(py, frame, out)?,
                Route::Pass => {
                    // A named event the dialect does not decode (another dialect's).
                    self.saw(Belongs::Foreign, &frame.data);
                    if let Some(out) = out {
                        out.append(self.passthrough(py, frame)?)?;
                    }
                }
            }
        }
        if self.done {
            self.check_dialect(py, D::NAME)?;
        }
        Ok(cut)
    }
}

/// The frame-template fast path (see `crate::dialect::template`): the shape of the last text
/// frame, and the item it decoded to, to be copied with the new string on a hit.
pub struct Template<I> {
    shape: Shape,
    /// Which string of the item the hole is (the dialect's own numbering).
    pub hole: u8,
    /// The item the template frame decoded to (`None` when it was consumed without items).
    pub item: Option<Py<I>>,
}

impl<I> Template<I> {
    /// A template for `frame`, whose item `item` holds `text` borrowed from the frame's data;
    /// `padding` are other strings of the frame (borrowed too) that no item holds.
    pub fn new(
        frame: &Frame<'_>,
        text: &str,
        padding: &[&str],
        hole: u8,
        item: Option<Py<I>>,
    ) -> Option<Self> {
        Self::with_raws(frame, text, padding, &[], hole, item)
    }

    /// [`new`](Self::new), with raw holes (vendor values; see `Shape::with_raws`).
    pub fn with_raws(
        frame: &Frame<'_>,
        text: &str,
        padding: &[&str],
        raws: &[RawHole<'_>],
        hole: u8,
        item: Option<Py<I>>,
    ) -> Option<Self> {
        let shape = Shape::with_raws(frame.event.as_deref(), &frame.data, text, padding, raws)?;
        Some(Template { shape, hole, item })
    }

    /// Adds an integer hole (see `Shape::with_number`); `None` if it cannot be placed.
    pub fn with_number(self, key: &str, value: i64) -> Option<Self> {
        let shape = self.shape.with_number(key, value)?;
        Some(Template { shape, ..self })
    }
}

/// An item class that a template can copy with new values in its holes.
pub trait Refill:
    pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync + Sized
{
    /// A copy of `self` with the string hole `hole` set to `text` (and the number hole to
    /// `number`, for a template that has one).
    fn refill(
        &self,
        py: Python<'_>,
        hole: u8,
        text: &str,
        number: Option<i64>,
    ) -> PyResult<Py<Self>>;
}

/// What a template is tried on: a framed frame, or the wire's bytes where a frame starts
/// (the framer between events).
#[derive(Clone, Copy)]
pub enum Subject<'d> {
    Frame(&'d Frame<'d>),
    Raw(&'d [u8]),
}

/// A frame that fits a template: the values of its holes, and its length in the wire's bytes
/// (0 for a framed frame).
pub struct Hit<'d> {
    pub text: Cow<'d, str>,
    pub number: Option<i64>,
    pub len: usize,
    /// The raw holes' values, by slot.
    pub raws: [&'d str; MAX_RAW],
}

impl<I: Refill> Template<I> {
    /// When `subject` fits this template: appends its item to `out` (when items are wanted)
    /// and returns the values of the holes, for the dialect to fold. `None` when it does not
    /// fit, or when an item is wanted but the template was made by `consume()` (no item to
    /// copy): the frame is then framed and decoded in full.
    pub fn hit<'d>(
        &self,
        py: Python<'_>,
        subject: Subject<'d>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<Hit<'d>>> {
        if out.is_some() && self.item.is_none() {
            return Ok(None);
        }
        let found = match subject {
            Subject::Frame(frame) => self
                .shape
                .fill_all(frame.event.as_deref(), &frame.data)
                .map(|f| (0, f)),
            Subject::Raw(bytes) => self.shape.fill_raw_all(bytes),
        }
        .map(|(len, f)| Hit {
            text: f.text,
            number: f.number,
            len,
            raws: f.raws,
        });
        let Some(hit) = found else {
            return Ok(None);
        };
        if let (Some(out), Some(item)) = (out, &self.item) {
            out.append(item.get().refill(py, self.hole, &hit.text, hit.number)?)?;
        }
        Ok(Some(hit))
    }
}

/// How many bytes [`StreamCore::run`] hands the framer at once before a template exists.
const SLOW_PATH_RUN: usize = 4096;

/// Where the first blank line (LF LF, or LF CR LF) that ends at or after `from` ends in `bytes`, with the
/// blank lines right after it (the whole length when there is none). A searcher would cost
/// more to build than the two or three line ends of a frame cost to visit.
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

fn to_frame(ev: RawEvent<'_>) -> Frame<'_> {
    Frame {
        event: ev.event,
        data: fix_lone_surrogates(lossy_cow(ev.data)),
    }
}

/// Builds the `StreamError` for an error read out of the wire.
pub fn stream_error(py: Python<'_>, info: &ErrorInfo<'_>) -> PyResult<Py<PyAny>> {
    let value = |raw: Option<&str>| -> PyResult<Option<Py<PyAny>>> {
        raw.map(|t| json::to_py(py, t).map(Bound::unbind))
            .transpose()
    };
    let raw: Option<Bound<'_, PyDict>> = match info.raw {
        Some(doc) => Some(json::to_py_dict(py, doc)?),
        None => None,
    };
    errors::stream_error(
        py,
        &info.message,
        value(info.type_)?,
        value(info.code)?,
        raw,
    )
}

/// A dialect stream as Rust drives it (`ssewire.Translator` feeds its source stream this way,
/// with a translation on `core().tap`).
pub trait Source {
    fn core(&mut self) -> &mut StreamCore;
    /// Frames, decodes and folds `bytes` (items appended to `out` when given).
    fn run_bytes<'py>(
        &mut self,
        py: Python<'py>,
        bytes: &[u8],
        out: Option<&Bound<'py, PyList>>,
    ) -> PyResult<Option<TooLarge>>;
    /// Ends the input as `finish()` does (items appended to `out` when given).
    fn finish_into<'py>(
        &mut self,
        py: Python<'py>,
        out: Option<&Bound<'py, PyList>>,
    ) -> PyResult<()>;
}

/// Declares a dialect stream class: the struct (a `StreamCore` plus the dialect's per-stream
/// state, a [`Dialect`]) and its Python methods, the same for every dialect.
macro_rules! dialect_stream {
    ($name:ident, $pyname:literal, $strings:ty, $marker:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(subclass, module = "ssewire", name = $pyname)]
        pub struct $name {
            core: $crate::py::stream::StreamCore,
            strings: $strings,
            partial: $crate::py::partial::Partials,
        }

        impl $name {
            /// Frames, decodes and folds `data`; appends the items to `out` when given.
            fn run<'py>(
                &mut self,
                py: Python<'py>,
                data: &Bound<'py, PyAny>,
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<Option<$crate::sse::TooLarge>> {
                let input = $crate::py::input::Input::extract(data)?;
                $crate::py::stream::Source::run_bytes(self, py, input.as_bytes(), out)
            }
        }

        impl $crate::py::stream::Source for $name {
            fn core(&mut self) -> &mut $crate::py::stream::StreamCore {
                &mut self.core
            }

            fn run_bytes<'py>(
                &mut self,
                py: Python<'py>,
                bytes: &[u8],
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<Option<$crate::sse::TooLarge>> {
                self.core.run(py, &mut self.strings, bytes, out)
            }

            fn finish_into<'py>(
                &mut self,
                py: Python<'py>,
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<()> {
                let (last, mut cut_off) = self.core.end(py, out)?;
                if let Some(frame) = last {
                    cut_off = self
                        .core
                        .convert(py, &mut self.strings, &[frame], true, out)?;
                }
                self.core.tap($crate::translate::Upstream::End);
                self.core
                    .check_dialect(py, <$strings as $crate::py::stream::Dialect>::NAME)?;
                self.core.incomplete(py, cut_off, $marker)
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = (*, max_event_size = $crate::sse::DEFAULT_MAX_EVENT_SIZE))]
            fn new(py: Python<'_>, max_event_size: usize) -> Self {
                let mut core = $crate::py::stream::StreamCore::new(py, max_event_size);
                if <$strings as $crate::py::stream::Dialect>::JSON_ARRAYS {
                    core.read_json_arrays();
                }
                $name {
                    core,
                    strings: <$strings>::default(),
                    partial: Default::default(),
                }
            }

            /// The garbage collector's view: the errors the stream holds (a raised
            /// `stream.error` has a traceback that can lead back to the stream).
            fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
                self.core.traverse(&visit)
            }

            /// Parses `data` (bytes, bytearray or memoryview); returns the decoded items.
            fn feed<'py>(
                slf: &Bound<'py, Self>,
                data: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                let out = pyo3::types::PyList::empty(py);
                let too_large = this.run(py, data, Some(&out))?;
                $crate::py::stream::StreamCore::result(py, out, too_large)
            }

            /// Frames, decodes and folds `data` exactly as `feed()` does, and records errors,
            /// but builds no item objects; returns `None`. `feed()` and `consume()` may be
            /// mixed on one stream.
            fn consume<'py>(slf: &Bound<'py, Self>, data: &Bound<'py, PyAny>) -> PyResult<()> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                match this.run(py, data, None)? {
                    Some(err) => Err($crate::py::errors::too_large(
                        py,
                        err,
                        pyo3::types::PyList::empty(py),
                    )),
                    None => Ok(()),
                }
            }

            /// Ends the input: decodes a last frame never closed by a blank line, and records
            /// an `incomplete_stream` error if the terminal marker never came (unless an error
            /// was already recorded).
            fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                let out = pyo3::types::PyList::empty(py);
                $crate::py::stream::Source::finish_into(&mut *this, py, Some(&out))?;
                Ok(out)
            }

            /// The final object folded from everything fed so far (partial before the
            /// terminal marker), shaped like the provider's non-streaming response; a new dict
            /// on each call. Each call builds the whole object, O(the result): for a live view
            /// read the items, or `partial_arguments()` for a tool call's arguments, rather
            /// than calling this after every delta.
            fn result<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                let mut guard = $crate::py::errors::exclusive(slf, "stream")?;
                let this = &mut *guard;
                $crate::py::stream::Dialect::result(&mut this.strings, &this.core, slf.py())
            }

            /// The arguments of tool call `index` so far, as `PartialJSON.value` gives them
            /// (the same containers from call to call, updated in place). `index` is the
            /// dialect's own: chat `tool_calls[].index` within choice `choice`, Messages content
            /// block index, Responses `output_index`. `KeyError` if there is no such call.
            #[pyo3(signature = (index, choice = 0))]
            fn partial_arguments(
                slf: &Bound<'_, Self>,
                index: i64,
                choice: i64,
            ) -> PyResult<Py<PyAny>> {
                let py = slf.py();
                let mut guard = $crate::py::errors::exclusive(slf, "stream")?;
                let this = &mut *guard;
                let source = $crate::py::stream::Dialect::arguments(&this.strings, choice, index)
                    .ok_or_else(|| {
                    pyo3::exceptions::PyKeyError::new_err(format!(
                        "no tool call with index {index} in choice {choice}"
                    ))
                })?;
                this.partial.read(py, (choice, index), source)
            }

            /// Notes about input the fold had to interpret or could not hold as sent (tool
            /// input that is not valid JSON, a delta for a block that never started, ...): the
            /// same list the dialect's accumulator gives (a new list on each read).
            #[getter]
            fn warnings(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                Ok($crate::py::stream::Dialect::warnings(&mut this.strings))
            }

            /// Whether the terminal marker was seen.
            #[getter]
            fn done(slf: &Bound<'_, Self>) -> PyResult<bool> {
                Ok($crate::py::errors::shared(slf, "stream")?.core.done)
            }

            /// The first error the stream carried (or the incomplete-stream error after
            /// `finish()`), `None` if none.
            #[getter]
            fn error(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
                Ok($crate::py::errors::shared(slf, "stream")?
                    .core
                    .error_ref(slf.py()))
            }

            /// Every `ErrorItem` of the stream so far, in arrival order (a new list).
            #[getter]
            fn errors<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let this = $crate::py::errors::shared(slf, "stream")?;
                pyo3::types::PyList::new(py, this.core.errors.iter().map(|e| e.clone_ref(py)))
            }

            /// The limit on the size of one event, in bytes.
            #[getter]
            fn max_event_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
                Ok($crate::py::errors::shared(slf, "stream")?
                    .core
                    .max_event_size())
            }
        }
    };
}
pub(crate) use dialect_stream;

/// Declares an accumulator class: a dialect's fold (the same one its stream runs) fed with that
/// dialect's items, which it reads natively (`$fold_item`), plus what every accumulator does
/// with `ErrorItem`s, `Event`s and foreign objects ([`AccumulatorErrors`]). `$extra` adds the
/// dialect's own getters (its notes). Calls on an accumulator another call is using raise
/// `ConcurrentUseError`, as on the streams.
macro_rules! accumulator_class {
    ($name:ident, $pyname:literal, $fold:ty, $item:ty, $expected:literal, $fold_item:path,
     $doc:literal, { $($extra:tt)* }) => {
        #[doc = $doc]
        #[pyclass(module = "ssewire", name = $pyname)]
        pub struct $name {
            fold: $fold,
            errors: $crate::py::stream::AccumulatorErrors,
        }

        impl $name {
            fn add_one(&mut self, item: &Bound<'_, PyAny>) -> PyResult<()> {
                match item.cast::<$item>() {
                    Ok(event) => {
                        $fold_item(item.py(), &mut self.fold, event.get());
                        Ok(())
                    }
                    Err(_) => self.errors.other(item, $expected),
                }
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new() -> Self {
                $name {
                    fold: <$fold>::default(),
                    errors: $crate::py::stream::AccumulatorErrors::default(),
                }
            }

            /// The garbage collector's view of the errors held.
            fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
                self.errors.traverse(&visit)
            }

            /// Adds one item of the dialect, an `ErrorItem` or an `Event` (the last is
            /// ignored); `TypeError` for anything else.
            fn add(slf: &Bound<'_, Self>, item: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::py::errors::exclusive(slf, "accumulator")?.add_one(item)
            }

            /// Adds every item of `items` (e.g. the list one `feed()` returned).
            fn add_all(slf: &Bound<'_, Self>, items: &Bound<'_, PyAny>) -> PyResult<()> {
                let mut this = $crate::py::errors::exclusive(slf, "accumulator")?;
                if let Ok(list) = items.cast::<pyo3::types::PyList>() {
                    // The list one feed() returned: no iterator object.
                    for item in list.iter() {
                        this.add_one(&item)?;
                    }
                    return Ok(());
                }
                for item in items.try_iter()? {
                    this.add_one(&item?)?;
                }
                Ok(())
            }

            /// The accumulated final object (a new dict on every call).
            fn result<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                let out = $crate::py::errors::exclusive(slf, "accumulator")?.fold.result();
                Ok($crate::py::json::out_to_py(slf.py(), &out)?.cast_into()?)
            }

            /// The first server-reported error (`ErrorItem.kind == "stream_error"`), else
            /// `None`.
            #[getter]
            fn error(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
                Ok($crate::py::errors::shared(slf, "accumulator")?.errors.error(slf.py()))
            }

            /// Every `ErrorItem` added (stream errors and malformed frames), in order.
            #[getter]
            fn errors<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                $crate::py::errors::shared(slf, "accumulator")?.errors.errors(slf.py())
            }

            $($extra)*
        }
    };
}
pub(crate) use accumulator_class;

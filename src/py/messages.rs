//! `ssewire.MessagesStream` and its item `MessageEvent` (Anthropic-compatible Messages).
//!
//! Per feed: frame, decode each frame into a borrowed `messages::Event` (pure Rust), then one
//! pass builds one flat `MessageEvent` per event (pings are dropped). Event and delta type
//! names are built once per stream; the common text / JSON / thinking deltas carry only their
//! typed fields, other events also keep their raw JSON, decoded when read. A delta frame that
//! matches the previous one's template (see `crate::dialect::template`) skips the decode.
//! Carried across feeds: the stream core, the name table and the template.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::json::lazy;
use super::stream::{dialect_stream, Dialect, Frame, Refill, Route, StreamCore, Template, Value};
use super::strings::{int_or_none, name_or_none, text_or_none, Names};
use crate::dialect::json::Str;
use crate::dialect::messages::{self, Event};
use crate::dialect::ErrorInfo;

/// One event of a Messages stream, flattened.
#[pyclass(frozen, module = "ssewire", name = "MessageEvent")]
pub struct MessageEvent {
    /// `message_start`, `content_block_start`, `content_block_delta`, ...
    #[pyo3(get, name = "type")]
    type_: Py<PyAny>,
    #[pyo3(get)]
    index: Py<PyAny>,
    /// The delta's type (`text_delta`, `input_json_delta`, ...), for `content_block_delta`.
    #[pyo3(get)]
    delta_type: Py<PyAny>,
    #[pyo3(get)]
    text: Py<PyAny>,
    #[pyo3(get)]
    partial_json: Py<PyAny>,
    #[pyo3(get)]
    thinking: Py<PyAny>,
    #[pyo3(get)]
    signature: Py<PyAny>,
    #[pyo3(get)]
    stop_reason: Py<PyAny>,
    #[pyo3(get)]
    stop_sequence: Py<PyAny>,
    content_block_json: Option<Box<str>>,
    message_json: Option<Box<str>>,
    usage_json: Option<Box<str>>,
    citation_json: Option<Box<str>>,
    raw_json: Option<Box<str>>,
}

#[pymethods]
impl MessageEvent {
    /// The `content_block` of `content_block_start`, decoded on each access.
    #[getter]
    fn content_block<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.content_block_json.as_deref())
    }

    /// The `message` of `message_start`, decoded on each access.
    #[getter]
    fn message<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.message_json.as_deref())
    }

    /// The `usage` of `message_delta`, decoded on each access.
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.usage_json.as_deref())
    }

    /// The `citation` of a `citations_delta`, decoded on each access.
    #[getter]
    fn citation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.citation_json.as_deref())
    }

    /// The whole event as a dict, for every event except the common text / JSON / thinking /
    /// signature deltas (whose fields are all above).
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.raw_json.as_deref())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = vec![format!("type={}", self.type_.bind(py).repr()?)];
        if !self.index.is_none(py) {
            parts.push(format!("index={}", self.index.bind(py).repr()?));
        }
        for (name, value) in [
            ("delta_type", &self.delta_type),
            ("text", &self.text),
            ("partial_json", &self.partial_json),
            ("thinking", &self.thinking),
            ("signature", &self.signature),
            ("stop_reason", &self.stop_reason),
        ] {
            if !value.is_none(py) {
                parts.push(format!("{name}={}", value.bind(py).repr()?));
            }
        }
        Ok(format!("MessageEvent({})", parts.join(", ")))
    }
}

// The string of a common delta that a frame template leaves open (see `Template`).
const HOLE_TEXT: u8 = 0;
const HOLE_PARTIAL_JSON: u8 = 1;
const HOLE_THINKING: u8 = 2;

impl Refill for MessageEvent {
    fn refill(&self, py: Python<'_>, hole: u8, text: &str, _: Option<i64>) -> PyResult<Py<Self>> {
        let mut item = MessageEvent {
            type_: self.type_.clone_ref(py),
            index: self.index.clone_ref(py),
            delta_type: self.delta_type.clone_ref(py),
            text: self.text.clone_ref(py),
            partial_json: self.partial_json.clone_ref(py),
            thinking: self.thinking.clone_ref(py),
            signature: self.signature.clone_ref(py),
            stop_reason: self.stop_reason.clone_ref(py),
            stop_sequence: self.stop_sequence.clone_ref(py),
            content_block_json: self.content_block_json.clone(),
            message_json: self.message_json.clone(),
            usage_json: self.usage_json.clone(),
            citation_json: self.citation_json.clone(),
            raw_json: self.raw_json.clone(),
        };
        let text = PyString::new(py, text).into_any().unbind();
        match hole {
            HOLE_TEXT => item.text = text,
            HOLE_PARTIAL_JSON => item.partial_json = text,
            _ => item.thinking = text,
        }
        Py::new(py, item)
    }
}

/// The per-stream state of the Messages dialect: the event and delta type names, and the
/// frame template of the last common delta.
#[derive(Default)]
pub struct MessagesState {
    names: Names,
    template: Option<Template<MessageEvent>>,
}

/// The one text of a common delta that a template can leave open (borrowed from the frame).
fn hole<'f>(ev: &Event<'f>) -> Option<(u8, &'f str)> {
    if !ev.is_common_delta() {
        return None;
    }
    let d = &ev.delta;
    let borrowed = Str::borrowed;
    [
        (HOLE_TEXT, borrowed(&d.text)),
        (HOLE_PARTIAL_JSON, borrowed(&d.partial_json)),
        (HOLE_THINKING, borrowed(&d.thinking)),
    ]
    .into_iter()
    .find_map(|(kind, text)| text.map(|t| (kind, t)))
}

impl Dialect for MessagesState {
    type Doc<'f> = Event<'f>;
    const PLACEHOLDER_ACCUMULATOR: &'static str = "MessageAccumulator";

    fn route(event: &[u8]) -> Route {
        match event {
            b"error" => Route::Error,
            _ => Route::Decode,
        }
    }

    fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
        messages::decode(doc)
    }

    fn value<'f>(
        &mut self,
        core: &mut StreamCore,
        py: Python<'_>,
        v: Value<'f, '_, Event<'f>>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        // PLACEHOLDER (issue 8): while `FOLDS` is false, `convert` always passes a list.
        let Some(out) = out else {
            return Ok(());
        };
        let ev: Event<'f> = v.value;
        let kind: &[u8] = match &ev.type_ {
            // A document with an `error` key is an error whatever else it says.
            _ if ev.error.is_some() => b"error",
            Some(t) => t.as_str().as_bytes(),
            None => v.frame.event_type(),
        };
        match kind {
            b"ping" => return Ok(()),
            b"error" => {
                let info = match ev.error {
                    Some(e) => ErrorInfo::from_error_value(Some(v.doc), e),
                    None => ErrorInfo::from_document(v.doc),
                };
                let name = core.event_name(py, v.frame);
                return out.append(core.stream_error_item(py, &info, name, &v.frame.data)?);
            }
            b"message_stop" => core.done = true,
            _ => {}
        }
        let raw_json = (!ev.is_common_delta()).then(|| v.doc.into());
        let hole = if v.doc.len() == v.frame.data.len() {
            hole(&ev)
        } else {
            None
        };
        let names = &mut self.names;
        let d = &ev.delta;
        let item = MessageEvent {
            type_: names.get(py, kind).into_any(),
            index: int_or_none(py, ev.index),
            delta_type: name_or_none(py, names, d.type_.as_ref()),
            text: text_or_none(py, d.text.as_ref()),
            partial_json: text_or_none(py, d.partial_json.as_ref()),
            thinking: text_or_none(py, d.thinking.as_ref()),
            signature: text_or_none(py, d.signature.as_ref()),
            stop_reason: name_or_none(py, names, d.stop_reason.as_ref()),
            stop_sequence: text_or_none(py, d.stop_sequence.as_ref()),
            content_block_json: ev.content_block.map(|r| r.get().into()),
            message_json: ev.message.map(|r| r.get().into()),
            usage_json: ev.usage.map(|r| r.get().into()),
            citation_json: d.citation.map(|r| r.get().into()),
            raw_json,
        };
        let obj = Py::new(py, item)?;
        out.append(&obj)?;
        if let Some((kind, text)) = hole {
            let new = Template::new(v.frame, text, &[], kind, Some(obj));
            Template::renew(&mut self.template, new);
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        py: Python<'_>,
        frame: &Frame<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<bool> {
        match &self.template {
            Some(template) => template.apply(py, frame, out),
            None => Ok(false),
        }
    }
}

dialect_stream!(
    MessagesStream,
    "MessagesStream",
    MessagesState,
    "message_stop",
    "Anthropic-compatible `POST /v1/messages` stream: framing and event decoding."
);

//! `ssewire.MessagesStream` and its item `MessageEvent` (Anthropic-compatible Messages).
//!
//! Per feed: frame, decode each frame into a borrowed `messages::Event` (pure Rust), then one
//! pass builds one flat `MessageEvent` per event (pings are dropped). Event and delta type
//! names are built once per stream; the common text / JSON / thinking deltas carry only their
//! typed fields, other events also keep their raw JSON, decoded when read. A delta frame that
//! matches the previous one's template (see `crate::dialect::template`) skips the decode.
//! Every event is also folded (`crate::fold::messages`), with or without items. Carried across
//! feeds: the stream core, the fold, the name table and the template.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::json::{lazy, out_to_py};
use super::stream::{
    accumulator_class, dialect_stream, emit, Dialect, Hit, Refill, Route, StreamCore, Subject,
    Template, Value,
};
use super::strings::{int_or_none, item_int, item_str, name_or_none, text_or_none, Names};
use crate::dialect::json::Str;
use crate::dialect::messages::{self, Event, Read};
use crate::fold::messages::{EventView, MessagesFold};
use crate::translate::Upstream;

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

/// The per-stream state of the Messages dialect: the fold, the event and delta type names,
/// and the frame template of the last common delta.
#[derive(Default)]
pub struct MessagesState {
    fold: MessagesFold,
    names: Names,
    template: Option<MessagesTemplate>,
}

/// The template of the last common delta, and what the fold needs of it: a frame that fits
/// folds as that delta with new text in the hole.
struct MessagesTemplate {
    template: Template<MessageEvent>,
    index: Option<i64>,
    delta_type: Box<str>,
}

/// The one text of a common delta that a template can leave open, as its place in `data`, the
/// frame's JSON (escaped or not).
fn hole<'f>(ev: &Event<'f>, data: &'f str) -> Option<(u8, &'f str)> {
    if !ev.is_common_delta() {
        return None;
    }
    let d = &ev.delta;
    let (kind, text) = [
        (HOLE_TEXT, &d.text),
        (HOLE_PARTIAL_JSON, &d.partial_json),
        (HOLE_THINKING, &d.thinking),
    ]
    .into_iter()
    .find(|(_, text)| text.is_some())?;
    Some((kind, Str::in_frame(text, data)?))
}

/// A common delta's view with `text` in hole `hole`.
fn delta_view<'a>(
    index: Option<i64>,
    delta_type: &'a str,
    hole: u8,
    text: &'a str,
) -> EventView<'a> {
    EventView {
        kind: "content_block_delta",
        index,
        delta_type: Some(delta_type),
        text: (hole == HOLE_TEXT).then_some(text),
        partial_json: (hole == HOLE_PARTIAL_JSON).then_some(text),
        thinking: (hole == HOLE_THINKING).then_some(text),
        ..EventView::default()
    }
}

impl Dialect for MessagesState {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "an Anthropic Messages";

    fn belongs(doc: &Self::Doc<'_>, event: &[u8]) -> crate::dialect::Belongs {
        doc.belongs(event)
    }

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
        let ev: Event<'f> = v.value;
        let kind_text = ev.kind_of(v.frame.event_type());
        let view = match ev.read(&kind_text, v.doc) {
            Read::Skip => return Ok(()),
            Read::Error(info) => {
                let name = core.event_name(py, v.frame);
                return emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?);
            }
            Read::Fold(view) => view,
        };
        let kind = kind_text.as_bytes();
        if kind == b"message_stop" {
            core.done = true;
        }
        let raw_json = view.raw;
        let d = &ev.delta;
        self.fold.add(&view);
        core.tap(Upstream::Messages(&view));
        let hole = if v.doc.len() == v.frame.data.len() {
            hole(&ev, v.doc)
        } else {
            None
        };
        let obj = match out {
            Some(out) => {
                let names = &mut self.names;
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
                    raw_json: raw_json.map(Box::from),
                };
                let obj = Py::new(py, item)?;
                out.append(&obj)?;
                Some(obj)
            }
            None => None,
        };
        if let (Some((hole_kind, text)), Some(delta_type)) = (hole, d.type_.as_ref()) {
            let new = Template::new(v.frame, text, &[], hole_kind, obj).map(|template| {
                MessagesTemplate {
                    template,
                    index: ev.index,
                    delta_type: delta_type.as_str().into(),
                }
            });
            if new.is_some() {
                self.template = new;
            }
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        py: Python<'_>,
        core: &mut StreamCore,
        frame: Subject<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<usize>> {
        let Some(t) = &self.template else {
            return Ok(None);
        };
        let Some(Hit { text, len, .. }) = t.template.hit(py, frame, out)? else {
            return Ok(None);
        };
        let hole = t.template.hole;
        let view = delta_view(t.index, &t.delta_type, hole, &text);
        self.fold.add(&view);
        core.tap(Upstream::Messages(&view));
        Ok(Some(len))
    }

    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        (choice == 0).then(|| self.fold.arguments(index)).flatten()
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings().to_vec()
    }

    fn result<'py>(&mut self, _: &StreamCore, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        out_to_py(py, &self.fold.result())
    }
}

dialect_stream!(
    MessagesStream,
    "MessagesStream",
    MessagesState,
    "message_stop",
    "Anthropic-compatible `POST /v1/messages` stream: framing and event decoding."
);

/// Folds one `MessageEvent` item, reading its fields natively.
fn fold_item(py: Python<'_>, fold: &mut MessagesFold, item: &MessageEvent) {
    let kind = item_str(py, &item.type_);
    let delta_type = item_str(py, &item.delta_type);
    let (t, partial_json, thinking) = (
        item_str(py, &item.text),
        item_str(py, &item.partial_json),
        item_str(py, &item.thinking),
    );
    let (signature, stop_reason, stop_sequence) = (
        item_str(py, &item.signature),
        item_str(py, &item.stop_reason),
        item_str(py, &item.stop_sequence),
    );
    fold.add(&EventView {
        kind: kind.as_deref().unwrap_or_default(),
        index: item_int(py, &item.index),
        delta_type: delta_type.as_deref(),
        text: t.as_deref(),
        partial_json: partial_json.as_deref(),
        thinking: thinking.as_deref(),
        signature: signature.as_deref(),
        stop_reason: stop_reason.as_deref(),
        stop_sequence: stop_sequence.as_deref(),
        content_block: item.content_block_json.as_deref(),
        message: item.message_json.as_deref(),
        usage: item.usage_json.as_deref(),
        citation: item.citation_json.as_deref(),
        raw: item.raw_json.as_deref(),
    });
}

accumulator_class!(
    MessageAccumulator,
    "MessageAccumulator",
    MessagesFold,
    MessageEvent,
    "a MessagesStream (MessageEvent)",
    fold_item,
    "Folds `MessagesStream` items into a non-streaming Anthropic `message` dict, by the same fold the stream runs itself (`crate::fold::messages` states the rules).",
    {
        /// Notes about input the fold had to interpret (tool input that is not JSON, deltas
        /// for a block that never started, delta types it does not know), in order.
        #[getter]
        fn warnings(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
            Ok(crate::py::errors::exclusive(slf, "accumulator")?.fold.warnings().to_vec())
        }
    }
);

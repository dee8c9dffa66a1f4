//! `ssewire.MessagesStream` and its item `MessageEvent` (Anthropic-compatible Messages).
//!
//! Converts only: `crate::stream::messages` reads, folds and templates the events and hands
//! each one here (`MessagesItems`), which builds one flat `MessageEvent` (event and delta
//! type names built once per stream; the common text / JSON / thinking deltas carry only their
//! typed fields, other events also keep their raw JSON, decoded when read), or a copy of the
//! template's item with new text. Carried across feeds: the stream, the name table.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::json::{lazy, repr_of, ItemDict};
use super::stream::{accumulator_class, dialect_stream, Items, Out};
use super::strings::{int_or_none, item_int, item_str, name_or_none, text_or_none, Names};
use crate::dialect::messages::{unshown, Event};
use crate::fold::messages::{EventView, MessagesFold};
use crate::stream::messages::{Hole, MessagesItems, MessagesReader};

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

    /// The event as a dict, as `ssewire --events` prints it: the fields that are not `None`,
    /// and under `"other"` the members of its JSON no field shows.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&self.plain())?;
        d.json("content_block", self.content_block_json.as_deref())?;
        d.json("message", self.message_json.as_deref())?;
        d.json("usage", self.usage_json.as_deref())?;
        d.json("citation", self.citation_json.as_deref())?;
        if let Some(raw) = self.raw_json.as_deref() {
            let delta_type = item_str(py, &self.delta_type);
            d.json("other", unshown(raw, delta_type.as_deref()).as_deref())?;
        }
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "MessageEvent", &self.plain())
    }
}

impl MessageEvent {
    /// The fields held as Python objects, by name, in order.
    fn plain(&self) -> [(&'static str, &Py<PyAny>); 9] {
        [
            ("type", &self.type_),
            ("index", &self.index),
            ("delta_type", &self.delta_type),
            ("text", &self.text),
            ("partial_json", &self.partial_json),
            ("thinking", &self.thinking),
            ("signature", &self.signature),
            ("stop_reason", &self.stop_reason),
            ("stop_sequence", &self.stop_sequence),
        ]
    }
}

/// The conversion state of a Messages stream: the event and delta type names, built once.
#[derive(Default)]
pub struct MessagesNames {
    names: Names,
}

impl Items for MessagesNames {
    type Item = Py<MessageEvent>;
}

impl MessagesItems for Out<'_, '_, MessagesNames> {
    fn event(
        &mut self,
        ev: &Event<'_>,
        kind: &[u8],
        raw: Option<&str>,
    ) -> PyResult<Py<MessageEvent>> {
        let py = self.py;
        let names = &mut self.x.names;
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
            raw_json: raw.map(Box::from),
        };
        let obj = Py::new(py, item)?;
        self.push(&obj)?;
        Ok(obj)
    }

    fn refill(
        &mut self,
        item: &Py<MessageEvent>,
        hole: Hole,
        text: &str,
        raw: Option<&str>,
    ) -> PyResult<()> {
        let py = self.py;
        let this = item.get();
        let mut item = MessageEvent {
            type_: this.type_.clone_ref(py),
            index: this.index.clone_ref(py),
            delta_type: this.delta_type.clone_ref(py),
            text: this.text.clone_ref(py),
            partial_json: this.partial_json.clone_ref(py),
            thinking: this.thinking.clone_ref(py),
            signature: this.signature.clone_ref(py),
            stop_reason: this.stop_reason.clone_ref(py),
            stop_sequence: this.stop_sequence.clone_ref(py),
            content_block_json: this.content_block_json.clone(),
            message_json: this.message_json.clone(),
            usage_json: this.usage_json.clone(),
            citation_json: this.citation_json.clone(),
            raw_json: match raw {
                Some(raw) => Some(raw.into()),
                None => this.raw_json.clone(),
            },
        };
        let text = PyString::new(py, text).into_any().unbind();
        match hole {
            Hole::Text => item.text = text,
            Hole::PartialJson => item.partial_json = text,
            Hole::Thinking => item.thinking = text,
        }
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    MessagesStream,
    "MessagesStream",
    MessagesReader,
    MessagesNames,
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

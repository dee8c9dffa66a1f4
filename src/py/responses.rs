//! `ssewire.ResponsesStream` and its item `ResponseEvent` (OpenAI-compatible Responses).
//!
//! Converts only: `crate::stream::responses` reads, folds and templates the events (`error`
//! events and `response.failed` are reported as errors) and hands each one here
//! (`ResponsesItems`), which builds one flat `ResponseEvent`: type names and the repeating
//! `item_id` built once per stream; deltas carry only their typed fields, other events also
//! keep their raw JSON (decoded when read). Carried across feeds: the stream, the name table,
//! the last item id.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::json::{lazy, ItemDict};
use super::stream::{accumulator_class, dialect_stream, Items, Out};
use super::strings::{
    flag, int_or_none, item_int, item_str, reused_or_none, text_or_none, Names, Reused,
};
use crate::dialect::responses::{unshown, Event};
use crate::fold::responses::{EventView, ResponsesFold};
use crate::stream::responses::{ResponsesItems, ResponsesReader};

/// One event of a Responses stream, flattened.
#[pyclass(frozen, module = "ssewire", name = "ResponseEvent")]
pub struct ResponseEvent {
    /// `response.created`, `response.output_text.delta`, ...
    #[pyo3(get, name = "type")]
    type_: Py<PyAny>,
    #[pyo3(get)]
    sequence_number: Py<PyAny>,
    #[pyo3(get)]
    output_index: Py<PyAny>,
    #[pyo3(get)]
    content_index: Py<PyAny>,
    #[pyo3(get)]
    summary_index: Py<PyAny>,
    #[pyo3(get)]
    item_id: Py<PyAny>,
    /// The text of a `*.delta` event (output text, refusal, arguments, reasoning).
    #[pyo3(get)]
    delta: Py<PyAny>,
    /// The full text of a `*.done` event (`output_text`, reasoning text or summary).
    #[pyo3(get)]
    text: Py<PyAny>,
    /// The full refusal of `response.refusal.done`.
    #[pyo3(get)]
    refusal: Py<PyAny>,
    /// The full arguments of `response.function_call_arguments.done`.
    #[pyo3(get)]
    arguments: Py<PyAny>,
    /// Whether any JSON-backed attribute (`item`, `part`, `response`, `logprobs`, `raw`) is
    /// set: a plain delta has none, and readers may skip them all.
    #[pyo3(get)]
    has_json: Py<PyAny>,
    item_json: Option<Box<str>>,
    part_json: Option<Box<str>>,
    response_json: Option<Box<str>>,
    logprobs_json: Option<Box<str>>,
    raw_json: Option<Box<str>>,
}

#[pymethods]
impl ResponseEvent {
    /// The output `item` of `response.output_item.added` / `.done`, decoded on each access.
    #[getter]
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.item_json.as_deref())
    }

    /// The content `part` of `response.content_part.added` / `.done` (and summary parts).
    #[getter]
    fn part<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.part_json.as_deref())
    }

    /// The `response` object of `response.created` / `.in_progress` / `.completed` / ...
    #[getter]
    fn response<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.response_json.as_deref())
    }

    /// Non-empty `logprobs` of a text delta, decoded on each access.
    #[getter]
    fn logprobs<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.logprobs_json.as_deref())
    }

    /// The whole event as a dict, for every event except plain deltas.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.raw_json.as_deref())
    }

    /// The event as a dict, as `ssewire --events` prints it: the fields that are not `None`,
    /// and under `"other"` the members of its JSON no field shows.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&[
            ("type", &self.type_),
            ("sequence_number", &self.sequence_number),
            ("output_index", &self.output_index),
            ("content_index", &self.content_index),
            ("summary_index", &self.summary_index),
            ("item_id", &self.item_id),
            ("delta", &self.delta),
            ("text", &self.text),
            ("refusal", &self.refusal),
            ("arguments", &self.arguments),
        ])?;
        d.json("item", self.item_json.as_deref())?;
        d.json("part", self.part_json.as_deref())?;
        d.json("response", self.response_json.as_deref())?;
        d.json("logprobs", self.logprobs_json.as_deref())?;
        d.json(
            "other",
            self.raw_json.as_deref().and_then(unshown).as_deref(),
        )?;
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = vec![format!("type={}", self.type_.bind(py).repr()?)];
        if !self.sequence_number.is_none(py) {
            parts.push(format!(
                "sequence_number={}",
                self.sequence_number.bind(py).repr()?
            ));
        }
        for (name, value) in [
            ("delta", &self.delta),
            ("text", &self.text),
            ("refusal", &self.refusal),
            ("arguments", &self.arguments),
        ] {
            if !value.is_none(py) {
                parts.push(format!("{name}={}", value.bind(py).repr()?));
            }
        }
        Ok(format!("ResponseEvent({})", parts.join(", ")))
    }
}

/// The conversion state of a Responses stream: the type names and the item id that repeats
/// on every delta of an item, built once.
#[derive(Default)]
pub struct ResponseStrings {
    names: Names,
    item_id: Reused,
}

impl Items for ResponseStrings {
    type Item = Py<ResponseEvent>;
}

impl ResponsesItems for Out<'_, '_, ResponseStrings> {
    fn event(
        &mut self,
        ev: &Event<'_>,
        kind: &[u8],
        raw: Option<&str>,
    ) -> PyResult<Py<ResponseEvent>> {
        let py = self.py;
        let strings = &mut *self.x;
        let item = ResponseEvent {
            type_: strings.names.get(py, kind).into_any(),
            sequence_number: int_or_none(py, ev.sequence_number),
            output_index: int_or_none(py, ev.output_index),
            content_index: int_or_none(py, ev.content_index),
            summary_index: int_or_none(py, ev.summary_index),
            item_id: reused_or_none(py, &mut strings.item_id, ev.item_id.as_ref()),
            delta: text_or_none(py, ev.delta.as_ref()),
            text: text_or_none(py, ev.text.as_ref()),
            refusal: text_or_none(py, ev.refusal.as_ref()),
            arguments: text_or_none(py, ev.arguments.as_ref()),
            has_json: flag(
                py,
                raw.is_some()
                    || ev.item.is_some()
                    || ev.part.is_some()
                    || ev.response.is_some()
                    || ev.logprobs.is_some(),
            ),
            item_json: ev.item.map(|r| r.get().into()),
            part_json: ev.part.map(|r| r.get().into()),
            response_json: ev.response.map(Into::into),
            logprobs_json: ev.logprobs.map(|r| r.get().into()),
            raw_json: raw.map(Box::from),
        };
        let obj = Py::new(py, item)?;
        self.push(&obj)?;
        Ok(obj)
    }

    /// The one string hole is the delta text; the number hole is the sequence number.
    fn refill(
        &mut self,
        item: &Py<ResponseEvent>,
        delta: &str,
        sequence_number: Option<i64>,
        raw: Option<&str>,
    ) -> PyResult<()> {
        let py = self.py;
        let this = item.get();
        let item = ResponseEvent {
            type_: this.type_.clone_ref(py),
            sequence_number: match sequence_number {
                Some(n) => int_or_none(py, Some(n)),
                None => this.sequence_number.clone_ref(py),
            },
            output_index: this.output_index.clone_ref(py),
            content_index: this.content_index.clone_ref(py),
            summary_index: this.summary_index.clone_ref(py),
            item_id: this.item_id.clone_ref(py),
            delta: PyString::new(py, delta).into_any().unbind(),
            text: this.text.clone_ref(py),
            refusal: this.refusal.clone_ref(py),
            arguments: this.arguments.clone_ref(py),
            has_json: this.has_json.clone_ref(py),
            item_json: this.item_json.clone(),
            part_json: this.part_json.clone(),
            response_json: this.response_json.clone(),
            logprobs_json: this.logprobs_json.clone(),
            raw_json: match raw {
                Some(raw) => Some(raw.into()),
                None => this.raw_json.clone(),
            },
        };
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    ResponsesStream,
    "ResponsesStream",
    ResponsesReader,
    ResponseStrings,
    "OpenAI-compatible `POST /v1/responses` stream: framing and event decoding."
);

/// Folds one `ResponseEvent` item, reading its fields natively.
fn fold_item(py: Python<'_>, fold: &mut ResponsesFold, item: &ResponseEvent) {
    let (kind, item_id) = (item_str(py, &item.type_), item_str(py, &item.item_id));
    let (delta, full_text) = (item_str(py, &item.delta), item_str(py, &item.text));
    let (refusal, arguments) = (item_str(py, &item.refusal), item_str(py, &item.arguments));
    fold.add(&EventView {
        kind: kind.as_deref().unwrap_or_default(),
        output_index: item_int(py, &item.output_index),
        content_index: item_int(py, &item.content_index),
        summary_index: item_int(py, &item.summary_index),
        item_id: item_id.as_deref(),
        delta: delta.as_deref(),
        text: full_text.as_deref(),
        refusal: refusal.as_deref(),
        arguments: arguments.as_deref(),
        item: item.item_json.as_deref(),
        part: item.part_json.as_deref(),
        response: item.response_json.as_deref(),
        response_entries: None,
        logprobs: item.logprobs_json.as_deref(),
        raw: item.raw_json.as_deref(),
    });
}

accumulator_class!(
    ResponseAccumulator,
    "ResponseAccumulator",
    ResponsesFold,
    ResponseEvent,
    "a ResponsesStream (ResponseEvent)",
    fold_item,
    "Folds `ResponsesStream` items into the final Responses API `response` dict, by the same fold the stream runs itself (`crate::fold::responses` states the rules).",
    {
        /// Notes about events the fold had to interpret (e.g. a delta for an unknown item).
        #[getter]
        fn warnings(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
            Ok(crate::py::errors::exclusive(slf, "accumulator")?.fold.warnings().to_vec())
        }

        /// Notes where a full value sent by the server differs from the assembled deltas.
        #[getter]
        fn mismatches(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
            Ok(crate::py::errors::shared(slf, "accumulator")?.fold.mismatches().to_vec())
        }
    }
);

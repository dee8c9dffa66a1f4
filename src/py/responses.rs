//! `ssewire.ResponsesStream` and its item `ResponseEvent` (OpenAI-compatible Responses).
//!
//! Per feed: frame, decode each frame into a borrowed `responses::Event` (pure Rust), then one
//! pass builds one flat `ResponseEvent` per event. Type names and the repeating `item_id` are
//! built once per stream; deltas carry only their typed fields, other events also keep their
//! raw JSON (decoded when read). `error` events and `response.failed` become `StreamError`s. A
//! plain delta frame that matches the previous one's template but for its text and sequence
//! number (see `crate::dialect::template`) skips the decode. Carried across feeds: the stream
//! core, the fold (`crate::fold::responses`, fed in `feed` and `consume` alike), the name
//! table, the last item id and the template.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::json::{lazy, out_to_py};
use super::stream::{
    accumulator_class, dialect_stream, emit, Dialect, Hit, Refill, Route, StreamCore, Subject,
    Template, Value,
};
use super::strings::{
    flag, int_or_none, item_int, item_str, reused_or_none, text_or_none, Names, Reused,
};
use crate::dialect::json::Str;
use crate::dialect::responses::{self, Event, Read, TERMINAL};
use crate::fold::responses::{EventView, ResponsesFold};
use crate::translate::Upstream;

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

/// The per-stream state of the Responses dialect: type names, the item id that repeats on
/// every delta of an item, and the frame template of the last plain delta (its holes: the
/// delta text and the sequence number).
#[derive(Default)]
pub struct ResponseStrings {
    fold: ResponsesFold,
    names: Names,
    item_id: Reused,
    template: Option<ResponsesTemplate>,
}

/// The template of the last plain delta, and what the fold needs of it: a frame that fits
/// folds as that delta with new text.
struct ResponsesTemplate {
    template: Template<ResponseEvent>,
    kind: Box<str>,
    output_index: Option<i64>,
    content_index: Option<i64>,
    summary_index: Option<i64>,
    item_id: Option<Box<str>>,
}

impl Refill for ResponseEvent {
    /// The one string hole is the delta text; the number hole is the sequence number.
    fn refill(
        &self,
        py: Python<'_>,
        _: u8,
        delta: &str,
        sequence_number: Option<i64>,
    ) -> PyResult<Py<Self>> {
        Py::new(
            py,
            ResponseEvent {
                type_: self.type_.clone_ref(py),
                sequence_number: match sequence_number {
                    Some(n) => int_or_none(py, Some(n)),
                    None => self.sequence_number.clone_ref(py),
                },
                output_index: self.output_index.clone_ref(py),
                content_index: self.content_index.clone_ref(py),
                summary_index: self.summary_index.clone_ref(py),
                item_id: self.item_id.clone_ref(py),
                delta: PyString::new(py, delta).into_any().unbind(),
                text: self.text.clone_ref(py),
                refusal: self.refusal.clone_ref(py),
                arguments: self.arguments.clone_ref(py),
                has_json: self.has_json.clone_ref(py),
                item_json: self.item_json.clone(),
                part_json: self.part_json.clone(),
                response_json: self.response_json.clone(),
                logprobs_json: self.logprobs_json.clone(),
                raw_json: self.raw_json.clone(),
            },
        )
    }
}

impl Dialect for ResponseStrings {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "an OpenAI Responses";

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
        responses::decode(doc)
    }

    fn value<'f>(
        &mut self,
        core: &mut StreamCore,
        py: Python<'_>,
        v: Value<'f, '_, Event<'f>>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        let strings = self;
        let ev: Event<'_> = v.value;
        let kind_text = ev.kind_of(v.frame.event_type());
        let view = match ev.read(&kind_text, v.doc) {
            Read::Error(info) => {
                let name = core.event_name(py, v.frame);
                return emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?);
            }
            Read::Fold(view, failed) => {
                if let Some(info) = failed {
                    let name = core.event_name(py, v.frame);
                    emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?)?;
                }
                view
            }
        };
        let kind = kind_text.as_bytes();
        if TERMINAL.iter().any(|t| t.as_bytes() == kind) {
            core.done = true;
        }
        let raw_json = view.raw;
        strings.fold.add(&view);
        core.tap(Upstream::Responses(&view));
        let whole_frame = v.doc.len() == v.frame.data.len();
        let hole = if whole_frame && ev.is_common_delta() {
            Str::in_frame(&ev.delta, v.doc)
        } else {
            None
        };
        let sequence_number = ev.sequence_number;
        let padding: Vec<&str> = match hole {
            Some(_) => Str::in_frame(&ev.obfuscation, v.doc).into_iter().collect(),
            None => Vec::new(),
        };
        let obj = match out {
            Some(out) => {
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
                        raw_json.is_some()
                            || ev.item.is_some()
                            || ev.part.is_some()
                            || ev.response.is_some()
                            || ev.logprobs.is_some(),
                    ),
                    item_json: ev.item.map(|r| r.get().into()),
                    part_json: ev.part.map(|r| r.get().into()),
                    response_json: ev.response.map(|r| r.get().into()),
                    logprobs_json: ev.logprobs.map(|r| r.get().into()),
                    raw_json: raw_json.map(Box::from),
                };
                let obj = Py::new(py, item)?;
                out.append(&obj)?;
                Some(obj)
            }
            None => None,
        };
        if let Some(text) = hole {
            let template = Template::new(v.frame, text, &padding, 0, obj);
            let new = match sequence_number {
                Some(n) => template.and_then(|t| t.with_number("sequence_number", n)),
                None => template,
            };
            if let Some(template) = new {
                strings.template = Some(ResponsesTemplate {
                    template,
                    kind: kind_text.as_ref().into(),
                    output_index: ev.output_index,
                    content_index: ev.content_index,
                    summary_index: ev.summary_index,
                    item_id: ev.item_id.as_ref().map(|s| s.as_str().into()),
                });
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
        let view = EventView {
            kind: &t.kind,
            output_index: t.output_index,
            content_index: t.content_index,
            summary_index: t.summary_index,
            item_id: t.item_id.as_deref(),
            delta: Some(&text),
            ..EventView::default()
        };
        self.fold.add(&view);
        core.tap(Upstream::Responses(&view));
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
    ResponsesStream,
    "ResponsesStream",
    ResponseStrings,
    "a terminal response event",
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

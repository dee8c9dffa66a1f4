//! `ssewire.Translator`: an upstream stream in one dialect, re-served live in another
//! (`crate::translate` does the work in pure Rust).
//!
//! One pass per feed: the source stream (`t.source`, the public dialect stream) frames,
//! decodes and folds the input as its own `consume()` does, and hands every view its fold
//! reads (template hits included) to the translation on its `tap`; the translation writes the
//! target's events and folds them as it writes (`t.result()`), so nothing is framed or decoded
//! twice. Carried across feeds: the translation, the source stream, and with `source="auto"`
//! the input read before the dialect was told (at most `translate::SNIFF_EVENTS` events or
//! `translate::SNIFF_BYTES`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::errors;
use super::input::Input;
use super::json::out_to_py;
use super::stream::Source;
use crate::translate::{Dialect, Sniffer, Translation};

/// The public stream classes (`ssewire.ChatCompletionStream`, `MessagesStream`,
/// `ResponsesStream`, `GeminiStream`: the Python subclasses of this module's classes), handed
/// to the core by `ssewire._reading` when it defines them (`_set_stream_classes`): the core
/// imports no Python module.
static STREAM_CLASSES: pyo3::sync::PyOnceLock<Vec<Py<PyAny>>> = pyo3::sync::PyOnceLock::new();

/// Records the public stream classes, one per dialect in the registry's order (once;
/// `ssewire._reading` calls it on import).
#[pyfunction]
#[pyo3(name = "_set_stream_classes")]
pub fn set_stream_classes(py: Python<'_>, classes: Vec<Py<PyAny>>) -> PyResult<()> {
    if classes.len() != crate::dialect::SPECS.len() {
        return Err(PyValueError::new_err(
            "one stream class per dialect of _core.DIALECTS",
        ));
    }
    let _ = STREAM_CLASSES.set(py, classes);
    Ok(())
}

/// The public stream class of a dialect (`ssewire.MessagesStream`, ...).
fn stream_class<'py>(py: Python<'py>, dialect: Dialect) -> PyResult<Bound<'py, PyAny>> {
    let Some(classes) = STREAM_CLASSES.get(py) else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "ssewire's stream classes are not registered (import ssewire, not ssewire._core)",
        ));
    };
    match classes.get(dialect as usize) {
        Some(class) => Ok(class.bind(py).clone()),
        None => Err(pyo3::exceptions::PyRuntimeError::new_err("no stream class")),
    }
}

/// A public stream of `dialect` (`ssewire.<stream_class>`), in `framing` when named.
pub fn new_stream(
    py: Python<'_>,
    dialect: Dialect,
    max_event_size: usize,
    framing: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("max_event_size", max_event_size)?;
    kwargs.set_item("framing", framing)?;
    Ok(stream_class(py, dialect)?.call((), Some(&kwargs))?.unbind())
}

fn source_dialect(name: &str) -> PyResult<Dialect> {
    Dialect::parse(name)
        .filter(|d| d.spec().source)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown source dialect {:?}: expected {}",
                name.chars().take(40).collect::<String>(),
                crate::dialect::registry::expected_sources(Some("auto"))
            ))
        })
}

fn target_dialect(name: &str) -> PyResult<Dialect> {
    Dialect::parse(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown target dialect {:?}: expected {}",
            name.chars().take(40).collect::<String>(),
            crate::dialect::registry::expected(None)
        ))
    })
}

/// Translates an upstream stream in one dialect into another, event by event.
#[pyclass(subclass, module = "ssewire", name = "Translator")]
pub struct Translator {
    /// The translation (lent to the source stream's `tap` while it reads).
    t: Option<Box<Translation>>,
    source: Option<Py<PyAny>>,
    undecided: Option<Sniffer>,
    max_event_size: usize,
    /// An upstream event was over `max_event_size` (dropped; noted once).
    too_large: bool,
}

impl Translator {
    fn translation(&mut self) -> PyResult<&mut Translation> {
        self.t
            .as_deref_mut()
            .ok_or_else(|| errors::busy("translator"))
    }

    /// Runs `f` on the source stream with the translation on its tap.
    fn with_source<R>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(Python<'_>, &mut dyn Source) -> PyResult<R>,
    ) -> PyResult<Option<R>> {
        let Some(source) = &self.source else {
            return Ok(None);
        };
        let source = source.bind(py);
        let t = &mut self.t;
        // The source is one dialect's stream class (`lend` tries each in the dialect list).
        crate::py::stream::lend(source, |s| {
            *s.tap() = t.take().map(|t| t as Box<dyn crate::stream::Tap>);
            let result = f(py, s);
            *t = s
                .tap()
                .take()
                .and_then(|tap| tap.into_any().downcast().ok());
            result
        })
    }

    /// Feeds `data` to the source stream (through the tap: the translation reads it).
    fn run(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        self.translation()?.reserve_for(data.len());
        let too_large = self.with_source(py, |py, s| s.run_bytes(py, data, None))?;
        if too_large.flatten().is_some() {
            self.too_large = true;
        }
        Ok(())
    }

    /// The source dialect is told: its stream is made and reads what was held.
    fn decide(&mut self, py: Python<'_>, dialect: Dialect) -> PyResult<()> {
        if !dialect.spec().source {
            return Err(PyValueError::new_err(format!(
                "the upstream is {} (told by its first events), which is not translated yet",
                dialect.name()
            )));
        }
        self.translation()?.set_source(dialect);
        self.source = Some(new_stream(py, dialect, self.max_event_size, None)?);
        if let Some(undecided) = self.undecided.take() {
            self.run(py, &undecided.held())?;
        }
        Ok(())
    }

    /// Holds `data` until the source dialect is told by an event that is one dialect's own.
    fn sniff(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let told = self.undecided.as_mut().and_then(|u| u.feed(data));
        match told {
            Some(dialect) => self.decide(py, dialect),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl Translator {
    #[new]
    #[pyo3(signature = (
        source,
        target,
        *,
        max_event_size = crate::framing::sse::DEFAULT_MAX_EVENT_SIZE,
        framing = None,
        target_framing = "sse",
        target_path = None,
        _carry_token = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        source: &str,
        target: &str,
        max_event_size: usize,
        framing: Option<&str>,
        target_framing: &str,
        target_path: Option<&str>,
        _carry_token: Option<&str>,
    ) -> PyResult<Self> {
        let target = target_dialect(target)?;
        let source = match source {
            "auto" => None,
            name => Some(source_dialect(name)?),
        };
        let known = |f: &str| matches!(f, "sse" | "eventstream");
        if !framing.is_none_or(known) || !known(target_framing) {
            return Err(PyValueError::new_err(
                "a framing is \"sse\" or \"eventstream\" (Amazon Bedrock's InvokeModelWithResponseStream)",
            ));
        }
        if source.is_none() && framing == Some("eventstream") {
            return Err(PyValueError::new_err(
                "framing=\"eventstream\" needs the source dialect named (the chunks are read as it)",
            ));
        }
        let mut t = Box::new(Translation::new(source, target));
        if target_framing == "eventstream" {
            t.write_eventstream();
        }
        if let Some(path) = target_path {
            t.set_endpoint(path);
        }
        // The gateway's `carry = "store"`: carrier ids in the store form (`translate::carry`).
        if let Some(token) = _carry_token {
            if !t.set_carry_store(token) {
                return Err(PyValueError::new_err(
                    "_carry_token: 8 to 64 ASCII letters and digits",
                ));
            }
        }
        Ok(Translator {
            t: Some(t),
            source: source
                .map(|d| new_stream(py, d, max_event_size, framing))
                .transpose()?,
            undecided: source.is_none().then(|| Sniffer::new(max_event_size)),
            max_event_size,
            too_large: false,
        })
    }

    /// The (short id, carrier) pairs of the store form written since the last call
    /// (`_carry_token`): the caller keeps them where the next request finds them.
    fn _stored(slf: &Bound<'_, Self>) -> PyResult<Vec<(String, String)>> {
        let mut this = errors::exclusive(slf, "translator")?;
        Ok(this.translation()?.take_stored())
    }

    /// The garbage collector's view of the source stream held.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(source) = &self.source {
            visit.call(source)?;
        }
        Ok(())
    }

    /// Upstream bytes (cut anywhere) in; the bytes of the target's complete events out
    /// (`b""` when nothing is owed yet). The same bytes however the reads were cut.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "translator")?;
        let input = Input::extract(data)?;
        let bytes = input.as_bytes();
        if this.translation()?.refuse_after_end() {
            return Ok(PyBytes::new(py, b""));
        }
        if this.undecided.is_some() {
            this.sniff(py, bytes)?;
        } else {
            this.run(py, bytes)?;
        }
        let t = this.translation()?;
        let out = PyBytes::new(py, t.output());
        t.clear();
        Ok(out)
    }

    /// End of the upstream: the bytes still owed. An upstream cut before its terminal marker
    /// gets no made-up ending (nothing is closed, no terminal event is written). After it,
    /// `feed()` and `finish()` write nothing (the input is ignored, and noted once).
    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "translator")?;
        if this.translation()?.ended() {
            return Ok(PyBytes::new(py, b""));
        }
        if let Some(dialect) = this.undecided.as_ref().map(Sniffer::at_end) {
            this.decide(py, dialect)?;
        }
        this.with_source(py, |py, s| s.finish_into(py, None))?;
        let t = this.translation()?;
        t.end_input();
        let out = PyBytes::new(py, t.output());
        t.clear();
        Ok(out)
    }

    /// The final object in the target dialect: what the client's SDK assembles from the bytes
    /// written so far (the target stream's `result()`; a new dict on each call).
    fn result<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "translator")?;
        let out = this.translation()?.result();
        out_to_py(py, &out)
    }

    /// The upstream's dialect stream (`done`, `error`, `errors`, `result()`); `None` while an
    /// "auto" source is not told yet.
    #[getter]
    fn source(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
        let this = errors::shared(slf, "translator")?;
        Ok(this.source.as_ref().map(|s| s.clone_ref(slf.py())))
    }

    /// The source dialect's name ("chat", "messages", "responses"), `None` while "auto" is
    /// not told yet.
    #[getter]
    fn source_dialect(slf: &Bound<'_, Self>) -> PyResult<Option<&'static str>> {
        let mut this = errors::exclusive(slf, "translator")?;
        Ok(this.translation()?.source().map(Dialect::name))
    }

    /// The upstream's usage in one shape for every dialect (its source stream's `usage`),
    /// `None` until it reports usage (or while an "auto" source is not told yet).
    #[getter]
    fn usage<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let source = errors::shared(slf, "translator")?
            .source
            .as_ref()
            .map(|s| s.clone_ref(slf.py()));
        match source {
            Some(s) => {
                let usage = s.bind(slf.py()).getattr("usage")?;
                Ok((!usage.is_none()).then_some(usage))
            }
            None => Ok(None),
        }
    }

    /// The upstream's timing (its source stream's `timing`), `None` while an "auto" source
    /// is not told yet.
    #[getter]
    fn timing<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let source = errors::shared(slf, "translator")?
            .source
            .as_ref()
            .map(|s| s.clone_ref(slf.py()));
        source
            .map(|s| s.bind(slf.py()).getattr("timing"))
            .transpose()
    }

    /// The framing of the output: `"sse"`, or `"eventstream"` (Bedrock's
    /// InvokeModelWithResponseStream `chunk` messages).
    #[getter]
    fn target_framing(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        let mut this = errors::exclusive(slf, "translator")?;
        Ok(if this.translation()?.writes_eventstream() {
            "eventstream"
        } else {
            "sse"
        })
    }

    /// The target dialect's name.
    #[getter]
    fn target_dialect(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        let mut this = errors::exclusive(slf, "translator")?;
        Ok(this.translation()?.target().name())
    }

    /// What the target could not hold and was dropped, once per kind (a new list).
    #[getter]
    fn notes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let mut this = errors::exclusive(slf, "translator")?;
        let too_large = this.too_large;
        let mut notes: Vec<String> = this.translation()?.notes().to_vec();
        if too_large {
            notes.push("upstream events larger than max_event_size (dropped)".into());
        }
        PyList::new(slf.py(), notes)
    }
}

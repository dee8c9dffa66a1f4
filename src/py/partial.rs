//! `ssewire.PartialJSON`: the incremental partial-JSON reader of `crate::json::partial` for Python;
//! [`Mirror`], the Python value kept up to date from a reader's events; and [`Partials`], the
//! values of a dialect stream's tool-call arguments (`partial_arguments`).
//!
//! Carried across calls: the core parser (which logs edit events) and the mirror: the root
//! object, the open Python containers with the current key of each dict, and whether the last
//! value of the innermost container is a placed unfinished string. Cost: a feed parses its
//! fragment in Rust, then applies the events it logged (one Python object per completed value);
//! reading `value` builds at most one `str` (the unfinished string, when it changed).

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString};

use super::input::Input;
use super::strings::Names;
use crate::json::partial::changes::{Change, Changes, Value};
use crate::json::partial::{Error, Event, Kind, Number, PartialJson, SoFar};
use std::sync::Arc;

enum Frame {
    List(Py<PyList>),
    /// A dict and the key its next value goes under.
    Dict(Py<PyDict>, Option<Py<PyString>>),
}

/// The Python value of a [`PartialJson`] parser, updated in place from its events.
#[derive(Default)]
pub struct Mirror {
    root: Option<Py<PyAny>>,
    stack: Vec<Frame>,
    /// Length in bytes of the unfinished string placed as the innermost container's last
    /// value (or as the root); `None` when no unfinished string is placed.
    placed: Option<usize>,
    /// Keys repeat from object to object (an array of records): one `str` per key name.
    keys: Names,
}

impl Mirror {
    /// Puts `obj` where the next value goes; `replace` overwrites a placed unfinished string.
    fn attach(&mut self, py: Python<'_>, obj: Py<PyAny>) -> PyResult<()> {
        let replace = self.placed.take().is_some();
        match self.stack.last() {
            None => self.root = Some(obj),
            Some(Frame::List(list)) => {
                let list = list.bind(py);
                if replace {
                    list.set_item(list.len().saturating_sub(1), obj)?;
                } else {
                    list.append(obj)?;
                }
            }
            Some(Frame::Dict(dict, key)) => {
                if let Some(key) = key {
                    dict.bind(py).set_item(key, obj)?;
                }
            }
        }
        Ok(())
    }

    /// Applies the events `core` logged since the last call.
    pub fn apply(&mut self, py: Python<'_>, core: &mut PartialJson) -> PyResult<()> {
        self.apply_events(py, core.drain_events())
    }

    /// Applies `events`, in order.
    pub fn apply_events<E: std::borrow::Borrow<Event>>(
        &mut self,
        py: Python<'_>,
        events: impl IntoIterator<Item = E>,
    ) -> PyResult<()> {
        for event in events {
            let event = event.borrow();
            let obj = match event {
                Event::Open(Kind::Array) => {
                    let list = PyList::empty(py).unbind();
                    self.attach(py, list.clone_ref(py).into_any())?;
                    self.stack.push(Frame::List(list));
                    continue;
                }
                Event::Open(Kind::Object) => {
                    let dict = PyDict::new(py).unbind();
                    self.attach(py, dict.clone_ref(py).into_any())?;
                    self.stack.push(Frame::Dict(dict, None));
                    continue;
                }
                Event::Close => {
                    self.stack.pop();
                    continue;
                }
                Event::Key(k) => {
                    if let Some(Frame::Dict(_, key)) = self.stack.last_mut() {
                        *key = Some(self.keys.get(py, k.as_bytes()));
                    }
                    continue;
                }
                Event::Str(s) => PyString::new(py, s).into_any().unbind(),
                Event::Num(n) => number(py, n)?,
                Event::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
                Event::Null => py.None(),
            };
            self.attach(py, obj)?;
        }
        Ok(())
    }

    /// The value: places the unfinished string first if it changed since it was last placed.
    pub fn value(&mut self, py: Python<'_>, core: &PartialJson) -> PyResult<Py<PyAny>> {
        if let Some(s) = core.open_string() {
            if self.placed != Some(s.len()) {
                let obj = PyString::new(py, s).into_any().unbind();
                self.attach(py, obj)?;
                self.placed = Some(s.len());
            }
        }
        Ok(self
            .root
            .as_ref()
            .map_or_else(|| py.None(), |r| r.clone_ref(py)))
    }
}

/// A complete number as Python reads it.
fn number(py: Python<'_>, n: &Number) -> PyResult<Py<PyAny>> {
    Ok(match n {
        Number::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Number::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
        Number::Big(s) => big_int(py, s),
    })
}

/// The Python objects of [`Change`]s: `(op, path, value)` tuples. The path of a string that
/// grows is one `str` shared by its appends (a read costs the new text, not the path again).
#[derive(Default)]
struct ChangeObjects {
    path: Option<(Arc<str>, Py<PyString>)>,
}

impl ChangeObjects {
    fn path(&mut self, py: Python<'_>, path: &Arc<str>) -> Py<PyString> {
        if let Some((p, obj)) = &self.path {
            if Arc::ptr_eq(p, path) {
                return obj.clone_ref(py);
            }
        }
        let obj = PyString::new(py, path).unbind();
        self.path = Some((path.clone(), obj.clone_ref(py)));
        obj
    }

    fn list<'py>(&mut self, py: Python<'py>, changes: Vec<Change>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for change in changes {
            let op = change.op();
            let path = self.path(py, change.path());
            let value: Py<PyAny> = match change {
                Change::Append(_, text) => PyString::new(py, &text).into_any().unbind(),
                Change::Add(_, v) | Change::Replace(_, v) => match v {
                    Value::Empty(Kind::Array) => PyList::empty(py).into_any().unbind(),
                    Value::Empty(Kind::Object) => PyDict::new(py).into_any().unbind(),
                    Value::Str(s) => PyString::new(py, &s).into_any().unbind(),
                    Value::Num(n) => number(py, &n)?,
                    Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
                    Value::Null => py.None(),
                },
            };
            list.append((op, path, value))?;
        }
        Ok(list)
    }
}

/// An integer too large for 64 bits, as the decoder reads one (`crate::py::json`): exact as a
/// Python `int`, or (past the digits CPython converts, 4300 by default) the float `json.loads`
/// would then give, never an exception.
fn big_int(py: Python<'_>, digits: &str) -> Py<PyAny> {
    match py.get_type::<PyInt>().call1((digits,)) {
        Ok(int) => int.unbind(),
        Err(_) => PyFloat::new(py, digits.parse().unwrap_or(f64::INFINITY))
            .into_any()
            .unbind(),
    }
}

/// The Python values of a stream's tool-call arguments, built only for the calls
/// `partial_arguments` is asked about: per call, a reader with events fed the text the fold's
/// reader received since the last read, and its mirror (so a read costs the new text).
#[derive(Default)]
pub struct Partials(HashMap<(i64, i64), (u64, PartialJson, Mirror)>);

impl Partials {
    /// The value of the call `key`, whose arguments the fold reads with `source`.
    pub fn read(
        &mut self,
        py: Python<'_>,
        key: (i64, i64),
        source: &dyn SoFar,
    ) -> PyResult<Py<PyAny>> {
        let entry = self
            .0
            .entry(key)
            .or_insert_with(|| (source.id(), PartialJson::with_events(), Mirror::default()));
        if entry.0 != source.id() {
            // A new call under the same index (a second content_block_start): start over.
            *entry = (source.id(), PartialJson::with_events(), Mirror::default());
        }
        let (_, core, mirror) = entry;
        let new = source.text().get(core.text().len()..).unwrap_or_default();
        // Arguments that are not JSON: the value keeps what was valid (the stream records no
        // error for them; the raw text is in the result).
        let _ = core.feed_str(new);
        mirror.apply(py, core)?;
        mirror.value(py, core)
    }
}

/// `json.JSONDecodeError` (a `ValueError`) for `err`, with the text so far as its document.
pub fn decode_error(py: Python<'_>, err: &Error, text: &str) -> PyErr {
    let made = py
        .import("json")
        .and_then(|json| json.getattr("JSONDecodeError"))
        .and_then(|class| class.call1((err.msg, text, err.pos)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyValueError::new_err(err.to_string()),
    }
}

/// One JSON document arriving as fragments (streamed tool arguments, structured output).
///
/// `feed()` does work proportional to the fragment. `value` is the document so far: open
/// arrays and objects closed, an unfinished string up to its last complete character, an
/// unfinished number, literal or key (or a key without its value yet) left out; `None` before
/// anything is known. Every list and dict in `value` is the same object from read to read,
/// updated in place (items appended, keys added); scalars are never changed once placed,
/// except the unfinished string, which is replaced by a new `str` as it grows (so a read while
/// a long string is open costs that string's length). Nesting deeper than 128 levels is a
/// `json.JSONDecodeError`, as any text that is not JSON: the value keeps what came before it.
#[pyclass(module = "ssewire", name = "PartialJSON")]
pub struct PartialJSON {
    core: PartialJson,
    mirror: Mirror,
    /// The edits of the value (what `feed()` returns), and those not taken yet (`finish()`'s,
    /// or those of a feed that raised), given by `changes()`.
    changes: Changes,
    pending: Vec<Change>,
    objects: ChangeObjects,
    /// The pointers outgrew their budget: no more edits can be given (the value still can).
    too_long: bool,
    /// The error raised once the text stopped being JSON, raised again by later feeds (the
    /// same object: no copy of the text per call).
    error: Option<Py<PyAny>>,
    /// A high surrogate that ended the last `str` fragment (a pair may be cut between two).
    high: Option<u16>,
}

impl PartialJSON {
    /// Applies the parser's new events to the value, and adds their edits to `pending`.
    fn update(&mut self, py: Python<'_>) -> PyResult<()> {
        let events: Vec<Event> = self.core.drain_events().collect();
        self.mirror.apply_events(py, &events)?;
        if self.too_long {
            return Ok(());
        }
        let open = self.core.open_string();
        let text_len = self.core.text().len();
        if self
            .changes
            .take(events, open, text_len, &mut self.pending)
            .is_err()
        {
            self.too_long = true;
            self.pending.clear();
        }
        Ok(())
    }

    /// The edits not taken yet, as a list (`[]` after the pointer budget ran out: see
    /// `update`; `feed()` raises then).
    fn take_changes<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let pending = std::mem::take(&mut self.pending);
        self.objects.list(py, pending)
    }

    fn too_long_error(&self) -> PyErr {
        PyValueError::new_err(crate::json::partial::changes::TooLong.to_string())
    }

    fn failed(&mut self, py: Python<'_>, err: &Error) -> PyErr {
        let exc = decode_error(py, err, self.core.text());
        self.error = Some(exc.value(py).clone().into_any().unbind());
        exc
    }

    fn raise_again(&self, py: Python<'_>) -> Option<PyErr> {
        self.error
            .as_ref()
            .map(|e| PyErr::from_value(e.bind(py).clone()))
    }

    /// A held high surrogate alone after all: U+FFFD.
    fn flush_high(&mut self) -> Result<(), Error> {
        match self.high.take() {
            Some(_) => self.core.feed_str("\u{FFFD}"),
            None => Ok(()),
        }
    }

    fn feed_text(&mut self, fragment: &Bound<'_, PyAny>) -> PyResult<Result<(), Error>> {
        if let Ok(s) = fragment.cast::<PyString>() {
            if self.high.is_none() {
                if let Ok(text) = s.to_str() {
                    return Ok(self.core.feed_str(text));
                }
            }
            let (text, high) = super::strings::utf16_text(s, self.high.take())?;
            self.high = high;
            return Ok(self.core.feed_str(&text));
        }
        let input = Input::extract(fragment)?;
        if let Err(e) = self.flush_high() {
            return Ok(Err(e));
        }
        Ok(self.core.feed_bytes(input.as_bytes()))
    }
}

#[pymethods]
impl PartialJSON {
    #[new]
    fn new() -> Self {
        PartialJSON {
            core: PartialJson::with_events(),
            mirror: Mirror::default(),
            changes: Changes::new(),
            pending: Vec::new(),
            objects: ChangeObjects::default(),
            too_long: false,
            error: None,
            high: None,
        }
    }

    /// Feeds a fragment: `str`, or UTF-8 `bytes`/`bytearray`/`memoryview` cut anywhere.
    /// Returns what changed in `value` since the last feed: `(op, path, value)` tuples, `path`
    /// a JSON Pointer (`""` the root): `("add", path, value)` a key or item appeared (a
    /// container appears empty, its items follow), `("append", path, text)` the unfinished
    /// string at `path` grew, `("replace", path, value)` a key came again. Applied in order to
    /// `None` they rebuild `value`. Raises `json.JSONDecodeError` (a `ValueError`) once the
    /// text cannot be JSON; `value` then keeps what was valid before the error (its changes
    /// wait in `changes()`), and later feeds raise the same error. A `ValueError` too when the
    /// changes' pointers would outgrow 256 times the text (keys far too long for the number of
    /// values under them); `value` still follows the document.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        fragment: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let mut this = super::errors::exclusive(slf, "PartialJSON")?;
        if let Some(err) = this.raise_again(py) {
            return Err(err);
        }
        let result = this.feed_text(fragment)?;
        let this = &mut *this;
        this.update(py)?;
        result.map_err(|e| this.failed(py, &e))?;
        if this.too_long {
            return Err(this.too_long_error());
        }
        this.take_changes(py)
    }

    /// The changes not taken by a `feed()` yet: those `finish()` made (a top-level number
    /// that the end completes), or those of a feed that raised; then `[]`.
    fn changes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let mut this = super::errors::exclusive(slf, "PartialJSON")?;
        this.take_changes(slf.py())
    }

    /// The document so far (see the class docs); `None` before anything is known.
    #[getter]
    fn value(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let mut this = super::errors::exclusive(slf, "PartialJSON")?;
        let this = &mut *this;
        this.mirror.value(slf.py(), &this.core)
    }

    /// Whether one whole document has been received.
    #[getter]
    fn complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(super::errors::shared(slf, "PartialJSON")?.core.complete())
    }

    /// Ends the input and returns the final value; `json.JSONDecodeError` (a `ValueError`,
    /// with `json.loads`'s position) when the text is not one JSON document.
    fn finish(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let mut this = super::errors::exclusive(slf, "PartialJSON")?;
        if let Some(err) = this.raise_again(py) {
            return Err(err);
        }
        let this = &mut *this;
        let result = this.flush_high().and_then(|()| this.core.finish());
        this.update(py)?;
        result.map_err(|e| this.failed(py, &e))?;
        this.mirror.value(py, &this.core)
    }

    /// The garbage collector's view: the stored error (whose traceback reaches the frames that
    /// hold this object: a cycle only the collector can break) and the value's root.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(error) = &self.error {
            visit.call(error)?;
        }
        if let Some(root) = &self.mirror.root {
            visit.call(root)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.error = None;
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let value = Self::value(slf)?;
        let complete = Self::complete(slf)?;
        Ok(format!(
            "PartialJSON(value={}, complete={})",
            value.bind(py).repr()?,
            if complete { "True" } else { "False" }
        ))
    }
}

//! JSON text to Python objects, in one pass and without an intermediate tree. Used only for
//! the rarely read parts of items (usage, logprobs, vendor extras, error bodies), which are
//! kept as raw JSON text and converted when read. Nesting is bounded by serde_json's recursion
//! limit, so hostile input cannot overflow the stack.

use std::fmt;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::dialect::json::Str;

/// Converts one JSON document to Python objects (dict, list, str, int, float, bool, None).
pub fn to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(py)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| PyValueError::new_err(format!("invalid JSON: {e}")))?;
    Ok(value)
}

/// Like [`to_py`], for a document that must be an object; anything else is wrapped as
/// `{"value": ...}` so callers always get a dict.
pub fn to_py_dict<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let value = to_py(py, text)?;
    match value.cast_into::<PyDict>() {
        Ok(dict) => Ok(dict),
        Err(e) => {
            let dict = PyDict::new(py);
            dict.set_item("value", e.into_inner())?;
            Ok(dict)
        }
    }
}

/// A JSON-backed attribute of an item: `None`, or its JSON text decoded (on each read).
pub fn lazy<'py>(py: Python<'py>, text: Option<&str>) -> PyResult<Option<Bound<'py, PyAny>>> {
    text.map(|t| to_py(py, t)).transpose()
}

struct Seed<'py>(Python<'py>);

fn py_err<E: de::Error>(e: PyErr) -> E {
    E::custom(e.to_string())
}

impl<'de, 'py> DeserializeSeed<'de> for Seed<'py> {
    type Value = Bound<'py, PyAny>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'py> Visitor<'de> for Seed<'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.0, v).to_owned().into_any())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        match v.into_pyobject(self.0) {
            Ok(int) => Ok(int.into_any()),
            Err(never) => match never {},
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        match v.into_pyobject(self.0) {
            Ok(int) => Ok(int.into_any()),
            Err(never) => match never {},
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(PyFloat::new(self.0, v).into_any())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, v).into_any())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.None().into_bound(self.0))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.0);
        while let Some(item) = seq.next_element_seed(Seed(self.0))? {
            list.append(item).map_err(py_err)?;
        }
        Ok(list.into_any())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0);
        while let Some(key) = map.next_key::<Str<'de>>()? {
            let value = map.next_value_seed(Seed(self.0))?;
            dict.set_item(key.as_str(), value).map_err(py_err)?;
        }
        Ok(dict.into_any())
    }
}

/// Converts a fold's result tree to Python objects (`dict`, `list`, `str`, `int`, `bool`,
/// `None`; raw JSON leaves through [`to_py`]). The tree's depth is the fold's own shape plus
/// that of JSON already decoded once, so the recursion is bounded.
pub fn out_to_py<'py>(py: Python<'py>, value: &crate::fold::Out) -> PyResult<Bound<'py, PyAny>> {
    use crate::fold::Out;
    Ok(match value {
        Out::Null => py.None().into_bound(py),
        Out::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Out::Int(i) => match i.into_pyobject(py) {
            Ok(int) => int.into_any(),
            Err(never) => match never {},
        },
        Out::Str(s) => PyString::new(py, s).into_any(),
        Out::Json(text) => to_py(py, text)?,
        Out::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(out_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Out::Map(map) => {
            let dict = PyDict::new(py);
            for (key, value) in map.iter() {
                dict.set_item(key, out_to_py(py, value)?)?;
            }
            dict.into_any()
        }
    })
}

//! `ssewire._core._translate_request`: a request body (JSON text) translated between dialects
//! by `crate::request`; `RequestError` for a body that is not a request of its dialect.
//! Converts only: the Python wrapper (`ssewire._request`) encodes the dict and decodes the
//! result.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::translate::Dialect;

pyo3::import_exception!(ssewire._errors, RequestError);

fn dialect(name: &str, role: &str) -> PyResult<Dialect> {
    Dialect::parse(name)
        .filter(|d| d.spec().requests)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown {role} dialect {:?}: expected {}",
                name.chars().take(40).collect::<String>(),
                crate::dialect::registry::expected_requests(None)
            ))
        })
}

fn request_error(py: Python<'_>, message: &str, path: &str) -> PyErr {
    let class: Bound<'_, PyType> = py.get_type::<RequestError>();
    match class.call1((message, path)) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Translates `body` (the JSON text of a request of `source`) into `target`: the target's
/// body as JSON text, its endpoint path, and the notes.
#[pyfunction]
#[pyo3(name = "_translate_request", signature = (body, source, target, model = None, framing = "sse", stored = None))]
pub fn translate_request(
    py: Python<'_>,
    body: &str,
    source: &str,
    target: &str,
    model: Option<&str>,
    framing: &str,
    stored: Option<crate::request::Stored>,
) -> PyResult<(String, String, Vec<String>)> {
    let (source, target) = (dialect(source, "source")?, dialect(target, "target")?);
    let invoke = match framing {
        "sse" => false,
        "eventstream" if target.spec().invoke_paths.is_some() => true,
        _ => {
            return Err(PyValueError::new_err(format!(
                "framing {:?}: expected \"sse\", or \"eventstream\" for a Messages target (Bedrock's InvokeModel form)",
                framing.chars().take(40).collect::<String>()
            )))
        }
    };
    let value: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| request_error(py, &format!("the body is not JSON: {e}"), "$"))?;
    let stored = stored.unwrap_or_default();
    let translated =
        crate::request::translate_framed(&value, source, target, model, invoke, &stored)
            .map_err(|e| request_error(py, &e.message, &e.path))?;
    Ok((
        translated.body.to_string(),
        translated.path,
        translated.notes,
    ))
}

/// An upstream's error response (`status`, `body` in dialect `source`) as a client of
/// `target` expects it: its status, body and content type (`crate::translate::error`).
#[pyfunction]
#[pyo3(name = "_translate_error")]
pub fn translate_error(
    status: i64,
    body: &[u8],
    source: &str,
    target: &str,
) -> PyResult<(u16, Vec<u8>, &'static str)> {
    let (source, target) = (dialect(source, "source")?, dialect(target, "target")?);
    let status = u16::try_from(status).unwrap_or(0);
    let e = crate::translate::error::translate_error(status, body, source, target);
    Ok((e.status, e.body, e.content_type))
}

/// The error object a client of `target` reads for a failure of HTTP `status` with
/// `message` (the gateway's own errors: 400, 401, 404, 408, 413, 502, 504).
#[pyfunction]
#[pyo3(name = "_error_body")]
pub fn error_body(status: u16, message: &str, target: &str) -> PyResult<Vec<u8>> {
    use crate::translate::error::{write_error, Class};
    let target = dialect(target, "target")?;
    let class = Class::from_status(status);
    Ok(write_error(target, status, class, message, None)
        .to_string()
        .into_bytes())
}

/// `model` as the one path segment that names it in a request line (percent-encoded; a
/// leading `models/` dropped); `RequestError` for a model name no provider accepts.
#[pyfunction]
#[pyo3(name = "_model_segment")]
pub fn model_segment(py: Python<'_>, model: &str) -> PyResult<String> {
    crate::request::check_model(model).map_err(|e| request_error(py, &e.message, &e.path))?;
    Ok(crate::request::model_segment(model))
}

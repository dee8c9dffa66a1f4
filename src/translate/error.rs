//! An upstream's error response in the words of a client of another dialect (API.md section
//! 10, `translate_error`), and the one table of error classes that the stream writers use too.
//!
//! Every dialect names the same few failures its own way: Anthropic by `error.type`
//! (`rate_limit_error`, `overloaded_error`, ...), OpenAI by `error.type` and `error.code`
//! (`invalid_request_error`, `rate_limit_exceeded`, ...), Google by `error.status`
//! (`RESOURCE_EXHAUSTED`, ...) beside the HTTP code. [`Class`] is that failure in neutral terms,
//! read from the names any of them sent or, failing that, from the HTTP status; each dialect
//! writes it back with its own names. The message crosses unchanged.

use serde_json::{json, Value};

use super::Dialect;

/// A failure, in neutral terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The request is malformed or not acceptable (400).
    InvalidRequest,
    /// The credentials are missing or wrong (401).
    Authentication,
    /// The credentials may not do this (403).
    Permission,
    /// The model or resource does not exist (404).
    NotFound,
    /// The request is too large (413).
    TooLarge,
    /// A rate limit or quota was hit (429).
    RateLimit,
    /// The service is overloaded or unavailable (503).
    Overloaded,
    /// The upstream timed out (504).
    Timeout,
    /// The upstream failed otherwise (500).
    Server,
}

impl Class {
    /// OpenAI's error body of this class (`code`: the upstream's own, kept where the class
    /// names none).
    pub fn openai_body(self, message: &str, code: Option<&str>) -> Value {
        let (type_, own) = self.openai();
        json!({"error": {
            "message": message,
            "type": type_,
            "param": null,
            "code": own.map(str::to_owned).or_else(|| code.map(str::to_owned)),
        }})
    }

    /// The class an error type or code names, in any dialect's words.
    pub fn from_name(name: &str) -> Option<Class> {
        Some(match name {
            "invalid_request_error"
            | "INVALID_ARGUMENT"
            | "invalid_prompt"
            | "context_length_exceeded"
            | "FAILED_PRECONDITION"
            | "OUT_OF_RANGE"
            | "validationException"
            | "ValidationException" => Class::InvalidRequest,
            "authentication_error" | "UNAUTHENTICATED" | "invalid_api_key" => Class::Authentication,
            "permission_error"
            | "PERMISSION_DENIED"
            | "accessDeniedException"
            | "AccessDeniedException" => Class::Permission,
            "not_found_error"
            | "NOT_FOUND"
            | "model_not_found"
            | "resourceNotFoundException"
            | "ResourceNotFoundException" => Class::NotFound,
            "request_too_large" => Class::TooLarge,
            "rate_limit_error"
            | "rate_limit_exceeded"
            | "RESOURCE_EXHAUSTED"
            | "insufficient_quota"
            | "throttlingException"
            | "ThrottlingException"
            | "serviceQuotaExceededException"
            | "tokens"
            | "requests" => Class::RateLimit,
            "overloaded_error"
            | "UNAVAILABLE"
            | "server_overloaded"
            | "serviceUnavailableException"
            | "ServiceUnavailableException" => Class::Overloaded,
            "timeout_error" | "DEADLINE_EXCEEDED" | "timeout" | "modelTimeoutException" => {
                Class::Timeout
            }
            "api_error"
            | "server_error"
            | "INTERNAL"
            | "internalServerException"
            | "InternalServerException"
            | "modelStreamErrorException" => Class::Server,
            _ => return None,
        })
    }

    /// The class an HTTP status stands for.
    pub fn from_status(status: u16) -> Class {
        match status {
            401 => Class::Authentication,
            403 => Class::Permission,
            404 => Class::NotFound,
            413 => Class::TooLarge,
            429 => Class::RateLimit,
            503 | 529 => Class::Overloaded,
            504 => Class::Timeout,
            400..=499 => Class::InvalidRequest,
            _ => Class::Server,
        }
    }

    /// The HTTP status of the class, where nothing else said one.
    pub fn status(self) -> u16 {
        match self {
            Class::InvalidRequest => 400,
            Class::Authentication => 401,
            Class::Permission => 403,
            Class::NotFound => 404,
            Class::TooLarge => 413,
            Class::RateLimit => 429,
            Class::Overloaded => 503,
            Class::Timeout => 504,
            Class::Server => 500,
        }
    }

    /// Anthropic's `error.type`.
    pub fn anthropic(self) -> &'static str {
        match self {
            Class::InvalidRequest => "invalid_request_error",
            Class::Authentication => "authentication_error",
            Class::Permission => "permission_error",
            Class::NotFound => "not_found_error",
            Class::TooLarge => "request_too_large",
            Class::RateLimit => "rate_limit_error",
            Class::Overloaded => "overloaded_error",
            Class::Timeout => "timeout_error",
            Class::Server => "api_error",
        }
    }

    /// Amazon Bedrock's exception type (an event stream exception's `:exception-type`).
    pub fn bedrock(self) -> &'static str {
        match self {
            Class::InvalidRequest | Class::TooLarge => "validationException",
            Class::Authentication | Class::Permission => "accessDeniedException",
            Class::NotFound => "resourceNotFoundException",
            Class::RateLimit => "throttlingException",
            Class::Overloaded => "serviceUnavailableException",
            Class::Timeout => "modelTimeoutException",
            Class::Server => "internalServerException",
        }
    }

    /// OpenAI's `error.type` and `error.code`.
    pub fn openai(self) -> (&'static str, Option<&'static str>) {
        match self {
            Class::InvalidRequest | Class::TooLarge => ("invalid_request_error", None),
            Class::Authentication => ("invalid_request_error", Some("invalid_api_key")),
            Class::Permission => ("invalid_request_error", Some("permission_denied")),
            Class::NotFound => ("invalid_request_error", Some("model_not_found")),
            Class::RateLimit => ("rate_limit_error", Some("rate_limit_exceeded")),
            Class::Overloaded => ("server_error", Some("server_overloaded")),
            Class::Timeout => ("server_error", Some("timeout")),
            Class::Server => ("server_error", None),
        }
    }

    /// Google's code and `error.status`.
    pub fn google(self) -> (u16, &'static str) {
        match self {
            Class::InvalidRequest | Class::TooLarge => (400, "INVALID_ARGUMENT"),
            Class::Authentication => (401, "UNAUTHENTICATED"),
            Class::Permission => (403, "PERMISSION_DENIED"),
            Class::NotFound => (404, "NOT_FOUND"),
            Class::RateLimit => (429, "RESOURCE_EXHAUSTED"),
            Class::Overloaded => (503, "UNAVAILABLE"),
            Class::Timeout => (504, "DEADLINE_EXCEEDED"),
            Class::Server => (500, "INTERNAL"),
        }
    }
}

/// An error response for a client: its status, body and content type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body: the error object in the client dialect's form, as JSON text.
    pub body: Vec<u8>,
    /// The body's content type.
    pub content_type: &'static str,
}

/// The longest message carried over from a body that is not an error object (its text).
const MAX_RAW_MESSAGE: usize = 2000;

/// What an error body says: its message, type and code (as strings), from any dialect's
/// error object (`{"error": {...}}`, Anthropic's `{"type": "error", "error": {...}}`, Google's
/// `[{"error": {...}}]`, a bare `{"message": ...}`); for a body that is none of them, its text.
fn read_error(body: &[u8]) -> (String, Option<String>, Option<String>) {
    let text = || {
        let t = String::from_utf8_lossy(body);
        let t = t.trim();
        let mut cut: String = t.chars().take(MAX_RAW_MESSAGE).collect();
        if cut.len() < t.len() {
            cut.push_str("...");
        }
        cut
    };
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return (text(), None, None);
    };
    let value = match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        other => other,
    };
    let inner = match value.get("error") {
        Some(e @ Value::Object(_)) => e,
        Some(Value::String(s)) => return (s.clone(), None, None),
        _ => &value,
    };
    let as_text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = as_text(inner.get("message")).unwrap_or_else(text);
    let type_ = as_text(inner.get("type")).or_else(|| as_text(inner.get("status")));
    // A numeric code is Google's copy of the HTTP status, not a name.
    let code = inner.get("code").and_then(Value::as_str).map(str::to_owned);
    (message, type_, code)
}

/// The class of an upstream error: what its type or code names, else its status's.
pub fn classify(status: u16, type_: Option<&str>, code: Option<&str>) -> Class {
    type_
        .and_then(Class::from_name)
        .or_else(|| code.and_then(Class::from_name))
        .unwrap_or_else(|| Class::from_status(status))
}

/// The error object of `class` with `message`, as a client of `target` reads it (`code`: the
/// upstream's own code, kept for OpenAI clients where the class has none).
pub fn write_error(
    target: Dialect,
    status: u16,
    class: Class,
    message: &str,
    code: Option<&str>,
) -> Value {
    super::write::error_body(target, status, class, message, code)
}

/// An upstream's error response (`status`, `body`, in dialect `source`) as a client of
/// `target` expects it: the same status (Anthropic's 529 only for Messages clients: the others
/// have no such code, and get 503; for anything that is no error status, such as an error
/// that came inside a 200 stream, the status of the error's class, else 502), the message,
/// type and code mapped. A body of the client's own dialect is kept as it is.
pub fn translate_error(
    status: u16,
    body: &[u8],
    source: Dialect,
    target: Dialect,
) -> ErrorResponse {
    let (message, type_, code) = read_error(body);
    let named = type_
        .as_deref()
        .and_then(Class::from_name)
        .or_else(|| code.as_deref().and_then(Class::from_name));
    let status = match status {
        529 if target.spec().family != crate::dialect::registry::Family::Anthropic => 503,
        400..=599 => status,
        _ => named.map_or(502, Class::status),
    };
    let keep = source == target && serde_json::from_slice::<Value>(body).is_ok();
    let body = if keep {
        body.to_vec()
    } else {
        let class = named.unwrap_or_else(|| Class::from_status(status));
        write_error(target, status, class, &message, code.as_deref())
            .to_string()
            .into_bytes()
    };
    ErrorResponse {
        status,
        body,
        content_type: "application/json",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(e: &ErrorResponse) -> Value {
        serde_json::from_slice(&e.body).unwrap()
    }

    #[test]
    fn an_openai_rate_limit_for_each_client() {
        let body = br#"{"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#;
        let m = translate_error(429, body, Dialect::Chat, Dialect::Messages);
        assert_eq!(m.status, 429);
        assert_eq!(
            json_of(&m),
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}})
        );
        let g = translate_error(429, body, Dialect::Chat, Dialect::Gemini);
        assert_eq!(
            json_of(&g),
            json!({"error": {"code": 429, "message": "Rate limit reached", "status": "RESOURCE_EXHAUSTED"}})
        );
        let same = translate_error(429, body, Dialect::Chat, Dialect::Chat);
        assert_eq!(same.body, body.to_vec());
    }

    #[test]
    fn anthropic_overloaded_and_google_errors() {
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let c = translate_error(529, body, Dialect::Messages, Dialect::Chat);
        assert_eq!(c.status, 503);
        assert_eq!(json_of(&c)["error"]["type"], "server_error");
        assert_eq!(json_of(&c)["error"]["message"], "Overloaded");
        assert_eq!(
            translate_error(529, body, Dialect::Messages, Dialect::Messages).status,
            529
        );
        let google =
            br#"[{"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}]"#;
        let r = translate_error(400, google, Dialect::Gemini, Dialect::Responses);
        assert_eq!(
            json_of(&r),
            json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}})
        );
    }

    #[test]
    fn a_body_that_is_no_error_object_keeps_its_text() {
        let r = translate_error(
            502,
            b"<html>Bad gateway</html>",
            Dialect::Chat,
            Dialect::Messages,
        );
        assert_eq!(json_of(&r)["error"]["message"], "<html>Bad gateway</html>");
        assert_eq!(json_of(&r)["error"]["type"], "api_error");
        let odd = translate_error(200, b"", Dialect::Gemini, Dialect::Gemini);
        assert_eq!(odd.status, 502);
        let in_stream = br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}"#;
        assert_eq!(
            translate_error(200, in_stream, Dialect::Messages, Dialect::Chat).status,
            429
        );
        assert_eq!(json_of(&odd)["error"]["status"], "INTERNAL");
    }
}

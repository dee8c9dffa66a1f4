//! A translation's output in Amazon Bedrock's InvokeModelWithResponseStream framing: each
//! event the target writer wrote becomes an event stream `chunk` message whose payload is
//! `{"bytes": base64 of the event's JSON}` (what boto3's `invoke_model_with_response_stream`
//! and the Anthropic SDK's Bedrock client read); an error event becomes an exception message
//! (`:exception-type` by the error's class, `{"message": ...}`), after which nothing is
//! written.
//!
//! Carried across takes: the framer of the written SSE (the writers write whole events, so it
//! holds nothing between takes), how much of the writer's buffer was converted, and the output.

use crate::framing::eventstream::{encode, Value};
use crate::framing::sse::{Framer, RawEvent};
use crate::translate::error::{classify, Class};

/// The output converter.
#[derive(Debug)]
pub struct EventStreamOut {
    framer: Framer,
    out: Vec<u8>,
    converted: usize,
    /// Each event is a message of its own type (Converse), not a `chunk`.
    native: bool,
}

impl Default for EventStreamOut {
    fn default() -> Self {
        EventStreamOut {
            framer: Framer::new(crate::framing::sse::DEFAULT_MAX_EVENT_SIZE),
            out: Vec::new(),
            converted: 0,
            native: false,
        }
    }
}

impl EventStreamOut {
    /// The converter of a dialect written in the event stream framing itself (Converse):
    /// each written event becomes a message whose `:event-type` is its name and whose
    /// payload is its data.
    pub fn native() -> Self {
        EventStreamOut {
            native: true,
            ..EventStreamOut::default()
        }
    }

    /// The event stream messages of what `sse` (the writer's whole buffer since the last
    /// [`EventStreamOut::clear`]) holds, converting only what was not converted yet.
    pub fn convert(&mut self, sse: &[u8]) -> &[u8] {
        let new = sse.get(self.converted..).unwrap_or_default();
        self.converted = sse.len();
        let mut events = Vec::new();
        let _ = self.framer.feed(new, &mut events);
        for event in &events {
            self.message(event);
        }
        &self.out
    }

    /// Forgets the output (the writer's buffer was cleared too).
    pub fn clear(&mut self) {
        self.out.clear();
        self.converted = 0;
    }

    fn message(&mut self, event: &RawEvent<'_>) {
        let data = event.data.as_ref();
        if let Some((class, message)) = error_of(event.event_type(), data) {
            let payload = serde_json::json!({ "message": message }).to_string();
            let headers = [
                (":exception-type", Value::String(class.bedrock())),
                (":content-type", Value::String("application/json")),
                (":message-type", Value::String("exception")),
            ];
            encode(&headers, payload.as_bytes(), &mut self.out);
            return;
        }
        if data == b"[DONE]" {
            return; // chat's sentinel: the end of the body ends a Bedrock stream
        }
        if self.native {
            let kind = String::from_utf8_lossy(event.event_type());
            let headers = [
                (":event-type", Value::String(&kind)),
                (":content-type", Value::String("application/json")),
                (":message-type", Value::String("event")),
            ];
            encode(&headers, data, &mut self.out);
            return;
        }
        let mut payload = String::with_capacity(data.len() * 4 / 3 + 16);
        payload.push_str(r#"{"bytes":""#);
        payload.push_str(&crate::base64::encode(data));
        payload.push_str(r#""}"#);
        let headers = [
            (":event-type", Value::String("chunk")),
            (":content-type", Value::String("application/json")),
            (":message-type", Value::String("event")),
        ];
        encode(&headers, payload.as_bytes(), &mut self.out);
    }
}

/// The class and message of an error event the writers write (`event: error` or a JSON
/// document with an `error` object or `"type": "error"`).
fn error_of(event: &[u8], data: &[u8]) -> Option<(Class, String)> {
    let doc: serde_json::Value = serde_json::from_slice(data).ok()?;
    let error = match doc.get("error") {
        Some(e) if e.is_object() => e,
        _ if event == b"error" => &doc,
        _ => return None,
    };
    let text = |key: &str| error.get(key).and_then(serde_json::Value::as_str);
    let status = error
        .get("code")
        .and_then(serde_json::Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(500);
    let class = classify(
        status,
        text("type").or_else(|| text("status")),
        text("code"),
    );
    let message = text("message").unwrap_or("the upstream failed").to_owned();
    Some((class, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::eventstream::Decoder;

    #[test]
    fn events_become_chunks_and_errors_exceptions() {
        let sse = b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n\
                    event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n";
        let mut out = EventStreamOut::default();
        let bytes = out.convert(sse).to_vec();
        assert_eq!(out.convert(sse), &bytes[..], "nothing converted twice");
        let mut d = Decoder::new(1 << 20);
        let mut got = Vec::new();
        d.feed(&bytes, |m| {
            let m = m.unwrap();
            got.push((
                m.string(":message-type").map(str::to_owned),
                m.string(":exception-type").map(str::to_owned),
                String::from_utf8(m.payload.to_vec()).unwrap(),
            ))
        });
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0.as_deref(), Some("event"));
        let b64 = crate::base64::encode(br#"{"type":"message_start"}"#);
        assert_eq!(got[0].2, format!(r#"{{"bytes":"{b64}"}}"#));
        assert_eq!(got[1].0.as_deref(), Some("exception"));
        assert_eq!(got[1].1.as_deref(), Some("serviceUnavailableException"));
        assert_eq!(got[1].2, r#"{"message":"busy"}"#);
    }
}

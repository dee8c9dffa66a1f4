//! Amazon Bedrock's `InvokeModelWithResponseStream` framing in front of a dialect's stream:
//! the body is AWS event stream messages (`crate::framing::eventstream`), each `chunk` event's payload
//! `{"bytes": base64, "p": padding}` one document of the model's own dialect (Anthropic
//! Messages for Claude), read by the same [`Stream::convert`] an SSE frame goes to. An
//! exception message (`:message-type` `exception`: `throttlingException`,
//! `modelStreamErrorException`, ...; or `error`) is the stream's error; a framing fault (a bad
//! CRC, a length that cannot be) is an error too, and the framing stops there.
//!
//! Carried across reads: the event stream decoder (a message cut across reads, at most
//! `max_event_size` bytes). Cost: each payload is decoded from base64 once into the text the
//! dialect decodes.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Dialect, Frame, Reader, Sink, Stream};
use crate::dialect::ErrorInfo;
use crate::framing::eventstream::{Decoder, Fault, Message};

/// What one event stream message is to the dialect's stream.
enum Piece {
    /// A document of the dialect, with its event name when the message's `:event-type`
    /// names the event (Converse).
    Doc(Option<String>, String),
    /// An error the service sent, or a framing fault.
    Error {
        message: String,
        type_: String,
        code: Option<String>,
        raw: Option<String>,
    },
    /// A `chunk` whose payload does not hold a document.
    Malformed(String),
    /// An event of another type: nothing of the dialect.
    Other,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    bytes: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Said<'a> {
    #[serde(borrow, alias = "Message")]
    message: Option<Cow<'a, str>>,
}

use crate::json::write::string as json_string;

impl Piece {
    fn of(read: Result<Message<'_>, Fault>, native: bool) -> Piece {
        let message = match read {
            Ok(m) => m,
            Err(fault) => {
                return Piece::Error {
                    message: fault.to_string(),
                    type_: crate::dialect::INVALID_RESPONSE_JSON.to_owned(),
                    code: Some(json_string(fault.kind())),
                    raw: None,
                }
            }
        };
        let payload = String::from_utf8_lossy(message.payload);
        match message.string(":message-type").unwrap_or("event") {
            "event" if native => match message.string(":event-type") {
                Some(kind) => Piece::Doc(Some(kind.to_owned()), payload.into_owned()),
                None => Piece::Malformed("an event message without :event-type".into()),
            },
            "event" => match message.string(":event-type") {
                Some("chunk") => match serde_json::from_str::<Chunk<'_>>(&payload) {
                    Ok(Chunk { bytes: Some(b64) }) => match crate::base64::decode(&b64) {
                        Some(bytes) => {
                            Piece::Doc(None, String::from_utf8_lossy(&bytes).into_owned())
                        }
                        None => Piece::Malformed("a chunk whose bytes are not base64".into()),
                    },
                    _ => Piece::Malformed(format!(
                        "a chunk whose payload is not {{\"bytes\": base64}}: {:.200}",
                        payload
                    )),
                },
                _ => Piece::Other,
            },
            kind => {
                // `exception`: its type in `:exception-type`, `{"message": ...}` as payload;
                // `error`: `:error-code` and `:error-message`.
                let type_ = message
                    .string(":exception-type")
                    .or_else(|| message.string(":error-code"))
                    .unwrap_or(kind);
                let said = serde_json::from_str::<Said<'_>>(&payload)
                    .ok()
                    .and_then(|s| s.message.map(Cow::into_owned));
                let text = said
                    .or_else(|| message.string(":error-message").map(str::to_owned))
                    .unwrap_or_else(|| type_.to_owned());
                let raw =
                    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&payload)
                        .ok()
                        .map(|_| payload.into_owned());
                Piece::Error {
                    message: text,
                    type_: json_string(type_),
                    code: None,
                    raw,
                }
            }
        }
    }
}

impl<R: Dialect> Stream<R> {
    /// Reads this stream's body as Bedrock's event stream framing from now on (before any
    /// byte is read).
    pub fn read_eventstream(&mut self) {
        let limit = self.max_event_size();
        self.eventstream = Some(Box::new(Decoder::new(limit)));
    }

    /// Whether the body is read as Bedrock's event stream framing.
    pub fn is_eventstream(&self) -> bool {
        self.eventstream.is_some()
    }

    /// [`Stream::run`] for an event stream body.
    pub(super) fn run_eventstream<S: Sink>(
        &mut self,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<(), S::Error>
    where
        R: Reader<S>,
    {
        let mut pieces = Vec::new();
        if let Some(decoder) = self.eventstream.as_mut() {
            decoder.feed(bytes, |read| {
                pieces.push(Piece::of(
                    read,
                    R::REGISTRY.spec().framing == crate::framing::Framing::EventStream,
                ))
            });
        }
        self.pieces(pieces, sink)
    }

    /// The end of an event stream body: a message started and not finished is a fault.
    pub(super) fn finish_eventstream<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error>
    where
        R: Reader<S>,
    {
        let fault = self.eventstream.as_mut().and_then(|d| d.finish());
        match fault {
            Some(fault) => self.pieces(
                vec![Piece::of(
                    Err(fault),
                    R::REGISTRY.spec().framing == crate::framing::Framing::EventStream,
                )],
                sink,
            ),
            None => Ok(()),
        }
    }

    fn pieces<S: Sink>(&mut self, pieces: Vec<Piece>, sink: &mut S) -> Result<(), S::Error>
    where
        R: Reader<S>,
    {
        for piece in pieces {
            match piece {
                Piece::Doc(event, data) => {
                    let frame = Frame {
                        event: event.map(|e| Cow::Owned(e.into_bytes())),
                        data: Cow::Owned(data),
                    };
                    self.convert(std::slice::from_ref(&frame), false, sink)?;
                }
                Piece::Error {
                    message,
                    type_,
                    code,
                    raw,
                } => {
                    sink.next_frame();
                    let info = ErrorInfo {
                        message: Cow::Owned(message),
                        type_: Some(&type_),
                        code: code.as_deref(),
                        raw: raw.as_deref(),
                    };
                    self.state
                        .report(sink, &info, None, raw.as_deref().unwrap_or_default())?;
                }
                Piece::Malformed(message) => {
                    sink.next_frame();
                    self.state.malformed(sink, message, Some(b"chunk"), "")?;
                }
                Piece::Other => {}
            }
        }
        Ok(())
    }
}

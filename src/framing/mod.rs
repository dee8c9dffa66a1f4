//! The framings a dialect body comes in, as one table: each dialect's registry row names its
//! [`Framing`], and [`Framing::body`] gives the reader of that framing. Below the dialects:
//! nothing here knows a dialect's JSON.
//!
//! - [`sse`]: the WHATWG event stream (bytes in, borrowed events out);
//! - [`eventstream`]: AWS's binary event stream (Bedrock);
//! - [`ndjson`]: one JSON document a line (Ollama);
//! - [`body`]: a response body read in its framing: the framer, or a bare JSON error body
//!   where the framing is not itself JSON, told apart by the first significant byte.

pub mod body;
pub mod eventstream;
pub mod ndjson;
pub mod sse;

/// How a dialect's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events; a body that opens with `{` or `[` is one JSON (error) document.
    Sse,
    /// Server-sent events, or a JSON array of documents read element by element (Gemini's
    /// `streamGenerateContent` without `?alt=sse`), each handed over as an unnamed event as
    /// soon as it closes. An element larger than the event size limit is dropped (`TooLarge`)
    /// and the elements after it are still read; values between elements that are not
    /// objects or arrays are skipped; what follows the array's closing bracket is ignored; an
    /// array not closed at the end is cut off. A body that opens with `{` is one JSON (error)
    /// document.
    SseOrArray,
    /// AWS's binary event stream, each message's `:event-type` its event's name; a body that
    /// cannot start one (a JSON error from the service, an HTML page from a proxy) is read as
    /// [`Framing::Sse`] reads it.
    EventStream,
    /// One JSON document a line: a body that opens with `{` is its first record (an error
    /// is a record of the dialect's, `{"error": ...}`).
    Ndjson,
}

impl Framing {
    /// The framing's name in `_core.DIALECTS` (what a gateway's content type and end-of-event
    /// rule go by).
    pub fn name(self) -> &'static str {
        match self {
            Framing::Sse | Framing::SseOrArray => "sse",
            Framing::EventStream => "eventstream",
            Framing::Ndjson => "ndjson",
        }
    }

    /// Whether a `[DONE]` record ends a stream in this framing (the SSE sentinel of OpenAI and
    /// its kin); in NDJSON every record is a JSON object, and a `[DONE]` line is malformed.
    pub fn has_done_marker(self) -> bool {
        !matches!(self, Framing::Ndjson)
    }

    /// The media type of a body in this framing (what a gateway answers a stream with).
    pub fn content_type(self) -> &'static str {
        match self {
            Framing::Sse | Framing::SseOrArray => "text/event-stream",
            Framing::EventStream => "application/vnd.amazon.eventstream",
            Framing::Ndjson => "application/x-ndjson",
        }
    }

    /// A reader of a body in this framing (for [`Framing::EventStream`], of the body behind
    /// the event stream decoder, or of one that is no event stream).
    pub fn body(self, max_event_size: usize) -> body::Body {
        body::Body::new(max_event_size, self)
    }
}

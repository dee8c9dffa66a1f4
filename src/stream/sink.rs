//! What a stream hands out: the first error it owns (`Failure`), the reports it makes of each
//! frame (`Report`), and the `Sink` they go to (`Quiet` builds nothing).

#[allow(clippy::wildcard_imports)]
use super::*;

/// An error the stream recorded, owned (its `type`, `code` and `raw` as JSON text, as
/// [`ErrorInfo`] has them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error's message.
    pub message: String,
    /// The raw JSON of the error's `type`, if any.
    pub type_: Option<String>,
    /// The raw JSON of the error's `code`, if any.
    pub code: Option<String>,
    /// The JSON text of the whole document that carried the error, if it was JSON.
    pub raw: Option<String>,
}

impl Failure {
    pub(super) fn of(info: &ErrorInfo<'_>) -> Self {
        Failure {
            message: info.message.to_string(),
            type_: info.type_.map(str::to_owned),
            code: info.code.map(str::to_owned),
            raw: info.raw.map(str::to_owned),
        }
    }

    /// A failure of ssewire's own reading (not sent by the server), of `kind`.
    pub fn own(message: String, kind: ErrorKind) -> Self {
        Failure {
            message,
            type_: kind.type_json().map(str::to_owned),
            code: kind.code_json().map(str::to_owned),
            raw: None,
        }
    }

    /// The failure as an [`ErrorInfo`] borrowing from it.
    pub fn info(&self) -> ErrorInfo<'_> {
        ErrorInfo {
            message: Cow::Borrowed(&self.message),
            type_: self.type_.as_deref(),
            code: self.code.as_deref(),
            raw: self.raw.as_deref(),
        }
    }
}

/// What an error report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// The server reported an error; `first` when it is the one the stream records.
    Stream {
        /// Whether this is the stream's first error, the one it records.
        first: bool,
    },
    /// A frame's JSON did not decode (the stream's error is not touched).
    Malformed,
}

/// An error of one frame (or of the body as a whole), as the sink gets it.
pub struct Report<'a> {
    /// What the report is.
    pub kind: ReportKind,
    /// The error: its message, type, code and raw JSON.
    pub info: &'a ErrorInfo<'a>,
    /// The frame's event type as sent (`None`: a plain `data:` frame, or the body).
    pub event: Option<&'a [u8]>,
    /// The frame's data (the body's text for an error about the body).
    pub data: &'a str,
}

/// What the stream hands its caller: error reports always, items (the dialect's own, through
/// the dialect's items trait) only when [`Sink::items`] says so.
pub trait Sink {
    /// The caller's item, kept by a template to be copied with new text on a hit.
    type Item;
    /// The sink's own error: it stops the read and is returned to the caller.
    type Error;
    /// Whether items are wanted (`feed`), or only the fold and the errors (`consume`).
    fn items(&self) -> bool;
    /// An error report (a server-reported error, a malformed frame, a body that is an error).
    fn report(&mut self, report: Report<'_>) -> Result<(), Self::Error>;
    /// A frame the dialect does not decode (a named event of another dialect).
    fn pass(&mut self, frame: &Frame<'_>) -> Result<(), Self::Error>;
    /// A new frame starts (what the sink shares among one frame's reports is let go).
    fn next_frame(&mut self) {}
    /// Runs `f`, the framing of a large input, with whatever lock the caller holds released.
    fn detached<T: Send>(&mut self, f: impl FnOnce() -> T + Send) -> T {
        f()
    }
}

/// A sink that builds nothing: the stream folds, records its errors and feeds its tap.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Sink for Quiet {
    type Item = ();
    type Error = std::convert::Infallible;
    fn items(&self) -> bool {
        false
    }
    fn report(&mut self, _: Report<'_>) -> Result<(), Self::Error> {
        Ok(())
    }
    fn pass(&mut self, _: &Frame<'_>) -> Result<(), Self::Error> {
        Ok(())
    }
}

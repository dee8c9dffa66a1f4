//! The SSE encoder: one event to its wire form, so that a WHATWG parser reads it back as the
//! same event. Pure Rust, no Python.
//!
//! Carries nothing across calls (each event is encoded on its own). Cost: O(size of the event)
//! time and output, one pass over each field (`memchr2` for the line ends of the data).
//!
//! The choices the spec leaves to the writer, made here:
//! - Every non-empty value is written after `": "` (an empty one as a bare `name:`): the parser
//!   strips exactly one space after the colon, so a value that starts with a space keeps it.
//! - `data` is split on CRLF, LF and CR into one `data:` line each; the parser joins them with
//!   LF, so a CR or CRLF in the data comes back as LF (SSE cannot carry a CR in data). Empty data
//!   still gives one `data:` line, so the event is dispatched.
//! - The event type `"message"` and the empty type are the parser's default: no `event:` line is
//!   written for them (`"message"`, given or not, reads back as `"message"`).
//! - An `id` is written as given, also `""` (which resets the reader's last event id); an id
//!   with NUL would be ignored by the reader, and an event type or id with CR or LF would break
//!   the line: those are errors, never silently altered.

use memchr::memchr2;

/// Why an event cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodeError {
    /// The event type contains CR or LF.
    EventLineBreak,
    /// The id contains CR or LF.
    IdLineBreak,
    /// The id contains NUL (a reader ignores such an `id:` field).
    IdNul,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EncodeError::EventLineBreak => "an SSE event type cannot contain CR or LF",
            EncodeError::IdLineBreak => "an SSE event id cannot contain CR or LF",
            EncodeError::IdNul => "an SSE event id cannot contain NUL (readers ignore it)",
        })
    }
}

fn has_line_break(value: &[u8]) -> bool {
    memchr2(b'\r', b'\n', value).is_some()
}

fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    if value.is_empty() {
        out.extend_from_slice(b":\n");
    } else {
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.push(b'\n');
    }
}

/// Appends the wire form of one event to `out`: `event:`, `id:`, `retry:` (when given), one
/// `data:` line per line of `data`, then a blank line. On error `out` is left unchanged.
pub fn encode_event(
    out: &mut Vec<u8>,
    data: &[u8],
    event: Option<&[u8]>,
    id: Option<&[u8]>,
    retry: Option<u64>,
) -> Result<(), EncodeError> {
    if event.is_some_and(has_line_break) {
        return Err(EncodeError::EventLineBreak);
    }
    if let Some(id) = id {
        if has_line_break(id) {
            return Err(EncodeError::IdLineBreak);
        }
        if id.contains(&0) {
            return Err(EncodeError::IdNul);
        }
    }
    out.reserve(data.len() + 16);
    match event {
        None | Some(b"") | Some(b"message") => {}
        Some(event) => field(out, b"event", event),
    }
    if let Some(id) = id {
        field(out, b"id", id);
    }
    if let Some(retry) = retry {
        field(out, b"retry", retry.to_string().as_bytes());
    }
    let mut rest = data;
    while let Some(end) = memchr2(b'\r', b'\n', rest) {
        let (line, tail) = rest.split_at(end);
        field(out, b"data", line);
        // Skip the line end: CRLF is one, a lone CR or LF is one.
        rest = match tail {
            [b'\r', b'\n', after @ ..] => after,
            [_, after @ ..] => after,
            [] => tail,
        };
    }
    field(out, b"data", rest);
    out.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::sse::Framer;
    use proptest::prelude::*;

    fn encode(
        data: &str,
        event: Option<&str>,
        id: Option<&str>,
        retry: Option<u64>,
    ) -> Result<String, EncodeError> {
        let mut out = Vec::new();
        encode_event(
            &mut out,
            data.as_bytes(),
            event.map(str::as_bytes),
            id.map(str::as_bytes),
            retry,
        )?;
        Ok(String::from_utf8(out).unwrap())
    }

    /// (type, data, id, retry) of one event.
    type Fields = (Vec<u8>, Vec<u8>, Option<Vec<u8>>, Option<u64>);

    /// The fields of every event the framer reads from `input`.
    fn parse(input: &[u8]) -> Vec<Fields> {
        let mut framer = Framer::new(usize::MAX);
        let mut out = Vec::new();
        assert!(framer.feed(input, &mut out).is_none());
        out.into_iter()
            .map(|e| {
                (
                    e.event_type().to_vec(),
                    e.data.into_owned(),
                    e.id.map(|i| i.into_owned()),
                    e.retry,
                )
            })
            .collect()
    }

    #[test]
    fn the_wire_form() {
        assert_eq!(encode("hi", None, None, None).unwrap(), "data: hi\n\n");
        assert_eq!(
            encode("a\nb\r\nc\rd", Some("delta"), Some("7"), Some(3000)).unwrap(),
            "event: delta\nid: 7\nretry: 3000\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
        );
        // Empty data still dispatches; a trailing line end gives a last empty line.
        assert_eq!(encode("", None, None, None).unwrap(), "data:\n\n");
        assert_eq!(
            encode("a\n", None, None, None).unwrap(),
            "data: a\ndata:\n\n"
        );
        // The default type is not written; an empty id is.
        assert_eq!(
            encode("x", Some("message"), Some(""), None).unwrap(),
            "id:\ndata: x\n\n"
        );
        assert_eq!(encode("x", Some(""), None, None).unwrap(), "data: x\n\n");
        // A leading space survives because one space always follows the colon.
        assert_eq!(
            encode(" x", Some(" t"), None, None).unwrap(),
            "event:  t\ndata:  x\n\n"
        );
    }

    #[test]
    fn what_cannot_be_encoded() {
        assert_eq!(
            encode("x", Some("a\nb"), None, None),
            Err(EncodeError::EventLineBreak)
        );
        assert_eq!(
            encode("x", Some("a\r"), None, None),
            Err(EncodeError::EventLineBreak)
        );
        assert_eq!(
            encode("x", None, Some("\r\n"), None),
            Err(EncodeError::IdLineBreak)
        );
        assert_eq!(
            encode("x", None, Some("a\0"), None),
            Err(EncodeError::IdNul)
        );
        let mut out = b"kept".to_vec();
        assert!(encode_event(&mut out, b"x", None, Some(b"\n"), None).is_err());
        assert_eq!(out, b"kept");
    }

    fn value() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("\r".to_string()),
                Just("\n".to_string()),
                Just("\r\n".to_string()),
                Just(" ".to_string()),
                Just(":".to_string()),
                Just("\u{feff}".to_string()),
                Just("message".to_string()),
                "[a-zé日]{0,3}",
            ],
            0..6,
        )
        .prop_map(|parts| parts.concat())
    }

    fn no_breaks(s: String) -> String {
        s.replace(['\r', '\n', '\0'], "_")
    }

    proptest! {
        /// The framer reads back what was encoded: data with its line ends made LF, the type
        /// ("message" for none or ""), the id (kept until a later event sets another), retry;
        /// for several events in a row.
        #[test]
        fn round_trip(
            events in proptest::collection::vec(
                (value(), proptest::option::of(value()), proptest::option::of(value()),
                 proptest::option::of(any::<u64>())),
                1..5,
            )
        ) {
            let mut wire = Vec::new();
            let mut expected = Vec::new();
            let mut last_id: Option<Vec<u8>> = None;
            for (data, event, id, retry) in events {
                let event = event.map(no_breaks);
                let id = id.map(no_breaks);
                encode_event(
                    &mut wire,
                    data.as_bytes(),
                    event.as_deref().map(str::as_bytes),
                    id.as_deref().map(str::as_bytes),
                    retry,
                )
                .unwrap();
                if let Some(id) = &id {
                    last_id = Some(id.as_bytes().to_vec());
                }
                let event = match event.as_deref() {
                    None | Some("") => "message".to_string(),
                    Some(e) => e.to_string(),
                };
                let data = data.replace("\r\n", "\n").replace('\r', "\n");
                expected.push((event.into_bytes(), data.into_bytes(), last_id.clone(), retry));
            }
            prop_assert_eq!(parse(&wire), expected);
        }
    }
}

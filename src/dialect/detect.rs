//! The one dialect detector (`detect_dialect`, `accumulate(dialect="auto")`, the command line,
//! `Translator("auto")`): an event is a dialect's own by the dialect decoders' own `belongs`
//! rules, the earliest decisive event wins, and one buffering policy ([`Sniffer`]) bounds
//! how long a body may stay undecided.

use crate::dialect::{Dialect, Doc};

/// With `source: "auto"`, how many events may pass before the source is taken to be chat (the
/// dialect whose events have no name and no `type`).
pub const SNIFF_EVENTS: usize = 16;

/// The dialect whose own event this is (by the dialect decoders' own `belongs` rules: the
/// event name or the JSON `type` / `object` / `choices`), if any; `[DONE]` is chat's.
pub fn sniff(event: Option<&[u8]>, data: &[u8]) -> Option<Dialect> {
    let name = event.unwrap_or(b"message");
    let text = crate::text::lossy_cow(std::borrow::Cow::Borrowed(data));
    let mut found = None;
    crate::dialect::split_docs(
        &text,
        serde_json::from_str::<&serde_json::value::RawValue>,
        |doc| {
            if found.is_some() {
                return;
            }
            found = match doc {
                Doc::Done => Some(Dialect::Chat),
                Doc::Value(doc, _) => crate::dialect::SNIFF_ORDER
                    .into_iter()
                    .find(|d| (d.spec().owns)(name, doc)),
                Doc::Malformed(_) => None,
            };
        },
    );
    found
}

/// The dialect a body's head shows (`detect_dialect`, `accumulate(dialect="auto")`): by the
/// same rules as [`sniff`], event by event, the earliest decisive event winning; a body that is
/// a JSON array is Gemini's. `fin`: the head is all there is (its last event counts even
/// without its blank line, and when nothing decided, the fallbacks below answer); otherwise
/// `None` while no complete event has decided. Fallbacks: an error alone still tells its API
/// (`{"type": "error"}` is Anthropic's, or the Responses API's when it has a
/// `sequence_number`; any other `error` key, or any JSON body, chat's, so that a dialect stream
/// reports it); anything else is a generic event stream, `"sse"`.
pub fn detect(head: &[u8], fin: bool) -> Option<&'static str> {
    if let Some(name) = eventstream_dialect(head).or_else(|| ndjson_dialect(head, fin)) {
        return Some(name);
    }
    let bare = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = bare.iter().find(|b| !b" \t\r\n".contains(b));
    if first == Some(&b'[') {
        // The dialect whose body may be a JSON array (Gemini's streamGenerateContent
        // without ?alt=sse).
        let arrays = super::SPECS
            .iter()
            .find(|s| s.framing == crate::framing::Framing::SseOrArray);
        return arrays.map(|s| s.name);
    }
    let mut body =
        crate::framing::Framing::SseOrArray.body(crate::framing::sse::DEFAULT_MAX_EVENT_SIZE);
    let mut events = Vec::new();
    body.feed(head, &mut events);
    let mut docs: Vec<(Option<Vec<u8>>, Vec<u8>)> = events
        .into_iter()
        .map(|e| (e.event.map(|n| n.into_owned()), e.data.into_owned()))
        .collect();
    if fin {
        let end = body.finish();
        if let Some(e) = end.last_event {
            docs.push((e.event.map(|n| n.into_owned()), e.data.into_owned()));
        }
        if let Some(json) = end.json {
            docs.push((None, json.into_bytes()));
        }
    }
    for (event, data) in &docs {
        if let Some(dialect) = sniff(event.as_deref(), data) {
            return Some(dialect.name());
        }
    }
    if !fin {
        return None;
    }
    Some(fallback(
        docs.iter().map(|(_, data)| data.as_slice()),
        first,
    ))
}

/// What tells a head's dialect when none of its events is a dialect's own: an error alone
/// tells its API (`{"type": "error"}` is Anthropic's, or the Responses API's when it has a
/// `sequence_number`; any other `error` key, or any JSON body, chat's); anything else is a
/// generic event stream, `"sse"`. `first`: the head's first byte that is not white space.
fn fallback<'d>(docs: impl IntoIterator<Item = &'d [u8]>, first: Option<&u8>) -> &'static str {
    for data in docs {
        let Ok(map) = serde_json::from_slice::<
            std::collections::BTreeMap<String, &serde_json::value::RawValue>,
        >(data) else {
            continue;
        };
        if map.get("type").map(|t| t.get().trim()) == Some("\"error\"") {
            let responses = map.contains_key("sequence_number");
            return if responses { "responses" } else { "messages" };
        }
        if map.contains_key("error") {
            return Dialect::Chat.name();
        }
    }
    if first == Some(&b'{') {
        return Dialect::Chat.name(); // some other JSON body: a stream reports it
    }
    "sse"
}

/// The dialect of a body in the AWS event stream framing whose first message is whole in
/// `head` and names a Converse event (`:event-type`); `None` for anything else (SSE, JSON, an
/// InvokeModel body of `chunk` messages, whose dialect is the chunks' and must be named).
pub fn eventstream_dialect(head: &[u8]) -> Option<&'static str> {
    let total = u32::from_be_bytes(head.get(..4)?.try_into().ok()?) as usize;
    let message = crate::framing::eventstream::read_message(head.get(..total)?).ok()?;
    let kind = message.string(":event-type")?;
    crate::dialect::converse::EVENTS
        .contains(&kind)
        .then(|| Dialect::Converse.name())
}

/// The dialect of a body of JSON lines whose first line (whole: ended by its line feed, or by
/// the end of the head when `fin`) is one NDJSON dialect's own (Ollama's); `None` otherwise.
pub fn ndjson_dialect(head: &[u8], fin: bool) -> Option<&'static str> {
    let at = crate::framing::body::significant_at(head)?;
    let rest = head.get(at..)?;
    if rest.first() != Some(&b'{') {
        return None;
    }
    let line = match memchr::memchr(b'\n', rest) {
        Some(end) => rest.get(..end)?,
        None if fin => rest,
        None => return None,
    };
    let line = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
    super::SPECS
        .iter()
        .filter(|s| s.framing == crate::framing::Framing::Ndjson)
        .find(|s| (s.owns)(b"message", line))
        .map(|s| s.name)
}

/// With `source: "auto"`, how much input may be held before the source is taken to be chat
/// (every dialect's own first event comes long before).
pub const SNIFF_BYTES: usize = 1 << 20;

/// The input of an "auto" source before its dialect is told: held whole, and framed (a Gemini
/// JSON array's elements too) to find the first event that is one dialect's own.
pub struct Sniffer {
    body: crate::framing::body::Body,
    held: Vec<u8>,
    events: usize,
    /// The data of the events so far (at most [`SNIFF_EVENTS`]): what the fallbacks read when
    /// none of them told the dialect, the same however the input was cut into reads.
    seen: Vec<Vec<u8>>,
    /// Whether the held head was found not to open with a whole Converse event stream
    /// message (checked once, when its first message is whole: never again per feed).
    eventstream_checked: bool,
    /// Whether the body opens with `{` and its first line is still to be read as a JSON
    /// line (`None`: only white space so far; `Some(false)`: no, or read already).
    lines: Option<bool>,
}

impl Sniffer {
    /// A sniffer that holds nothing yet, framing events of at most `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        let body = crate::framing::Framing::SseOrArray.body(max_event_size);
        Sniffer {
            body,
            held: Vec::new(),
            events: 0,
            seen: Vec::new(),
            eventstream_checked: false,
            lines: None,
        }
    }

    /// Holds `data`; the body's dialect name once it is told, by the one buffering policy
    /// that `detect_dialect`, `accumulate("auto")`, the command line and `Translator("auto")`
    /// share: the first event that is one dialect's own decides; after [`SNIFF_EVENTS`]
    /// events or [`SNIFF_BYTES`] bytes (comments, such as keep-alives, are no events) that
    /// none decided, [`detect`]'s fallbacks over what was held (an error alone tells its API;
    /// anything else is a generic event stream, `"sse"`).
    pub fn feed_name(&mut self, data: &[u8]) -> Option<&'static str> {
        // Only the first SNIFF_BYTES (and one) count, however the input is cut into reads.
        let room = (SNIFF_BYTES + 1).saturating_sub(self.held.len());
        let counted = data.get(..room.min(data.len())).unwrap_or_default();
        self.held.extend_from_slice(data);
        let mut fresh = data;
        if self.lines.is_none() {
            // Read once: whether the body opens with `{` (past white space and a BOM), from
            // the new bytes only; then its first line, once a line feed after that `{` came.
            if let Some(at) = crate::framing::body::significant_at(data) {
                self.lines = Some(data.get(at) == Some(&b'{'));
                fresh = data.get(at..).unwrap_or_default();
            }
        }
        if self.lines == Some(true) && memchr::memchr(b'\n', fresh).is_some() {
            self.lines = Some(false);
            // Only the first SNIFF_BYTES (and one) count, however the input is cut.
            let counted = self.held.get(..self.held.len().min(SNIFF_BYTES + 1));
            if let Some(name) = ndjson_dialect(counted.unwrap_or_default(), false) {
                return Some(name);
            }
        }
        if !self.eventstream_checked {
            if let Some(name) = eventstream_dialect(&self.held) {
                return Some(name);
            }
            // Checked for good once the first message is whole, or the head cannot start one.
            let declared = self
                .held
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map(|b: [u8; 4]| u32::from_be_bytes(b) as usize);
            self.eventstream_checked = match declared {
                Some(total) => total <= self.held.len() || total > SNIFF_BYTES,
                None => self.held.first().is_some_and(|&b| b != 0),
            };
        }
        let mut events = Vec::new();
        self.body.feed(counted, &mut events);
        // Event by event: only the first SNIFF_EVENTS may tell, whether they came in one read
        // or many; after them, the fallbacks read those events only.
        for event in &events {
            if let Some(dialect) = sniff(event.event.as_deref(), &event.data) {
                return Some(dialect.name());
            }
            self.events += 1;
            self.seen.push(event.data.to_vec());
            if self.events >= SNIFF_EVENTS {
                let bare = self
                    .held
                    .strip_prefix(b"\xEF\xBB\xBF")
                    .unwrap_or(&self.held);
                let first = bare.iter().find(|b| !b" \t\r\n".contains(b));
                return Some(fallback(self.seen.iter().map(Vec::as_slice), first));
            }
        }
        if self.held.len() > SNIFF_BYTES {
            return Some(self.at_end_name());
        }
        None
    }

    /// [`Sniffer::feed_name`] for a translation: a generic event stream is read as chat.
    pub fn feed(&mut self, data: &[u8]) -> Option<Dialect> {
        self.feed_name(data)
            .map(|name| Dialect::parse(name).unwrap_or(Dialect::Chat))
    }

    /// The dialect name when the input ended before an event told it: by [`detect`]'s rules
    /// over all that was held (its last event counts without its blank line, an error alone
    /// tells its API), `"sse"` when nothing does.
    pub fn at_end_name(&self) -> &'static str {
        let counted = self.held.get(..self.held.len().min(SNIFF_BYTES + 1));
        detect(counted.unwrap_or_default(), true).unwrap_or("sse")
    }

    /// [`Sniffer::at_end_name`] for a translation: chat when nothing tells.
    pub fn at_end(&self) -> Dialect {
        Dialect::parse(self.at_end_name()).unwrap_or(Dialect::Chat)
    }

    /// How many bytes are held.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// The input held, taken (the sniffer holds nothing after).
    pub fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    /// The input held, for the source stream to read once it is made.
    pub fn held(self) -> Vec<u8> {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the first [`SNIFF_EVENTS`] events may tell a body's dialect, and the fallback
    /// reads those alone: the answer is the same whether the body came in one read or a byte
    /// at a time (a Messages event after 16 undecided ones told it in one read only).
    #[test]
    fn the_sniffed_events_do_not_depend_on_the_reads() {
        let mut body = "data: {\"error\": {\"message\": \"x\"}}\n\n".to_owned();
        body.push_str(&"data: plain\n\n".repeat(SNIFF_EVENTS - 1));
        body.push_str("data: {\"type\":\"message_stop\"}\n\n");
        let mut whole = Sniffer::new(1 << 16);
        let at_once = whole.feed_name(body.as_bytes());
        let mut bytes = Sniffer::new(1 << 16);
        let one_by_one = body.as_bytes().chunks(1).find_map(|b| bytes.feed_name(b));
        assert_eq!(at_once, Some("chat"));
        assert_eq!(one_by_one, at_once);
    }
}

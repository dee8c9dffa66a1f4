//! The Ollama reader: each NDJSON line (the registry row's framing, `crate::framing::ndjson`)
//! read (`crate::dialect::ollama`), folded (`crate::fold::ollama`; `done: true` ends the
//! stream), tapped, and handed to the sink as one item. An `{"error": ...}` line is the
//! stream's error. A plain text, thinking or response line makes the line template, its
//! string and its `created_at` (a new timestamp each line) left open: a later line of that
//! shape is folded without a decode. Carried across lines: the fold and the template.

use std::borrow::Cow;

use super::{fit, Dialect, Reader, Sink, State, Subject, Value};
use crate::dialect::ollama::{self, Line, Message};
use crate::dialect::template::{RawHole, Shape, MAX_RAW};
use crate::json::read::Str;

/// A borrowed [`Str`].
fn str_(text: &str) -> Str<'_> {
    Str(Cow::Borrowed(text))
}
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::ollama::OllamaFold;

/// What an Ollama stream taps: one line.
pub type View<'a> = Line<'a>;

/// What a sink makes of an Ollama stream's lines.
pub trait OllamaItems: Sink {
    /// The item of one line (`doc`, its JSON).
    fn line(&mut self, line: &Line<'_>, doc: &str) -> Result<(), Self::Error>;
}

/// The string of a plain line a template leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    Content,
    Thinking,
    Response,
}

/// A line template: its shape, its open string, and what its lines all say (the model, the
/// role, the remote model and host of a cloud model), for the lines it reads.
struct Template {
    shape: Shape,
    hole: Hole,
    model: Option<String>,
    role: Option<String>,
    remote_model: Option<String>,
    remote_host: Option<String>,
    /// Whether the shape leaves `created_at` open (raw slot 0).
    dated: bool,
    /// Whether the line has the other string of its kind, empty (a text line's `thinking`, a
    /// thinking line's `content`, a response line's `thinking`): the lines it reads have it.
    other: bool,
}

/// The per-stream state of the Ollama reader.
pub struct OllamaReader<I> {
    /// The fold of the stream's lines so far.
    pub fold: OllamaFold,
    template: Option<Template>,
    /// Where a fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    _items: std::marker::PhantomData<I>,
}

impl<I> Default for OllamaReader<I> {
    fn default() -> Self {
        OllamaReader {
            fold: OllamaFold::default(),
            template: None,
            buf: Vec::new(),
            _items: std::marker::PhantomData,
        }
    }
}

/// The template of a plain line (one non-empty string of content, thinking or response, and
/// nothing else that varies but `created_at`), decoded from `doc`.
fn template_of(event: Option<&[u8]>, line: &Line<'_>, doc: &str) -> Option<Template> {
    if line.done != Some(false)
        || line.done_reason.is_some()
        || line.context.is_some()
        || line.error.is_some()
        || line.logprobs.is_some()
        || line.counts().iter().any(|c| c.1.is_some())
    {
        return None;
    }
    let said = |t: &Option<Str<'_>>| t.as_deref().is_some_and(|t| !t.is_empty());
    let (hole, text, role, other) = match &line.message {
        Some(m) if m.tool_calls.is_some() || m.images.is_some() => return None,
        Some(_) if line.response.is_some() || line.thinking.is_some() => return None,
        Some(m) if said(&m.content) && !said(&m.thinking) => {
            (Hole::Content, &m.content, &m.role, &m.thinking)
        }
        Some(m) if said(&m.thinking) && !said(&m.content) => {
            (Hole::Thinking, &m.thinking, &m.role, &m.content)
        }
        None if said(&line.response) && !said(&line.thinking) => {
            (Hole::Response, &line.response, &None, &line.thinking)
        }
        _ => return None,
    };
    let text = Str::in_frame(text, doc)?;
    let at = match &line.created_at {
        Some(_) => Some(Str::in_frame(&line.created_at, doc)?),
        None => None,
    };
    let raws: Vec<RawHole<'_>> = at.map(RawHole::Str).into_iter().collect();
    Some(Template {
        shape: Shape::with_raws(event, doc, text, &[], &raws)?.as_line()?,
        hole,
        model: line.model.as_deref().map(str::to_owned),
        role: role.as_deref().map(str::to_owned),
        remote_model: line.remote_model.as_deref().map(str::to_owned),
        remote_host: line.remote_host.as_deref().map(str::to_owned),
        dated: at.is_some(),
        other: other.is_some(),
    })
}

impl<I> Dialect for OllamaReader<I> {
    type Doc<'f> = Line<'f>;

    const NAME: &'static str = "an Ollama";
    const MARKER: &'static str = "a line with \"done\": true";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Ollama;

    fn belongs(doc: &Line<'_>, _event: &[u8]) -> Belongs {
        doc.belongs()
    }

    fn is_output(doc: &Line<'_>, _event: &[u8]) -> bool {
        let message = doc.message.as_ref();
        let said = |t: Option<&Str<'_>>| t.is_some_and(|t| !t.is_empty());
        let calls = |m: &ollama::Message<'_>| m.tool_calls.is_some_and(|c| c.get().trim() != "[]");
        said(doc.response.as_ref())
            || said(doc.thinking.as_ref())
            || message
                .is_some_and(|m| said(m.content.as_ref()) || said(m.thinking.as_ref()) || calls(m))
    }

    fn decode(doc: &str) -> Result<Line<'_>, serde_json::Error> {
        ollama::decode(doc)
    }

    fn has_template(&self) -> bool {
        // Its shape is a line's (`Shape::as_line`): read off raw bytes between lines.
        self.template.is_some()
    }

    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }

    fn result_usage(&mut self) -> Option<crate::fold::Out> {
        self.fold.usage()
    }
}

impl<S: OllamaItems> Reader<S> for OllamaReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Line<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        if let Some(error) = v.value.error {
            let info = ErrorInfo::of_document(v.doc, Some(error));
            state.report_in(sink, &info, v.frame)?;
            if v.value.belongs() != Belongs::Own {
                return Ok(());
            }
        }
        self.fold.add(&v.value);
        state.tap(super::Upstream::Ollama(&v.value));
        if self.fold.done() {
            state.done = true;
        }
        if sink.items() {
            sink.line(&v.value, v.doc)?;
        }
        if v.whole_frame() {
            if let Some(template) = template_of(v.frame.event.as_deref(), &v.value, v.doc) {
                self.template = Some(template);
            }
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let Some(t) = &self.template else {
            return Ok(None);
        };
        let mut raws = [""; MAX_RAW];
        let Some(hit) = fit(&t.shape, subject, &mut raws, &mut self.buf) else {
            return Ok(None);
        };
        if t.dated && raws[0].contains('\\') {
            return Ok(None); // a timestamp with escapes: the decoder reads it
        }
        // The line's JSON, for an item: a framed line's text, or a raw line's bytes (every
        // one a fixed part taken from decoded text or a hole checked as UTF-8: checked anyway).
        let doc: Option<&str> = match subject {
            Subject::Frame(frame) => Some(&frame.data),
            Subject::Raw(_) if sink.items() => match crate::text::utf8(hit.data) {
                Some(doc) => Some(doc),
                None => return Ok(None),
            },
            Subject::Raw(_) => None,
        };
        let other = t.other.then_some(str_(""));
        let text = Some(str_(hit.text.as_ref()));
        let mut line = Line {
            model: t.model.as_deref().map(str_),
            created_at: t.dated.then(|| str_(raws[0])),
            done: Some(false),
            remote_model: t.remote_model.as_deref().map(str_),
            remote_host: t.remote_host.as_deref().map(str_),
            ..Line::default()
        };
        let role = t.role.as_deref().map(str_);
        match t.hole {
            Hole::Response => {
                line.response = text;
                line.thinking = other;
            }
            Hole::Content => {
                let (content, thinking) = (text, other);
                line.message = Some(Message {
                    role,
                    content,
                    thinking,
                    ..Message::default()
                });
            }
            Hole::Thinking => {
                let (content, thinking) = (other, text);
                line.message = Some(Message {
                    role,
                    content,
                    thinking,
                    ..Message::default()
                });
            }
        }
        // An empty string is no output, as a decode counts it.
        state.quiet_hit = hit.text.is_empty();
        self.fold.add(&line);
        state.tap(super::Upstream::Ollama(&line));
        if let (true, Some(doc)) = (sink.items(), doc) {
            sink.line(&line, doc)?;
        }
        Ok(Some(hit.len))
    }
}

impl OllamaItems for super::Quiet {
    fn line(&mut self, _: &Line<'_>, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{Quiet, Stream};

    #[test]
    fn plain_lines_take_the_template() {
        let mut body = Vec::new();
        for i in 0..10 {
            body.extend_from_slice(format!("{{\"model\":\"m\",\"created_at\":\"2025-01-01T00:00:{i:02}Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"w{i}\"}},\"done\":false}}\n").as_bytes());
        }
        let mut s: Stream<OllamaReader<()>> = Stream::new(1 << 20);
        let _ = s.run(&body, &mut Quiet);
        let doc =
            std::str::from_utf8(&body[..body.iter().position(|&b| b == b'\n').unwrap()]).unwrap();
        let line = crate::dialect::ollama::decode(doc).unwrap();
        assert!(template_of(None, &line, doc).is_some(), "no template");
        assert_eq!(s.state.fast, 9);
    }

    /// What a stream fed `pieces` folds to: the result, the error, the count of outputs and of
    /// lines read on the fast path.
    fn folded<'b>(
        pieces: impl IntoIterator<Item = &'b [u8]>,
        limit: usize,
    ) -> (String, String, u64, u64) {
        let mut s: Stream<OllamaReader<()>> = Stream::new(limit);
        for piece in pieces {
            let _ = s.run(piece, &mut Quiet);
        }
        let _ = s.finish(&mut Quiet);
        let error = format!("{:?}", s.state.error);
        (
            s.reader.fold.result().to_json(),
            error,
            s.state.outputs,
            s.state.fast,
        )
    }

    /// `body` cut right before each line feed.
    fn before_lf(body: &[u8]) -> Vec<&[u8]> {
        let mut pieces = Vec::new();
        let mut from = 0;
        for at in memchr::memchr_iter(b'\n', body) {
            pieces.push(&body[from..at]);
            from = at;
        }
        pieces.push(&body[from..]);
        pieces
    }

    /// A plain text line of the stream below (`at` its second).
    fn text_line(text: &str, at: u32) -> String {
        format!("{{\"model\":\"m\",\"created_at\":\"2025-01-01T00:00:{at:02}Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"done\":false}}")
    }

    /// A line's remote model and host (Ollama's cloud models) fold from a line the template
    /// reads as from a decoded one, whatever the cuts; a template made from a line whose data
    /// keeps a CR (CR CR LF ends) still reads the lines framed, and a line at the size limit
    /// is read framed (the fast path did not see it whole). (A review's findings.)
    #[test]
    fn remote_models_and_odd_ends_fold_alike_on_every_path() {
        let line = |at: &str, remote: &str, content: &str| {
            format!("{{\"model\":\"m\",\"created_at\":\"{at}\",\"remote_model\":\"{remote}\",\"remote_host\":\"h{remote}\",\"message\":{{\"role\":\"assistant\",\"content\":\"{content}\"}},\"done\":false}}")
        };
        let call = r#"{"model":"m","created_at":"t2","remote_model":"rB","remote_host":"hrB","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":false}"#;
        for end in ["\r\r\n", "\n", "\r\n"] {
            let body = [
                line("t1", "rA", "a"),
                call.to_owned(),
                line("t3", "rA", "b"),
            ]
            .join(end)
                + end;
            let body = body.as_bytes();
            let whole = folded([body], 1 << 16);
            assert!(
                whole.0.contains(r#""remote_model":"rA""#),
                "{end:?}: {}",
                whole.0
            );
            assert!(
                whole.0.contains(r#""remote_host":"hrA""#),
                "{end:?}: {}",
                whole.0
            );
            assert_eq!(whole, folded(body.chunks(1), 1 << 16), "{end:?}");
            assert_eq!(whole, folded(before_lf(body), 1 << 16), "{end:?}");
        }
        // Every line ends CR CR LF: the template keeps its CR and reads the lines framed.
        let body: String = (0..6)
            .map(|i| line(&format!("t{i}"), "r", "w") + "\r\r\n")
            .collect();
        assert_eq!(folded([body.as_bytes()], 1 << 16).3, 5);
        // The last line exactly at the limit: read, and alike whole and by byte.
        let (first, last) = (
            line("t1", "rA", "a"),
            line("t3", "rA", "bbbbbbbbbbbbbbbbbbbb"),
        );
        let body = format!("{first}\n{call}\n{last}\n");
        let limit = last.len();
        let whole = folded([body.as_bytes()], limit);
        assert!(whole.0.contains(r#""remote_model":"rA""#), "{}", whole.0);
        assert_eq!(whole.3, 1, "the line at the limit took no shortcut");
        assert_eq!(whole, folded(body.as_bytes().chunks(1), limit));
        assert_eq!(whole, folded(before_lf(body.as_bytes()), limit));
    }

    /// Lines read raw between lines (`Shape::as_line`) fold as the line framer and the decoder
    /// read them, whatever the line ends and whatever odd line is among them.
    #[test]
    fn raw_lines_fold_as_framed_lines_do() {
        let bytes = |s: String| s.into_bytes();
        let with_text = |raw: &[u8]| {
            let mut l = bytes(text_line("@", 3));
            let at = l.iter().position(|&b| b == b'@').unwrap();
            l.splice(at..=at, raw.iter().copied());
            l
        };
        // The fourth line of each stream, with its end (the others end in LF, or CRLF).
        let odd: Vec<(Vec<u8>, &[u8])> = vec![
            (bytes(text_line("w3", 3)), b"\r\n"),
            (bytes(text_line("w3", 3)), b"\r\r\n"),
            (bytes(text_line("w3", 3)), b" \n"),
            (bytes(text_line("w3", 3)), b"\n\n  \n"),
            (bytes(text_line("w3", 3)), b""), // the line runs into the next
            (with_text(b"a\xffb"), b"\n"),    // not UTF-8
            (with_text(b"a\\ud800b"), b"\n"), // a lone surrogate
            (with_text(b"a\rb"), b"\n"),      // a raw CR
            (bytes(text_line("w3", 3).replace("00Z", "00\\u005a")), b"\n"),
            (bytes(text_line(&"y".repeat(300), 3)), b"\n"), // longer than the limit
            (b"{\"oops".to_vec(), b"\n"),
            (
                bytes(text_line("w3", 3).replace("\"created_at\":\"2025-01-01T00:00:03Z\",", "")),
                b"\n",
            ),
        ];
        for (k, (fourth, end)) in odd.iter().enumerate() {
            for crlf in [false, true] {
                let mut body = Vec::new();
                for i in 0..6 {
                    if i == 3 {
                        body.extend_from_slice(fourth);
                        body.extend_from_slice(end);
                        continue;
                    }
                    body.extend_from_slice(text_line(&format!("w{i}"), i).as_bytes());
                    body.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
                }
                body.extend_from_slice(b"{\"model\":\"m\",\"created_at\":\"z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"eval_count\":3}\n");
                let whole = folded([&body[..]], 256);
                let shown = String::from_utf8_lossy(&body);
                assert_eq!(whole, folded(body.chunks(1), 256), "case {k}: {shown:?}");
                assert_eq!(whole, folded(body.chunks(7), 256), "case {k}: {shown:?}");
                assert!(whole.3 >= 2, "case {k}: {} lines on the fast path", whole.3);
            }
        }
    }
}

//! Frame templates: the byte logic of the fast path for runs of near-identical frames.
//!
//! LLM streams send long runs of frames that are byte-identical but for one string, the text
//! delta: `{"id":"chatcmpl-1",...,"delta":{"content":"` + text + `"},...}`. After a full
//! decode, a dialect records where that string sat (it can when the decoded string was borrowed
//! from the frame, i.e. had no escapes): the bytes before it and after it. A later frame whose
//! bytes are that prefix, a valid JSON string literal, and that suffix decodes to the same
//! document with that string replaced — JSON is tokenised left to right, so the tokens before
//! the literal are the same, the literal is one token (it cannot swallow the suffix's quote:
//! an unescaped quote inside makes the literal fail to parse on its own), and the tokens after
//! it are the same. Measured on chat streams: the full decode was ~60% of `feed`; a template
//! hit costs two `memcmp`s and a scan of the new string.
//! Carries nothing across frames itself; the dialect keeps the last template.

use std::borrow::Cow;

use super::json::Str;

/// Where the open string sat in a frame: the frame's event type and the bytes around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    event: Option<Box<[u8]>>,
    prefix: Box<[u8]>,
    suffix: Box<[u8]>,
    /// A second hole, for an integer that changes on every frame (a sequence number).
    number: Option<NumberHole>,
}

/// Where an integer hole sits: inside the prefix or the suffix, between `before` and `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NumberHole {
    in_prefix: bool,
    /// The bytes of the prefix (or suffix) before the digits; the rest is `after`.
    before: Box<[u8]>,
    after: Box<[u8]>,
}

impl Shape {
    /// The shape of the frame `data` (of event type `event`) around `text`, a string that a
    /// decode of `data` borrowed from it. `None` if `text` does not lie inside `data` between
    /// quotes.
    pub fn new(event: Option<&[u8]>, data: &str, text: &str) -> Option<Self> {
        let bytes = data.as_bytes();
        let start = (text.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
        let end = start.checked_add(text.len())?;
        if end > bytes.len()
            || bytes.get(start.checked_sub(1)?) != Some(&b'"')
            || bytes.get(end) != Some(&b'"')
        {
            return None;
        }
        Some(Shape {
            event: event.map(Box::from),
            prefix: bytes.get(..start)?.into(),
            suffix: bytes.get(end..)?.into(),
            number: None,
        })
    }

    /// Adds an integer hole: the value `value` of the key `key`. Only for a flat JSON object
    /// (no nested object or array holds keys), where the key token `"key":` can appear once
    /// and only as the object's own key. `None` (no template) unless it appears exactly once,
    /// as `"key":<value>` outside the text hole.
    pub fn with_number(mut self, key: &str, value: i64) -> Option<Self> {
        if value < 0 {
            return None;
        }
        let pattern = format!("\"{key}\":{value}");
        let in_prefix = memchr::memmem::find_iter(&self.prefix, pattern.as_bytes()).count();
        let in_suffix = memchr::memmem::find_iter(&self.suffix, pattern.as_bytes()).count();
        let (part, in_prefix) = match (in_prefix, in_suffix) {
            (1, 0) => (&self.prefix, true),
            (0, 1) => (&self.suffix, false),
            _ => return None,
        };
        let at = memchr::memmem::find(part, pattern.as_bytes())?;
        let digits = at + pattern.len() - value.to_string().len();
        let after_digits = at + pattern.len();
        // The digits must be the whole number token.
        if part.get(after_digits).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        self.number = Some(NumberHole {
            in_prefix,
            before: part.get(..digits)?.into(),
            after: part.get(after_digits..)?.into(),
        });
        Some(self)
    }

    /// The string in the hole (and the integer in the number hole, if the shape has one), when
    /// the frame `data` (of event type `event`) has this shape with other values in the holes.
    pub fn fill<'d>(
        &self,
        event: Option<&[u8]>,
        data: &'d str,
    ) -> Option<(Cow<'d, str>, Option<i64>)> {
        if event != self.event.as_deref() {
            return None;
        }
        let (start, end, number) = match &self.number {
            None => {
                let end = data.len().checked_sub(self.suffix.len())?;
                if !data.as_bytes().ends_with(&self.suffix)
                    || !data.as_bytes().starts_with(&self.prefix)
                {
                    return None;
                }
                (self.prefix.len(), end, None)
            }
            Some(hole) if hole.in_prefix => {
                let bytes = data.as_bytes();
                if !bytes.starts_with(&hole.before) {
                    return None;
                }
                let (value, len) = number_at(bytes.get(hole.before.len()..)?)?;
                let start = hole.before.len() + len + hole.after.len();
                if bytes.get(hole.before.len() + len..start)? != &*hole.after
                    || !bytes.ends_with(&self.suffix)
                {
                    return None;
                }
                (
                    start,
                    data.len().checked_sub(self.suffix.len())?,
                    Some(value),
                )
            }
            Some(hole) => {
                let bytes = data.as_bytes();
                if !bytes.starts_with(&self.prefix) || !bytes.ends_with(&hole.after) {
                    return None;
                }
                let digits_end = bytes.len() - hole.after.len();
                let (value, len) = number_before(bytes.get(..digits_end)?)?;
                let end = (digits_end - len).checked_sub(hole.before.len())?;
                if bytes.get(end..digits_end - len)? != &*hole.before {
                    return None;
                }
                (self.prefix.len(), end, Some(value))
            }
        };
        if end < start {
            return None;
        }
        // The string hole sits between two ASCII quotes: both ends are char boundaries.
        let hole = data.get(start..end)?;
        if !hole.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
            return Some((Cow::Borrowed(hole), number));
        }
        let literal = data.get(start.checked_sub(1)?..end + 1)?;
        serde_json::from_str::<Str<'d>>(literal)
            .ok()
            .map(|s| (s.0, number))
    }
}

/// A JSON non-negative integer token at the start of `bytes`: its value and length.
fn number_at(bytes: &[u8]) -> Option<(i64, usize)> {
    let len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    parse_number(bytes.get(..len)?).map(|v| (v, len))
}

/// A JSON non-negative integer token at the end of `bytes`: its value and length.
fn number_before(bytes: &[u8]) -> Option<(i64, usize)> {
    let len = bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    parse_number(bytes.get(bytes.len() - len..)?).map(|v| (v, len))
}

fn parse_number(digits: &[u8]) -> Option<i64> {
    // JSON has no leading zeros; 18 digits always fit an i64.
    if digits.is_empty() || digits.len() > 18 || (digits.len() > 1 && digits.first() == Some(&b'0'))
    {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: &str = r#"{"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}"#;

    fn shape() -> Shape {
        let at = FRAME.find("Hi").unwrap();
        Shape::new(None, FRAME, &FRAME[at..at + 2]).unwrap()
    }

    fn frame(text: &str) -> String {
        FRAME.replace("\"Hi\"", &format!("\"{text}\""))
    }

    #[test]
    fn fills_plain_and_escaped_strings() {
        let s = shape();
        assert_eq!(
            s.fill(None, &frame(" there")).map(|f| f.0).as_deref(),
            Some(" there")
        );
        assert_eq!(s.fill(None, &frame("")).map(|f| f.0).as_deref(), Some(""));
        assert_eq!(
            s.fill(None, &frame(r#"a\"b\n\u00e9"#))
                .map(|f| f.0)
                .as_deref(),
            Some("a\"b\n\u{e9}")
        );
        assert_eq!(
            s.fill(None, &frame("h\u{e9}\u{1F600}"))
                .map(|f| f.0)
                .as_deref(),
            Some("h\u{e9}\u{1F600}")
        );
    }

    #[test]
    fn refuses_anything_that_changes_the_structure() {
        let s = shape();
        // an unescaped quote: the "literal" would end early and the rest is other JSON
        assert_eq!(s.fill(None, &frame(r#"a","refusal":"b"#)), None);
        // a literal ending in a backslash escapes the suffix's quote
        assert_eq!(s.fill(None, &frame("a\\")), None);
        // a raw control character is not allowed inside a JSON string
        assert_eq!(s.fill(None, &frame("a\nb")), None);
        // a bad escape
        assert_eq!(s.fill(None, &frame(r"\x")), None);
        // other bytes around the hole, another event type, a shorter frame
        assert_eq!(s.fill(None, &FRAME.replace("\"c\"", "\"d\"")), None);
        assert_eq!(s.fill(Some(b"other"), &frame("x")), None);
        assert_eq!(s.fill(None, "{}"), None);
        assert_eq!(
            s.fill(
                None,
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"}}]}"#
            ),
            None
        );
    }

    const SEQ: &str = r#"{"type":"d","delta":"Hi","sequence_number":7}"#;
    const SEQ_FIRST: &str = r#"{"type":"d","sequence_number":7,"delta":"Hi"}"#;

    fn seq_shape(frame: &str) -> Shape {
        let at = frame.find("Hi").unwrap();
        Shape::new(None, frame, &frame[at..at + 2])
            .unwrap()
            .with_number("sequence_number", 7)
            .unwrap()
    }

    #[test]
    fn fills_a_number_hole_after_or_before_the_text() {
        for frame in [SEQ, SEQ_FIRST] {
            let s = seq_shape(frame);
            let next = frame.replace("Hi", "there").replace(":7", ":12345");
            let (text, n) = s.fill(None, &next).unwrap();
            assert_eq!((text.as_ref(), n), ("there", Some(12345)));
            let zero = frame.replace(":7", ":0");
            let (text, n) = s.fill(None, &zero).unwrap();
            assert_eq!((text.as_ref(), n), ("Hi", Some(0)));
            // not a JSON number token, or no number at all
            assert_eq!(s.fill(None, &frame.replace(":7", ":07")), None);
            assert_eq!(s.fill(None, &frame.replace(":7", ":-7")), None);
            assert_eq!(s.fill(None, &frame.replace(":7", ":7.5")), None);
            assert_eq!(s.fill(None, &frame.replace(":7", ":")), None);
            assert_eq!(s.fill(None, &frame.replace(":7", ": 7")), None);
            // structure in the text hole still refused
            assert_eq!(s.fill(None, &frame.replace("Hi", r#"a","x":"b"#)), None);
        }
    }

    #[test]
    fn a_number_hole_needs_one_unambiguous_key() {
        let at = SEQ.find("Hi").unwrap();
        let shape = Shape::new(None, SEQ, &SEQ[at..at + 2]).unwrap();
        assert!(
            shape.clone().with_number("sequence_number", 8).is_none(),
            "other value"
        );
        assert!(shape.clone().with_number("missing", 7).is_none());
        let twice = r#"{"a":{"sequence_number":7},"delta":"Hi","sequence_number":7}"#;
        let at = twice.find("Hi").unwrap();
        let shape = Shape::new(None, twice, &twice[at..at + 2]).unwrap();
        assert!(
            shape.with_number("sequence_number", 7).is_none(),
            "ambiguous"
        );
    }

    #[test]
    fn needs_a_string_borrowed_from_inside_the_frame() {
        assert!(
            Shape::new(None, FRAME, "Hi").is_none(),
            "not a slice of the frame"
        );
        let at = FRAME.find("Hi").unwrap();
        assert!(
            Shape::new(None, FRAME, &FRAME[at..at + 1]).is_none(),
            "not the whole string"
        );
    }
}

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
        })
    }

    /// The string in the hole, when the frame `data` (of event type `event`) has this shape
    /// with another string in the hole.
    pub fn fill<'d>(&self, event: Option<&[u8]>, data: &'d str) -> Option<Cow<'d, str>> {
        if event != self.event.as_deref() {
            return None;
        }
        let bytes = data.as_bytes();
        let end = bytes.len().checked_sub(self.suffix.len())?;
        if end < self.prefix.len()
            || !bytes.starts_with(&self.prefix)
            || !bytes.ends_with(&self.suffix)
        {
            return None;
        }
        // The prefix ends and the suffix starts with an ASCII quote: both are char boundaries.
        let hole = data.get(self.prefix.len()..end)?;
        if !hole.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
            return Some(Cow::Borrowed(hole));
        }
        let literal = data.get(self.prefix.len().checked_sub(1)?..end + 1)?;
        serde_json::from_str::<Str<'d>>(literal).ok().map(|s| s.0)
    }
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
        assert_eq!(s.fill(None, &frame(" there")).as_deref(), Some(" there"));
        assert_eq!(s.fill(None, &frame("")).as_deref(), Some(""));
        assert_eq!(
            s.fill(None, &frame(r#"a\"b\n\u00e9"#)).as_deref(),
            Some("a\"b\n\u{e9}")
        );
        assert_eq!(
            s.fill(None, &frame("h\u{e9}\u{1F600}")).as_deref(),
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

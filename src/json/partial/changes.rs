//! What changed in a partial JSON value, feed by feed (API.md section 7): the [`Event`]s a
//! parser logs, and its open string, turned into edits addressed by JSON Pointer (RFC 6901),
//! so that a caller follows a growing document at the cost of what arrived instead of
//! re-reading the whole value.
//!
//! - `Add(path, value)`: a key or item appeared (a container appears empty; its items follow);
//! - `Append(path, text)`: the unfinished string at `path` grew by `text`;
//! - `Replace(path, value)`: a key that the object already had came again (JSON keeps the last).
//!
//! Applying the edits in order to nothing rebuilds the parser's value exactly, after every
//! feed: an unfinished string appears (empty at first) as soon as the value shows it, grows by
//! appends, and is completed by one more append; an unfinished number, literal or key is left
//! out until it is complete, as in the value. A string's text is carried once in all.
//!
//! Carried across feeds: the open containers (each with its pointer, made once, and its next
//! index or current key and the keys it has), and the open string's pointer and how much of it
//! was carried. Cost: an edit costs its value, plus its pointer when the value is new (the
//! pointer of a string that grows is shared by its appends). Hostile documents (many values
//! under a very long key) would make the pointers alone quadratic in the text: past
//! [`POINTER_BUDGET`] times the text, [`Changes::take`] fails.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Event, Kind, Number};

/// The pointers of all edits may add up to this many times the text's length (plus 1 MiB):
/// a key hundreds of bytes long over a huge array is still fine; past it, no edits can be
/// given in linear time and [`Changes::take`] fails.
pub const POINTER_BUDGET: usize = 256;

/// A value an edit places.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An empty array or object (its items follow as their own edits).
    Empty(Kind),
    /// A complete string.
    Str(String),
    /// A complete number.
    Num(Number),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// One edit of the value.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A key or item appeared at the path, with this value (a container appears empty).
    Add(Arc<str>, Value),
    /// The unfinished string at the path grew by this text.
    Append(Arc<str>, String),
    /// A key the object already had came again, with this value (JSON keeps the last).
    Replace(Arc<str>, Value),
}

impl Change {
    /// The edit's name in the API: `"add"`, `"append"` or `"replace"`.
    pub fn op(&self) -> &'static str {
        match self {
            Change::Add(..) => "add",
            Change::Append(..) => "append",
            Change::Replace(..) => "replace",
        }
    }

    /// The JSON Pointer (RFC 6901) of the value the edit is about.
    pub fn path(&self) -> &Arc<str> {
        match self {
            Change::Add(p, _) | Change::Append(p, _) | Change::Replace(p, _) => p,
        }
    }
}

/// The pointers of the edits outgrew [`POINTER_BUDGET`] times the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong;

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the JSON Pointers of the changes would exceed {POINTER_BUDGET} times the text (keys \
             too long for this many values); read `value` instead"
        )
    }
}

impl std::error::Error for TooLong {}

#[derive(Debug)]
enum Frame {
    Array {
        path: Arc<str>,
        len: usize,
    },
    Object {
        path: Arc<str>,
        key: Option<String>,
        keys: HashSet<String>,
    },
}

/// Turns a parser's events into [`Change`]s (see the module docs).
#[derive(Debug, Default)]
pub struct Changes {
    stack: Vec<Frame>,
    /// The unfinished string shown in the value: its pointer and how many bytes of it the
    /// edits carried.
    open: Option<(Arc<str>, usize)>,
    pointer_bytes: usize,
}

/// `token` escaped as a JSON Pointer reference token (`~` is `~0`, `/` is `~1`), appended.
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

impl Changes {
    /// A follower of a value not begun: no container open, nothing carried.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pointer of the next value, and whether it takes a key the object already had.
    fn slot(&mut self) -> (Arc<str>, bool) {
        match self.stack.last_mut() {
            None => (Arc::from(""), false),
            Some(Frame::Array { path, len }) => {
                let mut p = String::with_capacity(path.len() + 8);
                p.push_str(path);
                p.push('/');
                p.push_str(&len.to_string());
                *len += 1;
                (Arc::from(p), false)
            }
            Some(Frame::Object { path, key, keys }) => {
                let key = key.take().unwrap_or_default();
                let mut p = String::with_capacity(path.len() + key.len() + 1);
                p.push_str(path);
                push_token(&mut p, &key);
                let again = !keys.insert(key);
                (Arc::from(p), again)
            }
        }
    }

    fn place(&mut self, value: Value, out: &mut Vec<Change>) -> Arc<str> {
        let (path, again) = self.slot();
        self.pointer_bytes = self.pointer_bytes.saturating_add(path.len());
        let kept = path.clone();
        out.push(if again {
            Change::Replace(path, value)
        } else {
            Change::Add(path, value)
        });
        kept
    }

    /// The edits of `events` (drained from the parser since the last call, in order), then of
    /// the parser's open string now (`open`); `text_len` is the parser's text length so far
    /// (for the pointer budget).
    pub fn take(
        &mut self,
        events: impl IntoIterator<Item = Event>,
        open: Option<&str>,
        text_len: usize,
        out: &mut Vec<Change>,
    ) -> Result<(), TooLong> {
        for event in events {
            let value = match event {
                Event::Open(kind) => {
                    let path = self.place(Value::Empty(kind), out);
                    self.stack.push(match kind {
                        Kind::Array => Frame::Array { path, len: 0 },
                        Kind::Object => Frame::Object {
                            path,
                            key: None,
                            keys: HashSet::new(),
                        },
                    });
                    continue;
                }
                Event::Close => {
                    self.stack.pop();
                    continue;
                }
                Event::Key(k) => {
                    if let Some(Frame::Object { key, .. }) = self.stack.last_mut() {
                        *key = Some(k);
                    }
                    continue;
                }
                Event::Str(s) => match self.open.take() {
                    // The string shown unfinished is complete: its rest.
                    Some((path, carried)) => {
                        if let Some(rest) = s.get(carried..).filter(|r| !r.is_empty()) {
                            out.push(Change::Append(path, rest.to_owned()));
                        }
                        continue;
                    }
                    None => Value::Str(s),
                },
                Event::Num(n) => Value::Num(n),
                Event::Bool(b) => Value::Bool(b),
                Event::Null => Value::Null,
            };
            self.place(value, out);
        }
        if let Some(s) = open {
            match &mut self.open {
                Some((path, carried)) => {
                    if let Some(more) = s.get(*carried..).filter(|m| !m.is_empty()) {
                        out.push(Change::Append(path.clone(), more.to_owned()));
                        *carried = s.len();
                    }
                }
                None => {
                    let path = self.place(Value::Str(s.to_owned()), out);
                    self.open = Some((path, s.len()));
                }
            }
        }
        if self.pointer_bytes > text_len.saturating_mul(POINTER_BUDGET) + (1 << 20) {
            return Err(TooLong);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::PartialJson;
    use super::*;

    fn run(pieces: &[&str]) -> Vec<Change> {
        let mut p = PartialJson::with_events();
        let mut c = Changes::new();
        let mut out = Vec::new();
        for piece in pieces {
            let _ = p.feed_str(piece);
            let events: Vec<Event> = p.drain_events().collect();
            let open = p.open_string().map(str::to_owned);
            c.take(events, open.as_deref(), p.text().len(), &mut out)
                .unwrap();
        }
        out
    }

    #[test]
    fn strings_grow_by_appends_under_escaped_pointers() {
        let out = run(&[r#"{"a/b~": ["x"#, r#"yz", 1"#, "2]}"]);
        let a: Arc<str> = Arc::from("/a~1b~0");
        let item: Arc<str> = Arc::from("/a~1b~0/0");
        assert_eq!(
            out,
            vec![
                Change::Add(Arc::from(""), Value::Empty(Kind::Object)),
                Change::Add(a, Value::Empty(Kind::Array)),
                Change::Add(item.clone(), Value::Str("x".into())),
                Change::Append(item, "yz".into()),
                Change::Add(Arc::from("/a~1b~0/1"), Value::Num(Number::Int(12))),
            ]
        );
    }

    #[test]
    fn a_key_again_is_a_replace() {
        let out = run(&[r#"{"k": 1, "k": "#, r#""v"}"#]);
        assert_eq!(
            out.last(),
            Some(&Change::Replace(Arc::from("/k"), Value::Str("v".into())))
        );
    }

    #[test]
    fn long_keys_over_many_values_fail_instead_of_going_quadratic() {
        let key = "k".repeat(1 << 16);
        let mut p = PartialJson::with_events();
        let mut c = Changes::new();
        let mut out = Vec::new();
        let _ = p.feed_str(&format!("{{\"{key}\": ["));
        let mut failed = false;
        for _ in 0..20_000 {
            let _ = p.feed_str("1,");
            let events: Vec<Event> = p.drain_events().collect();
            out.clear();
            if c.take(events, None, p.text().len(), &mut out).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}

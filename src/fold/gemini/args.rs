//! A function call's `args` streamed as partial values (`partialArgs`, each with a JSON path and
//! a piece) written back into JSON text (`ArgsText`): paths parsed, open containers kept on a
//! stack, so the arguments grow as the chat dialect's string would.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One step of a `jsonPath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A `.name` or `['name']` step: an object's key.
    Key(String),
    /// A `[N]` step: an array's index.
    Index(u64),
}

/// Reads a `jsonPath` (RFC 9535, the subset the streamed arguments use): `$` followed by
/// `.name`, `['name']` / `["name"]` or `[N]` steps. `None` for anything else (wildcards,
/// filters, a path that is not one).
pub fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segs = Vec::new();
    while let Some(c) = rest.chars().next() {
        if c == '.' {
            let name_end = rest[1..].find(['.', '[']).map_or(rest.len(), |i| i + 1);
            let name = rest.get(1..name_end)?;
            if name.is_empty() || name == "*" {
                return None;
            }
            segs.push(Seg::Key(name.to_owned()));
            rest = rest.get(name_end..)?;
        } else if c == '[' {
            let inner = rest.get(1..)?;
            let quote = inner.chars().next()?;
            if quote == '\'' || quote == '"' {
                let mut name = String::new();
                let mut chars = inner.char_indices().skip(1);
                let mut end = None;
                while let Some((i, ch)) = chars.next() {
                    match ch {
                        '\\' => name.push(chars.next()?.1),
                        ch if ch == quote => {
                            end = Some(i);
                            break;
                        }
                        ch => name.push(ch),
                    }
                }
                let end = end?;
                rest = inner.get(end + 1..)?.strip_prefix(']')?;
                segs.push(Seg::Key(name));
            } else {
                let close = inner.find(']')?;
                let index = inner.get(..close)?.trim().parse::<u64>().ok()?;
                segs.push(Seg::Index(index));
                rest = inner.get(close + 1..)?;
            }
        } else {
            return None;
        }
    }
    Some(segs)
}

/// A `numberValue` or `boolValue` as JSON text: protobuf's JSON writes the numbers JSON has no
/// literal for as strings (`"Infinity"`, `"-Infinity"`, `"NaN"`); infinities become `1e999`
/// and `-1e999` (numbers every JSON reader reads as infinite: Python's `inf`), `NaN` `null`.
/// A numeric string (`"12"`, allowed too) is its number.
pub(super) fn push_number(out: &mut String, raw: &str) {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        out.push_str(raw);
        return;
    };
    match inner {
        "Infinity" => out.push_str("1e999"),
        "-Infinity" => out.push_str("-1e999"),
        "NaN" => out.push_str("null"),
        n if !n.is_empty()
            && serde_json::from_str::<serde::de::IgnoredAny>(n).is_ok()
            && n.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')) =>
        {
            out.push_str(n)
        }
        _ => out.push_str(raw), // a string after all: kept as sent
    }
}

/// How deep a path may go: the arguments it builds must stay within the crate's nesting limit.
pub(super) const MAX_PATH: usize = crate::json::read::MAX_DEPTH - 1;

/// One open container of the arguments being written.
#[derive(Debug)]
pub(super) struct Level {
    /// The step that entered it (`None` for the root object).
    pub(super) seg: Option<Seg>,
    pub(super) array: bool,
    /// Members written so far.
    pub(super) count: usize,
}

/// The JSON text of a streamed call's arguments, written as its `partialArgs` arrive: each
/// piece's path is opened from the containers already open (closing those it leaves), its
/// value written, a string left open while the piece says it continues. Paths arrive in
/// document order (the model writes the arguments front to back), so the text is written
/// once, front to back: what each piece adds is a fragment of the arguments' JSON, as a chat
/// or Messages stream would send it. A path that comes back to a container already closed
/// writes that key again (the last value wins when the text is read, as in any JSON reader).
/// Cost: O(the piece and its path) per piece.
#[derive(Debug, Default)]
pub struct ArgsText {
    pub(super) stack: Vec<Level>,
    /// The path of the string value left open, if any.
    pub(super) open_string: Option<Vec<Seg>>,
    pub(super) closed: bool,
    /// The bytes of the pieces read (paths and values), and the `null`s written to fill gaps
    /// in array indexes: the fill may not outgrow what was read (a hostile index far ahead).
    pub(super) read: usize,
    pub(super) filled: usize,
}

impl ArgsText {
    /// Writes the piece `value` at `path` (continued when `more`) to `out`; an error (and
    /// nothing written) for a path that is not one or does not fit what was written.
    pub fn add(
        &mut self,
        path: &str,
        value: &ArgValue<'_>,
        more: bool,
        out: &mut String,
    ) -> Result<(), String> {
        if self.closed {
            return Err("an argument piece after the call was closed".into());
        }
        self.read = self
            .read
            .saturating_add(path.len() + 16)
            .saturating_add(match value {
                ArgValue::Str(s) => s.as_str().len(),
                ArgValue::Raw(raw) => raw.get().len(),
                _ => 0,
            });
        let segs = parse_path(path)
            .filter(|s| s.len() <= MAX_PATH)
            .ok_or_else(|| format!("a jsonPath this reader does not follow: {path:?}"))?;
        if let Some(open) = &self.open_string {
            if *open == segs && matches!(value, ArgValue::Str(_) | ArgValue::None) {
                if let ArgValue::Str(s) = value {
                    push_escaped(out, s.as_str());
                }
                if !more {
                    out.push('"');
                    self.open_string = None;
                }
                return Ok(());
            }
        }
        if matches!(value, ArgValue::None) {
            return Err(format!("an argument piece without a value at {path:?}"));
        }
        let Some((leaf, containers)) = segs.split_last() else {
            return Err("an argument piece for the whole arguments ($)".into());
        };
        // The containers already open that the path goes through.
        let mut common = 0;
        while let (Some(seg), Some(level)) = (containers.get(common), self.stack.get(common + 1)) {
            if level.seg.as_ref() != Some(seg) {
                break;
            }
            common += 1;
        }
        // The container the first new step goes into must be of its kind.
        let first_new = containers.get(common).unwrap_or(leaf);
        let into_array = match self.stack.get(common) {
            Some(level) => level.array,
            None => false, // the root, not opened yet: an object
        };
        if into_array != matches!(first_new, Seg::Index(_)) {
            return Err(format!(
                "a jsonPath that does not fit the arguments written before it: {path:?}"
            ));
        }
        // Indexes past the next item leave a gap, filled with nulls: bounded by what was read.
        let gaps: usize = segs
            .iter()
            .enumerate()
            .filter_map(|(k, seg)| match seg {
                Seg::Index(i) => {
                    let next = if k < common {
                        return None; // a container already open: not a new item
                    } else if k == common {
                        self.stack.get(common).map_or(0, |l| l.count as u64)
                    } else {
                        0
                    };
                    Some(usize::try_from(i.saturating_sub(next)).unwrap_or(usize::MAX))
                }
                Seg::Key(_) => None,
            })
            .fold(0usize, usize::saturating_add);
        if self.filled.saturating_add(gaps) > self.read {
            return Err(format!(
                "an array index far past the items written before it: {path:?}"
            ));
        }
        self.filled += gaps;
        if self.open_string.take().is_some() {
            out.push('"');
        }
        if self.stack.is_empty() {
            out.push('{');
            self.stack.push(Level {
                seg: None,
                array: false,
                count: 0,
            });
        }
        while self.stack.len() > common + 1 {
            self.pop(out);
        }
        for (k, seg) in containers.iter().enumerate().skip(common) {
            self.member(seg, out);
            let next = containers.get(k + 1).unwrap_or(leaf);
            let array = matches!(next, Seg::Index(_));
            out.push(if array { '[' } else { '{' });
            self.stack.push(Level {
                seg: Some(seg.clone()),
                array,
                count: 0,
            });
        }
        self.member(leaf, out);
        match value {
            ArgValue::Str(s) => {
                out.push('"');
                push_escaped(out, s.as_str());
                if more {
                    self.open_string = Some(segs);
                } else {
                    out.push('"');
                }
            }
            ArgValue::Raw(raw) => push_number(out, raw.get().trim()),
            ArgValue::Null | ArgValue::None => out.push_str("null"),
        }
        Ok(())
    }

    /// Starts a member of the innermost container: its key, in an object; in an array, the
    /// `null`s of the items its index skips (the index is the item's place).
    pub(super) fn member(&mut self, seg: &Seg, out: &mut String) {
        if let Some(level) = self.stack.last_mut() {
            if let (Seg::Index(i), true) = (seg, level.array) {
                while (level.count as u64) < *i {
                    out.push_str(if level.count > 0 { ",null" } else { "null" });
                    level.count += 1;
                }
            }
            if level.count > 0 {
                out.push(',');
            }
            level.count += 1;
        }
        if let Seg::Key(key) = seg {
            push_str(out, key);
            out.push(':');
        }
    }

    pub(super) fn pop(&mut self, out: &mut String) {
        if let Some(level) = self.stack.pop() {
            out.push(if level.array { ']' } else { '}' });
        }
    }

    /// What ends the arguments: closes the open string and containers (`{}` when no piece
    /// came). Nothing is written after.
    pub fn close(&mut self, out: &mut String) {
        if self.closed {
            return;
        }
        out.push_str(&self.closing());
        self.stack.clear();
        self.open_string = None;
        self.closed = true;
    }

    /// The text that would close the arguments now, without closing them.
    pub fn closing(&self) -> String {
        if self.closed {
            return String::new();
        }
        if self.stack.is_empty() {
            return "{}".into();
        }
        let mut out = String::new();
        if self.open_string.is_some() {
            out.push('"');
        }
        for level in self.stack.iter().rev() {
            out.push(if level.array { ']' } else { '}' });
        }
        out
    }
}

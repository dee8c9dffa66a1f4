//! Unknown keys merged fragment by fragment: a delta's vendor keys (`annotations`, `audio`, the
//! legacy `function_call`) and `reasoning_details` blocks, on the hashed map (`super::Keyed`):
//! strings concatenated, lists extended, objects merged key by key, identity keys kept first.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Keys of an object nested in an unknown delta field that identify rather than stream.
pub(super) const IDENTITY_KEYS: [&str; 4] = ["id", "type", "index", "name"];

/// A value being merged fragment by fragment.
#[derive(Debug, Clone)]
pub(super) enum Merged {
    /// A string that identifies (kept, not concatenated).
    Str(String),
    /// String fragments, concatenated.
    Parts(String),
    /// A list, extended; elements that are objects with an `index` merge into the earlier
    /// element of that index (Groq's `executed_tools`: a tool's call, then its output).
    List(MergedList),
    /// An object, merged key by key.
    Object(Keyed<Merged>),
    /// Any other value, as sent (the last one wins).
    Json(Box<str>),
}

/// Whether the vendor object `extra` continues the run of `pending` (see
/// `ChoiceMore::pending_choice_extra`): the same object again (one comparison: Azure's filter
/// results, OpenRouter's `native_finish_reason`), or one of its skeleton (one walk over both),
/// which then becomes the pending one.
/// `skeleton` is the view's (see [`ChunkView::skeleton`]); `pending_skeleton`, the pending
/// object's, is set to it.
pub(super) fn continues_run(
    pending: &mut Option<String>,
    pending_skeleton: &mut u64,
    extra: &str,
    skeleton: u64,
) -> bool {
    let same = skeleton != 0 && skeleton == *pending_skeleton;
    let continues = match pending {
        Some(p) if p == extra => true,
        Some(p) if same || same_skeleton(p, extra) => {
            p.clear();
            p.push_str(extra);
            true
        }
        _ => false,
    };
    *pending_skeleton = skeleton;
    continues
}

/// Merges a delta's vendor object `text` into `target`, key by key.
pub(super) fn merge_delta_extra(target: &mut Option<Keyed<Merged>>, text: &str) {
    if let Some(entries) = Json::object(text) {
        let target = target.get_or_insert_with(Keyed::new);
        for (key, value) in entries {
            merge_value(target, &key, value.get(), false);
        }
    }
}

/// Whether the JSON texts `a` and `b` differ only in the contents of value strings and in
/// number tokens: the same keys in the same order, the same literals, nesting and
/// punctuation. Merged key by key with the last value winning, `b` then overrides `a` wholly.
/// One pass over both.
pub(super) fn same_skeleton(a: &str, b: &str) -> bool {
    /// The end of the string literal whose opening quote is at `at`, and whether a colon
    /// follows it (a key).
    pub(super) fn string_end(t: &[u8], at: usize) -> Option<(usize, bool)> {
        let mut k = at + 1;
        loop {
            k += memchr::memchr2(b'"', b'\\', t.get(k..)?)?;
            match t.get(k)? {
                b'"' => break,
                _ => k += 2,
            }
        }
        let rest = t.get(k + 1..).unwrap_or_default();
        let key = rest.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':');
        Some((k + 1, key))
    }
    let number = |c: &u8| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E');
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    loop {
        match (a.get(i), b.get(j)) {
            (None, None) => return true,
            (Some(b'"'), Some(b'"')) => {
                let (Some((ea, key_a)), Some((eb, key_b))) = (string_end(a, i), string_end(b, j))
                else {
                    return false;
                };
                if key_a != key_b || (key_a && a.get(i..ea) != b.get(j..eb)) {
                    return false;
                }
                i = ea;
                j = eb;
            }
            (Some(x), Some(y)) if number(x) && number(y) => {
                while a.get(i).is_some_and(number) {
                    i += 1;
                }
                while b.get(j).is_some_and(number) {
                    j += 1;
                }
            }
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            _ => return false,
        }
    }
}

/// Merges one unknown-delta value into `target[key]` (see the module docs). A `null` only
/// fills a key not seen before. Nested objects recurse once per JSON level.
pub(super) fn merge_value(target: &mut Keyed<Merged>, key: &str, value: &str, identity: bool) {
    let Some(json) = Json::read(value) else {
        return;
    };
    // Looked up by the hashed index past a few keys: one frame may carry tens of thousands.
    let slot = target.get_mut(key);
    match (json, slot) {
        (Json::Null, Some(_)) => {}
        (Json::Null, None) => target.set(key, Merged::Json("null".into())),
        (Json::Str(s), slot) if identity && IDENTITY_KEYS.contains(&key) => match slot {
            Some(cur) if !cur.is_empty_like() => {}
            Some(cur) => *cur = Merged::Str(s.into_owned()),
            None => target.set(key, Merged::Str(s.into_owned())),
        },
        (Json::Str(s), Some(Merged::Parts(cur))) => cur.push_str(&s),
        (Json::Str(s), Some(cur)) => *cur = Merged::Parts(s.into_owned()),
        (Json::Str(s), None) => target.set(key, Merged::Parts(s.into_owned())),
        (Json::Array(items), slot) => {
            let list = match slot {
                Some(Merged::List(cur)) => cur,
                Some(cur) => {
                    *cur = Merged::List(MergedList::default());
                    match cur {
                        Merged::List(list) => list,
                        _ => return,
                    }
                }
                None => match target.entry(key, || Merged::List(MergedList::default())) {
                    Merged::List(list) => list,
                    _ => return,
                },
            };
            for item in items {
                list.add(item.get());
            }
        }
        (Json::Object(entries), slot) => {
            let inner = match slot {
                Some(Merged::Object(inner)) => inner,
                Some(cur) => {
                    *cur = Merged::Object(Keyed::new());
                    match cur {
                        Merged::Object(inner) => inner,
                        _ => return,
                    }
                }
                None => match target.entry(key, || Merged::Object(Keyed::new())) {
                    Merged::Object(inner) => inner,
                    _ => return,
                },
            };
            for (k, v) in entries {
                merge_value(inner, &k, v.get(), true);
            }
        }
        (Json::Scalar(s), Some(cur)) => *cur = Merged::Json(s.into()),
        (Json::Scalar(s), None) => target.set(key, Merged::Json(s.into())),
    }
}

impl Merged {
    /// Whether an identity key's current value may be replaced (Python-falsy: `""`, `0`,
    /// `false`, `null`, an empty list or object).
    pub(super) fn is_empty_like(&self) -> bool {
        match self {
            Merged::Str(s) | Merged::Parts(s) => s.is_empty(),
            Merged::List(list) => list.items.is_empty(),
            Merged::Object(fields) => fields.is_empty(),
            Merged::Json(text) => matches!(text.trim(), "null" | "0" | "false" | "0.0"),
        }
    }

    pub(super) fn build(&self) -> Out {
        match self {
            Merged::Str(s) | Merged::Parts(s) => Out::Str(s.clone()),
            Merged::List(list) => Out::List(list.items.clone()),
            Merged::Object(fields) => build_object(fields),
            Merged::Json(text) => Out::json(text),
        }
    }
}

/// A list merged chunk by chunk: elements appended, except an object with an `index` that an
/// earlier object had, which is merged into that one key by key (later non-null wins).
#[derive(Debug, Default, Clone)]
pub(super) struct MergedList {
    pub(super) items: Vec<Out>,
    /// Where the object of each `index` (by its JSON text) is.
    pub(super) by_index: HashMap<Box<str>, usize>,
}

impl MergedList {
    pub(super) fn add(&mut self, item: &str) {
        let index = Json::object(item)
            .and_then(|entries| entries.into_iter().find(|(k, _)| k == "index"))
            .map(|(_, v)| Box::<str>::from(v.get().trim()));
        let Some(index) = index else {
            self.items.push(Out::json(item));
            return;
        };
        if let Some(Out::Map(earlier)) = self
            .by_index
            .get(&index)
            .and_then(|at| self.items.get_mut(*at))
        {
            earlier.merge_non_null(item);
            return;
        }
        self.by_index.insert(index, self.items.len());
        self.items
            .push(Out::Map(crate::fold::object_map(item).unwrap_or_default()));
    }
}

pub(super) fn build_object(fields: &Keyed<Merged>) -> Out {
    Out::Map(
        fields
            .iter()
            .map(|(k, v)| (k.to_owned(), v.build()))
            .collect(),
    )
}

//! The folds: each dialect's final object (the provider's non-streaming response) assembled in
//! pure Rust as the decoded documents arrive (API.md sections 3 and 5). One fold per dialect
//! lives in its own module; this module holds what they share: [`Out`], the result tree a fold
//! builds when asked for its result, and [`Map`], its insertion-ordered object.
//!
//! Carried across feeds: each fold's state (owned strings and JSON text; nothing borrows the
//! input). Cost: a fold appends each fragment once (O(total fragment length)); rare parts are
//! kept as JSON text and only decoded when the result is built. A `Map` looks keys up through
//! a hash index once it has more than a handful of keys, so hostile objects with many keys
//! cannot make merging quadratic.

crate::dialect::registry::dialects!(crate::dialect::registry::modules, pub);
pub mod summary;

mod intmap;
pub use intmap::IntMap;

pub use crate::json::tree::{
    check_json, entry, json_string, list_of, object_entries, object_map, object_text, string_of,
    Entry, Json, Keyed, Map, ObjectOr, Out, Patched,
};

/// At most this many notes (warnings, mismatches) are kept per fold: each note costs memory,
/// and hostile input could make one per event.
pub const MAX_NOTES: usize = 100;

/// The one rule for a message's identity (its id, model and creation time) as its chunks
/// restate it, which the folds and every translation writer follow: the first value that says
/// something wins; an empty `""` or a `0` (Azure's prompt-filter chunk comes first, with
/// `"id": ""` and `"created": 0`) says nothing, and a later value replaces it. True when `now`
/// changed.
pub fn take_better(now: &mut Option<String>, new: Option<&str>) -> bool {
    let better = match (now.as_deref(), new) {
        (None, Some(_)) => true,
        (Some(""), Some(new)) => !new.is_empty(),
        _ => false,
    };
    if better {
        *now = new.map(str::to_owned);
    }
    better
}

/// [`take_better`] for a creation time (`0`: not said).
pub fn take_better_time(now: &mut Option<i64>, new: Option<i64>) -> bool {
    let better = match (*now, new) {
        (None, Some(_)) => true,
        (Some(0), Some(new)) => new != 0,
        _ => false,
    };
    if better {
        *now = new;
    }
    better
}

/// Records a note unless the fold already holds [`MAX_NOTES`] of them (the last one kept
/// then says so). Returns whether `text` was kept.
pub fn note(notes: &mut Vec<String>, text: String) -> bool {
    match notes.len() {
        n if n + 1 < MAX_NOTES => {
            notes.push(text);
            true
        }
        n if n + 1 == MAX_NOTES => {
            notes.push(format!(
                "(more than {MAX_NOTES} notes; the rest are not kept)"
            ));
            false
        }
        _ => false,
    }
}

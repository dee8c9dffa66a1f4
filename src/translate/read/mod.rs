//! The source readers: each dialect's decoded documents (`crate::dialect`'s structs) as calls
//! on a [`Sink`], a file each (`chat`, `messages`, `responses`, `gemini`); here the JSON
//! helpers and the usage and error readers they share. A reader keeps only which block is
//! open and what it must not repeat (a chat tool call's opening, whether a Responses call
//! streamed its arguments, the text a Responses part streamed until its `.done` restates it).
//!
//! Keys: chat text 1, reasoning 2, refusal 3, tool call `i` is `16 + i`; Messages content block
//! `i` is `i`; Responses output item `i` is `i << 20` and its content part `c` is
//! `(i << 20) + 1 + c`.

use std::borrow::Cow;

use super::{json_string, Failure, Key, Kind, Meta, Sink, Stop, Usage};
use crate::dialect::ErrorInfo;
use crate::fold::chat::{ChunkView, ContentView, ToolView};
use crate::fold::{IntMap, Json};

/// The raw JSON of `key` in the object `text`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let [value] = fields(text, [key]);
    value
}

/// The raw JSON of each of `keys` in the object `text` (the first of duplicates), read in one
/// pass: an item or a whole response holds the whole text once more.
fn fields<'a, const N: usize>(text: &'a str, keys: [&str; N]) -> [Option<&'a str>; N] {
    fields_in(&Json::object(text).unwrap_or_default(), keys)
}

/// [`fields`] of an object already read one level deep.
fn fields_in<'a, const N: usize>(
    entries: &[crate::fold::Entry<'a>],
    keys: [&str; N],
) -> [Option<&'a str>; N] {
    let mut found = [None; N];
    for (k, v) in entries {
        if let Some(at) = keys.iter().position(|key| *key == k) {
            if let Some(slot @ None) = found.get_mut(at) {
                *slot = Some(v.get());
            }
        }
    }
    found
}

fn str_field<'a>(text: &'a str, key: &str) -> Option<Cow<'a, str>> {
    json_string(field(text, key)?)
}

fn u64_field(text: &str, key: &str) -> Option<u64> {
    field(text, key)?.trim().parse::<u64>().ok()
}

/// An error read out of the wire, as a sink takes it.
pub fn failure_of<'a>(
    info: &'a ErrorInfo<'a>,
) -> (Cow<'a, str>, Option<Cow<'a, str>>, Option<Cow<'a, str>>) {
    let plain = |raw: Option<&'a str>| -> Option<Cow<'a, str>> {
        let raw = raw?;
        json_string(raw).or(Some(Cow::Borrowed(raw)))
    };
    (
        Cow::Borrowed(info.message.as_ref()),
        plain(info.type_),
        plain(info.code),
    )
}

/// Sends an error read out of the wire to `sink`.
pub fn send_error(info: &ErrorInfo<'_>, sink: &mut dyn Sink) {
    let (message, type_, code) = failure_of(info);
    sink.error(Failure {
        message: &message,
        type_: type_.as_deref(),
        code: code.as_deref(),
    });
}

/// OpenAI usage (chat or Responses names) in neutral terms.
/// OpenAI-style usage in neutral terms: output counts reasoning, as OpenAI's
/// `completion_tokens` does. xAI counts its reasoning tokens outside `completion_tokens`
/// (`total_tokens` = prompt + completion + reasoning): where the stated total says so, the
/// reasoning is added to the output here, the one place that convention is resolved.
fn openai_usage(text: &str) -> Option<Usage> {
    let entries = Json::object(text)?;
    let mut u = Usage::default();
    let mut total: Option<u64> = None;
    for (key, value) in entries {
        let v = value.get();
        match key.as_ref() {
            "prompt_tokens" | "input_tokens" => u.input = v.trim().parse().ok(),
            "completion_tokens" | "output_tokens" => u.output = v.trim().parse().ok(),
            "prompt_tokens_details" | "input_tokens_details" => {
                u.cache_read = u64_field(v, "cached_tokens");
                if let Some(n) = u64_field(v, "cache_write_tokens") {
                    u.cache_write = Some(n);
                }
            }
            "completion_tokens_details" | "output_tokens_details" => {
                u.reasoning = u64_field(v, "reasoning_tokens");
            }
            "total_tokens" => total = v.trim().parse().ok(),
            _ => {}
        }
    }
    if let (Some(total), Some(input), Some(output), Some(reasoning)) =
        (total, u.input, u.output, u.reasoning)
    {
        let inside = input.saturating_add(output);
        if reasoning > 0 && total != inside && total == inside.saturating_add(reasoning) {
            u.output = Some(output.saturating_add(reasoning));
        }
    }
    Some(u)
}

/// Anthropic usage in neutral terms (its `input_tokens` excludes the cached ones).
fn anthropic_usage(text: &str) -> Option<Usage> {
    Some(Usage {
        input: None,
        uncached: u64_field(text, "input_tokens"),
        cache_read: u64_field(text, "cache_read_input_tokens"),
        cache_write: u64_field(text, "cache_creation_input_tokens"),
        output: u64_field(text, "output_tokens"),
        reasoning: None,
    })
}

/// Declares each source's reader module and names its reader, from the dialect list.
macro_rules! reader_modules {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        $(mod $m; pub use $m::$reader;)*
    };
}
crate::dialect::registry::dialects!(reader_modules);

/// What a source reader does at the stream's two ends: `[DONE]` (by default the end of the
/// answer) and the end of the body (by default nothing: the terminal marker ended it).
pub trait Ends {
    /// `[DONE]`.
    fn done(&mut self, sink: &mut dyn Sink) {
        sink.end();
    }

    /// The end of the upstream body.
    fn end_of_input(&mut self, _sink: &mut dyn Sink) {}
}

/// How a dialect's usage object reads in neutral terms: each source reader says it for its
/// dialect, in its own file.
pub trait ReadsUsage {
    /// The neutral usage of the JSON text of a usage object of the dialect.
    fn usage(text: &str) -> Option<Usage>;
}

/// Declares [`usage_in`] from the dialect list.
macro_rules! usage_in {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// The neutral usage of `usage`, the value of a `dialect` final object's usage key
        /// (its `result_usage`), each provider's convention resolved by the same rules the
        /// translation readers use.
        pub fn usage_in(dialect: crate::dialect::Dialect, usage: &crate::fold::Out) -> Option<Usage> {
            let text = usage.to_json();
            match dialect {
                $(crate::dialect::Dialect::$d => <$reader as ReadsUsage>::usage(&text),)*
            }
        }
    };
}
crate::dialect::registry::dialects!(usage_in);

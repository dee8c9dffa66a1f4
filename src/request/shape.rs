//! What a request carries besides its turns, and what a gateway needs of it to be safe: the
//! model name checked and written as one path segment, the settings only some dialects have
//! (one table), mid-conversation system turns where the target has none, tool results whose
//! call is not in the history, and the reasoning carried in tool call ids put back.

use serde_json::{Map, Value};

use super::{error, text_of, Notes, Part, Reasoning, Request, RequestError, Role};
use crate::dialect::Dialect;

// -- model names, settings, carried reasoning -----------------------------------------------

/// The longest model name any provider takes (bytes).
pub const MAX_MODEL: usize = 256;

/// Refuses a model name no provider accepts: empty, longer than [`MAX_MODEL`] bytes, or with
/// a control character (a CR or LF in one could otherwise reach a request line).
pub fn check_model(model: &str) -> Result<(), RequestError> {
    if model.is_empty() {
        return error("$.model", "the model name is empty");
    }
    if model.len() > MAX_MODEL {
        return error(
            "$.model",
            format!("the model name is longer than {MAX_MODEL} bytes"),
        );
    }
    if model.chars().any(char::is_control) {
        return error("$.model", "the model name has a control character");
    }
    Ok(())
}

/// `text` as one percent-encoded path segment (RFC 3986): every byte but the unreserved
/// `A-Z a-z 0-9 - . _ ~` is `%XX`, so that no `/`, `?`, `#`, `%`, `:`, space, CR, LF or
/// non-ASCII byte can change the request line, the path or the query it is put in.
pub fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out == "." || out == ".." {
        out = out.replace('.', "%2E"); // a dot segment would climb the path
    }
    out
}

/// The registry's streaming path of `dialect` with its `{model}` segment (already a path
/// segment: [`path_segment`], [`model_segment`]) and `{version}` filled in.
pub fn stream_path(dialect: Dialect, model_segment: &str, version: &str) -> String {
    dialect
        .spec()
        .stream_path
        .replace("{version}", version)
        .replace("{model}", model_segment)
}

/// A model name as the one path segment that names it (Gemini's `models/{model}`): a leading
/// `models/` (how Google's SDKs may spell it) dropped, the rest [`path_segment`].
pub fn model_segment(model: &str) -> String {
    path_segment(model.strip_prefix("models/").unwrap_or(model))
}

/// A setting that only some dialects have, crossing where the target has it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Sampling from the `k` most likely tokens only (`top_k`, Gemini's `topK`).
    TopK,
    /// The sampling seed.
    Seed,
    /// The penalty on tokens already present (`presence_penalty`).
    PresencePenalty,
    /// The penalty on tokens by how often they appeared (`frequency_penalty`).
    FrequencyPenalty,
    /// The end user's identifier.
    User,
    /// The caller's key-value metadata.
    Metadata,
    /// Whether the provider keeps the response.
    Store,
}

/// Each setting and its name. Where each dialect spells it (a dotted path into the body;
/// `None` where the dialect has no such setting) is its request module's `setting`, read
/// through [`spelling`]: what the readers take (which keys are not "unmapped") and what
/// [`translate`] lets cross.
pub const SETTINGS: [(Setting, &str); 7] = [
    (Setting::TopK, "top_k"),
    (Setting::Seed, "seed"),
    (Setting::PresencePenalty, "presence_penalty"),
    (Setting::FrequencyPenalty, "frequency_penalty"),
    (Setting::User, "user"),
    (Setting::Metadata, "metadata"),
    (Setting::Store, "store"),
];

/// Declares [`spelling`] from the dialect list.
macro_rules! spelling_each {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// Where a `dialect` request spells `setting` (its request module's `setting`).
        pub fn spelling(dialect: Dialect, setting: Setting) -> Option<&'static str> {
            match dialect {
                $(Dialect::$d => super::$m::setting(setting),)*
            }
        }
    };
}
crate::dialect::registry::dialects!(spelling_each);

/// Whether `key`, a top-level key of a `dialect` request, holds a setting of [`SETTINGS`]
/// (the readers take it: it is not "unmapped").
pub fn is_setting(dialect: Dialect, key: &str) -> bool {
    SETTINGS.iter().any(|(setting, _)| {
        spelling(dialect, *setting).is_some_and(|p| p.split('.').next() == Some(key))
    })
}

/// Whether the dotted `path` of a `dialect` request is where a setting of [`SETTINGS`] is
/// (a nested key the reader takes: it is not "unmapped").
pub fn is_setting_path(dialect: Dialect, path: &str) -> bool {
    SETTINGS
        .iter()
        .any(|(setting, _)| spelling(dialect, *setting) == Some(path))
}

fn at_path<'a>(body: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(body, |v, key| v.get(key))
}

/// The settings of [`SETTINGS`] that `body` (a request of `source`) gives.
pub(super) fn read_settings(body: &Value, source: Dialect) -> Vec<(Setting, Value)> {
    SETTINGS
        .iter()
        .filter_map(|(setting, _)| {
            let path = spelling(source, *setting)?;
            let value = at_path(body, path).filter(|v| !v.is_null())?;
            Some((*setting, value.clone()))
        })
        .collect()
}

/// Writes `settings` into `body` (a request of `target`) where the target has them; the
/// others are named in `notes`.
pub(super) fn write_settings(
    settings: &[(Setting, Value)],
    target: Dialect,
    body: &mut Value,
    notes: &mut Notes,
) {
    for (setting, value) in settings {
        let Some((_, name)) = SETTINGS.iter().find(|(s, _)| s == setting) else {
            continue;
        };
        let Some(path) = spelling(target, *setting) else {
            notes.add(format!("{name} (no equivalent in the target's request)"));
            continue;
        };
        let Some(value) = typed_setting(*setting, value) else {
            notes.add(format!(
                "{name} {value} (the target takes a whole number there: not sent)"
            ));
            continue;
        };
        let mut at = &mut *body;
        let mut keys = path.split('.').peekable();
        while let Some(key) = keys.next() {
            let Value::Object(map) = at else { break };
            if keys.peek().is_none() {
                map.insert(key.to_owned(), value.clone());
                break;
            }
            at = map
                .entry(key.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
        }
    }
}

/// `value` as the target's type for `setting`: `top_k` and `seed` are integers in every
/// dialect that has them (Gemini's JSON may spell one `40.0`, which Anthropic's API refuses);
/// a number with a fraction (or not a number) is `None`. The others cross as they are.
fn typed_setting(setting: Setting, value: &Value) -> Option<Value> {
    if !matches!(setting, Setting::TopK | Setting::Seed) {
        return Some(value.clone());
    }
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(value.clone()),
        Value::Number(n) => {
            let f = n.as_f64()?;
            // Whole and within i64 (2^63 is the first f64 past it).
            #[allow(clippy::cast_possible_truncation)]
            let whole =
                (f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18).then_some(f as i64)?;
            Some(Value::from(whole))
        }
        _ => None,
    }
}

/// For a target with no system turn inside the conversation (Gemini, Converse): a
/// mid-conversation system message joins the system prompt (its nearest form: what it says
/// still reaches the model), noted (`note`: the target's words for it).
pub(super) fn system_turns_into_prompt(
    request: &mut Request,
    note: &'static str,
    notes: &mut Notes,
) {
    let mut kept = Vec::with_capacity(request.turns.len());
    for turn in std::mem::take(&mut request.turns) {
        if turn.role != Role::System {
            kept.push(turn);
            continue;
        }
        notes.add(note);
        for part in turn.parts {
            if let Part::Text(t) = part {
                request.system.push(t);
            }
        }
    }
    request.turns = kept;
}

/// The text of a system turn's parts, joined.
pub fn system_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Tool results whose call is not in the history (a server tool's call the provider ran, a
/// history trimmed to fit): a target that pairs every result with a call of the same
/// request (chat, Messages, Responses refuse one alone) gets the result as the user's text,
/// naming the call; Gemini, which pairs by name, gets it as it is. Noted either way.
pub(super) fn orphan_results(request: &mut Request, target: Dialect, notes: &mut Notes) {
    let calls: std::collections::HashSet<String> = request
        .turns
        .iter()
        .flat_map(|t| t.parts.iter())
        .filter_map(|p| match p {
            Part::Call { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    for part in request.turns.iter_mut().flat_map(|t| t.parts.iter_mut()) {
        let Part::Result {
            id, name, content, ..
        } = part
        else {
            continue;
        };
        if calls.contains(id.as_str()) {
            continue;
        }
        if super::rules(target).results_by_name {
            notes.add(
                "tool results whose call is not in the history (written under the tool's name)",
            );
            if name.is_none() {
                *name = Some(id.clone());
            }
            continue;
        }
        notes.add("tool results whose call is not in the history (written as the user's text, naming the call)");
        let mut inner = Notes::default();
        let text = text_of(content, &mut inner, "a tool result");
        let label = match name {
            Some(n) => format!("[the result of tool call {id} ({n})]\n{text}"),
            None => format!("[the result of tool call {id}]\n{text}"),
        };
        *part = Part::Text(label);
    }
}

/// Every tool call id that carries reasoning ([`crate::translate::carry`]) back to its
/// original, in the calls and in the results under them; the reasoning it carries put back
/// where an upstream of `target` wants it (Messages and Responses: at the start of the turn,
/// before the turn's text, as Anthropic requires of a thinking block; Gemini: just before the
/// call, whose part takes its signature). Reasoning carried for another dialect's upstream,
/// or an id that looks like a carrier but does not decode, is dropped with a note.
pub(super) fn restore_carried(
    request: &mut Request,
    target: Dialect,
    notes: &mut Notes,
    stored: &super::Stored,
) {
    use crate::translate::carry;
    // The store form: a short id found in `stored` is its carrier. A call's reasoning is
    // restored once (the first call under that id); a result, or a call named again, only
    // gets its original id back, decoded once per id: what a request costs stays linear in
    // its size, however often it names a short id.
    let mut restored: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut originals: std::collections::HashMap<String, Option<String>> =
        std::collections::HashMap::new();
    for turn in &mut request.turns {
        let mut parts = Vec::with_capacity(turn.parts.len());
        // Reasoning that goes to the start of the turn, put there once at the end (an
        // insertion at the front per piece would cost quadratic time).
        let mut front = Vec::new();
        for mut part in std::mem::take(&mut turn.parts) {
            let is_call = matches!(part, Part::Call { .. });
            let id = match &mut part {
                Part::Call { id, .. } | Part::Result { id, .. } => id,
                _ => {
                    parts.push(part);
                    continue;
                }
            };
            let decoded = match stored.get(id.as_str()) {
                None => carry::decode(id),
                Some(carrier) if is_call && !restored.contains(id.as_str()) => {
                    restored.insert(id.clone());
                    Some(carry::decode(carrier).unwrap_or(Err(())))
                }
                Some(carrier) => {
                    let original =
                        originals.entry(id.clone()).or_insert_with(|| {
                            match carry::decode(carrier) {
                                Some(Ok((original, _, _))) => Some(original),
                                _ => None,
                            }
                        });
                    Some(original.clone().map(|o| (o, target, Vec::new())).ok_or(()))
                }
            };
            match decoded {
                None => {}
                Some(Err(())) => notes.add(
                    "tool call ids that look like ssewire's carried reasoning but do not decode (kept as they are)",
                ),
                Some(Ok((original, dialect, reasoning))) => {
                    *id = original;
                    if is_call && dialect != target {
                        notes.add(format!(
                            "reasoning carried for a {} upstream (this one reads only its own)",
                            dialect.name()
                        ));
                    } else if is_call {
                        for r in reasoning {
                            let r = Part::Reasoning(Reasoning {
                                from: Some(dialect),
                                text: r.text,
                                signature: r.signature,
                                id: r.id,
                                encrypted: r.encrypted,
                            });
                            if super::rules(target).reasoning_on_call {
                                parts.push(r);
                            } else {
                                front.push(r);
                            }
                        }
                    }
                }
            }
            parts.push(part);
        }
        if !front.is_empty() {
            front.append(&mut parts);
            parts = front;
        }
        turn.parts = parts;
    }
    // The calls' names, by their ids as they now are.
    let renamed: Vec<(String, String)> = request
        .turns
        .iter()
        .flat_map(|t| t.parts.iter())
        .filter_map(|p| match p {
            Part::Call { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    for (id, name) in renamed {
        request.calls.entry(id).or_insert(name);
    }
}

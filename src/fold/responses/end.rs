//! The end of a Responses stream: its terminal event (`response.completed`, `.incomplete`,
//! `.failed`) read against what the deltas assembled, and the final object built.

#[allow(clippy::wildcard_imports)]
use super::*;

impl ResponsesFold {
    pub(super) fn terminal(&mut self, v: &EventView<'_>) {
        // The entries the decoder read, else a read of the text.
        let read;
        let entries = match (v.response, v.response_entries) {
            (Some(_), Some(entries)) => Some(entries),
            (Some(text), None) => {
                read = Json::object(text);
                read.as_deref()
            }
            (None, _) => None,
        };
        let (Some(text), Some(entries)) = (v.response, entries) else {
            note(
                &mut self.warnings,
                format!("{} without a response object", v.kind),
            );
            return;
        };
        // The last of duplicate keys, as a map keeps them.
        let output = entry(entries, "output").filter(|value| value.get().trim() != "null");
        self.final_ = Some((with_keys(text, entries), output.is_some()));
        let Some(output) = output else {
            return;
        };
        if self.unchecked {
            self.drop_assembled();
            return;
        }
        let output = Out::json(output.get());
        let assembled = self.assembled_output();
        let Some(output) = list_of(Some(&output)) else {
            note(
                &mut self.mismatches,
                format!("{}: output is {}, not a list", v.kind, short(Some(&output))),
            );
            return;
        };
        if !assembled.is_empty() && output.len() != assembled.len() {
            note(
                &mut self.mismatches,
                format!(
                    "{}: {} output items, {} assembled from the stream",
                    v.kind,
                    output.len(),
                    assembled.len()
                ),
            );
        }
        for (i, (a, b)) in assembled.iter().zip(&output).enumerate() {
            diff_items(&format!("output[{i}]"), a, b, v.kind, &mut self.mismatches);
        }
        self.drop_assembled();
    }

    /// The terminal response's output is the result's from now on: the pieces assembled from
    /// the stream are not needed again (this keeps the text in memory once). Each item's
    /// arguments reader stays, for `partial_arguments`.
    pub(super) fn drop_assembled(&mut self) {
        for item in self.items.values_mut() {
            item.content = None;
            item.summary = None;
            item.fields.clear();
            item.done = None;
        }
    }

    pub(super) fn assembled_output(&self) -> Vec<Out> {
        self.items.values().map(Item::build).collect()
    }

    /// The `response` object folded so far.
    pub fn result(&self) -> Out {
        // A terminal response that has every key of a result is the result as sent:
        // converted once, with no map built in between.
        if let Some((text, true)) = &self.final_ {
            return Out::json(text);
        }
        let mut out = match self.final_.as_ref().and_then(|(text, _)| object_map(text)) {
            Some(mut out) => {
                if out.get("output").is_none_or(Out::is_null) {
                    out.set("output", Out::List(self.assembled_output()));
                }
                out
            }
            None => {
                let mut out = self
                    .base
                    .as_deref()
                    .and_then(object_map)
                    .unwrap_or_default();
                if !self.items.is_empty() || out.get("output").is_none_or(Out::is_null) {
                    out.set("output", Out::List(self.assembled_output()));
                }
                out
            }
        };
        for (key, default) in RESPONSE_KEYS {
            if !out.contains_key(key) {
                out.set(key, default.map_or(Out::Null, |d| Out::Str(d.into())));
            }
        }
        Out::Map(out)
    }
}

/// `text`, a JSON object whose top-level entries are `entries`, with the keys every result has
/// that it lacks added at its end (as [`ResponsesFold::result`] sets them on a map).
fn with_keys(text: &str, entries: &[(Cow<'_, str>, &serde_json::value::RawValue)]) -> Box<str> {
    let body = text.trim_end();
    let Some(open) = body.strip_suffix('}') else {
        return text.into();
    };
    let mut out = String::from(open);
    let mut empty = entries.is_empty();
    for (key, default) in RESPONSE_KEYS {
        if key == "output" || entries.iter().any(|(k, _)| k == key) {
            continue;
        }
        if !empty {
            out.push(',');
        }
        empty = false;
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        match default {
            Some(d) => {
                out.push('"');
                out.push_str(d);
                out.push('"');
            }
            None => out.push_str("null"),
        }
    }
    out.push('}');
    out.into()
}

//! One output item being assembled (`Item`) and its content parts (`Part`): deltas
//! appended, `.done` events checked against what was assembled.

#[allow(clippy::wildcard_imports)]
use super::*;

#[derive(Debug)]
pub(super) struct Item {
    pub(super) index: i64,
    pub(super) item: Map,
    pub(super) content: Option<Parts>,
    pub(super) summary: Option<Parts>,
    /// Streamed string fields (`arguments`, `input`, `code`): their text so far.
    pub(super) fields: Vec<(String, String)>,
    /// The `arguments` deltas joined as they arrive, read as partial JSON when asked
    /// (`partial_arguments`); a full value (`.done`, `output_item.done`) only starts it when
    /// no delta came.
    pub(super) arguments: Option<Joined>,
    pub(super) done: Option<Out>,
}

/// Parts by index, in arrival order (sorted when every index is known).
pub(super) type Parts = Vec<(Option<i64>, Part)>;

#[derive(Debug)]
pub(super) struct Part {
    pub(super) part: Map,
    /// `"text"` or `"refusal"`: where the fragments go.
    pub(super) field: &'static str,
    /// The part's text once a fragment came (its start text included).
    pub(super) text: Option<String>,
    pub(super) annotations: Option<Vec<Out>>,
    pub(super) logprobs: Option<Vec<Out>>,
    pub(super) done: Option<Out>,
}

impl Part {
    pub(super) fn new(part: Map, field: &'static str) -> Self {
        Part {
            part,
            field,
            text: None,
            annotations: None,
            logprobs: None,
            done: None,
        }
    }

    /// A fragment: the first one starts from the part's own text.
    pub(super) fn push(&mut self, fragment: &str) {
        match &mut self.text {
            Some(text) => text.push_str(fragment),
            None => {
                let prefix = string_of(self.part.get(self.field)).unwrap_or_default();
                self.text = Some(prefix + fragment);
                self.part.set(self.field, Out::Str(String::new()));
            }
        }
    }

    pub(super) fn joined(&self) -> String {
        match &self.text {
            Some(text) => text.clone(),
            None => string_of(self.part.get(self.field)).unwrap_or_default(),
        }
    }

    /// A `.done` event's full text replaces the fragments.
    pub(super) fn set_full(&mut self, text: &str) {
        self.part.set(self.field, Out::Str(String::new()));
        self.text = Some(text.to_owned());
    }

    pub(super) fn assembled(&self) -> Map {
        let mut out = self.part.clone();
        out.set(self.field, Out::Str(self.joined()));
        for (key, added) in [
            ("annotations", &self.annotations),
            ("logprobs", &self.logprobs),
        ] {
            if let Some(added) = added {
                let mut all = list_of(out.get(key)).unwrap_or_default();
                all.extend(added.iter().cloned());
                out.set(key, Out::List(all));
            }
        }
        out
    }

    pub(super) fn build(&self) -> Out {
        match &self.done {
            Some(done) => done.clone(),
            None => Out::Map(self.assembled()),
        }
    }
}

pub(super) fn sorted_parts(parts: &Parts) -> Vec<&Part> {
    let mut order: Vec<&(Option<i64>, Part)> = parts.iter().collect();
    if order.iter().all(|(i, _)| i.is_some()) {
        order.sort_by_key(|(i, _)| *i);
    }
    order.into_iter().map(|(_, p)| p).collect()
}

impl Item {
    pub(super) fn new(index: i64, item: Map) -> Self {
        Item {
            index,
            item,
            content: None,
            summary: None,
            fields: Vec::new(),
            arguments: None,
            done: None,
        }
    }

    /// Starts the arguments from a full value, unless deltas already started them.
    pub(super) fn arguments_from(&mut self, full: Option<&str>) {
        if let (None, Some(full)) = (&self.arguments, full) {
            let mut p = Joined::new();
            p.push(full);
            self.arguments = Some(p);
        }
    }

    pub(super) fn describe(&self) -> String {
        format!(
            "output[{}] ({} {})",
            self.index,
            show(self.item.get("type")),
            show(self.item.get("id"))
        )
    }

    pub(super) fn assembled(&self) -> Out {
        let mut out = self.item.clone();
        for (key, parts) in [("content", &self.content), ("summary", &self.summary)] {
            if let Some(parts) = parts.as_ref().filter(|p| !p.is_empty()) {
                let built = sorted_parts(parts).into_iter().map(Part::build).collect();
                out.set(key, Out::List(built));
            }
        }
        for (name, text) in &self.fields {
            out.set(name, Out::Str(text.clone()));
        }
        Out::Map(out)
    }

    pub(super) fn build(&self) -> Out {
        match &self.done {
            Some(done) => done.clone(),
            None => self.assembled(),
        }
    }

    /// The content (`summary == false`) or summary part `index` (created when missing).
    pub(super) fn part_for(
        &mut self,
        summary: bool,
        index: Option<i64>,
        field: &'static str,
        part_type: &str,
    ) -> &mut Part {
        let parts = if summary {
            self.summary.get_or_insert_with(Vec::new)
        } else {
            self.content.get_or_insert_with(Vec::new)
        };
        let at = match parts.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                let mut part = Map::new();
                part.set("type", Out::Str(part_type.into()));
                part.set(field, Out::Str(String::new()));
                if part_type == "output_text" {
                    part.set("annotations", Out::List(Vec::new()));
                }
                parts.push((index, Part::new(part, field)));
                parts.len() - 1
            }
        };
        #[allow(clippy::indexing_slicing)] // `at` was found or just pushed
        &mut parts[at].1
    }

    pub(super) fn field_text(&mut self, name: &str) -> Option<&mut String> {
        self.fields
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }
}

/// The item type an event implies when it names an item that was never announced, and the
/// item field its deltas stream into.
pub(super) fn streamed_field(kind: &str) -> Option<(&'static str, &'static str, bool)> {
    // (field, implied item type, is the `.done` event)
    Some(match kind {
        "response.function_call_arguments.delta" | "response.mcp_call_arguments.delta" => {
            ("arguments", "function_call", false)
        }
        "response.custom_tool_call_input.delta" => ("input", "custom_tool_call", false),
        "response.code_interpreter_call_code.delta" => ("code", "code_interpreter_call", false),
        "response.function_call_arguments.done" | "response.mcp_call_arguments.done" => {
            ("arguments", "function_call", true)
        }
        "response.custom_tool_call_input.done" => ("input", "custom_tool_call", true),
        "response.code_interpreter_call_code.done" => ("code", "code_interpreter_call", true),
        _ => return None,
    })
}

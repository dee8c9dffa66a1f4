//! The Converse fold: Bedrock `ConverseStream` events folded into the dict boto3's
//! `converse()` returns for the same answer:
//!
//! ```text
//! {"output": {"message": {"role": "assistant", "content": [...]}}, "stopReason": ...,
//!  "usage": {...}, "metrics": {...}}   (+ "additionalModelResponseFields", "trace",
//!                                         "performanceConfig" when the stream sent them)
//! ```
//!
//! Blocks by `contentBlockIndex`, in index order. A text block has no start event: its first
//! delta makes it (`{"text"}`; with citations `{"citationsContent": {"content": [{"text"}],
//! "citations": [...]}}`); a tool block starts with `start.toolUse` (`toolUseId`, `name`) and
//! its `input` arrives as JSON text in pieces, joined and read as a value (`{}` when none came,
//! read as partial JSON as it arrives for `partial_arguments`; input that stops early, a
//! stream cut or stopped inside it, is the object read so far, as the other folds and the
//! writers keep it, with a warning; input that is not JSON is `{}`); a reasoning block is
//! `{"reasoningContent": {"reasoningText": {"text", "signature"}}}`, or
//! `{"reasoningContent": {"redactedContent": bytes}}` for redacted reasoning (base64 on the
//! wire). `stopReason` and `additionalModelResponseFields` come from `messageStop`; `usage`,
//! `metrics`, `trace` and `performanceConfig` from `metadata` (the last one sent).
//!
//! Carried across events: the fold state (owned text). Cost: each piece is appended once.

use crate::dialect::converse::Event;
use crate::json::partial::{Joined, PartialJson, SoFar};

use super::summary::{texts, Node};
use super::{check_json, note, IntMap, Map, Out};

/// What one block holds.
#[derive(Debug, Default)]
struct Block {
    text: String,
    tool: Option<(String, String)>,
    /// A tool call's `type` (`server_tool_use`).
    tool_type: Option<String>,
    /// A server tool's result: its start (`toolUseId`, `type`, `status`), and its content
    /// items as they came (text pieces joined, each JSON document an item).
    result: Option<ResultBlock>,
    /// The tool input's pieces joined, read as partial JSON when asked (`partial_arguments`).
    input: Joined,
    /// The input's warning as last read, and the input's length then (`warnings()` may be
    /// asked after every event: an input is read again only when it grew).
    input_read: Option<(usize, Option<String>)>,
    reasoning: Option<String>,
    signature: Option<String>,
    redacted: Option<Vec<u8>>,
    citations: Vec<Out>,
    /// Another block type's start, as sent (kept whole).
    other: Option<Box<str>>,
}

/// A server tool's result block.
#[derive(Debug, Default)]
struct ResultBlock {
    id: String,
    type_: Option<String>,
    status: Option<String>,
    content: Vec<Out>,
}

/// The Converse fold: everything accumulated so far.
#[derive(Debug, Default)]
pub struct ConverseFold {
    role: Option<String>,
    blocks: IntMap<Block>,
    stop_reason: Option<String>,
    /// The raw JSON of the later top-level parts, by their key.
    parts: Map,
    warnings: Vec<String>,
}

impl ConverseFold {
    /// Folds one event; `kind` is its `:event-type`.
    pub fn add(&mut self, kind: &str, e: &Event<'_>) {
        match kind {
            "messageStart" => {
                if let Some(role) = &e.role {
                    self.role = Some(role.to_string());
                }
            }
            "contentBlockStart" => {
                let block = self.block(e.content_block_index);
                if let Some(t) = e.tool_start() {
                    let id = t.tool_use_id.as_deref().unwrap_or_default().to_owned();
                    let name = t.name.as_deref().unwrap_or_default().to_owned();
                    block.tool = Some((id, name));
                    block.tool_type = t.type_.map(|t| t.into_owned());
                } else if let Some(r) = e.result_start() {
                    block.result = Some(ResultBlock {
                        id: r.tool_use_id.as_deref().unwrap_or_default().to_owned(),
                        type_: r.type_.map(|t| t.into_owned()),
                        status: r.status.map(|s| s.into_owned()),
                        content: Vec::new(),
                    });
                } else {
                    block.other = e.start.map(|s| s.get().into());
                }
            }
            "contentBlockDelta" => self.delta(e),
            "messageStop" => {
                if let Some(reason) = &e.stop_reason {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(fields) = e.additional_model_response_fields {
                    self.parts
                        .set("additionalModelResponseFields", Out::json(fields.get()));
                }
            }
            "metadata" => {
                for (key, value) in [
                    ("usage", e.usage),
                    ("metrics", e.metrics),
                    ("trace", e.trace),
                    ("performanceConfig", e.performance_config),
                ] {
                    if let Some(value) = value {
                        self.parts.set(key, Out::json(value.get()));
                    }
                }
            }
            // contentBlockStop, and event types of later API versions: nothing to keep.
            _ => {}
        }
    }

    fn block(&mut self, index: Option<i64>) -> &mut Block {
        self.blocks
            .get_or_insert_with(index.unwrap_or(0), Block::default)
    }

    fn delta(&mut self, e: &Event<'_>) {
        let Some(delta) = &e.delta else {
            return;
        };
        let mut bad_base64 = false;
        let block = self.block(e.content_block_index);
        if let Some(text) = &delta.text {
            block.text.push_str(text);
        }
        if let Some(input) = delta.tool_use.as_ref().and_then(|t| t.input.as_deref()) {
            block.input.push(input);
        }
        if let Some(r) = &delta.reasoning_content {
            if let Some(text) = &r.text {
                block
                    .reasoning
                    .get_or_insert_with(String::new)
                    .push_str(text);
            }
            if let Some(sig) = &r.signature {
                block
                    .signature
                    .get_or_insert_with(String::new)
                    .push_str(sig);
            }
            if let Some(data) = &r.redacted_content {
                match crate::base64::decode(data) {
                    Some(bytes) => block.redacted.get_or_insert_with(Vec::new).extend(bytes),
                    None => bad_base64 = true,
                }
            }
        }
        if let Some(citation) = delta.citation {
            block.citations.push(Out::json(citation.get()));
        }
        if let Some(pieces) = delta.tool_result {
            let result = block.result.get_or_insert_with(ResultBlock::default);
            add_result_pieces(&mut result.content, pieces.get());
        }
        if bad_base64 {
            note(
                &mut self.warnings,
                "redacted reasoning that is not base64 (dropped)".into(),
            );
        }
    }

    /// The tool input read so far of block `index` (`partial_arguments`).
    pub fn arguments(&self, index: i64) -> Option<&Joined> {
        self.blocks
            .get(index)
            .filter(|b| b.tool.is_some())
            .map(|b| &b.input)
    }

    /// The warnings so far: the ones kept, then each tool input's as it stands now (an input
    /// still streaming reads as cut; what its later pieces make of it replaces that).
    pub fn warnings(&mut self) -> Vec<String> {
        let mut all = self.warnings.clone();
        let indexes: Vec<i64> = self.blocks.sorted().iter().map(|(i, _)| *i).collect();
        for index in indexes {
            let Some(block) = self.blocks.get_mut(index) else {
                continue;
            };
            let len = block.input.text().len();
            if block
                .input_read
                .as_ref()
                .is_none_or(|(read, _)| *read != len)
            {
                block.input_read = Some((len, block.input_warning(index)));
            }
            if let Some((_, Some(warning))) = &block.input_read {
                note(&mut all, warning.clone());
            }
        }
        all
    }

    /// The `converse()` response folded so far.
    pub fn result(&mut self) -> Out {
        let mut content = Vec::new();
        for (_, block) in self.blocks.sorted() {
            content.push(block.build());
        }
        let mut message = Map::new();
        message.set(
            "role",
            Out::Str(self.role.clone().unwrap_or_else(|| "assistant".into())),
        );
        message.set("content", Out::List(content));
        let mut output = Map::new();
        output.set("message", Out::Map(message));
        let mut out = Map::new();
        out.set("output", Out::Map(output));
        out.set("stopReason", Out::str_or_null(self.stop_reason.as_deref()));
        for key in ["usage", "metrics"] {
            out.set(key, self.parts.get(key).cloned().unwrap_or(Out::Null));
        }
        for (key, value) in self.parts.iter() {
            if !out.contains_key(key) {
                out.set(key, value.clone());
            }
        }
        Out::Map(out)
    }
}

/// Appends a `toolResult` delta's items to `content`: a text piece joins the text item before
/// it, a JSON document is an item of its own, anything else is kept as sent.
fn add_result_pieces(content: &mut Vec<Out>, pieces: &str) {
    #[derive(serde::Deserialize)]
    struct Piece<'a> {
        #[serde(borrow, default)]
        text: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        json: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(items) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(pieces) else {
        return;
    };
    for item in items {
        match serde_json::from_str::<Piece<'_>>(item.get()) {
            Ok(Piece {
                text: Some(text),
                json: None,
            }) => {
                if let Some(Out::Map(last)) = content.last_mut() {
                    if let Some(Out::Str(joined)) = last.get_mut("text") {
                        joined.push_str(&text);
                        continue;
                    }
                }
                let mut m = Map::new();
                m.set("text", Out::Str(text.into_owned()));
                content.push(Out::Map(m));
            }
            Ok(Piece {
                text: None,
                json: Some(json),
            }) => {
                let mut m = Map::new();
                m.set("json", Out::json(json.get()));
                content.push(Out::Map(m));
            }
            _ => content.push(Out::json(item.get())),
        }
    }
}

impl Block {
    /// The partial value of tool input that is valid JSON so far but stops early: an object
    /// (Converse's `input` is one), when the decoder can hold it.
    fn cut_off_input(&self) -> Option<Out> {
        // Only for input that is not whole: each call reads the whole input (the warnings and
        // the result ask for it).
        let mut p = PartialJson::new();
        let _ = p.feed_str(self.input.text());
        if p.error().is_some() || p.complete() {
            return None;
        }
        let value = p.value_json().filter(|v| v.starts_with('{'))?;
        check_json(&value).is_ok().then(|| Out::json(&value))
    }

    /// What a tool input that is not one whole JSON value becomes: the object read so far
    /// (`Some(value)`), or `{}` (`None`); `Ok` for an input that is whole (or none).
    fn bad_input(&self) -> Result<(), Option<Out>> {
        match self.input.text().trim() {
            "" => Ok(()),
            text if check_json(text).is_ok() => Ok(()),
            _ => Err(self.cut_off_input()),
        }
    }

    fn input_warning(&self, index: i64) -> Option<String> {
        self.tool.as_ref()?;
        match self.bad_input() {
            Ok(()) => None,
            Err(Some(_)) => Some(format!(
                "tool input of block {index} ends before its JSON does: its input is the object \
                 read so far"
            )),
            Err(None) => Some(format!(
                "tool input of block {index} is not JSON: its input is {{}}"
            )),
        }
    }

    fn build(&self) -> Out {
        let mut out = Map::new();
        if let Some(r) = &self.result {
            let mut result = Map::new();
            result.set("toolUseId", Out::Str(r.id.clone()));
            result.set("content", Out::List(r.content.clone()));
            if let Some(status) = &r.status {
                result.set("status", Out::Str(status.clone()));
            }
            if let Some(type_) = &r.type_ {
                result.set("type", Out::Str(type_.clone()));
            }
            out.set("toolResult", Out::Map(result));
            return Out::Map(out);
        }
        if let Some((id, name)) = &self.tool {
            let input = match self.bad_input() {
                Ok(()) if self.input.text().trim().is_empty() => Out::Map(Map::new()),
                Ok(()) => Out::json(self.input.text().trim()),
                Err(value) => value.unwrap_or_else(|| Out::Map(Map::new())),
            };
            let mut tool = Map::new();
            tool.set("toolUseId", Out::Str(id.clone()));
            tool.set("name", Out::Str(name.clone()));
            tool.set("input", input);
            if let Some(type_) = &self.tool_type {
                tool.set("type", Out::Str(type_.clone()));
            }
            out.set("toolUse", Out::Map(tool));
        } else if let Some(data) = &self.redacted {
            let mut r = Map::new();
            r.set("redactedContent", Out::Bytes(data.clone()));
            out.set("reasoningContent", Out::Map(r));
        } else if self.reasoning.is_some() || self.signature.is_some() {
            let mut text = Map::new();
            text.set("text", Out::Str(self.reasoning.clone().unwrap_or_default()));
            if let Some(sig) = &self.signature {
                text.set("signature", Out::Str(sig.clone()));
            }
            let mut r = Map::new();
            r.set("reasoningText", Out::Map(text));
            out.set("reasoningContent", Out::Map(r));
        } else if !self.citations.is_empty() {
            let mut part = Map::new();
            part.set("text", Out::Str(self.text.clone()));
            let mut c = Map::new();
            c.set("content", Out::List(vec![Out::Map(part)]));
            c.set("citations", Out::List(self.citations.clone()));
            out.set("citationsContent", Out::Map(c));
        } else if let (Some(other), true) = (&self.other, self.text.is_empty()) {
            return Out::json(other);
        } else {
            out.set("text", Out::Str(self.text.clone()));
        }
        Out::Map(out)
    }
}

/// The answer's text in a Converse response (`crate::fold::summary`): the output message's
/// text blocks.
pub fn final_text(result: Node<'_>) -> String {
    texts(result.path(&["output", "message", "content"]), &|_| false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::converse::decode;

    fn fold(events: &[(&str, &str)]) -> String {
        let mut f = ConverseFold::default();
        for (kind, doc) in events {
            f.add(kind, &decode(doc).unwrap());
        }
        f.result().to_json()
    }

    #[test]
    fn a_tool_turn_folds_to_the_converse_response() {
        let got = fold(&[
            ("messageStart", r#"{"role":"assistant","p":"ab"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"think"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"sig"}}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"text":"Let me "}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"text":"check."}}"#,
            ),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t1","name":"get"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"city\":"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"Paris\"}"}}}"#,
            ),
            ("messageStop", r#"{"stopReason":"tool_use"}"#),
            (
                "metadata",
                r#"{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":42}}"#,
            ),
        ]);
        assert_eq!(
            got,
            r#"{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"think","signature":"sig"}}},{"text":"Let me check."},{"toolUse":{"toolUseId":"t1","name":"get","input":{"city":"Paris"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":42}}"#
        );
    }

    #[test]
    fn redacted_reasoning_is_bytes_and_a_cut_input_is_what_was_read() {
        let mut f = ConverseFold::default();
        for (kind, doc) in [
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"AAEC"}}}"#,
            ),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\": \"x\", \"b\": [1, "}}}"#,
            ),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"u","name":"g"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"not json"}}}"#,
            ),
        ] {
            f.add(kind, &decode(doc).unwrap());
        }
        let Out::Map(out) = f.result() else { panic!() };
        let json = Out::Map(out).to_json();
        assert!(
            json.contains(r#"{"reasoningContent":{"redactedContent":"AAEC"}}"#),
            "{json}"
        );
        // Cut inside its JSON: the object read so far (as the Messages fold and the Gemini
        // writer keep it); not JSON at all: {}.
        assert!(
            json.contains(r#""name":"f","input":{"a": "x", "b": [1]}"#),
            "{json}"
        );
        assert!(json.contains(r#""name":"g","input":{}"#), "{json}");
        let warnings = f.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("ends before its JSON does"));
        assert!(warnings[1].contains("is not JSON"));
        assert_eq!(
            f.arguments(1)
                .map(|p| crate::json::partial::SoFar::text(p).to_owned())
                .as_deref(),
            Some(r#"{"a": "x", "b": [1, "#)
        );
    }

    #[test]
    fn a_tool_inputs_warning_is_what_it_reads_now_asked_before_the_result() {
        let mut f = ConverseFold::default();
        let start = r#"{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}"#;
        f.add("contentBlockStart", &decode(start).unwrap());
        let piece = |f: &mut ConverseFold, text: &str| {
            let doc = format!(
                r#"{{"contentBlockIndex":0,"delta":{{"toolUse":{{"input":{}}}}}}}"#,
                serde_json::to_string(text).unwrap()
            );
            f.add("contentBlockDelta", &decode(&doc).unwrap());
        };
        piece(&mut f, r#"{"a": [1"#);
        let w = f.warnings();
        assert!(
            w.len() == 1 && w[0].contains("ends before its JSON does"),
            "{w:?}"
        );
        piece(&mut f, "]}");
        assert!(f.warnings().is_empty());
        let json = f.result().to_json();
        assert!(json.contains(r#""input":{"a": [1]}"#), "{json}");
        piece(&mut f, "}");
        assert!(f.warnings()[0].contains("is not JSON"));
    }
}

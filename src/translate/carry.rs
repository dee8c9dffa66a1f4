//! Reasoning an upstream signed, carried through a client of another dialect (API.md section
//! 10): statelessly, inside the id of the tool call it came before.
//!
//! A thinking model's next turn must carry its reasoning back: Anthropic refuses an assistant
//! turn with `tool_use` that does not start with its signed `thinking` block, Gemini 3 a
//! `functionCall` without its `thoughtSignature`, and the Responses API loses its encrypted
//! reasoning. A client of another dialect has no place for them that its SDK echoes back, but
//! every SDK and agent framework echoes a tool call's id verbatim (in the assistant's turn and
//! under the tool's result). So, while translating a stream, [`Carrying`] keeps the signed
//! reasoning read since the last tool call and writes the next call's id as a carrier:
//! `sswc1_` + the upstream dialect's letter + `_` + URL-safe base64 of `{"i": original id,
//! "r": [reasoning]}` (only `[A-Za-z0-9_-]`: what Anthropic allows in an id). The request
//! translation ([`crate::request`]) decodes every carrier back into the original id and, for an
//! upstream of the carrier's dialect, the reasoning in its own form, where that upstream wants
//! it. A call with nothing to carry keeps its id as the upstream wrote it.

use serde::{Deserialize, Serialize};

use super::{Dialect, Failure, Key, Kind, Meta, Sink, Stop, Usage};
use crate::dialect::registry::Signing;

/// The start of every carrier id.
pub const PREFIX: &str = "sswc1_";

/// The most reasoning text one carrier holds (bytes); past it the reasoning is not carried,
/// and noted.
pub const MAX_CARRIED: usize = 256 * 1024;

/// The most pieces of reasoning one carrier holds (the reasoning blocks open at once, and the
/// redacted ones, before one tool call).
pub const MAX_PIECES: usize = 64;

/// One piece of reasoning, in the upstream's terms (the fields of `crate::request::Reasoning`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    /// The reasoning text (empty when only a signature or encrypted data is carried).
    #[serde(rename = "t", default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Anthropic's signature, Gemini's thought signature.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The Responses reasoning item's id.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Responses' `encrypted_content`, Anthropic's `redacted_thinking` data.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
}

impl Carried {
    /// Whether an upstream can verify it (unsigned reasoning is not worth carrying).
    fn signed(&self) -> bool {
        self.signature.is_some() || self.encrypted.is_some()
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    #[serde(rename = "i")]
    id: String,
    #[serde(rename = "r")]
    reasoning: Vec<Carried>,
}

fn letter(dialect: Dialect) -> char {
    char::from(dialect.spec().letter)
}

fn from_letter(c: u8) -> Option<Dialect> {
    Dialect::from_letter(c)
}

/// The carrier id of a call whose original id is `original`, carrying `reasoning` for an
/// upstream of `upstream`'s dialect.
pub fn encode(original: &str, upstream: Dialect, reasoning: &[Carried]) -> String {
    let payload = Payload {
        id: original.to_owned(),
        reasoning: reasoning.to_vec(),
    };
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    let mut out = String::from(PREFIX);
    out.push(letter(upstream));
    out.push('_');
    out.push_str(&crate::base64::encode_url(&json));
    out
}

/// What a carrier id holds: the original id, the upstream dialect it is for, the reasoning.
pub type Decoded = (String, Dialect, Vec<Carried>);

/// What an id carries: `None` for an id that is not a carrier; `Some(Err(()))` for one that
/// looks like ssewire's but does not decode (a client changed it); else the original id, the
/// upstream dialect it is for and the reasoning.
#[allow(clippy::result_unit_err)]
pub fn decode(id: &str) -> Option<Result<Decoded, ()>> {
    let rest = id.strip_prefix(PREFIX)?;
    let decoded = (|| {
        let (&tag, rest) = rest.as_bytes().split_first()?;
        let dialect = from_letter(tag)?;
        let coded = std::str::from_utf8(rest.strip_prefix(b"_")?).ok()?;
        let json = crate::base64::decode(coded)?;
        let payload: Payload = serde_json::from_slice(&json).ok()?;
        // No stream writes more than the open-block bound: more is not ssewire's.
        if payload.reasoning.len() > MAX_PIECES {
            return None;
        }
        Some((payload.id, dialect, payload.reasoning))
    })();
    Some(decoded.ok_or(()))
}

/// The most ids of the store form one request gives back ([`stored_ids`]).
pub const MAX_STORED_IDS: usize = 1024;

/// The store form of carrier ids (the gateway's `carry = "store"`): for clients that cut long
/// ids short or rewrite them, a call's id is `sswc1_` + a token the caller chose + `-` + a
/// counter, and the carrier it stands for ([`encode`]) waits in `kept` until the caller keeps
/// it in its store. The next request's ids are found with [`stored_ids`], and the request
/// translation reads the carriers kept for them at call and result ids only
/// (`crate::request::translate_with`). An id of this form has no `_` after the prefix; a
/// carrier always has one.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    token: String,
    next: u64,
    kept: Vec<(String, String)>,
}

impl Stored {
    /// The store form with `token` (8 to 64 ASCII letters and digits), or `None`.
    pub fn new(token: &str) -> Option<Self> {
        let fits =
            (8..=64).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric());
        fits.then(|| Stored {
            token: token.to_owned(),
            ..Stored::default()
        })
    }

    fn keep(&mut self, carrier: String) -> String {
        let id = format!("{PREFIX}{}-{}", self.token, self.next);
        self.next += 1;
        self.kept.push((id.clone(), carrier));
        id
    }

    /// The (short id, carrier) pairs written since the last call.
    pub fn take(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.kept)
    }
}

/// Whether `rest` (what follows the prefix) is the rest of a short id: the token (8 to 64
/// letters and digits), `-`, a counter (1 to 20 digits).
fn short_rest(rest: &[u8]) -> bool {
    let Some(dash) = rest.iter().position(|b| *b == b'-') else {
        return false;
    };
    let (token, counter) = rest.split_at(dash);
    let counter = counter.get(1..).unwrap_or_default();
    (8..=64).contains(&token.len())
        && token.iter().all(u8::is_ascii_alphanumeric)
        && (1..=20).contains(&counter.len())
        && counter.iter().all(u8::is_ascii_digit)
}

/// The ids of the store form in a request body (JSON text): each `"sswc1_<token>-<n>"`
/// string, once each, the newest [`MAX_STORED_IDS`] (read from the end: the last turns are the
/// ones an upstream checks), in the body's order.
pub fn stored_ids(body: &[u8]) -> Vec<String> {
    let quoted = [b"\"".as_slice(), PREFIX.as_bytes()].concat();
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for at in memchr::memmem::rfind_iter(body, &quoted) {
        let start = at + 1;
        let rest = body.get(start + PREFIX.len()..).unwrap_or_default();
        // The longest short id is the prefix, 64 + 1 + 20 bytes, and its closing quote.
        let len = rest
            .iter()
            .take(86)
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        let id = rest.get(..len).unwrap_or_default();
        if rest.get(len) != Some(&b'"') || !short_rest(id) {
            continue;
        }
        let id = format!("{PREFIX}{}", String::from_utf8_lossy(id));
        if seen.insert(id.clone()) {
            out.push(id);
            if out.len() == MAX_STORED_IDS {
                break;
            }
        }
    }
    out.reverse();
    out
}

/// What a translation keeps to carry: the reasoning blocks open, the signed reasoning read
/// since the last tool call, a function call's own signature (Gemini) until the call opens;
/// the store form's ids, when asked for.
#[derive(Debug, Default)]
pub struct CarryState {
    open: Vec<(Key, Carried)>,
    pending: Vec<Carried>,
    call_signature: Option<String>,
    size: usize,
    /// The store form, when the caller keeps the carriers (`Translation::set_carry_store`).
    stored: Option<Stored>,
}

impl CarryState {
    /// Nothing kept yet; carrier ids in the store form when `stored` is given.
    pub fn with_stored(stored: Option<Stored>) -> Self {
        CarryState {
            stored,
            ..CarryState::default()
        }
    }

    /// The store form in use (set once the translation is told to use it).
    pub fn stored_mut(&mut self) -> &mut Option<Stored> {
        &mut self.stored
    }
}

/// Whether a translation from `source` to `target` carries reasoning: the source signs it
/// (Messages thinking, Gemini thought signatures, Responses encrypted reasoning) and the
/// target is another dialect.
pub fn carries(source: Dialect, target: Dialect) -> bool {
    source != target && source.spec().signing != Signing::None
}

/// A [`Sink`] between a source reader and the target writer that keeps the source's signed
/// reasoning and writes it into the next tool call's id; everything is passed on as it is.
pub struct Carrying<'a> {
    /// The target writer everything is passed on to.
    pub sink: &'a mut dyn Sink,
    /// The translation's carried reasoning, kept from feed to feed.
    pub state: &'a mut CarryState,
    /// The dialect the reasoning is read from.
    pub source: Dialect,
}

impl Carrying<'_> {
    fn record(&mut self, key: Key) -> Option<&mut Carried> {
        self.state
            .open
            .iter_mut()
            .find(|(k, _)| *k == key)
            .map(|(_, c)| c)
    }

    /// Grows the kept size by `n`; false (and the reasoning let go, noted) past the bound.
    fn room(&mut self, n: usize) -> bool {
        self.state.size = self.state.size.saturating_add(n);
        if self.state.size <= MAX_CARRIED {
            return true;
        }
        if !self.state.open.is_empty() || !self.state.pending.is_empty() {
            self.state.open.clear();
            self.state.pending.clear();
            self.sink.drop_note(
                "reasoning too long to carry in a tool call's id (the next turn goes without it)",
            );
        }
        false
    }
}

impl Sink for Carrying<'_> {
    fn meta(&mut self, meta: Meta<'_>) {
        self.sink.meta(meta)
    }

    fn open(&mut self, key: Key, kind: Kind<'_>) {
        match kind {
            // Gemini's thought parts are not carried: only a function call's own signature is
            // wanted back (on that call's part).
            Kind::Reasoning if self.source.spec().signing == Signing::Calls => {
                self.sink.open(key, kind)
            }
            Kind::Reasoning => {
                if self.state.size <= MAX_CARRIED && self.state.open.len() < MAX_PIECES {
                    self.state.open.push((key, Carried::default()));
                }
                self.sink.open(key, kind)
            }
            Kind::Tool { id, name } => {
                let mut carried = std::mem::take(&mut self.state.pending);
                if let Some(signature) = self.state.call_signature.take() {
                    carried.push(Carried {
                        signature: Some(signature),
                        ..Carried::default()
                    });
                }
                self.state.size = 0;
                carried.retain(Carried::signed);
                if carried.len() > MAX_PIECES {
                    self.sink.drop_note(
                        "more reasoning blocks before a tool call than a tool call's id carries (the next turn goes without them)",
                    );
                    carried.clear();
                }
                if carried.is_empty() {
                    self.sink.open(key, kind)
                } else {
                    let mut carrier = encode(id, self.source, &carried);
                    if let Some(stored) = self.state.stored.as_mut() {
                        carrier = stored.keep(carrier);
                    }
                    self.sink.open(key, Kind::Tool { id: &carrier, name })
                }
            }
            _ => self.sink.open(key, kind),
        }
    }

    fn delta(&mut self, key: Key, text: &str) {
        if self.record(key).is_some() && self.room(text.len()) {
            if let Some(c) = self.record(key) {
                c.text.push_str(text);
            }
        }
        self.sink.delta(key, text)
    }

    fn signature(&mut self, key: Key, signature: &str) {
        let signing = self.source.spec().signing;
        if signing != Signing::Calls && self.room(signature.len()) {
            let encrypted = signing == Signing::Encrypted;
            let set = |c: &mut Carried| {
                if encrypted {
                    c.encrypted = Some(signature.to_owned());
                } else {
                    c.signature = Some(signature.to_owned());
                }
            };
            match self.record(key) {
                Some(c) => set(c),
                None => {
                    // Responses: an item whose encrypted content came with no summary.
                    let mut c = Carried::default();
                    set(&mut c);
                    self.state.open.push((key, c));
                }
            }
        }
        self.sink.signature(key, signature)
    }

    fn redacted(&mut self, key: Key, data: &str) {
        if self.room(data.len()) {
            self.state.pending.push(Carried {
                encrypted: Some(data.to_owned()),
                ..Carried::default()
            });
        }
        self.sink.redacted(key, data)
    }

    fn reasoning_id(&mut self, key: Key, id: &str) {
        if self.room(id.len()) {
            match self.record(key) {
                Some(c) => c.id = Some(id.to_owned()),
                None => self.state.open.push((
                    key,
                    Carried {
                        id: Some(id.to_owned()),
                        ..Carried::default()
                    },
                )),
            }
        }
        self.sink.reasoning_id(key, id)
    }

    fn call_signature(&mut self, _key: Key, signature: &str) {
        if signature.len() <= MAX_CARRIED {
            self.state.call_signature = Some(signature.to_owned());
        }
    }

    fn close(&mut self, key: Key) {
        if let Some(at) = self.state.open.iter().position(|(k, _)| *k == key) {
            let (_, carried) = self.state.open.remove(at);
            self.state.pending.push(carried);
        }
        self.sink.close(key)
    }

    fn stop(&mut self, stop: Stop<'_>) {
        self.sink.stop(stop)
    }

    fn usage(&mut self, usage: &Usage) {
        self.sink.usage(usage)
    }

    fn error(&mut self, failure: Failure<'_>) {
        self.sink.error(failure)
    }

    fn end(&mut self) {
        self.sink.end()
    }

    fn drop_note(&mut self, what: &str) {
        self.sink.drop_note(what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carrier_round_trips_and_keeps_to_the_id_alphabet() {
        let reasoning = vec![Carried {
            text: "Let me think: \"quotes\", émoji 🙂".into(),
            signature: Some("EqQBCkYIBRgCKkD/+==".into()),
            ..Carried::default()
        }];
        let id = encode("toolu_01AbC", Dialect::Messages, &reasoning);
        assert!(id.starts_with("sswc1_m_"));
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        let (original, dialect, back) = decode(&id).unwrap().unwrap();
        assert_eq!(
            (original.as_str(), dialect),
            ("toolu_01AbC", Dialect::Messages)
        );
        assert_eq!(back, reasoning);
    }

    #[test]
    fn ids_that_are_not_carriers_or_are_broken() {
        assert!(decode("call_abc").is_none());
        assert!(decode("toolu_sswc1_m_x").is_none());
        for broken in [
            "sswc1_",
            "sswc1_x_e30",
            "sswc1_m_!!",
            "sswc1_m_e30",
            "sswc1_mabc",
        ] {
            assert_eq!(decode(broken), Some(Err(())), "{broken}");
        }
    }

    #[test]
    fn the_store_form_stands_for_the_carrier_through_a_turn() {
        use crate::translate::standalone::Standalone;
        let stream = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Call it.\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2lnbmVk\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let mut s = Standalone::new(Some(Dialect::Messages), Dialect::Chat, 1 << 20);
        assert!(!s.translation().set_carry_store("short"));
        assert!(!s.translation().set_carry_store("not_alphanumeric"));
        assert!(s.translation().set_carry_store("Tok3n0123"));
        let (out, _) = s.feed(stream.as_bytes());
        let out = String::from_utf8(out).unwrap();
        let kept = s.translation().take_stored();
        let [(id, carrier)] = kept.as_slice() else {
            panic!("{kept:?}")
        };
        assert_eq!(id, "sswc1_Tok3n0123-0");
        assert!(out.contains(&format!("\"id\":\"{id}\"")), "{out}");
        let (original, dialect, reasoning) = decode(carrier).unwrap().unwrap();
        assert_eq!((original.as_str(), dialect), ("toolu_1", Dialect::Messages));
        assert_eq!(reasoning[0].signature.as_deref(), Some("c2lnbmVk"));
        assert!(s.translation().take_stored().is_empty());
        // The next request names the short id twice (the call, its result): found once, put
        // back everywhere, and the request translation gives Anthropic its signed thinking.
        let body = format!(
            r#"{{"model":"m","stream":true,"messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}},{{"role":"tool","tool_call_id":"{id}","content":"ok"}}]}}"#
        );
        assert_eq!(stored_ids(body.as_bytes()), vec![id.clone()]);
        let stored: crate::request::Stored = kept.iter().cloned().collect();
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        let request =
            crate::request::translate_with(&value, Dialect::Chat, Dialect::Messages, None, &stored)
                .unwrap();
        let text = request.body.to_string();
        assert!(
            text.contains("c2lnbmVk") && text.contains("toolu_1"),
            "{text}"
        );
        assert!(!text.contains("sswc1_"), "{text}");
        // In a message's text a short id is text; named by a thousand calls and results, the
        // reasoning is restored once and every id gets its original back.
        let mut messages = vec![serde_json::json!({"role": "user", "content": id})];
        for _ in 0..1000 {
            messages.push(
                serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            );
            messages.push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
        }
        let many = serde_json::json!({"model": "m", "messages": messages});
        let request =
            crate::request::translate_with(&many, Dialect::Chat, Dialect::Messages, None, &stored)
                .unwrap();
        let text = request.body.to_string();
        assert_eq!(text.matches("c2lnbmVk").count(), 1, "the reasoning once");
        assert_eq!(text.matches("toolu_1").count(), 2000);
        assert_eq!(text.matches(id.as_str()).count(), 1, "the text stays");
    }

    #[test]
    fn what_is_not_an_id_of_the_store_form_is_left_alone() {
        let body = br#"{"a":"sswc1_m_e30","b":"sswc1_","c":"xsswc1_abcdefgh-1","d":"sswc1_abcdefgh!-1","e":"sswc1_abcdefgh-1","f":"sswc1_short-1","g":"sswc1_abcdefgh-","h":"sswc1_abcdefgh-1x"}"#;
        assert_eq!(stored_ids(body), vec!["sswc1_abcdefgh-1".to_string()]);
        // The newest ids when there are more than the bound; each once.
        let many: String = (0..2000)
            .map(|i| format!("\"sswc1_abcdefgh-{i}\",\"sswc1_abcdefgh-{i}\","))
            .collect();
        let ids = stored_ids(many.as_bytes());
        assert_eq!(ids.len(), MAX_STORED_IDS);
        let first = format!("sswc1_abcdefgh-{}", 2000 - MAX_STORED_IDS);
        assert_eq!(ids.first(), Some(&first));
        assert_eq!(ids.last().map(String::as_str), Some("sswc1_abcdefgh-1999"));
        // A stored value that is no carrier restores nothing: the short id stays, noted.
        let stored: crate::request::Stored =
            [("sswc1_abcdefgh-1".to_string(), "\"},{\"x".to_string())].into();
        let value = serde_json::json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "sswc1_abcdefgh-1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "sswc1_abcdefgh-1", "content": "ok"}]});
        let t =
            crate::request::translate_with(&value, Dialect::Chat, Dialect::Messages, None, &stored)
                .unwrap();
        assert_eq!(t.body.to_string().matches("sswc1_abcdefgh-1").count(), 2);
        assert!(
            t.notes.iter().any(|n| n.contains("do not decode")),
            "{:?}",
            t.notes
        );
    }
}

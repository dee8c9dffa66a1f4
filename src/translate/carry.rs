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

/// What a translation keeps to carry: the reasoning blocks open, the signed reasoning read
/// since the last tool call, a function call's own signature (Gemini) until the call opens.
#[derive(Debug, Default)]
pub struct CarryState {
    open: Vec<(Key, Carried)>,
    pending: Vec<Carried>,
    call_signature: Option<String>,
    size: usize,
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
                    let carrier = encode(id, self.source, &carried);
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
}

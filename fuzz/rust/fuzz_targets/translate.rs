//! Translation: every SSE source dialect into every target (Converse's event stream included), the output the same however the input
//! was cut (whole, two pieces); the output is an event stream that the target's own reading
//! takes without a panic; memory stays bounded (libFuzzer's -malloc_limit_mb); no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::translate::Dialect;
use ssewire::translate::Standalone;

#[path = "common.rs"]
mod common;

const SOURCES: [Dialect; 6] = [
    Dialect::Chat,
    Dialect::Messages,
    Dialect::Responses,
    Dialect::Gemini,
    Dialect::Ollama,
    Dialect::Cohere,
];
const TARGETS: [Dialect; 7] = [
    Dialect::Chat,
    Dialect::Messages,
    Dialect::Responses,
    Dialect::Gemini,
    Dialect::Converse,
    Dialect::Ollama,
    Dialect::Cohere,
];

fn run(source: Option<Dialect>, target: Dialect, pieces: &[&[u8]]) -> (Vec<u8>, Vec<String>) {
    let mut t = Standalone::new(source, target, 4096);
    let mut out = Vec::new();
    for piece in pieces {
        out.extend(t.feed(piece).0);
    }
    out.extend(t.finish());
    (out, t.translation().notes().to_vec())
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    let pick = data[0] as usize;
    let source = match pick % 7 {
        6 => None,
        n => Some(SOURCES[n]),
    };
    let target = TARGETS[(pick / 7) % 7];
    let whole = run(source, target, &[body]);
    let (a, b) = body.split_at(cut);
    assert_eq!(
        run(source, target, &[a, b]),
        whole,
        "the output depends on the cut"
    );
    // The output reads back as the target (a translation of itself): no panic.
    let again = run(Some(target.into()), target, &[&whole.0]);
    assert!(again.0.len() <= 4 * whole.0.len() + 4096);
});

//! The stream machine (`ssewire::stream::Stream`, the one the Python stream classes drive):
//! every dialect's reader, fed the whole input, then the same input cut in two, must end in
//! the same fold result, the same error and the same `done`; no panic; memory bounded
//! (libFuzzer's -malloc_limit_mb).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::stream::chat::ChatReader;
use ssewire::stream::cohere::CohereReader;
use ssewire::stream::converse::ConverseReader;
use ssewire::stream::gemini::GeminiReader;
use ssewire::stream::messages::MessagesReader;
use ssewire::stream::ollama::OllamaReader;
use ssewire::stream::responses::ResponsesReader;
use ssewire::stream::{Dialect, Failure, Quiet, Reader, Stream};

#[path = "common.rs"]
mod common;

fn run<R: Dialect + Reader<Quiet>>(
    pieces: &[&[u8]],
    eventstream: bool,
) -> (String, Option<Failure>, bool, usize) {
    let mut s = Stream::<R>::new(4096);
    if eventstream {
        s.read_eventstream(); // Bedrock's InvokeModel framing in front of the dialect
    }
    let mut too_large = 0;
    for piece in pieces {
        too_large += usize::from(
            s.run(piece, &mut Quiet)
                .unwrap_or_else(|n| match n {})
                .is_some(),
        );
    }
    s.finish(&mut Quiet).unwrap_or_else(|n| match n {});
    (
        s.reader.result().to_json(),
        s.state.error.clone(),
        s.state.done,
        too_large.min(1),
    )
}

fn check<R: Dialect + Reader<Quiet>>(body: &[u8], cut: usize) {
    check_framed::<R>(body, cut, false);
}

fn check_framed<R: Dialect + Reader<Quiet>>(body: &[u8], cut: usize, eventstream: bool) {
    let whole = run::<R>(&[body], eventstream);
    let (a, b) = body.split_at(cut);
    let split = run::<R>(&[a, b], eventstream);
    assert_eq!(split, whole, "the result depends on the cut");
    assert!(
        whole.0.len() <= 8 * body.len() + 4096,
        "the result outgrew its input"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    match data[0] % 8 {
        0 => check::<ChatReader<()>>(body, cut),
        1 => check::<MessagesReader<()>>(body, cut),
        2 => check::<ResponsesReader<()>>(body, cut),
        3 => check::<ConverseReader<()>>(body, cut),
        4 => check_framed::<MessagesReader<()>>(body, cut, true),
        5 => check::<OllamaReader<()>>(body, cut),
        6 => check::<CohereReader<()>>(body, cut),
        _ => check::<GeminiReader<()>>(body, cut),
    }
});

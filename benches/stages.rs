//! Where the Rust time goes, stage by stage, in ns per event (issue 18): `cargo bench`.
//!
//! The streams are the Python benchmarks' corpora (`benches/_peers.py`), written once by
//! `python benches/write_corpora.py` into `target/bench-corpora/`. Each dialect's body is cut
//! into reads the way the Python benchmarks cut it (whole, 4 KiB, one read per event) and run
//! through the pure-Rust core one stage more at a time:
//!
//! - `frame`: the WHATWG framer (`framing::sse::Framer` behind `framing::body::Body`), events borrowed;
//! - `+text`: each event's data checked as UTF-8 and lone surrogates repaired (`text`);
//! - `+decode`: each document decoded by the dialect (`dialect::*::decode`, no templates);
//! - `+fold`: the views read and folded (`fold::*`), then `result()` once;
//! - `translate ->X`: the whole translation to dialect X (`translate::Standalone`).
//!
//! The difference between two rows is the cost of the stage added. With `--features python`
//! (`cargo bench --features python --bench stages`) three rows more time the Python side
//! through the module's own classes in an interpreter this binary embeds:
//!
//! - `py consume`: `stream.consume(read)` per read, then `finish()`: the whole stream as a
//!   Python caller runs it (the call, the buffer protocol, the frame templates, the fold);
//! - `py feed (+items)`: `feed` instead: the difference is building the item objects;
//! - `py +result()`: and `result()` once: the difference is the final object's dict.
//!
//! Timings are the minimum over rounds of one pass over the corpus, with `std::time::Instant`:
//! read them as ratios within one run (the machine is shared).

// Benchmark code over our own corpora: a slice index past the end is a bug to see at once.
#![allow(clippy::indexing_slicing)]

use std::borrow::Cow;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ssewire::dialect::{chat, gemini, messages, responses, split_docs, Doc};
use ssewire::fold::chat::ChatFold;
use ssewire::fold::gemini::GeminiFold;
use ssewire::fold::messages::MessagesFold;
use ssewire::fold::responses::ResponsesFold;
use ssewire::framing::body::Body;
use ssewire::framing::sse::{RawEvent, DEFAULT_MAX_EVENT_SIZE};
use ssewire::framing::Framing;
use ssewire::translate::Dialect;
use ssewire::translate::Standalone;

const DIALECTS: [(&str, Dialect); 4] = [
    ("chat", Dialect::Chat),
    ("messages", Dialect::Messages),
    ("responses", Dialect::Responses),
    ("gemini", Dialect::Gemini),
];

/// Runs `f` until `budget` is spent (at least 5 rounds); the fastest round.
fn best(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut rounds = 0;
    while rounds < 5 || start.elapsed() < budget {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        rounds += 1;
    }
    best
}

/// The reads of `body`: whole, 4 KiB, or one per event (cut after each blank line).
fn cut<'a>(body: &'a [u8], how: &str) -> Vec<&'a [u8]> {
    match how {
        "whole" => vec![body],
        "4KiB" => body.chunks(4096).collect(),
        _ => {
            let mut reads = Vec::new();
            let mut at = 0;
            for end in memchr::memmem::find_iter(body, b"\n\n") {
                reads.push(&body[at..end + 2]);
                at = end + 2;
            }
            if at < body.len() {
                reads.push(&body[at..]);
            }
            reads
        }
    }
}

/// Frames `reads` and hands each event (type, data) to `each`.
fn frames(reads: &[&[u8]], mut each: impl FnMut(Option<&[u8]>, &[u8])) -> usize {
    let mut body = Body::new(DEFAULT_MAX_EVENT_SIZE, Framing::Sse);
    let mut n = 0;
    let mut out: Vec<RawEvent<'_>> = Vec::new();
    for read in reads {
        out.clear();
        body.feed(read, &mut out);
        for e in &out {
            each(e.event.as_deref(), &e.data);
            n += 1;
        }
    }
    black_box(body.finish());
    n
}

fn text(data: &[u8]) -> Cow<'_, str> {
    ssewire::text::fix_lone_surrogates(ssewire::text::lossy(data))
}

/// Decodes (and with `fold`, folds) one event of `dialect`.
struct Folds {
    chat: ChatFold,
    messages: MessagesFold,
    responses: ResponsesFold,
    gemini: GeminiFold,
}

impl Folds {
    fn new() -> Self {
        Folds {
            chat: ChatFold::default(),
            messages: MessagesFold::default(),
            responses: ResponsesFold::new(),
            gemini: GeminiFold::new(),
        }
    }

    fn event(&mut self, dialect: Dialect, name: Option<&[u8]>, data: &str, fold: bool) {
        let name = name.unwrap_or(b"message");
        match dialect {
            Dialect::Chat => split_docs(data, chat::decode, |doc| {
                if let (Doc::Value(_, chunk), true) = (&doc, fold) {
                    chat::views(chunk, |v, _| self.chat.add(v));
                }
                black_box(doc);
            }),
            Dialect::Messages => split_docs(data, messages::decode, |doc| {
                if let (Doc::Value(text, ev), true) = (&doc, fold) {
                    let kind = ev.kind_of(name);
                    if let messages::Read::Fold(v) = ev.read(&kind, text) {
                        self.messages.add(&v);
                    }
                }
                black_box(doc);
            }),
            Dialect::Responses => split_docs(data, responses::decode, |doc| {
                if let (Doc::Value(text, ev), true) = (&doc, fold) {
                    let kind = ev.kind_of(name);
                    if let responses::Read::Fold(v, _) = ev.read(&kind, text) {
                        self.responses.add(&v);
                    }
                }
                black_box(doc);
            }),
            Dialect::Gemini => split_docs(data, gemini::decode, |doc| {
                if let (Doc::Value(_, chunk), true) = (&doc, fold) {
                    self.gemini.add(chunk);
                }
                black_box(doc);
            }),
            // The stages bench's corpora are the four SSE matrix dialects' (`DIALECTS`).
            Dialect::Converse | Dialect::Ollama | Dialect::Cohere => {}
        }
    }

    fn result(&mut self, dialect: Dialect) {
        match dialect {
            Dialect::Chat => black_box(self.chat.result()),
            Dialect::Messages => black_box(self.messages.result()),
            Dialect::Responses => black_box(self.responses.result()),
            Dialect::Gemini => black_box(self.gemini.result()),
            Dialect::Converse | Dialect::Ollama | Dialect::Cohere => {
                black_box(ssewire::fold::Out::Null)
            }
        };
    }
}

fn corpus(name: &str) -> Vec<u8> {
    let dir = std::env::var_os("SSEWIRE_CORPORA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-corpora"),
        PathBuf::from,
    );
    let path = dir.join(format!("{name}.sse"));
    std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!(
            "{}: {e}\nwrite the corpora first: python benches/write_corpora.py",
            path.display()
        );
        std::process::exit(2)
    })
}

fn main() {
    // `cargo bench -- --quick` (or `cargo test --benches`, which passes no `--bench`): a
    // short smoke run.
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let budget = Duration::from_millis(if quick { 20 } else { 1500 });
    println!("ns per event (min of rounds); each row adds one stage to the one above");
    for (name, dialect) in DIALECTS {
        let body = corpus(name);
        let events = frames(&[&body], |_, _| {});
        println!(
            "\n{name}: {} bytes, {events} events, {} B/event",
            body.len(),
            body.len() / events.max(1)
        );
        println!(
            "{:<22}{:>10}{:>10}{:>11}",
            "stage", "whole", "4KiB", "per-event"
        );
        let chunkings = ["whole", "4KiB", "per-event"];
        let row = |label: &str, run: &dyn Fn(&[&[u8]])| {
            let cells: Vec<String> = chunkings
                .iter()
                .map(|how| {
                    let reads = cut(&body, how);
                    let t = best(budget, || run(&reads));
                    format!("{:.1}", t.as_nanos() as f64 / events as f64)
                })
                .collect();
            println!(
                "{label:<22}{:>10}{:>10}{:>11}",
                cells[0], cells[1], cells[2]
            );
        };
        row("frame", &|reads| {
            frames(reads, |e, d| {
                black_box((e, d));
            });
        });
        row("+text", &|reads| {
            frames(reads, |_, d| {
                black_box(text(d));
            });
        });
        row("+decode", &|reads| {
            let mut folds = Folds::new();
            frames(reads, |e, d| folds.event(dialect, e, &text(d), false));
        });
        row("+fold (+result)", &|reads| {
            let mut folds = Folds::new();
            frames(reads, |e, d| folds.event(dialect, e, &text(d), true));
            folds.result(dialect);
        });
        #[cfg(feature = "python")]
        python::rows(name, &body, events, budget, &chunkings);
        for (target_name, target) in DIALECTS {
            let Some(target) = Dialect::parse(target_name).filter(|_| target != dialect) else {
                continue;
            };
            row(&format!("translate ->{target_name}"), &|reads| {
                let mut t = Standalone::new(Some(dialect), target, DEFAULT_MAX_EVENT_SIZE);
                for read in reads {
                    black_box(t.feed(read));
                }
                black_box(t.finish());
            });
        }
    }
}

/// The Python side, timed from Rust: the stream classes of `ssewire._core` (made in this
/// process by `ssewire::py::bench_module`), called as Python code calls them.
#[cfg(feature = "python")]
mod python {
    use super::{best, cut};
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;
    use std::time::Duration;

    fn class(name: &str) -> &'static str {
        match name {
            "chat" => "ChatCompletionStream",
            "messages" => "MessagesStream",
            "responses" => "ResponsesStream",
            _ => "GeminiStream",
        }
    }

    /// One pass: a new stream, `method` on every read, `finish()`, and `result()` if asked.
    fn run(
        cls: &Bound<'_, PyAny>,
        reads: &[Bound<'_, PyBytes>],
        method: &str,
        result: bool,
    ) -> PyResult<()> {
        let s = cls.call0()?;
        let step = s.getattr(method)?;
        for read in reads {
            std::hint::black_box(step.call1((read,))?);
        }
        s.call_method0("finish")?;
        if result {
            std::hint::black_box(s.call_method0("result")?);
        }
        Ok(())
    }

    pub fn rows(name: &str, body: &[u8], events: usize, budget: Duration, chunkings: &[&str]) {
        Python::initialize();
        let done = Python::attach(|py| -> PyResult<()> {
            let module = ssewire::py::bench_module(py)?;
            let cls = module.getattr(class(name))?;
            for (label, method, result) in [
                ("py consume", "consume", false),
                ("py feed (+items)", "feed", false),
                ("py +result()", "feed", true),
            ] {
                let mut cells = Vec::new();
                for how in chunkings {
                    let reads: Vec<Bound<'_, PyBytes>> = cut(body, how)
                        .into_iter()
                        .map(|r| PyBytes::new(py, r))
                        .collect();
                    run(&cls, &reads, method, result)?; // fails here, not inside the timing
                    let t = best(budget, || {
                        let _ = run(&cls, &reads, method, result);
                    });
                    cells.push(format!("{:.1}", t.as_nanos() as f64 / events as f64));
                }
                println!(
                    "{label:<22}{:>10}{:>10}{:>11}",
                    cells[0], cells[1], cells[2]
                );
            }
            Ok(())
        });
        if let Err(e) = done {
            eprintln!("the Python rows failed: {e}");
            std::process::exit(2);
        }
    }
}

//! ssewire: fast, spec-exact Server-Sent Events parsing for LLM streaming APIs.
//!
//! The crate is a pure-Rust core with Python bindings behind the `python` feature:
//! - [`framing`]: the body framings as a table: WHATWG SSE (bytes in, borrowed events out), the
//!   AWS event stream, NDJSON, and a body told from a bare JSON error body;
//! - [`encode`]: the other direction, one event to its wire form;
//! - [`dialect`]: the LLM dialects' JSON decoded into flat borrowed structs (chat, messages,
//!   responses), what they share (documents of a frame, errors in every wire form, the body
//!   sniffer) and the frame-template fast path;
//! - [`stream`]: the stream machine: a dialect body framed, routed, decoded, checked and folded
//!   into a sink (the Python classes, `translate::Standalone` and the fuzz targets drive it);
//! - [`fold`]: each dialect's final object assembled as documents arrive (pure Rust);
//! - [`request`]: a request translated between dialects (the whole agent loop), pure Rust;
//! - [`json`]: the JSON toolkit below the dialects and the folds: frames read into borrowed
//!   structs, the result tree, JSON text written by hand (the one string escaper), partial JSON
//!   read incrementally (streamed tool arguments);
//! - [`relay`]: what a gateway changes in a stream it passes on (a usage chunk it asked for);
//! - [`text`]: lossy UTF-8 and lone-surrogate repair shared by the framing and the dialects;
//! - `py` (feature `python`): the PyO3 module `ssewire._core`, the only place that knows
//!   about Python.
//!
//! Untrusted bytes never panic the core: indexing, `unwrap` and `expect` are denied by clippy
//! (see `Cargo.toml`), and every fallible step is a `get()` or a checked split. There is no
//! `unsafe` code: the caller's mutable buffers are copied rather than borrowed (`py::input`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod base64;
pub mod dialect;
pub mod encode;
pub mod fold;
pub mod framing;
pub mod http;
pub mod json;
pub mod relay;
pub mod request;
pub mod stream;
pub mod text;
pub mod translate;

/// The Python module (`ssewire._core`). Public only for `benches/stages.rs`, which embeds an
/// interpreter to time the Python side (`py::bench_module`); nothing else in it is public.
#[cfg(feature = "python")]
#[doc(hidden)]
pub mod py;

/// The extension module's allocator (see Cargo.toml's `mimalloc`): small allocations and frees
/// are most of what a short stream's fixed cost spends outside its own work.
#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

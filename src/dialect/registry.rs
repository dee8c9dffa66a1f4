//! The dialect registry: every fact about a dialect that code outside the dialect's own files
//! needs (its name, its public stream class, the endpoint it is served at, where its
//! credential and request id travel, where its final object keeps the model and usage), as
//! data, in one table.
//!
//! The Rust layers index by [`Dialect`]; Python reads the same table from `_core.DIALECTS`
//! (the package, the command line, the gateway, the tests and the benches keep no list of
//! their own). Adding a dialect is one row here, one variant of [`Dialect`], and the
//! dialect's own files.

pub use crate::framing::Framing;

/// A dialect of LLM streaming the core reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI chat completions (and every vendor that speaks it).
    Chat,
    /// Anthropic Messages.
    Messages,
    /// OpenAI Responses.
    Responses,
    /// Google Gemini (`generateContent` / `streamGenerateContent`).
    Gemini,
    /// Amazon Bedrock Converse (`ConverseStream`, in the AWS event stream framing).
    Converse,
    /// Ollama's native API (`/api/chat`, `/api/generate`, in NDJSON).
    Ollama,
    /// Cohere's v2 chat (`/v2/chat`).
    Cohere,
}

/// The dialect list: each dialect's [`Dialect`] variant, the module of its own files in every
/// layer (`dialect::$m`, `fold::$m`, `stream::$m`, `translate::read::$m`, `py::$m`), the reader
/// type its stream and its translation source both name `$reader`, its public stream class and
/// its item class. Code that needs one arm per dialect is written once, as a macro that takes
/// this list: `dialects!(callback)` expands to
/// `callback! { (Chat, chat, ChatReader, ChatCompletionStream, ChatChunk), ... }` (the
/// translation's readers, the standalone translation's streams, the binding's classes).
macro_rules! dialects {
    ($($callback:ident)::+ $(, $arg:tt)*) => {
        $($callback)::+! {
            $($arg)*
            (Chat, chat, ChatReader, ChatCompletionStream, ChatChunk),
            (Messages, messages, MessagesReader, MessagesStream, MessageEvent),
            (Responses, responses, ResponsesReader, ResponsesStream, ResponseEvent),
            (Gemini, gemini, GeminiReader, GeminiStream, GeminiChunk),
            (Converse, converse, ConverseReader, ConverseStream, ConverseEvent),
            (Ollama, ollama, OllamaReader, OllamaStream, OllamaChunk),
            (Cohere, cohere, CohereReader, CohereStream, CohereEvent),
        }
    };
}
pub(crate) use dialects;

/// Declares each dialect's module of the calling layer, the file named as the dialect's
/// module in the layer's folder: `dialects!(modules)`, or `dialects!(modules, pub)`.
/// (`cargo fmt` does not see modules a macro declares: `.ci/run` runs rustfmt on every file.)
macro_rules! modules {
    (pub $(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        $(pub mod $m;)*
    };
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        $(mod $m;)*
    };
}
pub(crate) use modules;

/// How a provider family names its rate-limit headers (they cross only within a family, or
/// are renamed by the gateway between the two families that define them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`.
    OpenAi,
    /// `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`.
    Anthropic,
    /// None passed on.
    Google,
    /// Amazon: none passed on.
    Amazon,
    /// A local model server (Ollama): none sent.
    Local,
    /// Cohere: none passed on.
    Cohere,
}

impl Family {
    /// The family's name in `_core.DIALECTS`.
    pub fn name(self) -> &'static str {
        match self {
            Family::OpenAi => "openai",
            Family::Anthropic => "anthropic",
            Family::Google => "google",
            Family::Amazon => "amazon",
            Family::Local => "local",
            Family::Cohere => "cohere",
        }
    }
}

/// How a dialect signs the reasoning it streams: what a translation from it carries in the
/// next tool call's id, so that the reasoning comes back signed on the next turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// It signs none that crosses.
    None,
    /// A signature on each thinking block (Anthropic).
    Blocks,
    /// A thought signature on a function call (Gemini; thought parts are not carried).
    Calls,
    /// Reasoning items' encrypted content (OpenAI Responses).
    Encrypted,
}

/// One dialect's row of the registry.
#[derive(Debug)]
pub struct Spec {
    /// The variant this row describes.
    pub dialect: Dialect,
    /// The dialect's public name (`dialect=` arguments, `Translator`, the command line).
    pub name: &'static str,
    /// The public stream class that reads it (`ssewire.<stream_class>`).
    pub stream_class: &'static str,
    /// The letter that names it in carried tool call ids (`translate::carry`).
    pub letter: u8,
    /// The provider family (rate-limit header names).
    pub family: Family,
    /// What ends a complete stream (documentation, and the tests' expectations).
    pub terminal: &'static str,
    /// The streaming endpoint, as a path template: `{model}` is one path segment naming the
    /// model, `{version}` the API version segment.
    pub stream_path: &'static str,
    /// The endpoint of a request that asks for no stream, when it differs from
    /// [`Spec::stream_path`] (else the body's `stream` flag tells).
    pub whole_path: Option<&'static str>,
    /// Other endpoints its clients call, answered in another form of the dialect (Ollama's
    /// `/api/generate`: the translation's writer is told the path, `Writer::set_endpoint`).
    pub other_paths: &'static [&'static str],
    /// Amazon Bedrock's InvokeModel endpoints (streamed, whole) where its clients send the
    /// dialect's requests, answered in the event stream framing (Messages: Claude on Bedrock).
    pub invoke_paths: Option<(&'static str, &'static str)>,
    /// The query parameters the dialect defines (the only ones a gateway passes on).
    pub query: &'static [&'static str],
    /// The header an upstream of this dialect takes its key in, and the prefix before it.
    pub key_header: (&'static str, &'static str),
    /// Where a client of this dialect may send its key: header names in order
    /// (`authorization` is read as a bearer token), and a query parameter (`""` for none).
    pub client_key: (&'static [&'static str], &'static str),
    /// The response header naming the provider's request id.
    pub request_id: &'static str,
    /// The API version header an upstream of the dialect is sent, and its value when the
    /// client sent none (`None`: the dialect has none).
    pub version_header: Option<(&'static str, &'static str)>,
    /// OpenTelemetry's `gen_ai.provider.name` for the dialect's provider.
    pub otel_provider: &'static str,
    /// The final object's keys for the model and the usage.
    pub result_keys: (&'static str, &'static str),
    /// The body's framing (its reader: [`Framing::body`]).
    pub framing: Framing,
    /// Whether the dialect is one of the SSE translation matrix: every pair of streams both
    /// ways, the command line's `translate` choices (Converse, binary, is served by the
    /// columns below instead: `source`, `requests`, `serves`, `upstream`).
    pub translates: bool,
    /// Whether a stream translation reads the dialect as its source (true wherever
    /// `translates` is).
    pub source: bool,
    /// Whether `translate_request` reads and writes the dialect's requests (true wherever
    /// `translates` is).
    pub requests: bool,
    /// Whether the gateway serves clients of the dialect (true wherever `translates` is).
    pub serves: bool,
    /// Whether the gateway takes an upstream of the dialect (true wherever `translates` is;
    /// Bedrock's requests signed with SigV4).
    pub upstream: bool,
    /// How the dialect signs its reasoning (what a translation from it carries).
    pub signing: Signing,
    /// Whether an upstream of the dialect may take requests signed with AWS SigV4 (from the
    /// gateway's AWS credentials, in a region) when no key is given.
    pub sigv4: bool,
    /// Whether a request that does not say `stream` asks for a stream (Ollama's do).
    pub streams_by_default: bool,
    /// Whether one decoded document (with its SSE event name, `message` when none) is
    /// this dialect's own: the sniff rule of detection.
    pub owns: fn(event: &[u8], doc: &str) -> bool,
}

/// The registry, in [`Dialect`]'s order (`SPECS[d as usize].dialect == d`).
pub static SPECS: [&Spec; 7] = [
    &CHAT, &MESSAGES, &RESPONSES, &GEMINI, &CONVERSE, &OLLAMA, &COHERE,
];

static CHAT: Spec = Spec {
    dialect: Dialect::Chat,
    name: "chat",
    stream_class: "ChatCompletionStream",
    letter: b'c',
    family: Family::OpenAi,
    terminal: "data: [DONE]",
    stream_path: "/v1/chat/completions",
    whole_path: None,
    other_paths: &[],
    invoke_paths: None,
    query: &["api-version"],
    key_header: ("authorization", "Bearer "),
    client_key: (&["authorization", "api-key"], ""),
    request_id: "x-request-id",
    version_header: None,
    otel_provider: "openai",
    result_keys: ("model", "usage"),
    framing: Framing::Sse,
    translates: true,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::None,
    sigv4: false,
    streams_by_default: false,
    owns: super::chat::owns,
};

static MESSAGES: Spec = Spec {
    dialect: Dialect::Messages,
    name: "messages",
    stream_class: "MessagesStream",
    letter: b'm',
    family: Family::Anthropic,
    terminal: "message_stop",
    stream_path: "/v1/messages",
    whole_path: None,
    other_paths: &[],
    invoke_paths: Some((
        "/model/{model}/invoke-with-response-stream",
        "/model/{model}/invoke",
    )),
    query: &["beta"],
    key_header: ("x-api-key", ""),
    client_key: (&["x-api-key", "authorization"], ""),
    request_id: "request-id",
    version_header: Some(("anthropic-version", "2023-06-01")),
    otel_provider: "anthropic",
    result_keys: ("model", "usage"),
    framing: Framing::Sse,
    translates: true,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::Blocks,
    sigv4: false,
    streams_by_default: false,
    owns: super::messages::owns,
};

static RESPONSES: Spec = Spec {
    dialect: Dialect::Responses,
    name: "responses",
    stream_class: "ResponsesStream",
    letter: b'r',
    family: Family::OpenAi,
    terminal: "response.completed",
    stream_path: "/v1/responses",
    whole_path: None,
    other_paths: &[],
    invoke_paths: None,
    query: &["api-version"],
    key_header: ("authorization", "Bearer "),
    client_key: (&["authorization", "api-key"], ""),
    request_id: "x-request-id",
    version_header: None,
    otel_provider: "openai",
    result_keys: ("model", "usage"),
    framing: Framing::Sse,
    translates: true,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::Encrypted,
    sigv4: false,
    streams_by_default: false,
    owns: super::responses::owns,
};

static GEMINI: Spec = Spec {
    dialect: Dialect::Gemini,
    name: "gemini",
    stream_class: "GeminiStream",
    letter: b'g',
    family: Family::Google,
    terminal: "finishReason",
    stream_path: "/{version}/models/{model}:streamGenerateContent",
    whole_path: Some("/{version}/models/{model}:generateContent"),
    other_paths: &[],
    invoke_paths: None,
    query: &["alt"],
    key_header: ("x-goog-api-key", ""),
    client_key: (&["x-goog-api-key", "authorization"], "key"),
    request_id: "x-request-id",
    version_header: None,
    otel_provider: "gcp.gemini",
    result_keys: ("modelVersion", "usageMetadata"),
    framing: Framing::SseOrArray,
    translates: true,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::Calls,
    sigv4: false,
    streams_by_default: false,
    owns: super::gemini::owns,
};

static CONVERSE: Spec = Spec {
    dialect: Dialect::Converse,
    name: "converse",
    stream_class: "ConverseStream",
    letter: b'b',
    family: Family::Amazon,
    terminal: "messageStop",
    stream_path: "/model/{model}/converse-stream",
    whole_path: Some("/model/{model}/converse"),
    other_paths: &[],
    invoke_paths: None,
    query: &[],
    // A Bedrock API key is a bearer token (boto3 sends one from AWS_BEARER_TOKEN_BEDROCK);
    // SigV4 signatures are not keys.
    key_header: ("authorization", "Bearer "),
    client_key: (&["authorization"], ""),
    request_id: "x-amzn-requestid",
    version_header: None,
    otel_provider: "aws.bedrock",
    result_keys: ("", "usage"),
    framing: Framing::EventStream,
    translates: false,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::None,
    sigv4: true,
    streams_by_default: false,
    owns: super::converse::owns,
};

static OLLAMA: Spec = Spec {
    dialect: Dialect::Ollama,
    name: "ollama",
    stream_class: "OllamaStream",
    letter: b'o',
    family: Family::Local,
    terminal: "\"done\": true",
    stream_path: "/api/chat",
    whole_path: None,
    other_paths: &["/api/generate"],
    invoke_paths: None,
    query: &[],
    // A local server takes none; Ollama Cloud and proxies take a bearer key.
    key_header: ("authorization", "Bearer "),
    client_key: (&["authorization"], ""),
    request_id: "x-request-id",
    version_header: None,
    otel_provider: "ollama",
    result_keys: ("model", ""),
    framing: Framing::Ndjson,
    translates: false,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::None,
    sigv4: false,
    streams_by_default: true,
    owns: super::ollama::owns,
};

static COHERE: Spec = Spec {
    dialect: Dialect::Cohere,
    name: "cohere",
    stream_class: "CohereStream",
    letter: b'k',
    family: Family::Cohere,
    terminal: "message-end",
    stream_path: "/v2/chat",
    whole_path: None,
    other_paths: &[],
    invoke_paths: None,
    query: &[],
    key_header: ("authorization", "Bearer "),
    client_key: (&["authorization"], ""),
    request_id: "x-request-id",
    version_header: None,
    otel_provider: "cohere",
    result_keys: ("", "usage"),
    framing: Framing::Sse,
    translates: false,
    source: true,
    requests: true,
    serves: true,
    upstream: true,
    signing: Signing::None,
    sigv4: false,
    streams_by_default: false,
    owns: super::cohere::owns,
};

/// The order in which detection asks the SSE dialects whether a document is theirs: the
/// ones with the most distinctive shapes first (chat's shape is the loosest).
pub const SNIFF_ORDER: [Dialect; 5] = [
    Dialect::Cohere,
    Dialect::Messages,
    Dialect::Responses,
    Dialect::Gemini,
    Dialect::Chat,
];

impl Dialect {
    /// Every dialect, in the registry's order.
    pub const ALL: [Dialect; 7] = [
        Dialect::Chat,
        Dialect::Messages,
        Dialect::Responses,
        Dialect::Gemini,
        Dialect::Converse,
        Dialect::Ollama,
        Dialect::Cohere,
    ];

    /// The dialect's row of the registry.
    pub fn spec(self) -> &'static Spec {
        match self {
            Dialect::Chat => &CHAT,
            Dialect::Messages => &MESSAGES,
            Dialect::Responses => &RESPONSES,
            Dialect::Gemini => &GEMINI,
            Dialect::Converse => &CONVERSE,
            Dialect::Ollama => &OLLAMA,
            Dialect::Cohere => &COHERE,
        }
    }

    /// The dialect of a public name.
    pub fn parse(name: &str) -> Option<Dialect> {
        SPECS.iter().find(|s| s.name == name).map(|s| s.dialect)
    }

    /// The dialect's public name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The dialect of a carried id's letter.
    pub fn from_letter(letter: u8) -> Option<Dialect> {
        SPECS.iter().find(|s| s.letter == letter).map(|s| s.dialect)
    }
}

/// The names of the dialects translations serve, for a message: `"chat", "messages",
/// "responses" or "gemini"`, with `last` (say `"auto"`) after them when given.
pub fn expected(last: Option<&str>) -> String {
    listed(|s| s.translates, last)
}

/// [`expected`] for the dialects whose requests `translate_request` translates.
pub fn expected_requests(last: Option<&str>) -> String {
    listed(|s| s.requests, last)
}

/// [`expected`] for the dialects a stream translation reads.
pub fn expected_sources(last: Option<&str>) -> String {
    listed(|s| s.source, last)
}

fn listed(keep: impl Fn(&Spec) -> bool, last: Option<&str>) -> String {
    let mut names: Vec<String> = SPECS
        .iter()
        .filter(|s| keep(s))
        .map(|s| format!("{:?}", s.name))
        .collect();
    names.extend(last.map(|l| format!("{l:?}")));
    match names.split_last() {
        Some((tail, head)) if !head.is_empty() => format!("{} or {tail}", head.join(", ")),
        _ => names.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_the_enums_order_and_unique() {
        for (i, spec) in SPECS.iter().enumerate() {
            assert_eq!(spec.dialect as usize, i);
            assert_eq!(Dialect::parse(spec.name), Some(spec.dialect));
            assert_eq!(Dialect::from_letter(spec.letter), Some(spec.dialect));
        }
        let mut letters: Vec<u8> = SPECS.iter().map(|s| s.letter).collect();
        letters.sort_unstable();
        letters.dedup();
        assert_eq!(letters.len(), SPECS.len());
        for d in Dialect::ALL {
            // Every SSE dialect is sniffed; an event stream body is never SSE.
            assert_eq!(SNIFF_ORDER.contains(&d), d.spec().framing.name() == "sse");
        }
        assert_eq!(Dialect::parse("sse"), None);
        assert_eq!(
            expected(Some("auto")),
            r#""chat", "messages", "responses", "gemini" or "auto""#
        );
    }
}

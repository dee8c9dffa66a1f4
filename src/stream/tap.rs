//! What reads a stream beside its sink: each thing read off it (`Upstream`), handed to its
//! `Tap` (a translation, `crate::translate`, implements it).

/// Declares [`Upstream`] from the dialect list: a variant a dialect, holding the view its
/// stream module names (`View`).
macro_rules! upstream {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// One thing read off an upstream stream: a view the source dialect's fold reads (the
        /// same view: a dialect stream taps its own decode, so a translation frames and
        /// decodes nothing of its own; one variant a dialect, its stream module's `View`), an
        /// error the stream reports, the `[DONE]` sentinel, or a frame whose JSON did not
        /// decode.
        #[derive(Debug, Clone, Copy)]
        pub enum Upstream<'a> {
            $(
                #[doc = concat!("A view of a ", stringify!($d), " stream (`crate::stream::", stringify!($m), "::View`).")]
                $d(&'a super::$m::View<'a>),
            )*
            /// An error the stream reported (the server's, or its own).
            Error(&'a crate::dialect::ErrorInfo<'a>),
            /// The `[DONE]` sentinel (chat).
            Done,
            /// A frame whose JSON did not decode (the stream goes on).
            Malformed,
            /// The end of the upstream body (every source sees it; only Gemini, which has no
            /// terminal marker, may still owe closing events then).
            End,
        }
    };
}
crate::dialect::registry::dialects!(upstream);

/// What reads a stream beside its sink: a translation (`crate::translate::Translation`)
/// implements it, so this layer knows no layer above it. A tap is lent to a stream and taken
/// back ([`Tap::into_any`]) by whoever owns it.
pub trait Tap: std::any::Any + Send + Sync {
    /// One thing read off the stream.
    fn read(&mut self, up: Upstream<'_>);
    /// The tap as `Any`, to take back its concrete type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
    /// The tap as `Any`, to reach its concrete type in place.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

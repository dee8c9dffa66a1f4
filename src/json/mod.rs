//! The JSON toolkit below the dialects and the folds: reading frames into borrowed structs
//! ([`read`]), the tree a fold builds and raw JSON read one level deep ([`tree`]), writing JSON
//! text by hand ([`write`]: the one string escaper) and partial JSON read as it arrives
//! ([`partial`]). Nothing here knows a dialect.

pub mod partial;
pub mod read;
pub mod tree;
pub mod write;

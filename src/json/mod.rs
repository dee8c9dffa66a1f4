//! The JSON toolkit below the dialects and the folds: reading frames into borrowed structs
//! ([`read`] through serde, [`cursor`] by hand for a shape read in one pass), the tree a fold builds and raw JSON read one level deep ([`tree`]), writing JSON
//! text by hand ([`write`]: the one string escaper) and partial JSON read as it arrives
//! ([`partial`]). Nothing here knows a dialect.

pub mod build;
pub mod cursor;
pub mod partial;
pub mod read;
pub mod tree;
pub mod write;

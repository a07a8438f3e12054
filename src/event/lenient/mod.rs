//! Lenient reading of what a host sends: its JSON text made parseable ([`json`]: lone
//! surrogate escapes, numbers out of `f64` range) and the field types that read a value of the
//! wrong type as absent instead of failing the event ([`fields`]).

pub mod fields;
pub mod json;

pub use fields::*;
pub use json::{text, value};

//! The one error type of the spec: a JSON path and what was expected there.

use std::fmt;

/// A spec or generator-option error: `path` is a JSON path such as
/// `$.tasks.thread0.phases.p1.run`, `message` says what was expected and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub path: String,
    pub message: String,
}

impl SpecError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for SpecError {}

/// `path` followed by the member `key`, written as every spec error writes it: `.key`,
/// or `["key"]` when the key is not a plain name.
pub fn path_with_key(path: &str, key: &str) -> String {
    let mut p = path.to_string();
    crate::json::push_key(&mut p, key);
    p
}

//! What rt-app's `workgen` script (doc/workgen in scheduler-tools/rt-app, installed as
//! `workgen` by Debian's rt-app package) does to a file before rt-app reads it, so that
//! schedlab reads such a file directly and means the same thing:
//!
//! - `check_suspend_json()`: a line holding `suspend` but no `:` (a bare `"suspend",`)
//!   becomes `"suspend" : "<task>"`, where `<task>` is the key of the enclosing member of
//!   `tasks` as written. The JSON reader keeps the bare key (`Json::Bare`); `task.rs` fills
//!   in the task's key.
//! - `check_unikid_json()` (run second): within one object, a key already seen is renamed
//!   by appending a number, so that json-c, which keeps only the last value of a repeated
//!   key, sees every member. [`unique_keys`] gives the same names. The numbering counter is
//!   shared by the whole object and only grows on a clash: `run, run, run` becomes `run,
//!   run1, run2`, and `run, sleep, run, sleep` becomes `run, sleep, run1, sleep1`.
//!
//! workgen works line by line: a key on the same line as the `{` that opens its value is
//! counted one level too deep, so it is never renamed (a repeated phase written
//! `"p1" : {` reaches rt-app unrenamed, and json-c keeps the last one at the first one's
//! place). schedlab follows what workgen is documented to do (doc/tutorial.txt: "workgen
//! will check the file and ensure that each key is unique by appending an index"), not
//! that accident: every repeated phase is its own phase.

use crate::work::Names;

/// The names workgen's `check_unikid_json()` gives the keys of one object, in order.
pub(crate) fn unique_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = Names::default();
    let mut counter = 1u32;
    for k in keys {
        let mut name = k.to_string();
        if seen.get(&name).is_some() {
            name = format!("{k}{counter}");
            while seen.get(&name).is_some() {
                counter += 1;
                name = format!("{k}{counter}");
            }
        }
        seen.intern(&name);
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unique_keys;

    #[test]
    fn renames_like_workgen() {
        assert_eq!(unique_keys(["run", "run", "run"]), ["run", "run1", "run2"]);
        assert_eq!(
            unique_keys(["run", "sleep", "run", "sleep"]),
            ["run", "sleep", "run1", "sleep1"]
        );
        assert_eq!(
            unique_keys(["light1", "heavy1", "light2", "heavy1"]),
            ["light1", "heavy1", "light2", "heavy11"]
        );
        // A rename that clashes with a key written later: the later key is renamed.
        assert_eq!(unique_keys(["a", "a", "a1"]), ["a", "a1", "a11"]);
    }
}

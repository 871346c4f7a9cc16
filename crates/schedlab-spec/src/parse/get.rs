//! Typed access to [`Json`] values with JSON-path errors: every getter says what it expected
//! and what it found, so the rest of the parser never formats a type error by hand.

use crate::json::{push_key, Json, Number};
use crate::SpecError;

/// Largest count rt-app itself can represent (`int` in `get_int_value_from()`).
pub(crate) const MAX_LOOP: i128 = i32::MAX as i128;

/// A JSON object being validated: its path and its members in file order.
pub(crate) struct Obj<'a> {
    pub path: String,
    pub members: &'a [(String, Json)],
}

impl<'a> Obj<'a> {
    /// View `v` as an object or fail with "expected {what} (an object), found …". A bare
    /// key (`"suspend",` with no value) is an error here; task and phase objects, where
    /// rt-app's workgen completes a bare `suspend`, use [`Obj::with_bare_keys`].
    pub(crate) fn new(v: &'a Json, path: &str, what: &str) -> Result<Obj<'a>, SpecError> {
        let o = Obj::with_bare_keys(v, path, what)?;
        o.no_bare(|_| false)?;
        Ok(o)
    }

    /// Like [`Obj::new`], but members with no value are kept (see [`Obj::no_bare`]).
    pub(crate) fn with_bare_keys(
        v: &'a Json,
        path: &str,
        what: &str,
    ) -> Result<Obj<'a>, SpecError> {
        match v {
            Json::Obj(m) => Ok(Obj {
                path: path.to_string(),
                members: m,
            }),
            other => Err(SpecError::new(
                path,
                format!(
                    "expected {what} (a JSON object), found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// Path of a member by key.
    pub(crate) fn at(&self, key: &str) -> String {
        let mut p = self.path.clone();
        push_key(&mut p, key);
        p
    }

    /// First member with this key (repeated keys are rejected by [`Obj::no_repeats`] or, for
    /// events, iterated with [`Obj::iter`]).
    pub(crate) fn get(&self, key: &str) -> Option<&'a Json> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Members with their paths. The n-th (n ≥ 2) repetition of a key gets the path segment
    /// `key#n`, so that two `"run"` events in one phase are told apart in messages.
    pub(crate) fn iter(&self) -> Vec<(&'a str, &'a Json, String)> {
        // Counted in a map: a tasks object may hold 100 000 keys (a list made this O(n²)).
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        self.members
            .iter()
            .map(|(k, v)| {
                let n = {
                    let c = seen.entry(k.as_str()).or_insert(0);
                    *c += 1;
                    *c
                };
                let mut p = self.at(k);
                if n > 1 {
                    p.push_str(&format!("#{n}"));
                }
                (k.as_str(), v, p)
            })
            .collect()
    }

    /// Reject a key written without a value unless `bare_ok(key)`.
    pub(crate) fn no_bare(&self, bare_ok: impl Fn(&str) -> bool) -> Result<(), SpecError> {
        for (k, v, p) in self.iter() {
            if matches!(v, Json::Bare) && !bare_ok(k) {
                return Err(SpecError::new(
                    p,
                    format!(
                        "key {k:?} has no value (expected \"{k}\": value); only a bare \"suspend\" \
                         may be written without one, which rt-app's workgen completes with the \
                         task's name"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Reject a key given twice unless `repeat_ok(key)` (events may repeat, as rt-app's
    /// `workgen` allows). serde_json would silently keep the last value.
    pub(crate) fn no_repeats(&self, repeat_ok: impl Fn(&str) -> bool) -> Result<(), SpecError> {
        // Occurrences so far, in a map (a list made a 100 000-key tasks object O(n²)).
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        for (k, _) in self.members.iter() {
            let c = seen.entry(k.as_str()).or_insert(0);
            *c += 1;
            if repeat_ok(k) {
                continue;
            }
            let before = *c - 1;
            if before > 0 {
                return Err(SpecError::new(
                    format!("{}#{}", self.at(k), before + 1),
                    format!(
                        "duplicate key {k:?}: a key may appear only once in an object \
                         (JSON readers keep only one of them)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The error for a key that is not part of the grammar at this level.
pub(crate) fn unknown_key(path: &str, key: &str, where_: &str, allowed: &[&str]) -> SpecError {
    SpecError::new(
        path,
        format!(
            "unknown key {key:?} in {where_}; expected one of: {}",
            allowed.join(", ")
        ),
    )
}

/// The error for an rt-app feature that schedlab recognises but does not simulate.
pub(crate) fn not_modelled(path: &str, what: &str) -> SpecError {
    SpecError::new(path, format!("not modelled yet: {what}"))
}

pub(crate) fn int(v: &Json, path: &str, what: &str) -> Result<i128, SpecError> {
    match v {
        Json::Num(Number::Int(i)) => Ok(*i),
        Json::Num(Number::Float(f)) if f.is_finite() && f.fract() == 0.0 && f.abs() >= 1e30 => {
            Err(SpecError::new(
                path,
                format!(
                    "expected {what}, found {v} which is far too large",
                    v = v.describe()
                ),
            ))
        }
        other => Err(SpecError::new(
            path,
            format!("expected {what} (an integer), found {}", other.describe()),
        )),
    }
}

/// An integer in `lo..=hi`.
pub(crate) fn int_in(
    v: &Json,
    path: &str,
    what: &str,
    lo: i128,
    hi: i128,
) -> Result<i128, SpecError> {
    let i = int(v, path, what)?;
    if i < lo || i > hi {
        return Err(SpecError::new(
            path,
            format!("expected {what} in {lo}..={hi}, found {i}"),
        ));
    }
    Ok(i)
}

pub(crate) fn string<'a>(v: &'a Json, path: &str, what: &str) -> Result<&'a str, SpecError> {
    match v {
        Json::Str(s) => Ok(s),
        other => Err(SpecError::new(
            path,
            format!("expected {what} (a string), found {}", other.describe()),
        )),
    }
}

/// A string that names something: non-empty.
pub(crate) fn name<'a>(v: &'a Json, path: &str, what: &str) -> Result<&'a str, SpecError> {
    let s = string(v, path, what)?;
    if s.is_empty() {
        return Err(SpecError::new(
            path,
            format!("expected {what} (a non-empty string), found an empty string"),
        ));
    }
    Ok(s)
}

pub(crate) fn boolean(v: &Json, path: &str, what: &str) -> Result<bool, SpecError> {
    match v {
        Json::Bool(b) => Ok(*b),
        other => Err(SpecError::new(
            path,
            format!(
                "expected {what} (true or false), found {}",
                other.describe()
            ),
        )),
    }
}

/// A time in microseconds (rt-app's unit) converted to nanoseconds; must be ≥ `min_us` and
/// fit in u64 nanoseconds.
pub(crate) fn micros(v: &Json, path: &str, what: &str, min_us: i128) -> Result<u64, SpecError> {
    let us = int(v, path, &format!("{what} in microseconds"))?;
    if us < min_us {
        let want = if min_us == 0 { "≥ 0" } else { "> 0" };
        return Err(SpecError::new(
            path,
            format!("expected {what} in microseconds {want}, found {us}"),
        ));
    }
    us_to_ns(us, path, what)
}

/// µs → ns with an overflow check (u64 ns holds about 584 years).
pub(crate) fn us_to_ns(us: i128, path: &str, what: &str) -> Result<u64, SpecError> {
    let ns = us.checked_mul(1000).unwrap_or(i128::MAX);
    u64::try_from(ns).map_err(|_| {
        SpecError::new(
            path,
            format!(
                "{what} of {us} µs does not fit in 64-bit nanoseconds (at most {} µs)",
                u64::MAX / 1000
            ),
        )
    })
}

/// rt-app's `loop`: -1 (forever) or a positive count.
pub(crate) fn loop_count(v: &Json, path: &str) -> Result<i64, SpecError> {
    let n = int(v, path, "a loop count (-1 = forever, or ≥ 1)")?;
    if n == 0 {
        return Err(SpecError::new(
            path,
            "expected a loop count of -1 (forever) or ≥ 1, found 0 (rt-app runs a task with \
             loop 0 not at all and a phase with loop 0 forever; say which you mean)",
        ));
    }
    if !(-1..=MAX_LOOP).contains(&n) {
        return Err(SpecError::new(
            path,
            format!("expected a loop count of -1 (forever) or 1..={MAX_LOOP}, found {n}"),
        ));
    }
    Ok(n as i64)
}

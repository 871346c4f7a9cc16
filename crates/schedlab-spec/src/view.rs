//! A spec's identity and its plain JSON view, both taken from the text exactly as it is run.
//!
//! The identity is the sha256 of the text's UTF-8 bytes: two texts that differ in any byte
//! (a comment, the first of two repeated `run` keys) are two specs, since `parse_spec` may
//! read them differently. The view is what a front end needs to edit a spec: the value the
//! spec reader ([`crate::parse_spec`]'s, so with its comments, trailing commas and nesting
//! limit) makes of the text, as a `serde_json::Value` with members in file order. A map
//! cannot hold a repeated key or a bare key (`"suspend",`), so those are refused with their
//! JSON path rather than collapsed; so are integers outside the 64-bit range and numbers
//! that are not finite, which a `Value` cannot hold exactly.

use serde_json::{Map, Number as SerdeNumber, Value};
use sha2::{Digest, Sha256};

use crate::json::{self, push_key, Json, Number};
use crate::SpecError;

/// The sha256 of exactly `text`'s UTF-8 bytes, as lowercase hex: a spec's identity
/// (`run.spec_sha256` of every run of that text).
pub fn spec_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The spec text as a plain JSON value (see the module's documentation for what is refused).
/// Errors name the JSON path, as [`crate::parse_spec`]'s do.
pub fn spec_view(text: &str) -> Result<Value, SpecError> {
    let tree = json::parse(text)?;
    plain(&tree, &mut String::from("$"))
}

fn plain(v: &Json, path: &mut String) -> Result<Value, SpecError> {
    Ok(match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Num(n) => Value::Number(number(n, path)?),
        Json::Str(s) => Value::String(s.clone()),
        Json::Arr(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(plain(x, path)?);
                path.truncate(len);
            }
            Value::Array(out)
        }
        Json::Obj(members) => {
            let mut out = Map::with_capacity(members.len());
            for (k, x) in members {
                let len = path.len();
                push_key(path, k);
                if out.contains_key(k) {
                    return Err(SpecError::new(
                        path.clone(),
                        "repeated key: a spec with repeated keys (rt-app's `run`, `run` in \
                         one phase) cannot be edited as a map, which keeps one value per key",
                    ));
                }
                if matches!(x, Json::Bare) {
                    return Err(SpecError::new(
                        path.clone(),
                        "a bare key (no `: value`) cannot be edited as a map",
                    ));
                }
                out.insert(k.clone(), plain(x, path)?);
                path.truncate(len);
            }
            Value::Object(out)
        }
        Json::Bare => {
            return Err(SpecError::new(path.clone(), "a bare key has no value"));
        }
    })
}

fn number(n: &Number, path: &str) -> Result<SerdeNumber, SpecError> {
    let out = match n {
        Number::Int(i) => i64::try_from(*i)
            .map(SerdeNumber::from)
            .or_else(|_| u64::try_from(*i).map(SerdeNumber::from))
            .ok(),
        Number::Float(x) => SerdeNumber::from_f64(*x),
    };
    out.ok_or_else(|| {
        SpecError::new(
            path,
            format!(
                "the number {n} is outside what a spec can hold (64-bit integers, finite floats)"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_of_the_exact_bytes() {
        // sha256("abc"), FIPS 180-2 appendix B.1
        assert_eq!(
            spec_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let a = r#"{"tasks": {"t": {"run": 100, "run": 50}}}"#;
        let b = r#"{"tasks": {"t": {"run": 900, "run": 50}}}"#;
        assert_ne!(spec_sha256(a), spec_sha256(b));
    }

    #[test]
    fn the_view_keeps_member_order_and_reads_like_the_spec_reader() {
        let v = spec_view("{/* c */ \"tasks\": {\"b\": {\"run\": 1,}, \"a\": {\"sleep\": 2.5}},}")
            .unwrap();
        let keys: Vec<&String> = v["tasks"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(v["tasks"]["a"]["sleep"], 2.5);
        assert_eq!(spec_view("18446744073709551615").unwrap(), u64::MAX);
    }

    #[test]
    fn the_view_refuses_what_a_map_cannot_hold() {
        let e = spec_view(r#"{"tasks": {"t": {"run": 1, "run": 2}}}"#).unwrap_err();
        assert_eq!(e.path, "$.tasks.t.run");
        assert!(e.message.contains("repeated key"), "{}", e.message);
        let e = spec_view(r#"{"tasks": {"t": {"suspend", "run": 2}}}"#).unwrap_err();
        assert_eq!(e.path, "$.tasks.t.suspend");
        let e = spec_view(r#"{"a": [1, 18446744073709551616]}"#).unwrap_err();
        assert_eq!(e.path, "$.a[1]");
        let e = spec_view(r#"{"a": 1e999}"#).unwrap_err();
        assert_eq!(e.path, "$.a");
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(1000), "]".repeat(1000));
        assert!(spec_view(&deep).unwrap_err().message.contains("nesting"));
    }
}

//! A small JSON reader that accepts what rt-app's own reader (json-c, non-strict mode) accepts
//! and keeps what serde_json throws away.
//!
//! Why not `serde_json::from_str`: rt-app spec files in the wild (including rt-app's own
//! `doc/examples`) contain `/* */` and `//` comments, trailing commas and repeated keys
//! (`"run"` twice in one phase, which rt-app's `workgen` turns into `run`, `run1`…). serde_json
//! rejects the first two and silently keeps only the last of a repeated key, so a spec could
//! lose events without a word. This reader keeps every member of an object, in file order,
//! and the validator decides what a repeated key means (see `parse.rs`).
//!
//! One more thing rt-app users write that is not JSON: a key with no value, `"suspend",`,
//! which rt-app's `workgen` completes into `"suspend" : "<task name>"`. The reader keeps
//! such a member as [`Json::Bare`]; the validator accepts it only where workgen would
//! complete it (see `parse/task.rs`).
//!
//! Everything else is strict JSON (RFC 8259): string escapes, number grammar, no bare words.
//! Nesting is limited to [`MAX_DEPTH`] so that hostile input cannot overflow the stack.

use crate::SpecError;
use std::fmt;

/// Deepest nesting accepted. A workload spec needs about 6 levels; serde_json stops at 128.
pub(crate) const MAX_DEPTH: usize = 64;

/// A JSON number as written: integers are kept exactly (i128 covers u64 and i64), anything
/// with a fraction or exponent, or too long for i128, is a float.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i128),
    Float(f64),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A parsed JSON value. Objects keep every member in file order, repeated keys included.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Num(Number),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
    /// The "value" of a bare key (`"suspend",`): an object member with no `: value`.
    Bare,
}

impl Json {
    /// A short description of the value for "expected X, found Y" messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Json::Null => "null".to_string(),
            Json::Bool(b) => b.to_string(),
            Json::Num(n) => n.to_string(),
            Json::Str(s) => {
                let mut shown: String = s.chars().take(40).collect();
                if shown.len() < s.len() {
                    shown.push('…');
                }
                format!("the string {:?}", shown)
            }
            Json::Arr(_) => "an array".to_string(),
            Json::Obj(_) => "an object".to_string(),
            Json::Bare => "no value (a bare key)".to_string(),
        }
    }

    /// Convert a serde_json value (which cannot hold repeated keys), refusing nesting deeper
    /// than [`MAX_DEPTH`] so that a programmatically built value cannot exhaust the stack.
    pub(crate) fn from_serde(v: &serde_json::Value) -> Result<Json, SpecError> {
        from_serde_at(v, 0, &mut String::from("$"))
    }
}

fn from_serde_at(
    v: &serde_json::Value,
    depth: usize,
    path: &mut String,
) -> Result<Json, SpecError> {
    use serde_json::Value as V;
    if depth > MAX_DEPTH {
        return Err(SpecError::new(
            path.clone(),
            format!("nesting deeper than {MAX_DEPTH} levels; a workload spec needs about 6"),
        ));
    }
    Ok(match v {
        V::Null => Json::Null,
        V::Bool(b) => Json::Bool(*b),
        V::Number(n) => Json::Num(if let Some(i) = n.as_i64() {
            Number::Int(i as i128)
        } else if let Some(u) = n.as_u64() {
            Number::Int(u as i128)
        } else {
            Number::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        V::String(s) => Json::Str(s.clone()),
        V::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(from_serde_at(x, depth + 1, path)?);
                path.truncate(len);
            }
            Json::Arr(out)
        }
        V::Object(o) => {
            let mut out = Vec::with_capacity(o.len());
            for (k, x) in o {
                let len = path.len();
                push_key(path, k);
                out.push((k.clone(), from_serde_at(x, depth + 1, path)?));
                path.truncate(len);
            }
            Json::Obj(out)
        }
    })
}

/// Append `.key` (or `["key"]` when the key is not a plain name) to a JSON path.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'));
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        // serde_json's string escaping gives a valid JSON string literal.
        path.push_str(&serde_json::Value::String(key.to_string()).to_string());
        path.push(']');
    }
}

/// Parse text into a [`Json`] tree. Errors use the path `$` and give line and column.
pub(crate) fn parse(text: &str) -> Result<Json, SpecError> {
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
    };
    r.skip_ws()?;
    if r.i >= r.s.len() {
        return Err(SpecError::new(
            "$",
            "empty input: expected a JSON object with a \"tasks\" member",
        ));
    }
    let v = r.value(0)?;
    r.skip_ws()?;
    if r.i < r.s.len() {
        return Err(r.err("unexpected text after the end of the top-level value"));
    }
    Ok(v)
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn err(&self, what: &str) -> SpecError {
        let upto = &self.s[..self.i.min(self.s.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = upto.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        // Count characters, not bytes, for the column.
        let col = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        SpecError::new(
            "$",
            format!("invalid JSON at line {line}, column {col}: {what}"),
        )
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skip whitespace and comments (`// …` to end of line, `/* … */`), as json-c does.
    fn skip_ws(&mut self) -> Result<(), SpecError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') => match self.s.get(self.i + 1) {
                    Some(b'/') => {
                        while let Some(c) = self.peek() {
                            if c == b'\n' {
                                break;
                            }
                            self.i += 1;
                        }
                    }
                    Some(b'*') => {
                        let start = self.i;
                        self.i += 2;
                        loop {
                            match self.peek() {
                                None => {
                                    self.i = start;
                                    return Err(self.err("unterminated /* comment"));
                                }
                                Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                    self.i += 2;
                                    break;
                                }
                                _ => self.i += 1,
                            }
                        }
                    }
                    _ => return Err(self.err("unexpected '/' (comments are /* … */ or // …)")),
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, SpecError> {
        if depth > MAX_DEPTH {
            return Err(self.err(&format!(
                "nesting deeper than {MAX_DEPTH} levels; a workload spec needs about 6"
            )));
        }
        match self.peek() {
            None => Err(self.err("unexpected end of input, expected a value")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(c) => Err(self.err(&format!(
                "unexpected character {:?}, expected a value",
                char_at(self.s, self.i).unwrap_or(c as char)
            ))),
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Result<Json, SpecError> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.err(&format!("expected {w}")))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, SpecError> {
        self.i += 1; // '{'
        let mut members = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Obj(members));
                }
                Some(b'"') => {}
                None => return Err(self.err("unexpected end of input inside an object")),
                _ => return Err(self.err("expected a string key or '}'")),
            }
            let key = self.string()?;
            self.skip_ws()?;
            let v = match self.peek() {
                Some(b':') => {
                    self.i += 1;
                    self.skip_ws()?;
                    self.value(depth + 1)?
                }
                // A bare key, as rt-app users write `"suspend",` for workgen to complete.
                Some(b',' | b'}') => Json::Bare,
                _ => return Err(self.err(&format!("expected ':' after the key {key:?}"))),
            };
            members.push((key, v));
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => self.i += 1, // a trailing comma before '}' is accepted
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Obj(members));
                }
                None => return Err(self.err("unexpected end of input inside an object")),
                _ => return Err(self.err("expected ',' or '}' after an object member")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, SpecError> {
        self.i += 1; // '['
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                None => return Err(self.err("unexpected end of input inside an array")),
                _ => {}
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                None => return Err(self.err("unexpected end of input inside an array")),
                _ => return Err(self.err("expected ',' or ']' after an array element")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, SpecError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = self
                .peek()
                .ok_or_else(|| self.err("unexpected end of input in a \\u escape"))?;
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.err("expected 4 hex digits after \\u"))?;
            v = v * 16 + d;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, SpecError> {
        self.i += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or_else(|| self.err("unterminated string"))?;
            match c {
                b'"' => {
                    self.i += 1;
                    return String::from_utf8(out)
                        .map_err(|_| self.err("string is not valid UTF-8"));
                }
                b'\\' => {
                    self.i += 1;
                    let e = self.peek().ok_or_else(|| self.err("unterminated escape"))?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if self.s[self.i..].starts_with(b"\\u") {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err(self.err("invalid low surrogate in \\u escape"));
                                    }
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    return Err(self.err("lone high surrogate in \\u escape"));
                                }
                            } else {
                                hi
                            };
                            char::from_u32(cp).ok_or_else(|| self.err("invalid \\u escape"))?
                        }
                        _ => return Err(self.err("invalid escape in string")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(self.err("control character inside a string")),
                _ => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn number(&mut self) -> Result<Json, SpecError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.i - int_start > 1 && self.s[int_start] == b'0' {
            return Err(self.err("numbers must not have leading zeros"));
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            is_float = true;
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("expected digits after '.'"));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("expected digits in the exponent"));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        // The slice is ASCII by construction.
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("0");
        if !is_float {
            if let Ok(i) = text.parse::<i128>() {
                return Ok(Json::Num(Number::Int(i)));
            }
        }
        Ok(Json::Num(Number::Float(
            text.parse::<f64>().unwrap_or(f64::INFINITY),
        )))
    }
}

fn char_at(s: &[u8], i: usize) -> Option<char> {
    std::str::from_utf8(&s[i..(i + 4).min(s.len())])
        .ok()
        .or_else(|| std::str::from_utf8(&s[i..i + 1]).ok())
        .and_then(|t| t.chars().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_repeated_keys_in_order() {
        let v = parse(r#"{"run": 1, "sleep": 2, "run": 3}"#).unwrap();
        let Json::Obj(m) = v else { panic!() };
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["run", "sleep", "run"]);
        assert_eq!(m[2].1, Json::Num(Number::Int(3)));
    }

    #[test]
    fn bare_keys_are_kept_for_the_validator() {
        let v = parse(r#"{"suspend", "run": 1, "suspend"}"#).unwrap();
        let Json::Obj(m) = v else { panic!() };
        assert_eq!(m[0], ("suspend".to_string(), Json::Bare));
        assert_eq!(m[2], ("suspend".to_string(), Json::Bare));
        assert!(parse(r#"{"a" 1}"#).is_err());
        assert!(parse(r#"["a",]"#).is_ok());
    }

    #[test]
    fn comments_and_trailing_commas_like_json_c() {
        let v = parse("{ /* a */ \"a\": [1, 2,], // b\n \"b\": {\"c\": true,}, }").unwrap();
        let Json::Obj(m) = v else { panic!() };
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn errors_give_line_and_column() {
        let e = parse("{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
        assert_eq!(e.path, "$");
        assert!(e.message.contains("line 3, column 7"), "{}", e.message);
        assert!(parse("").unwrap_err().message.contains("empty input"));
        assert!(parse("{\"a\": 01}").is_err());
        assert!(parse("{\"a\": 1} x").is_err());
        assert!(parse("/* open").is_err());
    }

    #[test]
    fn numbers_and_strings() {
        assert_eq!(
            parse("18446744073709551615").unwrap(),
            Json::Num(Number::Int(u64::MAX as i128))
        );
        assert_eq!(parse("1.5e3").unwrap(), Json::Num(Number::Float(1500.0)));
        assert_eq!(
            parse(r#""a\u00e9\ud83d\ude00\n""#).unwrap(),
            Json::Str("aé😀\n".into())
        );
        assert!(parse(r#""\ud83d""#).is_err());
        assert!(matches!(
            parse("123456789012345678901234567890123456789012345").unwrap(),
            Json::Num(Number::Float(_))
        ));
    }

    #[test]
    fn depth_is_limited() {
        let deep = "[".repeat(10_000);
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("nesting"), "{}", e.message);
    }

    #[test]
    fn paths_quote_odd_keys() {
        let mut p = String::from("$");
        push_key(&mut p, "thread-0");
        push_key(&mut p, "a b");
        push_key(&mut p, "schedlab:write");
        assert_eq!(p, "$.thread-0[\"a b\"].schedlab:write");
    }
}

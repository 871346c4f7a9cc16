//! Generator options: defaults, unknown names, repeats and typed values, with errors at
//! `options.<name>` that say what was expected.

use super::{GenOption, GeneratorInfo};
use crate::SpecError;

/// The options of one generator call, defaults filled in.
pub(super) struct Opts {
    values: Vec<(&'static str, String, bool)>,
}

fn err(name: &str, msg: String) -> SpecError {
    SpecError::new(format!("options.{name}"), msg)
}

impl Opts {
    pub(super) fn new(info: &GeneratorInfo, given: &[(String, String)]) -> Result<Opts, SpecError> {
        let mut values: Vec<(&'static str, String, bool)> = info
            .options
            .iter()
            .map(|o| (o.name, o.default.clone(), false))
            .collect();
        for (k, v) in given {
            let Some(slot) = values.iter_mut().find(|(n, _, _)| *n == k.as_str()) else {
                return Err(err(
                    k,
                    format!(
                        "unknown option for {}; expected one of: {}",
                        info.name,
                        info.options
                            .iter()
                            .map(|o| o.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            if slot.2 {
                return Err(err(k, "given more than once".to_string()));
            }
            slot.1 = v.trim().to_string();
            slot.2 = true;
        }
        Ok(Opts { values })
    }

    fn raw(&self, name: &str) -> &str {
        self.values
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, v, _)| v.as_str())
            .unwrap_or("")
    }

    /// True when the option is `auto` (its default depends on other options).
    pub(super) fn is_auto(&self, name: &str) -> bool {
        self.raw(name) == "auto"
    }

    pub(super) fn int(&self, name: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
        self.integer(name, lo, hi)
    }

    pub(super) fn signed(&self, name: &str, lo: i64, hi: i64) -> Result<i64, SpecError> {
        self.integer(name, lo, hi)
    }

    /// An integer of any width in `lo..=hi`.
    fn integer<T>(&self, name: &str, lo: T, hi: T) -> Result<T, SpecError>
    where
        T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
    {
        let s = self.raw(name);
        let range = || format!("expected an integer in {lo}..={hi}");
        let v: T = s
            .parse()
            .map_err(|_| err(name, format!("{}, found {s:?}", range())))?;
        if v < lo || v > hi {
            return Err(err(name, format!("{}, found {v}", range())));
        }
        Ok(v)
    }

    /// A finite number in `(lo, hi]` (`lo` excluded: utilisations and rates must be > 0).
    pub(super) fn real(&self, name: &str, lo: f64, hi: f64) -> Result<f64, SpecError> {
        let s = self.raw(name);
        let v: f64 = s.parse().map_err(|_| {
            err(
                name,
                format!("expected a number in ({lo}, {hi}], found {s:?}"),
            )
        })?;
        if !v.is_finite() || v <= lo || v > hi {
            return Err(err(
                name,
                format!("expected a number in ({lo}, {hi}], found {s}"),
            ));
        }
        Ok(v)
    }

    /// A finite number in `[lo, hi)` (a share that may be zero but not all).
    pub(super) fn real_below(&self, name: &str, lo: f64, hi: f64) -> Result<f64, SpecError> {
        let s = self.raw(name);
        let range = format!("expected a number in [{lo}, {hi})");
        let v: f64 = s
            .parse()
            .map_err(|_| err(name, format!("{range}, found {s:?}")))?;
        if !v.is_finite() || v < lo || v >= hi {
            return Err(err(name, format!("{range}, found {s}")));
        }
        Ok(v)
    }

    pub(super) fn boolean(&self, name: &str) -> Result<bool, SpecError> {
        match self.raw(name) {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            s => Err(err(name, format!("expected true or false, found {s:?}"))),
        }
    }

    pub(super) fn choice(
        &self,
        name: &str,
        allowed: &[&'static str],
    ) -> Result<&'static str, SpecError> {
        let s = self.raw(name);
        allowed.iter().find(|a| **a == s).copied().ok_or_else(|| {
            err(
                name,
                format!("expected one of {}, found {s:?}", allowed.join(", ")),
            )
        })
    }

    /// A comma-separated list; empty text gives an empty list.
    pub(super) fn list<T: std::str::FromStr>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<Vec<T>, SpecError> {
        let s = self.raw(name);
        if s.is_empty() {
            return Ok(Vec::new());
        }
        s.split(',')
            .map(|x| {
                x.trim().parse::<T>().map_err(|_| {
                    err(
                        name,
                        format!(
                            "expected a comma-separated list of {what}, found {:?} in it",
                            x.trim()
                        ),
                    )
                })
            })
            .collect()
    }

    pub(super) fn error(&self, name: &str, msg: impl Into<String>) -> SpecError {
        err(name, msg.into())
    }
}

pub(super) fn opt(name: &'static str, default: impl ToString, help: &'static str) -> GenOption {
    GenOption {
        name,
        default: default.to_string(),
        help,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> GeneratorInfo {
        GeneratorInfo {
            name: "t",
            description: "",
            options: vec![opt("n", 3, ""), opt("mode", "a", "")],
        }
    }

    #[test]
    fn defaults_unknown_and_repeats() {
        let o = Opts::new(&info(), &[]).unwrap();
        assert_eq!(o.int("n", 1, 5).unwrap(), 3);
        let e = Opts::new(&info(), &[("x".into(), "1".into())])
            .err()
            .unwrap();
        assert_eq!(e.path, "options.x");
        assert!(e.message.contains("expected one of: n, mode"));
        let twice = [("n".into(), "1".into()), ("n".into(), "2".into())];
        assert!(Opts::new(&info(), &twice).is_err());
        let o = Opts::new(&info(), &[("n".into(), "9".into())]).unwrap();
        assert_eq!(o.int("n", 1, 5).unwrap_err().path, "options.n");
        assert!(o.choice("mode", &["b"]).is_err());
    }
}

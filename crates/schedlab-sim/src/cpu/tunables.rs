//! Declarative tunables: one table per policy gives both the listing (`info().params`:
//! name, default, description) and the parsing (`set_param`), so a tunable is declared
//! once.
//!
//! A policy keeps its tunables in a plain struct `P` whose `Default` holds the defaults
//! (the one place they are written) and lists them as `Vec<Tunable<P>>`, one row per
//! tunable, each naming the field it sets:
//!
//! ```ignore
//! fn tunables() -> Vec<Tunable<MyParams>> {
//!     vec![
//!         Tunable::int("busy_balance_ms", "busy CPU rebalance interval", 1, MAX, |p| &mut p.busy_ms),
//!         Tunable::flag("interactive", "1 = sleepers earn a bonus", |p| &mut p.interactive),
//!     ]
//! }
//! ```
//!
//! [`listing`] turns the table into `ParamInfo`s (the default is read from
//! `P::default()` through the same row), [`set`] parses a value with the row's kind and
//! reports one clear message naming the tunable and what it accepts. Rows of shared
//! infrastructure (the fair-class balancing tunables, the ready-queue back end) are
//! written once and [`Tunable::lift`]ed into each policy's table.

use crate::sched::ParamInfo;

/// An integer tunable's storage: a plain integer, or an `Option` whose `None` means "the
/// policy derives it" (shown with the row's `derived` text).
pub trait IntCell {
    /// The value, `None` when it is derived at run time.
    fn get(&self) -> Option<i64>;
    /// Store a value already checked against the row's range.
    fn set(&mut self, v: i64);
}

macro_rules! int_cell {
    ($($t:ty),*) => {$(
        impl IntCell for $t {
            fn get(&self) -> Option<i64> {
                Some(*self as i64)
            }
            fn set(&mut self, v: i64) {
                *self = v as $t;
            }
        }
        impl IntCell for Option<$t> {
            fn get(&self) -> Option<i64> {
                self.map(|v| v as i64)
            }
            fn set(&mut self, v: i64) {
                *self = Some(v as $t);
            }
        }
    )*};
}
int_cell!(u8, u32, u64, i32, i64);

/// A tunable that takes one of a fixed set of names (a back end, a mode).
pub trait ChoiceCell {
    /// Every accepted name, in display order.
    fn names(&self) -> Vec<&'static str>;
    /// The current value's name.
    fn name(&self) -> &'static str;
    /// Select the value with this index in `names()`.
    fn select(&mut self, index: usize);
}

impl ChoiceCell for schedlab_rtq::Kind {
    fn names(&self) -> Vec<&'static str> {
        schedlab_rtq::Kind::ALL
            .map(schedlab_rtq::Kind::name)
            .to_vec()
    }
    fn name(&self) -> &'static str {
        schedlab_rtq::Kind::name(*self)
    }
    fn select(&mut self, index: usize) {
        *self = schedlab_rtq::Kind::ALL[index];
    }
}

type Field<P, T> = Box<dyn for<'a> Fn(&'a mut P) -> &'a mut T>;

/// How a tunable's value is read, checked and stored.
pub enum Kind<P> {
    /// A boolean: 0/1, true/false, yes/no, on/off.
    Flag(Field<P, bool>),
    /// An integer in `min..=max`; `unit` names what it counts (for the messages);
    /// `derived` is shown as the default when the field is unset (`None`).
    Int {
        field: Field<P, dyn IntCell>,
        min: i64,
        max: i64,
        unit: &'static str,
        derived: &'static str,
    },
    /// One name out of a set.
    Choice(Field<P, dyn ChoiceCell>),
}

/// One row of a policy's tunables table.
pub struct Tunable<P> {
    pub name: &'static str,
    pub description: &'static str,
    pub kind: Kind<P>,
}

/// The largest value an integer tunable may take (fits every cell type in use).
pub const MAX: i64 = i32::MAX as i64;

impl<P: 'static> Tunable<P> {
    /// A boolean tunable.
    pub fn flag(
        name: &'static str,
        description: &'static str,
        field: fn(&mut P) -> &mut bool,
    ) -> Self {
        Tunable {
            name,
            description,
            kind: Kind::Flag(Box::new(field)),
        }
    }

    /// An integer tunable in `min..=max` (a count, a percentage, ...).
    pub fn int<C: IntCell + 'static>(
        name: &'static str,
        description: &'static str,
        min: i64,
        max: i64,
        field: fn(&mut P) -> &mut C,
    ) -> Self {
        Self::int_in(name, description, min, max, "", field)
    }

    /// A time in nanoseconds, at least `min`.
    pub fn ns<C: IntCell + 'static>(
        name: &'static str,
        description: &'static str,
        min: i64,
        field: fn(&mut P) -> &mut C,
    ) -> Self {
        Self::int_in(name, description, min, i64::MAX, " ns", field)
    }

    /// A time in milliseconds in `min..=max`.
    pub fn ms<C: IntCell + 'static>(
        name: &'static str,
        description: &'static str,
        min: i64,
        max: i64,
        field: fn(&mut P) -> &mut C,
    ) -> Self {
        Self::int_in(name, description, min, max, " ms", field)
    }

    fn int_in<C: IntCell + 'static>(
        name: &'static str,
        description: &'static str,
        min: i64,
        max: i64,
        unit: &'static str,
        field: fn(&mut P) -> &mut C,
    ) -> Self {
        Tunable {
            name,
            description,
            kind: Kind::Int {
                field: Box::new(move |p| field(p) as &mut dyn IntCell),
                min,
                max,
                unit,
                derived: "",
            },
        }
    }

    /// One of a set of names.
    pub fn choice<C: ChoiceCell + 'static>(
        name: &'static str,
        description: &'static str,
        field: fn(&mut P) -> &mut C,
    ) -> Self {
        Tunable {
            name,
            description,
            kind: Kind::Choice(Box::new(move |p| field(p) as &mut dyn ChoiceCell)),
        }
    }

    /// The text shown as the default while an `Option` field is unset (the policy derives
    /// the value, e.g. "sd_weight of each domain").
    pub fn derived(mut self, text: &'static str) -> Self {
        if let Kind::Int { derived, .. } = &mut self.kind {
            *derived = text;
        }
        self
    }

    /// This row as a row of an outer struct that holds `P` (shared rows written once).
    pub fn lift<Q: 'static>(self, outer: fn(&mut Q) -> &mut P) -> Tunable<Q> {
        let kind = match self.kind {
            Kind::Flag(f) => Kind::Flag(Box::new(move |q: &mut Q| f(outer(q)))),
            Kind::Int {
                field,
                min,
                max,
                unit,
                derived,
            } => Kind::Int {
                field: Box::new(move |q: &mut Q| field(outer(q))),
                min,
                max,
                unit,
                derived,
            },
            Kind::Choice(f) => Kind::Choice(Box::new(move |q: &mut Q| f(outer(q)))),
        };
        Tunable {
            name: self.name,
            description: self.description,
            kind,
        }
    }

    /// The row's value in `p`, as text.
    pub fn show(&self, p: &mut P) -> String {
        match &self.kind {
            Kind::Flag(f) => u8::from(*f(p)).to_string(),
            Kind::Int { field, derived, .. } => match field(p).get() {
                Some(v) => v.to_string(),
                None => derived.to_string(),
            },
            Kind::Choice(f) => f(p).name().to_string(),
        }
    }

    /// Parse `value` into `p`; the error names the tunable and what it accepts.
    pub fn parse(&self, p: &mut P, value: &str) -> Result<(), String> {
        let name = self.name;
        let v = value.trim();
        match &self.kind {
            Kind::Flag(f) => {
                *f(p) = match v.to_ascii_lowercase().as_str() {
                    "1" | "true" | "yes" | "on" => true,
                    "0" | "false" | "no" | "off" => false,
                    _ => {
                        return Err(format!(
                            "{name}: expected a boolean (0/1/true/false), got '{value}'"
                        ))
                    }
                }
            }
            Kind::Int {
                field,
                min,
                max,
                unit,
                ..
            } => {
                let parsed = v.replace('_', "").parse::<i64>().ok();
                match parsed {
                    Some(x) if (*min..=*max).contains(&x) => field(p).set(x),
                    _ => {
                        return Err(format!(
                            "{name}: expected {}, got '{value}'",
                            describe_range(*min, *max, unit)
                        ))
                    }
                }
            }
            Kind::Choice(f) => {
                let cell = f(p);
                let names = cell.names();
                match names.iter().position(|n| *n == v) {
                    Some(i) => cell.select(i),
                    None => {
                        return Err(format!(
                            "{name}: expected one of {}, got '{value}'",
                            names.join(", ")
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

/// "an integer in 1..=1000", "a non-negative integer (ns)", "an integer >= 100".
fn describe_range(min: i64, max: i64, unit: &str) -> String {
    let unit = unit.trim();
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" ({unit})")
    };
    if max >= MAX && min < 0 {
        format!("an integer{unit}")
    } else if max >= MAX && min == 0 {
        format!("a non-negative integer{unit}")
    } else if max >= MAX {
        format!("an integer >= {min}{unit}")
    } else {
        format!("an integer in {min}..={max}{unit}")
    }
}

/// The listing of a table: every row with its default (read from `P::default()`).
pub fn listing<P: Default + 'static>(table: &[Tunable<P>]) -> Vec<ParamInfo> {
    let mut defaults = P::default();
    table
        .iter()
        .map(|row| ParamInfo {
            name: row.name,
            default: row.show(&mut defaults),
            description: row.description,
        })
        .collect()
}

/// Set tunable `name` of `policy` to `value` through its table.
pub fn set<P: 'static>(
    table: &[Tunable<P>],
    p: &mut P,
    policy: &str,
    name: &str,
    value: &str,
) -> Result<(), String> {
    match table.iter().find(|row| row.name == name) {
        Some(row) => row.parse(p, value),
        None => Err(unknown(policy, name, table.iter().map(|r| r.name))),
    }
}

/// The message for a name no row has, listing the ones that exist.
pub fn unknown<'a>(policy: &str, name: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.collect();
    if known.is_empty() {
        format!("unknown parameter '{name}' ({policy} has no tunables)")
    } else {
        format!(
            "unknown parameter '{name}' ({policy} has: {})",
            known.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct P {
        on: bool,
        n: u32,
        opt: Option<u64>,
        q: QKind,
    }

    struct QKind(schedlab_rtq::Kind);
    impl Default for QKind {
        fn default() -> Self {
            QKind(schedlab_rtq::Kind::BitmapLists)
        }
    }

    fn table() -> Vec<Tunable<P>> {
        vec![
            Tunable::flag("on", "a flag", |p| &mut p.on),
            Tunable::int("n", "a count", 1, 10, |p| &mut p.n),
            Tunable::ns("opt", "a derived time", 0, |p: &mut P| &mut p.opt).derived("ncpus"),
            Tunable::choice("q", "a back end", |p| &mut p.q.0),
        ]
    }

    #[test]
    fn one_table_lists_defaults_and_parses_values() {
        let t = table();
        let l = listing(&t);
        let shown: Vec<(&str, &str)> = l.iter().map(|p| (p.name, p.default.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("on", "0"),
                ("n", "0"),
                ("opt", "ncpus"),
                ("q", "bitmap-lists")
            ]
        );
        let mut p = P::default();
        set(&t, &mut p, "x", "on", "yes").unwrap();
        set(&t, &mut p, "x", "n", "10").unwrap();
        set(&t, &mut p, "x", "opt", "1_000").unwrap();
        set(&t, &mut p, "x", "q", "tree").unwrap();
        assert!(p.on);
        assert_eq!((p.n, p.opt), (10, Some(1000)));
        assert_eq!(p.q.0, schedlab_rtq::Kind::Tree);
    }

    #[test]
    fn bad_values_and_names_are_explained() {
        let t = table();
        let mut p = P::default();
        let e = |name: &str, v: &str, p: &mut P| set(&t, p, "pol", name, v).unwrap_err();
        assert_eq!(
            e("on", "maybe", &mut p),
            "on: expected a boolean (0/1/true/false), got 'maybe'"
        );
        assert_eq!(
            e("n", "11", &mut p),
            "n: expected an integer in 1..=10, got '11'"
        );
        assert_eq!(
            e("opt", "-1", &mut p),
            "opt: expected a non-negative integer (ns), got '-1'"
        );
        assert!(e("q", "heap", &mut p).starts_with("q: expected one of single-list"));
        assert_eq!(
            e("zz", "1", &mut p),
            "unknown parameter 'zz' (pol has: on, n, opt, q)"
        );
    }
}

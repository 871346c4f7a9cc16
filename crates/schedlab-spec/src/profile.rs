//! Machine profiles: named, documented sets of machine settings and costs that a spec
//! starts from (`schedlab.machine.profile`), its own machine keys overriding them.
//!
//! A profile is a JSON object `{"name", "about", "machine", "provenance"}`: `machine` holds
//! any machine keys but `profile` (the same grammar and checks as a spec's machine, by the
//! same parser), and `provenance` says where each value comes from — measured, read from a
//! source, or fitted to a published figure and which — and is carried, not interpreted.
//!
//! The built-in profiles live as JSON files under `profiles/`, compiled in. A spec may also
//! carry a profile inline (the object itself): that is how a profile measured on the
//! machine that runs the spec (the front end's `host`) travels with the spec, so a rerun of
//! the saved spec pays exactly the costs measured then.

/// A built-in profile (of a machine, or of a device: `crate::device`): its name and its
/// JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub text: &'static str,
}

/// The profile called `name` in `table`.
pub fn find(table: &'static [Builtin], name: &str) -> Option<&'static Builtin> {
    table.iter().find(|b| b.name == name)
}

/// The names of `table`'s profiles.
pub fn names_in(table: &'static [Builtin]) -> Vec<&'static str> {
    table.iter().map(|b| b.name).collect()
}

/// Every built-in profile, by name.
pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "seed000-tx4937",
        text: include_str!("../profiles/seed000-tx4937.json"),
    },
    Builtin {
        name: "seed003-omap4430",
        text: include_str!("../profiles/seed003-omap4430.json"),
    },
];

/// The name the front end resolves to a profile measured on the machine it runs on; the
/// core alone cannot measure, so it only explains.
pub const HOST: &str = "host";

/// The built-in profile called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    find(BUILTIN, name)
}

/// The built-in profiles' names.
pub fn names() -> Vec<&'static str> {
    names_in(BUILTIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in profile parses as a machine under its own name.
    #[test]
    fn every_builtin_profile_parses() {
        for b in BUILTIN {
            let text = format!(
                r#"{{"tasks": {{"t": {{"run": 1000}}}}, "global": {{"duration": 1}},
                   "schedlab": {{"machine": {{"profile": "{}"}}}}}}"#,
                b.name
            );
            let spec = crate::parse_spec(&text).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert_eq!(spec.machine.profile.as_deref(), Some(b.name));
            let v: serde_json::Value = serde_json::from_str(b.text).unwrap();
            assert_eq!(v["name"], b.name, "a built-in profile names itself");
        }
    }
}

//! `machine.profile`: a built-in profile's name, or a profile object carried inline
//! (`crate::profile`). Its machine is applied by the machine's own parser before the
//! spec's machine keys, which override it.

use super::ext::{machine_keys, MachineIr};
use super::get::{self, Obj};
use crate::json::{self, Json};
use crate::profile::{self, HOST};
use crate::SpecError;

const PROFILE_KEYS: &[&str] = &["name", "about", "machine", "provenance"];

/// Apply the profile at `path` to `ir`; its name.
pub(crate) fn apply(v: &Json, path: &str, ir: &mut MachineIr) -> Result<String, SpecError> {
    match v {
        Json::Str(name) => apply_builtin(name, path, ir),
        _ => apply_object(v, path, ir),
    }
}

fn apply_builtin(name: &str, path: &str, ir: &mut MachineIr) -> Result<String, SpecError> {
    let Some(b) = profile::builtin(name) else {
        return Err(unknown(name, path));
    };
    // A built-in profile's own paths start from its name, so a fault in one is located.
    let v = json::parse(b.text)?;
    apply_object(&v, &format!("{path}<{name}>"), ir)
}

fn unknown(name: &str, path: &str) -> SpecError {
    let names: Vec<String> = profile::names().iter().map(|n| format!("{n:?}")).collect();
    let known = names.join(", ");
    let msg = if name == HOST {
        format!(
            "the \"host\" profile is measured on the machine that runs the spec: the schedlab \
             command line and Python API replace it with the measured profile before the \
             simulator reads the spec; given to the simulator directly, use a built-in \
             profile ({known}) or a profile object"
        )
    } else {
        format!("unknown machine profile {name:?}; the built-in profiles are {known}, and \"host\" is measured by the schedlab front end")
    };
    SpecError::new(path, msg)
}

fn apply_object(v: &Json, path: &str, ir: &mut MachineIr) -> Result<String, SpecError> {
    let o = Obj::new(
        v,
        path,
        "a machine profile: a built-in profile's name or {name, about, machine, provenance}",
    )?;
    o.no_repeats(|_| false)?;
    let mut name = None;
    let mut machine = None;
    for (k, kv, kp) in o.iter() {
        match k {
            "name" => name = Some(get::name(kv, &kp, "the profile's name")?.to_string()),
            "about" => {
                get::string(kv, &kp, "a one-line description of the profile")?;
            }
            "machine" => machine = Some((kv, kp)),
            "provenance" => {}
            _ => return Err(get::unknown_key(&kp, k, "a machine profile", PROFILE_KEYS)),
        }
    }
    let name = name.ok_or_else(|| SpecError::new(path, "a machine profile needs a \"name\""))?;
    let (mv, mp) =
        machine.ok_or_else(|| SpecError::new(path, "a machine profile needs a \"machine\""))?;
    let mo = Obj::new(mv, &mp, "the profile's machine")?;
    mo.no_repeats(|_| false)?;
    machine_keys(&mo, ir, false)?;
    Ok(name)
}

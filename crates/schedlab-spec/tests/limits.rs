//! The limits docs/spec.md lists ("Limits"), each with the exact message it produces: every
//! case here is refused with that message, and the message is written in docs/spec.md as
//! it reads (so neither can change without the other).

fn message(text: &str) -> String {
    match schedlab_spec::parse_spec(text) {
        Ok(_) => panic!("accepted: {}", &text[..text.len().min(200)]),
        Err(e) => e.to_string(),
    }
}

fn task(body: &str) -> String {
    format!(r#"{{"tasks": {{"t": {body}}}}}"#)
}

fn with_ext(ext: &str) -> String {
    format!(r#"{{"tasks": {{"t": {{"loop": 1, "run": 1}}}}, "schedlab": {ext}}}"#)
}

/// (case, spec, message) for every documented limit; a message starting with "…" is
/// the end of one whose path is too long to show.
fn cases() -> Vec<(&'static str, String, &'static str)> {
    let taskgroups: Vec<String> = (0..33)
        .map(|i| format!(r#""t{i}": {{"loop": 1, "run": 1, "taskgroup": "/g{i}"}}"#))
        .collect();
    let templates: Vec<String> = (0..1_000_001).map(|i| format!(r#""{i}":0"#)).collect();
    vec![
        (
            "task templates",
            format!(r#"{{"tasks": {{{}}}}}"#, templates.join(",")),
            "$.tasks: 1000001 task templates is more than schedlab accepts (1000000)",
        ),
        (
            "JSON nesting",
            "[".repeat(66),
            "$: invalid JSON at line 1, column 66: nesting deeper than 64 levels; a workload spec needs about 6",
        ),
        (
            "instances of one task",
            task(r#"{"instance": 1000001, "run": 1}"#),
            "$.tasks.t.instance: expected an instance count in 0..=1000000, found 1000001",
        ),
        (
            "instances in all",
            r#"{"tasks": {"t": {"instance": 600000, "loop": 1, "run": 1},
                          "u": {"instance": 600000, "loop": 1, "run": 1}}}"#
                .to_string(),
            "$.tasks.u.instance: the tasks so far add up to 1200000 instances, more than schedlab accepts (1000000)",
        ),
        (
            "loop count",
            task(r#"{"loop": 2147483648, "run": 1}"#),
            "$.tasks.t.loop: expected a loop count of -1 (forever) or 1..=2147483647, found 2147483648",
        ),
        (
            "time in microseconds",
            task(r#"{"loop": 1, "run": 18446744073709552}"#),
            "$.tasks.t.run: a run time of 18446744073709552 µs does not fit in 64-bit nanoseconds (at most 18446744073709551 µs)",
        ),
        (
            "duration",
            r#"{"global": {"duration": 18446744074}, "tasks": {"t": {"run": 1}}}"#.to_string(),
            "$.global.duration: a duration of 18446744074 s does not fit in 64-bit nanoseconds",
        ),
        (
            "CPUs",
            with_ext(r#"{"machine": {"cpus": 257}}"#),
            "$.schedlab.machine.cpus: expected a CPU count in 1..=256, found 257",
        ),
        (
            "costs",
            with_ext(r#"{"machine": {"context_switch_ns": 1000000001}}"#),
            "$.schedlab.machine.context_switch_ns: expected a context-switch cost in ns in 0..=1000000000, found 1000000001",
        ),
        (
            "channel capacity",
            with_ext(r#"{"pipes": {"p": {"capacity": 1073741825}}}"#),
            "$.schedlab.pipes.p.capacity: expected a buffer capacity in bytes in 1..=1073741824, found 1073741825",
        ),
        (
            "taskgroups",
            format!(r#"{{"tasks": {{{}}}}}"#, taskgroups.join(",")),
            "$.tasks.t32.taskgroup: taskgroup \"/g32\" is distinct taskgroup number 33; rt-app accepts at most 32 (\"# taskgroups exceeds max # taskgroups\")",
        ),
        (
            "cgroup name",
            with_ext(&format!(r#"{{"cgroups": {{"/{}": {{}}}}}}"#, "a".repeat(256))),
            "…: a cgroup name of 256 bytes (starting \"aaaaaaaaaaaaaaaaaaaa\") is longer than the kernel's 255 (NAME_MAX; mkdir fails with ENAMETOOLONG)",
        ),
        (
            "cgroup path",
            with_ext(&format!(r#"{{"cgroups": {{"{}": {{}}}}}}"#, "/abcdefg".repeat(512))),
            "…: a cgroup path of 4096 bytes is longer than 4095 (the kernel's PATH_MAX less its final NUL: no path to such a group can be written)",
        ),
    ]
}

#[test]
fn every_limit_gives_its_documented_message() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/spec.md"))
        .expect("docs/spec.md");
    for (case, spec, expected) in cases() {
        let got = message(&spec);
        // "…" stands for a path too long to show in the documentation.
        match expected.strip_prefix('…') {
            Some(tail) => assert!(got.ends_with(tail), "{case}: {got}"),
            None => assert_eq!(got, expected, "{case}"),
        }
        assert!(
            doc.contains(expected),
            "{case}: docs/spec.md does not show {expected:?}"
        );
    }
}

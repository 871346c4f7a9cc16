//! Validation stays linear in the size of the spec, checked by counting its steps
//! (`schedlab_spec::work`), never by timing it: for each kind of entity a spec can hold
//! many of (tasks, phases, channels, devices, cgroups and their nesting, resources), the
//! steps taken for
//! n, 2n and 4n of them lie on one straight line, and each entity takes at least one step
//! (the lookups go through the name index rather than a scan that the count would miss).
//! A scan of the entities before each one made validation quadratic in the number of
//! channels and cgroups (40 000 sockets: seconds; 80 000: half a minute).
//! `make bench` measures the wall time of the same shapes (`validate_scale`).

use schedlab_spec::work::counted;

/// The steps validating `text` takes; the spec must be valid.
fn steps(text: &str) -> u64 {
    let (r, n) = counted(|| schedlab_spec::parse_spec(text));
    if let Err(e) = r {
        panic!("the spec is valid: {e}");
    }
    n
}

/// A spec of `tasks` (members of the tasks object) and `schedlab` (members of the
/// schedlab object).
fn spec(tasks: &[String], schedlab: &[String]) -> String {
    format!(
        "{{\"global\": {{\"duration\": 1}}, \"tasks\": {{{}}}, \"schedlab\": {{{}}}}}",
        tasks.join(","),
        schedlab.join(",")
    )
}

/// Assert that the steps for `n`, 2`n` and 4`n` entities of `shape` grow by the same
/// amount per entity (a straight line) and by at least one step per entity.
fn linear(what: &str, shape: impl Fn(usize) -> String) {
    let n = 250;
    let [a, b, c] = [n, 2 * n, 4 * n].map(|k| steps(&shape(k)));
    let per_entity = (b - a) as f64 / n as f64;
    assert_eq!(
        c - b,
        2 * (b - a),
        "{what}: steps {a}, {b}, {c} for {n}, {}, {} entities are not on a line",
        2 * n,
        4 * n
    );
    assert!(
        per_entity >= 1.0,
        "{what}: {per_entity} steps per entity; every entity is looked up by name"
    );
}

#[test]
fn tasks_each_with_their_own_resources() {
    linear("tasks", |n| {
        let tasks: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    "\"t{i}\": {{\"lock\": \"m{i}\", \"wait\": {{\"ref\": \"c{i}\", \"mutex\": \"m{i}\"}}, \
                     \"unlock\": \"m{i}\", \"timer\": {{\"ref\": \"unique\", \"period\": 1000}}, \
                     \"schedlab:mark\": \"x{i}\", \"resume\": \"t{i}\", \"suspend\": \"\"}}"
                )
            })
            .collect();
        spec(&tasks, &[])
    });
}

#[test]
fn channels() {
    linear("channels", |n| {
        let tasks: Vec<String> = (0..n)
            .flat_map(|i| {
                [
                    format!(
                        "\"w{i}\": {{\"schedlab:write\": {{\"chan\": \"c{i}\", \"bytes\": 8}}}}"
                    ),
                    format!(
                        "\"r{i}\": {{\"schedlab:read\": {{\"chan\": \"c{i}\", \"bytes\": 8}}}}"
                    ),
                ]
            })
            .collect();
        let (pipes, sockets): (Vec<usize>, Vec<usize>) = (0..n).partition(|i| i % 2 == 0);
        let decl = |v: Vec<usize>| {
            v.iter()
                .map(|i| format!("\"c{i}\": {{}}"))
                .collect::<Vec<_>>()
        };
        spec(
            &tasks,
            &[
                format!("\"pipes\": {{{}}}", decl(pipes).join(",")),
                format!("\"sockets\": {{{}}}", decl(sockets).join(",")),
            ],
        )
    });
}

#[test]
fn devices() {
    linear("devices", |n| {
        let tasks: Vec<String> = (0..n)
            .map(|i| {
                format!("\"t{i}\": {{\"loop\": 1, \"schedlab:io\": {{\"dev\": \"d{i}\", \"op\": \"read\", \"bytes\": 4096}}}}")
            })
            .collect();
        let devices: Vec<String> = (0..n)
            .map(|i| format!("\"d{i}\": {{\"model\": \"null_blk\"}}"))
            .collect();
        spec(&tasks, &[format!("\"devices\": {{{}}}", devices.join(","))])
    });
}

#[test]
fn cgroups_side_by_side() {
    linear("cgroups", |n| {
        let groups: Vec<String> = (0..n)
            .map(|i| format!("\"/g{}/h{i}\": {{\"cpu.shares\": 100}}", i % 7))
            .collect();
        let tasks = ["\"t\": {\"taskgroup\": \"/g1\", \"run\": 1}".to_string()];
        spec(&tasks, &[format!("\"cgroups\": {{{}}}", groups.join(","))])
    });
}

#[test]
fn cgroups_nested() {
    // A chain of n groups (/a/a/…/a), as `mkdir -p` of its deepest group creates it, with
    // a task in the deepest one and the chain's top limited to two CPUs.
    linear("nested cgroups", |n| {
        let leaf = "/a".repeat(n);
        let groups = [
            "\"/a\": {\"cpuset.cpus\": \"0-1\"}".to_string(),
            format!("\"{leaf}\": {{\"cpu.shares\": 100}}"),
        ];
        let tasks = [format!(
            "\"t\": {{\"taskgroup\": \"{leaf}\", \"cpus\": [1], \"run\": 1}}"
        )];
        spec(&tasks, &[format!("\"cgroups\": {{{}}}", groups.join(","))])
    });
}

#[test]
fn phases_of_one_name() {
    // Repeated phase keys are renamed as rt-app's workgen renames them.
    linear("phases", |n| {
        let phases: Vec<String> = (0..n).map(|_| "\"p\": {\"run\": 1}".to_string()).collect();
        spec(
            &[format!("\"t\": {{\"phases\": {{{}}}}}", phases.join(","))],
            &[],
        )
    });
}

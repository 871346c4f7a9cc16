//! The `buildworld`, `httpd` and `threads` generators' specs through the engine, under
//! `linux-cfs` and `freebsd-4bsd`: what they do is what their options say (CPU time equal
//! to the closed form, at most `jobs` jobs at once, every request answered, every thread's
//! loops run).

mod common;

use common::{run_text, task_in};
use serde_json::Value;

const POLICIES: [&str; 2] = ["linux-cfs", "freebsd-4bsd"];

fn opts(o: &[(&str, &str)]) -> Vec<(String, String)> {
    o.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn gen(name: &str, o: &[(&str, &str)]) -> String {
    let v = schedlab_spec::gen::generate(name, &opts(o)).unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_string(&v).unwrap()
}

fn run(text: &str, policy: &str) -> Value {
    run_text(text, policy, &[], None).unwrap_or_else(|e| panic!("{policy}: {e}"))
}

fn tasks_named<'a>(r: &'a Value, prefix: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(move |t| t["name"].as_str().unwrap().starts_with(prefix))
}

fn total_cpu_ns(r: &Value) -> u64 {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu_ns"].as_u64().unwrap())
        .sum()
}

const SMALL_BUILD: [(&str, &str); 9] = [
    ("dirs", "3"),
    ("lib_dirs", "1"),
    ("files", "4"),
    ("cpu_us", "20000"),
    ("link_us", "1000"),
    ("install_us", "3000"),
    ("sys_pct", "25"),
    ("io_pct", "10"),
    ("seed", "7"),
];

/// The closed form of docs/spec.md for `SMALL_BUILD`, worked by hand:
/// n_c = 12, n_l = 3, n_i = 1, J = 16, W = 2;
/// C = 12 × (20000 + 1000) + 1 × 3000 = 255000 µs;
/// q = floor(255000 × 2500 / (10000 × 16 × 2)) = floor(1992.1875) = 1992 µs;
/// SYS = 16 × 2 × 1992 = 63744 µs; USER = C − SYS = 191256 µs.
#[test]
fn buildworld_cpu_time_is_its_closed_form() {
    let t = schedlab_spec::gen::buildworld_totals(&opts(&SMALL_BUILD)).unwrap();
    assert_eq!(
        (t.jobs, t.nominal_us, t.syscall_us, t.sys_us, t.user_us),
        (16, 255_000, 1992, 63_744, 191_256)
    );
    let text = gen("buildworld", &SMALL_BUILD);
    for policy in POLICIES {
        let r = run(&text, policy);
        assert_eq!(total_cpu_ns(&r), 255_000_000, "{policy}");
        // make's own work costs nothing; every job is its user time plus 2 × q.
        assert_eq!(task_in(&r, "make")["cpu_ns"], 0, "{policy}");
        let jobs: Vec<&Value> = r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"] != "make")
            .collect();
        assert_eq!(jobs.len(), 16, "{policy}");
        assert_eq!(r["summary"]["blocked_at_end"], 0, "{policy}");
        assert_eq!(r["summary"]["headline"]["name"], "buildworld_time");
    }
}

/// Jobs at once never exceed the slots: with one slot the build is serial, so its
/// makespan is every job's CPU time plus every job's I/O waits.
#[test]
fn buildworld_runs_at_most_jobs_at_once() {
    let mut o = SMALL_BUILD.to_vec();
    o.push(("jobs", "1"));
    o.push(("cpus", "4"));
    let serial = run(&gen("buildworld", &o), "linux-cfs");
    let busy_cpus = serial["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["busy_ns"].as_u64().unwrap())
        .sum::<u64>();
    // The jobs' I/O waits (make's own blocked time is its wait for them).
    let sleep: u64 = serial["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] != "make")
        .map(|t| t["sleep_ns"].as_u64().unwrap())
        .sum();
    assert_eq!(busy_cpus, 255_000_000);
    assert_eq!(
        serial["summary"]["makespan_ns"].as_u64().unwrap(),
        busy_cpus + sleep,
        "one job at a time: nothing overlaps"
    );
    // Two slots on four CPUs: faster, but at most two jobs at once, so never faster
    // than half the serial time (a CPU is always free: only the slots hold jobs back).
    let mut o2 = SMALL_BUILD.to_vec();
    o2.push(("jobs", "2"));
    o2.push(("cpus", "4"));
    let par = run(&gen("buildworld", &o2), "linux-cfs");
    let (t1, t2) = (
        serial["summary"]["makespan_ns"].as_u64().unwrap(),
        par["summary"]["makespan_ns"].as_u64().unwrap(),
    );
    assert!(t2 < t1 && 2 * t2 >= t1, "-j2 {t2} ns, -j1 {t1} ns");
}

#[test]
fn buildworld_is_deterministic_and_seeded() {
    let a = gen("buildworld", &SMALL_BUILD);
    assert_eq!(a, gen("buildworld", &SMALL_BUILD));
    let mut o = SMALL_BUILD.to_vec();
    o[8] = ("seed", "8");
    assert_ne!(a, gen("buildworld", &o));
    let r1 = run(&a, "freebsd-4bsd");
    let r2 = run(&a, "freebsd-4bsd");
    assert_eq!(r1["summary"], r2["summary"]);
    assert_eq!(r1["tasks"], r2["tasks"]);
}

/// Requests per second and latency as ab reports them: every request answered, the rate
/// is `requests` over the time ab ran, each latency measured from its `send` mark.
#[test]
fn httpd_answers_every_request() {
    let text = gen(
        "httpd",
        &[
            ("children", "2"),
            ("threads", "3"),
            ("concurrency", "4"),
            ("requests", "50"),
            ("user_us", "300"),
            ("kernel_us", "40"),
            ("client_us", "10"),
        ],
    );
    for policy in POLICIES {
        let r = run(&text, policy);
        let h = &r["summary"]["headline"];
        assert_eq!(h["name"], "requests_per_s", "{policy}");
        assert_eq!(
            h["stats_ns"]["count"], 50,
            "{policy}: one latency per request"
        );
        let served: u64 = tasks_named(&r, "worker-")
            .map(|t| t["cpu_ns"].as_u64().unwrap())
            .sum();
        // Each request: 300 µs of user time and 20 + 20 µs in the two socket calls.
        assert_eq!(served, 50 * 340_000, "{policy}");
        let ab: u64 = tasks_named(&r, "ab")
            .map(|t| t["cpu_ns"].as_u64().unwrap())
            .sum();
        assert_eq!(ab, 50 * (10_000 + 20_000 + 20_000), "{policy}");
        // Every server thread exits when ab is done: the rate is over ab's run.
        assert_eq!(r["summary"]["blocked_at_end"], 0, "{policy}");
        let end = r["summary"]["makespan_ns"].as_f64().unwrap();
        let rate = h["value"].as_f64().unwrap();
        assert!(
            (rate * end / 1e9 - 50.0).abs() < 1e-6,
            "{policy}: {rate}/s over {end} ns"
        );
    }
}

/// One connection at a time: each request's latency is ab's own user time, its send,
/// the worker's read, user time and response (the accept and hand-off cost nothing), and
/// ab's read was paid before it blocked: 10 + 20 + 300 + 20 = 350 µs, back to back.
#[test]
fn httpd_latency_of_a_lone_connection_is_its_cpu_path() {
    let text = gen(
        "httpd",
        &[
            ("children", "1"),
            ("threads", "2"),
            ("concurrency", "1"),
            ("requests", "6"),
            ("user_us", "300"),
            ("kernel_us", "40"),
            ("client_us", "10"),
        ],
    );
    for policy in POLICIES {
        let r = run(&text, policy);
        let stats = &r["summary"]["headline"]["stats_ns"];
        assert_eq!(
            (&stats["count"], &stats["min"], &stats["max"]),
            (&6.into(), &350_000.into(), &350_000.into()),
            "{policy}: {stats}"
        );
        assert_eq!(r["summary"]["makespan_ns"], 6 * 350_000, "{policy}");
        // The two workers share the six requests: three each, in turn.
        assert_eq!(tasks_named(&r, "worker-0").count(), 2);
        for w in tasks_named(&r, "worker-0") {
            assert_eq!(w["cpu_ns"], 3 * 340_000, "{policy}: {w}");
        }
    }
}

/// Many threads: their CPU time is threads × loops × run_us; in sleep mode every loop is
/// a block and a wake-up, in yield mode every thread is always runnable.
#[test]
fn threads_run_their_loops() {
    for mode in ["sleep", "yield"] {
        let text = gen(
            "threads",
            &[
                ("threads", "12"),
                ("mode", mode),
                ("run_us", "30"),
                ("sleep_us", "500"),
                ("loops", "20"),
            ],
        );
        for policy in POLICIES {
            let r = run(&text, policy);
            assert_eq!(total_cpu_ns(&r), 12 * 20 * 30_000, "{mode} {policy}");
            assert_eq!(tasks_named(&r, "t").count(), 12);
            let makespan = r["summary"]["makespan_ns"].as_u64().unwrap();
            let voluntary: u64 = tasks_named(&r, "t")
                .map(|t| t["switches_voluntary"].as_u64().unwrap())
                .sum();
            if mode == "sleep" {
                // Every loop blocks once.
                assert_eq!(voluntary, 12 * 20, "{policy}");
            } else {
                // Twelve threads always runnable on two CPUs: neither CPU ever idles.
                assert_eq!(makespan, 12 * 20 * 30_000 / 2, "{policy}");
            }
            let h = r["summary"]["headline"]["value"].as_f64().unwrap();
            assert_eq!(h, makespan as f64 / 1e9, "{policy}: starts at 0");
        }
    }
}

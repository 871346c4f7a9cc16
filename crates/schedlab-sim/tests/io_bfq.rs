//! BFQ (Linux 6.1, block/bfq-iosched.c and bfq-wf2q.c) through the engine: readers on a
//! null_blk device (100 µs per request, whatever its size), each reading 64 KiB (128
//! sectors) at a time from its own region, so the trace's `block_rq_issue` lines tell
//! whose request the device started and when.

use schedlab_sim::{SampleOutput, SimConfig};

const MS: u64 = 1_000_000;
/// Sectors per request (64 KiB).
const RQ_SECTORS: u64 = 128;

/// Run `text` under linux-cfs with a trace; the JSON result and the trace's text.
fn run(text: &str) -> (serde_json::Value, String) {
    let dir = std::env::temp_dir().join(format!(
        "schedlab-bfq-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.trace");
    let cfg = SimConfig {
        scheduler: Some("linux-cfs".into()),
        samples: SampleOutput::Memory,
        check: true,
        trace: Some(path.clone()),
        ..SimConfig::default()
    };
    let r = schedlab_sim::simulate_text(text, &cfg)
        .unwrap_or_else(|e| panic!("{e}"))
        .json();
    let trace = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (r, trace)
}

/// A reader task: `loops` reads of 64 KiB at byte offset `region` (its own sectors),
/// followed by `extra` keys (ioprio, a sleep after each read, delay).
fn reader(name: &str, loops: i64, region: u64, extra: &str) -> String {
    format!(
        r#""{name}": {{"loop": {loops},
            "schedlab:io": {{"dev": "nullb0", "op": "read", "bytes": 65536, "offset": {region}}}
            {extra}}}"#
    )
}

/// A spec running `tasks` for `duration` s (-1: until they exit) on a rotational bfq
/// null_blk device with `params`. On a rotational device idling boosts the throughput of
/// a sequential, I/O-bound queue with a short think time
/// (`idling_boosts_thr_without_issues`), so bfq idles for such a queue and injects no
/// other queue's I/O meanwhile: its slots are its own.
fn spec(duration: i64, tasks: &[String], params: &str) -> String {
    spec_on(true, duration, tasks, params)
}

/// [`spec`] on a device whose `rotational` flag is `rotational`.
fn spec_on(rotational: bool, duration: i64, tasks: &[String], params: &str) -> String {
    format!(
        r#"{{
        "global": {{"duration": {duration}}},
        "tasks": {{ {} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 100000,
                                     "queue_depth": 64, "rotational": {rotational}, "scheduler": "bfq",
                                     "params": {{ {params} }}}}}}
        }}
    }}"#,
        tasks.join(",")
    )
}

const A: u64 = 0;
const B: u64 = 1 << 20;
const C: u64 = 2 << 20;

/// (time ns, first sector) of every `block_rq_issue` / `block_rq_complete` line.
fn events(trace: &str, what: &str) -> Vec<(u64, u64)> {
    let re = regex::Regex::new(&format!(
        r"(\d+)\.(\d{{9}}): {what}: 251,0 R (?:\d+ )?\(\) (\d+) \+ {RQ_SECTORS} "
    ))
    .unwrap();
    re.captures_iter(trace)
        .map(|c| {
            let s: u64 = c[1].parse().unwrap();
            let ns: u64 = c[2].parse().unwrap();
            (s * 1_000_000_000 + ns, c[3].parse().unwrap())
        })
        .collect()
}

fn issues(trace: &str) -> Vec<(u64, u64)> {
    events(trace, "block_rq_issue")
}

/// Requests of the reader at byte offset `region` issued in [from, to) ns.
fn served(issues: &[(u64, u64)], region: u64, from: u64, to: u64) -> u64 {
    issues
        .iter()
        .filter(|&&(t, s)| s == region / 512 && t >= from && t < to)
        .count() as u64
}

fn first_issue(issues: &[(u64, u64)], region: u64) -> u64 {
    issues
        .iter()
        .find(|&&(_, s)| s == region / 512)
        .expect("the reader was served")
        .0
}

fn last_issue(issues: &[(u64, u64)], region: u64) -> u64 {
    issues
        .iter()
        .rev()
        .find(|&&(_, s)| s == region / 512)
        .expect("the reader was served")
        .0
}

#[test]
fn every_request_completes_exactly_once_in_every_class() {
    let tasks = [
        reader(
            "rt",
            300,
            A,
            r#", "schedlab:ioprio": {"class": "rt", "level": 4}"#,
        ),
        reader(
            "be",
            300,
            B,
            r#", "sleep": 500, "schedlab:ioprio": {"class": "be", "level": 2}"#,
        ),
        reader("idle", 300, C, r#", "schedlab:ioprio": {"class": "idle"}"#),
    ];
    let (r, trace) = run(&spec(-1, &tasks, ""));
    let dev = &r["devices"][0];
    assert_eq!(dev["scheduler"], "bfq");
    assert_eq!(dev["requests"], 900);
    let (issued, completed) = (issues(&trace), events(&trace, "block_rq_complete"));
    assert_eq!(issued.len(), 900);
    for region in [A, B, C] {
        assert_eq!(served(&issued, region, 0, u64::MAX), 300);
        assert_eq!(served(&completed, region, 0, u64::MAX), 300);
    }
    // RT before the others: the RT reader is done first. The best-effort reader thinks
    // 500 µs between reads, so it is not I/O-bound and idling for it does not boost the
    // throughput (idling_boosts_thr_without_issues): while it is idled for, the
    // idle-class reader's requests are injected (bfq_choose_bfqq_for_injection looks at
    // no class), and the idle-class reader finishes first.
    assert!(last_issue(&issued, A) < last_issue(&issued, C));
    assert!(last_issue(&issued, C) < last_issue(&issued, B));
}

#[test]
fn backlogged_readers_share_the_disk_as_their_ioprio_weights() {
    // bfq_ioprio_to_weight: (8 - 0) × 10 = 80 against (8 - 4) × 10 = 40. Each reader has
    // one request at a time, so each must be idled for to stay backlogged:
    // strict_guarantees idles for every sync queue (bfq_better_to_idle), and B-WF2Q+
    // then serves budgets in the ratio of the weights. Raising is off to compare plain
    // weights.
    let tasks = [
        reader(
            "hi",
            -1,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 0}"#,
        ),
        reader(
            "lo",
            -1,
            B,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
    ];
    let (_, trace) = run(&spec(
        1,
        &tasks,
        r#""low_latency": "0", "strict_guarantees": "1""#,
    ));
    let issued = issues(&trace);
    let (hi, lo) = (
        served(&issued, A, 0, 1000 * MS),
        served(&issued, B, 0, 1000 * MS),
    );
    let ratio = hi as f64 / lo as f64;
    assert!(hi + lo >= 9_900, "the disk stays busy: {hi} + {lo}");
    assert!((1.9..=2.1).contains(&ratio), "2:1 within 5 %: {hi} / {lo}");
}

#[test]
fn the_smallest_weight_keeps_its_share_by_idling_or_by_injection() {
    // Without strict guarantees bfq_asymmetric_scenario exempts the queue of the
    // smallest weight from the idling needed for service guarantees. On a rotational
    // device it is idled for all the same, because idling boosts a sequential reader's
    // throughput (idling_boosts_thr_without_issues): the weights hold, 2:1. On a
    // non-rotational device that queues it is not idled for, but neither is the other
    // reader's slot its own: each reader's requests are injected while the other's
    // queue, in service, waits for its next one, and with 64 tags both read at the
    // device's pace.
    let tasks = [
        reader(
            "hi",
            -1,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 0}"#,
        ),
        reader(
            "lo",
            -1,
            B,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
    ];
    let shares = |rotational: bool| {
        let (_, trace) = run(&spec_on(rotational, 1, &tasks, r#""low_latency": "0""#));
        let issued = issues(&trace);
        (
            served(&issued, A, 0, 1000 * MS),
            served(&issued, B, 0, 1000 * MS),
        )
    };
    let (hi, lo) = shares(true);
    let ratio = hi as f64 / lo as f64;
    assert!(hi + lo >= 9_900, "the disk stays busy: {hi} + {lo}");
    assert!((1.9..=2.1).contains(&ratio), "rotational: {hi} / {lo}");
    let (hi, lo) = shares(false);
    assert!(hi >= 9_900 && lo >= 9_800, "non-rotational: {hi} / {lo}");
}

#[test]
fn an_idle_class_reader_waits_for_the_best_effort_reader_to_stop() {
    // 8000 best-effort reads take 0.8 s of disk (the few idle-class reads overlap them:
    // the device takes several requests at once). Meanwhile the idle class is looked at
    // only once every BFQ_CL_IDLE_TIMEOUT (HZ/5 = 200 ms, bfq_lookup_next_entity), and
    // served one request (bfq_dispatch_rq_from_bfqq expires an idle-class queue after
    // each request while others are busy); afterwards it has the disk.
    let tasks = [
        reader(
            "be",
            8000,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
        reader("idle", -1, B, r#", "schedlab:ioprio": {"class": "idle"}"#),
    ];
    let (_, trace) = run(&spec(2, &tasks, ""));
    let issued = issues(&trace);
    let be_done = last_issue(&issued, A);
    assert!((799 * MS..801 * MS).contains(&be_done), "{be_done}");
    let during: Vec<u64> = issued
        .iter()
        .filter(|&&(t, s)| s == B / 512 && t <= be_done)
        .map(|&(t, _)| t)
        .collect();
    assert!((2..=4).contains(&during.len()), "{during:?}");
    assert!(
        during.windows(2).all(|w| w[1] - w[0] >= 200 * MS),
        "one look per 200 ms: {during:?}"
    );
    // The exit of the best-effort reader is not seen: its queue is idled for once more
    // (slice_idle, 8 ms) before the idle reader gets the disk for good.
    let after = served(&issued, B, be_done + 1, 2000 * MS);
    assert!(
        after >= (2000 * MS - be_done - 8 * MS) / 100_000 - 2,
        "{after}"
    );
}

/// A reader at level 0 thinking 2 ms (less than slice_idle) between reads beside a
/// backlogged reader at level 4; the issue times.
fn thinker_and_hog(params: &str) -> Vec<(u64, u64)> {
    let tasks = [
        reader(
            "thinker",
            -1,
            A,
            r#", "sleep": 2000, "schedlab:ioprio": {"class": "be", "level": 0}"#,
        ),
        reader(
            "hog",
            -1,
            B,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
    ];
    let (_, trace) = run(&spec(
        1,
        &tasks,
        &format!(r#""low_latency": "0", {params}"#),
    ));
    issues(&trace)
}

#[test]
fn the_hog_is_injected_while_a_thinking_reader_is_idled_for() {
    // The thinker (weight 80, more than the hog's 40: an asymmetric scenario) is idled
    // for after each read (bfq_arm_slice_timer, 8 ms) and keeps the slot, its next read
    // coming 2 ms later (a think time is 2 ms + 0.1 ms of I/O). It is not I/O-bound, so
    // idling does not boost its throughput and other queues' I/O may be injected while
    // it waits (bfq_select_queue). Its inject limit is 0 until its baseline total service
    // time is measured, and no measurement starts in the first 10 ms after its queue was
    // created (bfq_add_request: decrease_time_jif + 10 ms): its first read after that
    // finds the drive empty, gives the baseline, and the limit becomes 1
    // (bfq_update_inject_limit). From then on the hog's reads fill the think times, one
    // at a time, whatever the budget timeout.
    for params in [r#""slice_idle": "8""#, r#""timeout_sync": "50""#] {
        let issued = thinker_and_hog(params);
        let hog_first = first_issue(&issued, B);
        assert!(
            (10 * MS..10 * MS + 2_100_000).contains(&hog_first),
            "{params}: hog first at {hog_first}"
        );
        assert!(served(&issued, B, 0, 1000 * MS) >= 9_800, "{params}");
        // The thinker's own rate is its think time.
        let thinker = served(&issued, A, 0, 1000 * MS);
        assert!((470..=477).contains(&thinker), "{params}: {thinker}");
    }
    // Without idling the hog takes the disk from the start.
    let no_idling = thinker_and_hog(r#""slice_idle": "0""#);
    assert_eq!(first_issue(&no_idling, B), 0);
}

/// A reader at the default level backlogged from the start and one started at 500 ms;
/// the issue times.
fn old_and_new(low_latency: &str) -> Vec<(u64, u64)> {
    let tasks = [
        reader("old", -1, A, ""),
        reader("new", -1, B, r#", "delay": 500000"#),
    ];
    let (_, trace) = run(&spec(
        1,
        &tasks,
        &format!(r#""low_latency": "{low_latency}""#),
    ));
    issues(&trace)
}

#[test]
fn a_new_reader_is_weight_raised_until_it_got_max_service_from_wr() {
    // A new sync queue of default weight is interactive (bfq_bfqq_handle_idle_busy_switch):
    // its weight is raised × 30 (bfq_wr_coeff) until its raising time ends or it has
    // received max_service_from_wr = 120000 sectors (bfq_update_wr_data), here first:
    // 938 reads of 128 sectors, about 97 ms of disk.
    let issued = old_and_new("1");
    let start = 500 * MS;
    let (new, old) = (
        served(&issued, B, start, start + 50 * MS),
        served(&issued, A, start, start + 50 * MS),
    );
    assert!(new >= 20 * old, "raised: {new} vs {old}");
    let raised_reads = (120_000 / RQ_SECTORS + 1) as usize;
    let new_times: Vec<u64> = issued
        .iter()
        .filter(|&&(t, s)| s == B / 512 && t >= start)
        .map(|&(t, _)| t)
        .collect();
    let end = new_times[raised_reads];
    assert!((start + 90 * MS..start + 110 * MS).contains(&end), "{end}");
    // After that the two share the disk evenly again, slot by slot (within a slot's
    // worth of difference over 400 ms).
    let (new, old) = (
        served(&issued, B, end + 10 * MS, end + 410 * MS),
        served(&issued, A, end + 10 * MS, end + 410 * MS),
    );
    assert!(new + old >= 3_900, "{new} + {old}");
    assert!(new.abs_diff(old) <= 100, "{new} vs {old}");
    // Without low_latency the new reader gets no more than the old one from the start:
    // they take slots in turn (here 50 ms hold parts of two slots).
    let plain = old_and_new("0");
    let (new, old) = (
        served(&plain, B, start, start + 50 * MS),
        served(&plain, A, start, start + 50 * MS),
    );
    assert!(new <= old && new + old >= 490, "{new} vs {old}");
}

#[test]
fn bad_tunables_are_refused_before_the_run() {
    let tasks = [reader("r", 1, A, "")];
    for (params, want) in [
        (
            r#""slice_idle": "soon""#,
            "expected a non-negative integer, found 'soon'",
        ),
        (r#""quantum": "4""#, "unknown parameter 'quantum'"),
    ] {
        let e = schedlab_sim::simulate_text(&spec(-1, &tasks, params), &SimConfig::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("device nullb0 scheduler bfq") && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn a_mixed_load_completes_every_request_whatever_the_tunables() {
    // Readers and writers of every class, random offsets and sizes, think times and
    // priority changes (a later phase's nice and SCHED_IDLE change the derived ioprio: level, then class), on a device
    // taking one request at a time and on one taking many.
    let tasks = r#"
        "rt": {"instance": 2, "loop": 40, "schedlab:ioprio": {"class": "rt", "level": 1},
               "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": "random"},
               "sleep": 300},
        "be": {"instance": 4, "loop": 60,
               "phases": {"a": {"loop": 1, "schedlab:io": {"dev": "nullb0", "op": "write", "bytes": 8192}},
                          "b": {"loop": 1, "priority": 10, "run": 50,
                                "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 131072, "offset": "random"}},
                          "c": {"loop": 1, "policy": "SCHED_IDLE",
                                "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096}}}},
        "idle": {"instance": 2, "loop": 30, "schedlab:ioprio": {"class": "idle"},
                 "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 512}}
    "#;
    let expected = 2 * 40 + 4 * 60 * 3 + 2 * 30;
    for depth in [1, 32] {
        for params in [
            "",
            r#""slice_idle": "0", "low_latency": "0""#,
            r#""strict_guarantees": "1", "max_budget": "64""#,
            r#""timeout_sync": "1", "fifo_expire_sync": "1", "back_seek_penalty": "1""#,
        ] {
            let text = format!(
                r#"{{
                "tasks": {{ {tasks} }},
                "schedlab": {{
                    "machine": {{"cpus": 2, "hz": 1000}},
                    "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 50000,
                                             "queue_depth": {depth}, "scheduler": "bfq",
                                             "params": {{ {params} }}}}}}
                }}
            }}"#
            );
            let cfg = SimConfig {
                check: true,
                ..SimConfig::default()
            };
            let r = schedlab_sim::simulate_text(&text, &cfg)
                .unwrap_or_else(|e| panic!("{e}"))
                .json();
            let dev = &r["devices"][0];
            let bios = dev["requests"].as_u64().unwrap() + dev["merges"].as_u64().unwrap();
            assert_eq!(bios, expected, "depth {depth}, params {params}");
        }
    }
}

/// Consecutive issues of the same reader: (first sector, how many).
fn slots(issues: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(_, s) in issues {
        match out.last_mut() {
            Some(last) if last.0 == s => last.1 += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

#[test]
fn a_slot_lasts_its_budget_and_the_next_budget_grows_to_max_budget() {
    // Two equal readers, each idled for (strict_guarantees), so a slot ends when the next
    // request does not fit in the budget (BFQQE_BUDGET_EXHAUSTED). A new queue's budget
    // is 2/3 of the default maximum (bfq_init_bfqq: 2 × 16384 / 3 = 10922 sectors, 85
    // reads of 128); after an exhausted slot it is multiplied by 4 up to max_budget
    // (__bfq_bfqq_recalc_budget): 4096 sectors, 32 reads.
    let tasks = [
        reader(
            "a",
            -1,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
        reader(
            "b",
            -1,
            B,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
    ];
    let (_, trace) = run(&spec(
        1,
        &tasks,
        r#""low_latency": "0", "strict_guarantees": "1", "max_budget": "4096""#,
    ));
    let s = slots(&issues(&trace));
    assert_eq!(s[0].1, 85, "{:?}", &s[..6]);
    assert_eq!(s[1].1, 85, "{:?}", &s[..6]);
    let inner = &s[2..s.len() - 1];
    assert!(inner.len() > 200, "{}", inner.len());
    assert!(
        inner.iter().all(|&(_, n)| n == 32),
        "{:?}",
        inner
            .iter()
            .filter(|x| x.1 != 32)
            .take(10)
            .collect::<Vec<_>>()
    );
    assert!(inner.windows(2).all(|w| w[0].0 != w[1].0));
}

/// A reader of 4 KiB every 50 ms (a player) at the default level beside a backlogged
/// reader at level 0; the player's issue times in [4 s, 5 s).
fn player_beside_hog(low_latency: &str) -> Vec<u64> {
    let tasks = [
        reader(
            "hog",
            -1,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 0}"#,
        ),
        r#""player": {"loop": -1,
            "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 2097152},
            "sleep": 50000}"#
            .to_string(),
    ];
    let (_, trace) = run(&spec(
        5,
        &tasks,
        &format!(r#""low_latency": "{low_latency}""#),
    ));
    let re =
        regex::Regex::new(r"(\d+)\.(\d{9}): block_rq_issue: 251,0 R 4096 \(\) 4096 \+ 8 ").unwrap();
    re.captures_iter(&trace)
        .map(|c| c[1].parse::<u64>().unwrap() * 1_000_000_000 + c[2].parse::<u64>().unwrap())
        .filter(|&t| (4000 * MS..5000 * MS).contains(&t))
        .collect()
}

#[test]
fn a_soft_real_time_reader_stays_raised_after_the_interactive_raising_ends() {
    // The player reads 8 sectors per 50 ms (160 sectors/s, below bfq_wr_max_softrt_rate
    // = 7000) and each read comes after its queue was expired and more than slice_idle
    // + 4 jiffies later (bfq_bfqq_softrt_next_start): soft real-time. Its raising is
    // recharged at each read, so past the interactive raising (bfq_wr_duration: at
    // most 3.75 s here) it still preempts the hog at once: a read every 50 ms + 100 µs.
    let raised = player_beside_hog("1");
    assert!(raised.len() >= 19, "{}", raised.len());
    assert!(
        raised.windows(2).all(|w| w[1] - w[0] == 50_100_000),
        "{raised:?}"
    );
    // Unraised, it is served at once all the same, through injection: the hog completes
    // a read every 100 µs, so each of the player's reads (its think time long) comes
    // within 4 ms of one of the hog's completions, and after three the hog is its waker
    // (bfq_check_waker); while the hog is idled for, the head of its woken list — the
    // player — has its request injected (bfq_select_queue).
    let plain = player_beside_hog("0");
    assert!(plain.len() >= 19, "{}", plain.len());
    assert!(
        plain.windows(2).all(|w| w[1] - w[0] == 50_100_000),
        "{plain:?}"
    );
}

/// Tasks reading 4 KiB once each at their byte offsets, starting together in this
/// order, on a bfq null_blk device with one tag (10 µs per request).
fn one_tag(readers: &[(&str, u64)]) -> String {
    let tasks: Vec<String> = readers
        .iter()
        .map(|(name, offset)| {
            format!(
                r#""{name}": {{"loop": 1, "schedlab:io": {{"dev": "nullb0", "op": "read", "bytes": 4096, "offset": {offset}}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{
        "tasks": {{ {} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 10000,
                                     "queue_depth": 1, "scheduler": "bfq"}}}}
        }}
    }}"#,
        tasks.join(",")
    )
}

#[test]
fn a_bio_joins_a_request_of_its_own_queue_only() {
    // One tag, taken by `blocker`. `b`'s bio ends where `a`'s queued request starts and
    // `c`'s starts where it ends, but they are other processes' queues:
    // bfq_allow_bio_merge refuses `b`'s bio (`bfqq == RQ_BFQQ(rq)`), which becomes a
    // request of its own. `c`'s bio is refused too, but its new request is then offered
    // to the queued requests that end where it starts (bfq_insert_request →
    // blk_mq_sched_try_insert_merge → elv_attempt_insert_merge), which asks no elevator:
    // it joins `a`'s request (bfq_requests_merged drops it from `c`'s queue).
    let (r, _) = run(&one_tag(&[
        ("blocker", 1 << 30),
        ("a", 4096),
        ("b", 0),
        ("c", 8192),
    ]));
    assert_eq!(r["devices"][0]["merges"], 1);
    assert_eq!(r["devices"][0]["requests"], 3);
    // Under cfq the same (cfq_allow_merge); under deadline, which has no allow_merge,
    // both bios join `a`'s request (the one-hit cache, then the request hash): one
    // request of 24 sectors.
    let (r, _) = run(
        &one_tag(&[("blocker", 1 << 30), ("a", 4096), ("b", 0), ("c", 8192)])
            .replace(r#""scheduler": "bfq""#, r#""scheduler": "cfq""#),
    );
    assert_eq!(r["devices"][0]["merges"], 1);
    assert_eq!(r["devices"][0]["requests"], 3);
    let (r, trace) = run(
        &one_tag(&[("blocker", 1 << 30), ("a", 4096), ("b", 0), ("c", 8192)])
            .replace(r#""scheduler": "bfq""#, r#""scheduler": "deadline""#),
    );
    assert_eq!(r["devices"][0]["merges"], 2);
    assert!(
        trace.contains("block_rq_issue: 251,0 R 12288 () 0 + 24 ["),
        "{trace}"
    );
}

#[test]
fn max_budget_follows_the_estimated_peak_rate() {
    // Two equal readers, each idled for: a slot ends when the budget is used up. The
    // first budgets are 2/3 of the default maximum (85 reads of 128 sectors), then the
    // default maximum itself, 16384 sectors (128 reads), until 194 budgets have been
    // assigned and the peak rate has been estimated. The device's rate is 128 sectors
    // per 100 µs: 1.28 sectors/µs, 83886 in BFQ's fixed point (<< 16). After each second
    // of dispatches bfq_update_rate_reset filters it in with divisor 2 (all samples
    // sequential, a full second): from the rotational ref_rate[0] × 2/3 = 9333 to 46609,
    // then 65247; and max_budget = peak rate × 1000 × 125 ms >> 16
    // (bfq_calc_max_budget): 88901 sectors (694 reads), then 124449 (972 reads). In
    // between, an exhausted 16384-sector budget grew × 4 to 65536 (512 reads).
    let tasks = [
        reader(
            "a",
            -1,
            A,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
        reader(
            "b",
            -1,
            B,
            r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
        ),
    ];
    let (_, trace) = run(&spec(
        3,
        &tasks,
        r#""low_latency": "0", "strict_guarantees": "1""#,
    ));
    let s = slots(&issues(&trace));
    let mut sizes: Vec<u64> = s[..s.len() - 1].iter().map(|&(_, n)| n).collect();
    sizes.dedup();
    assert_eq!(&sizes[..5], &[85, 128, 512, 694, 972], "{s:?}");
}

/// Two best-effort readers at the default level, each thinking 1 ms between its 64 KiB
/// reads, for 1 s on a non-rotational device, with or without a backlogged idle-class reader beside them; each
/// best-effort reader's reads issued, and the idle-class reader's.
fn thinkers_beside(idle_reader: bool) -> (u64, u64, u64) {
    let mut tasks = vec![
        reader("be0", -1, A, r#", "sleep": 1000"#),
        reader("be1", -1, B, r#", "sleep": 1000"#),
    ];
    if idle_reader {
        tasks.push(reader(
            "idle",
            -1,
            C,
            r#", "schedlab:ioprio": {"class": "idle"}"#,
        ));
    }
    let (_, trace) = run(&spec_on(false, 1, &tasks, r#""low_latency": "0""#));
    let issued = issues(&trace);
    (
        served(&issued, A, 0, 1000 * MS),
        served(&issued, B, 0, 1000 * MS),
        served(&issued, C, 0, 1000 * MS),
    )
}

#[test]
fn beside_a_busy_idle_class_queue_best_effort_readers_keep_their_pace_by_injection() {
    // Alone, two equal best-effort queues are a symmetric scenario: neither is idled for
    // when it empties (idling_needed_for_service_guarantees), so both read at their own
    // pace, one read per 1.1 ms (1 ms thinking, 0.1 ms on the device), together.
    let (be0, be1, _) = thinkers_beside(false);
    for n in [be0, be1] {
        assert!((880..=910).contains(&n), "alone: {be0} + {be1}");
    }
    // With an idle-class queue busy, two classes have pending I/O
    // (bfq_asymmetric_scenario): the queue in service is idled for after each read
    // (bfq_arm_slice_timer, 8 ms > its 1 ms think time) and keeps its slot. A reader
    // thinking 1 ms per 0.1 ms of I/O is not I/O-bound, so idling does not boost its
    // throughput, and while it is idled for the other queues' requests are injected
    // (bfq_choose_bfqq_for_injection: the most recently queued first, within the inject
    // limit): the other best-effort reader's and the idle-class reader's. So both
    // best-effort readers keep their own pace, and the idle-class reader fills the rest
    // of the device's tags.
    let (be0, be1, idle) = thinkers_beside(true);
    for n in [be0, be1] {
        assert!(
            (880..=910).contains(&n),
            "beside the idle reader: {be0} + {be1}"
        );
    }
    assert!(idle >= 8_000, "idle-class reads: {idle}");
}

#[test]
fn injection_stops_when_it_inflates_the_service_time_of_the_queue_in_service() {
    // A thinker and a hog on a device taking one request at a time (100 µs each). The
    // thinker thinks 2.03 ms, so its next read arrives 30 µs into an injected read of the
    // hog and waits 70 µs for it: its total service time (arrival to completion) is
    // 170 µs, over 1.5 × the baseline (100 µs, a read alone), and
    // bfq_update_inject_limit lowers the limit to 0: the hog then reads in its own slots
    // (fewer than 1000 reads in 1 s). A thinker of 2 ms arrives just as the hog's read
    // completes: 100 µs, no inflation, the limit stays, and the hog fills the think times.
    let hog_reads = |think_us: u64| {
        let tasks = [
            reader(
                "thinker",
                -1,
                A,
                &format!(
                    r#", "sleep": {think_us}, "schedlab:ioprio": {{"class": "be", "level": 0}}"#
                ),
            ),
            reader(
                "hog",
                -1,
                B,
                r#", "schedlab:ioprio": {"class": "be", "level": 4}"#,
            ),
        ];
        let text = spec(1, &tasks, r#""low_latency": "0""#)
            .replace(r#""queue_depth": 64"#, r#""queue_depth": 1"#);
        let (_, trace) = run(&text);
        let issued = issues(&trace);
        served(&issued, B, 0, 1000 * MS)
    };
    let (inflating, aligned) = (hog_reads(2030), hog_reads(2000));
    assert!(inflating < 1_000, "{inflating}");
    assert!(aligned > 9_000, "{aligned}");
}

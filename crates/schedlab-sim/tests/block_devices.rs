//! The HDD and SSD models through the engine: tasks issue `schedlab:io` requests to a
//! device built from a built-in profile, and what the run measures (throughput, IOPS,
//! latency) is compared with the closed forms the devices' datasheets use. The profiles'
//! numbers are read from the profile files themselves, so a changed profile changes the
//! expectation with it.

mod common;

use schedlab_sim::SimConfig;
use serde_json::Value;

const HDD: &str = "hitachi-hdp725032gla360";
const SSD: &str = "intel-ssdsc2ct240a4";

fn run_traced(text: &str, trace: Option<std::path::PathBuf>) -> Value {
    common::run_io(text, trace)
}

fn run(text: &str) -> Value {
    run_traced(text, None)
}

/// A built-in profile's parameter `key`.
fn param(profile: &str, key: &str) -> f64 {
    let b = schedlab_spec::device::builtin(profile).expect("a built-in profile");
    let v: Value = serde_json::from_str(b.text).unwrap();
    let p = &v["params"][key];
    p.as_f64()
        .unwrap_or_else(|| panic!("{profile}: {key} is not a number: {p}"))
}

/// A spec: `tasks` (JSON members) on a 4-CPU machine with one device `d` whose object
/// is `device`.
fn spec(tasks: &str, device: &str) -> String {
    format!(
        r#"{{"tasks": {{ {tasks} }},
            "schedlab": {{"machine": {{"cpus": 4, "hz": 1000}},
                         "devices": {{"d": {device}}}}}}}"#
    )
}

/// `n` tasks each issuing `loops` requests.
fn readers(n: u32, loops: u32, op: &str, bytes: u64, offset: &str) -> String {
    format!(
        r#""io": {{"instance": {n}, "loop": {loops},
                 "schedlab:io": {{"dev": "d", "op": "{op}", "bytes": {bytes}, "offset": {offset}}}}}"#
    )
}

fn makespan_s(r: &Value) -> f64 {
    r["summary"]["makespan_ns"].as_f64().unwrap() / 1e9
}

fn requests(r: &Value) -> f64 {
    r["devices"][0]["requests"].as_f64().unwrap()
}

/// Within `tol` (relative) of `want`.
fn close(got: f64, want: f64, tol: f64, what: &str) {
    let err = (got - want).abs() / want;
    assert!(
        err <= tol,
        "{what}: {got:.4} vs {want:.4} ({:.3}% > {:.3}%)",
        err * 100.0,
        tol * 100.0
    );
}

/// A reader streaming 128 KiB requests from LBA 0 gets the outer zone's media rate: the
/// disk keeps reading ahead between requests, so after the first request's positioning
/// (at most the overhead and one revolution, 8.6 ms of the 4.1 s run, 0.2%) no rotation is
/// lost; the rate falls by less than 0.1% over the first 256 MiB of a 320 GB disk.
#[test]
fn hdd_sequential_reads_stream_at_the_outer_zone_rate() {
    let bytes = 128 << 10;
    let n = 2048;
    let r = run(&spec(
        &readers(1, n, "read", bytes, r#""seq""#),
        r#"{"model": "hdd", "profile": "hitachi-hdp725032gla360"}"#,
    ));
    assert_eq!(requests(&r), n as f64);
    let rate = (n as u64 * bytes) as f64 / makespan_s(&r);
    close(rate, param(HDD, "rate_outer_bps"), 0.005, "outer-zone rate");
}

/// One 256 MiB read ending at the last byte runs at the inner zone's rate: its
/// positioning (overhead, a full-stroke seek from cylinder 0, at most a revolution:
/// under 29 ms of 8.7 s, 0.3%) aside, it streams over the innermost tracks.
#[test]
fn hdd_inner_zone_is_slower_by_the_zone_ratio() {
    let bytes: u64 = 256 << 20;
    let size = param(HDD, "size_bytes") as u64;
    let r = run(&spec(
        &readers(1, 1, "read", bytes, &(size - bytes).to_string()),
        r#"{"model": "hdd"}"#,
    ));
    let rate = bytes as f64 / makespan_s(&r);
    close(rate, param(HDD, "rate_inner_bps"), 0.005, "inner-zone rate");
}

/// Random 4 KiB reads one at a time: IOPS = 1 / (overhead + average seek + half a
/// revolution + 4096 / mean zone rate), the random-access time of Hitachi's
/// specifications (which also adds the interface transfer, 14 µs, that the model
/// overlaps with the media). Tolerance 2%: 4000 requests' mean has a standard error of
/// about 0.5% (seek and rotation vary by ±4 ms), and the datasheet's average seek is over
/// uniformly random cylinders while random LBAs crowd the longer outer tracks, which
/// shortens the mean seek by under 1%.
#[test]
fn hdd_random_reads_at_depth_1_take_seek_plus_half_a_revolution() {
    let n = 4000;
    let r = run(&spec(
        &readers(1, n, "read", 4096, r#""random""#),
        r#"{"model": "hdd", "queue_depth": 1}"#,
    ));
    assert_eq!(requests(&r), n as f64);
    let revolution = 60.0 / param(HDD, "rpm");
    let mean_rate = (param(HDD, "rate_outer_bps") + param(HDD, "rate_inner_bps")) / 2.0;
    let per_io = param(HDD, "overhead_ns") / 1e9
        + param(HDD, "seek_avg_ns") / 1e9
        + revolution / 2.0
        + 4096.0 / mean_rate;
    close(
        n as f64 / makespan_s(&r),
        1.0 / per_io,
        0.02,
        "random IOPS at depth 1",
    );
}

/// Random reads from 32 tasks: with 31 NCQ tags the disk serves the nearest command
/// first and does far more than one request per average seek and half revolution; with
/// one tag it serves them in arrival order at the depth-1 rate.
#[test]
fn hdd_ncq_serves_more_random_reads_than_depth_1() {
    let iops = |depth: u32| {
        let r = run(&spec(
            &readers(32, 60, "read", 4096, r#""random""#),
            &format!(r#"{{"model": "hdd", "queue_depth": {depth}}}"#),
        ));
        assert_eq!(requests(&r), 32.0 * 60.0);
        requests(&r) / makespan_s(&r)
    };
    let (one, ncq) = (iops(1), iops(31));
    let revolution = 60.0 / param(HDD, "rpm");
    let depth1 = 1.0
        / (param(HDD, "overhead_ns") / 1e9 + param(HDD, "seek_avg_ns") / 1e9 + revolution / 2.0);
    close(one, depth1, 0.03, "depth 1 with 32 readers");
    assert!(ncq > 1.8 * one, "NCQ {ncq:.1} IOPS vs depth 1 {one:.1}");
}

/// Writes complete when their data is in the write cache: the command overhead plus
/// the interface transfer, while the cache has room (8 MiB of a 16 MiB cache); without
/// the write cache each waits for the media.
#[test]
fn hdd_write_cache_completes_writes_at_interface_speed() {
    let bytes: u64 = 1 << 20;
    let cached = run(&spec(
        &readers(1, 8, "write", bytes, r#""seq""#),
        r#"{"model": "hdd"}"#,
    ));
    let want =
        param(HDD, "overhead_ns") + (bytes as f64 * 1e9 / param(HDD, "interface_bps")).ceil();
    let lat = &cached["devices"][0]["latency_ns"];
    assert_eq!(lat["max"].as_f64().unwrap(), want, "{lat}");
    assert_eq!(lat["min"].as_f64().unwrap(), want, "{lat}");
    let through = run(&spec(
        &readers(1, 8, "write", bytes, r#""seq""#),
        r#"{"model": "hdd", "write_cache": false}"#,
    ));
    let media = bytes as f64 * 1e9 / param(HDD, "rate_outer_bps");
    let lat = &through["devices"][0]["latency_ns"];
    assert!(lat["min"].as_f64().unwrap() >= media, "{lat}");
}

/// A cache flush (an `fsync` after direct writes: no dirty pages, only the FLUSH) completes
/// once the disk's write cache is on the media: the 8 MiB the writes left in the cache are
/// destaged first, which takes at least their media transfer at the outer zone's rate.
#[test]
fn hdd_a_flush_waits_until_the_write_cache_is_on_the_media() {
    let task = r#""w": {"loop": 1,
        "schedlab:io": {"file": "f", "op": "write", "bytes": 1048576, "count": 8, "direct": true},
        "schedlab:fsync": {"file": "f"}}"#;
    let with_files = |device: &str| {
        spec(task, device).replace(
            r#""devices": {"d":"#,
            r#""files": {"f": {"dev": "d", "bytes": 16777216}}, "devices": {"d":"#,
        )
    };
    let r = run(&with_files(r#"{"model": "hdd"}"#));
    let bytes = 8.0 * 1048576.0;
    let writes =
        8.0 * (param(HDD, "overhead_ns") + bytes / 8.0 * 1e9 / param(HDD, "interface_bps"));
    let media = bytes * 1e9 / param(HDD, "rate_outer_bps");
    let makespan = makespan_s(&r) * 1e9;
    // The disk destages while the writes still arrive, so the run lasts at least the
    // media transfer, far longer than the writes into the cache.
    assert!(makespan >= media, "{makespan} < {media}");
    assert!(makespan > 4.0 * writes, "{makespan} vs {writes}");
    assert_eq!(requests(&r), 9.0, "eight writes and the flush");
    // Without the write cache the writes go to the media themselves.
    let r = run(&with_files(r#"{"model": "hdd", "write_cache": false}"#));
    let through = makespan_s(&r) * 1e9;
    assert!(through >= media, "{through}");
}

/// With a write buffer an SSD completes writes once their bytes are in the controller;
/// a cache flush then waits until every buffered write is programmed, so a run that
/// ends with an `fsync` lasts at least one page program (tPROG) longer than the same
/// writes without it.
#[test]
fn ssd_a_flush_waits_until_the_buffered_writes_are_programmed() {
    let task = |fsync: bool| {
        format!(
            r#""w": {{"loop": 1,
                "schedlab:io": {{"file": "f", "op": "write", "bytes": 1048576, "count": 8,
                                 "direct": true}}{}}}"#,
            if fsync {
                r#", "schedlab:fsync": {"file": "f"}"#
            } else {
                ""
            }
        )
    };
    let with_files = |fsync: bool| {
        spec(
            &task(fsync),
            r#"{"model": "ssd", "write_buffer_bytes": 16777216}"#,
        )
        .replace(
            r#""devices": {"d":"#,
            r#""files": {"f": {"dev": "d", "bytes": 16777216}}, "devices": {"d":"#,
        )
    };
    let (synced, unsynced) = (run(&with_files(true)), run(&with_files(false)));
    let gap = (makespan_s(&synced) - makespan_s(&unsynced)) * 1e9;
    assert!(gap >= param(SSD, "program_ns"), "{gap}");
}

/// A read of bytes the disk has just read is served from its cache segment: the command
/// overhead and the interface transfer, no positioning.
#[test]
fn hdd_a_repeated_read_hits_the_cache() {
    let r = run(&spec(
        &readers(1, 2, "read", 4096, "1048576"),
        r#"{"model": "hdd"}"#,
    ));
    let hit = param(HDD, "overhead_ns") + (4096e9 / param(HDD, "interface_bps")).ceil();
    let lat = &r["devices"][0]["latency_ns"];
    assert_eq!(lat["min"].as_f64().unwrap(), hit, "{lat}");
    assert!(
        lat["max"].as_f64().unwrap() > 10.0 * hit,
        "the first read goes to the media: {lat}"
    );
}

/// The disk's state (head, platter angle, caches) evolves deterministically: the same
/// spec gives the same result.
#[test]
fn hdd_and_ssd_runs_are_deterministic() {
    for device in [
        r#"{"model": "hdd"}"#,
        r#"{"model": "ssd", "write_buffer_bytes": 1048576}"#,
    ] {
        let text = spec(&readers(8, 30, "write", 8192, r#""random""#), device);
        let strip = |mut v: Value| {
            v["run"]["wall_s"] = Value::Null;
            v
        };
        assert_eq!(strip(run(&text)), strip(run(&text)), "{device}");
    }
}

/// SSD reads one at a time: each takes the command overhead, the die's array read, the
/// page's transfer over its channel and the host transfer — 4 KiB reads of a 4 KiB-aligned
/// offset, inside one page.
#[test]
fn ssd_reads_at_depth_1_take_tr_plus_transfers() {
    let n = 1000;
    let r = run(&spec(
        &readers(1, n, "read", 4096, "65536"),
        r#"{"model": "ssd", "profile": "intel-ssdsc2ct240a4"}"#,
    ));
    let per_io = param(SSD, "overhead_ns") / 1e9
        + param(SSD, "read_ns") / 1e9
        + 4096.0 / param(SSD, "channel_bps")
        + 4096.0 / param(SSD, "interface_bps");
    close(
        n as f64 / makespan_s(&r),
        1.0 / per_io,
        0.001,
        "SSD IOPS at depth 1",
    );
}

/// Sequential 4 MiB reads are striped over every die and channel: the channels carry
/// them at `channels` × `channel_bps` after the first page's array read, and the host
/// link, faster, finishes one page after the last.
#[test]
fn ssd_sequential_reads_run_at_the_channels_rate() {
    let bytes: u64 = 4 << 20;
    let n = 32;
    let r = run(&spec(
        &readers(1, n, "read", bytes, r#""seq""#),
        r#"{"model": "ssd"}"#,
    ));
    let channels = param(SSD, "channels");
    let page = param(SSD, "page_bytes");
    let per_request = param(SSD, "overhead_ns") / 1e9
        + param(SSD, "read_ns") / 1e9
        + bytes as f64 / (channels * param(SSD, "channel_bps"))
        + page / param(SSD, "interface_bps");
    let rate = (n as u64 * bytes) as f64 / makespan_s(&r);
    close(
        rate,
        bytes as f64 / per_request,
        0.001,
        "SSD sequential rate",
    );
    close(
        rate,
        channels * param(SSD, "channel_bps"),
        0.02,
        "channels × channel rate",
    );
}

/// Random 4 KiB reads from 32 tasks keep many dies busy at once: IOPS grow far beyond
/// depth 1 towards what the channels can carry (every request's 4096 bytes cross one
/// channel or two), which they never exceed. They stay below it: 31 requests in flight,
/// scattered at random over 8 channels, leave a channel idle now and then — a closed
/// network of N customers over K balanced queues keeps each busy N / (N + K − 1) of the
/// time (Buzen's product form), 82% here — and each transfer waits for its array read.
#[test]
fn ssd_random_reads_at_depth_32_reach_the_channel_limit() {
    let iops = |tasks: u32| {
        let r = run(&spec(
            &readers(tasks, 200, "read", 4096, r#""random""#),
            r#"{"model": "ssd"}"#,
        ));
        requests(&r) / makespan_s(&r)
    };
    let (one, many) = (iops(1), iops(32));
    let channel_limit = param(SSD, "channels") * param(SSD, "channel_bps") / 4096.0;
    assert!(
        many <= channel_limit * 1.001,
        "{many:.0} > {channel_limit:.0}"
    );
    assert!(
        many >= 0.65 * channel_limit,
        "{many:.0} vs {channel_limit:.0}"
    );
    assert!(many > 10.0 * one, "{many:.0} vs {one:.0} at depth 1");
}

/// Where the channels are fast, random reads at depth 32 are bounded by the dies (each
/// page needs its die's array read): twice the dies, nearly twice the IOPS.
#[test]
fn ssd_random_reads_scale_with_dies_when_channels_are_fast() {
    let iops = |dies: u32| {
        let device = format!(
            r#"{{"model": "ssd", "channels": 4, "dies_per_channel": {dies},
                 "channel_bps": 100000000000, "interface_bps": 100000000000, "overhead_ns": 0}}"#
        );
        let r = run(&spec(
            &readers(32, 200, "read", 4096, r#""random""#),
            &device,
        ));
        requests(&r) / makespan_s(&r)
    };
    let (four, eight) = (iops(1), iops(2));
    let t_r = param(SSD, "read_ns") / 1e9;
    assert!(
        four <= 4.0 / t_r && eight <= 8.0 / t_r,
        "{four:.0}, {eight:.0}"
    );
    assert!(eight > 1.8 * four, "8 dies {eight:.0} vs 4 dies {four:.0}");
}

/// A mixed load on each model — readers and writers, sequential and random, many at
/// once, caches and buffers filling — completes every request exactly once: as many
/// completions as issues in the trace, sector by sector, and every task finishes.
#[test]
fn every_request_completes_exactly_once() {
    for device in [
        r#"{"model": "hdd", "cache_bytes": 1048576, "read_ahead_bytes": 65536}"#,
        r#"{"model": "hdd", "cache_bytes": 0, "cache_segments": 1, "read_ahead_bytes": 0,
            "write_cache": true, "queue_depth": 2}"#,
        r#"{"model": "ssd", "write_buffer_bytes": 65536}"#,
        r#"{"model": "ssd", "channels": 1, "dies_per_channel": 1, "page_bytes": 512,
            "channel_bps": 100000}"#,
        r#"{"model": "null_blk", "queue_depth": 4}"#,
    ] {
        let tasks = [
            readers(6, 40, "read", 4096, r#""random""#).replace("\"io\"", "\"rr\""),
            readers(3, 40, "write", 65536, r#""random""#).replace("\"io\"", "\"rw\""),
            readers(2, 40, "read", 131072, r#""seq""#).replace("\"io\"", "\"sr\""),
            readers(2, 40, "write", 131072, r#""seq""#).replace("\"io\"", "\"sw\""),
        ]
        .join(",");
        let dir = std::env::temp_dir().join(format!("schedlab-dev-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.trace");
        let r = run_traced(&spec(&tasks, device), Some(path.clone()));
        // Each bio became a request or was merged into one.
        let merges = r["devices"][0]["merges"].as_u64().unwrap() as f64;
        assert_eq!(requests(&r) + merges, 13.0 * 40.0, "{device}");
        // Each task slept once per request: every completion woke its task.
        for t in r["tasks"].as_array().unwrap() {
            assert_eq!(t["switches_voluntary"], 40, "{device}: {t}");
        }
        assert!(
            r["summary"]["makespan_ns"].is_u64(),
            "{device}: the run ends"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let sectors = |what: &str| {
            let re =
                regex::Regex::new(&format!(r"{what}: \S+ [RW]S? (?:\d+ )?\(\) (\d+) \+ (\d+)"))
                    .unwrap();
            let mut v: Vec<(u64, u64)> = re
                .captures_iter(&text)
                .map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap()))
                .collect();
            v.sort_unstable();
            v
        };
        let (issued, completed) = (sectors("block_rq_issue"), sectors("block_rq_complete"));
        assert_eq!(issued.len() as f64, requests(&r), "{device}");
        assert_eq!(issued, completed, "{device}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// Bad device keys are refused with the JSON path of the value at fault.
#[test]
fn bad_device_keys_name_their_path() {
    let err = |device: &str| {
        let text = spec(&readers(1, 1, "read", 4096, r#""seq""#), device);
        schedlab_sim::simulate_text(&text, &SimConfig::default())
            .unwrap_err()
            .to_string()
    };
    let cases = [
        (
            r#"{"model": "hdd", "spindle": 7200}"#,
            "$.schedlab.devices.d.spindle",
            "unknown key \"spindle\"",
        ),
        (
            r#"{"model": "hdd", "rpm": 100}"#,
            "$.schedlab.devices.d.rpm",
            "in 1000..=30000",
        ),
        (
            r#"{"model": "hdd", "ncq_age_percent": -1}"#,
            "$.schedlab.devices.d.ncq_age_percent",
            "ageing weight",
        ),
        (
            r#"{"model": "ssd", "irq_ns": "fast"}"#,
            "$.schedlab.devices.d.irq_ns",
            "completion interrupt",
        ),
        (
            r#"{"model": "hdd", "seek_avg_ns": 19000000}"#,
            "$.schedlab.devices.d.seek_avg_ns",
            "no seek curve",
        ),
        (
            r#"{"model": "hdd", "seek_track_ns": 9000000}"#,
            "$.schedlab.devices.d.seek_track_ns",
            "must grow",
        ),
        (
            r#"{"model": "hdd", "rate_inner_bps": 70000000}"#,
            "$.schedlab.devices.d.rate_inner_bps",
            "≤ the outer",
        ),
        (
            r#"{"model": "hdd", "queue_depth": 64}"#,
            "$.schedlab.devices.d.queue_depth",
            "in 1..=32",
        ),
        (
            r#"{"model": "hdd", "read_ahead_bytes": 4194304}"#,
            "$.schedlab.devices.d.read_ahead_bytes",
            "one cache segment",
        ),
        (
            r#"{"model": "hdd", "profile": "intel-ssdsc2ct240a4"}"#,
            "$.schedlab.devices.d.profile",
            "not a profile of the \"hdd\" model",
        ),
        (
            r#"{"model": "ssd", "profile": "nope"}"#,
            "$.schedlab.devices.d.profile",
            "unknown device profile",
        ),
        (
            r#"{"model": "ssd", "page_bytes": 1000}"#,
            "$.schedlab.devices.d.page_bytes",
            "multiple of 512",
        ),
        (
            r#"{"model": "ssd", "rpm": 7200}"#,
            "$.schedlab.devices.d.rpm",
            "unknown key \"rpm\"",
        ),
        (
            r#"{"model": "null_blk", "profile": "x"}"#,
            "$.schedlab.devices.d.profile",
            "unknown key \"profile\"",
        ),
    ];
    for (device, path, says) in cases {
        let e = err(device);
        assert!(e.starts_with(&format!("{path}: ")), "{device}: {e}");
        assert!(e.contains(says), "{device}: {e}");
    }
}

/// Four readers cycling over 16 spots in the disk's first 4 MiB (more than its cache
/// segments hold: every read goes to the media) for 2 s, and one 4 KiB read of the last
/// MiB issued at 10 ms; the far read's completion time (ns), if it completed.
fn far_read_beside_near_ones(age_percent: u32) -> Option<u64> {
    let size = param(HDD, "size_bytes") as u64;
    let far = size - (1 << 20);
    let near: Vec<String> = (0..4)
        .map(|i| {
            let reads: Vec<String> = (0..4)
                .map(|k| {
                    let key = if k == 0 { String::new() } else { k.to_string() };
                    let offset = (i * 4 + k) * (256 << 10);
                    format!(
                        r#""schedlab:io{key}": {{"dev": "d", "op": "read", "bytes": 4096, "offset": {offset}}}"#
                    )
                })
                .collect();
            format!(r#""near{i}": {{"loop": -1, {}}}"#, reads.join(", "))
        })
        .collect();
    let tasks = format!(
        r#"{}, "far": {{"loop": 1, "delay": 10000,
                "schedlab:io": {{"dev": "d", "op": "read", "bytes": 4096, "offset": {far}}}}}"#,
        near.join(", ")
    );
    let text = spec(
        &tasks,
        &format!(
            r#"{{"model": "hdd", "profile": "{HDD}", "scheduler": "none",
                 "ncq_age_percent": {age_percent}}}"#
        ),
    )
    .replace(r#"{"tasks""#, r#"{"global": {"duration": 2}, "tasks""#);
    let trace = common::trace_of(&text, "hdd-ageing");
    let re = regex::Regex::new(&format!(
        r"(\d+)\.(\d{{9}}): block_rq_complete: \S+ R \(\) {} \+ 8 ",
        far / 512
    ))
    .unwrap();
    re.captures(&trace)
        .map(|c| c[1].parse::<u64>().unwrap() * 1_000_000_000 + c[2].parse::<u64>().unwrap())
}

#[test]
fn hdd_ncq_ageing_bounds_the_wait_of_a_far_read_among_near_ones() {
    // Plain SPTF: a near read (≤ 1 MiB away, under a revolution) is always waiting and
    // always closer than the full stroke to the last MiB, so the far read never goes.
    assert_eq!(
        far_read_beside_near_ones(0),
        None,
        "starved under plain SPTF"
    );
    // ASPTF(W): once the far read has waited (longest positioning time) / W, no read
    // that arrived that much later can beat it; the four readers' requests arrived
    // before then are served first, one positioning + overhead + transfer each.
    let rev_ns = 60e9 / param(HDD, "rpm");
    let longest_positioning = param(HDD, "seek_full_ns") + rev_ns;
    let service = param(HDD, "overhead_ns") + longest_positioning + 4096.0 / 31e6 * 1e9;
    for age_percent in [100u32, 400] {
        let w = age_percent as f64 / 100.0;
        let bound = longest_positioning / w + 5.0 * service;
        let done = far_read_beside_near_ones(age_percent).expect("the far read completes");
        let waited = (done - 10_000_000) as f64;
        assert!(
            waited <= bound,
            "W = {w}: waited {waited} ns, bound {bound} ns"
        );
    }
}

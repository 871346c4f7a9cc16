//! Buffered I/O through the engine: writes dirty the page cache and return, the
//! device's flusher thread writes them back when they expire or when the background
//! threshold is crossed, writers past the dirty limit wait for writeback, sequential reads
//! go through 6.1's read-ahead window and hit the cache the second time, `fsync` writes
//! and flushes, `unlink` writes its journal commit and checkpoint.

mod common;

use common::task_in;

/// A 2-CPU machine with one null_blk device (10 µs per request), file `f` of `file_kb`
/// KiB at its start, `vm` as the page cache's settings, and `tasks`.
fn spec(tasks: &str, file_kb: u64, vm: &str) -> String {
    format!(
        r#"{{
        "tasks": {{ {tasks} }},
        "schedlab": {{
            "machine": {{"cpus": 2, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 10000,
                                     "queue_depth": 64, "scheduler": "none"}}}},
            "files": {{"f": {{"dev": "nullb0", "bytes": {bytes}}}}},
            "vm": {{ {vm} }}
        }}
    }}"#,
        bytes = file_kb * 1024
    )
}

fn run(text: &str) -> serde_json::Value {
    common::run_text(text, "linux-cfs", &[], None).unwrap_or_else(|e| panic!("{e}"))
}

/// `(time ns, sector, sectors, write)` of every `block_rq_issue` of the run of `text`.
fn issues(text: &str) -> Vec<(u64, u64, u64, bool)> {
    let trace = common::trace_of(text, "pagecache");
    let re = regex::Regex::new(
        r"(\d+)\.(\d{9}): block_rq_issue: 251,0 ([RWF]+) \d+ \(\) (\d+) \+ (\d+)",
    )
    .unwrap();
    re.captures_iter(&trace)
        .map(|c| {
            let ns = c[1].parse::<u64>().unwrap() * 1_000_000_000 + c[2].parse::<u64>().unwrap();
            (
                ns,
                c[4].parse().unwrap(),
                c[5].parse().unwrap(),
                &c[3] != "R",
            )
        })
        .collect()
}

#[test]
fn a_buffered_write_returns_at_once_and_is_written_back_when_it_expires() {
    // 64 KiB copied at 1000 ps/B: 65.536 µs of CPU, no sleep. The pages expire
    // after dirty_expire_centisecs (30 s); the flusher, woken every 5 s from the first
    // dirtying, writes them at the first wake-up at least 30 s after it.
    let text = spec(
        r#""w": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 65536, "direct": false},
                 "sleep": 40000000}"#,
        1024,
        r#""copy_byte_ps": 1000"#,
    );
    let r = run(&text);
    let w = task_in(&r, "w");
    assert_eq!(w["cpu_ns"], 65_536, "the copy");
    assert_eq!(
        w["sleep_ns"], 40_000_000_000u64,
        "only the sleep: the write never waited"
    );
    assert_eq!(r["devices"][0]["bytes_written"], 65536);
    assert_eq!(
        r["devices"][0]["requests"], 1,
        "16 dirty pages in a row: one bio"
    );
    let flusher = task_in(&r, "flush-251:0");
    assert_eq!(flusher["kernel_thread"], true);
    assert_eq!(issues(&text), vec![(65_536 + 30_000_000_000, 0, 128, true)]);
}

#[test]
fn crossing_the_background_threshold_starts_writeback_at_once() {
    // 64 MiB of memory: background threshold 10 % = 1638 pages, limit 20 % = 3276 pages.
    // Writing 3000 pages wakes the flusher, which writes 4 MiB chunks (1024 pages) until
    // no more than 1638 are dirty: 3000 → 1976 → 952, two chunks, long before any page
    // expires.
    let text = spec(
        r#""w": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 4096, "count": 3000, "direct": false},
                 "sleep": 1000}"#,
        16384,
        r#""memory_bytes": 67108864, "copy_byte_ps": 0"#,
    );
    let r = run(&text);
    assert_eq!(r["devices"][0]["bytes_written"], 2048 * 4096);
    assert_eq!(
        task_in(&r, "w")["sleep_ns"],
        1_000_000,
        "below the limit: never throttled"
    );
}

#[test]
fn writers_past_the_dirty_limit_wait_for_writeback() {
    // 400 pages into a cache whose limit is 204 dirty or under writeback: the writer
    // sleeps until completions bring them back to the limit.
    let text = spec(
        r#""w": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 4096, "count": 400, "direct": false}}"#,
        4096,
        r#""memory_bytes": 4194304, "copy_byte_ps": 0"#,
    );
    let r = run(&text);
    let w = task_in(&r, "w");
    assert!(w["sleep_ns"].as_u64().unwrap() > 0, "throttled: {w}");
    let written = r["devices"][0]["bytes_written"].as_u64().unwrap() / 4096;
    assert!(written >= 400 - 204, "written back: {written} pages");
}

#[test]
fn sequential_reads_go_through_the_read_ahead_window_and_hit_the_cache_again() {
    // 256 reads of one page over a 1 MiB file: windows of 4, 8, 16 pages, then 32
    // (read_ahead_kb = 128) until the file's end — 3 + 8 requests, the last one clipped
    // at the end. Reading it again finds every page cached.
    let text = spec(
        r#""r": {"loop": 2, "schedlab:io": {"file": "f", "op": "read", "bytes": 4096, "count": 256, "direct": false}}"#,
        1024,
        r#""copy_byte_ps": 0"#,
    );
    let r = run(&text);
    assert_eq!(
        r["devices"][0]["bytes_read"],
        1 << 20,
        "nothing twice, nothing past the end"
    );
    let sizes: Vec<u64> = issues(&text).iter().map(|i| i.2 / 8).collect();
    assert_eq!(sizes, [4, 8, 16, 32, 32, 32, 32, 32, 32, 32, 4]);
}

#[test]
fn read_ahead_follows_read_ahead_kb() {
    let text = spec(
        r#""r": {"loop": 1, "schedlab:io": {"file": "f", "op": "read", "bytes": 4096, "count": 64, "direct": false}}"#,
        256,
        r#""copy_byte_ps": 0"#,
    )
    .replace(
        r#""scheduler": "none""#,
        r#""scheduler": "none", "params": {"queue/read_ahead_kb": "64"}"#,
    );
    let sizes: Vec<u64> = issues(&text).iter().map(|i| i.2 / 8).collect();
    // max 16 pages: get_init_ra_size(1, 16) = 2, then 4, 8, 16 and 16s to the end.
    assert_eq!(sizes, [2, 4, 8, 16, 16, 16, 2]);
}

#[test]
fn random_buffered_reads_read_only_what_they_ask() {
    let text = spec(
        r#""r": {"loop": 1, "schedlab:io": {"file": "f", "op": "read", "bytes": 4096, "offset": 409600, "direct": false},
                 "schedlab:io2": {"file": "f", "op": "read", "bytes": 4096, "offset": 8192, "direct": false}}"#,
        1024,
        r#""copy_byte_ps": 0"#,
    );
    let got = issues(&text);
    // The first read of the file (not at its start): a random miss, one page; the second
    // is not sequential either.
    assert_eq!(
        got.iter().map(|i| (i.1, i.2)).collect::<Vec<_>>(),
        [(800, 8), (16, 8)]
    );
}

#[test]
fn fsync_writes_the_dirty_pages_then_flushes_the_device_cache() {
    let text = spec(
        r#""w": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 65536, "direct": false},
                 "schedlab:fsync": {"file": "f"}}"#,
        1024,
        r#""copy_byte_ps": 0"#,
    );
    let r = run(&text);
    let dev = &r["devices"][0];
    assert_eq!(dev["bytes_written"], 65536);
    assert_eq!(dev["requests"], 2, "the data, then the flush");
    assert_eq!(
        task_in(&r, "w")["sleep_ns"],
        20_000,
        "write, then flush, in turn"
    );
    let got = issues(&text);
    assert_eq!(got[0], (0, 0, 128, true));
    assert_eq!(got[1], (10_000, 0, 0, true));
    assert_eq!(task_in(&r, "w")["io"]["requests"], 2);
    assert_eq!(task_in(&r, "w")["io"]["bytes_written"], 65536);
}

#[test]
fn a_page_rewritten_under_writeback_is_written_again_once_that_write_ends() {
    // `a` writes the file's first page and fsyncs it; `b`, 5 µs later (the delay), writes
    // the same page while `a`'s write is on the device and fsyncs too: the page is dirty
    // and under writeback, so `b`'s fsync waits for that write to end and then writes the
    // page again (write_cache_pages in WB_SYNC_ALL mode, wait_on_page_writeback). Both
    // fsyncs end with their flush.
    let text = spec(
        r#""a": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 2048, "direct": false},
                 "schedlab:fsync": {"file": "f"}},
           "b": {"loop": 1, "delay": 5,
                 "schedlab:io": {"file": "f", "op": "write", "bytes": 2048, "offset": 2048, "direct": false},
                 "schedlab:fsync": {"file": "f"}}"#,
        1024,
        r#""copy_byte_ps": 0"#,
    );
    let r = run(&text);
    let dev = &r["devices"][0];
    assert_eq!(dev["bytes_written"], 2 * 4096);
    let got = issues(&text);
    let writes: Vec<_> = got.iter().filter(|i| i.2 == 8).collect();
    assert_eq!(writes.len(), 2, "{got:?}");
    assert!(
        writes[1].0 >= writes[0].0 + 10_000,
        "after the first write ended: {got:?}"
    );
    assert_eq!(
        got.iter().filter(|i| i.2 == 0).count(),
        2,
        "two flushes: {got:?}"
    );
}

#[test]
fn unlink_commits_the_metadata_to_the_journal_then_checkpoints_it() {
    // A 1 GiB file covers 8 block groups: 8 block bitmaps (blocks 64..72), one group
    // descriptor block (block 1) and the inode's table block (80). The journal commit
    // (descriptor + 10 blocks + commit, in the middle of the 250 GB device) is one merged
    // 48 KiB write, then the flush; the checkpoint writes the 10 blocks home.
    let text = spec(
        r#""w": {"loop": 1, "schedlab:unlink": {"file": "f"}}"#,
        1 << 20,
        "",
    );
    let r = run(&text);
    assert_eq!(task_in(&r, "w")["sleep_ns"], 20_000);
    let got: Vec<(u64, u64)> = issues(&text).iter().map(|i| (i.1, i.2)).collect();
    let journal = (250u64 << 30) / 2 - (64 << 20);
    assert_eq!(
        got,
        [
            (journal / 512, 96),
            (0, 0),
            (8, 8),
            (64 * 8, 64),
            (80 * 8, 8)
        ]
    );
}

#[test]
fn specs_without_buffered_io_get_no_flusher_threads() {
    let text = spec(
        r#""w": {"loop": 1, "schedlab:io": {"file": "f", "op": "write", "bytes": 4096}}"#,
        1024,
        "",
    );
    let r = run(&text);
    assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
}

//! An OLTP load in the manner of sysbench 1.0's `oltp_read_only` / `oltp_read_write`
//! against MySQL/InnoDB: `threads` client threads, each running transactions back to back
//! (with an optional think time) for `time` seconds or until `events` transactions are done.
//!
//! What is modelled:
//! - A transaction is sysbench's statement mix (its `oltp_common.lua` defaults): 10 point
//!   selects and 4 range queries of 100 rows (`simple_ranges`, `sum_ranges`, `order_ranges`,
//!   `distinct_ranges`); read-write adds an index update, a non-index update and a
//!   delete + insert, each on one row. Rows are drawn uniformly from `tables` tables of
//!   `table_size` rows (sysbench's `--rand-type=uniform`).
//! - Each table is a file of its own, `sbtest<i>` (sysbench's table names, InnoDB's
//!   `innodb_file_per_table`), and the redo log is the file `ib_logfile0`.
//! - Each statement costs `cpu_us` of CPU and touches the InnoDB leaf pages (16 KiB, InnoDB's
//!   default `innodb_page_size`) holding its rows. A page access misses the buffer pool with
//!   probability `miss_pct`% (drawn here, from `seed`), and a miss is a synchronous 16 KiB
//!   read of that page from its table's file with `O_DIRECT`, as InnoDB reads data files
//!   under `innodb_flush_method=O_DIRECT`. A page already touched in the same transaction
//!   is a hit.
//! - A read-write transaction ends with its commit (`innodb_flush_log_at_trx_commit=1`):
//!   its redo record, `log_bytes` (a multiple of InnoDB's 512-byte log block), is written to
//!   `ib_logfile0` at the log's next position through the page cache (`O_DIRECT` applies to
//!   the data files only; the log is written with plain `write(2)`), then the log file is
//!   `fsync`ed: its dirty pages are written and the device's write cache flushed. A
//!   read-only transaction writes no redo.
//! - Every transaction is marked `begin` … `commit`; the headline `tps` is the rate of
//!   `commit` marks, its statistics the transactions' latencies.
//!
//! What is assumed or left out:
//! - The B-tree's root and internal pages always hit (they are a tiny, hot part of the
//!   tree); only leaf pages miss. The miss probability is a parameter, not the result of a
//!   buffer-pool model.
//! - Pages are laid out in row order; the table files follow each other from byte 0 of the
//!   device and the redo log follows them (on the next MiB) as one circular file of 4096
//!   records, commits writing it in turn. Each commit `fsync`s on its own: InnoDB's group
//!   commit (one thread's fsync covering the others' records) happens only as far as the
//!   page cache makes it (a record already written by another commit's fsync is clean).
//! - Dirty data pages are never flushed (the page cleaner's background writes are not
//!   modelled), and the redo log's file system metadata never changes (its size is fixed),
//!   so an `fsync` writes no journal.
//! - Each thread runs a pool of `pool` transactions drawn once and repeated (when `events`
//!   is 0); with `events` > 0 every transaction is drawn and none repeats.

use super::opts::{opt, Opts};
use super::{Events, GeneratorInfo};
use crate::model::IO_SCHEDULERS;
use crate::rng::Rng;
use crate::SpecError;
use serde_json::{json, Map, Value};

/// InnoDB's default page size (`innodb_page_size`).
pub const PAGE_BYTES: u64 = 16 * 1024;
/// sysbench's `--point_selects` default.
const POINT_SELECTS: u64 = 10;
/// sysbench's range statements (simple, sum, order, distinct), each of `--range_size` rows.
const RANGES: u64 = 4;
const RANGE_ROWS: u64 = 100;
/// Read-write's row changes: index update, non-index update, delete + insert.
const WRITES: u64 = 3;
/// The redo log's file (InnoDB's first log file).
pub const LOG_FILE: &str = "ib_logfile0";
/// The file system's block: file offsets and sizes are multiples of it.
const FILE_BLOCK: u64 = 4096;

/// The file of table `t` (0-based): sysbench's `sbtest1`, `sbtest2`, …
pub fn table_file(t: u64) -> String {
    format!("sbtest{}", t + 1)
}

/// Largest number of transactions written into one spec.
const MAX_TRANSACTIONS: u64 = 200_000;

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "oltp",
        description: "sysbench-like OLTP (oltp_read_only / oltp_read_write on InnoDB): client threads run transactions of point selects and range queries whose 16 KiB leaf pages miss the buffer pool with a given probability (O_DIRECT random reads of the table files sbtest<i>), read-write ones a buffered redo-log write to ib_logfile0 and its fsync at commit; headline tps (rate of the `commit` mark)",
        options: vec![
            opt("threads", 8, "client threads (sysbench --threads)"),
            opt("time", 10, "run time in seconds (sysbench --time)"),
            opt("events", 0, "transactions in all, shared by the threads (sysbench --events); 0: until `time`"),
            opt("mode", "read_write", "read_only or read_write (sysbench's oltp_read_only / oltp_read_write)"),
            opt("tables", 10, "tables (sysbench --tables)"),
            opt("table_size", 100000, "rows per table (sysbench --table-size)"),
            opt("row_bytes", 230, "bytes a row takes in a leaf page (sbtest's id, k, c char(120), pad char(60) with InnoDB's row overhead; assumed)"),
            opt("miss_pct", 10, "percent of leaf-page accesses that miss the buffer pool (assumed)"),
            opt("cpu_us", 50, "CPU time of one statement in µs (assumed)"),
            opt("think_us", 0, "think time between a thread's transactions in µs (sysbench has none)"),
            opt("log_bytes", 2048, "redo bytes written at a read-write commit, a multiple of 512 (assumed)"),
            opt("pool", 64, "transactions drawn per thread and repeated when events=0"),
            opt("device", "hdd", "the database's device model: hdd, ssd or null_blk (its default profile)"),
            opt("scheduler", "deadline", "the device's I/O scheduler"),
            opt("cpus", 4, "CPUs of the simulated machine (the seed's Core i7-3770 has 4 cores)"),
            opt("seed", 1, "PRNG seed of the rows drawn and the buffer-pool misses"),
        ],
    }
}

/// The database's layout and statement mix.
struct Db {
    read_write: bool,
    tables: u64,
    table_size: u64,
    rows_per_page: u64,
    pages_per_table: u64,
    miss_pct: u64,
    cpu_us: u64,
    think_us: u64,
    log_bytes: u64,
    /// Byte offset of the redo log on the device (after the tables).
    log_offset: u64,
    /// Redo records the circular log holds before it wraps.
    log_slots: u64,
}

impl Db {
    /// The leaf page of `row` (0-based) of `table`: the table's file and the page's byte
    /// offset in it.
    fn page_offset(&self, table: u64, row: u64) -> (String, u64) {
        (table_file(table), row / self.rows_per_page * PAGE_BYTES)
    }

    /// A table file's size.
    fn table_bytes(&self) -> u64 {
        self.pages_per_table * PAGE_BYTES
    }

    /// The files: the tables one after the other from byte 0 of `db`, then the redo log.
    fn files(&self) -> Map<String, Value> {
        let mut files = Map::new();
        for t in 0..self.tables {
            files.insert(
                table_file(t),
                json!({"dev": "db", "offset": t * self.table_bytes(), "bytes": self.table_bytes()}),
            );
        }
        let log_bytes = (self.log_slots * self.log_bytes).next_multiple_of(FILE_BLOCK);
        files.insert(
            LOG_FILE.into(),
            json!({"dev": "db", "offset": self.log_offset, "bytes": log_bytes}),
        );
        files
    }

    /// One transaction's events: the begin mark, per statement its CPU time then the reads of
    /// the pages it misses, the redo write of a read-write commit, the commit mark, the think
    /// time. `log_slot` numbers this commit's redo record.
    fn transaction(&self, rng: &mut Rng, log_slot: u64) -> Map<String, Value> {
        let mut ev = Events::default();
        ev.push("schedlab:mark", json!("begin"));
        let mut touched: Vec<u64> = Vec::new();
        let statements = POINT_SELECTS + RANGES + if self.read_write { WRITES } else { 0 };
        for s in 0..statements {
            let table = rng.next_u64() % self.tables;
            let is_range = (POINT_SELECTS..POINT_SELECTS + RANGES).contains(&s);
            let rows = if is_range {
                RANGE_ROWS.min(self.table_size)
            } else {
                1
            };
            let first = rng.next_u64() % (self.table_size - rows + 1);
            ev.push("run", json!(self.cpu_us));
            let pages = first / self.rows_per_page..=(first + rows - 1) / self.rows_per_page;
            for page in pages {
                let key = table * self.pages_per_table + page;
                if touched.contains(&key) {
                    continue;
                }
                touched.push(key);
                if rng.next_u64() % 100 < self.miss_pct {
                    let (file, offset) = self.page_offset(table, page * self.rows_per_page);
                    ev.push(
                        "schedlab:io",
                        json!({"file": file, "op": "read", "bytes": PAGE_BYTES,
                               "offset": offset, "direct": true}),
                    );
                }
            }
        }
        if self.read_write {
            let offset = (log_slot % self.log_slots) * self.log_bytes;
            ev.push("run", json!(self.cpu_us));
            ev.push(
                "schedlab:io",
                json!({"file": LOG_FILE, "op": "write", "bytes": self.log_bytes,
                       "offset": offset, "direct": false}),
            );
            ev.push("schedlab:fsync", json!({"file": LOG_FILE}));
        }
        ev.push("schedlab:mark", json!("commit"));
        if self.think_us > 0 {
            ev.push("sleep", json!(self.think_us));
        }
        ev.0
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let threads = o.int("threads", 1, 1024)?;
    let time = o.int("time", 1, 86_400)?;
    let events = o.int("events", 0, MAX_TRANSACTIONS)?;
    let read_write = o.choice("mode", &["read_only", "read_write"])? == "read_write";
    let tables = o.int("tables", 1, 1000)?;
    let table_size = o.int("table_size", 1, 1_000_000_000)?;
    let row_bytes = o.int("row_bytes", 1, PAGE_BYTES)?;
    let log_bytes = o.int("log_bytes", 512, 1 << 20)?;
    if log_bytes % 512 != 0 {
        return Err(o.error(
            "log_bytes",
            format!("expected a multiple of 512 (InnoDB's log block), found {log_bytes}"),
        ));
    }
    let pool = o.int("pool", 1, 10_000)?;
    if events == 0 && threads * pool > MAX_TRANSACTIONS {
        return Err(o.error(
            "pool",
            format!("{threads} threads × {pool} transactions exceed {MAX_TRANSACTIONS}"),
        ));
    }
    let rows_per_page = (PAGE_BYTES / row_bytes).max(1);
    let pages_per_table = table_size.div_ceil(rows_per_page);
    let tables_bytes = tables * pages_per_table * PAGE_BYTES;
    let log_slots = 4096;
    let db = Db {
        read_write,
        tables,
        table_size,
        rows_per_page,
        pages_per_table,
        miss_pct: o.int("miss_pct", 0, 100)?,
        cpu_us: o.int("cpu_us", 1, 1_000_000)?,
        think_us: o.int("think_us", 0, 60_000_000)?,
        log_bytes,
        // The log starts on the MiB after the tables.
        log_offset: tables_bytes.div_ceil(1 << 20) << 20,
        log_slots,
    };
    let device = o.choice("device", &["hdd", "ssd", "null_blk"])?;
    let scheduler = o.choice("scheduler", IO_SCHEDULERS)?;
    let cpus = o.int("cpus", 1, 256)?;
    let mut rng = Rng::new(o.int("seed", 0, u64::MAX)?);

    let mut tasks = Map::new();
    for i in 0..threads {
        // With `events`, thread i runs its share once; otherwise its pool for ever.
        let (count, loop_count) = if events > 0 {
            (events / threads + u64::from(i < events % threads), 1)
        } else {
            (pool, -1)
        };
        if count == 0 {
            continue;
        }
        let mut phases = Map::new();
        for k in 0..count {
            let slot = k * threads + i;
            phases.insert(
                format!("txn{k}"),
                Value::Object(db.transaction(&mut rng, slot)),
            );
        }
        tasks.insert(
            format!("client{i}"),
            json!({"loop": loop_count, "schedlab:process": "mysqld", "phases": phases}),
        );
    }
    Ok(json!({
        "global": {"duration": time, "default_policy": "SCHED_OTHER"},
        "tasks": Value::Object(tasks),
        "schedlab": {
            "machine": {"cpus": cpus, "hz": 1000},
            "devices": {"db": {"model": device, "scheduler": scheduler}},
            "files": Value::Object(db.files()),
            "headline": {"type": "rate", "mark": "commit", "name": "tps"},
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_of_rows_touches_the_pages_that_hold_them() {
        let db = Db {
            read_write: false,
            tables: 2,
            table_size: 1000,
            rows_per_page: 70,
            pages_per_table: 15,
            miss_pct: 100,
            cpu_us: 1,
            think_us: 0,
            log_bytes: 512,
            log_offset: 0,
            log_slots: 1,
        };
        assert_eq!(db.page_offset(1, 0), ("sbtest2".to_string(), 0));
        assert_eq!(db.page_offset(0, 139), ("sbtest1".to_string(), PAGE_BYTES));
        let t = db.transaction(&mut Rng::new(3), 0);
        let reads = t.keys().filter(|k| k.starts_with("schedlab:io")).count() as u64;
        // All accesses miss: at least one page per statement minus repeats, at most two per range.
        assert!(reads <= POINT_SELECTS + 2 * RANGES, "{reads}");
        assert!(reads >= 1);
    }
}

//! The page cache: buffered reads and writes, dirty pages and their writeback, and
//! read-ahead, after Linux 6.1 (mm/filemap.c `filemap_read`, `generic_perform_write`;
//! mm/page-writeback.c `domain_dirty_limits`, `balance_dirty_pages`; fs/fs-writeback.c
//! `wb_writeback`, `wb_do_writeback`, `wb_wakeup_delayed`; mm/readahead.c
//! `ondemand_readahead`, `get_init_ra_size`, `get_next_ra_size`).
//!
//! Each file, and each device read or written without `O_DIRECT`, has its pages (4 KiB)
//! cached. The model:
//! - A buffered write copies into the cache (its CPU time is the copy, charged when the op
//!   starts) and marks the pages dirty — whole pages: a partial page is not read first —
//!   and returns. A file's first dirty page stamps it (`inode->dirtied_when`) and arms
//!   its device's flusher for `dirty_writeback_centisecs` later (`wb_wakeup_delayed`).
//! - Thresholds (`domain_dirty_limits`): with the machine's memory all dirtyable, the
//!   limit is `dirty_ratio`% of it and the background threshold `dirty_background_ratio`%
//!   (half the limit if not below it); the RT tasks' 25 % boost is not modelled. A write
//!   that leaves more dirty pages than the background threshold wakes the flusher
//!   (`balance_dirty_pages` → `wb_start_background_writeback`). Throttling, simplified:
//!   a writer that leaves dirty plus under-writeback pages above the limit sleeps until
//!   writeback completions bring them to the limit (the kernel paces writers from half
//!   way between the two thresholds, in pauses of at most 200 ms, toward the device's
//!   measured bandwidth; here there is no pacing below the limit and no pause cap).
//! - The flusher of a device is a kernel thread. Woken by its timer it writes the files
//!   whose first dirty page is older than `dirty_expire_centisecs` (kupdate writeback);
//!   woken because the background threshold is crossed it writes until the dirty pages
//!   fall to it (background writeback), looking at them after each chunk of 4 MiB
//!   (`MIN_WRITEBACK_PAGES`: the kernel's chunk is at least that, more on fast devices).
//!   Within a file it writes dirty pages from where it stopped last (`writeback_index`),
//!   each run of consecutive dirty pages one bio of at most 256 pages (`BIO_MAX_VECS`),
//!   all under one plug; the writes are asynchronous
//!   (`sync: false`) with the flusher's I/O priority. While dirty pages remain it re-arms
//!   its timer. It submits a pass at once: the kernel's limit on queued requests
//!   (`nr_requests`) is not modelled, and submitting costs no CPU time.
//! - A buffered read copies the pages it needs from the cache; pages not cached are read
//!   from the device by read-ahead and the reader sleeps until they are in. Read-ahead is
//!   6.1's on-demand window, per task and file: a miss at the file's start or right after
//!   the previous read opens a window of `get_init_ra_size(request)` pages (at most
//!   `read_ahead_kb`), a read that reaches the window's marked page (the first of its
//!   asynchronous part) or its end moves it on and grows it (`get_next_ra_size`), and a
//!   miss elsewhere reads just what was asked (context read-ahead,
//!   `try_context_readahead`, is not modelled). Read-ahead never reads past the file's end.
//! - Capacity: the machine's memory, in pages. When full, a clean page not being read is
//!   evicted by CLOCK (second chance: a page read or written since the hand last passed is
//!   spared once) — an approximation of the kernel's active and inactive LRU lists.
//!   Dirty pages and pages under I/O are never evicted; if every page is one of those the
//!   cache grows past its capacity (the kernel would stall the allocation in reclaim).

use std::collections::HashMap;

use schedlab_spec::model::{Vm, SECTOR_BYTES};

use crate::types::{TaskId, Time};

/// The page size.
pub const PAGE_BYTES: u64 = 4096;
/// `BIO_MAX_VECS`: pages in one bio.
pub const BIO_MAX_PAGES: u64 = 256;
/// `MIN_WRITEBACK_PAGES` (fs/fs-writeback.c, 6.1): 4 MiB, the smallest chunk background
/// writeback writes of a file before it looks at the thresholds again
/// (`writeback_chunk_size`).
pub const MIN_WRITEBACK_PAGES: u64 = 1024;

/// A cached page's state.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: u64,
    /// Holds the data (`PG_uptodate`).
    uptodate: bool,
    /// Being read (`PG_locked` for I/O).
    reading: bool,
    dirty: bool,
    writeback: bool,
    /// Used since the CLOCK hand last passed (`PG_referenced`).
    referenced: bool,
    /// Reaching it starts asynchronous read-ahead (`PG_readahead`).
    readahead: bool,
    /// In use (a free slot after eviction is not).
    live: bool,
}

/// A file's (or a device's) pages (`struct address_space` with its inode's writeback state).
pub(crate) struct Mapping {
    pub dev: u32,
    /// Its first byte on the device.
    pub base: u64,
    pub pages: u64,
    /// Dirty pages, one bit each (the page cache's dirty tag).
    dirty: Vec<u64>,
    nr_dirty: u64,
    nr_writeback: u64,
    /// When it went from clean to dirty (`inode->dirtied_when`).
    dirtied_when: Option<Time>,
    /// Where writeback resumes (`mapping->writeback_index`).
    writeback_index: u64,
    /// Tasks in `fsync` waiting for its writeback to drain.
    pub fsync_waiters: Vec<TaskId>,
}

impl Mapping {
    pub(crate) fn new(dev: u32, base: u64, bytes: u64) -> Mapping {
        Mapping {
            dev,
            base,
            pages: bytes / PAGE_BYTES,
            dirty: Vec::new(),
            nr_dirty: 0,
            nr_writeback: 0,
            dirtied_when: None,
            writeback_index: 0,
            fsync_waiters: Vec::new(),
        }
    }

    fn set_dirty_bit(&mut self, idx: u64, on: bool) {
        let w = (idx / 64) as usize;
        if self.dirty.len() <= w {
            self.dirty.resize(w + 1, 0);
        }
        if on {
            self.dirty[w] |= 1 << (idx % 64);
        } else {
            self.dirty[w] &= !(1 << (idx % 64));
        }
    }

    fn dirty_bit(&self, idx: u64) -> bool {
        self.dirty
            .get((idx / 64) as usize)
            .is_some_and(|w| w & (1 << (idx % 64)) != 0)
    }

    /// The first dirty page at or after `from`.
    fn next_dirty(&self, from: u64) -> Option<u64> {
        let mut w = (from / 64) as usize;
        let mut mask = !0u64 << (from % 64);
        while w < self.dirty.len() {
            let bits = self.dirty[w] & mask;
            if bits != 0 {
                return Some(w as u64 * 64 + bits.trailing_zeros() as u64);
            }
            w += 1;
            mask = !0;
        }
        None
    }

    /// Under writeback, or pages still to write: what `fsync` waits for.
    pub(crate) fn writeback_pending(&self) -> bool {
        self.nr_writeback > 0
    }
}

/// A task's read-ahead window on one file (`struct file_ra_state`).
#[derive(Clone, Copy, Debug, Default)]
struct RaState {
    start: u64,
    size: u64,
    async_size: u64,
    /// The last page of the previous read (`prev_pos` >> PAGE_SHIFT).
    prev_last: Option<u64>,
}

/// A read the cache wants from the device: `pages` pages of mapping `mapping` from
/// page `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageIo {
    pub mapping: u32,
    pub index: u64,
    pub pages: u64,
}

/// What a buffered read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// Every page was cached: the copy is done.
    Hit,
    /// Some page is not in yet: wait for reads to complete, then try again.
    Wait,
}

/// The page cache of the machine.
pub(crate) struct PageCache {
    pub vm: Vm,
    /// CPU time per byte copied, ps.
    pub copy_byte_ps: u64,
    slots: Vec<Slot>,
    index: HashMap<u64, u32>,
    free: Vec<u32>,
    hand: usize,
    capacity: usize,
    pub mappings: Vec<Mapping>,
    ra: HashMap<(u32, u32), RaState>,
    /// Global dirty and under-writeback pages (`NR_FILE_DIRTY`, `NR_WRITEBACK`).
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub thresh: u64,
    pub bg_thresh: u64,
    /// Readers waiting for pages being read; writers throttled over the limit.
    pub page_waiters: Vec<TaskId>,
    pub throttled: Vec<TaskId>,
    /// Read-ahead requests gathered by the last read, for the block layer to submit.
    pub reads: Vec<PageIo>,
    /// Read-ahead window size limit, pages (`read_ahead_kb` / 4), per device.
    pub ra_pages: Vec<u64>,
}

fn key(mapping: u32, idx: u64) -> u64 {
    ((mapping as u64) << 40) | idx
}

impl PageCache {
    pub(crate) fn new(
        vm: Vm,
        copy_byte_ps: u64,
        mappings: Vec<Mapping>,
        ra_pages: Vec<u64>,
    ) -> PageCache {
        let memory_pages = vm.memory_bytes / PAGE_BYTES;
        // domain_dirty_limits: ratio in PAGE_SIZE parts, times the dirtyable memory.
        let thresh = (vm.dirty_ratio as u64 * PAGE_BYTES / 100) * memory_pages / PAGE_BYTES;
        let mut bg_thresh =
            (vm.dirty_background_ratio as u64 * PAGE_BYTES / 100) * memory_pages / PAGE_BYTES;
        if bg_thresh >= thresh {
            bg_thresh = thresh / 2;
        }
        PageCache {
            vm,
            copy_byte_ps,
            slots: Vec::new(),
            index: HashMap::new(),
            free: Vec::new(),
            hand: 0,
            capacity: memory_pages as usize,
            mappings,
            ra: HashMap::new(),
            nr_dirty: 0,
            nr_writeback: 0,
            thresh,
            bg_thresh,
            page_waiters: Vec::new(),
            throttled: Vec::new(),
            reads: Vec::new(),
            ra_pages,
        }
    }

    fn slot(&self, mapping: u32, idx: u64) -> Option<&Slot> {
        self.index
            .get(&key(mapping, idx))
            .map(|&s| &self.slots[s as usize])
    }

    /// The slot of a page, allocated (evicting a clean page if the cache is full).
    fn slot_mut(&mut self, mapping: u32, idx: u64) -> &mut Slot {
        let k = key(mapping, idx);
        let s = match self.index.get(&k) {
            Some(&s) => s,
            None => {
                let s = self.alloc_slot();
                self.slots[s as usize] = Slot {
                    key: k,
                    live: true,
                    ..Slot::default()
                };
                self.index.insert(k, s);
                s
            }
        };
        &mut self.slots[s as usize]
    }

    fn alloc_slot(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        if self.slots.len() < self.capacity.max(1) {
            self.slots.push(Slot::default());
            return self.slots.len() as u32 - 1;
        }
        self.evict().unwrap_or_else(|| {
            self.slots.push(Slot::default());
            self.slots.len() as u32 - 1
        })
    }

    /// CLOCK: the first clean, idle page the hand finds not referenced since its last
    /// pass; two sweeps find none when every page is dirty or under I/O.
    fn evict(&mut self) -> Option<u32> {
        let n = self.slots.len();
        for _ in 0..2 * n {
            let i = self.hand;
            self.hand = (self.hand + 1) % n;
            let s = &mut self.slots[i];
            if !s.live || s.dirty || s.writeback || s.reading {
                continue;
            }
            if s.referenced {
                s.referenced = false;
                continue;
            }
            self.index.remove(&s.key);
            s.live = false;
            return Some(i as u32);
        }
        None
    }

    /// The pages of mapping `m` a request of `bytes` at byte `at` covers.
    pub(crate) fn page_range(at: u64, bytes: u64) -> (u64, u64) {
        (at / PAGE_BYTES, (at + bytes).div_ceil(PAGE_BYTES))
    }

    /// A buffered write of pages `[first, end)` of mapping `m` at `now`: the pages become
    /// dirty. Returns whether the mapping's device's flusher timer should be armed (the
    /// first dirty page of a clean file).
    pub(crate) fn write(&mut self, m: u32, first: u64, end: u64, now: Time) -> bool {
        let mut newly_dirty = 0;
        for idx in first..end {
            let s = self.slot_mut(m, idx);
            s.uptodate = true;
            s.referenced = true;
            if !s.dirty {
                s.dirty = true;
                newly_dirty += 1;
                self.mappings[m as usize].set_dirty_bit(idx, true);
            }
        }
        self.nr_dirty += newly_dirty;
        let map = &mut self.mappings[m as usize];
        map.nr_dirty += newly_dirty;
        if newly_dirty > 0 && map.dirtied_when.is_none() {
            map.dirtied_when = Some(now);
            return true;
        }
        false
    }

    /// Over the background threshold: the flusher should write.
    pub(crate) fn over_background(&self) -> bool {
        self.nr_dirty > self.bg_thresh
    }

    /// Over the dirty limit: a writer is throttled.
    pub(crate) fn over_limit(&self) -> bool {
        self.nr_dirty + self.nr_writeback > self.thresh
    }

    /// Whether device `dev` has dirty pages.
    pub(crate) fn dev_dirty(&self, dev: u32) -> bool {
        self.mappings.iter().any(|m| m.dev == dev && m.nr_dirty > 0)
    }

    /// A writeback pass of the flusher of device `dev` at `now`: the dirty pages to write,
    /// as runs of at most [`BIO_MAX_PAGES`] pages, marked under writeback.
    pub(crate) fn writeback_pass(&mut self, dev: u32, now: Time, out: &mut Vec<PageIo>) {
        let expire = self.vm.dirty_expire_centisecs as u64 * 10_000_000;
        for m in 0..self.mappings.len() {
            let map = &self.mappings[m];
            if map.dev != dev || map.nr_dirty == 0 {
                continue;
            }
            let expired = map
                .dirtied_when
                .is_some_and(|t| t.saturating_add(expire) <= now);
            if !expired && !self.over_background() {
                continue;
            }
            let background_only = !expired;
            // The flusher writes in `WB_SYNC_NONE` mode: pages still under writeback wait
            // for a later pass.
            self.write_mapping(m as u32, out, |pc, written| {
                background_only && written % MIN_WRITEBACK_PAGES == 0 && !pc.over_background()
            });
        }
    }

    /// Write mapping `m`'s dirty pages from its writeback index on, wrapping once, until
    /// `stop` (given the pages written so far) says enough. Pages are taken one at a time
    /// so that a stop falls on a chunk boundary; a bio ends there too. A dirty page still
    /// under writeback (rewritten while its last write is in flight) is left dirty, as
    /// `write_cache_pages` skips it in `WB_SYNC_NONE` mode (the caller in `WB_SYNC_ALL`
    /// mode waits for its writeback and writes it then): the result says whether one was.
    pub(crate) fn write_mapping(
        &mut self,
        m: u32,
        out: &mut Vec<PageIo>,
        stop: impl Fn(&PageCache, u64) -> bool,
    ) -> bool {
        let mut skipped = false;
        let start = self.mappings[m as usize].writeback_index;
        let mut at = start;
        let mut wrapped = false;
        let mut written = 0;
        loop {
            if written > 0 && stop(self, written) {
                break;
            }
            let map = &self.mappings[m as usize];
            let next = match map.next_dirty(at) {
                Some(i) if !wrapped || i < start => i,
                Some(_) | None if !wrapped => {
                    wrapped = true;
                    at = 0;
                    continue;
                }
                _ => break,
            };
            if self.slot(m, next).is_some_and(|s| s.writeback) {
                skipped = true;
                at = next + 1;
                continue;
            }
            let mut end = next + 1;
            let chunk_left = MIN_WRITEBACK_PAGES - written % MIN_WRITEBACK_PAGES;
            while end - next < BIO_MAX_PAGES.min(chunk_left)
                && end < map.pages
                && map.dirty_bit(end)
                && !self.slot(m, end).is_some_and(|s| s.writeback)
            {
                end += 1;
            }
            for idx in next..end {
                let s = self.slot_mut(m, idx);
                s.dirty = false;
                s.writeback = true;
                self.mappings[m as usize].set_dirty_bit(idx, false);
            }
            let n = end - next;
            written += n;
            self.nr_dirty -= n;
            self.nr_writeback += n;
            let map = &mut self.mappings[m as usize];
            map.nr_dirty -= n;
            map.nr_writeback += n;
            map.writeback_index = end;
            if map.nr_dirty == 0 {
                map.dirtied_when = None;
            }
            out.push(PageIo {
                mapping: m,
                index: next,
                pages: n,
            });
            at = end;
        }
        skipped
    }

    /// A write of pages `[first, first + pages)` of `m` completed: they are clean (or
    /// dirty again if rewritten meanwhile).
    pub(crate) fn end_write(&mut self, m: u32, first: u64, pages: u64) {
        for idx in first..first + pages {
            if let Some(&s) = self.index.get(&key(m, idx)) {
                let s = &mut self.slots[s as usize];
                if s.writeback {
                    s.writeback = false;
                    self.nr_writeback -= 1;
                    self.mappings[m as usize].nr_writeback -= 1;
                }
            }
        }
    }

    /// A read of pages `[first, first + pages)` of `m` completed: they hold data.
    pub(crate) fn end_read(&mut self, m: u32, first: u64, pages: u64) {
        for idx in first..first + pages {
            if let Some(&s) = self.index.get(&key(m, idx)) {
                let s = &mut self.slots[s as usize];
                s.reading = false;
                s.uptodate = true;
            }
        }
    }

    /// Task `t` reads pages `[first, end)` of mapping `m` (`filemap_read`): read-ahead is
    /// started where the window says (requests left in `self.reads`); `Hit` if every
    /// page is cached.
    pub(crate) fn read(&mut self, t: TaskId, m: u32, first: u64, end: u64) -> ReadOutcome {
        self.reads.clear();
        let mut hit = true;
        for idx in first..end {
            let state = self.slot(m, idx).copied();
            match state {
                Some(s) if s.uptodate => {
                    if s.readahead {
                        self.slot_mut(m, idx).readahead = false;
                        self.ondemand(t, m, idx, end - idx, true);
                    }
                    self.slot_mut(m, idx).referenced = true;
                }
                Some(s) if s.reading => hit = false,
                _ => {
                    hit = false;
                    self.ondemand(t, m, idx, end - idx, false);
                }
            }
        }
        let ra = self.ra.entry((t.0, m)).or_default();
        ra.prev_last = Some(end - 1);
        if hit {
            ReadOutcome::Hit
        } else {
            ReadOutcome::Wait
        }
    }

    /// `ondemand_readahead` for a read of `req` pages at page `index` of `m`: `marked`
    /// when it reached a page marked for asynchronous read-ahead, else a miss.
    fn ondemand(&mut self, t: TaskId, m: u32, index: u64, req: u64, marked: bool) {
        let max = self.ra_pages[self.mappings[m as usize].dev as usize];
        let mut ra = self.ra.get(&(t.0, m)).copied().unwrap_or_default();
        let expected = ra.start + ra.size - ra.async_size;
        // `index - prev_index <= 1`: the page last read, or the one after it.
        let sequential = ra.prev_last.is_some_and(|p| index == p || index == p + 1);
        if index != 0 && ra.size > 0 && (index == expected || index == ra.start + ra.size) {
            ra.start += ra.size;
            ra.size = ra.size.max(next_ra_size(ra.size, max));
            ra.async_size = ra.size;
        } else if marked {
            // A marked page reached out of step with the window: the kernel looks for
            // the next hole (not modelled), so nothing more is read.
            return;
        } else if index == 0 || req > max || sequential {
            ra.start = index;
            ra.size = init_ra_size(req, max);
            ra.async_size = if ra.size > req {
                ra.size - req
            } else {
                ra.size
            };
        } else {
            // A random read: just the pages asked for (`do_page_cache_ra(req_size, 0)`).
            self.read_pages(m, index, req, None);
            return;
        }
        // readit: a window starting at the request grows by its next size at once.
        if index == ra.start && ra.size == ra.async_size {
            let add = next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        self.ra.insert((t.0, m), ra);
        let mark = ra.start + ra.size - ra.async_size;
        self.read_pages(m, ra.start, ra.size, Some(mark));
    }

    /// `page_cache_ra_unbounded`: read the pages of `[index, index + n)` not cached (up
    /// to the file's end), one request per run of missing pages, marking page `mark`.
    fn read_pages(&mut self, m: u32, index: u64, n: u64, mark: Option<u64>) {
        let end = (index + n).min(self.mappings[m as usize].pages);
        let missing =
            |pc: &PageCache, idx: u64| pc.slot(m, idx).is_none_or(|s| !s.uptodate && !s.reading);
        let mut idx = index;
        while idx < end {
            if !missing(self, idx) {
                idx += 1;
                continue;
            }
            let first = idx;
            while idx < end && idx - first < BIO_MAX_PAGES && missing(self, idx) {
                let s = self.slot_mut(m, idx);
                s.reading = true;
                s.readahead = Some(idx) == mark;
                idx += 1;
            }
            self.reads.push(PageIo {
                mapping: m,
                index: first,
                pages: idx - first,
            });
        }
    }

    /// Drop mapping `m`'s pages (`truncate_inode_pages`): dirty ones are discarded;
    /// pages under I/O stay until their I/O ends.
    pub(crate) fn drop_mapping(&mut self, m: u32) {
        let map = &mut self.mappings[m as usize];
        self.nr_dirty -= map.nr_dirty;
        map.nr_dirty = 0;
        map.dirty.iter_mut().for_each(|w| *w = 0);
        map.dirtied_when = None;
        map.writeback_index = 0;
        for i in 0..self.slots.len() {
            let s = &mut self.slots[i];
            if s.live && s.key >> 40 == m as u64 {
                s.dirty = false;
                if !s.writeback && !s.reading {
                    self.index.remove(&s.key);
                    s.live = false;
                    self.free.push(i as u32);
                }
            }
        }
        self.ra.retain(|&(_, mm), _| mm != m);
    }

    /// The device sector of page `idx` of mapping `m`.
    pub(crate) fn sector_of(&self, m: u32, idx: u64) -> u64 {
        (self.mappings[m as usize].base + idx * PAGE_BYTES) / SECTOR_BYTES
    }

    /// The mapping and page of a cache bio starting at device `sector`.
    pub(crate) fn page_of(&self, m: u32, sector: u64) -> u64 {
        (sector * SECTOR_BYTES - self.mappings[m as usize].base) / PAGE_BYTES
    }

    /// Pages of mapping `m` a `bytes` request covers, for completions.
    pub(crate) fn pages_of(bytes: u64) -> u64 {
        bytes.div_ceil(PAGE_BYTES)
    }
}

/// `get_init_ra_size`: the first window for a read of `size` pages.
fn init_ra_size(size: u64, max: u64) -> u64 {
    let n = size.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages.
fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_follow_the_kernel_formulas() {
        // read_ahead_kb = 128: 32 pages. The kernel's comment: 1-2 pages → 16k, 3-4 → 32k,
        // 5-8 → 64k, more → 128k.
        assert_eq!(init_ra_size(1, 32), 4);
        assert_eq!(init_ra_size(2, 32), 4);
        assert_eq!(init_ra_size(3, 32), 8);
        assert_eq!(init_ra_size(8, 32), 16);
        assert_eq!(init_ra_size(9, 32), 32);
        assert_eq!(next_ra_size(1, 32), 4);
        assert_eq!(next_ra_size(4, 32), 8);
        assert_eq!(next_ra_size(16, 32), 32);
        assert_eq!(next_ra_size(32, 32), 32);
    }
}

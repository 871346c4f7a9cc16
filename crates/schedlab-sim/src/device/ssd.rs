//! A flash SSD: a controller with `channels` flash buses, `dies_per_channel` dies on
//! each, a host interface, and an optional write buffer.
//!
//! Sources: Agrawal, Prabhakaran, Wobber, Davis, Manasse & Panigrahy, "Design tradeoffs
//! for SSD performance" (USENIX ATC 2008) for the structure — pages striped over dies and
//! channels, a read as the die's array read (tR) followed by the page's transfer over the
//! shared channel, a write as the transfer followed by the die's program (tPROG), with
//! dies working in parallel and each channel carrying one transfer at a time; Chen, Koufaty
//! & Zhang, "Understanding intrinsic characteristics and system implications of flash
//! memory based solid state drives" (SIGMETRICS 2009) for sequential and random
//! throughput both following from that parallelism.
//!
//! The model:
//! - Page `p` (byte offset / `page_bytes`) lives on die `p mod dies`, which is on channel
//!   `die mod channels`: consecutive pages go to different channels first, then to the
//!   next die of each channel, so a large request uses every die.
//! - Each die serves its page operations in the order requests arrive. Each channel and
//!   the host link carry one transfer at a time, each transfer at the earliest time its
//!   data is ready and the bus is free — a transfer ready earlier may go before ones
//!   reserved later in time, so requests complete out of order as NCQ allows. A request
//!   starts after the command overhead.
//! - Read: per page, the die reads its array (tR), then the channel carries the bytes
//!   asked for out of it (the die stays busy until they are out); the host link carries
//!   the request's bytes as its pages arrive (it can start with the first page, cannot
//!   finish before the last page plus that page's own transfer); the request completes
//!   when the link has carried everything.
//! - Write: the host link carries the bytes into the controller, then per page the
//!   channel carries them to the die, which programs the page (tPROG). With a write
//!   buffer that has room the write completes when its bytes are in the controller (the
//!   buffer space is freed when its pages are programmed); otherwise when its last page
//!   is programmed. A cache flush (FLUSH CACHE EXT, `REQ_OP_FLUSH`) completes after the
//!   command overhead, once every buffered write is programmed (ATA8-ACS: the device
//!   writes its cached data before completing it); the requests after it are not held
//!   back (the HDD model holds them), and without a write buffer it costs the overhead
//!   only.
//! - Not modelled: the FTL (logical pages map to fixed dies; no garbage collection, no
//!   erase, no write amplification, no wear levelling), read caching, data compression
//!   (SandForce's), multi-plane and cache-mode operations, read-modify-write of partial
//!   pages (a partial page write programs the page once).

use std::collections::VecDeque;

use schedlab_spec::device::SsdParams;
use schedlab_spec::model::{IoOp, SECTOR_BYTES};

use super::{transfer_ns, DevCtx, Device};
use crate::io::{Request, RqId};
use crate::types::Time;

/// A bus's future: the intervals it is reserved for, in time order, disjoint; a new
/// transfer takes the earliest gap long enough at or after the time its data is ready.
#[derive(Default)]
struct Timeline {
    busy: Vec<(Time, Time)>,
}

impl Timeline {
    /// Reserve `len` ns from the earliest time ≥ `ready`; its start. Intervals over by
    /// `now` are forgotten, so the list holds only what is reserved ahead.
    fn reserve(&mut self, now: Time, ready: Time, len: u64) -> Time {
        let over = self.busy.partition_point(|&(_, end)| end <= now);
        self.busy.drain(..over);
        let mut at = ready;
        let mut i = 0;
        while i < self.busy.len() {
            let (start, end) = self.busy[i];
            if end <= at {
                i += 1;
                continue;
            }
            if start >= at + len {
                break;
            }
            at = end;
            i += 1;
        }
        self.insert(i, at, at + len);
        at
    }

    /// Insert `start..end` before index `i`, merged with neighbours it touches.
    fn insert(&mut self, i: usize, start: Time, end: Time) {
        let joins_prev = i > 0 && self.busy[i - 1].1 == start;
        let joins_next = i < self.busy.len() && self.busy[i].0 == end;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
    }
}

pub struct Ssd {
    p: SsdParams,
    die_free: Vec<Time>,
    channels: Vec<Timeline>,
    link: Timeline,
    /// Buffered writes: when their pages are programmed, and their bytes.
    buffered: VecDeque<(Time, u64)>,
    buffered_bytes: u64,
}

impl Ssd {
    pub fn new(p: SsdParams) -> Self {
        Ssd {
            die_free: vec![0; p.dies() as usize],
            channels: (0..p.channels).map(|_| Timeline::default()).collect(),
            link: Timeline::default(),
            buffered: VecDeque::new(),
            buffered_bytes: 0,
            p,
        }
    }

    /// The pages of bytes `start..end`: (die, channel, bytes of the request in it).
    fn pages(&self, start: u64, end: u64) -> impl Iterator<Item = (usize, usize, u64)> {
        let page = self.p.page_bytes;
        let dies = self.p.dies() as u64;
        let channels = self.p.channels as u64;
        (start / page..end.div_ceil(page)).map(move |pg| {
            let from = (pg * page).max(start);
            let to = ((pg + 1) * page).min(end);
            let die = pg % dies;
            (die as usize, (die % channels) as usize, to - from)
        })
    }

    fn channel_ns(&self, bytes: u64) -> u64 {
        transfer_ns(bytes, self.p.channel_bps)
    }

    fn link_ns(&self, bytes: u64) -> u64 {
        transfer_ns(bytes, self.p.interface_bps)
    }

    /// Reserve a read of `start..end` issued at `now`, starting at `t`: when it
    /// completes.
    fn read(&mut self, now: Time, t: Time, start: u64, end: u64) -> Time {
        let (mut first, mut last, mut last_bytes) = (Time::MAX, 0, 0);
        for (die, ch, bytes) in self.pages(start, end) {
            let sensed = t.max(self.die_free[die]) + self.p.read_ns;
            let len = self.channel_ns(bytes);
            let out = self.channels[ch].reserve(now, sensed, len) + len;
            self.die_free[die] = out;
            first = first.min(out);
            if out >= last {
                (last, last_bytes) = (out, bytes);
            }
        }
        // The link carries the request in one burst once its first page is out, timed so
        // that it does not get ahead of the last page.
        let len = self.link_ns(end - start);
        let ready = first.max((last + self.link_ns(last_bytes)).saturating_sub(len));
        self.link.reserve(now, ready, len) + len
    }

    /// Reserve a write of `start..end` issued at `now`, starting at `t`: when its bytes
    /// are in the controller, and when its last page is programmed.
    fn write(&mut self, now: Time, t: Time, start: u64, end: u64) -> (Time, Time) {
        let len = self.link_ns(end - start);
        let received = self.link.reserve(now, t, len) + len;
        let mut programmed = received;
        for (die, ch, bytes) in self.pages(start, end) {
            let len = self.channel_ns(bytes);
            let sent = self.channels[ch].reserve(now, received.max(self.die_free[die]), len) + len;
            self.die_free[die] = sent + self.p.program_ns;
            programmed = programmed.max(sent + self.p.program_ns);
        }
        (received, programmed)
    }

    /// Free the buffer space of writes programmed by `now`.
    fn drain_buffer(&mut self, now: Time) {
        let mut freed = 0;
        self.buffered.retain(|&(at, bytes)| {
            let done = at <= now;
            if done {
                freed += bytes;
            }
            !done
        });
        self.buffered_bytes -= freed;
    }
}

impl Device for Ssd {
    fn queue_depth(&self) -> u32 {
        self.p.queue_depth
    }

    fn size_bytes(&self) -> u64 {
        self.p.size_bytes
    }

    fn queue(&mut self, dc: &mut DevCtx, id: RqId, rq: &Request) {
        let now = dc.now();
        let t = now + self.p.overhead_ns;
        let start = rq.sector * SECTOR_BYTES;
        let end = start + rq.bytes;
        let done = match rq.op {
            // A cache flush: done once every buffered write is programmed.
            IoOp::Write if rq.flush => {
                self.drain_buffer(now);
                self.buffered.iter().map(|&(at, _)| at).fold(t, Time::max)
            }
            IoOp::Read => self.read(now, t, start, end),
            IoOp::Write => {
                self.drain_buffer(now);
                let fits = self.buffered_bytes + rq.bytes <= self.p.write_buffer_bytes;
                let (received, programmed) = self.write(now, t, start, end);
                if fits {
                    self.buffered.push_back((programmed, rq.bytes));
                    self.buffered_bytes += rq.bytes;
                    received
                } else {
                    programmed
                }
            }
        };
        dc.arm(done, id.0 as u64);
    }

    fn event(&mut self, _dc: &mut DevCtx, token: u64) -> Option<RqId> {
        Some(RqId(token as u32))
    }
}

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
//! - Each die, each channel and the host link is a resource reserved in the order
//!   requests arrive (first come, first served on each; a later request never slips into
//!   a gap left before an earlier one's reservation). A request starts after the command
//!   overhead.
//! - Read: per page, the die reads its array (tR), then the channel carries the bytes
//!   asked for out of it (the die stays busy until they are out); the host link carries
//!   the request's bytes as its pages arrive (it can start with the first page, cannot
//!   finish before the last page plus its own transfer); the request completes when the
//!   link has carried everything.
//! - Write: the host link carries the bytes into the controller, then per page the
//!   channel carries them to the die, which programs the page (tPROG). With a write
//!   buffer that has room the write completes when its bytes are in the controller (the
//!   buffer space is freed when its pages are programmed); otherwise when its last page
//!   is programmed.
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

pub struct Ssd {
    p: SsdParams,
    die_free: Vec<Time>,
    channel_free: Vec<Time>,
    link_free: Time,
    /// Buffered writes: when their pages are programmed, and their bytes.
    buffered: VecDeque<(Time, u64)>,
    buffered_bytes: u64,
}

impl Ssd {
    pub fn new(p: SsdParams) -> Self {
        Ssd {
            die_free: vec![0; p.dies() as usize],
            channel_free: vec![0; p.channels as usize],
            link_free: 0,
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

    /// Reserve a read of `start..end` from `t`: when it completes.
    fn read(&mut self, t: Time, start: u64, end: u64) -> Time {
        let (mut first, mut last, mut last_bytes) = (Time::MAX, 0, 0);
        for (die, ch, bytes) in self.pages(start, end) {
            let sensed = t.max(self.die_free[die]) + self.p.read_ns;
            let out = sensed.max(self.channel_free[ch]) + self.channel_ns(bytes);
            self.die_free[die] = out;
            self.channel_free[ch] = out;
            first = first.min(out);
            if out >= last {
                (last, last_bytes) = (out, bytes);
            }
        }
        let from = self.link_free.max(first);
        let done = (from + self.link_ns(end - start)).max(last + self.link_ns(last_bytes));
        self.link_free = done;
        done
    }

    /// Reserve a write of `start..end` from `t`: when its bytes are in the controller,
    /// and when its last page is programmed.
    fn write(&mut self, t: Time, start: u64, end: u64) -> (Time, Time) {
        let received = t.max(self.link_free) + self.link_ns(end - start);
        self.link_free = received;
        let mut programmed = received;
        for (die, ch, bytes) in self.pages(start, end) {
            let sent =
                received.max(self.channel_free[ch]).max(self.die_free[die]) + self.channel_ns(bytes);
            self.channel_free[ch] = sent;
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
            IoOp::Read => self.read(t, start, end),
            IoOp::Write => {
                self.drain_buffer(now);
                let fits = self.buffered_bytes + rq.bytes <= self.p.write_buffer_bytes;
                let (received, programmed) = self.write(t, start, end);
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

//! A hard disk: one actuator moving heads over zoned platters, an on-disk cache with
//! read-ahead and write-back, and native command queueing.
//!
//! Sources: Ruemmler & Wilkes, "An introduction to disk drive modeling" (IEEE Computer,
//! 1994) for the structure — seek, rotational latency, zoned transfer, caching with
//! read-ahead, write-back with later destaging, command overhead; Lee & Katz, "An
//! analytic performance model of disk arrays" (SIGMETRICS 1993) for the seek curve's form
//! (`schedlab_spec::device::SeekCurve`, fitted to a datasheet's single-track, average and
//! full-stroke seeks); Worthington, Ganger & Patt, "Scheduling algorithms for modern disk
//! drives" (SIGMETRICS 1994) for shortest-positioning-time-first, the order a disk with
//! queued commands serves them in; Hitachi's Deskstar specifications for the meaning of
//! the figures (the average seek over all seek lengths; the random-access time
//! overhead + seek + latency + transfer).
//!
//! The model:
//! - Geometry (`schedlab_spec::device::HddGeometry`): the media rate falls linearly with
//!   the radius from the outer to the inner tracks; a byte's track coordinate gives its
//!   cylinder and its angle. The platter turns at `rpm` from angle 0 at time 0, so where
//!   it is at any instant is known: the rotational wait is exact, not drawn.
//! - A media access costs the command overhead, the seek to the target's cylinder (none
//!   within a cylinder: head switches are free), the wait for its sector to come under the
//!   head, and the streaming of the bytes at the zone's rate.
//! - Commands waiting for the mechanism (at most `queue_depth`) are served shortest
//!   positioning time first (seek + rotational wait from where the head will be); with
//!   depth 1 there is never a choice, so the order is the arrival order. Plain SPTF can
//!   starve a far command while near ones keep coming; with `ncq_age_percent` = W > 0
//!   commands are aged as in Jacobson & Wilkes, "Disk scheduling algorithms based on
//!   rotational position" (HP Labs HPL-CSP-91-7, 1991: aged shortest access time first)
//!   in the form Worthington, Ganger & Patt give it (ASPTF(W)): the command chosen has
//!   the smallest positioning time less W × its time waiting. A command then waits at
//!   most about (longest positioning time) / W plus the service of the commands that
//!   arrived before that much of its wait had passed. Drives' own ageing rules are not
//!   published; W is a parameter (0, the default: plain SPTF).
//! - Read cache: `cache_segments` segments. After a media read the disk, when it has
//!   nothing else to do, keeps reading ahead (up to `read_ahead_bytes` past the last byte
//!   asked for) into that read's segment; another command stops it at once. A read that
//!   finds all its bytes in a segment, or that starts inside the read-ahead stream (a
//!   sequential reader), is served from the cache: it completes after the command
//!   overhead and the interface transfer, and not before the stream has read its last
//!   byte. Segments are reused least recently used first.
//! - Write cache (`write_cache`, on by default as ATA disks ship): a write completes
//!   once its data is in the cache (overhead + interface transfer) while at most
//!   `cache_bytes` are dirty; the disk destages dirty data (at most a segment at a time,
//!   nearest first) when no host command waits. A write that does not fit goes to the
//!   media as a command (write-through). Without the write cache every write does.
//! - Simplifications: the interface is never the bottleneck (transfers do not queue on
//!   the link, a media read's data reach the host as they are read); read segments and
//!   dirty data have separate budgets of `cache_bytes`; a read that overlaps dirty data
//!   only in part is read from the media, and overwritten dirty data is destaged twice;
//!   no FUA, no defects, no thermal recalibration, seek times equal for reads and writes.
//! - A cache flush (FLUSH CACHE EXT, the block layer's `REQ_OP_FLUSH`) completes, after
//!   the command overhead, once every byte the write cache holds is on the media
//!   (ATA8-ACS: the device writes its cached data before it completes the command). It is
//!   not a queued (NCQ) command: the commands the disk took before it are served first,
//!   then the dirty data is destaged, nearest first, and the commands that came after it
//!   wait until it completes (libata holds a non-queued command until the queue drains,
//!   and new commands behind it); they are then served from the media, a write among
//!   them written through (simplified: the drive would take it into its cache then).
//!   With the write cache off the flush costs the command overhead only.

use schedlab_spec::device::{HddGeometry, HddParams, SeekCurve};
use schedlab_spec::model::{IoOp, SECTOR_BYTES};

use super::{transfer_ns, DevCtx, Device};
use crate::io::{Request, RqId};
use crate::types::Time;

/// Token bit of the event that ends the mechanism's current operation (below it: a
/// request completed from the cache).
const MECH_DONE: u64 = 1 << 34;

/// A host command waiting for the mechanism.
#[derive(Clone, Copy, Debug)]
struct Cmd {
    id: RqId,
    /// When the disk received it (its age counts from there).
    arrived: Time,
    write: bool,
    start: u64,
    bytes: u64,
}

/// What the mechanism is doing until `end`.
#[derive(Clone, Copy, Debug)]
struct Op {
    end: Time,
    /// The request completing when it ends.
    completes: Option<RqId>,
    /// A read leaves the head streaming into this segment (read-ahead) from this byte.
    read: Option<(usize, u64)>,
    /// Dirty bytes written back by it.
    destaged: u64,
}

/// Read-ahead in progress while the mechanism is otherwise idle: since `t0` the head
/// streams from track coordinate `s0` into segment `seg`, up to byte `limit`.
#[derive(Clone, Copy, Debug)]
struct ReadAhead {
    seg: usize,
    t0: Time,
    s0: f64,
    limit: u64,
}

/// A cache segment holding bytes `start..end`; `used` orders reuse.
#[derive(Clone, Copy, Debug, Default)]
struct Segment {
    start: u64,
    end: u64,
    used: u64,
}

/// Dirty bytes `start..start + len` awaiting destage.
#[derive(Clone, Copy, Debug)]
struct Extent {
    start: u64,
    len: u64,
}

pub struct Hdd {
    p: HddParams,
    geo: HddGeometry,
    seek: SeekCurve,
    segment_bytes: u64,
    waiting: Vec<Cmd>,
    busy: Option<Op>,
    /// Track coordinate of the head (where its last operation left it).
    head: f64,
    ra: Option<ReadAhead>,
    segments: Vec<Segment>,
    uses: u64,
    dirty: Vec<Extent>,
    dirty_bytes: u64,
    /// FLUSH CACHE commands not yet completed, with their arrival times.
    flushes: Vec<(RqId, Time)>,
}

impl Hdd {
    /// The disk of `p` (checked by the spec parser: the seek curve fits).
    pub fn new(p: HddParams) -> Self {
        let geo = HddGeometry::new(&p);
        let seek = SeekCurve::fit(
            p.seek_track_ns,
            p.seek_avg_ns,
            p.seek_full_ns,
            geo.cylinders,
        )
        .expect("the spec parser checked the seek figures");
        Hdd {
            segment_bytes: p.cache_bytes / p.cache_segments as u64,
            waiting: Vec::with_capacity(p.queue_depth as usize),
            segments: vec![Segment::default(); p.cache_segments as usize],
            busy: None,
            head: 0.0,
            ra: None,
            uses: 0,
            dirty: Vec::new(),
            dirty_bytes: 0,
            flushes: Vec::new(),
            p,
            geo,
            seek,
        }
    }

    /// Seek time (ns) between track coordinates.
    fn seek_ns(&self, from: f64, to: f64) -> f64 {
        let d = (self.geo.cylinder(to) - self.geo.cylinder(from)).abs();
        if d == 0.0 {
            0.0
        } else {
            self.seek.at((d / self.geo.cylinders).min(1.0))
        }
    }

    /// Wait (ns) from `t` until the start of track coordinate `s` is under the head.
    fn rotation_ns(&self, t: f64, s: f64) -> f64 {
        let angle = (t / self.geo.period_ns).fract();
        (s.fract() - angle).rem_euclid(1.0) * self.geo.period_ns
    }

    /// Positioning (seek + rotational wait) from the head at time `t` to byte `b`.
    fn positioning_ns(&self, t: f64, b: u64) -> f64 {
        let s = self.geo.track(b);
        let seek = self.seek_ns(self.head, s);
        seek + self.rotation_ns(t + seek, s)
    }

    fn interface_ns(&self, bytes: u64) -> u64 {
        transfer_ns(bytes, self.p.interface_bps)
    }

    /// Stop read-ahead at `now`: the segment keeps what was read, the head stays there.
    fn stop_read_ahead(&mut self, now: Time) {
        let Some(ra) = self.ra.take() else {
            return;
        };
        let (s, end) = self.streamed(&ra, now);
        self.head = s;
        let seg = &mut self.segments[ra.seg];
        seg.end = seg.end.max(end);
        seg.start = seg.start.max(seg.end.saturating_sub(self.segment_bytes));
    }

    /// Where read-ahead `ra` has got to at `now`: track coordinate and byte (whole
    /// sectors).
    fn streamed(&self, ra: &ReadAhead, now: Time) -> (f64, u64) {
        let limit = self.geo.track(ra.limit);
        let s = self.geo.streamed(ra.s0, (now - ra.t0) as f64).min(limit);
        let b = (self.geo.byte_at(s) as u64 / SECTOR_BYTES * SECTOR_BYTES).min(ra.limit);
        (s, b)
    }

    /// When the bytes `a..b` are in the cache if a read of them is served from it: now
    /// (all there), the time the read-ahead stream reads `b`, or `None` (a miss).
    fn cached(&mut self, a: u64, b: u64, now: Time) -> Option<Time> {
        if self
            .dirty
            .iter()
            .any(|e| e.start <= a && b <= e.start + e.len)
        {
            return Some(now);
        }
        self.uses += 1;
        if let Some(ra) = self.ra {
            let (_, reached) = self.streamed(&ra, now);
            let seg = self.segments[ra.seg];
            let first = seg.start.max(reached.saturating_sub(self.segment_bytes));
            if first <= a && a <= ra.limit {
                return Some(self.stream_to(b, now));
            }
        }
        let uses = self.uses;
        let seg = self
            .segments
            .iter_mut()
            .find(|s| s.start <= a && b <= s.end && s.end > s.start)?;
        seg.used = uses;
        Some(now)
    }

    /// A read continuing the read-ahead stream up to byte `b`: when it will have read
    /// `b` (the stream goes on from there). Read-ahead past `now` keeps the mechanism
    /// busy until then.
    fn stream_to(&mut self, b: u64, now: Time) -> Time {
        let mut ra = self.ra.take().expect("a read-ahead stream");
        let s = self.geo.track(b);
        let at = ra.t0 + self.geo.stream_ns(ra.s0, s).max(0.0).round() as Time;
        self.segments[ra.seg].used = self.uses;
        if at <= now {
            // Already read: the stream goes on.
            ra.limit = ra
                .limit
                .max((b + self.p.read_ahead_bytes).min(self.p.size_bytes));
            self.ra = Some(ra);
            return now;
        }
        let seg = &mut self.segments[ra.seg];
        seg.end = seg.end.max(b);
        seg.start = seg.start.max(seg.end.saturating_sub(self.segment_bytes));
        self.head = s;
        self.busy = Some(Op {
            end: at,
            completes: None,
            read: Some((ra.seg, b)),
            destaged: 0,
        });
        at
    }

    /// The least recently used segment, emptied for bytes from `start`.
    fn take_segment(&mut self, start: u64) -> usize {
        let i = (0..self.segments.len())
            .min_by_key(|&i| self.segments[i].used)
            .expect("at least one segment");
        self.uses += 1;
        self.segments[i] = Segment {
            start,
            end: start,
            used: self.uses,
        };
        i
    }

    /// The mechanism is free at `now`: start the next operation, if any. While a FLUSH
    /// CACHE is pending only the commands that came before it are served, then the dirty
    /// data is destaged, and the flush completes once none is left.
    fn next_op(&mut self, dc: &mut DevCtx) {
        let now = dc.now();
        if self.busy.is_some() {
            return;
        }
        let barrier = self.flushes.first().map(|f| f.1);
        let served = |c: &Cmd| barrier.is_none_or(|b| c.arrived <= b);
        let command = self.waiting.iter().any(served);
        if barrier.is_some() && !command && self.dirty.is_empty() {
            let done = now + self.p.overhead_ns;
            for (id, _) in self.flushes.drain(..) {
                dc.arm(done, id.0 as u64);
            }
            return self.next_op(dc);
        }
        if !command && self.dirty.is_empty() {
            return;
        }
        self.stop_read_ahead(now);
        let t = now as f64 + self.p.overhead_ns as f64;
        if command {
            let i = self.next_command(t, barrier);
            let c = self.waiting.remove(i);
            let read = if c.write {
                None
            } else {
                Some((self.take_segment(c.start), c.start + c.bytes))
            };
            let op = Op {
                end: 0,
                completes: Some(c.id),
                read,
                destaged: 0,
            };
            self.media(dc, t, c.start, c.bytes, op);
        } else {
            let i = self.nearest(now as f64, self.dirty.iter().map(|e| e.start));
            let e = &mut self.dirty[i];
            let len = e.len.min(self.segment_bytes.max(SECTOR_BYTES));
            let start = e.start;
            e.start += len;
            e.len -= len;
            if e.len == 0 {
                self.dirty.remove(i);
            }
            let op = Op {
                end: 0,
                completes: None,
                read: None,
                destaged: len,
            };
            self.media(dc, now as f64, start, len, op);
        }
    }

    /// The index of the waiting command to serve when the mechanism moves at time `t`:
    /// the smallest positioning time less `ncq_age_percent` % of its time waiting (the
    /// first of equals: arrival order breaks ties).
    fn next_command(&self, t: f64, barrier: Option<Time>) -> usize {
        let w = self.p.ncq_age_percent as f64 / 100.0;
        let mut best = (0, f64::INFINITY);
        for (i, c) in self.waiting.iter().enumerate() {
            if barrier.is_some_and(|b| c.arrived > b) {
                continue;
            }
            let p = self.positioning_ns(t, c.start) - w * (t - c.arrived as f64);
            if p < best.1 {
                best = (i, p);
            }
        }
        best.0
    }

    /// The index of the target with the shortest positioning time from time `t` (the
    /// first of equals: arrival order breaks ties).
    fn nearest(&self, t: f64, targets: impl Iterator<Item = u64>) -> usize {
        let mut best = (0, f64::INFINITY);
        for (i, b) in targets.enumerate() {
            let p = self.positioning_ns(t, b);
            if p < best.1 {
                best = (i, p);
            }
        }
        best.0
    }

    /// Start `op`, a media access of `bytes` at byte `start`, positioning from time `t`.
    fn media(&mut self, dc: &mut DevCtx, t: f64, start: u64, bytes: u64, mut op: Op) {
        let (s0, s1) = (self.geo.track(start), self.geo.track(start + bytes));
        let at = t + self.positioning_ns(t, start) + self.geo.stream_ns(s0, s1);
        op.end = at.round() as Time;
        self.head = s1;
        if let Some((seg, b)) = op.read {
            let seg = &mut self.segments[seg];
            seg.end = b;
            seg.start = seg.start.max(b.saturating_sub(self.segment_bytes));
        }
        self.busy = Some(op);
        dc.arm(op.end, MECH_DONE);
    }

    /// The mechanism's operation ends: read-ahead follows a read; the next operation
    /// starts.
    fn op_done(&mut self, dc: &mut DevCtx) -> Option<RqId> {
        let op = self.busy.take().expect("an operation in progress");
        self.dirty_bytes -= op.destaged;
        if let Some((seg, b)) = op.read {
            if self.p.read_ahead_bytes > 0 {
                self.ra = Some(ReadAhead {
                    seg,
                    t0: op.end,
                    s0: self.head,
                    limit: (b + self.p.read_ahead_bytes).min(self.p.size_bytes),
                });
            }
        }
        self.next_op(dc);
        op.completes
    }
}

impl Device for Hdd {
    fn queue_depth(&self) -> u32 {
        self.p.queue_depth
    }

    fn size_bytes(&self) -> u64 {
        self.p.size_bytes
    }

    fn queue(&mut self, dc: &mut DevCtx, id: RqId, rq: &Request) {
        let now = dc.now();
        if rq.flush {
            self.flushes.push((id, now));
            self.next_op(dc);
            return;
        }
        let start = rq.sector * SECTOR_BYTES;
        let end = start + rq.bytes;
        let host = now + self.p.overhead_ns + self.interface_ns(rq.bytes);
        let behind_flush = !self.flushes.is_empty();
        match rq.op {
            _ if behind_flush => {}
            IoOp::Read => {
                let idle = self.busy.is_none();
                if let Some(ready) = self.cached(start, end, now) {
                    let done = host.max(ready);
                    match self.busy.as_mut() {
                        // The read continues the read-ahead stream: the mechanism
                        // streams until `ready`, and the read completes with it.
                        Some(op) if idle => {
                            if op.end == done {
                                op.completes = Some(id);
                            }
                            let end = op.end;
                            dc.arm(end, MECH_DONE);
                            if end != done {
                                dc.arm(done, id.0 as u64);
                            }
                        }
                        _ => dc.arm(done, id.0 as u64),
                    }
                    return;
                }
            }
            IoOp::Write
                if self.p.write_cache && self.dirty_bytes + rq.bytes <= self.p.cache_bytes =>
            {
                match self.dirty.last_mut() {
                    Some(e) if e.start + e.len == start => e.len += rq.bytes,
                    _ => self.dirty.push(Extent {
                        start,
                        len: rq.bytes,
                    }),
                }
                self.dirty_bytes += rq.bytes;
                dc.arm(host, id.0 as u64);
                self.next_op(dc);
                return;
            }
            _ => {}
        }
        self.waiting.push(Cmd {
            id,
            arrived: now,
            write: rq.op == IoOp::Write,
            start,
            bytes: rq.bytes,
        });
        self.next_op(dc);
    }

    fn event(&mut self, dc: &mut DevCtx, token: u64) -> Option<RqId> {
        if token & MECH_DONE != 0 {
            self.op_done(dc)
        } else {
            Some(RqId(token as u32))
        }
    }
}

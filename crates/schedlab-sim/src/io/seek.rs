//! Choosing between two requests by where the disk head is, as CFQ and BFQ do (CFQ's
//! `cfq_choose_req`, Linux 3.x block/cfq-iosched.c, which BFQ kept as `bfq_choose_req`,
//! Linux 6.1 block/bfq-iosched.c): a synchronous request before an asynchronous one; then
//! the nearer one ahead of the head; a request a short way behind it (within
//! `back_seek_max`) counts as `back_seek_penalty` times its distance; of two requests
//! both too far behind, the one farther back, for one long seek.

use super::{IoCtx, RqId};

/// The backward-seek tunables: `back_seek_max` (KiB) and `back_seek_penalty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackSeek {
    pub max_kib: u64,
    pub penalty: u64,
}

/// Which of `a` and `b` to serve next with the head at sector `last`.
pub fn choose_req(
    io: &IoCtx,
    a: Option<RqId>,
    b: Option<RqId>,
    last: u64,
    back: BackSeek,
) -> Option<RqId> {
    let (r1, r2) = match (a, b) {
        (None, x) | (x, None) => return x,
        (Some(r1), Some(r2)) if r1 == r2 => return Some(r2),
        (Some(r1), Some(r2)) => (r1, r2),
    };
    let (q1, q2) = (io.request(r1), io.request(r2));
    if q1.sync != q2.sync {
        return Some(if q1.sync { r1 } else { r2 });
    }
    // back_seek_max is in KiB: two sectors each.
    let back_max = back.max_kib * 2;
    // Distance ahead of the head, a short back seek at a penalty, or None: too far behind.
    let distance = |s: u64| {
        if s >= last {
            Some(s - last)
        } else if s + back_max >= last {
            Some((last - s) * back.penalty)
        } else {
            None
        }
    };
    let (s1, s2) = (q1.sector, q2.sector);
    Some(match (distance(s1), distance(s2)) {
        (Some(d1), Some(d2)) if d1 < d2 || (d1 == d2 && s1 >= s2) => r1,
        (Some(_), Some(_)) => r2,
        (Some(_), None) => r1,
        (None, Some(_)) => r2,
        // Both far behind the head: the one farther back, for a single back seek.
        (None, None) if s1 <= s2 => r1,
        (None, None) => r2,
    })
}

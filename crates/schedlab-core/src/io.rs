//! Where a `schedlab:io` request goes in its device or file: the one definition of the
//! spec's `offset` the simulator's block layer and the host runner both use.
//!
//! `seq` starts right after the previous request of the same task in the same space (0
//! for its first) and wraps to 0 when the request would not fit; `random` is a uniformly
//! random sector-aligned offset at which the request fits; a number is that byte offset.

use schedlab_spec::model::{IoOffset, SECTOR_BYTES};

/// The byte offset of a request of `bytes` bytes in a space (a device or a file) of
/// `size` bytes. `pos` is the task's sequential position in that space when it has one:
/// a sequential request needs one (a task's first is at 0), and every request a task
/// with one makes moves it to the request's end; a task without one keeps none, so a
/// fixed or random request never starts one. `random` draws a uniform `u64` (only asked
/// for a random offset).
pub fn place(
    pos: Option<&mut u64>,
    size: u64,
    bytes: u64,
    offset: IoOffset,
    random: impl FnOnce() -> u64,
) -> u64 {
    let start = match offset {
        IoOffset::At(b) => b,
        IoOffset::Sequential => {
            let at = pos.as_deref().copied().unwrap_or(0);
            if at + bytes > size {
                0
            } else {
                at
            }
        }
        IoOffset::Random => {
            let slots = (size - bytes) / SECTOR_BYTES + 1;
            (random() % slots) * SECTOR_BYTES
        }
    };
    if let Some(p) = pos {
        *p = start + bytes;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps_when_the_request_would_not_fit() {
        let mut pos = 0;
        let offs: Vec<u64> = (0..4)
            .map(|_| place(Some(&mut pos), 3 * 4096, 4096, IoOffset::Sequential, || 0))
            .collect();
        assert_eq!(offs, [0, 4096, 8192, 0]);
    }

    #[test]
    fn random_offsets_are_sector_aligned_and_fit() {
        let size = 10 * SECTOR_BYTES;
        for r in [0, 1, 8, 9, u64::MAX] {
            let at = place(None, size, 2 * SECTOR_BYTES, IoOffset::Random, || r);
            assert_eq!(at % SECTOR_BYTES, 0);
            assert!(at + 2 * SECTOR_BYTES <= size);
        }
        // Slot 8 of 9 is the last offset at which the request fits.
        assert_eq!(
            place(None, size, 2 * SECTOR_BYTES, IoOffset::Random, || 8),
            8 * SECTOR_BYTES
        );
    }

    #[test]
    fn a_task_without_a_position_keeps_none() {
        let mut pos = 100;
        assert_eq!(
            place(Some(&mut pos), 1 << 20, 512, IoOffset::At(4096), || 0),
            4096
        );
        assert_eq!(pos, 4608);
        assert_eq!(place(None, 1 << 20, 512, IoOffset::At(0), || 0), 0);
    }
}

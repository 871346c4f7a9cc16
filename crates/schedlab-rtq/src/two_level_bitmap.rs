//! `TwoLevelBitmap`: the per-priority lists of [`crate::BitmapLists`] with a two-level
//! bitmap — one summary word whose bit i says "bitmap word i is non-zero" — so that
//! find-first-set costs two word reads for up to 64 × 64 = 4096 priorities instead of a
//! scan of P/64 words.
//!
//! Sources: the TOPPERS/JSP bitmap search (`kernel/task.c` `bitmap_search`, l.191-209,
//! which narrows a 16-bit map by halves: the same idea one level down) and Linux's
//! `sched_find_first_bit` (`include/asm-generic/bitops/sched.h`), which scans the words
//! of the 100-bit `rt_prio_array` bitmap one by one; the O(1) scheduler's 140-bit array
//! did the same (`kernel/sched.c` 2.6.18, reference §1.3). A summary word over the bitmap
//! words is the textbook way to keep that O(1) for large priority ranges (256 or more);
//! no particular kernel's code is followed. Own code.
//!
//! Limit: at most 4096 levels (one summary word).

use crate::bitmap_lists::{PrioBitmap, PrioLists};
use crate::storage::Storage;

/// Summary word over up to 64 bitmap words.
pub struct TwoLevel<S: Storage> {
    summary: u64,
    words: S::Words,
}

/// Per-priority lists with a two-level bitmap.
pub type TwoLevelBitmap<S> = PrioLists<S, TwoLevel<S>>;

impl<S: Storage> PrioBitmap<S> for TwoLevel<S> {
    const NAME: &'static str = "two-level-bitmap";

    fn with_levels(levels: usize) -> Self {
        assert!(
            levels <= 64 * 64,
            "a two-level bitmap holds at most 4096 levels"
        );
        TwoLevel {
            summary: 0,
            words: S::words(levels.div_ceil(64)),
        }
    }

    #[inline]
    fn set(&mut self, p: usize) {
        self.words.as_mut()[p / 64] |= 1 << (p % 64);
        self.summary |= 1 << (p / 64);
    }

    #[inline]
    fn clear(&mut self, p: usize) {
        let w = &mut self.words.as_mut()[p / 64];
        *w &= !(1 << (p % 64));
        if *w == 0 {
            self.summary &= !(1 << (p / 64));
        }
    }

    #[inline]
    fn get(&self, p: usize) -> bool {
        self.words.as_ref()[p / 64] & (1 << (p % 64)) != 0
    }

    /// Summary word, then one bitmap word: 2 reads (1 when empty), average and worst.
    #[inline]
    fn first(&self) -> (Option<usize>, u32) {
        if self.summary == 0 {
            return (None, 1);
        }
        let i = self.summary.trailing_zeros() as usize;
        let w = self.words.as_ref()[i];
        (Some(i * 64 + w.trailing_zeros() as usize), 2)
    }

    fn words(&self) -> &[u64] {
        self.words.as_ref()
    }

    fn check(&self) {
        for (i, w) in self.words.as_ref().iter().enumerate() {
            assert_eq!(
                self.summary >> i & 1 == 1,
                *w != 0,
                "summary bit {i} ⇔ word non-zero"
            );
        }
        let n = self.words.as_ref().len();
        assert!(
            n == 64 || self.summary >> n == 0,
            "summary bits beyond the words"
        );
    }
}

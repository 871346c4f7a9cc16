//! Find-first-set strategies of the flat bitmap: the CPU's instruction, or TOPPERS/JSP's
//! portable software search for CPUs without one.
//!
//! Source: TOPPERS/JSP 1.4 `kernel/task.c` (`$Id: task.c,v 1.10 2004/05/18`; stored copy:
//! the ryoon/toppers-jsp mirror, commit 5fffc77b): `PRIMAP_BIT` (l.130-132: priority p is
//! bit p, bit 0 the highest priority) and `bitmap_search` (l.136-153), compiled unless the
//! port defines `CPU_BITMAP_SEARCH` (l.134). The search assumes at most 16 priorities: if
//! the low byte of the 16-bit map is zero it shifts the map right by 8 and adds 8 to the
//! result, then does the same with the low nibble and 4, and finally looks the lowest set
//! bit of the remaining nibble up in a 15-entry table indexed by `nibble - 1`
//! (`search_table`, l.139-140). `search_schedtsk` (l.162-169) calls it on `ready_primap`
//! each time the kernel must find the highest-priority ready task. The SH3/SH4 port
//! (`config/sh3/cpu_insn.h`, `$Id: cpu_insn.h,v 1.2 2001/01/19`, and `cpu_config.h`,
//! v1.24 2004/09/04) defines no `CPU_BITMAP_SEARCH`: SH-3 has no bit-search instruction, so
//! seed 002's kernel ran exactly this software search. Ports of CPUs that have one define
//! it (the M68040 port's `bfffo`, Blackfin's `signbits`). Own code.
//!
//! Generalisation: our bitmap words are 64 bits wide and may hold more than 16 levels, so
//! [`JspSearch`] first skips whole zero 16-bit quarters of the word (one test when ≤ 16
//! levels are used, as in the seed's kernel, the place of JSP's `assert` on the low 16
//! bits) and then searches the first non-zero quarter as JSP does. The table is JSP's
//! with one unused entry in front, indexed by the nibble itself rather than by
//! `nibble - 1`: the same values, and no index check is compiled (an SH-3 compiler folds
//! JSP's `- 1` into the table's address, so neither costs an instruction there).

/// How the lowest set bit of a non-zero bitmap word is found.
pub trait FirstSet {
    /// The name of the bitmap-lists back end using this strategy (`ReadyQueue::NAME`).
    const BACKEND_NAME: &'static str;
    /// Index of the lowest set bit of `word` (which must not be zero).
    fn lowest_set(word: u64) -> u32;
}

/// The CPU's find-first-set (`tzcnt`/`bsf` on x86-64, `rbit`+`clz` on Arm): what Linux,
/// FreeRTOS's port-optimised selection, Zephyr and JSP ports with `CPU_BITMAP_SEARCH` use.
#[derive(Debug, Clone, Copy, Default)]
pub struct HardwareFfs;

impl FirstSet for HardwareFfs {
    const BACKEND_NAME: &'static str = "bitmap-lists";

    #[inline]
    fn lowest_set(word: u64) -> u32 {
        word.trailing_zeros()
    }
}

/// TOPPERS/JSP's software `bitmap_search`: halves, then nibbles, then a table (see the
/// module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct JspSearch;

/// The lowest set bit of each nibble 1..=15 at index `nibble` (index 0, an empty nibble,
/// is never read): JSP's `search_table`, whose 15 values sit at `nibble - 1`, derived here
/// from their definition.
pub static NIBBLE_LOWEST_BIT: [u8; 16] = nibble_table();

const fn nibble_table() -> [u8; 16] {
    let mut t = [0u8; 16];
    let mut i = 1;
    while i < 16 {
        t[i] = (i as u8).trailing_zeros() as u8;
        i += 1;
    }
    t
}

/// JSP's search of a 16-bit map (`map` must not be zero): the lowest set bit's index.
#[inline]
pub fn jsp_bitmap_search(map: u16) -> u32 {
    debug_assert!(map != 0, "bitmap_search of an empty map");
    let mut bits = map as u32;
    let mut n = 0;
    if bits & 0x00ff == 0 {
        bits >>= 8;
        n += 8;
    }
    if bits & 0x0f == 0 {
        bits >>= 4;
        n += 4;
    }
    n + NIBBLE_LOWEST_BIT[(bits & 0x0f) as usize] as u32
}

impl FirstSet for JspSearch {
    const BACKEND_NAME: &'static str = "bitmap-lists-jsp";

    #[inline]
    fn lowest_set(word: u64) -> u32 {
        debug_assert!(word != 0, "search of an empty word");
        let (mut rest, mut base) = (word, 0);
        while rest & 0xffff == 0 {
            rest >>= 16;
            base += 16;
        }
        base + jsp_bitmap_search(rest as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_jsps() {
        // TOPPERS/JSP task.c l.139-140, element by element, from index 1
        assert_eq!(
            NIBBLE_LOWEST_BIT[1..],
            [0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0]
        );
    }

    #[test]
    fn software_search_agrees_with_the_instruction_on_every_16_bit_map() {
        for map in 1..=u16::MAX {
            assert_eq!(
                jsp_bitmap_search(map),
                map.trailing_zeros(),
                "map {map:#06x}"
            );
            assert_eq!(JspSearch::lowest_set(map as u64), map.trailing_zeros());
        }
    }

    #[test]
    fn wide_words_search_the_first_non_zero_quarter() {
        for shift in [0u32, 15, 16, 17, 31, 32, 47, 48, 63] {
            let low = 1u64 << shift;
            for high in [0u64, 1 << 63, u64::MAX << shift] {
                let w = low | high;
                assert_eq!(
                    JspSearch::lowest_set(w),
                    HardwareFfs::lowest_set(w),
                    "{w:#x}"
                );
            }
        }
    }
}

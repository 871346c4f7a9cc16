//! Backing memory of a queue: fixed arrays (`Fixed`, no allocation at all) or, with the
//! `alloc` feature, vectors sized at construction (`Heap`). A back end is generic over its
//! storage so that one implementation serves both; capacity never changes inside an
//! operation (only `grow`, called by the owner, reallocates).

/// How a back end gets its arrays: one per task slot (`Nodes`), one per priority level
/// (`Levels`) and the bitmap words (`Words`).
pub trait Storage {
    /// An array with one entry per task slot.
    type Nodes<T: Copy>: AsRef<[T]> + AsMut<[T]>;
    /// An array with one entry per priority level.
    type Levels<T: Copy>: AsRef<[T]> + AsMut<[T]>;
    /// Bitmap words.
    type Words: AsRef<[u64]> + AsMut<[u64]>;
    /// A node array for at least `n` slots, every entry `fill`.
    /// Panics if a fixed storage is too small.
    fn nodes<T: Copy>(n: usize, fill: T) -> Self::Nodes<T>;
    /// A level array for at least `p` levels, every entry `fill`.
    fn levels<T: Copy>(p: usize, fill: T) -> Self::Levels<T>;
    /// At least `w` zeroed words.
    fn words(w: usize) -> Self::Words;
    /// Make room for at least `n` slots, new entries `fill`. Returns false (and changes
    /// nothing) if the storage cannot grow that far.
    fn grow_nodes<T: Copy>(buf: &mut Self::Nodes<T>, n: usize, fill: T) -> bool;
}

/// Compile-time capacity: `N` task slots, `P` priority levels, `W` bitmap words
/// (`W * 64 >= P`; the two-level bitmap also needs `W <= 64`). No allocation, ever.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fixed<const N: usize, const P: usize, const W: usize>;

impl<const N: usize, const P: usize, const W: usize> Storage for Fixed<N, P, W> {
    type Nodes<T: Copy> = [T; N];
    type Levels<T: Copy> = [T; P];
    type Words = [u64; W];

    fn nodes<T: Copy>(n: usize, fill: T) -> [T; N] {
        assert!(n <= N, "capacity {n} exceeds the fixed {N} task slots");
        [fill; N]
    }

    fn levels<T: Copy>(p: usize, fill: T) -> [T; P] {
        assert!(p <= P, "{p} priority levels exceed the fixed {P}");
        [fill; P]
    }

    fn words(w: usize) -> [u64; W] {
        assert!(w <= W, "{w} bitmap words needed, the fixed storage has {W}");
        [0; W]
    }

    fn grow_nodes<T: Copy>(_buf: &mut [T; N], n: usize, _fill: T) -> bool {
        n <= N
    }
}

/// Capacity chosen at construction (and by `grow`): vectors on the heap.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, Copy, Default)]
pub struct Heap;

#[cfg(feature = "alloc")]
impl Storage for Heap {
    type Nodes<T: Copy> = alloc::vec::Vec<T>;
    type Levels<T: Copy> = alloc::vec::Vec<T>;
    type Words = alloc::vec::Vec<u64>;

    fn nodes<T: Copy>(n: usize, fill: T) -> alloc::vec::Vec<T> {
        alloc::vec![fill; n]
    }

    fn levels<T: Copy>(p: usize, fill: T) -> alloc::vec::Vec<T> {
        alloc::vec![fill; p]
    }

    fn words(w: usize) -> alloc::vec::Vec<u64> {
        alloc::vec![0; w]
    }

    fn grow_nodes<T: Copy>(buf: &mut alloc::vec::Vec<T>, n: usize, fill: T) -> bool {
        if buf.len() < n {
            buf.resize(n, fill);
        }
        true
    }
}

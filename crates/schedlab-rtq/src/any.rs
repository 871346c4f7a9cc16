//! `AnyQueue`: one of the four back ends (with `Heap` storage), chosen at run time — for a
//! simulator whose `--param readyq=...` picks the structure. Dispatch is a `match`, so
//! every operation costs one predictable branch more than the back end itself.

use crate::storage::Heap;
use crate::{BitmapLists, Prio, ReadyQueue, SingleList, TaskIdx, Tree, TwoLevelBitmap};

/// Which back end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// [`SingleList`].
    SingleList,
    /// [`BitmapLists`].
    BitmapLists,
    /// [`TwoLevelBitmap`].
    TwoLevelBitmap,
    /// [`Tree`].
    Tree,
}

impl Kind {
    /// Every back end, in the order of the documentation.
    pub const ALL: [Kind; 4] = [
        Kind::SingleList,
        Kind::BitmapLists,
        Kind::TwoLevelBitmap,
        Kind::Tree,
    ];

    /// The back end's stable name (its `ReadyQueue::NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::SingleList => <SingleList<Heap> as ReadyQueue>::NAME,
            Kind::BitmapLists => <BitmapLists<Heap> as ReadyQueue>::NAME,
            Kind::TwoLevelBitmap => <TwoLevelBitmap<Heap> as ReadyQueue>::NAME,
            Kind::Tree => <Tree<Heap> as ReadyQueue>::NAME,
        }
    }

    /// The back end called `name`, if any.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A ready queue whose back end is chosen at run time.
pub enum AnyQueue {
    /// One list in priority order.
    SingleList(SingleList<Heap>),
    /// Per-priority lists + bitmap.
    BitmapLists(BitmapLists<Heap>),
    /// Per-priority lists + two-level bitmap.
    TwoLevelBitmap(TwoLevelBitmap<Heap>),
    /// AVL tree by (priority, arrival).
    Tree(Tree<Heap>),
}

/// Forward a call to whichever back end is inside.
macro_rules! each {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            AnyQueue::SingleList($q) => $e,
            AnyQueue::BitmapLists($q) => $e,
            AnyQueue::TwoLevelBitmap($q) => $e,
            AnyQueue::Tree($q) => $e,
        }
    };
}

impl AnyQueue {
    /// An empty queue of back end `kind` with `levels` priorities and `n` task slots. O(n + P).
    pub fn new(kind: Kind, levels: usize, n: usize) -> Self {
        match kind {
            Kind::SingleList => AnyQueue::SingleList(SingleList::with_capacity(levels, n)),
            Kind::BitmapLists => AnyQueue::BitmapLists(BitmapLists::with_capacity(levels, n)),
            Kind::TwoLevelBitmap => {
                AnyQueue::TwoLevelBitmap(TwoLevelBitmap::with_capacity(levels, n))
            }
            Kind::Tree => AnyQueue::Tree(Tree::with_capacity(levels, n)),
        }
    }

    /// Which back end this is.
    pub fn kind(&self) -> Kind {
        match self {
            AnyQueue::SingleList(_) => Kind::SingleList,
            AnyQueue::BitmapLists(_) => Kind::BitmapLists,
            AnyQueue::TwoLevelBitmap(_) => Kind::TwoLevelBitmap,
            AnyQueue::Tree(_) => Kind::Tree,
        }
    }

    /// The back end's name.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Room for task indices 0..n (allocates; never called by an operation). O(n).
    pub fn grow(&mut self, n: usize) -> bool {
        each!(self, q => q.grow(n))
    }
}

impl ReadyQueue for AnyQueue {
    /// "any": use [`AnyQueue::name`] for the back end inside.
    const NAME: &'static str = "any";

    #[inline]
    fn levels(&self) -> usize {
        each!(self, q => q.levels())
    }

    #[inline]
    fn capacity(&self) -> usize {
        each!(self, q => q.capacity())
    }

    /// As the back end inside.
    #[inline(always)]
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        each!(self, q => q.push_tail(t, prio))
    }

    /// As the back end inside.
    #[inline(always)]
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        each!(self, q => q.push_head(t, prio))
    }

    /// As the back end inside.
    #[inline(always)]
    fn remove(&mut self, t: TaskIdx) {
        each!(self, q => q.remove(t))
    }

    /// As the back end inside.
    #[inline]
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        each!(self, q => q.change_priority(t, new))
    }

    /// As the back end inside.
    #[inline]
    fn rotate(&mut self, prio: Prio) {
        each!(self, q => q.rotate(prio))
    }

    /// As the back end inside.
    #[inline(always)]
    fn peek(&self) -> Option<TaskIdx> {
        each!(self, q => q.peek())
    }

    /// As the back end inside.
    #[inline]
    fn top_prio(&self) -> Option<Prio> {
        each!(self, q => q.top_prio())
    }

    /// O(1).
    #[inline(always)]
    fn is_queued(&self, t: TaskIdx) -> bool {
        each!(self, q => q.is_queued(t))
    }

    /// O(1).
    #[inline]
    fn prio_of(&self, t: TaskIdx) -> Option<Prio> {
        each!(self, q => q.prio_of(t))
    }

    /// O(1).
    #[inline]
    fn len(&self) -> usize {
        each!(self, q => q.len())
    }

    /// O(N).
    #[inline]
    fn for_each(&self, f: impl FnMut(TaskIdx, Prio) -> bool) {
        each!(self, q => q.for_each(f))
    }

    #[inline(always)]
    fn last_steps(&self) -> u32 {
        each!(self, q => q.last_steps())
    }

    /// As the back end inside.
    #[inline]
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        each!(self, q => q.prev_in_prio(t))
    }

    /// As the back end inside.
    #[inline]
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        each!(self, q => q.next_in_prio(t))
    }

    /// As the back end inside.
    #[inline]
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        each!(self, q => q.insert_after(t, after))
    }

    #[inline]
    fn check_invariants(&self) {
        each!(self, q => q.check_invariants())
    }
}

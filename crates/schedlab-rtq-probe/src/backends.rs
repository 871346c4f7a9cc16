//! The back ends under test and their measured entry points.
//!
//! Each (back end, operation) pair gets its own non-generic `#[no_mangle]`,
//! `#[inline(never)]` function, named `rtqp_m_<backend>_<op>`. That gives
//! - callgrind a fixed name to collect (`--toggle-collect=rtqp_m_*`): exactly the
//!   instructions of one operation (including whatever the back end inlined into it);
//! - `nm --print-size` a fixed symbol whose size is the operation's code size, with the
//!   back end's code inlined into it (legacy Rust symbol names would not tell the
//!   monomorphised copies apart);
//! - the time mode an entry address to flush from the caches for the cold variant.
//!
//! Every measured operation is one of JSP's ready-queue functions run by [`Kernel`] (the
//! one implementation of JSP's `schedtsk` rules) over the back end's queue: the queue
//! operation, plus a search for the next task only where JSP's kernel searches.
//!
//! `rtqp_s_<backend>_<op>` are the other operations of the ready queue (remove,
//! push_head, peek), never measured, present only so that the code-size table covers
//! each back end's whole interface.

use schedlab_rtq::{
    BitmapLists, BitmapListsJsp, Fixed, LeanList, Prio, ReadyQueue, SingleList, TaskIdx, Tree,
    TwoLevelBitmap,
};

use crate::kernel::Kernel;
use crate::plan::{CAPACITY, LEVELS};

/// Storage of every measured queue: CAPACITY task slots, LEVELS levels, one bitmap word.
pub type Store = Fixed<CAPACITY, LEVELS, 1>;

/// A measured entry point: `(kernel, task, priority) -> schedtsk`, the task that runs next.
pub type OpFn<Q> = fn(&mut Kernel<Q>, TaskIdx, Prio) -> Option<TaskIdx>;

/// One back end: how to build an empty queue and its three measured operations.
pub struct Backend<Q> {
    /// The back end's `ReadyQueue::NAME`.
    pub name: &'static str,
    /// Identifier used in symbol names (`single_list`, …).
    pub ident: &'static str,
    /// An empty queue with LEVELS levels and CAPACITY slots.
    pub make: fn() -> Q,
    /// act_tsk, chg_pri, rot_rdq entry points (index = `Op` order).
    pub ops: [OpFn<Q>; 3],
    /// The size-only entry points (remove, push_head, peek) as addresses: referencing
    /// them keeps the linker from discarding them.
    pub size_only: fn() -> [usize; 3],
}

/// Something done once per back end (generic, so each call is monomorphised).
pub trait Visitor {
    /// Called for each back end in report order.
    fn visit<Q: ReadyQueue>(&mut self, backend: &Backend<Q>);
}

/// Defines a back end's entry points and its [`Backend`] constant.
macro_rules! backend {
    ($konst:ident, $ty:ty, $ident:literal, $act:ident, $chg:ident, $rot:ident,
     $remove:ident, $head:ident, $peek:ident) => {
        /// act_tsk: JSP's `make_runnable` (no search).
        #[no_mangle]
        #[inline(never)]
        pub fn $act(k: &mut Kernel<$ty>, t: TaskIdx, p: Prio) -> Option<TaskIdx> {
            k.make_runnable(t, p)
        }
        /// chg_pri: JSP's `change_priority` (a search only when `schedtsk` drops).
        #[no_mangle]
        #[inline(never)]
        pub fn $chg(k: &mut Kernel<$ty>, t: TaskIdx, p: Prio) -> Option<TaskIdx> {
            k.change_priority(t, p)
        }
        /// rot_rdq: JSP's `rotate_ready_queue` (no search; the task argument is unused).
        #[no_mangle]
        #[inline(never)]
        pub fn $rot(k: &mut Kernel<$ty>, _t: TaskIdx, p: Prio) -> Option<TaskIdx> {
            k.rotate_ready_queue(p)
        }
        /// JSP's `make_non_runnable` (code size only).
        #[no_mangle]
        #[inline(never)]
        pub fn $remove(k: &mut Kernel<$ty>, t: TaskIdx) -> Option<TaskIdx> {
            k.make_non_runnable(t)
        }
        /// push at the head (code size only).
        #[no_mangle]
        #[inline(never)]
        pub fn $head(q: &mut $ty, t: TaskIdx, p: Prio) {
            q.push_head(t, p)
        }
        /// `search_schedtsk`: the highest-priority task and its priority (code size only).
        #[no_mangle]
        #[inline(never)]
        pub fn $peek(q: &$ty) -> (Option<TaskIdx>, Option<Prio>) {
            (q.peek(), q.top_prio())
        }
        /// The back end's description for the drivers.
        pub const $konst: Backend<$ty> = Backend {
            name: <$ty as ReadyQueue>::NAME,
            ident: $ident,
            make: || <$ty>::new(LEVELS),
            ops: [$act, $chg, $rot],
            size_only: || {
                let remove: fn(&mut Kernel<$ty>, TaskIdx) -> Option<TaskIdx> = $remove;
                let head: fn(&mut $ty, TaskIdx, Prio) = $head;
                let peek: fn(&$ty) -> (Option<TaskIdx>, Option<Prio>) = $peek;
                [remove as usize, head as usize, peek as usize]
            },
        };
    };
}

/// `SingleList` over the probe's storage.
pub type SingleListQ = SingleList<Store>;

backend!(
    SINGLE_LIST,
    SingleListQ,
    "single_list",
    rtqp_m_single_list_act_tsk,
    rtqp_m_single_list_chg_pri,
    rtqp_m_single_list_rot_rdq,
    rtqp_s_single_list_remove,
    rtqp_s_single_list_push_head,
    rtqp_s_single_list_peek
);

/// `LeanList`: the single ready queue as the seed's C would have it (255 task slots).
pub type SingleListLeanQ = LeanList;

backend!(
    SINGLE_LIST_LEAN,
    SingleListLeanQ,
    "single_list_lean",
    rtqp_m_single_list_lean_act_tsk,
    rtqp_m_single_list_lean_chg_pri,
    rtqp_m_single_list_lean_rot_rdq,
    rtqp_s_single_list_lean_remove,
    rtqp_s_single_list_lean_push_head,
    rtqp_s_single_list_lean_peek
);

/// `BitmapLists` (TOPPERS/JSP's structure) over the probe's storage.
pub type BitmapListsQ = BitmapLists<Store>;
/// The same, searched with TOPPERS/JSP's software `bitmap_search` (no find-first-set).
pub type BitmapListsJspQ = BitmapListsJsp<Store>;
/// `TwoLevelBitmap` over the probe's storage.
pub type TwoLevelBitmapQ = TwoLevelBitmap<Store>;
/// `Tree` (Zephyr's scalable queue) over the probe's storage.
pub type TreeQ = Tree<Store>;

backend!(
    BITMAP_LISTS,
    BitmapListsQ,
    "bitmap_lists",
    rtqp_m_bitmap_lists_act_tsk,
    rtqp_m_bitmap_lists_chg_pri,
    rtqp_m_bitmap_lists_rot_rdq,
    rtqp_s_bitmap_lists_remove,
    rtqp_s_bitmap_lists_push_head,
    rtqp_s_bitmap_lists_peek
);
backend!(
    BITMAP_LISTS_JSP,
    BitmapListsJspQ,
    "bitmap_lists_jsp",
    rtqp_m_bitmap_lists_jsp_act_tsk,
    rtqp_m_bitmap_lists_jsp_chg_pri,
    rtqp_m_bitmap_lists_jsp_rot_rdq,
    rtqp_s_bitmap_lists_jsp_remove,
    rtqp_s_bitmap_lists_jsp_push_head,
    rtqp_s_bitmap_lists_jsp_peek
);
backend!(
    TWO_LEVEL_BITMAP,
    TwoLevelBitmapQ,
    "two_level_bitmap",
    rtqp_m_two_level_bitmap_act_tsk,
    rtqp_m_two_level_bitmap_chg_pri,
    rtqp_m_two_level_bitmap_rot_rdq,
    rtqp_s_two_level_bitmap_remove,
    rtqp_s_two_level_bitmap_push_head,
    rtqp_s_two_level_bitmap_peek
);
backend!(
    TREE,
    TreeQ,
    "tree",
    rtqp_m_tree_act_tsk,
    rtqp_m_tree_chg_pri,
    rtqp_m_tree_rot_rdq,
    rtqp_s_tree_remove,
    rtqp_s_tree_push_head,
    rtqp_s_tree_peek
);

/// Calls `v` for every back end, in report order.
pub fn for_each_backend(v: &mut impl Visitor) {
    v.visit(&SINGLE_LIST);
    v.visit(&SINGLE_LIST_LEAN);
    v.visit(&BITMAP_LISTS);
    v.visit(&BITMAP_LISTS_JSP);
    v.visit(&TWO_LEVEL_BITMAP);
    v.visit(&TREE);
}

/// Symbols `nm` should find for a back end: the measured ops and the size-only ones.
pub fn symbols(ident: &str) -> Vec<String> {
    ["m_", "m_", "m_", "s_", "s_", "s_"]
        .iter()
        .zip([
            "act_tsk",
            "chg_pri",
            "rot_rdq",
            "remove",
            "push_head",
            "peek",
        ])
        .map(|(kind, op)| format!("rtqp_{kind}{ident}_{op}"))
        .collect()
}

/// The boundary callgrind dumps before (`--dump-before=rtqp_boundary`): one dump per case.
#[no_mangle]
#[inline(never)]
pub fn rtqp_boundary(case_no: usize) -> usize {
    core::hint::black_box(case_no)
}

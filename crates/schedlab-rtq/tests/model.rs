//! Model-based tests: random operation sequences applied to every back
//! end and to a plain reference model — one FIFO `Vec` per priority, the μITRON 4.0 rules
//! written as directly as possible — must give identical answers after every step:
//! peek, top_prio, len, is_queued/prio_of of every task, the neighbours within a priority
//! and the whole dispatch order (which pins FIFO within a priority).

use proptest::prelude::*;
use schedlab_rtq::{
    AnyQueue, BitmapLists, BitmapListsJsp, Fixed, Kind, LeanList, Prio, ReadyQueue, SingleList,
    TaskIdx, Tree, TwoLevelBitmap,
};

/// The reference: `lists[p]` holds priority p's ready tasks, head first.
struct Model {
    lists: Vec<Vec<TaskIdx>>,
}

impl Model {
    fn new(levels: usize) -> Self {
        Model {
            lists: vec![Vec::new(); levels],
        }
    }

    /// (priority, position) of `t`, if queued. Only the non-empty lists are searched.
    fn find(&self, t: TaskIdx) -> Option<(usize, usize)> {
        self.lists
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .find_map(|(p, l)| l.iter().position(|x| *x == t).map(|i| (p, i)))
    }

    fn take(&mut self, t: TaskIdx) -> usize {
        let (p, i) = self.find(t).expect("model: not queued");
        self.lists[p].remove(i);
        p
    }

    fn order(&self) -> Vec<(TaskIdx, Prio)> {
        let mut v = Vec::new();
        for (p, l) in self.lists.iter().enumerate() {
            v.extend(l.iter().map(|t| (*t, p as Prio)));
        }
        v
    }
}

/// A raw operation; indices are reduced to valid tasks/priorities when applied.
#[derive(Debug, Clone)]
enum Op {
    PushTail(u32, u16),
    PushHead(u32, u16),
    Remove(u32),
    ChangePriority(u32, u16),
    Rotate(u16),
    Peek,
    InsertAfter(u32, u32),
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0u32..1000;
    let p = 0u16..1000;
    prop_oneof![
        4 => (t.clone(), p.clone()).prop_map(|(t, p)| Op::PushTail(t, p)),
        2 => (t.clone(), p.clone()).prop_map(|(t, p)| Op::PushHead(t, p)),
        3 => t.clone().prop_map(Op::Remove),
        2 => (t.clone(), p.clone()).prop_map(|(t, p)| Op::ChangePriority(t, p)),
        2 => p.clone().prop_map(Op::Rotate),
        1 => Just(Op::Peek),
        1 => (t.clone(), t).prop_map(|(t, a)| Op::InsertAfter(t, a)),
    ]
}

/// The queues under test: every back end with fixed storage and through `AnyQueue`, the
/// lean single list and the bitmap lists searched as TOPPERS/JSP does.
struct Queues {
    single: SingleList<Fixed<64, 512, 8>>,
    lean: LeanList,
    bitmap: BitmapLists<Fixed<64, 512, 8>>,
    jsp: BitmapListsJsp<Fixed<64, 512, 8>>,
    two: TwoLevelBitmap<Fixed<64, 512, 8>>,
    tree: Tree<Fixed<64, 512, 8>>,
    any: Vec<AnyQueue>,
}

/// Apply `f` to every queue under test.
macro_rules! all {
    ($qs:expr, $q:ident => $e:expr) => {{
        {
            let $q = &mut $qs.single;
            $e;
        }
        {
            let $q = &mut $qs.lean;
            $e;
        }
        {
            let $q = &mut $qs.bitmap;
            $e;
        }
        {
            let $q = &mut $qs.jsp;
            $e;
        }
        {
            let $q = &mut $qs.two;
            $e;
        }
        {
            let $q = &mut $qs.tree;
            $e;
        }
        for $q in $qs.any.iter_mut() {
            $e;
        }
    }};
}

fn order_of<Q: ReadyQueue>(q: &Q) -> Vec<(TaskIdx, Prio)> {
    let mut v = Vec::new();
    q.for_each(|t, p| {
        v.push((t, p));
        true
    });
    v
}

/// What the model says, computed once per step: the dispatch order and, per task, its
/// priority and neighbours within the priority.
struct Expected {
    order: Vec<(TaskIdx, Prio)>,
    tasks: Vec<TaskView>,
}

type TaskView = (Option<Prio>, Option<TaskIdx>, Option<TaskIdx>);

impl Expected {
    fn of(m: &Model, cap: u32) -> Self {
        let mut tasks = vec![(None, None, None); cap as usize];
        for (p, l) in m.lists.iter().enumerate() {
            for (i, t) in l.iter().enumerate() {
                let prev = i.checked_sub(1).map(|j| l[j]);
                tasks[*t as usize] = (Some(p as Prio), prev, l.get(i + 1).copied());
            }
        }
        Expected {
            order: m.order(),
            tasks,
        }
    }
}

/// Compare `q` with the model in every observable way.
fn same<Q: ReadyQueue>(q: &Q, e: &Expected, name: &str) {
    q.check_invariants();
    assert_eq!(order_of(q), e.order, "{name}: dispatch order");
    assert_eq!(q.len(), e.order.len(), "{name}: len");
    assert_eq!(q.is_empty(), e.order.is_empty(), "{name}: is_empty");
    assert_eq!(q.peek(), e.order.first().map(|x| x.0), "{name}: peek");
    assert!(q.last_steps() >= 1, "{name}: steps");
    assert_eq!(
        q.top_prio(),
        e.order.first().map(|x| x.1),
        "{name}: top_prio"
    );
    for (t, (prio, prev, next)) in e.tasks.iter().enumerate() {
        let t = t as TaskIdx;
        assert_eq!(q.is_queued(t), prio.is_some(), "{name}: is_queued({t})");
        assert_eq!(q.prio_of(t), *prio, "{name}: prio_of({t})");
        assert_eq!(q.prev_in_prio(t), *prev, "{name}: prev_in_prio({t})");
        assert_eq!(q.next_in_prio(t), *next, "{name}: next_in_prio({t})");
    }
}

fn run(levels: usize, cap: u32, ops: &[Op]) {
    let mut qs = Queues {
        single: SingleList::with_capacity(levels, cap as usize),
        lean: LeanList::with_capacity(levels, cap as usize),
        bitmap: BitmapLists::with_capacity(levels, cap as usize),
        jsp: BitmapListsJsp::with_capacity(levels, cap as usize),
        two: TwoLevelBitmap::with_capacity(levels, cap as usize),
        tree: Tree::with_capacity(levels, cap as usize),
        any: Kind::ALL
            .iter()
            .map(|k| AnyQueue::new(*k, levels, cap as usize))
            .collect(),
    };
    let mut m = Model::new(levels);
    let lv = levels as u16;
    for op in ops {
        let mut applied = true;
        match *op {
            Op::PushTail(t, p) => {
                let (t, p) = (t % cap, p % lv);
                if m.find(t).is_none() {
                    m.lists[p as usize].push(t);
                    all!(qs, q => q.push_tail(t, p));
                } else {
                    applied = false;
                }
            }
            Op::PushHead(t, p) => {
                let (t, p) = (t % cap, p % lv);
                if m.find(t).is_none() {
                    m.lists[p as usize].insert(0, t);
                    all!(qs, q => q.push_head(t, p));
                } else {
                    applied = false;
                }
            }
            Op::Remove(t) => {
                let t = t % cap;
                if m.find(t).is_some() {
                    m.take(t);
                    all!(qs, q => q.remove(t));
                } else {
                    applied = false;
                }
            }
            Op::ChangePriority(t, p) => {
                let (t, p) = (t % cap, p % lv);
                if m.find(t).is_some() {
                    m.take(t);
                    m.lists[p as usize].push(t);
                    all!(qs, q => q.change_priority(t, p));
                } else {
                    applied = false;
                }
            }
            Op::Rotate(p) => {
                let l = &mut m.lists[(p % lv) as usize];
                if l.len() >= 2 {
                    let h = l.remove(0);
                    l.push(h);
                }
                all!(qs, q => q.rotate(p % lv));
            }
            Op::Peek => {
                let want = m.order().first().map(|x| x.0);
                all!(qs, q => assert_eq!(q.peek(), want));
            }
            Op::InsertAfter(t, a) => {
                let t = t % cap;
                let order = m.order();
                if m.find(t).is_none() && !order.is_empty() {
                    let after = order[a as usize % order.len()].0;
                    let (p, i) = m.find(after).unwrap();
                    m.lists[p].insert(i + 1, t);
                    all!(qs, q => q.insert_after(t, after));
                } else {
                    applied = false;
                }
            }
        }
        // the lean list recomputes the work of its last operation: the same as the
        // single list counts while it walks
        assert!(
            !applied || qs.lean.last_steps() == qs.single.last_steps(),
            "single-list-lean: last_steps {} after {op:?}, single-list {}",
            qs.lean.last_steps(),
            qs.single.last_steps()
        );
        let e = Expected::of(&m, cap);
        same(&qs.single, &e, "single-list");
        same(&qs.lean, &e, "single-list-lean");
        same(&qs.bitmap, &e, "bitmap-lists");
        same(&qs.jsp, &e, "bitmap-lists-jsp");
        same(&qs.two, &e, "two-level-bitmap");
        same(&qs.tree, &e, "tree");
        for q in &qs.any {
            same(q, &e, q.name());
        }
    }
}

proptest! {
    /// Typical RTOS sizes: 16 levels (TOPPERS), 32 (FreeRTOS), 100 (Linux RT), 140.
    #[test]
    fn back_ends_match_the_model(
        levels in prop_oneof![Just(16usize), Just(32), Just(100), Just(140)],
        cap in 1u32..=64,
        ops in prop::collection::vec(op(), 0..200),
    ) {
        run(levels, cap, &ops);
    }

    /// Degenerate ranges: one or two levels (everything is FIFO order), capacity 1.
    #[test]
    fn tiny_ranges_and_capacity_one(
        levels in 1usize..=2,
        cap in prop_oneof![Just(1u32), Just(2), 3u32..=8],
        ops in prop::collection::vec(op(), 0..100),
    ) {
        run(levels, cap, &ops);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// Large ranges (256, 512 levels): the two-level bitmap's territory.
    #[test]
    fn large_ranges(
        levels in prop_oneof![Just(256usize), Just(512)],
        cap in 1u32..=64,
        ops in prop::collection::vec(op(), 0..200),
    ) {
        run(levels, cap, &ops);
    }
}

/// A long sequence that keeps many tasks queued, so the tree rebalances and renumbers and
/// the lists grow long (the random cases above stay short).
#[test]
fn long_deterministic_sequence() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let ops: Vec<Op> = (0..3000)
        .map(|_| {
            let (a, b) = ((next() % 1000) as u32, (next() % 1000) as u16);
            match next() % 10 {
                0..=3 => Op::PushTail(a, b),
                4 => Op::PushHead(a, b),
                5 => Op::Remove(a),
                6 => Op::ChangePriority(a, b),
                7 => Op::Rotate(b),
                8 => Op::InsertAfter(a, b as u32),
                _ => Op::Peek,
            }
        })
        .collect();
    run(8, 64, &ops);
}

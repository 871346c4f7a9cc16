//! B-WF2Q+, BFQ's fair queueing in the service domain (block/bfq-wf2q.c, Linux 6.1), for
//! one flat group: a service tree per I/O priority class with its virtual time, the sum
//! of its entities' weights, an active set (queues with requests, waiting to be served)
//! and an idle set (queues that emptied before the virtual time reached their finish
//! time, remembered until it does so that they cannot gain by going idle).
//!
//! An entity (one `bfq_queue`) has a start and a finish timestamp: finish = start +
//! budget / weight (`bfq_calc_finish`, in fixed point `service << WFQ_SERVICE_SHIFT`).
//! The next entity served is, in the highest class with active entities, the eligible one
//! (start ≤ virtual time) with the smallest finish (`bfq_first_active_entity`), the
//! virtual time first jumping to the smallest start if nothing is eligible
//! (`bfq_calc_vtime_jump`); every sector served advances the virtual time by
//! service / weight sum (`bfq_bfqq_served`). Every `BFQ_CL_IDLE_TIMEOUT` the idle class is
//! looked at first, so it cannot starve forever (`bfq_lookup_next_entity`).
//!
//! Functions mirror the kernel's: `activate` (`__bfq_activate_entity` /
//! `__bfq_requeue_entity`), `deactivate` (`__bfq_deactivate_entity`),
//! `update_weight_prio` (`__bfq_entity_update_weight_prio`), `get_next`
//! (`bfq_get_next_queue`), `served`, `forget_idle`. The kernel keeps the active set in an
//! augmented red-black tree (ordered by finish, each node holding its subtree's minimum
//! start); here it is a vector scanned in O(active entities), with ties between equal
//! finish times going to the entity that entered first, as the tree's insertion
//! (`bfq_insert`, equal keys to the right) orders them. The kernel's `queue_weights_tree`
//! (how many queues with pending I/O have each weight, for `bfq_asymmetric_scenario`) is
//! kept here too, since weights change here.

use crate::types::Time;

/// `WFQ_SERVICE_SHIFT`: fixed-point shift of virtual times.
const WFQ_SERVICE_SHIFT: u32 = 22;
/// `BFQ_IOPRIO_CLASSES`: RT, best effort, idle.
pub const CLASSES: usize = 3;
/// The idle class's index.
pub const CLASS_IDLE: usize = 2;
/// `BFQ_CL_IDLE_TIMEOUT` (HZ / 5): the idle class is looked at first when it has not been
/// for this long.
pub const CL_IDLE_TIMEOUT_NS: Time = 200_000_000;

/// Which set of its service tree an entity is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tree {
    None,
    Active,
    Idle,
}

/// `struct bfq_entity` of a queue, with the queue's weight-raising coefficient (its
/// weight is `orig_weight × wr_coeff`).
#[derive(Clone, Debug)]
pub struct Entity {
    pub start: u64,
    pub finish: u64,
    /// Sectors the queue may be served in its current slot.
    pub budget: u64,
    /// Sectors served in the current slot.
    pub service: u64,
    pub weight: u64,
    pub orig_weight: u64,
    pub new_weight: u64,
    pub wr_coeff: u64,
    /// Service tree (class index) the entity is on.
    pub class: usize,
    pub new_class: usize,
    /// New weight, class or raising to apply at the next (re)queueing.
    pub prio_changed: bool,
    tree: Tree,
    /// Counted in its tree's weight sum (`on_st_or_in_serv`).
    on_st: bool,
    /// Order of entry into the active set (ties between equal finish times).
    seq: u64,
    /// The weight under which the entity is counted in the weights tree, if it is.
    weight_counter: Option<u64>,
}

impl Entity {
    pub fn new(weight: u64, class: usize, budget: u64) -> Entity {
        Entity {
            start: 0,
            finish: 0,
            budget,
            service: 0,
            weight,
            orig_weight: weight,
            new_weight: weight,
            wr_coeff: 1,
            class,
            new_class: class,
            prio_changed: false,
            tree: Tree::None,
            on_st: false,
            seq: 0,
            weight_counter: None,
        }
    }
}

/// `struct bfq_service_tree`.
#[derive(Clone, Debug, Default)]
struct ServiceTree {
    vtime: u64,
    wsum: u64,
    active: Vec<u32>,
    idle: Vec<u32>,
}

/// The root group's scheduling data (`struct bfq_sched_data`) and its entities.
#[derive(Clone, Debug, Default)]
pub struct Wf2q {
    pub ent: Vec<Entity>,
    st: [ServiceTree; CLASSES],
    in_service: Option<u32>,
    class_idle_last_service: Time,
    seq: u64,
    /// `queue_weights_tree`: (weight, queues counted with it), ascending.
    weights: Vec<(u64, u32)>,
}

/// `bfq_delta`: service in the virtual time domain.
fn delta(service: u64, weight: u64) -> u64 {
    (service << WFQ_SERVICE_SHIFT) / weight.max(1)
}

impl Wf2q {
    pub fn add_entity(&mut self, e: Entity) -> u32 {
        self.ent.push(e);
        self.ent.len() as u32 - 1
    }

    /// Any entity waiting in an active set (the root's `next_in_service` exists).
    pub fn has_active(&self) -> bool {
        self.st.iter().any(|st| !st.active.is_empty())
    }

    fn calc_finish(&mut self, id: u32, service: u64) {
        let e = &mut self.ent[id as usize];
        e.finish = e.start + delta(service, e.weight);
    }

    fn active_extract(&mut self, id: u32) {
        let e = &mut self.ent[id as usize];
        let st = &mut self.st[e.class];
        let pos = st.active.iter().position(|&x| x == id).expect("active");
        st.active.swap_remove(pos);
        e.tree = Tree::None;
    }

    fn active_insert(&mut self, id: u32) {
        self.seq += 1;
        let e = &mut self.ent[id as usize];
        e.seq = self.seq;
        e.tree = Tree::Active;
        self.st[e.class].active.push(id);
    }

    fn idle_extract(&mut self, id: u32) {
        let e = &mut self.ent[id as usize];
        let st = &mut self.st[e.class];
        let pos = st.idle.iter().position(|&x| x == id).expect("idle");
        st.idle.swap_remove(pos);
        e.tree = Tree::None;
    }

    /// `bfq_forget_entity`: no longer counted in its tree's weight sum.
    fn forget_entity(&mut self, id: u32) {
        let e = &mut self.ent[id as usize];
        e.on_st = false;
        self.st[e.class].wsum -= e.weight;
    }

    /// `bfq_forget_idle`: drop the idle entity with the smallest finish time once the
    /// virtual time has reached it (and, with nothing active, jump the virtual time to
    /// the idle set's last finish time as the kernel does).
    fn forget_idle(&mut self, class: usize) {
        let st = &self.st[class];
        let by_finish = |&a: &u32, &b: &u32| {
            let (ea, eb) = (&self.ent[a as usize], &self.ent[b as usize]);
            (ea.finish, ea.seq).cmp(&(eb.finish, eb.seq))
        };
        let first = st.idle.iter().copied().min_by(|a, b| by_finish(a, b));
        let last = st.idle.iter().copied().max_by(|a, b| by_finish(a, b));
        if let Some(last) = last {
            let f = self.ent[last as usize].finish;
            if st.active.is_empty() && f <= st.vtime {
                self.st[class].vtime = f;
            }
        }
        if let Some(first) = first {
            if self.ent[first as usize].finish <= self.st[class].vtime {
                self.idle_extract(first);
                self.forget_entity(first);
            }
        }
    }

    /// `bfq_bfqq_served`: the entity got `served` sectors; its tree's virtual time
    /// advances by served / weight sum.
    pub fn served(&mut self, id: u32, served: u64) {
        let class = self.ent[id as usize].class;
        self.ent[id as usize].service += served;
        let st = &mut self.st[class];
        st.vtime += delta(served, st.wsum);
        self.forget_idle(class);
    }

    fn weights_index(&self, weight: u64) -> Result<usize, usize> {
        self.weights.binary_search_by_key(&weight, |&(w, _)| w)
    }

    /// `bfq_weights_tree_add`: count the entity under its current weight.
    pub fn weights_add(&mut self, id: u32) {
        if self.ent[id as usize].weight_counter.is_some() {
            return;
        }
        let w = self.ent[id as usize].weight;
        match self.weights_index(w) {
            Ok(i) => self.weights[i].1 += 1,
            Err(i) => self.weights.insert(i, (w, 1)),
        }
        self.ent[id as usize].weight_counter = Some(w);
    }

    /// `bfq_weights_tree_remove`.
    pub fn weights_remove(&mut self, id: u32) {
        let Some(w) = self.ent[id as usize].weight_counter.take() else {
            return;
        };
        let i = self.weights_index(w).expect("a counted weight");
        self.weights[i].1 -= 1;
        if self.weights[i].1 == 0 {
            self.weights.remove(i);
        }
    }

    /// The part of `bfq_asymmetric_scenario` the weights tree answers: queues with
    /// pending I/O have different weights, and `id` is not one with the smallest.
    pub fn varied_weights_for(&self, id: u32) -> bool {
        let smallest = self.ent[id as usize].weight_counter.is_some()
            && self.ent[id as usize].weight_counter == self.weights.first().map(|&(w, _)| w);
        !smallest && self.weights.len() > 1
    }

    /// `__bfq_entity_update_weight_prio`: apply a pending weight, class or raising
    /// change, moving the weight between the weight sums.
    pub fn update_weight_prio(&mut self, id: u32, update_class_too: bool) {
        let e = &self.ent[id as usize];
        if !e.prio_changed {
            return;
        }
        let old_class = e.class;
        self.st[old_class].wsum -= e.weight;
        let e = &mut self.ent[id as usize];
        e.orig_weight = e.new_weight;
        if update_class_too {
            e.class = e.new_class;
        }
        if e.class == e.new_class {
            e.prio_changed = false;
        }
        let prev_weight = e.weight;
        let new_weight = e.orig_weight * e.wr_coeff;
        let wr_coeff = e.wr_coeff;
        let class = e.class;
        e.weight = new_weight;
        if prev_weight != new_weight {
            self.weights_remove(id);
            if wr_coeff == 1 {
                self.weights_add(id);
            }
        }
        self.st[class].wsum += new_weight;
        if class != old_class {
            self.ent[id as usize].start = self.st[class].vtime;
        }
    }

    /// `bfq_update_fin_time_enqueue`: finish from the budget (pulled forward to the
    /// virtual time for a queue that waited with budget left, divided by its raising
    /// coefficient), then into the active set.
    fn update_fin_time_enqueue(&mut self, id: u32, backshifted: bool) {
        self.update_weight_prio(id, true);
        let budget = self.ent[id as usize].budget;
        self.calc_finish(id, budget);
        let vtime = self.st[self.ent[id as usize].class].vtime;
        let e = &mut self.ent[id as usize];
        if backshifted && vtime > e.finish {
            let d = (vtime - e.finish) / e.wr_coeff;
            e.start += d;
            e.finish += d;
        }
        self.active_insert(id);
    }

    /// `__bfq_activate_requeue_entity`: queue a busy entity, or requeue one already
    /// active or in service. `non_blocking_wait_rq`: it emptied with budget left and got
    /// a request soon after (its timestamps may be back-shifted).
    pub fn activate(&mut self, id: u32, non_blocking_wait_rq: bool) {
        if self.in_service == Some(id) || self.ent[id as usize].tree == Tree::Active {
            self.requeue(id);
            return;
        }
        let class = self.ent[id as usize].class;
        let vtime = self.st[class].vtime;
        let e = &self.ent[id as usize];
        let (backshifted, min_vstart) = if non_blocking_wait_rq && vtime > e.finish {
            (true, e.finish)
        } else {
            (false, vtime)
        };
        if e.tree == Tree::Idle {
            self.idle_extract(id);
            let e = &mut self.ent[id as usize];
            e.start = min_vstart.max(e.finish);
        } else {
            let e = &mut self.ent[id as usize];
            e.start = min_vstart;
            e.on_st = true;
            self.st[class].wsum += e.weight;
        }
        self.update_fin_time_enqueue(id, backshifted);
    }

    /// `__bfq_requeue_entity`: an in-service entity restarts from the finish time of
    /// the service it got; an active one is repositioned after a budget change.
    pub fn requeue(&mut self, id: u32) {
        if self.in_service == Some(id) {
            let service = self.ent[id as usize].service;
            self.calc_finish(id, service);
            let e = &mut self.ent[id as usize];
            e.start = e.finish;
            if e.tree == Tree::Active {
                self.active_extract(id);
            }
        } else if self.ent[id as usize].tree == Tree::Active {
            self.active_extract(id);
        }
        self.update_fin_time_enqueue(id, false);
    }

    /// `__bfq_deactivate_entity`: the entity leaves its active set (or service); it is
    /// remembered in the idle set while its finish time is ahead of the virtual time.
    pub fn deactivate(&mut self, id: u32, ins_into_idle_tree: bool) {
        if !self.ent[id as usize].on_st {
            return;
        }
        let is_in_service = self.in_service == Some(id);
        let service = self.ent[id as usize].service;
        self.calc_finish(id, service);
        if is_in_service {
            self.in_service = None;
        } else {
            self.ent[id as usize].service = 0;
        }
        match self.ent[id as usize].tree {
            Tree::Active => self.active_extract(id),
            Tree::Idle if !is_in_service => self.idle_extract(id),
            _ => {}
        }
        let class = self.ent[id as usize].class;
        if !ins_into_idle_tree || self.ent[id as usize].finish <= self.st[class].vtime {
            self.forget_entity(id);
        } else {
            self.ent[id as usize].tree = Tree::Idle;
            self.st[class].idle.push(id);
        }
    }

    /// `bfq_first_active_entity` after `bfq_calc_vtime_jump`, updating the virtual time
    /// when `update_vtime`.
    fn lookup_in(&mut self, class: usize, update_vtime: bool) -> Option<u32> {
        let st = &self.st[class];
        let min_start = st
            .active
            .iter()
            .map(|&i| self.ent[i as usize].start)
            .min()?;
        let vtime = st.vtime.max(min_start);
        if update_vtime && vtime > st.vtime {
            self.st[class].vtime = vtime;
            self.forget_idle(class);
        }
        let st = &self.st[class];
        st.active
            .iter()
            .copied()
            .filter(|&i| self.ent[i as usize].start <= vtime)
            .min_by_key(|&i| (self.ent[i as usize].finish, self.ent[i as usize].seq))
    }

    /// `bfq_lookup_next_entity` + `bfq_get_next_queue`: the next entity to serve, made
    /// the in-service one and taken out of its active set.
    pub fn get_next(&mut self, now: Time) -> Option<u32> {
        let mut first_class = 0;
        if now > self.class_idle_last_service + CL_IDLE_TIMEOUT_NS {
            if !self.st[CLASS_IDLE].active.is_empty() {
                first_class = CLASS_IDLE;
            }
            self.class_idle_last_service = now;
        }
        let next = (first_class..CLASSES).find_map(|c| self.lookup_in(c, true))?;
        self.in_service = Some(next);
        self.active_extract(next);
        Some(next)
    }

    /// The entities in the active sets of every class (`bfqd->active_list`, in no
    /// order: [`Wf2q::active_order`] gives the list's).
    pub fn active_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.st.iter().flat_map(|st| st.active.iter().copied())
    }

    /// An active entity's place on `active_list`: `bfq_active_insert` adds at the head,
    /// so the highest value (the latest insertion) comes first.
    pub fn active_order(&self, id: u32) -> u64 {
        self.ent[id as usize].seq
    }

    /// `__bfq_bfqd_reset_in_service`.
    pub fn reset_in_service(&mut self) {
        self.in_service = None;
    }
}

//! A service tree: queues ordered by a key (a virtual service time, a deadline), with
//! the leftmost cached (CFQ's `struct cfq_rb_root`, block/cfq-iosched.c of Linux 3.x:
//! `cfq_service_tree_add` links a key equal to an existing one to its right, so equal
//! keys are served in the order they were added; `cfq_rb_first`, `cfq_rb_erase`).
//!
//! A sorted vector: O(n) insertion and removal in the number of queues on the tree, no
//! allocation once it has grown to the most queues it has held.

/// Entries `(key, id)`, lowest key first.
#[derive(Clone, Debug, Default)]
pub struct ServiceTree {
    entries: Vec<(i64, u32)>,
}

impl ServiceTree {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Add `id` with `key`, after every entry whose key is not greater.
    pub fn insert(&mut self, key: i64, id: u32) {
        let at = self.entries.partition_point(|&(k, _)| k <= key);
        self.entries.insert(at, (key, id));
    }

    /// Take `id`, added with `key`, off the tree.
    pub fn remove(&mut self, key: i64, id: u32) {
        let from = self.entries.partition_point(|&(k, _)| k < key);
        let at = from
            + self.entries[from..]
                .iter()
                .position(|&(_, i)| i == id)
                .expect("an entry is on the tree under its key");
        self.entries.remove(at);
    }

    /// The entry to serve first (`cfq_rb_first`).
    pub fn first(&self) -> Option<(i64, u32)> {
        self.entries.first().copied()
    }

    /// The entry served last (`rb_last`).
    pub fn last(&self) -> Option<(i64, u32)> {
        self.entries.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_key_first_and_equal_keys_in_insertion_order() {
        let mut t = ServiceTree::default();
        t.insert(5, 1);
        t.insert(3, 2);
        t.insert(5, 3);
        assert_eq!(t.first(), Some((3, 2)));
        assert_eq!(t.last(), Some((5, 3)));
        t.remove(3, 2);
        assert_eq!(t.first(), Some((5, 1)));
        assert_eq!(t.len(), 2);
    }
}

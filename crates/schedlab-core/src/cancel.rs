//! The caller's way to stop a run before its end (a front end's Ctrl-C, say), for every
//! engine: the simulator asks it at its budget checks, the host runner's main thread
//! every few milliseconds. A `true` stops the run, which returns an error saying so and
//! no result.

use std::sync::Arc;

/// A check the engine asks whether the caller wants the run stopped.
#[derive(Clone)]
pub struct Cancel(Arc<dyn Fn() -> bool + Send + Sync>);

impl Cancel {
    pub fn new(f: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Cancel(Arc::new(f))
    }

    /// Does the caller want the run stopped now?
    pub fn requested(&self) -> bool {
        (self.0)()
    }
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cancel(..)")
    }
}

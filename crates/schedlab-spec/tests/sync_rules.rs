//! Synchronisation rules checked before a run: mutexes are error-checking mutexes (a task
//! unlocks and waits only with a mutex it holds, and does not lock one it holds), a
//! resource declared in `resources` is used only as its type, and `schedlab:exit` means
//! what it says.

use schedlab_spec::parse_spec;

fn refused(text: &str) -> schedlab_spec::SpecError {
    match parse_spec(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e,
    }
}

fn accepted(text: &str) {
    if let Err(e) = parse_spec(text) {
        panic!("refused: {e}\n{text}");
    }
}

#[test]
fn unlock_by_a_task_that_does_not_hold_the_mutex_is_refused() {
    // b unlocks the mutex a locks: EPERM for an error-checking mutex.
    let e = refused(
        r#"{"tasks": {"a": {"loop": 1, "lock": "m", "run": 10, "unlock": "m"},
                       "b": {"loop": 1, "run": 5, "unlock": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.b.unlock");
    assert!(
        e.message
            .contains("task \"b\" unlocks mutex \"m\", which it does not hold"),
        "{e}"
    );
    assert!(e.message.contains("EPERM"), "{e}");
}

#[test]
fn a_double_unlock_is_refused_at_the_second() {
    let e = refused(r#"{"tasks": {"t": {"loop": 1, "lock": "m", "unlock": "m", "unlock1": "m"}}}"#);
    assert_eq!(e.path, "$.tasks.t.unlock1");
    assert!(e.message.contains("does not hold"), "{e}");
}

#[test]
fn locking_a_held_mutex_again_is_refused() {
    let e = refused(r#"{"tasks": {"t": {"loop": 1, "lock": "m", "lock1": "m", "unlock": "m"}}}"#);
    assert_eq!(e.path, "$.tasks.t.lock1");
    assert!(
        e.message
            .contains("already holds (locked at $.tasks.t.lock)"),
        "{e}"
    );
    assert!(e.message.contains("EDEADLK"), "{e}");
}

#[test]
fn a_wait_without_holding_its_mutex_is_refused() {
    let e = refused(
        r#"{"tasks": {"t": {"loop": 1, "lock": "m", "unlock": "m", "wait": {"ref": "c", "mutex": "m"}},
                       "u": {"loop": 1, "lock": "m", "signal": "c", "unlock": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.wait");
    assert!(
        e.message
            .contains("waits on condition \"c\" with mutex \"m\", which it does not hold"),
        "{e}"
    );
    let e = refused(
        r#"{"tasks": {"t": {"loop": 1, "lock": "m", "unlock": "m", "sync": {"ref": "c", "mutex": "m"}},
                       "u": {"loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.sync");
}

#[test]
fn a_lock_held_across_phases_and_loops_is_fine() {
    // Locked in one phase, unlocked in the next, round and round.
    accepted(
        r#"{"global": {"duration": 1}, "tasks": {"t": {"phases": {
            "take": {"loop": 1, "lock": "m", "run": 10},
            "give": {"loop": 1, "run": 10, "unlock": "m"}}}}}"#,
    );
    // suspend/resume lock and unlock their own name around the wait and the broadcast.
    accepted(
        r#"{"global": {"duration": 1}, "tasks": {"s": {"suspend": "x", "run": 10},
            "r": {"run": 10, "resume": "x"}}}"#,
    );
}

#[test]
fn a_lock_kept_at_the_end_of_a_repeated_body_is_a_relock_on_its_next_run() {
    // The phase runs twice: the second lock finds the mutex still held.
    let e = refused(
        r#"{"tasks": {"t": {"phases": {"p": {"loop": 2, "unlock": "m", "lock": "m"}}, "loop": 1},
                       "u": {"loop": 1, "lock": "m", "unlock": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.phases.p.unlock");
    let e = refused(
        r#"{"tasks": {"t": {"phases": {"p": {"loop": 2, "lock": "m", "run": 1}}, "loop": 1},
                       "u": {"loop": 1, "lock": "m", "unlock": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.phases.p.lock");
    assert!(e.message.contains("already holds"), "{e}");
    // The same body run once is fine (the task exits holding the mutex).
    accepted(
        r#"{"tasks": {"t": {"phases": {"p": {"loop": 1, "lock": "m", "run": 1}}, "loop": 1},
                       "u": {"loop": 1, "lock": "m", "unlock": "m"}}}"#,
    );
}

#[test]
fn nothing_after_exit_is_checked() {
    accepted(
        r#"{"tasks": {"t": {"loop": 1, "lock": "m", "unlock": "m", "schedlab:exit": true, "unlock1": "m"}}}"#,
    );
}

#[test]
fn exit_false_is_refused() {
    let e = refused(r#"{"tasks": {"t": {"loop": 1, "run": 1, "schedlab:exit": false}}}"#);
    assert_eq!(e.path, "$.tasks.t.schedlab:exit");
    assert!(e.message.contains("expected true"), "{e}");
    assert!(e.message.contains("leave the event out"), "{e}");
    for v in ["\"\"", "null", "1", "\"yes\""] {
        let e = refused(&format!(
            r#"{{"tasks": {{"t": {{"loop": 1, "run": 1, "schedlab:exit": {v}}}}}}}"#
        ));
        assert_eq!(e.path, "$.tasks.t.schedlab:exit", "{v}");
    }
    let s =
        parse_spec(r#"{"tasks": {"t": {"loop": 1, "run": 1, "schedlab:exit": true}}}"#).unwrap();
    assert_eq!(s.tasks[0].phases[0].events.len(), 2);
}

#[test]
fn a_declared_resource_is_used_only_as_its_type() {
    let e = refused(
        r#"{"resources": {"b": {"type": "barrier"}},
            "tasks": {"t": {"loop": 1, "lock": "b", "unlock": "b"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.lock");
    assert!(
        e.message.contains(
            "declared as type \"barrier\" at $.resources.b.type, but used here as a mutex"
        ),
        "{e}"
    );
    let e = refused(
        r#"{"resources": {"m": {"type": "mutex"}},
            "tasks": {"t": {"loop": 1, "barrier": "m"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.barrier");
    let e = refused(
        r#"{"resources": {"m": {"type": "mutex"}},
            "tasks": {"t": {"loop": 1, "lock": "x", "wait": {"ref": "m", "mutex": "x"}, "unlock": "x"},
                      "u": {"loop": 1, "lock": "x", "signal": "m", "unlock": "x"}}}"#,
    );
    assert_eq!(e.path, "$.tasks.t.wait");
    assert!(
        e.message.contains("used here as a condition variable"),
        "{e}"
    );
    // Declared as what they are, they are fine (a condition may be declared as rt-app's
    // wait, signal or broadcast type; suspend/resume names as a mutex or a condition).
    accepted(
        r#"{"resources": {"m": {"type": "mutex"}, "c": {"type": "signal"}, "b": {"type": "barrier"},
                          "tick": {"type": "timer"}, "s": {"type": "wait"}},
            "tasks": {"t": {"loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m",
                            "timer": {"ref": "tick", "period": 1000}, "suspend": "s"},
                      "u": {"loop": 1, "lock": "m", "signal": "c", "unlock": "m", "barrier": "b", "resume": "s"},
                      "v": {"loop": 1, "barrier": "b"}}}"#,
    );
}

//! `freebsd-4bsd` pinned to FreeBSD's sys/kern/sched_4bsd.c: estcpu per tick up to
//! ESTCPULIM (`sched_clock_tick`), its decay once a second by
//! `2·loadav / (2·loadav + FSCALE)` (`schedcpu`, with kern_synch.c's `loadav` every 5 s),
//! the user priority `PUSER + estcpu / INVERSE_ESTCPU_WEIGHT + (nice − PRIO_MIN)`
//! (`resetpriority`), the decay owed to a sleeper at wake-up (`updatepri`) — driven through
//! the scheduler core (`SchedCore`, the engine's protocol) — and end-to-end runs of specs:
//! the 100 ms quantum, the CPU shares of nice 0 and nice 10, determinism. Every expected
//! value is computed here from the source's formulas, not by the policy's functions.
mod common;
use common::*;

use schedlab_sim::cpu::freebsd_4bsd::Freebsd4Bsd;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

const C0: CpuId = CpuId(0);
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

// The source's constants, written out: FSHIFT 11, cexp[0] = exp(-1/12) in fixed point,
// INVERSE_ESTCPU_WEIGHT = 8 * smp_cpus, ESTCPULIM's ceiling for one CPU
// 8 * (1 * (20 - -20) - 4) + 8 - 1 = 295, PUSER = 120.
const FSCALE: u64 = 2048;
const CEXP: u64 = 1884; // (0.9200444146293232 * 2048) truncated
const IEW: u64 = 8;
const ESTCPU_MAX: u64 = 295;

fn decay(ld: u64, est: u64) -> u64 {
    2 * ld * est / (2 * ld + FSCALE)
}

fn loadav(ld: u64, nrun: u64) -> u64 {
    (CEXP * ld + nrun * FSCALE * (FSCALE - CEXP)) >> 11
}

fn user_pri(est: u64, nice: i64) -> u64 {
    (120 + est / IEW + (nice + 20) as u64).clamp(120, 223)
}

fn other(nice: i32) -> SchedAttrs {
    SchedAttrs {
        policy: Policy::Other,
        rt_priority: 0,
        nice,
        dl: None,
        slice_ns: None,
    }
}

fn machine(hz: u32) -> SchedCore<Freebsd4Bsd> {
    SchedCore::bare(Freebsd4Bsd::new(1), 1, hz)
}

fn start(core: &mut SchedCore<Freebsd4Bsd>, nice: i32) -> TaskId {
    let t = core.spawn(other(nice), CpuMask::first_n(1), None);
    core.wake_up_new_task(t, None).unwrap();
    core.process_resched();
    t
}

/// CPU 0's tick at `now`, and the reschedule it may ask for.
fn tick_at(core: &mut SchedCore<Freebsd4Bsd>, now: u64) {
    core.set_now(now);
    core.tick(C0);
    core.process_resched();
}

/// A lone hog at HZ 100 for 12 s: +1 per tick, and at each second the decay by the load
/// average (0 until the first sample at 5 s, which forgets everything; then the sample
/// of one runnable thread, 164/2048).
#[test]
fn estcpu_grows_per_tick_and_decays_each_second_by_the_load() {
    let hz = 100;
    let mut core = machine(hz);
    let hog = start(&mut core, 0);
    let (mut est, mut ld, mut second) = (0u64, 0u64, 0u64);
    for k in 1..=12 * hz as u64 {
        let now = k * S / hz as u64;
        while second < now / S {
            second += 1;
            if second.is_multiple_of(5) {
                ld = loadav(ld, 1);
            }
            est = decay(ld, est);
        }
        est = (est + 1).min(ESTCPU_MAX);
        tick_at(&mut core, now);
        assert_eq!(core.policy.estcpu(hog) as u64, est, "at {now} ns");
        assert_eq!(core.policy.priority(hog) as u64, user_pri(est, 0));
        if k == 5 * hz as u64 {
            // By hand: 100 ticks since 4 s, decayed by 328 / (328 + 2048) → 13, + 1.
            assert_eq!((ld, est), (164, 14));
        }
    }
    assert_eq!(core.policy.ldavg(), ld);
}

/// At HZ 1000 a hog reaches ESTCPULIM (295) within the second: priority
/// 120 + 295/8 + 20 = 176; nice 10 adds 10 levels to the same estcpu.
#[test]
fn user_priority_from_estcpu_and_nice() {
    let mut core = machine(1000);
    let hog = start(&mut core, 0);
    let nice10 = core.spawn(other(10), CpuMask::first_n(1), None);
    core.wake_up_new_task(nice10, None).unwrap();
    assert_eq!(core.policy.priority(nice10), 150, "120 + 0 + (10 + 20)");
    assert_eq!(core.policy.priority(hog), 140, "120 + 0 + 20");
    // The hog keeps the CPU: nice10 ranks worse until the hog's estcpu passes 80.
    for k in 1..=400u64 {
        tick_at(&mut core, k * MS);
        let est = core.policy.estcpu(hog) as u64;
        if core.ctx.curr(C0) == Some(hog) {
            assert_eq!(core.policy.priority(hog) as u64, user_pri(est, 0));
        }
    }
    assert!(core.policy.estcpu(hog) as u64 >= 80);
    let mut core = machine(1000);
    let hog = start(&mut core, 0);
    for k in 1..=999u64 {
        tick_at(&mut core, k * MS);
    }
    assert_eq!(core.policy.estcpu(hog) as u64, ESTCPU_MAX);
    assert_eq!(core.policy.priority(hog), 176);
}

/// A thread asleep for more than a second is skipped by schedcpu (its estcpu frozen) and
/// is owed `slptime − 2` decays when it wakes (`updatepri`); woken, it outranks the hogs
/// and the CPU reschedules to it (`maybe_resched`).
#[test]
fn a_sleeper_is_owed_its_decay_at_wake_up_and_outranks_the_hogs() {
    let hz = 100u64;
    let mut core = machine(hz as u32);
    let _hogs = [(); 3].map(|_| start(&mut core, 0));
    let sleeper = start(&mut core, 0);
    let mut k = 0u64;
    let mut now = 0;
    // Run until 30 s, then until the sleeper is current; it blocks there.
    while now < 30 * S || core.ctx.curr(C0) != Some(sleeper) {
        k += 1;
        now = k * S / hz;
        tick_at(&mut core, now);
    }
    core.block(C0, PrevState::Sleeping);
    core.process_resched();
    assert!(now < 31 * S);
    // 31 s: it ran during the second (awake, decayed); 32 s: slptime 1 (decayed);
    // 33 s on: slptime > 1, frozen.
    while now < 33 * S + S / 2 {
        k += 1;
        now = k * S / hz;
        tick_at(&mut core, now);
    }
    let frozen = core.policy.estcpu(sleeper) as u64;
    let pri_asleep = core.policy.priority(sleeper) as u64;
    assert!(frozen >= 16, "the sleeper had run: estcpu {frozen}");
    while now < 40 * S + S / 2 {
        k += 1;
        now = k * S / hz;
        tick_at(&mut core, now);
    }
    assert_eq!(
        core.policy.estcpu(sleeper) as u64,
        frozen,
        "frozen while asleep"
    );
    // Woken at 40.5 s: schedcpu counted slptime 9 (32 s .. 40 s): 7 decays.
    let ld = core.policy.ldavg();
    assert!(9 <= 5 * 2 * ld, "not cleared: slptime <= 5 * loadfactor");
    let mut want = frozen;
    for _ in 0..7 {
        want = decay(ld, want);
    }
    core.set_now(now + MS);
    core.try_to_wake_up(sleeper, None, false).unwrap();
    assert_eq!(core.policy.estcpu(sleeper) as u64, want);
    let pri = core.policy.priority(sleeper) as u64;
    assert_eq!(pri, user_pri(want, 0));
    assert!(pri < pri_asleep, "priority improved: {pri} < {pri_asleep}");
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(sleeper), "it outranks the hogs");
}

fn hogs_spec(a_nice: i32, b_nice: i32, hz: u32) -> String {
    format!(
        r#"{{"global": {{"duration": 1000}},
            "tasks": {{"a": {{"priority": {a_nice}, "loop": 1, "run": -1}},
                      "b": {{"priority": {b_nice}, "loop": 1, "run": -1}}}},
            "schedlab": {{"machine": {{"cpus": 1, "hz": {hz}}}}}}}"#
    )
}

/// Run a spec's text (the invariant checker on when `check`): the result as JSON.
fn run_spec(text: &str, check: bool, duration_ms: u64) -> serde_json::Value {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some("freebsd-4bsd".into()),
        check,
        duration_ns: Some(duration_ms * MS),
        ..Default::default()
    };
    schedlab_sim::simulate_text(text, &cfg)
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
}

fn run(text: &str, duration_ms: u64) -> serde_json::Value {
    run_spec(text, true, duration_ms)
}

/// Two equal hogs take the CPU in turns of the 100 ms quantum (`sched_slice` = hz / 10):
/// a runs 0–100 ms, b 100–200 ms, a 200–300 ms.
#[test]
fn equal_hogs_alternate_every_100_ms() {
    for (ms, a, b) in [
        (100, 100, 0),
        (150, 100, 50),
        (200, 100, 100),
        (250, 150, 100),
    ] {
        let r = run(&hogs_spec(0, 0, 1000), ms);
        let (ca, cb) = (cpu_ns_in(&r, "a"), cpu_ns_in(&r, "b"));
        let close = |got: u64, want: u64| got.abs_diff(want * MS) <= MS;
        assert!(
            close(ca, a) && close(cb, b),
            "at {ms} ms: a {ca} b {cb}, want {a} / {b} ms"
        );
    }
}

/// Nice 0 against nice 10 on one CPU at HZ 100, measured from 200 s to 250 s (load
/// average ≈ 1.93, so the decay is d = 2L/(2L+1) ≈ 0.8). At equilibrium each second the
/// estcpu before decay is e = n / (1 − d) for n ticks run in the second, and the thread
/// of better priority runs, so e0 / 8 + 20 ≈ e10 / 8 + 30: n0 − n10 ≈ 80 (1 − d) ≈ 16 of
/// 100 ticks, a share of about 58 % : 42 % (within a run-queue step of four priorities,
/// 32 estcpu, ±3 %).
#[test]
fn nice_0_and_nice_10_share_as_the_formulas_imply() {
    let a = |ms| run_spec(&hogs_spec(0, 10, 100), false, ms);
    let (early, late) = (a(200_000), a(250_000));
    let d0 = cpu_ns_in(&late, "a") - cpu_ns_in(&early, "a");
    let d10 = cpu_ns_in(&late, "b") - cpu_ns_in(&early, "b");
    let share = d0 as f64 / (d0 + d10) as f64;
    assert!(
        (0.55..=0.61).contains(&share),
        "nice 0's share {share:.3} (nice 0 {d0} ns, nice 10 {d10} ns)"
    );
}

/// FIFO/RR priorities map through FreeBSD's Linux ABI: 99 → POSIX 31 → rtprio 0, the best
/// real-time priority, 48; 1 → POSIX 0 → 79. Batch, idle and deadline are refused.
#[test]
fn attributes_map_as_the_linux_abi_does() {
    let p = Freebsd4Bsd::new(1);
    let rt = |policy, prio| SchedAttrs {
        policy,
        rt_priority: prio,
        nice: 0,
        dl: None,
        slice_ns: None,
    };
    assert!(p.accepts(&rt(Policy::Fifo, 99)).is_ok());
    assert!(p.accepts(&rt(Policy::Rr, 1)).is_ok());
    for pol in [Policy::Batch, Policy::Idle, Policy::Deadline] {
        let e = p.accepts(&rt(pol, 0)).unwrap_err();
        assert!(e.contains("freebsd-4bsd"), "{e}");
    }
    let mut core = machine(1000);
    let t99 = core.spawn(rt(Policy::Fifo, 99), CpuMask::first_n(1), None);
    let t1 = core.spawn(rt(Policy::Rr, 1), CpuMask::first_n(1), None);
    let t50 = core.spawn(rt(Policy::Rr, 50), CpuMask::first_n(1), None);
    assert_eq!(core.policy.priority(t99), 48);
    assert_eq!(core.policy.priority(t1), 48 + 31);
    // (50 - 1) * 32 / 99 = 15 → rtprio 16.
    assert_eq!(core.policy.priority(t50), 48 + 16);
}

/// A spec with sleepers, hogs and two CPUs gives the same bytes twice.
#[test]
fn runs_are_deterministic() {
    let text = r#"{"global": {"duration": 3},
        "tasks": {"hog": {"instance": 3, "loop": -1, "run": 30000, "sleep": 1000},
                  "io": {"instance": 2, "priority": 5, "loop": -1, "run": 2000, "sleep": 20000}},
        "schedlab": {"machine": {"cpus": 2, "hz": 250}}}"#;
    let once = || {
        let mut r = run_spec(text, true, 3000);
        r["run"]["wall_s"] = serde_json::json!(0);
        r.to_string()
    };
    assert_eq!(once(), once());
}

//! Scenario construction, the measured entry points' effect on the queue (μITRON 4.0
//! rules), aggregation, and callgrind dump parsing.

use std::collections::BTreeMap;
use std::path::Path;

use schedlab_rtq::{Prio, ReadyQueue, TaskIdx};
use schedlab_rtq_probe::backends::{for_each_backend, Backend, Visitor};
use schedlab_rtq_probe::callgrind::{self, parse_dump, Dump};
use schedlab_rtq_probe::kernel::Kernel;
use schedlab_rtq_probe::plan::{
    arguments, background_prio, expected_order, populate, populated, Case, Op, Plan, Target, LEVELS,
};
use schedlab_rtq_probe::{count_document, expected_dumps, summarise};

fn order<Q: ReadyQueue>(q: &Q) -> Vec<(TaskIdx, Prio)> {
    let mut v = Vec::new();
    q.for_each(|t, p| {
        v.push((t, p));
        true
    });
    v
}

/// The reference model: dispatch order as a list of (task, prio); μITRON's rules applied
/// directly (tail of the priority = after every task of equal or higher priority).
fn model_insert_tail(v: &mut Vec<(TaskIdx, Prio)>, t: TaskIdx, p: Prio) {
    let at = v.iter().position(|&(_, q)| q > p).unwrap_or(v.len());
    v.insert(at, (t, p));
}

fn model_after(op: Op, before: &[(TaskIdx, Prio)], t: TaskIdx, p: Prio) -> Vec<(TaskIdx, Prio)> {
    let mut v = before.to_vec();
    match op {
        Op::ActTsk => model_insert_tail(&mut v, t, p),
        Op::ChgPri => {
            v.retain(|&(x, _)| x != t);
            model_insert_tail(&mut v, t, p);
        }
        Op::RotRdq => {
            let at_p: Vec<usize> = (0..v.len()).filter(|&i| v[i].1 == p).collect();
            if at_p.len() >= 2 {
                let head = v.remove(at_p[0]);
                let last = at_p[at_p.len() - 1]; // index of the old last, shifted by one
                v.insert(last, head);
            }
        }
    }
    v
}

struct CheckPopulate;
impl Visitor for CheckPopulate {
    fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
        for n in [0, 1, 2, 5, 15, 16, 17, 33, 64, 254] {
            let k = populated(b.make, n);
            let q = k.queue();
            q.check_invariants();
            assert_eq!(k.schedtsk(), q.peek(), "{}: schedtsk at N = {n}", b.name);
            assert_eq!(q.len(), n, "{}: N = {n}", b.name);
            let got: Vec<TaskIdx> = order(q).into_iter().map(|(t, _)| t).collect();
            assert_eq!(
                got,
                expected_order(n),
                "{}: dispatch order at N = {n}",
                b.name
            );
            for i in 0..n {
                assert_eq!(q.prio_of(i as TaskIdx), Some(background_prio(i)));
            }
        }
    }
}

#[test]
fn population_is_spread_evenly_in_fifo_order() {
    for_each_backend(&mut CheckPopulate);
    // 16 levels: task 17 is the second task at priority 1
    assert_eq!(background_prio(17), 1);
    assert_eq!(&expected_order(18)[..4], &[0, 16, 1, 17]);
}

struct CheckOps;
impl Visitor for CheckOps {
    fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
        for op in Op::ALL {
            for n in [1, 3, 16, 32, 40] {
                for case in Plan::cases(op) {
                    let (t, p) = arguments(op, case, n);
                    let mut k = populated(b.make, n);
                    let before = order(k.queue());
                    let next = (b.ops[op as usize])(&mut k, t, p);
                    k.queue().check_invariants();
                    let want = model_after(op, &before, t, p);
                    let what = format!("{} {} N={n} {case:?}", b.name, op.name());
                    assert_eq!(order(k.queue()), want, "{what}");
                    assert_eq!(next, want.first().map(|&(t, _)| t), "next task: {what}");
                    assert_eq!(k.schedtsk(), next, "schedtsk: {what}");
                }
            }
        }
    }
}

#[test]
fn measured_entry_points_follow_uitron_rules() {
    for_each_backend(&mut CheckOps);
}

#[test]
fn the_seeds_two_structures_and_their_lean_variants_are_measured() {
    let names = schedlab_rtq_probe::backend_names();
    for b in [
        "single-list",
        "single-list-lean",
        "bitmap-lists",
        "bitmap-lists-jsp",
    ] {
        assert!(names.contains(&b), "{b} missing from {names:?}");
    }
    // the largest plan fits the lean list: N ready tasks and the one activated
    let mut k = Kernel::new(schedlab_rtq::LeanList::new(LEVELS));
    populate(&mut k, schedlab_rtq_probe::plan::MAX_N + 1);
    assert_eq!(k.queue().len(), schedlab_rtq_probe::plan::MAX_N + 1);
}

#[test]
fn cases_and_arguments() {
    assert_eq!(Plan::cases(Op::ActTsk).len(), LEVELS);
    assert_eq!(Plan::cases(Op::RotRdq).len(), LEVELS);
    assert_eq!(Plan::cases(Op::ChgPri).len(), 3 * LEVELS);
    let order = expected_order(20);
    let chg = |t| {
        arguments(
            Op::ChgPri,
            Case {
                prio: 7,
                target: Some(t),
            },
            20,
        )
    };
    assert_eq!(chg(Target::Head), (order[0], 7));
    assert_eq!(chg(Target::Middle), (order[10], 7));
    assert_eq!(chg(Target::Tail), (order[19], 7));
    // act_tsk activates the first task that is not ready
    assert_eq!(
        arguments(
            Op::ActTsk,
            Case {
                prio: 3,
                target: None
            },
            20
        ),
        (20, 3)
    );
    for plan in [Plan::full(), Plan::quick()] {
        assert!(plan.ns.windows(2).all(|w| w[0] < w[1]), "N ascending");
        assert!(*plan.ns.last().unwrap() <= schedlab_rtq_probe::plan::MAX_N);
        assert!(
            plan.ns.contains(&5) && plan.ns.contains(&10),
            "the seed's 5 and 10 tasks"
        );
        assert!(*plan.ns.last().unwrap() > 64, "beyond 64 tasks");
    }
}

#[test]
fn summarise_average_worst_and_by_priority() {
    let cases = [
        Case {
            prio: 0,
            target: Some(Target::Head),
        },
        Case {
            prio: 0,
            target: Some(Target::Tail),
        },
        Case {
            prio: 1,
            target: Some(Target::Head),
        },
        Case {
            prio: 1,
            target: Some(Target::Tail),
        },
    ];
    let s = summarise(
        &vec![vec![1.0, 3.0, 5.0, 11.0], vec![2.0, 2.0, 2.0, 2.0]],
        &cases,
    );
    assert_eq!(s["avg"], serde_json::json!([5.0, 2.0]));
    assert_eq!(s["worst"], serde_json::json!([11.0, 2.0]));
    assert_eq!(s["by_prio"], serde_json::json!([[2.0, 8.0], [2.0, 2.0]]));
}

fn data(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn parses_a_boundary_dump() {
    let d = parse_dump(&data("callgrind.out.boundary")).unwrap();
    assert_eq!(d.part, 2);
    assert!(d.is_boundary());
    assert_eq!(d.get("Ir"), 52);
    assert_eq!(d.get("D1mr") + d.get("D1mw"), 3);
    assert_eq!(d.get("DLmr"), 2);
    // data reads and writes, what the platform cost model charges memory waits for
    assert_eq!((d.get("Dr"), d.get("Dw")), (9, 12));
    assert_eq!(d.get("NoSuchEvent"), 0);
}

#[test]
fn termination_dump_is_not_a_boundary_and_short_totals_are_zero_filled() {
    let d = parse_dump(&data("callgrind.out.termination")).unwrap();
    assert!(!d.is_boundary());
    assert_eq!(d.part, 6401);
    assert_eq!(d.get("Ir"), 0);
    assert_eq!(d.get("DLmw"), 0);
}

#[test]
fn malformed_dumps_are_errors() {
    assert!(parse_dump("part: 1\nsummary: 3\n")
        .unwrap_err()
        .contains("events"));
    assert!(parse_dump("events: Ir\nsummary: 3\n")
        .unwrap_err()
        .contains("part"));
    assert!(parse_dump("part: 1\nevents: Ir\ntotals: x\n")
        .unwrap_err()
        .contains("bad count"));
}

#[test]
fn read_dumps_orders_by_part_and_skips_termination() {
    let dir = std::env::temp_dir().join(format!("rtq-probe-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let boundary = data("callgrind.out.boundary");
    std::fs::write(
        dir.join("cg.out.10"),
        boundary.replace("part: 2", "part: 10"),
    )
    .unwrap();
    std::fs::write(dir.join("cg.out.2"), &boundary).unwrap();
    std::fs::write(dir.join("cg.out"), data("callgrind.out.termination")).unwrap();
    std::fs::write(dir.join("other"), "not a dump").unwrap();
    let dumps = callgrind::read_dumps(&dir, "cg.out").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        dumps.iter().map(|d| d.part).collect::<Vec<_>>(),
        vec![2, 10]
    );
}

fn dump(part: u32, ir: u64, d1mr: u64) -> Dump {
    let totals: BTreeMap<String, u64> = [("Ir".to_string(), ir), ("D1mr".to_string(), d1mr)]
        .into_iter()
        .collect();
    Dump {
        part,
        trigger: "--dump-before=rtqp_boundary".into(),
        totals,
    }
}

#[test]
fn count_document_maps_dumps_to_cases_in_plan_order() {
    let plan = Plan {
        ns: vec![1, 2],
        reps_warm: 1,
        reps_cold: 1,
    };
    let want = expected_dumps(&plan);
    let cases_per_n = 3 * LEVELS + 2 * LEVELS;
    // per back end: the first N's cases warm + cold, then every other N's cases cold
    let backends = schedlab_rtq_probe::backend_names().len();
    assert_eq!(want, backends * cases_per_n * 3);
    assert!(count_document(&plan, &[])
        .unwrap_err()
        .contains(&want.to_string()));
    // dump k has Ir = k and one D1 miss; N = 1 dumps come in (warm, cold) pairs
    let dumps: Vec<Dump> = (0..want).map(|k| dump(k as u32 + 1, k as u64, 1)).collect();
    let doc = count_document(&plan, &dumps).unwrap();
    // every N = 1 pair differs (k vs k + 1): all of them are counted as mismatches
    assert_eq!(
        doc["warm_cold_instruction_mismatches"],
        backends * cases_per_n
    );
    let act = &doc["ops"]["act_tsk"]["single-list"]["instructions"]["cases"];
    // act_tsk comes first: N = 1 case 0 is the cold dump 1, N = 2 case 0 follows the
    // 16 N = 1 pairs
    assert_eq!(act[0][0], 1.0);
    assert_eq!(act[0][1], 3.0);
    assert_eq!(act[1][0], (2 * LEVELS) as f64);
    assert_eq!(
        doc["ops"]["act_tsk"]["single-list"]["d1_misses_cold"]["worst"][0],
        1.0
    );
    let second = doc["backends"][1].as_str().unwrap();
    let per_backend = want / backends;
    assert_eq!(
        doc["ops"]["act_tsk"][second]["instructions"]["cases"][0][0],
        (per_backend + 1) as f64
    );
    // equal warm and cold counts are not mismatches
    let same: Vec<Dump> = (0..want).map(|k| dump(k as u32 + 1, 7, 0)).collect();
    assert_eq!(
        count_document(&plan, &same).unwrap()["warm_cold_instruction_mismatches"],
        0
    );
}

#[test]
fn valgrind_command_collects_only_the_measured_entry_points() {
    let a = callgrind::valgrind_args(
        Path::new("/tmp/x/cg.out"),
        Path::new("/bin/p"),
        &["count-inner".into()],
    );
    assert!(a.contains(&"--toggle-collect=rtqp_m_*".to_string()));
    assert!(a.contains(&"--dump-before=rtqp_boundary".to_string()));
    assert!(a.contains(&"--collect-atstart=no".to_string()));
    assert_eq!(
        &a[a.len() - 2..],
        &["/bin/p".to_string(), "count-inner".to_string()]
    );
}

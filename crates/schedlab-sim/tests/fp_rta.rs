//! Under `fp` on one CPU with no overheads, the largest simulated response time of every
//! task of a periodic set equals exact response-time analysis (Joseph & Pandya 1986;
//! Audsley et al. 1993): R = C + Σ_{j ∈ hp} ⌈R / T_j⌉ C_j, iterated to a fixed point.
mod common;
use common::*;
use proptest::prelude::*;

/// Exact worst-case response times (rate-monotonic priority order = input order by period).
fn rta(tasks: &[(u64, u64)]) -> Vec<Option<u64>> {
    (0..tasks.len())
        .map(|i| {
            let (c, t) = tasks[i];
            let mut r = c;
            loop {
                let next = c + tasks[..i]
                    .iter()
                    .map(|&(cj, tj)| r.div_ceil(tj) * cj)
                    .sum::<u64>();
                if next > t {
                    return None;
                }
                if next == r {
                    return Some(r);
                }
                r = next;
            }
        })
        .collect()
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

fn check_set(mut set: Vec<(u64, u64)>) -> Result<(), TestCaseError> {
    set.sort_by_key(|&(_, t)| t); // rate-monotonic: shorter period, higher priority
    let Some(expected) = rta(&set).into_iter().collect::<Option<Vec<u64>>>() else {
        return Ok(()); // unschedulable sets are not what this test is about
    };
    let hyper = set.iter().fold(1, |a, &(_, t)| lcm(a, t));
    // Releases are at k·T from the common anchor 0, so all tasks release together at
    // every multiple of the hyperperiod: the critical instant.
    let tasks: Vec<_> = set
        .iter()
        .enumerate()
        .map(|(i, &(c, t))| {
            periodic(
                &format!("t{i}"),
                i as u32,
                c,
                t,
                90 - i as i32,
                (2 * hyper / t) as i64,
            )
        })
        .collect();
    let s = spec(1, tasks, timers(set.len()));
    let out = run(&s, "fp", true);
    for (i, r) in expected.iter().enumerate() {
        let got = task_json(&out, &format!("t{i}"))["response_ns"]["max"]
            .as_u64()
            .unwrap();
        prop_assert_eq!(got, *r, "task {} of {:?}", i, set);
    }
    Ok(())
}

#[test]
fn textbook_set_matches_rta() {
    // Liu's classic example scaled to ms: (C, T) = (1, 4), (2, 6), (3, 12) → R = 1, 3, 10.
    check_set(vec![(MS, 4 * MS), (2 * MS, 6 * MS), (3 * MS, 12 * MS)]).unwrap();
    assert_eq!(
        rta(&[(1, 4), (2, 6), (3, 12)]),
        vec![Some(1), Some(3), Some(10)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_sets_match_rta(
        raw in prop::collection::vec((1u64..40, prop::sample::select(vec![10u64, 20, 25, 40, 50, 100])), 1..6)
    ) {
        // C in units of 0.1 ms, at most 40 % of each period.
        let set: Vec<(u64, u64)> = raw.into_iter().map(|(c, t)| ((c * 100 * US).min(t * MS * 2 / 5), t * MS)).collect();
        check_set(set)?;
    }
}

//! No input makes the parser panic: arbitrary text, arbitrary JSON values, and valid specs
//! with one value replaced by something random.

use proptest::prelude::*;
use schedlab_spec::{parse_spec, parse_value};
use serde_json::{json, Value};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|i| json!(i)),
        (-1e20f64..1e20).prop_map(|f| json!(f)),
        prop_oneof![
            Just("run".to_string()),
            Just("SCHED_FIFO".to_string()),
            Just("unique".to_string()),
            Just("/tg".to_string()),
            Just("0-3,5".to_string()),
            Just("null_blk".to_string()),
            Just("max 100000".to_string()),
            Just(String::new()),
            "[a-z:_0-9-]{0,12}",
            ".{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        let key = prop_oneof![
            Just("tasks".to_string()),
            Just("global".to_string()),
            Just("schedlab".to_string()),
            Just("phases".to_string()),
            Just("run".to_string()),
            Just("timer".to_string()),
            Just("loop".to_string()),
            Just("instance".to_string()),
            Just("policy".to_string()),
            Just("priority".to_string()),
            Just("cpus".to_string()),
            Just("barrier".to_string()),
            Just("lock".to_string()),
            Just("unlock".to_string()),
            Just("wait".to_string()),
            Just("ref".to_string()),
            Just("period".to_string()),
            Just("mutex".to_string()),
            Just("machine".to_string()),
            Just("pipes".to_string()),
            Just("schedlab:write".to_string()),
            Just("schedlab:read".to_string()),
            Just("chan".to_string()),
            Just("bytes".to_string()),
            Just("fork".to_string()),
            Just("suspend".to_string()),
            Just("resume".to_string()),
            Just("headline".to_string()),
            Just("type".to_string()),
            Just("dl-runtime".to_string()),
            Just("taskgroup".to_string()),
            Just("util_min".to_string()),
            Just("cgroups".to_string()),
            Just("/a".to_string()),
            Just("/a/b".to_string()),
            Just("cpu.shares".to_string()),
            Just("cpu.rt_runtime_us".to_string()),
            Just("cpu.cfs_quota_us".to_string()),
            Just("cpu.max".to_string()),
            Just("cpu.uclamp.min".to_string()),
            Just("cpuset.cpus".to_string()),
            Just("topology".to_string()),
            Just("cores".to_string()),
            Just("llc_cores".to_string()),
            Just("devices".to_string()),
            Just("model".to_string()),
            Just("schedlab:io".to_string()),
            Just("dev".to_string()),
            Just("offset".to_string()),
            "[a-z]{1,6}"
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,300}") {
        let _ = parse_spec(&s);
    }

    #[test]
    fn json_like_strings_never_panic(s in r#"[\[\]{}",:0-9a-z .eE+/*\\-]{0,200}"#) {
        let _ = parse_spec(&s);
    }

    #[test]
    fn arbitrary_values_never_panic(v in arb_json()) {
        let _ = parse_value(&v);
        let _ = parse_value(&json!({"tasks": v.clone()}));
        let _ = parse_value(&json!({"tasks": {"t": v.clone()}}));
        let _ = parse_value(&json!({"tasks": {"t": {"phases": {"p": v.clone()}}}}));
        let _ = parse_value(&json!({"tasks": {"t": {"run": 1}}, "schedlab": v.clone()}));
        let _ = parse_value(&json!({"tasks": {"t": {"run": 1}}, "global": v}));
    }

    #[test]
    fn one_value_replaced_never_panics(v in arb_json(), which in 0usize..16) {
        let mut base = json!({
            "global": {"duration": 2, "default_policy": "SCHED_OTHER"},
            "tasks": {
                "a": {"instance": 2, "cpus": [0], "phases": {"p": {"loop": 3, "timer": {"ref": "unique", "period": 100},
                      "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "barrier": "b"}}},
                "b": {"barrier": "b", "lock": "m", "broad": "c", "unlock": "m", "schedlab:write": {"chan": "p", "bytes": 4}},
                "c": {"schedlab:read": {"chan": "p", "bytes": 4}, "fork": "c", "taskgroup": "/g",
                      "schedlab:io": {"dev": "d", "op": "read", "bytes": 512}}
            },
            "schedlab": {"machine": {"cpus": 2}, "pipes": {"p": {"capacity": 8}},
                         "cgroups": {"/g": {"cpu.rt_runtime_us": 1000, "cpuset.cpus": "0-1"}},
                         "devices": {"d": {"model": "null_blk"}}}
        });
        let slots = [
            "/global/duration", "/tasks/a/instance", "/tasks/a/cpus", "/tasks/a/phases/p/loop",
            "/tasks/a/phases/p/timer", "/tasks/a/phases/p/wait", "/tasks/b/schedlab:write",
            "/tasks/c/schedlab:read", "/schedlab/machine", "/schedlab/pipes/p", "/tasks/c/fork", "/tasks/b",
            "/schedlab/cgroups", "/schedlab/cgroups/~1g", "/schedlab/devices/d", "/tasks/c/schedlab:io",
        ];
        prop_assert!(parse_value(&base).is_ok(), "the base spec is valid");
        if let Some(slot) = base.pointer_mut(slots[which]) {
            *slot = v;
        }
        let _ = parse_value(&base);
        let _ = parse_spec(&base.to_string());
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse_spec(&text).is_err());
    let mut v = json!(1);
    for _ in 0..200 {
        v = json!([v]);
    }
    assert!(parse_value(&json!({"tasks": v})).is_err());
}

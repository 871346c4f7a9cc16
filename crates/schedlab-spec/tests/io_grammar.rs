//! The block-I/O grammar beyond one request to a device: `schedlab.files`, `schedlab:io`
//! on a file, buffered (`direct`), with `count` and `depth`, `schedlab:fsync` and
//! `schedlab:unlink`; each rule with its bad input (JSON path and message).

use schedlab_spec::model::{Event, FileSpec, IoOffset, IoOp, IoSpec, IoTarget};
use schedlab_spec::{parse_spec, Spec};

fn spec(text: &str) -> Spec {
    parse_spec(text).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_err(text: &str, path: &str, contains: &str) {
    let e = parse_spec(text).expect_err("expected an error");
    assert_eq!(e.path, path, "{}", e.message);
    assert!(
        e.message.contains(contains),
        "{}: {}\nwanted: {contains}",
        e.path,
        e.message
    );
}

const DEVICES: &str = r#""devices": {"d": {"model": "null_blk", "size_bytes": 1048576},
                                  "e": {"model": "null_blk", "size_bytes": 1048576}}"#;

/// One task whose only event is `key: event`, with two 1 MiB devices and `files`.
fn task_event(key: &str, event: &str, files: &str) -> String {
    format!(
        r#"{{"tasks": {{"t": {{"loop": 1, "{key}": {event}}}}},
            "schedlab": {{ {DEVICES}, "files": {files} }}}}"#
    )
}

const FILES: &str = r#"{"f": {"dev": "d", "offset": 65536, "bytes": 65536},
                        "g": {"dev": "d", "bytes": 4096}}"#;

fn only_event(s: &Spec) -> &Event {
    &s.tasks[0].phases[0].events[0]
}

#[test]
fn files_are_extents_of_devices() {
    let s = spec(&task_event(
        "schedlab:io",
        r#"{"file": "f", "op": "read", "bytes": 4096}"#,
        FILES,
    ));
    assert_eq!(
        s.resources.files,
        [
            FileSpec {
                name: "f".into(),
                dev: 0,
                offset: 65536,
                bytes: 65536
            },
            FileSpec {
                name: "g".into(),
                dev: 0,
                offset: 0,
                bytes: 4096
            },
        ]
    );
    assert_eq!(
        *only_event(&s),
        Event::IoBatch(Box::new(IoSpec {
            target: IoTarget::File(0),
            op: IoOp::Read,
            bytes: 4096,
            offset: IoOffset::Sequential,
            direct: true,
            count: 1,
            depth: 1,
        }))
    );
}

#[test]
fn one_direct_request_to_a_device_keeps_the_one_request_form() {
    // Defaults written out are the same event as defaults left out.
    for keys in ["", r#", "direct": true, "count": 1, "depth": 1"#] {
        let s = spec(&task_event(
            "schedlab:io",
            &format!(r#"{{"dev": "e", "op": "write", "bytes": 512{keys}}}"#),
            "{}",
        ));
        assert_eq!(
            *only_event(&s),
            Event::Io {
                dev: 1,
                op: IoOp::Write,
                bytes: 512,
                offset: IoOffset::Sequential
            }
        );
    }
}

#[test]
fn count_depth_and_buffered_io() {
    let s = spec(&task_event(
        "schedlab:io",
        r#"{"dev": "d", "op": "read", "bytes": 4096, "offset": "random", "count": 100, "depth": 16}"#,
        "{}",
    ));
    assert_eq!(
        *only_event(&s),
        Event::IoBatch(Box::new(IoSpec {
            target: IoTarget::Dev(0),
            op: IoOp::Read,
            bytes: 4096,
            offset: IoOffset::Random,
            direct: true,
            count: 100,
            depth: 16,
        }))
    );
    let s = spec(&task_event(
        "schedlab:io",
        r#"{"file": "g", "op": "write", "bytes": 4096, "direct": false}"#,
        FILES,
    ));
    let Event::IoBatch(io) = only_event(&s) else {
        panic!("{:?}", only_event(&s))
    };
    assert!(!io.direct);
}

#[test]
fn fsync_and_unlink_name_a_file() {
    let s = spec(&task_event("schedlab:fsync", r#"{"file": "g"}"#, FILES));
    assert_eq!(*only_event(&s), Event::Fsync { file: 1 });
    let s = spec(&task_event("schedlab:unlink2", r#"{"file": "f"}"#, FILES));
    assert_eq!(*only_event(&s), Event::Unlink { file: 0 });
}

#[test]
fn file_errors() {
    let io = r#"{"file": "f", "op": "read", "bytes": 4096}"#;
    assert_err(
        &task_event(
            "schedlab:io",
            io,
            r#"{"f": {"dev": "d", "bytes": 8192}, "h": {"dev": "d", "offset": 4096, "bytes": 4096}}"#,
        ),
        "$.schedlab.files.h",
        "file \"h\" overlaps file \"f\" on device \"d\"",
    );
    // The same extent on another device does not overlap.
    spec(&task_event(
        "schedlab:io",
        io,
        r#"{"f": {"dev": "d", "bytes": 8192}, "h": {"dev": "e", "bytes": 8192}}"#,
    ));
    assert_err(
        &task_event("schedlab:io", io, r#"{"f": {"dev": "x", "bytes": 8192}}"#),
        "$.schedlab.files.f.dev",
        "device \"x\" is not declared",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            io,
            r#"{"f": {"dev": "d", "offset": 1044480, "bytes": 8192}}"#,
        ),
        "$.schedlab.files.f",
        "ends past the end of device \"d\"",
    );
    assert_err(
        &task_event("schedlab:io", io, r#"{"f": {"dev": "d", "bytes": 5000}}"#),
        "$.schedlab.files.f.bytes",
        "multiple of 4096",
    );
    assert_err(
        &task_event("schedlab:io", io, r#"{"f": {"dev": "d"}}"#),
        "$.schedlab.files.f",
        "needs \"bytes\"",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            io,
            r#"{"f": {"dev": "d", "bytes": 8192, "size": 1}}"#,
        ),
        "$.schedlab.files.f.size",
        "size",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"file": "nope", "op": "read", "bytes": 4096}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io",
        "file \"nope\" is not declared",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"file": "g", "op": "read", "bytes": 8192}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io",
        "ends past the end of file \"g\" (4096 bytes)",
    );
}

#[test]
fn io_key_errors() {
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"dev": "d", "file": "f", "op": "read", "bytes": 4096}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io.file",
        "not both",
    );
    assert_err(
        &task_event("schedlab:io", r#"{"op": "read", "bytes": 4096}"#, FILES),
        "$.tasks.t.schedlab:io",
        "needs \"dev\" (a device name) or \"file\"",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"dev": "d", "op": "read", "bytes": 4096, "count": 0}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io.count",
        "request count",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"dev": "d", "op": "read", "bytes": 4096, "depth": 65537}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io.depth",
        "I/O depth",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"file": "f", "op": "read", "bytes": 4096, "direct": "yes"}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io.direct",
        "found",
    );
    assert_err(
        &task_event(
            "schedlab:io",
            r#"{"file": "f", "op": "read", "bytes": 4096, "direct": false, "depth": 4}"#,
            FILES,
        ),
        "$.tasks.t.schedlab:io.depth",
        "depth is 1",
    );
    assert_err(
        &task_event("schedlab:fsync", r#"{"file": "zz"}"#, FILES),
        "$.tasks.t.schedlab:fsync",
        "file \"zz\" is not declared",
    );
    assert_err(
        &task_event("schedlab:fsync", r#"{}"#, FILES),
        "$.tasks.t.schedlab:fsync",
        "needs \"file\"",
    );
    assert_err(
        &task_event("schedlab:unlink", r#"{"file": "f", "now": true}"#, FILES),
        "$.tasks.t.schedlab:unlink.now",
        "now",
    );
}

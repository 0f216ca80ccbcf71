//! A corpus of hostile nets (`tests/corpus/nets/*.ron`): each is refused at load with
//! the error its first line names (`// expect: …`), at a file, line and column, and
//! never panics; and a net misusing states in seven places gets one error for each,
//! every one naming its place and the fix.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_bad_net_is_refused_with_its_documented_error() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/nets");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 20, "{} nets", paths.len());
    for path in paths {
        let text = fs::read_to_string(&path).expect("net");
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// expect: "))
            .expect("an expect line");
        let out = Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
            .arg("--check")
            .arg(&path)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(expect), "{name}: expected {expect:?} in {err}");
        assert!(
            err.contains(&format!("{name}:")),
            "{name}: no file:line:col in {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn every_misuse_of_states_gets_its_own_error_naming_the_fix() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/nets/states_misuse.ron");
    let out = Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
        .arg("--check")
        .arg(&path)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // (line:column of the misuse, what the error says, the fix it names)
    let misuses = [
        (
            "11:27",
            "`in_port` is a state",
            "read it with Starts, Ends or During",
        ),
        (
            "12:39",
            "`report` is not a state, and `both` reads one",
            "make a state of it with State(on: \"report\", off: …)",
        ),
        (
            "13:50",
            "`pair` is a `Close` state",
            "read its Starts or Ends, or a Lasting of it",
        ),
        (
            "14:9",
            "`instant`: `min` must be positive",
            "give a duration such as `min: \"5m\"`",
        ),
        (
            "15:9",
            "`still`: `for` must be positive",
            "give a duration such as `for: \"5m\"`",
        ),
        (
            "16:40",
            "`mixed`: its states must share one key",
            "give them the same `key`",
        ),
        (
            "17:30",
            "`report` is not a state, and `starts` reads one",
            "make a state of it",
        ),
    ];
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), misuses.len(), "one line per misuse:\n{err}");
    for ((at, what, fix), line) in misuses.iter().zip(&lines) {
        assert!(
            line.contains(&format!("states_misuse.ron:{at}: ")),
            "{line}"
        );
        assert!(line.contains(what) && line.contains(fix), "{line}");
    }
}

//! A corpus of hostile nets (`tests/corpus/nets/*.ron`): each is refused at load with
//! the error its first line names (`// expect: …`), at a file, line and column, and
//! never panics.

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

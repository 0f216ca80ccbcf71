//! What the command-line tests share: running `ccpn-run`, reading its output, and
//! scratch files.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
}

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn net(name: &str) -> PathBuf {
    root().join("tests/nets").join(name)
}

/// Starts `cmd` with its standard input, output and error on pipes.
pub(crate) fn spawn_piped(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ccpn-run")
}

/// Runs `ccpn-run args` with `input` on stdin.
pub(crate) fn run(args: &[&str], input: &str) -> Output {
    let mut child = spawn_piped(bin().args(args));
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_owned();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    out
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The `--stats` summary: the last line of stderr.
pub(crate) fn stats(out: &Output) -> serde_json::Value {
    let err = text(&out.stderr);
    let last = err.lines().last().expect("a stats line");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("stats line {last:?}: {e}"))
}

/// A file in the target directory's scratch space, removed on drop.
pub(crate) mod tempfile_path {
    use std::path::PathBuf;

    pub(crate) struct Temp(pub(crate) PathBuf);

    impl Temp {
        pub(crate) fn with(name: &str, contents: &str) -> Temp {
            let dir = std::env::temp_dir().join(format!("ccpn-cli-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let path = dir.join(format!("{}-{name}", super::unique()));
            std::fs::write(&path, contents).expect("write temp");
            Temp(path)
        }

        pub(crate) fn path(&self) -> &str {
            self.0.to_str().expect("utf-8 path")
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

pub(crate) fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Runs `cmd`, reads the first bytes it writes on stdout and closes stdout, as
/// `| head -c 16` does; what it did then.
pub(crate) fn close_after_first_bytes(cmd: &mut Command) -> Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    child.wait_with_output().expect("wait")
}

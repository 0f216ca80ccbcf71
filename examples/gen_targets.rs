//! Writes seeded target tracks around an own ship (seed 002's object model) on stdout,
//! for `nets/threat.ron`.
//!
//! ```text
//! cargo run --release --example gen_targets -- --objects 20 --duration 900 --seed 2 \
//!     --mix nonuniform --format jsonl > /tmp/targets.jsonl
//! cargo run --release --example gen_targets -- --script approach
//!     # scripts: approach, swarm, friends, contacts, all
//! ```
//!
//! Flags: `--objects N` (default 20), `--duration D` seconds (600), `--seed S` (2),
//! `--mix uniform|nonuniform` (uniform), `--format jsonl|csv` (jsonl), and
//! `--script NAME` for the fixed scenarios the tests check (ignores the others but
//! `--format`). See `examples/common/targets.rs` for the model.

use std::io::{self, BufWriter, Write};
use std::process::exit;

#[path = "common/targets.rs"]
mod targets;

use targets::{Mix, Report};

/// The parsed command line.
struct Args {
    objects: usize,
    duration: f64,
    seed: u64,
    mix: Mix,
    csv: bool,
    script: Option<String>,
}

fn usage(msg: &str) -> ! {
    eprintln!("gen_targets: {msg}");
    eprintln!(
        "usage: gen_targets [--objects N] [--duration SECS] [--seed S] \
         [--mix uniform|nonuniform] [--format jsonl|csv] \
         [--script approach|swarm|friends|contacts|all]"
    );
    exit(2)
}

fn bad<T>(flag: &str, value: &str) -> T {
    usage(&format!("bad value {value:?} for {flag}"))
}

fn parse_args() -> Args {
    let mut a = Args {
        objects: 20,
        duration: 600.0,
        seed: 2,
        mix: Mix::Uniform,
        csv: false,
        script: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        const FLAGS: [&str; 6] = [
            "--objects",
            "--duration",
            "--seed",
            "--mix",
            "--format",
            "--script",
        ];
        if !FLAGS.contains(&flag.as_str()) {
            usage(&format!("unknown flag {flag}"));
        }
        let Some(value) = it.next() else {
            usage(&format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--objects" => a.objects = value.parse().unwrap_or_else(|_| bad(&flag, &value)),
            "--duration" => a.duration = value.parse().unwrap_or_else(|_| bad(&flag, &value)),
            "--seed" => a.seed = value.parse().unwrap_or_else(|_| bad(&flag, &value)),
            "--mix" => {
                a.mix = match value.as_str() {
                    "uniform" => Mix::Uniform,
                    "nonuniform" | "non-uniform" => Mix::NonUniform,
                    _ => bad(&flag, &value),
                }
            }
            "--format" => {
                a.csv = match value.as_str() {
                    "jsonl" => false,
                    "csv" => true,
                    _ => bad(&flag, &value),
                }
            }
            "--script" => a.script = Some(value),
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    a
}

fn write_all(reports: impl Iterator<Item = Report>, csv: bool) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    if csv {
        writeln!(out, "{}", Report::csv_header())?;
    }
    for r in reports {
        let line = if csv { r.csv() } else { r.json() };
        writeln!(out, "{line}")?;
    }
    out.flush()
}

fn main() {
    let args = parse_args();
    let result = match &args.script {
        Some(name) => match targets::script(name) {
            Some(legs) => write_all(targets::scripted(&legs).into_iter(), args.csv),
            None => usage(&format!("unknown script {name:?}")),
        },
        None => {
            let scenario = targets::Scenario::new(args.seed, args.objects, args.duration, args.mix);
            write_all(scenario, args.csv)
        }
    };
    match result {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("gen_targets: {e}");
            exit(1)
        }
        _ => {}
    }
}

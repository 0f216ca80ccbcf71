//! `ccpn-run`: runs a net over a stream of events and prints its detections.
//!
//! Exit status: 0 when all input was read (bad and late lines included, reported on
//! stderr), 1 on an I/O error, 2 for an invalid net or bad arguments, 3 when
//! `--strict` stopped at a bad or late line, 4 when no line at all could be used,
//! 101 when ccpn-run itself failed (a defect, reported in one line on stderr), 130
//! (143) when Ctrl-C (SIGTERM) stopped it in order. A closed stdout ends the run
//! quietly (0).

mod args;
mod checkpoint;
mod dataflow;
mod interrupt;
mod pipeline;
mod say;
// `ccpn-run serve NET.ron`: the server (docs/serve.md).
#[cfg(feature = "serve")]
mod serve;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use ccpn::{Net, NetError};

use args::Args;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    report_defects();
    #[cfg(feature = "serve")]
    if std::env::args_os().nth(1).is_some_and(|a| a == "serve") {
        return serve::main();
    }
    let args = Args::try_parse().unwrap_or_else(|e| say::clap_exit(&e));
    if args.quiet {
        say::set_quiet();
    }
    if let Err(why) = args.check() {
        say::bad_arguments(why);
    }
    let net = match Net::from_file(&args.net) {
        Ok(net) => net,
        Err(e) => {
            say::error(indent(&e));
            return ExitCode::from(2);
        }
    };
    if args.dot {
        return print_or_quiet(&net.to_dot());
    }
    if args.check {
        let mut report = format!("{}: ok: {}\n", args.net.display(), net.summary());
        report.push_str(&format!(
            "outputs: {}\n",
            net.outputs().collect::<Vec<_>>().join(", ")
        ));
        let partitioner = ccpn::partition::Partitioner::new(&net, args.partitions);
        let n = partitioner.partitions();
        report.push_str(&format!(
            "partitioning: {} ({n} partition{})\n",
            partitioner.plan(),
            if n == 1 { "" } else { "s" }
        ));
        for w in net.warnings() {
            say::warning(w);
        }
        return print_or_quiet(&report);
    }
    if let Err(why) = args.check_for(net.space()) {
        say::bad_arguments(why);
    }
    for w in net.warnings() {
        say::warning(w);
    }
    let run = if args.dataflow() {
        dataflow::run(&args, net)
    } else {
        pipeline::run(&args, net)
    };
    match run {
        Ok(code) => code,
        Err(e) => {
            say::error(e);
            ExitCode::from(1)
        }
    }
}

/// Reports a failure of ccpn-run itself (a panic: a defect, whatever the input) in one
/// line on stderr and ends the run with status 101, the same whether the build unwinds
/// or aborts on panic (release builds abort). The cluster run replaces this report
/// with its own.
fn report_defects() {
    std::panic::set_hook(Box::new(|info| {
        let (thread, what) = panic_report(info);
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "{}internal error in thread {thread}{place}: {what}. This is a defect of \
             ccpn-run, please report it with the net and the input line that caused it \
             (the lines already written stand; a last line without a newline is incomplete)",
            say::ERROR
        );
        std::process::exit(101);
    }));
}

/// The name of the panicking thread and the panic's message.
fn panic_report(info: &std::panic::PanicHookInfo<'_>) -> (String, String) {
    let what = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown failure".to_owned());
    let thread = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    (thread, what)
}

fn indent(e: &NetError) -> String {
    e.to_string().replace('\n', "\n  ")
}

/// Prints `s` on stdout; a closed pipe is a normal end.
fn print_or_quiet(s: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            say::error(format_args!("cannot write: {e}"));
            ExitCode::from(1)
        }
    }
}

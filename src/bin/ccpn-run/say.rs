//! What `ccpn-run` says on stderr, each message in one form: `ccpn-run: error: …`
//! for what ends the run, `ccpn-run: warning: …` for what the user should know of a
//! run that goes on, `ccpn-run: note: …` for where a run starts from. Argument
//! errors go through clap, which adds the usage; they exit with status 2.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::CommandFactory;

use crate::args::Args;

/// The prefix of an error.
pub(crate) const ERROR: &str = "ccpn-run: error: ";
/// The prefix of a warning.
pub(crate) const WARNING: &str = "ccpn-run: warning: ";

/// Says `what` as an error.
pub(crate) fn error(what: impl Display) {
    eprintln!("{ERROR}{what}");
}

/// `--quiet`: warnings and notes are not said.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences warnings and notes from now on (`--quiet`).
pub(crate) fn set_quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Whether `--quiet` silenced warnings.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Says `what` as a warning, unless `--quiet`.
pub(crate) fn warning(what: impl Display) {
    if !quiet() {
        eprintln!("{WARNING}{what}");
    }
}

/// Says `what` as a note, unless `--quiet`.
pub(crate) fn note(what: impl Display) {
    if !quiet() {
        eprintln!("ccpn-run: note: {what}");
    }
}

/// Reports a clap error (an argument error) in ccpn-run's form and exits with its
/// status: 2, or 0 for `--help` and `--version`.
pub(crate) fn clap_exit(e: &clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    eprint!("{ERROR}{text}");
    std::process::exit(2);
}

/// Reports an argument error, `what` (which names the flag), and exits with status 2.
pub(crate) fn bad_arguments(what: impl Display) -> ! {
    let e = Args::command().error(clap::error::ErrorKind::ArgumentConflict, what);
    clap_exit(&e)
}

/// `e`, of the same kind, saying what failed on which file: "cannot read
/// events.csv: Is a directory (os error 21)".
pub(crate) fn in_file(e: std::io::Error, doing: &str, path: &std::path::Path) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{doing} {}: {e}", path.display()))
}

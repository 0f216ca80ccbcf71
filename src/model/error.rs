//! Errors of loading a net: every problem found, each with file, line and column.

use std::fmt;
use std::path::PathBuf;

pub use crate::spec::Problem;

/// Why a net could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The file could not be read.
    #[error("cannot read net file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The net has one or more problems; all of them are listed.
    #[error("{}", ProblemList(problems))]
    Invalid {
        /// Every problem found, in file order.
        problems: Vec<Problem>,
    },
}

struct ProblemList<'a>(&'a [Problem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

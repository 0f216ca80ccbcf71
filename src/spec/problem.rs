//! [`Problem`]: one thing wrong in a net file, at its file, line and column. Parsing
//! finds syntax problems; checking the model finds the rest.

use std::fmt;

/// One problem in a net file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file, as named when loading.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

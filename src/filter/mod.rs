//! `when:` filter expressions of `Atomic` events: parsing, compilation and evaluation.
//!
//! A `when` expression compares event fields with literals (`speed > 10`,
//! `"ferry" == type`, `iff == false`), combined with `&&`, `||`, `!` and parentheses;
//! one function, `angle_diff(a, b) > 40`, compares two attributes holding bearings.
//! `!` binds tightest, then the comparisons, then `&&`, then `||`; `&&` and `||` are
//! left-associative. A bare field `iff` means `iff == true`.
//!
//! Fields are looked up in the event's attributes, except for the built-in names `id`,
//! `time` (seconds since the epoch; an RFC 3339 string literal is converted when the
//! expression is compiled), `type`, and the location: `x`/`y` in planar nets, `lon`/`lat`
//! in WGS84 nets. A comparison with a missing field, or between values of different
//! types, is false, and `!` negates that.
//!
//! [`Filter::compile`] checks everything that can be checked without an event and turns
//! the text into a small tree whose literals are already converted, so that
//! [`Filter::matches`] does not allocate.
//!
//! The parts: `lexer` splits the text into lexemes; `parser` builds the tree of `ast`
//! from them, handing each comparison to `compare`, which checks the field against the
//! literal and converts the literal; `eval` runs the tree on an event and `display`
//! prints it back.

#[cfg(test)]
mod assuming_tests;
mod ast;
mod compare;
mod display;
mod eval;
mod lexer;
mod parser;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use crate::event::{Event, Space};
use ast::{CmpOp, Comparison, Expr, Test};

pub(crate) use eval::attr;

/// How deeply parentheses and `!` may nest; deeper input is rejected rather than
/// risking the stack.
const MAX_DEPTH: usize = 64;

/// A compiled `when` expression.
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    /// The expression tree, literals converted.
    root: Expr,
    /// The tree as the flat list of comparisons an event is tested with.
    program: eval::Program,
    /// The net's space, which names the location fields when printing.
    space: Space,
    /// Attribute names the expression reads (built-ins excluded), in order of first use.
    fields: Box<[Arc<str>]>,
}

/// Where and what: `offset` is the byte offset in `src` where the problem is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FilterError {
    /// Byte offset in the expression's text.
    pub(crate) offset: usize,
    /// What was wrong, lowercase, no trailing period.
    pub(crate) message: String,
}

impl FilterError {
    fn new(offset: usize, message: impl Into<String>) -> FilterError {
        FilterError {
            offset,
            message: message.into(),
        }
    }
}

impl Filter {
    /// Parses and compiles `src` for a net in `space`.
    pub(crate) fn compile(src: &str, space: Space) -> Result<Filter, FilterError> {
        let lexemes = lexer::lex(src)?;
        let (root, fields) = parser::parse(src, &lexemes, space)?;
        Ok(Filter {
            program: eval::Program::new(&root),
            root,
            space,
            fields: fields.into_boxed_slice(),
        })
    }

    /// Does `event` satisfy the expression? Does not allocate.
    #[inline]
    pub(crate) fn matches(&self, event: &Event) -> bool {
        self.program.eval(event)
    }

    /// [`Filter::matches`] by a walk of the tree (which the tests hold the program to).
    #[cfg(test)]
    pub(crate) fn matches_by_tree(&self, event: &Event) -> bool {
        self.root.eval(event)
    }

    /// The `attribute == "text"` comparisons every matching event satisfies: the
    /// expression's top-level conjuncts of that form (through nested `&&`), as
    /// (attribute, text). An event whose attribute is missing or differs matches not.
    pub(crate) fn required_texts(&self) -> Vec<(&Arc<str>, &Arc<str>)> {
        fn walk<'a>(n: &'a Expr, out: &mut Vec<(&'a Arc<str>, &'a Arc<str>)>) {
            match n {
                Expr::Cmp(Comparison {
                    op: CmpOp::Eq,
                    test: Test::AttrStr(attr, text),
                }) => out.push((attr, text)),
                Expr::And(ns) => ns.iter().for_each(|n| walk(n, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// What is left to test of an event known to have `attr` equal to `text`: the
    /// expression without its first top-level conjunct `attr == "text"` (found as
    /// [`Filter::required_texts`] finds them), or `None` when nothing is left. An
    /// atomic component that the dispatch reaches only for events with that value
    /// tests this instead (the same answer for those events, one comparison fewer).
    pub(crate) fn assuming(&self, attr: &str, text: &str) -> Option<Filter> {
        fn strip(n: &Expr, attr: &str, text: &str, done: &mut bool) -> Option<Expr> {
            if *done {
                return Some(n.clone());
            }
            match n {
                Expr::Cmp(Comparison {
                    op: CmpOp::Eq,
                    test: Test::AttrStr(a, t),
                }) if **a == *attr && **t == *text => {
                    *done = true;
                    None
                }
                Expr::And(ns) => {
                    let mut kept: Vec<Expr> = ns
                        .iter()
                        .filter_map(|n| strip(n, attr, text, done))
                        .collect();
                    match kept.len() {
                        0 => None,
                        1 => kept.pop(),
                        _ => Some(Expr::And(kept.into_boxed_slice())),
                    }
                }
                other => Some(other.clone()),
            }
        }
        let root = strip(&self.root, attr, text, &mut false)?;
        Some(Filter {
            program: eval::Program::new(&root),
            root,
            space: self.space,
            // The whole filter's: what the net reads is unchanged.
            fields: self.fields.clone(),
        })
    }

    /// The attribute names the expression reads, each once, in order of first use.
    /// Built-in fields (`id`, `time`, `type`, the location) are not listed.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| &**f)
    }
}

/// Prints the expression in canonical, fully parenthesised form, e.g.
/// `((speed > 10) && !(iff == true))`; the output compiles back to the same filter.
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.show(f, self.space)
    }
}

//! Printing the compiled tree in canonical, fully parenthesised form, with literals
//! written so that they read back as the same values.

use std::fmt;

use super::ast::{Comparison, Expr, Test};
use crate::event::Space;

impl Expr {
    /// Prints the node; `space` names the location fields.
    pub(super) fn show(&self, f: &mut fmt::Formatter<'_>, space: Space) -> fmt::Result {
        match self {
            Expr::Cmp(c) => c.show(f, space),
            Expr::Not(n) => {
                f.write_str("!")?;
                n.show(f, space)
            }
            Expr::And(ns) => show_chain(f, space, ns, " && "),
            Expr::Or(ns) => show_chain(f, space, ns, " || "),
        }
    }
}

/// Prints `a op b op c` as `((a op b) op c)`.
fn show_chain(f: &mut fmt::Formatter<'_>, space: Space, ns: &[Expr], op: &str) -> fmt::Result {
    for _ in 1..ns.len() {
        f.write_str("(")?;
    }
    for (i, n) in ns.iter().enumerate() {
        if i > 0 {
            f.write_str(op)?;
        }
        n.show(f, space)?;
        if i > 0 {
            f.write_str(")")?;
        }
    }
    Ok(())
}

impl Comparison {
    fn show(&self, f: &mut fmt::Formatter<'_>, space: Space) -> fmt::Result {
        let (xn, yn) = space.axis_names();
        let op = self.op.as_str();
        match &self.test {
            Test::AttrNum(n, v) => write!(f, "({n} {op} {})", Num(*v)),
            Test::AttrStr(n, v) => write!(f, "({n} {op} {})", Quoted(v)),
            Test::AttrBool(n, v) => write!(f, "({n} {op} {v})"),
            Test::IdNum { int: Some(i), .. } => write!(f, "(id {op} {i})"),
            Test::IdNum { value, int: None } => write!(f, "(id {op} {})", Num(*value)),
            Test::IdStr(v) => write!(f, "(id {op} {})", Quoted(v)),
            Test::Time { text: Some(t), .. } => write!(f, "(time {op} {})", Quoted(t)),
            Test::Time { secs, text: None } => write!(f, "(time {op} {})", Num(*secs)),
            Test::Type(v) => write!(f, "(type {op} {})", Quoted(v)),
            Test::X(v) => write!(f, "({xn} {op} {})", Num(*v)),
            Test::Y(v) => write!(f, "({yn} {op} {})", Num(*v)),
            Test::AngleDiff(a, b, v) => write!(f, "(angle_diff({a}, {b}) {op} {})", Num(*v)),
        }
    }
}

/// Prints a number so that it reads back as the same `f64`.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if a == 0.0 || (1e-5..1e16).contains(&a) {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:e}", self.0)
        }
    }
}

/// Prints a string literal with `"` and `\` escaped.
pub(super) struct Quoted<'a>(pub(super) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            if c == '"' || c == '\\' {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str("\"")
    }
}

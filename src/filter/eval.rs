//! Evaluation of the compiled tree against an event, without allocating.

use std::cmp::Ordering;

use super::ast::{CmpOp, Comparison, Expr, Test};
use crate::event::{Event, Id, Value};

/// The tree as a list of comparisons, each naming the one to test next when it
/// holds and when it does not (or the answer): `&&`, `||` and `!` are jumps, so that
/// an event's test walks a flat list without recursion, in the tree's short-circuit
/// order.
#[derive(Clone, Debug)]
pub(super) struct Program {
    steps: Box<[Step]>,
    /// The first comparison tested (or the answer, for a filter of none).
    entry: u32,
}

#[derive(Clone, Debug)]
struct Step {
    cmp: Comparison,
    /// Where to go when the comparison holds, and when it does not.
    then: [u32; 2],
}

/// The answers, past every comparison's place.
const TRUE: u32 = u32::MAX;
const FALSE: u32 = u32::MAX - 1;

impl Program {
    /// The program of `root`.
    pub(super) fn new(root: &Expr) -> Program {
        fn emit(n: &Expr, t: u32, f: u32, steps: &mut Vec<Step>) -> u32 {
            match n {
                Expr::Cmp(c) => {
                    let at = u32::try_from(steps.len()).expect("fewer than 2^32 comparisons");
                    steps.push(Step {
                        cmp: c.clone(),
                        then: [t, f],
                    });
                    at
                }
                Expr::Not(n) => emit(n, f, t, steps),
                // From the last operand back: each goes on to the next on its
                // outcome that does not settle the chain.
                Expr::And(ns) => ns.iter().rev().fold(t, |next, n| emit(n, next, f, steps)),
                Expr::Or(ns) => ns.iter().rev().fold(f, |next, n| emit(n, t, next, steps)),
            }
        }
        let mut steps = Vec::new();
        let entry = emit(root, TRUE, FALSE, &mut steps);
        Program {
            steps: steps.into_boxed_slice(),
            entry,
        }
    }

    /// Does `e` satisfy the expression?
    #[inline]
    pub(super) fn eval(&self, e: &Event) -> bool {
        let mut at = self.entry;
        while let Some(step) = self.steps.get(at as usize) {
            at = step.then[usize::from(!step.cmp.eval(e))];
        }
        at == TRUE
    }
}

#[cfg(test)]
impl Expr {
    /// Does `e` satisfy this node?
    pub(super) fn eval(&self, e: &Event) -> bool {
        match self {
            Expr::Cmp(c) => c.eval(e),
            Expr::Not(n) => !n.eval(e),
            Expr::And(ns) => ns.iter().all(|n| n.eval(e)),
            Expr::Or(ns) => ns.iter().any(|n| n.eval(e)),
        }
    }
}

impl CmpOp {
    #[inline]
    fn num(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }

    #[inline]
    fn ord(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o.is_eq(),
            CmpOp::Ne => o.is_ne(),
            CmpOp::Lt => o.is_lt(),
            CmpOp::Le => o.is_le(),
            CmpOp::Gt => o.is_gt(),
            CmpOp::Ge => o.is_ge(),
        }
    }

    #[inline]
    fn str(self, a: &str, b: &str) -> bool {
        match self {
            CmpOp::Eq => same(a, b),
            CmpOp::Ne => !same(a, b),
            _ => self.ord(a.as_bytes().cmp(b.as_bytes())),
        }
    }
}

impl Comparison {
    // Not inlined into the program's loop, which would then read every field any
    // comparison might (the time as seconds, the location…) before the first.
    #[inline(never)]
    fn eval(&self, e: &Event) -> bool {
        let op = self.op;
        match &self.test {
            Test::AttrNum(name, v) => {
                matches!(attr(e, name), Some(Value::Num(a)) if op.num(*a, *v))
            }
            Test::AttrStr(name, v) => matches!(attr(e, name), Some(Value::Str(a)) if op.str(a, v)),
            Test::AttrBool(name, v) => {
                matches!(attr(e, name), Some(Value::Bool(a)) if (a == v) == (op == CmpOp::Eq))
            }
            Test::IdNum { value, int } => match (&e.id, int) {
                (Id::Int(a), Some(b)) => op.ord(i128::from(*a).cmp(b)),
                (Id::UInt(a), Some(b)) => op.ord(i128::from(*a).cmp(b)),
                (Id::Int(a), None) => op.num(*a as f64, *value),
                (Id::UInt(a), None) => op.num(*a as f64, *value),
                (Id::Str(_), _) => false,
            },
            Test::IdStr(v) => matches!(&e.id, Id::Str(a) if op.str(a, v)),
            Test::Time { secs, .. } => op.num(e.time.as_secs_f64(), *secs),
            Test::Type(v) => op.str(&e.kind, v),
            Test::X(v) => matches!(e.location, Some(p) if op.num(p.x, *v)),
            Test::Y(v) => matches!(e.location, Some(p) if op.num(p.y, *v)),
            Test::AngleDiff(a, b, v) => match (attr(e, a), attr(e, b)) {
                (Some(Value::Num(a)), Some(Value::Num(b))) => op.num(angle_diff(*a, *b), *v),
                _ => false,
            },
        }
    }
}

/// The angle in degrees, 0 to 180, between bearings `a` and `b` in degrees (any
/// range: -60 and 300 are the same bearing).
pub(super) fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// The value of attribute `name` of `e`, like [`Event::attr`] but quicker for the
/// short names attributes usually have.
#[inline]
pub(crate) fn attr<'e>(e: &'e Event, name: &str) -> Option<&'e Value> {
    e.attrs.iter().find(|(k, _)| same(k, name)).map(|(_, v)| v)
}

/// String equality, inlined for short strings rather than calling `memcmp`.
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        false
    } else if a.len() <= 16 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

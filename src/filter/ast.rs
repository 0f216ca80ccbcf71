//! The compiled expression tree: `&&`/`||`/`!` nodes over comparisons whose field is
//! resolved and whose literal is already converted.

use std::sync::Arc;

/// A node of the compiled expression.
#[derive(Clone, Debug)]
pub(super) enum Expr {
    /// One comparison `field op literal`.
    Cmp(Comparison),
    /// The negation of its operand.
    Not(Box<Expr>),
    /// Two or more operands of one `&&` chain (left-associative).
    And(Box<[Expr]>),
    /// Two or more operands of one `||` chain (left-associative).
    Or(Box<[Expr]>),
}

/// A comparison operator, applied as `field op literal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator as written.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its sides swapped: `10 < x` is `x > 10`.
    pub(super) fn flip(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ne => CmpOp::Ne,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
        }
    }

    /// Is this one of `<`, `<=`, `>`, `>=` (rather than `==` or `!=`)?
    pub(super) fn is_ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }
}

/// One comparison `field op literal`, specialised by field and literal type.
#[derive(Clone, Debug)]
pub(super) struct Comparison {
    /// The operator, with the field on its left.
    pub(super) op: CmpOp,
    /// The field read and the literal.
    pub(super) test: Test,
}

/// What a comparison reads and the literal it compares with.
#[derive(Clone, Debug)]
pub(super) enum Test {
    /// A numeric attribute.
    AttrNum(Arc<str>, f64),
    /// A string attribute.
    AttrStr(Arc<str>, Arc<str>),
    /// A boolean attribute (only `==` and `!=`).
    AttrBool(Arc<str>, bool),
    /// The id against a number; `int` is the literal's exact value when it is written
    /// as an integer, so that large integer ids compare exactly.
    IdNum { value: f64, int: Option<i128> },
    /// The id against a string.
    IdStr(Arc<str>),
    /// The time in seconds; `text` is the RFC 3339 literal when it was written as one.
    Time { secs: f64, text: Option<Arc<str>> },
    /// The event's type.
    Type(Arc<str>),
    /// The location's first coordinate (`x` or `lon`).
    X(f64),
    /// The location's second coordinate (`y` or `lat`).
    Y(f64),
    /// `angle_diff(a, b)`: the angle in degrees, 0 to 180, between the bearings held by
    /// numeric attributes `a` and `b`, against a number.
    AngleDiff(Arc<str>, Arc<str>, f64),
}

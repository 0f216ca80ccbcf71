//! The parser: builds the expression tree from the lexemes.
//!
//! The precedence of `||` (lowest), `&&` and `!` (tightest) is winnow's Pratt parser,
//! [`winnow::combinator::expression`], run over the lexemes as a [`TokenSlice`]. Its
//! operands are what binds tighter than `!`: a parenthesised expression, a comparison
//! `field op literal` (or `literal op field`), or a bare field. They are parsed by
//! hand, because most of the error messages are about them and need what came before:
//! the operand of a `!` may not be a comparison, and "expected an expression after
//! `&&`" names the previous lexeme. [`TokenSlice::previous_tokens`] gives that
//! context, and a [`State`] carried in the stream holds the net's space, the attribute
//! names read so far and the nesting depth.
//!
//! Errors are final: every check fails with [`Fail::Cut`], and the only backtracking is
//! winnow's own, when an operand parser declines a `!` (so that the prefix parser
//! reads it) or an operator parser declines a lexeme that is not its operator.

use std::sync::Arc;

use winnow::combinator::{expression, Infix, Prefix};
use winnow::error::ParserError;
use winnow::stream::{Stateful, Stream as _, TokenSlice};
use winnow::Parser as _;

use super::ast::{CmpOp, Comparison, Expr, Test};
use super::compare::{attr_name, comparison, Side};
use super::lexer::{Lexeme, LexemeKind};
use super::{FilterError, MAX_DEPTH};
use crate::event::Space;

/// Parses the lexemes of `src` for a net in `space`: the tree, and the attribute names
/// it reads in order of first use.
pub(super) fn parse(
    src: &str,
    lexemes: &[Lexeme],
    space: Space,
) -> Result<(Expr, Vec<Arc<str>>), FilterError> {
    let mut i = Input {
        input: TokenSlice::new(lexemes),
        state: State {
            src,
            space,
            fields: Vec::new(),
            depth: 0,
        },
    };
    let root = match disjunction(&mut i) {
        Ok(part) => part.finish(),
        Err(Fail::Cut(e)) => return Err(e),
        // Operands decline only `!`, which the prefix parser then takes.
        Err(Fail::Backtrack) => return Err(unexpected(&i)),
    };
    match peek(&i) {
        None => {}
        Some(LexemeKind::RParen) => return Err(err_here(&i, "unexpected `)`")),
        Some(_) => {
            let msg = format!("expected `&&` or `||` before `{}`", text_here(&i));
            return Err(err_here(&i, msg));
        }
    }
    Ok((root, i.state.fields))
}

/// The lexemes being parsed, with the parser's [`State`].
type Input<'s> = Stateful<TokenSlice<'s, Lexeme>, State<'s>>;

/// What the parser carries along the lexemes.
#[derive(Debug)]
struct State<'s> {
    /// The expression's text, for lexemes' text and the offset of its end.
    src: &'s str,
    /// The net's space, which names the location fields.
    space: Space,
    /// Attribute names read so far, in order of first use.
    fields: Vec<Arc<str>>,
    /// How many `(` and `!` enclose the current position (a `(` right after a `!`
    /// counting with it as one).
    depth: usize,
}

/// Why a parser stopped.
#[derive(Debug)]
enum Fail {
    /// Not this parser's input: winnow may try another.
    Backtrack,
    /// The expression is wrong; parsing stops.
    Cut(FilterError),
}

impl From<FilterError> for Fail {
    fn from(e: FilterError) -> Fail {
        Fail::Cut(e)
    }
}

impl<'s> ParserError<Input<'s>> for Fail {
    type Inner = Fail;

    fn from_input(_: &Input<'s>) -> Fail {
        Fail::Backtrack
    }

    fn is_backtrack(&self) -> bool {
        matches!(self, Fail::Backtrack)
    }

    fn into_inner(self) -> Result<Fail, Fail> {
        Ok(self)
    }
}

/// What the parsers return.
type PResult<O> = Result<O, Fail>;

/// Binding power of `||`.
const OR: i64 = 1;
/// Binding power of `&&`.
const AND: i64 = 2;
/// Binding power of `!`.
const NOT: i64 = 3;

/// A parsed subexpression whose `&&` or `||` chain may still grow: folding `a && b`
/// and then `&& c` gives one `And` of three operands, as the tree wants, while a
/// parenthesised chain is [`Part::Done`] and is not extended.
enum Part {
    /// Complete.
    Done(Expr),
    /// Two or more operands joined by `&&` so far.
    And(Vec<Expr>),
    /// Two or more operands joined by `||` so far.
    Or(Vec<Expr>),
}

impl Part {
    /// The subexpression as a tree node.
    fn finish(self) -> Expr {
        match self {
            Part::Done(e) => e,
            Part::And(v) => Expr::And(v.into_boxed_slice()),
            Part::Or(v) => Expr::Or(v.into_boxed_slice()),
        }
    }
}

/// An expression: operands joined by `&&`, `||` and `!`, up to a lexeme that
/// continues none of them.
fn disjunction(i: &mut Input<'_>) -> PResult<Part> {
    expression(operand)
        .prefix(negation)
        .infix(connective)
        .parse_next(i)
}

/// `&&` or `||`, as a left-associative operator.
fn connective<'s>(i: &mut Input<'s>) -> PResult<Infix<Input<'s>, Part, Fail>> {
    let op = match peek(i) {
        Some(LexemeKind::AndAnd) => Infix::Left(AND, and as _),
        Some(LexemeKind::OrOr) => Infix::Left(OR, or as _),
        _ => return Err(Fail::Backtrack),
    };
    i.next_token();
    Ok(op)
}

/// Folds `a && b`, extending `a` if it is an unfinished `&&` chain.
fn and(_: &mut Input<'_>, a: Part, b: Part) -> PResult<Part> {
    Ok(match a {
        Part::And(mut v) => {
            v.push(b.finish());
            Part::And(v)
        }
        a => Part::And(vec![a.finish(), b.finish()]),
    })
}

/// Folds `a || b`, extending `a` if it is an unfinished `||` chain.
fn or(_: &mut Input<'_>, a: Part, b: Part) -> PResult<Part> {
    Ok(match a {
        Part::Or(mut v) => {
            v.push(b.finish());
            Part::Or(v)
        }
        a => Part::Or(vec![a.finish(), b.finish()]),
    })
}

/// `!`, as a prefix operator; its operand is read by [`negated`].
fn negation<'s>(i: &mut Input<'s>) -> PResult<Prefix<Input<'s>, Part, Fail>> {
    if peek(i) != Some(&LexemeKind::Not) {
        return Err(Fail::Backtrack);
    }
    check_depth(i, i.state.depth)?;
    i.next_token();
    i.state.depth += 1;
    Ok(Prefix(NOT, not as _))
}

/// Folds `!inner`; a comparison operator right after the operand is an error.
fn not(i: &mut Input<'_>, inner: Part) -> PResult<Part> {
    if let Some(LexemeKind::Cmp(op)) = peek(i) {
        let op = op.as_str();
        let msg =
            format!("`!` binds tighter than `{op}`; to negate a comparison write `!(a {op} b)`");
        return Err(err_here(i, msg).into());
    }
    i.state.depth -= 1;
    Ok(Part::Done(Expr::Not(Box::new(inner.finish()))))
}

/// An operand of `&&`, `||` or `!`; declines a `!`, which the prefix parser reads.
fn operand(i: &mut Input<'_>) -> PResult<Part> {
    if peek(i) == Some(&LexemeKind::Not) {
        return Err(Fail::Backtrack);
    }
    let after_not = matches!(
        i.input.previous_tokens().next(),
        Some(Lexeme {
            kind: LexemeKind::Not,
            ..
        })
    );
    let e = if after_not { negated(i)? } else { primary(i)? };
    Ok(Part::Done(e))
}

/// The operand of a `!` (other than another `!`).
fn negated(i: &mut Input<'_>) -> PResult<Expr> {
    // `!` binds tighter than the comparisons: its operand is a negation, a
    // parenthesised expression or a bare field, never a comparison.
    match peek(i) {
        // The `!` has counted this level already.
        Some(LexemeKind::LParen) => group(i, i.state.depth),
        Some(LexemeKind::Ident) => {
            let field = side(i);
            Ok(bare_field(i, &field)?)
        }
        _ => {
            let found = found_here(i);
            let msg = format!("expected a field or `(` after `!`, found {found}");
            Err(err_here(i, msg).into())
        }
    }
}

/// A parenthesised expression or a comparison.
fn primary(i: &mut Input<'_>) -> PResult<Expr> {
    let msg = match peek(i) {
        Some(LexemeKind::LParen) => {
            let e = group(i, i.state.depth + 1)?;
            if let Some(LexemeKind::Cmp(op)) = peek(i) {
                let msg = format!(
                    "`{}` cannot compare a parenthesised expression; compare a field with a literal",
                    op.as_str()
                );
                return Err(err_here(i, msg).into());
            }
            return Ok(e);
        }
        Some(
            LexemeKind::Ident | LexemeKind::Num { .. } | LexemeKind::Str(_) | LexemeKind::Bool(_),
        ) => return comparison_or_field(i),
        Some(LexemeKind::RParen) => "unexpected `)`".to_owned(),
        Some(LexemeKind::Comma) => "unexpected `,`".to_owned(),
        Some(LexemeKind::Cmp(op)) => {
            format!("expected a field or a literal before `{}`", op.as_str())
        }
        Some(LexemeKind::AndAnd | LexemeKind::OrOr | LexemeKind::Not) => {
            format!("unexpected `{}`", text_here(i))
        }
        None => match i.input.previous_tokens().next() {
            None => "empty expression".to_owned(),
            Some(prev) => {
                let prev = text_of(i.state.src, prev);
                format!("expected an expression after `{prev}`")
            }
        },
    };
    Err(err_here(i, msg).into())
}

/// `( expr )`, the next lexeme being `(`, at nesting `depth`.
fn group(i: &mut Input<'_>, depth: usize) -> PResult<Expr> {
    check_depth(i, depth)?;
    let open = offset_here(i);
    i.next_token();
    let outer = std::mem::replace(&mut i.state.depth, depth);
    let e = disjunction(i)?.finish();
    i.state.depth = outer;
    match peek(i) {
        Some(LexemeKind::RParen) => {
            i.next_token();
            Ok(e)
        }
        None => Err(FilterError::new(open, "unclosed `(`: expected `)`").into()),
        Some(_) => {
            let msg = format!("expected `&&`, `||` or `)` before `{}`", text_here(i));
            Err(err_here(i, msg).into())
        }
    }
}

/// `field op literal`, `literal op field` or a bare field; the next lexeme is an
/// identifier or a literal.
fn comparison_or_field(i: &mut Input<'_>) -> PResult<Expr> {
    let a = side(i);
    if a.kind == LexemeKind::Ident && peek(i) == Some(&LexemeKind::LParen) {
        return function_comparison(i, &a);
    }
    let Some(LexemeKind::Cmp(op)) = peek(i).cloned() else {
        if a.kind == LexemeKind::Ident {
            let e = bare_field(i, &a)?;
            if !matches!(
                peek(i),
                Some(
                    LexemeKind::Ident
                        | LexemeKind::Num { .. }
                        | LexemeKind::Str(_)
                        | LexemeKind::Bool(_)
                        | LexemeKind::LParen
                        | LexemeKind::Not
                )
            ) {
                return Ok(e);
            }
        }
        let msg = format!("expected a comparison operator after `{}`", a.text);
        return Err(err_here(i, msg).into());
    };
    let op_at = offset_here(i);
    i.next_token();
    if !matches!(
        peek(i),
        Some(LexemeKind::Ident | LexemeKind::Num { .. } | LexemeKind::Str(_) | LexemeKind::Bool(_))
    ) {
        let found = found_here(i);
        let msg = format!(
            "expected a field or a literal after `{}`, found {found}",
            op.as_str()
        );
        return Err(err_here(i, msg).into());
    }
    let b = side(i);
    if b.kind == LexemeKind::Ident && peek(i) == Some(&LexemeKind::LParen) {
        let msg = format!(
            "write the function first: `{}(…) {} {}`",
            b.text,
            op.flip().as_str(),
            a.text
        );
        return Err(FilterError::new(b.start, msg).into());
    }
    if op.is_ordering()
        && [&a.kind, &b.kind]
            .iter()
            .any(|t| matches!(t, LexemeKind::Bool(_)))
    {
        let msg = format!("`{}` cannot compare booleans", op.as_str());
        return Err(FilterError::new(op_at, msg).into());
    }
    let (space, fields) = (i.state.space, &mut i.state.fields);
    let e = match (a.kind == LexemeKind::Ident, b.kind == LexemeKind::Ident) {
        (true, false) => comparison(space, fields, &a, op, &b)?,
        (false, true) => comparison(space, fields, &b, op.flip(), &a)?,
        (true, true) => {
            let msg = format!(
                "cannot compare field `{}` with field `{}`; compare a field with a literal",
                a.text, b.text
            );
            return Err(FilterError::new(b.start, msg).into());
        }
        (false, false) => {
            let msg = format!("expected a field on one side of `{}`", op.as_str());
            return Err(FilterError::new(a.start, msg).into());
        }
    };
    if let Some(LexemeKind::Cmp(op2)) = peek(i) {
        let msg = format!(
            "unexpected `{}`: comparisons cannot be chained; join them with `&&`",
            op2.as_str()
        );
        return Err(err_here(i, msg).into());
    }
    Ok(e)
}

/// `angle_diff(a, b) op number`, the next lexeme being the `(` after the function's
/// name: the angle between the bearings in attributes `a` and `b`, against a number.
fn function_comparison(i: &mut Input<'_>, name: &Side<'_>) -> PResult<Expr> {
    if name.text != "angle_diff" {
        let msg = format!(
            "unknown function `{}`; the one function is `angle_diff(a, b)`, the angle \
             between the bearings in attributes `a` and `b`",
            name.text
        );
        return Err(FilterError::new(name.start, msg).into());
    }
    i.next_token();
    let a = argument(i, "(")?;
    if peek(i) != Some(&LexemeKind::Comma) {
        let msg = format!("expected `,` after `{}`, found {}", a.text, found_here(i));
        return Err(err_here(i, msg).into());
    }
    i.next_token();
    let b = argument(i, ",")?;
    if peek(i) != Some(&LexemeKind::RParen) {
        let msg = format!(
            "expected `)` after `{}`: `angle_diff` takes two attributes, found {}",
            b.text,
            found_here(i)
        );
        return Err(err_here(i, msg).into());
    }
    i.next_token();
    let Some(LexemeKind::Cmp(op)) = peek(i).cloned() else {
        let msg = "expected a comparison operator after `angle_diff(…)`, as in \
                   `angle_diff(a, b) > 40`";
        return Err(err_here(i, msg).into());
    };
    i.next_token();
    let Some(&LexemeKind::Num { value, .. }) = peek(i) else {
        let found = found_here(i);
        let msg = format!(
            "`angle_diff(…)` is a number of degrees: expected a number after `{}`, found {found}",
            op.as_str()
        );
        return Err(err_here(i, msg).into());
    };
    i.next_token();
    if let Some(LexemeKind::Cmp(op2)) = peek(i) {
        let msg = format!(
            "unexpected `{}`: comparisons cannot be chained; join them with `&&`",
            op2.as_str()
        );
        return Err(err_here(i, msg).into());
    }
    let fields = &mut i.state.fields;
    let (a, b) = (attr_name(fields, a.text), attr_name(fields, b.text));
    Ok(Expr::Cmp(Comparison {
        op,
        test: Test::AngleDiff(a, b, value),
    }))
}

/// An attribute named as a function's argument, after `prev`.
fn argument<'s>(i: &mut Input<'s>, prev: &str) -> PResult<Side<'s>> {
    if peek(i) != Some(&LexemeKind::Ident) {
        let found = found_here(i);
        let msg = format!("expected an attribute after `{prev}`, found {found}");
        return Err(err_here(i, msg).into());
    }
    let arg = side(i);
    let (xn, yn) = i.state.space.axis_names();
    if ["id", "time", "type", xn, yn].contains(&arg.text) {
        let msg = format!(
            "`{}` is not an attribute: `angle_diff` reads two numeric attributes holding \
             bearings in degrees",
            arg.text
        );
        return Err(FilterError::new(arg.start, msg).into());
    }
    Ok(arg)
}

/// A bare field `f`, meaning `f == true`.
fn bare_field(i: &mut Input<'_>, field: &Side<'_>) -> Result<Expr, FilterError> {
    let lit = Side {
        kind: LexemeKind::Bool(true),
        text: "true",
        start: field.start,
    };
    comparison(i.state.space, &mut i.state.fields, field, CmpOp::Eq, &lit)
}

/// Takes the next lexeme as one side of a comparison.
fn side<'s>(i: &mut Input<'s>) -> Side<'s> {
    let src = i.state.src;
    match i.next_token() {
        Some(t) => Side {
            kind: t.kind.clone(),
            text: text_of(src, t),
            start: t.start,
        },
        None => Side {
            kind: LexemeKind::Ident,
            text: "",
            start: src.len(),
        },
    }
}

/// Fails if `depth` levels of `(` and `!` are too many.
fn check_depth(i: &Input<'_>, depth: usize) -> Result<(), FilterError> {
    if depth >= MAX_DEPTH {
        let msg = format!("expression nested too deeply (more than {MAX_DEPTH} levels)");
        Err(err_here(i, msg))
    } else {
        Ok(())
    }
}

/// The next lexeme's kind.
fn peek<'s>(i: &Input<'s>) -> Option<&'s LexemeKind> {
    i.peek_token().map(|t| &t.kind)
}

/// Offset of the next lexeme, or the end of the source.
fn offset_here(i: &Input<'_>) -> usize {
    i.peek_token().map_or(i.state.src.len(), |t| t.start)
}

/// The source text of lexeme `t`.
fn text_of<'s>(src: &'s str, t: &Lexeme) -> &'s str {
    src.get(t.start..t.end).unwrap_or("")
}

/// Text of the next lexeme (empty at the end).
fn text_here<'s>(i: &Input<'s>) -> &'s str {
    i.peek_token().map_or("", |t| text_of(i.state.src, t))
}

/// Describes the next lexeme for "found …" messages.
fn found_here(i: &Input<'_>) -> String {
    match peek(i) {
        None => "the end".to_owned(),
        Some(_) => format!("`{}`", text_here(i)),
    }
}

/// An error at the next lexeme (or the end).
fn err_here(i: &Input<'_>, msg: impl Into<String>) -> FilterError {
    FilterError::new(offset_here(i), msg)
}

/// The error for input no parser took.
fn unexpected(i: &Input<'_>) -> FilterError {
    err_here(i, format!("unexpected `{}`", text_here(i)))
}

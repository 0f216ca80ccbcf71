//! The parser: recursive descent over the lexemes, compiling each comparison as it is
//! read.

use std::sync::Arc;

use super::ast::{CmpOp, Comparison, Expr, Test};
use super::display::Quoted;
use super::lexer::{Lexeme, LexemeKind};
use super::{FilterError, MAX_DEPTH};
use crate::event::{Space, Timestamp};

/// Parses the lexemes of `src` for a net in `space`: the tree, and the attribute names
/// it reads in order of first use.
pub(super) fn parse(
    src: &str,
    lexemes: &[Lexeme],
    space: Space,
) -> Result<(Expr, Vec<Arc<str>>), FilterError> {
    let mut p = ExprParser {
        src,
        toks: lexemes,
        pos: 0,
        space,
        fields: Vec::new(),
    };
    let root = p.parse_or(0)?;
    match p.peek() {
        None => {}
        Some(LexemeKind::RParen) => return Err(p.err_here("unexpected `)`")),
        Some(_) => {
            let msg = format!("expected `&&` or `||` before `{}`", p.text_here());
            return Err(p.err_here(msg));
        }
    }
    Ok((root, p.fields))
}

/// Recursive descent over the tokens, compiling as it goes.
struct ExprParser<'s> {
    src: &'s str,
    toks: &'s [Lexeme],
    pos: usize,
    space: Space,
    fields: Vec<Arc<str>>,
}

/// A comparison operand as written: a field name or a literal, and where.
struct Operand<'s> {
    kind: LexemeKind,
    text: &'s str,
    start: usize,
}

impl<'s> ExprParser<'s> {
    fn peek(&self) -> Option<&LexemeKind> {
        self.toks.get(self.pos).map(|t| &t.kind)
    }

    /// Offset of the next token, or the end of the source.
    fn offset_here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.src.len(), |t| t.start)
    }

    fn text_of(&self, t: &Lexeme) -> &'s str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    /// Text of the next token (empty at the end).
    fn text_here(&self) -> &'s str {
        self.toks.get(self.pos).map_or("", |t| self.text_of(t))
    }

    fn err_here(&self, msg: impl Into<String>) -> FilterError {
        FilterError::new(self.offset_here(), msg)
    }

    fn bump(&mut self) {
        self.pos += 1;
    }

    fn parse_or(&mut self, depth: usize) -> Result<Expr, FilterError> {
        let mut items = vec![self.parse_and(depth)?];
        while self.peek() == Some(&LexemeKind::OrOr) {
            self.bump();
            items.push(self.parse_and(depth)?);
        }
        Ok(chain(items, Expr::Or))
    }

    fn parse_and(&mut self, depth: usize) -> Result<Expr, FilterError> {
        let mut items = vec![self.parse_unary(depth)?];
        while self.peek() == Some(&LexemeKind::AndAnd) {
            self.bump();
            items.push(self.parse_unary(depth)?);
        }
        Ok(chain(items, Expr::And))
    }

    fn check_depth(&self, depth: usize) -> Result<(), FilterError> {
        if depth >= MAX_DEPTH {
            Err(self.err_here(format!(
                "expression nested too deeply (more than {MAX_DEPTH} levels)"
            )))
        } else {
            Ok(())
        }
    }

    /// A negation, or a primary.
    fn parse_unary(&mut self, depth: usize) -> Result<Expr, FilterError> {
        if self.peek() != Some(&LexemeKind::Not) {
            return self.parse_primary(depth);
        }
        self.check_depth(depth)?;
        self.bump();
        // `!` binds tighter than the comparisons: its operand is a negation, a
        // parenthesised expression or a bare field, never a comparison.
        let inner = match self.peek() {
            Some(LexemeKind::Not) => self.parse_unary(depth + 1)?,
            Some(LexemeKind::LParen) => self.parse_group(depth + 1)?,
            Some(LexemeKind::Ident) => {
                let t = self.operand();
                self.bare_field(&t)?
            }
            _ => {
                let found = self.found_here();
                return Err(
                    self.err_here(format!("expected a field or `(` after `!`, found {found}"))
                );
            }
        };
        if let Some(LexemeKind::Cmp(op)) = self.peek() {
            return Err(self.err_here(format!(
                "`!` binds tighter than `{}`; to negate a comparison write `!(a {} b)`",
                op.as_str(),
                op.as_str()
            )));
        }
        Ok(Expr::Not(Box::new(inner)))
    }

    /// A parenthesised expression or a comparison.
    fn parse_primary(&mut self, depth: usize) -> Result<Expr, FilterError> {
        match self.peek() {
            Some(LexemeKind::LParen) => {
                let node = self.parse_group(depth + 1)?;
                if let Some(LexemeKind::Cmp(op)) = self.peek() {
                    return Err(self.err_here(format!(
                        "`{}` cannot compare a parenthesised expression; compare a field with a literal",
                        op.as_str()
                    )));
                }
                Ok(node)
            }
            Some(
                LexemeKind::Ident
                | LexemeKind::Num { .. }
                | LexemeKind::Str(_)
                | LexemeKind::Bool(_),
            ) => self.parse_comparison(),
            Some(LexemeKind::RParen) => Err(self.err_here("unexpected `)`")),
            Some(LexemeKind::Cmp(op)) => {
                let msg = format!("expected a field or a literal before `{}`", op.as_str());
                Err(self.err_here(msg))
            }
            Some(LexemeKind::AndAnd | LexemeKind::OrOr | LexemeKind::Not) => {
                let msg = format!("unexpected `{}`", self.text_here());
                Err(self.err_here(msg))
            }
            None => match self.pos.checked_sub(1).and_then(|p| self.toks.get(p)) {
                None => Err(self.err_here("empty expression")),
                Some(prev) => {
                    let msg = format!("expected an expression after `{}`", self.text_of(prev));
                    Err(self.err_here(msg))
                }
            },
        }
    }

    /// `( expr )`, the next token being `(`.
    fn parse_group(&mut self, depth: usize) -> Result<Expr, FilterError> {
        self.check_depth(depth)?;
        let open = self.offset_here();
        self.bump();
        let node = self.parse_or(depth)?;
        match self.peek() {
            Some(LexemeKind::RParen) => {
                self.bump();
                Ok(node)
            }
            None => Err(FilterError::new(open, "unclosed `(`: expected `)`")),
            Some(_) => {
                let msg = format!("expected `&&`, `||` or `)` before `{}`", self.text_here());
                Err(self.err_here(msg))
            }
        }
    }

    /// Describes the next token for "found …" messages.
    fn found_here(&self) -> String {
        match self.peek() {
            None => "the end".to_owned(),
            Some(_) => format!("`{}`", self.text_here()),
        }
    }

    /// Takes the next token as an operand.
    fn operand(&mut self) -> Operand<'s> {
        let o = match self.toks.get(self.pos) {
            Some(t) => Operand {
                kind: t.kind.clone(),
                text: self.text_of(t),
                start: t.start,
            },
            None => Operand {
                kind: LexemeKind::Ident,
                text: "",
                start: self.src.len(),
            },
        };
        self.bump();
        o
    }

    /// `field op literal`, `literal op field` or a bare field; the next token is an
    /// identifier or a literal.
    fn parse_comparison(&mut self) -> Result<Expr, FilterError> {
        let a = self.operand();
        let Some(LexemeKind::Cmp(op)) = self.peek().cloned() else {
            if a.kind == LexemeKind::Ident {
                let node = self.bare_field(&a)?;
                if matches!(
                    self.peek(),
                    Some(
                        LexemeKind::Ident
                            | LexemeKind::Num { .. }
                            | LexemeKind::Str(_)
                            | LexemeKind::Bool(_)
                            | LexemeKind::LParen
                            | LexemeKind::Not
                    )
                ) {
                    let msg = format!("expected a comparison operator after `{}`", a.text);
                    return Err(self.err_here(msg));
                }
                return Ok(node);
            }
            let msg = format!("expected a comparison operator after `{}`", a.text);
            return Err(self.err_here(msg));
        };
        let op_at = self.offset_here();
        self.bump();
        if !matches!(
            self.peek(),
            Some(
                LexemeKind::Ident
                    | LexemeKind::Num { .. }
                    | LexemeKind::Str(_)
                    | LexemeKind::Bool(_)
            )
        ) {
            let found = self.found_here();
            return Err(self.err_here(format!(
                "expected a field or a literal after `{}`, found {found}",
                op.as_str()
            )));
        }
        let b = self.operand();
        if op.is_ordering()
            && [&a.kind, &b.kind]
                .iter()
                .any(|t| matches!(t, LexemeKind::Bool(_)))
        {
            return Err(FilterError::new(
                op_at,
                format!("`{}` cannot compare booleans", op.as_str()),
            ));
        }
        let node = match (a.kind == LexemeKind::Ident, b.kind == LexemeKind::Ident) {
            (true, false) => self.comparison(&a, op, &b)?,
            (false, true) => self.comparison(&b, op.flip(), &a)?,
            (true, true) => {
                return Err(FilterError::new(
                    b.start,
                    format!(
                        "cannot compare field `{}` with field `{}`; compare a field with a literal",
                        a.text, b.text
                    ),
                ))
            }
            (false, false) => {
                return Err(FilterError::new(
                    a.start,
                    format!("expected a field on one side of `{}`", op.as_str()),
                ))
            }
        };
        if let Some(LexemeKind::Cmp(op2)) = self.peek() {
            let msg = format!(
                "unexpected `{}`: comparisons cannot be chained; join them with `&&`",
                op2.as_str()
            );
            return Err(self.err_here(msg));
        }
        Ok(node)
    }

    /// A bare field `f`, meaning `f == true`.
    fn bare_field(&mut self, field: &Operand<'s>) -> Result<Expr, FilterError> {
        let lit = Operand {
            kind: LexemeKind::Bool(true),
            text: "true",
            start: field.start,
        };
        self.comparison(field, CmpOp::Eq, &lit)
    }

    /// Compiles `field op lit` (orderings of booleans are already rejected).
    fn comparison(
        &mut self,
        field: &Operand<'s>,
        op: CmpOp,
        lit: &Operand<'s>,
    ) -> Result<Expr, FilterError> {
        let name = field.text;
        let lit_type = match lit.kind {
            LexemeKind::Num { .. } => "a number",
            LexemeKind::Str(_) => "a string",
            _ => "a boolean",
        };
        let wrong = |expected: &str| {
            FilterError::new(lit.start, format!("`{name}` is {expected}, not {lit_type}"))
        };
        let (xn, yn) = self.space.axis_names();
        let test = match (name, &lit.kind) {
            ("id", LexemeKind::Num { value, int }) => Test::IdNum {
                value: *value,
                int: *int,
            },
            ("id", LexemeKind::Str(s)) => Test::IdStr(s.clone()),
            ("id", _) => return Err(wrong("a number or a string")),
            ("time", LexemeKind::Num { value, .. }) => Test::Time {
                secs: *value,
                text: None,
            },
            ("time", LexemeKind::Str(s)) => Test::Time {
                secs: rfc3339_secs(s, lit.start)?,
                text: Some(s.clone()),
            },
            ("time", _) => return Err(wrong("a number or an RFC 3339 string")),
            ("type", LexemeKind::Str(s)) => Test::Type(s.clone()),
            ("type", _) => return Err(wrong("a string")),
            (n, LexemeKind::Num { value, .. }) if n == xn => Test::X(*value),
            (n, LexemeKind::Num { value, .. }) if n == yn => Test::Y(*value),
            (n, _) if n == xn || n == yn => return Err(wrong("a number")),
            (n, kind) => {
                let attr = self.attr_name(n);
                match kind {
                    LexemeKind::Num { value, .. } => Test::AttrNum(attr, *value),
                    LexemeKind::Str(s) => Test::AttrStr(attr, s.clone()),
                    LexemeKind::Bool(b) if !op.is_ordering() => Test::AttrBool(attr, *b),
                    _ => {
                        return Err(FilterError::new(
                            lit.start,
                            format!("expected a literal, found `{}`", lit.text),
                        ))
                    }
                }
            }
        };
        Ok(Expr::Cmp(Comparison { op, test }))
    }

    /// The shared name of attribute `n`, recorded in the field list.
    fn attr_name(&mut self, n: &str) -> Arc<str> {
        if let Some(f) = self.fields.iter().find(|f| &***f == n) {
            return f.clone();
        }
        let f: Arc<str> = n.into();
        self.fields.push(f.clone());
        f
    }
}

/// One operand as itself, several as a chain node.
fn chain(mut items: Vec<Expr>, make: fn(Box<[Expr]>) -> Expr) -> Expr {
    if items.len() == 1 {
        if let Some(n) = items.pop() {
            return n;
        }
    }
    make(items.into_boxed_slice())
}

/// Seconds since the epoch of an RFC 3339 time literal, rounded to the microsecond like
/// event times.
fn rfc3339_secs(s: &str, at: usize) -> Result<f64, FilterError> {
    let ts: jiff::Timestamp = s.parse().map_err(|_| {
        FilterError::new(
            at,
            format!(
                "expected an RFC 3339 time such as \"2024-05-01T12:00:00Z\", found {}",
                Quoted(s)
            ),
        )
    })?;
    let micros = (ts.as_nanosecond() + 500).div_euclid(1000);
    i64::try_from(micros)
        .ok()
        .and_then(Timestamp::from_micros)
        .map(Timestamp::as_secs_f64)
        .ok_or_else(|| {
            FilterError::new(
                at,
                format!("time {} is outside the years 0001–9999", Quoted(s)),
            )
        })
}

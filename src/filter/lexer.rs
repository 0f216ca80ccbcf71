//! The lexer: splits a `when` expression into lexemes (operators, parentheses, field
//! names and literals) with their byte spans, using winnow's token parsers. Literals
//! are converted here, and malformed numbers and strings are reported here.

use std::sync::Arc;

use winnow::ascii::{digit0, digit1, multispace0};
use winnow::combinator::{alt, opt};
use winnow::error::EmptyError;
use winnow::token::{literal, one_of, take_till, take_while};
use winnow::Parser as _;

use super::ast::CmpOp;
use super::FilterError;

/// What a lexeme is, with a literal's value.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum LexemeKind {
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `,`, between a function's arguments.
    Comma,
    /// `!`
    Not,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// A comparison operator.
    Cmp(CmpOp),
    /// A field name (any identifier but `true` and `false`); its text is its span.
    Ident,
    /// A number; `int` is its exact value when written as an integer.
    Num { value: f64, int: Option<i128> },
    /// A string literal, unescaped.
    Str(Arc<str>),
    /// `true` or `false`.
    Bool(bool),
}

/// A lexeme and where it is in the source.
#[derive(Clone, Debug)]
pub(super) struct Lexeme {
    /// What it is.
    pub(super) kind: LexemeKind,
    /// Byte offset of its first character.
    pub(super) start: usize,
    /// Byte offset just past its last character.
    pub(super) end: usize,
}

type Lx<O> = Result<O, EmptyError>;

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn punct(i: &mut &str) -> Lx<LexemeKind> {
    // `alt` takes at most nine alternatives: two-character operators first.
    alt((
        alt((
            literal("&&").value(LexemeKind::AndAnd),
            literal("||").value(LexemeKind::OrOr),
            literal("==").value(LexemeKind::Cmp(CmpOp::Eq)),
            literal("!=").value(LexemeKind::Cmp(CmpOp::Ne)),
            literal("<=").value(LexemeKind::Cmp(CmpOp::Le)),
            literal(">=").value(LexemeKind::Cmp(CmpOp::Ge)),
        )),
        alt((
            literal("<").value(LexemeKind::Cmp(CmpOp::Lt)),
            literal(">").value(LexemeKind::Cmp(CmpOp::Gt)),
            literal("!").value(LexemeKind::Not),
            literal("(").value(LexemeKind::LParen),
            literal(")").value(LexemeKind::RParen),
            literal(",").value(LexemeKind::Comma),
        )),
    ))
    .parse_next(i)
}

/// `-?(digits(.digits*)?|.digits)([eE][+-]?digits)?`, as text.
fn number_text<'s>(i: &mut &'s str) -> Lx<&'s str> {
    (
        opt('-'),
        alt(((digit1, opt(('.', digit0))).void(), ('.', digit1).void())),
        opt((one_of(['e', 'E']), opt(one_of(['+', '-'])), digit1)),
    )
        .take()
        .parse_next(i)
}

fn identifier<'s>(i: &mut &'s str) -> Lx<&'s str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., ident_char),
    )
        .take()
        .parse_next(i)
}

/// Runs `p`, leaving the input untouched if it fails.
fn attempt<'s, O>(i: &mut &'s str, mut p: impl FnMut(&mut &'s str) -> Lx<O>) -> Option<O> {
    let mut j = *i;
    let out = p(&mut j).ok()?;
    *i = j;
    Some(out)
}

/// Splits `src` into lexemes.
pub(super) fn lex(src: &str) -> Result<Vec<Lexeme>, FilterError> {
    let mut toks = Vec::new();
    let mut i: &str = src;
    loop {
        let _ = multispace0::<_, EmptyError>.parse_next(&mut i);
        let start = src.len() - i.len();
        let Some(c) = i.chars().next() else {
            return Ok(toks);
        };
        let kind = if c == '"' {
            lex_string(src, &mut i)?
        } else if c.is_ascii_digit() || c == '-' || c == '.' {
            lex_number(src, &mut i)?
        } else if let Some(word) = attempt(&mut i, identifier) {
            match word {
                "true" => LexemeKind::Bool(true),
                "false" => LexemeKind::Bool(false),
                _ => LexemeKind::Ident,
            }
        } else if let Some(t) = attempt(&mut i, punct) {
            t
        } else {
            let msg = match c {
                '=' => "`=` is not an operator; use `==`".to_owned(),
                '&' => "`&` is not an operator; use `&&`".to_owned(),
                '|' => "`|` is not an operator; use `||`".to_owned(),
                '\'' => "strings are written in double quotes".to_owned(),
                _ => format!("unexpected `{c}`"),
            };
            return Err(FilterError::new(start, msg));
        };
        let end = src.len() - i.len();
        toks.push(Lexeme { kind, start, end });
    }
}

fn lex_number(src: &str, i: &mut &str) -> Result<LexemeKind, FilterError> {
    let start = src.len() - i.len();
    let first = i.chars().next().unwrap_or('-');
    let text = match number_text(i) {
        Ok(t) => t,
        Err(EmptyError) => {
            return Err(FilterError::new(start, format!("unexpected `{first}`")));
        }
    };
    if i.starts_with(|c: char| ident_char(c) || c == '.') {
        let rest = take_while::<_, _, EmptyError>(0.., |c: char| ident_char(c) || c == '.')
            .parse_next(i)
            .unwrap_or_default();
        return Err(FilterError::new(
            start,
            format!("invalid number `{text}{rest}`"),
        ));
    }
    let value: f64 = text
        .parse()
        .map_err(|_| FilterError::new(start, format!("invalid number `{text}`")))?;
    if !value.is_finite() {
        return Err(FilterError::new(
            start,
            format!("number `{text}` is out of range"),
        ));
    }
    let int = if text.contains(['.', 'e', 'E']) {
        None
    } else {
        text.parse::<i128>().ok()
    };
    Ok(LexemeKind::Num { value, int })
}

fn lex_string(src: &str, i: &mut &str) -> Result<LexemeKind, FilterError> {
    let start = src.len() - i.len();
    *i = &i[1..];
    let mut out = String::new();
    loop {
        let chunk = take_till::<_, _, EmptyError>(0.., ['"', '\\'])
            .parse_next(i)
            .unwrap_or_default();
        out.push_str(chunk);
        let at = src.len() - i.len();
        let mut chars = i.chars();
        match chars.next() {
            None => return Err(FilterError::new(start, "unterminated string")),
            Some('"') => {
                *i = chars.as_str();
                return Ok(LexemeKind::Str(out.into()));
            }
            Some(_) => match chars.next() {
                Some(c @ ('"' | '\\')) => {
                    out.push(c);
                    *i = chars.as_str();
                }
                None => return Err(FilterError::new(start, "unterminated string")),
                Some(c) => {
                    return Err(FilterError::new(
                        at,
                        format!(
                            "unknown escape `\\{c}` in string; only `\\\"` and `\\\\` are allowed"
                        ),
                    ))
                }
            },
        }
    }
}

//! One comparison `field op literal`, compiled: the field resolved to a built-in
//! (`id`, `time`, `type`, the location) or an attribute, the literal's type checked
//! against it, and an RFC 3339 time literal converted to seconds.

use std::sync::Arc;

use super::ast::{CmpOp, Comparison, Expr, Test};
use super::display::Quoted;
use super::lexer::LexemeKind;
use super::FilterError;
use crate::event::{Space, Timestamp};

/// One side of a comparison as written: a field name or a literal, and where.
pub(super) struct Side<'s> {
    /// The lexeme: [`LexemeKind::Ident`] for a field.
    pub(super) kind: LexemeKind,
    /// Its text in the source.
    pub(super) text: &'s str,
    /// Its byte offset in the source.
    pub(super) start: usize,
}

/// Compiles `field op lit` for a net in `space`, recording an attribute's name in
/// `fields` (orderings of booleans are already rejected).
pub(super) fn comparison(
    space: Space,
    fields: &mut Vec<Arc<str>>,
    field: &Side<'_>,
    op: CmpOp,
    lit: &Side<'_>,
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
    let (xn, yn) = space.axis_names();
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
            let attr = attr_name(fields, n);
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

/// The shared name of attribute `n`, recorded in `fields` on first use.
pub(super) fn attr_name(fields: &mut Vec<Arc<str>>, n: &str) -> Arc<str> {
    if let Some(f) = fields.iter().find(|f| &***f == n) {
        return f.clone();
    }
    let f: Arc<str> = n.into();
    fields.push(f.clone());
    f
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

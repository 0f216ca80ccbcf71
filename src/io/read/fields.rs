//! The field rules shared by JSON Lines and CSV: what each field name means, and how
//! a field's value becomes part of the event (`id`, `time`, `type`, the location,
//! attributes), with the checks that turn a bad value into a [`LineError`].

use std::borrow::Cow;
use std::sync::Arc;

use super::error::{clip, clip_name, fmt_f64};
use super::intern::shared_value;
use super::{LineError, LineParser};
use crate::event::{Event, Id, Point, TimeError, Timestamp, Value};

/// What a field (a JSON key or a CSV column) means.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Role {
    Id,
    Time,
    Type,
    X,
    Y,
    Attr(Arc<str>),
}

impl LineParser {
    /// Applies one field's value to the event being built.
    pub(super) fn apply(
        &self,
        partial: &mut Partial,
        kind: RoleKind,
        name: Name<'_>,
        value: Scalar<'_>,
    ) -> Result<(), LineError> {
        match kind {
            RoleKind::Id => {
                partial.id = Some(match value {
                    Scalar::I64(v) => Id::Int(v),
                    Scalar::U64(v) => match i64::try_from(v) {
                        Ok(v) => Id::Int(v),
                        Err(_) => Id::UInt(v),
                    },
                    Scalar::Str(s) => Id::Str(Arc::from(&*s)),
                    other => {
                        return Err(LineError::BadId {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::Time => {
                partial.time = Some(match value {
                    Scalar::I64(v) => (int_secs(v)?, None),
                    Scalar::U64(v) => match i64::try_from(v) {
                        Ok(v) => (int_secs(v)?, None),
                        Err(_) => return Err(LineError::TimeOutOfRange { got: v.to_string() }),
                    },
                    Scalar::F64(v) => match Timestamp::from_secs_f64(v) {
                        Some(t) => (t, None),
                        None => return Err(LineError::TimeOutOfRange { got: fmt_f64(v) }),
                    },
                    Scalar::Str(s) => (rfc3339(&s)?, Some(Arc::from(&*s))),
                    other => {
                        return Err(LineError::BadTime {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::Type => {
                partial.kind = Some(match value {
                    Scalar::Str(s) => self.known.get(&s),
                    other => {
                        return Err(LineError::BadType {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::X | RoleKind::Y => {
                let field = if kind == RoleKind::X {
                    self.axes.0
                } else {
                    self.axes.1
                };
                let v = match value {
                    Scalar::Null => return Ok(()),
                    Scalar::I64(v) => v as f64,
                    Scalar::U64(v) => v as f64,
                    Scalar::F64(v) => v,
                    other => {
                        return Err(LineError::BadCoordinate {
                            field,
                            got: other.describe(),
                        })
                    }
                };
                if !v.is_finite() {
                    return Err(LineError::BadCoordinate {
                        field,
                        got: fmt_f64(v),
                    });
                }
                if self.wgs84 {
                    let limit = if kind == RoleKind::X { 180 } else { 90 };
                    if v.abs() > f64::from(limit) {
                        return Err(LineError::CoordinateOutOfRange {
                            field,
                            value: fmt_f64(v),
                            limit,
                        });
                    }
                }
                if kind == RoleKind::X {
                    partial.x = Some(v);
                } else {
                    partial.y = Some(v);
                }
            }
            RoleKind::Attr => {
                let value = match value {
                    Scalar::Null => return Ok(()),
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::I64(v) => Value::Num(v as f64),
                    Scalar::U64(v) => Value::Num(v as f64),
                    Scalar::F64(v) => Value::Num(v),
                    Scalar::Str(s) => Value::Str(shared_value(&s)),
                    Scalar::Compound(got) => {
                        return Err(LineError::BadAttribute {
                            field: clip_name(name.as_str()),
                            got: got.to_owned(),
                        })
                    }
                };
                let name = match name {
                    Name::Shared(n) => Arc::clone(n),
                    Name::Borrowed(n) => self.known.get(n),
                    Name::Fixed => return Ok(()),
                };
                partial.attrs.push((name, value));
            }
        }
        Ok(())
    }

    /// Checks the required fields and the location, and builds the event.
    pub(super) fn finish(&self, p: Partial) -> Result<Event, LineError> {
        let id = p.id.ok_or(LineError::Missing { field: "id" })?;
        let (time, time_text) = p.time.ok_or(LineError::Missing { field: "time" })?;
        let location = match (p.x, p.y) {
            (Some(x), Some(y)) => Some(Point { x, y }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(LineError::HalfLocation {
                    given: self.axes.0,
                    missing: self.axes.1,
                })
            }
            (None, Some(_)) => {
                return Err(LineError::HalfLocation {
                    given: self.axes.1,
                    missing: self.axes.0,
                })
            }
        };
        Ok(Event {
            id,
            kind: p.kind.unwrap_or_else(|| Arc::clone(&self.default_kind)),
            time,
            time_text,
            location,
            attrs: p.attrs,
        })
    }
}

/// The special meaning of a field name, if it has one.
pub(super) fn role_of(name: &str, axes: (&str, &str)) -> Option<Role> {
    match name {
        "id" => Some(Role::Id),
        "time" => Some(Role::Time),
        "type" => Some(Role::Type),
        _ if name == axes.0 => Some(Role::X),
        _ if name == axes.1 => Some(Role::Y),
        _ => None,
    }
}

/// A role without the attribute name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RoleKind {
    Id,
    Time,
    Type,
    X,
    Y,
    Attr,
}

impl RoleKind {
    /// A bit for the duplicate check of the special fields.
    pub(super) fn bit(self) -> u8 {
        match self {
            RoleKind::Id => 1,
            RoleKind::Time => 2,
            RoleKind::Type => 4,
            RoleKind::X => 8,
            RoleKind::Y => 16,
            RoleKind::Attr => 0,
        }
    }
}

/// The kind of `role`.
pub(super) fn role_kind(role: &Role) -> RoleKind {
    match role {
        Role::Id => RoleKind::Id,
        Role::Time => RoleKind::Time,
        Role::Type => RoleKind::Type,
        Role::X => RoleKind::X,
        Role::Y => RoleKind::Y,
        Role::Attr(_) => RoleKind::Attr,
    }
}

/// An attribute's name as the parser has it.
pub(super) enum Name<'a> {
    /// A CSV column name, shared by every row.
    Shared(&'a Arc<str>),
    /// A JSON key.
    Borrowed(&'a str),
    /// Not an attribute.
    Fixed,
}

impl Name<'_> {
    fn as_str(&self) -> &str {
        match self {
            Name::Shared(n) => n,
            Name::Borrowed(n) => n,
            Name::Fixed => "",
        }
    }
}

/// One field's value as read, before it is checked.
#[derive(Debug)]
pub(super) enum Scalar<'a> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
    /// An array or an object: "an array" or "an object".
    Compound(&'static str),
}

impl Scalar<'_> {
    /// The value as an error message shows it.
    pub(super) fn describe(&self) -> String {
        match self {
            Scalar::Null => "null".to_owned(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::I64(v) => v.to_string(),
            Scalar::U64(v) => v.to_string(),
            Scalar::F64(v) => fmt_f64(*v),
            Scalar::Str(s) => clip(s),
            Scalar::Compound(s) => (*s).to_owned(),
        }
    }
}

/// The event being built.
pub(super) struct Partial {
    pub(super) id: Option<Id>,
    pub(super) time: Option<(Timestamp, Option<Arc<str>>)>,
    pub(super) kind: Option<Arc<str>>,
    pub(super) x: Option<f64>,
    pub(super) y: Option<f64>,
    pub(super) attrs: Vec<(Arc<str>, Value)>,
}

impl Partial {
    pub(super) fn new() -> Partial {
        Partial {
            id: None,
            time: None,
            kind: None,
            x: None,
            y: None,
            attrs: Vec::new(),
        }
    }
}

/// Whole seconds since the epoch as a timestamp.
fn int_secs(v: i64) -> Result<Timestamp, LineError> {
    Timestamp::from_secs(v).ok_or_else(|| LineError::TimeOutOfRange { got: v.to_string() })
}

/// An RFC 3339 time, rounded to the microsecond.
fn rfc3339(s: &str) -> Result<Timestamp, LineError> {
    Timestamp::parse_rfc3339(s).map_err(|e| match e {
        TimeError::NotRfc3339 { reason } => LineError::BadTimeText {
            text: clip(s),
            reason,
        },
        _ => LineError::TimeOutOfRange { got: clip(s) },
    })
}

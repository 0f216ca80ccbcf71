//! The field rules shared by JSON Lines and CSV: what each field name means, and how
//! a field's value becomes part of the event (`id`, `time`, `type`, the location,
//! attributes), with the checks that turn a bad value into a [`LineError`].

use std::borrow::Cow;
use std::sync::Arc;

use super::error::{clip, clip_name, fmt_f64};
use super::intern::shared_value;
use super::mapping::TimeUnit;
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
    /// A field the parser skips (one a [`FieldMap`](super::FieldMap) hides).
    Ignore,
    /// A CSV column that gives several fields (mapped twice).
    Many(Arc<[Role]>),
}

impl LineParser {
    /// Applies one field's value to the event being built.
    #[inline(always)]
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
                let unit = self.unit;
                partial.time = Some(match value {
                    Scalar::I64(v) => (int_time(v, unit)?, None),
                    Scalar::U64(v) => match i64::try_from(v) {
                        Ok(v) => (int_time(v, unit)?, None),
                        Err(_) => return Err(LineError::TimeOutOfRange { got: v.to_string() }),
                    },
                    Scalar::F64(v) => (float_time(v, unit)?, None),
                    Scalar::Str(s) => text_time(&s, unit)?,
                    other => {
                        return Err(LineError::BadTime {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::Type => {
                partial.kind = Some(match value {
                    // The type at place 0, the attributes after it.
                    Scalar::Str(s) => super::intern::name_at(&self.known, 0, &s),
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
            RoleKind::Ignore => {}
            RoleKind::Attr => {
                let value = match value {
                    Scalar::Null => return Ok(()),
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::I64(v) => Value::Num(v as f64),
                    Scalar::U64(v) => Value::Num(v as f64),
                    Scalar::F64(v) => Value::Num(v),
                    Scalar::Str(s) => Value::Str(shared_value(&s)),
                    // An array or an object: the attribute is absent, unless the net
                    // reads it (then the line cannot be used as the net means it).
                    Scalar::Compound(_)
                        if self.read_only && !self.known.contains(name.as_str()) =>
                    {
                        return Ok(())
                    }
                    Scalar::Compound(got) => {
                        return Err(LineError::BadAttribute {
                            field: clip_name(name.as_str()),
                            got: got.to_owned(),
                        })
                    }
                };
                let name = match name {
                    Name::Shared(n) => super::intern::local(n),
                    Name::Borrowed(n) => {
                        super::intern::name_at(&self.known, 1 + partial.attrs.len(), n)
                    }
                    Name::Fixed => return Ok(()),
                };
                partial.attrs.push((name, value));
            }
        }
        Ok(())
    }

    /// Checks the required fields and the location, and builds the event.
    pub(super) fn finish(&self, p: Partial) -> Result<Event, LineError> {
        LAST_ATTRS.set(p.attrs.len());
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
            kind: p
                .kind
                .unwrap_or_else(|| super::intern::local(&self.default_kind)),
            time,
            time_text,
            location,
            attrs: p.attrs,
        })
    }
}

impl Role {
    /// Whether a column of this role gives `field`'s role.
    pub(super) fn gives(&self, field: &Role) -> bool {
        match self {
            Role::Many(roles) => roles.iter().any(|r| r == field),
            role => role == field,
        }
    }

    /// The event field's name, for a message.
    pub(super) fn name<'a>(&'a self, axes: (&'a str, &'a str)) -> &'a str {
        match self {
            Role::Id => "id",
            Role::Time => "time",
            Role::Type => "type",
            Role::X => axes.0,
            Role::Y => axes.1,
            Role::Attr(name) => name,
            Role::Ignore | Role::Many(_) => "",
        }
    }
}

/// The special meaning of a field name, if it has one.
#[inline(always)]
pub(super) fn role_of(name: &str, axes: (&str, &str)) -> Option<Role> {
    use super::intern::same;
    // Byte by byte, so that no call compares memory.
    match name.as_bytes() {
        [b'i', b'd'] => Some(Role::Id),
        [b't', b'i', b'm', b'e'] => Some(Role::Time),
        [b't', b'y', b'p', b'e'] => Some(Role::Type),
        _ if same(name, axes.0) => Some(Role::X),
        _ if same(name, axes.1) => Some(Role::Y),
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
    /// Skipped.
    Ignore,
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
            RoleKind::Attr | RoleKind::Ignore => 0,
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
        Role::Ignore | Role::Many(_) => RoleKind::Ignore,
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
    pub(super) fn as_str(&self) -> &str {
        match self {
            Name::Shared(n) => n,
            Name::Borrowed(n) => n,
            Name::Fixed => "",
        }
    }
}

/// One field's value as read, before it is checked.
#[derive(Clone, Debug)]
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

thread_local! {
    /// How many attributes the last event this thread read had: room for as many is
    /// made in the next one's at once, rather than grown to as it is read.
    static LAST_ATTRS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Partial {
    pub(super) fn new() -> Partial {
        Partial {
            id: None,
            time: None,
            kind: None,
            x: None,
            y: None,
            attrs: Vec::with_capacity(LAST_ATTRS.get()),
        }
    }
}

/// A whole number of `unit`s since the epoch as a timestamp.
fn int_time(v: i64, unit: TimeUnit) -> Result<Timestamp, LineError> {
    let per = unit.per_second();
    let micros = match unit {
        TimeUnit::Nanos => Some(v.div_euclid(1_000) + i64::from(v.rem_euclid(1_000) >= 500)),
        _ => v.checked_mul(1_000_000 / per),
    };
    micros
        .and_then(Timestamp::from_micros)
        .ok_or_else(|| out_of_range(v.to_string(), v as f64, unit))
}

/// A (fractional) number of `unit`s since the epoch as a timestamp.
fn float_time(v: f64, unit: TimeUnit) -> Result<Timestamp, LineError> {
    Timestamp::from_secs_f64(v / unit.per_second() as f64)
        .ok_or_else(|| out_of_range(fmt_f64(v), v, unit))
}

/// A time out of range; when it was read in seconds and would be a time since 1970
/// and before 2200 in a shorter unit, the error says so.
fn out_of_range(got: String, v: f64, unit: TimeUnit) -> LineError {
    /// 2200-01-01T00:00:00Z.
    const PLAUSIBLE_SECS: f64 = 7_258_118_400.0;
    if unit == TimeUnit::Seconds {
        for shorter in &TimeUnit::ALL[1..] {
            let secs = v / shorter.per_second() as f64;
            if (0.0..PLAUSIBLE_SECS).contains(&secs) {
                if let Some(t) = Timestamp::from_secs_f64(secs) {
                    return LineError::TimeUnitHint {
                        got,
                        unit: *shorter,
                        would_be: t.to_rfc3339(),
                    };
                }
            }
        }
    }
    LineError::TimeOutOfRange { got }
}

/// A time given as text: RFC 3339 (kept as text, to be echoed), a number of `unit`s
/// (a number like any other), or a date and time without a zone offset such as
/// `2020-06-30T00:00:00` or `2020-06-30 00:00:00.5`, read as UTC (kept as text).
pub(super) fn text_time(
    s: &str,
    unit: TimeUnit,
) -> Result<(Timestamp, Option<Arc<str>>), LineError> {
    let t = s.trim();
    let number = if let Ok(v) = t.parse::<i64>() {
        Some(int_time(v, unit))
    } else {
        t.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| float_time(v, unit))
    };
    if let Some(time) = number {
        return match time {
            Ok(ts) => Ok((ts, None)),
            Err(LineError::TimeUnitHint { unit, would_be, .. }) => Err(LineError::TimeUnitHint {
                got: t.to_owned(),
                unit,
                would_be,
            }),
            Err(_) => Err(LineError::TimeOutOfRange { got: t.to_owned() }),
        };
    }
    let rfc = match Timestamp::parse_rfc3339(t) {
        Ok(ts) => return Ok((ts, Some(Arc::from(s)))),
        Err(TimeError::NotRfc3339 { reason }) => reason,
        Err(_) => return Err(LineError::TimeOutOfRange { got: clip(s) }),
    };
    match t.parse::<jiff::civil::DateTime>() {
        Ok(dt) if t.len() > 10 => match Timestamp::from_civil_utc(dt) {
            Some(ts) => Ok((ts, Some(Arc::from(s)))),
            None => Err(LineError::TimeOutOfRange { got: clip(s) }),
        },
        _ => Err(LineError::BadTimeText {
            text: clip(s),
            reason: rfc,
        }),
    }
}

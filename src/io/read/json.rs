//! JSON Lines: one JSON object per line, deserialized straight into an event by a
//! serde visitor (no intermediate `serde_json::Value`), with errors that name the
//! column and the field.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::error::{clip, clip_name, fmt_f64};
use super::fields::{role_kind, role_of, Name, Partial, Role, RoleKind, Scalar};
use super::flat;
use super::intern::same;
use super::{LineError, LineParser};
use crate::event::{Event, Value};

impl LineParser {
    /// Parses one JSON object, `text`.
    pub(super) fn parse_json(&self, text: &str) -> Result<Event, LineError> {
        match self.parse_flat(text) {
            Some(event) => event,
            None => self.parse_serde(text),
        }
    }

    /// Parses one JSON object, `text`, with `serde_json`.
    pub(super) fn parse_serde(&self, text: &str) -> Result<Event, LineError> {
        let mut ctx = Ctx::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = EventSeed {
            parser: self,
            ctx: &mut ctx,
        };
        let result = seed
            .deserialize(&mut de)
            .and_then(|ev| de.end().map(|()| ev));
        match result {
            Ok(ev) => ev,
            Err(e) => Err(match ctx.err.take() {
                Some(err) => err,
                None => json_error(&e, ctx.field.as_deref()),
            }),
        }
    }
}

/// Describes a serde_json error: its message with the column, and the field if known.
fn json_error(e: &serde_json::Error, field: Option<&str>) -> LineError {
    let msg = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let base = match msg.strip_suffix(&suffix).unwrap_or(&msg) {
        // serde_json's word for `true`, `false` or `null` misspelt.
        "expected ident" | "expected value" => "expected a value",
        base => base,
    };
    let mut detail = if e.column() > 0 {
        format!("{base} at column {}", e.column())
    } else {
        base.to_owned()
    };
    if let Some(field) = field {
        detail.push_str(&format!(" (in field `{}`)", clip_name(field)));
    }
    LineError::NotJson { detail }
}

/// What the JSON visitor reports besides serde_json's own errors.
#[derive(Default)]
struct Ctx {
    /// The error to report, when the visitor failed on a value it understood.
    err: Option<LineError>,
    /// The field being read when serde_json failed.
    field: Option<String>,
}

/// Deserializes one JSON object straight into an event.
struct EventSeed<'p> {
    parser: &'p LineParser,
    ctx: &'p mut Ctx,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = Result<Event, LineError>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl EventSeed<'_> {
    fn not_object<E: de::Error>(self, got: String) -> Result<Result<Event, LineError>, E> {
        self.ctx.err = Some(LineError::NotObject { got });
        Err(E::custom("not an object"))
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = Result<Event, LineError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let parser = self.parser;
        let mut fields = Fields {
            partial: Partial::new(),
            seen: 0,
            names: AttrNames::default(),
        };
        while let Some(key) = map.next_key_seed(KeySeed)? {
            field(parser, self.ctx, &mut fields, &key, |ctx, as_id| {
                let read = if as_id {
                    // An id's number is read from its text (see `id_of`).
                    map.next_value::<&'de RawValue>()
                        .and_then(|raw| id_of(raw).map_err(de::Error::custom))
                } else {
                    map.next_value_seed(ScalarSeed).map(|v| (Scalar::Null, v))
                };
                read.inspect_err(|_| ctx.field = Some(key.to_string()))
            })?;
        }
        let partial = fields.partial;
        Ok(parser.finish(partial))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<Self::Value, A::Error> {
        self.not_object("an array".to_owned())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.not_object(fmt_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.not_object(format!("the string {}", clip(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.not_object("null".to_owned())
    }
}

/// Reads one field named `key`: `read` gives its value, as an id and as anything else
/// when asked for an id (`true`), or as anything else alone (the first of the pair is
/// then unused). An `Err` has the error in `ctx` or is `read`'s.
fn field<'de, E: de::Error>(
    parser: &LineParser,
    ctx: &mut Ctx,
    fields: &mut Fields,
    key: &str,
    read: impl FnOnce(&mut Ctx, bool) -> Result<(Scalar<'de>, Scalar<'de>), E>,
) -> Result<(), E> {
    let mapped = if parser.map.is_empty() {
        None
    } else {
        parser.map.roles(key)
    };
    let Some(roles) = mapped else {
        let kind = match role_of(key, parser.axes) {
            Some(role) => role_kind(&role),
            None => RoleKind::Attr,
        };
        let (id, v) = read(ctx, kind == RoleKind::Id)?;
        let v = if kind == RoleKind::Id { id } else { v };
        if !take(parser, ctx, fields, kind, Name::Borrowed(key), v) {
            return Err(de::Error::custom("bad field"));
        }
        return Ok(());
    };
    let as_id = roles.iter().any(|r| role_kind(r) == RoleKind::Id);
    let (id, v) = read(ctx, as_id)?;
    for role in roles {
        let name = match role {
            Role::Attr(name) => Name::Shared(name),
            _ => Name::Borrowed(key),
        };
        let kind = role_kind(role);
        let v = if kind == RoleKind::Id {
            id.clone()
        } else {
            v.clone()
        };
        if !take(parser, ctx, fields, kind, name, v) {
            return Err(de::Error::custom("bad field"));
        }
    }
    Ok(())
}

impl LineParser {
    /// Reads `text` by the fast path of `flat.rs`; `None` when it gives up, or when a
    /// field is bad (`serde_json`'s reading then words the error).
    pub(super) fn parse_flat(&self, text: &str) -> Option<Result<Event, LineError>> {
        let mut ctx = Ctx::default();
        let mut fields = Fields {
            partial: Partial::new(),
            seen: 0,
            names: AttrNames::default(),
        };
        flat::read(text, |key, token| {
            field::<de::value::Error>(self, &mut ctx, &mut fields, key, |_, as_id| {
                Ok(if as_id {
                    (id_from(token.text, &token.value), token.value)
                } else {
                    (Scalar::Null, token.value)
                })
            })
            .ok()
        })?;
        Some(self.finish(fields.partial))
    }
}

/// The event being built from one JSON object, and the fields seen.
struct Fields {
    partial: Partial,
    /// The special fields seen, as [`RoleKind::bit`]s.
    seen: u8,
    names: AttrNames,
}

/// Applies one field's value `value`, as `kind` (named `name`); `false` with the
/// error in `ctx` when the field is a duplicate or its value bad.
#[inline(always)]
fn take(
    parser: &LineParser,
    ctx: &mut Ctx,
    f: &mut Fields,
    kind: RoleKind,
    name: Name<'_>,
    value: Scalar<'_>,
) -> bool {
    if kind == RoleKind::Ignore {
        return true;
    }
    let dup = if kind == RoleKind::Attr {
        f.names.is_dup(&f.partial.attrs, name.as_str())
    } else {
        let dup = f.seen & kind.bit() != 0;
        f.seen |= kind.bit();
        dup
    };
    if dup {
        ctx.err = Some(LineError::Duplicate {
            field: clip_name(name.as_str()),
        });
        return false;
    }
    if kind == RoleKind::Attr && matches!(value, Scalar::Null) {
        f.names.add_null(name.as_str());
        return true;
    }
    let had = f.partial.attrs.len();
    if let Err(err) = parser.apply(&mut f.partial, kind, name, value) {
        ctx.err = Some(err);
        return false;
    }
    if let Some((name, _)) = f.partial.attrs.get(had) {
        f.names.added(name);
    }
    true
}

/// How many attributes are checked for duplicates by a linear scan.
const SCAN_ATTRS: usize = 16;

/// The attribute names of one JSON object beyond those kept in the event, for the
/// duplicate check: those given as `null`, and past a few attributes, a set of all.
#[derive(Default)]
struct AttrNames {
    nulls: Vec<Arc<str>>,
    set: Option<HashSet<Arc<str>>>,
}

impl AttrNames {
    /// Whether attribute `key` was already given in this object.
    fn is_dup(&mut self, attrs: &[(Arc<str>, Value)], key: &str) -> bool {
        if let Some(set) = &self.set {
            return set.contains(key);
        }
        if attrs.len() + self.nulls.len() >= SCAN_ATTRS {
            let set: HashSet<Arc<str>> = attrs
                .iter()
                .map(|(n, _)| Arc::clone(n))
                .chain(self.nulls.iter().cloned())
                .collect();
            let dup = set.contains(key);
            self.set = Some(set);
            return dup;
        }
        attrs.iter().any(|(n, _)| same(n, key)) || self.nulls.iter().any(|n| same(n, key))
    }

    /// Notes an attribute given as `null`.
    fn add_null(&mut self, key: &str) {
        let name: Arc<str> = Arc::from(key);
        self.added(&name);
        self.nulls.push(name);
    }

    /// Notes an attribute kept in the event.
    fn added(&mut self, name: &Arc<str>) {
        if let Some(set) = &mut self.set {
            set.insert(Arc::clone(name));
        }
    }
}

/// Reads an object key, borrowed from the line when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads a field's value: a scalar, or notes that it is an array or an object.
/// A field read as an id, and as anything else: the same value, but for a number
/// written as a run of digits that no 64-bit integer holds (`-0`, or more than 20
/// digits), which as an id is its text, as a CSV cell's would be (the number would
/// lose digits).
fn id_of(raw: &RawValue) -> Result<(Scalar<'_>, Scalar<'_>), serde_json::Error> {
    let text = raw.get();
    let v = ScalarSeed.deserialize(&mut serde_json::Deserializer::from_str(text))?;
    Ok((id_from(text, &v), v))
}

/// A field's value `v`, written `text`, read as an id (see `id_of`).
fn id_from<'a>(text: &'a str, v: &Scalar<'a>) -> Scalar<'a> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    match v {
        Scalar::F64(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Scalar::Str(Cow::Borrowed(text))
        }
        _ => v.clone(),
    }
}

struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, a string, a boolean or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::I64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::U64(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Scalar::F64(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Skip the contents (serde_json does so without recursion) to report the field.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Compound("an array"))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Compound("an object"))
    }
}

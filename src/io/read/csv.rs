//! CSV: the header (which column holds which field) and the rows, split into cells
//! per RFC 4180 and read by the field rules.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use super::error::clip_name;
use super::fields::{role_kind, role_of, text_time, Name, Partial, Role, Scalar};
use super::mapping::Resolved;
use super::{strip_bom, to_str, LineError, LineParser};
use crate::event::Event;

/// The columns of CSV header line `header`, in a net whose location fields are
/// `axes`, with the input fields mapped by `map`.
pub(super) fn columns(
    header: &[u8],
    axes: (&'static str, &'static str),
    map: &Resolved,
) -> Result<Vec<Role>, LineError> {
    let header = strip_bom(header);
    let header = header.strip_suffix(b"\r").unwrap_or(header);
    let text = to_str(header)?;
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, cell) in CsvCells::new(text).enumerate() {
        let cell = cell.map_err(|e| LineError::BadHeader {
            reason: e.to_string(),
        })?;
        let name = cell.trim();
        if name.is_empty() {
            return Err(LineError::BadHeader {
                reason: format!("column {} has no name", i + 1),
            });
        }
        if !seen.insert(name.to_owned()) {
            return Err(LineError::BadHeader {
                reason: format!("duplicate column `{}`", clip_name(name)),
            });
        }
        names.push(name.to_owned());
    }
    let mut roles: Vec<Option<Role>> = names.iter().map(|n| named(n, axes, map)).collect();
    // A field not named exactly reads the one column named like it but for case.
    let specials = ["id", "time", "type", axes.0, axes.1];
    let wanted = map
        .sources
        .iter()
        .map(|(s, _)| &**s)
        .chain(specials.into_iter().filter(|f| map.roles(f).is_none()));
    let mut ambiguous = Vec::new();
    for want in wanted {
        if names.iter().any(|n| n == want) {
            continue;
        }
        let folded: Vec<usize> = (0..names.len())
            .filter(|&i| roles[i].is_none() && names[i].eq_ignore_ascii_case(want))
            .collect();
        match folded[..] {
            [i] => roles[i] = named(want, axes, map),
            [] => {}
            _ => ambiguous.push((want, folded)),
        }
    }
    let roles: Vec<Role> = roles
        .into_iter()
        .zip(&names)
        .map(|(role, name)| role.unwrap_or_else(|| Role::Attr(Arc::from(name.as_str()))))
        .collect();
    let has = |wanted: &Role| roles.iter().any(|r| r.gives(wanted));
    for (source, given) in &map.sources {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(source)) {
            let fields: Vec<String> = given
                .iter()
                .map(|r| format!("`{}`", clip_name(r.name(axes))))
                .collect();
            return Err(LineError::BadHeader {
                reason: format!(
                    "no `{}` column (mapped to {})",
                    clip_name(source),
                    fields.join(" and ")
                ),
            });
        }
    }
    for (role, field) in [(Role::Id, "id"), (Role::Time, "time")] {
        if !has(&role) {
            let mut reason = format!("no `{field}` column");
            if let Some((_, cols)) = ambiguous.iter().find(|(w, _)| *w == field) {
                let list: Vec<String> = cols.iter().map(|&i| format!("`{}`", names[i])).collect();
                reason.push_str(&format!(
                    " ({} differ from it only in case: map one to it)",
                    list.join(" and ")
                ));
            }
            return Err(LineError::BadHeader { reason });
        }
    }
    match (has(&Role::X), has(&Role::Y)) {
        (true, false) => {
            return Err(LineError::BadHeader {
                reason: format!("a `{}` column but no `{}` column", axes.0, axes.1),
            })
        }
        (false, true) => {
            return Err(LineError::BadHeader {
                reason: format!("a `{}` column but no `{}` column", axes.1, axes.0),
            })
        }
        _ => {}
    }
    Ok(roles)
}

/// The role of a column named `name`, if the map or ccpn's field names give it one.
fn named(name: &str, axes: (&str, &str), map: &Resolved) -> Option<Role> {
    match map.roles(name) {
        Some([]) => Some(Role::Ignore),
        Some([one]) => Some(one.clone()),
        Some(_) => map
            .sources
            .iter()
            .find(|(s, _)| **s == *name)
            .map(|(_, roles)| Role::Many(Arc::clone(roles))),
        None => role_of(name, axes),
    }
}

impl LineParser {
    pub(super) fn parse_csv(&self, text: &str, roles: &[Role]) -> Result<Event, LineError> {
        let mut partial = Partial::new();
        let mut cells = CsvCells::new(text);
        let mut n = 0;
        let mut failure = None;
        for cell in cells.by_ref() {
            let cell = cell?;
            let Some(role) = roles.get(n) else {
                n += 1;
                failure = Some(None);
                break;
            };
            n += 1;
            if let Err(e) = self.apply_cell(&mut partial, role, cell) {
                failure = Some(Some(e));
                break;
            }
        }
        if failure.is_some() {
            for cell in cells {
                cell?;
                n += 1;
            }
        }
        if n != roles.len() {
            return Err(LineError::CellCount {
                expected: roles.len(),
                got: n,
            });
        }
        if let Some(Some(e)) = failure {
            return Err(e);
        }
        self.finish(partial)
    }

    /// Interprets one CSV cell for its column.
    fn apply_cell(
        &self,
        partial: &mut Partial,
        role: &Role,
        cell: Cow<'_, str>,
    ) -> Result<(), LineError> {
        let trimmed = cell.trim();
        if trimmed.is_empty() {
            // An empty cell: the field is absent.
            return Ok(());
        }
        let scalar = match role {
            Role::Type => Scalar::Str(cell),
            Role::Id => {
                if let Some(id) = csv_int(trimmed) {
                    id
                } else if is_digits(trimmed) {
                    Scalar::Str(cell)
                } else if finite_f64(trimmed).is_some() {
                    return Err(LineError::BadId {
                        got: trimmed.to_owned(),
                    });
                } else {
                    Scalar::Str(cell)
                }
            }
            Role::Time => {
                partial.time = Some(text_time(trimmed, self.unit)?);
                return Ok(());
            }
            Role::Ignore => return Ok(()),
            Role::Many(roles) => {
                for role in roles.iter() {
                    self.apply_cell(partial, role, cell.clone())?;
                }
                return Ok(());
            }
            Role::X | Role::Y => match finite_f64(trimmed) {
                Some(v) => Scalar::F64(v),
                None => Scalar::Str(cell),
            },
            Role::Attr(_) => match trimmed {
                "true" => Scalar::Bool(true),
                "false" => Scalar::Bool(false),
                _ => match finite_f64(trimmed) {
                    Some(v) => Scalar::F64(v),
                    None => Scalar::Str(cell),
                },
            },
        };
        let name = match role {
            Role::Attr(name) => Name::Shared(name),
            _ => Name::Fixed,
        };
        self.apply(partial, role_kind(role), name, scalar)
    }
}

/// A finite number, if the text is one.
fn finite_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether the text is an optionally signed run of decimal digits.
fn is_digits(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A CSV id cell written as a plain decimal integer (no `+`, no leading zeros).
fn csv_int(s: &str) -> Option<Scalar<'static>> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
        || s == "-0"
    {
        return None;
    }
    if let Ok(v) = s.parse::<i64>() {
        return Some(Scalar::I64(v));
    }
    s.parse::<u64>().ok().map(Scalar::U64)
}

/// The cells of one CSV line, per RFC 4180 (quoted cells, `""` inside quotes).
///
/// Strict where the `csv` crate is lenient: an unterminated quote, or anything but a
/// comma after a closing quote, is an error. A quote inside an unquoted cell is kept.
pub(super) struct CsvCells<'a> {
    text: &'a str,
    pos: usize,
    done: bool,
}

impl<'a> CsvCells<'a> {
    pub(super) fn new(text: &'a str) -> CsvCells<'a> {
        CsvCells {
            text,
            pos: 0,
            done: false,
        }
    }

    fn quoted(&mut self, start: usize) -> Result<Cow<'a, str>, LineError> {
        let bytes = self.text.as_bytes();
        let mut owned: Option<String> = None;
        let mut seg = start + 1;
        let mut i = seg;
        loop {
            let Some(q) = bytes[i..].iter().position(|&b| b == b'"').map(|q| q + i) else {
                return Err(LineError::NotCsv {
                    reason: format!("unterminated quote starting at column {}", start + 1),
                });
            };
            if bytes.get(q + 1) == Some(&b'"') {
                owned
                    .get_or_insert_with(String::new)
                    .push_str(&self.text[seg..=q]);
                i = q + 2;
                seg = i;
                continue;
            }
            let cell = match owned {
                None => Cow::Borrowed(&self.text[seg..q]),
                Some(mut s) => {
                    s.push_str(&self.text[seg..q]);
                    Cow::Owned(s)
                }
            };
            match bytes.get(q + 1) {
                None => self.done = true,
                Some(b',') => self.pos = q + 2,
                Some(_) => {
                    return Err(LineError::NotCsv {
                        reason: format!(
                            "unexpected character after the closing quote at column {}",
                            q + 2
                        ),
                    })
                }
            }
            return Ok(cell);
        }
    }
}

impl<'a> Iterator for CsvCells<'a> {
    type Item = Result<Cow<'a, str>, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        if bytes.get(start) == Some(&b'"') {
            let cell = self.quoted(start);
            if cell.is_err() {
                self.done = true;
            }
            return Some(cell);
        }
        let cell = match bytes[start..].iter().position(|&b| b == b',') {
            Some(c) => {
                self.pos = start + c + 1;
                &self.text[start..start + c]
            }
            None => {
                self.done = true;
                &self.text[start..]
            }
        };
        Some(Ok(Cow::Borrowed(cell)))
    }
}

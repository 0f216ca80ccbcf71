//! Checks of the operators that repeat or count: `Count`, the aperiodic `A` and
//! `AStar`, the periodic `P` and `PStar`, and `Times`.

use super::{Validator, MAX_ARITY};
use crate::model::{IntervalKind, Op};
use crate::spec::OpSpec;

impl<'a> Validator<'a> {
    /// Checks one operator of this family and binds its operands; `op` (in
    /// `mod.rs`) gives it no other operator.
    pub(super) fn repeat_op(&mut self, name: &'a str, spec: &'a OpSpec) -> Option<Op> {
        match spec {
            OpSpec::Count {
                of,
                n,
                distance,
                window,
                distinct,
            } => {
                let of = self.operand(name, of);
                let mut ok = true;
                if *n < 2 || *n as usize > MAX_ARITY {
                    let msg = format!("`{name}`: `n` must be between 2 and {MAX_ARITY}, got {n}");
                    self.error(&[name], msg);
                    ok = false;
                }
                if !distance.is_finite() || *distance <= 0.0 {
                    let msg = format!(
                        "`{name}`: `distance` must be a positive finite number, got {distance}"
                    );
                    self.error(&[name], msg);
                    ok = false;
                }
                let window = self.duration(name, "window", &Some(window.clone()))??;
                let distinct = distinct.as_deref().map(|d| self.attr(d));
                if !ok {
                    return None;
                }
                Some(Op::Count {
                    of: of?,
                    n: *n as usize,
                    distance: *distance,
                    window,
                    distinct,
                })
            }
            OpSpec::A {
                start,
                e,
                end,
                within,
                key,
            }
            | OpSpec::AStar {
                start,
                e,
                end,
                within,
                key,
            } => {
                let kind = if matches!(spec, OpSpec::A { .. }) {
                    IntervalKind::A
                } else {
                    IntervalKind::AStar
                };
                let (s, x, z) = (
                    self.operand(name, start),
                    self.operand(name, e),
                    self.operand(name, end),
                );
                let window = self.duration(name, "within", within)?;
                if kind == IntervalKind::AStar && window.is_none() {
                    let msg = format!(
                        "`{name}` has no `within`: the occurrences it accumulates wait until an end comes"
                    );
                    self.warn(&[name], msg);
                } else if window.is_none() && key.is_some() {
                    self.warn_open_intervals(name);
                }
                Some(Op::Interval {
                    kind,
                    start: s?,
                    e: Some(x?),
                    end: z?,
                    window,
                    key: key.as_deref().map(|k| self.attr(k)),
                })
            }
            OpSpec::P {
                start,
                period,
                end,
                within,
                key,
            }
            | OpSpec::PStar {
                start,
                period,
                end,
                within,
                key,
            } => {
                let (s, z) = (self.operand(name, start), self.operand(name, end));
                let window = self.duration(name, "within", within)?;
                let period = self.duration(name, "period", &Some(period.clone()))??;
                if period <= 0 {
                    self.error(&[name], format!("`{name}`: `period` must be positive"));
                    return None;
                }
                let kind = if matches!(spec, OpSpec::P { .. }) {
                    IntervalKind::P { period }
                } else {
                    IntervalKind::PStar { period }
                };
                if window.is_none() && key.is_some() {
                    self.warn_open_intervals(name);
                }
                Some(Op::Interval {
                    kind,
                    start: s?,
                    e: None,
                    end: z?,
                    window,
                    key: key.as_deref().map(|k| self.attr(k)),
                })
            }
            OpSpec::Times { k, of, within, key } => {
                let of = self.operand(name, of);
                let window = self.duration(name, "within", within)?;
                if *k < 1 || *k as usize > MAX_ARITY {
                    self.error(
                        &[name],
                        format!("`{name}`: `k` must be between 1 and {MAX_ARITY}, got {k}"),
                    );
                    return None;
                }
                if window.is_none() && key.is_some() && *k > 1 {
                    let msg = format!(
                        "`{name}` has no `within`: each key value's pending occurrences wait until the k-th comes"
                    );
                    self.warn(&[name], msg);
                }
                Some(Op::Times {
                    k: *k as usize,
                    of: of?,
                    window,
                    key: key.as_deref().map(|k| self.attr(k)),
                })
            }
            other => unreachable!("`{name}`: {other:?} is not checked here"),
        }
    }
}

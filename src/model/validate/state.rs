//! Checks of the states (`State`, `Inside`, `Stationary`, `Silent`, `Close`,
//! `Lasting`, `AllOf`, `AnyOf`, `Unless`) and of the operators that read them
//! (`Starts`, `Ends`, `During`): each operand of the kind its operator reads, the
//! keys of combined states compatible, durations positive, distances finite.

use super::Validator;
use crate::model::{Combine, NodeId, Op, StateKey, StateOp};
use crate::spec::{DurationSpec, OpSpec};

impl<'a> Validator<'a> {
    /// Checks one state, or one operator reading a state, and binds its operands.
    pub(super) fn state_op(&mut self, name: &'a str, spec: &'a OpSpec) -> Option<Op> {
        match spec {
            OpSpec::State { on, off, key } => {
                let (on, off) = (self.operand(name, on), self.operand(name, off));
                let key = self.state_key(key.as_deref());
                Some(Op::State {
                    op: StateOp::Toggle { on: on?, off: off? },
                    key,
                })
            }
            OpSpec::Inside {
                of,
                zones,
                key,
                margin,
            } => {
                let of = self.operand(name, of);
                if zones.is_empty() {
                    self.error(&[name], format!("`{name}`: `zones` is empty"));
                }
                if !margin.is_finite() || *margin < 0.0 {
                    let msg =
                        format!("`{name}`: `margin` must be a finite distance >= 0, got {margin}");
                    self.error(&[name], msg);
                    return None;
                }
                let ids: Vec<Option<usize>> = zones.iter().map(|z| self.zone(name, z)).collect();
                let mut zones: Vec<usize> = ids.into_iter().collect::<Option<_>>()?;
                zones.sort_unstable();
                zones.dedup();
                if zones.is_empty() {
                    return None;
                }
                Some(Op::State {
                    op: StateOp::Inside {
                        of: of?,
                        zones,
                        margin: *margin,
                    },
                    key: self.state_key(key.as_deref()),
                })
            }
            OpSpec::Stationary {
                of,
                radius,
                hold,
                key,
            } => {
                let of = self.operand(name, of);
                let hold = self.positive(name, "for", hold);
                if !radius.is_finite() || *radius < 0.0 {
                    let msg =
                        format!("`{name}`: `radius` must be a finite distance >= 0, got {radius}");
                    self.error(&[name], msg);
                    return None;
                }
                Some(Op::State {
                    op: StateOp::Stationary {
                        of: of?,
                        radius: *radius,
                        hold: hold?,
                    },
                    key: self.state_key(key.as_deref()),
                })
            }
            OpSpec::Silent { of, hold, key } => {
                let of = self.operand(name, of);
                let hold = self.positive(name, "for", hold);
                Some(Op::State {
                    op: StateOp::Silent {
                        of: of?,
                        hold: hold?,
                    },
                    key: self.state_key(key.as_deref()),
                })
            }
            OpSpec::Close {
                of,
                max,
                within,
                distinct,
            } => {
                let of = self.operand(name, of);
                // Without `within`, latest occurrences pair however far apart in time.
                let within = self.duration(name, "within", within)?.unwrap_or(i64::MAX);
                if !max.is_finite() || *max < 0.0 {
                    let msg = format!("`{name}`: `max` must be a finite distance >= 0, got {max}");
                    self.error(&[name], msg);
                    return None;
                }
                Some(Op::State {
                    op: StateOp::Close {
                        of: of?,
                        max: *max,
                        within,
                    },
                    key: StateKey::Pair(self.attr(distinct)),
                })
            }
            OpSpec::Lasting { of, min } => {
                let of = self.state_operand(name, of);
                let min = self.positive(name, "min", min);
                let of = of?;
                Some(Op::State {
                    op: StateOp::Lasting { of, min: min? },
                    key: self.key_of(of),
                })
            }
            OpSpec::AllOf { of } | OpSpec::AnyOf { of } => {
                let how = if matches!(spec, OpSpec::AllOf { .. }) {
                    Combine::All
                } else {
                    Combine::Any
                };
                if of.is_empty() {
                    self.error(&[name], format!("`{name}`: needs at least one state"));
                    return None;
                }
                // A state listed twice is one operand (as in `Or`).
                let mut names: Vec<&'a String> = Vec::with_capacity(of.len());
                for n in of {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                let ids: Vec<Option<NodeId>> =
                    names.iter().map(|n| self.state_operand(name, n)).collect();
                let ids: Vec<NodeId> = ids.into_iter().collect::<Option<_>>()?;
                let key = self.shared_key(name, &names, &ids)?;
                Some(Op::State {
                    op: StateOp::Combine { how, of: ids },
                    key,
                })
            }
            OpSpec::Unless { of, except } => {
                let (s, u) = (
                    self.state_operand(name, of),
                    self.state_operand(name, except),
                );
                let ids = [s?, u?];
                let key = self.shared_key(name, &[of, except], &ids)?;
                Some(Op::State {
                    op: StateOp::Combine {
                        how: Combine::Unless,
                        of: ids.to_vec(),
                    },
                    key,
                })
            }
            OpSpec::Starts { of } | OpSpec::Ends { of } => {
                let of = self.state_operand(name, of)?;
                Some(Op::Phase {
                    of,
                    start: matches!(spec, OpSpec::Starts { .. }),
                })
            }
            OpSpec::During { of, state, holds } => {
                let (e, s) = (self.operand(name, of), self.state_operand(name, state));
                let s = s?;
                let key = match self.key_of(s) {
                    StateKey::Whole => None,
                    StateKey::Attr(a) => Some(a),
                    StateKey::Pair(_) => {
                        let msg = format!(
                            "`{name}`: `{state}` is a `Close` state, kept per pair of objects: During cannot read it (read its Starts or Ends, or a Lasting of it)"
                        );
                        self.error(&[name, state], msg);
                        return None;
                    }
                };
                Some(Op::During {
                    of: e?,
                    state: s,
                    holds: *holds,
                    key,
                })
            }
            other => unreachable!("`{name}`: {other:?} is not checked here"),
        }
    }

    /// A state's key: per value of `key`, or one for the whole stream.
    fn state_key(&mut self, key: Option<&str>) -> StateKey {
        match key {
            Some(k) => StateKey::Attr(self.attr(k)),
            None => StateKey::Whole,
        }
    }

    /// The key of state node `id`.
    fn key_of(&self, id: NodeId) -> StateKey {
        match &self.nodes[id].op {
            Op::State { key, .. } => key.clone(),
            _ => StateKey::Whole,
        }
    }

    /// The key every operand of a combined state shares, or an error naming the two
    /// that differ.
    fn shared_key(&mut self, name: &str, names: &[&String], ids: &[NodeId]) -> Option<StateKey> {
        let first = self.key_of(ids[0]);
        for (n, &id) in names.iter().zip(ids).skip(1) {
            let key = self.key_of(id);
            if key != first {
                let msg = format!(
                    "`{name}`: its states must share one key, but `{}` has {} and `{n}` has {}: give them the same `key`",
                    names[0],
                    first.describe(),
                    key.describe()
                );
                self.error(&[name, n], msg);
                return None;
            }
        }
        Some(first)
    }

    /// A duration that must be positive.
    fn positive(&mut self, name: &str, field: &str, d: &DurationSpec) -> Option<i64> {
        let us = self.duration(name, field, &Some(d.clone()))??;
        if us <= 0 {
            let msg = format!(
                "`{name}`: `{field}` must be positive: give a duration such as `{field}: \"5m\"` or `{field}: 300.0` (seconds)"
            );
            self.error(&[name], msg);
            return None;
        }
        Some(us)
    }
}

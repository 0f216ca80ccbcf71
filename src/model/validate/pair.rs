//! Checks of the pairing operators: `Seq` and `And` (nested to the left over more
//! than two operands), `Any`, `Not`, `Dist` and `Direction` (between events, or
//! against a zone's box).

use super::{Validator, MAX_ARITY};
use crate::model::{Op, PairKind};
use crate::spatial::{Dir, RelSet};
use crate::spec::{DirSpec, OpSpec, RelSpec};

impl<'a> Validator<'a> {
    /// Checks one operator of this family and binds its operands; `op` (in
    /// `mod.rs`) gives it no other operator.
    pub(super) fn pair_op(&mut self, name: &'a str, spec: &'a OpSpec) -> Option<Op> {
        match spec {
            OpSpec::Seq {
                of,
                within,
                key,
                distinct,
                context,
            }
            | OpSpec::And {
                of,
                within,
                key,
                distinct,
                context,
            } => {
                let kind = if matches!(spec, OpSpec::Seq { .. }) {
                    PairKind::Seq
                } else {
                    PairKind::And
                };
                if of.len() < 2 {
                    let msg = format!("`{name}`: needs at least two operands, got {}", of.len());
                    self.error(&[name], msg);
                }
                if of.len() > MAX_ARITY {
                    self.error(&[name], format!("`{name}`: more than {MAX_ARITY} operands"));
                }
                let ids = self.operands(name, of)?;
                let opts = self.opts(name, within, key, distinct, *context)?;
                if ids.len() < 2 || ids.len() > MAX_ARITY {
                    return None;
                }
                // Seq(a, b, c) = Seq(Seq(a, b), c), the window bounding the whole.
                let mut acc = ids[0];
                for (i, &next) in ids.iter().enumerate().take(ids.len() - 1).skip(1) {
                    let inner = Op::Pair {
                        kind: kind.clone(),
                        a: acc,
                        b: next,
                        same: i == 1 && of[0] == of[1],
                        opts: opts.clone(),
                    };
                    acc = self.intern(None, inner);
                }
                Some(Op::Pair {
                    kind,
                    a: acc,
                    b: ids[ids.len() - 1],
                    same: ids.len() == 2 && of[0] == of[1],
                    opts,
                })
            }
            OpSpec::Any {
                m,
                of,
                within,
                key,
                distinct,
                context,
            } => {
                let ids = self.operands(name, of);
                let opts = self.opts(name, within, key, distinct, *context);
                if *m < 1 || *m as usize > of.len() {
                    let msg = format!(
                        "`{name}`: `m` must be between 1 and {} (the operand count), got {m}",
                        of.len()
                    );
                    self.error(&[name], msg);
                    return None;
                }
                for (i, o) in of.iter().enumerate() {
                    if of[..i].contains(o) {
                        self.error(
                            &[name, o],
                            format!("`{name}`: operand `{o}` is listed twice"),
                        );
                        return None;
                    }
                }
                if of.len() > MAX_ARITY {
                    self.error(&[name], format!("`{name}`: more than {MAX_ARITY} operands"));
                    return None;
                }
                let ids = ids?;
                Some(Op::Any {
                    m: *m as usize,
                    of: ids,
                    opts: opts?,
                })
            }
            OpSpec::Not {
                start,
                absent,
                end,
                within,
                key,
                distinct,
                context,
            } => {
                let (s, a, e) = (
                    self.operand(name, start),
                    self.operand(name, absent),
                    self.operand(name, end),
                );
                let opts = self.opts(name, within, key, distinct, *context)?;
                Some(Op::Not {
                    start: s?,
                    absent: a?,
                    end: e?,
                    same_ends: start == end,
                    opts,
                })
            }
            OpSpec::Dist {
                a,
                b,
                max,
                within,
                key,
                distinct,
                context,
            } => {
                let (ia, ib) = (self.operand(name, a), self.operand(name, b));
                let opts = self.opts(name, within, key, distinct, *context);
                if !max.is_finite() || *max < 0.0 {
                    self.error(
                        &[name],
                        format!("`{name}`: `max` must be a finite distance >= 0, got {max}"),
                    );
                    return None;
                }
                Some(Op::Pair {
                    kind: PairKind::Dist { max: *max },
                    a: ia?,
                    b: ib?,
                    same: a == b,
                    opts: opts?,
                })
            }
            OpSpec::Direction {
                rel,
                of,
                from,
                in_box,
                within,
                key,
                distinct,
                context,
            } => {
                let rels = rel_set(rel);
                if rels.0.is_empty() {
                    self.error(&[name], format!("`{name}`: `rel` is empty"));
                    return None;
                }
                let of_id = self.operand(name, of);
                match (from, in_box) {
                    (Some(from), None) => {
                        let from_id = self.operand(name, from);
                        let opts = self.opts(name, within, key, distinct, *context)?;
                        Some(Op::Pair {
                            kind: PairKind::Direction { rels },
                            a: of_id?,
                            b: from_id?,
                            same: of == from,
                            opts,
                        })
                    }
                    (None, Some(zone)) => {
                        if within.is_some() || key.is_some() || distinct.is_some() {
                            let msg = format!("`{name}`: a `box` direction is unary: `within`, `key` and `distinct` do not apply");
                            self.error(&[name], msg);
                        }
                        let zone_name = zone;
                        let zone = self.zone(name, zone)?;
                        if self.moves(zone_name) {
                            let msg = format!("`{name}`: zone `{zone_name}` moves with an anchor: a `box` needs a fixed zone");
                            self.error(&[name, zone_name], msg);
                            return None;
                        }
                        Some(Op::DirBox {
                            of: of_id?,
                            rels,
                            zone,
                        })
                    }
                    _ => {
                        self.error(&[name], format!("`{name}`: give exactly one of `from` (an event) and `box` (a zone)"));
                        None
                    }
                }
            }
            other => unreachable!("`{name}`: {other:?} is not checked here"),
        }
    }
}

fn rel_set(rel: &RelSpec) -> RelSet {
    let dirs: Vec<DirSpec> = match rel {
        RelSpec::One(d) => vec![*d],
        RelSpec::Many(v) => v.clone(),
    };
    let mut v: Vec<Dir> = dirs
        .into_iter()
        .map(|d| match d {
            DirSpec::N => Dir::N,
            DirSpec::S => Dir::S,
            DirSpec::E => Dir::E,
            DirSpec::W => Dir::W,
            DirSpec::NE => Dir::NE,
            DirSpec::NW => Dir::NW,
            DirSpec::SE => Dir::SE,
            DirSpec::SW => Dir::SW,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    RelSet(v)
}

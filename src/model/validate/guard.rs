//! Checks of the operators that filter and route occurrences: `Atomic` (its `when`
//! compiled), `Within` (its zones bound) and `Or`.

use super::{locate_when, Validator};
use crate::filter::Filter;
use crate::model::{NodeId, Op, Problem};
use crate::spec::OpSpec;

impl<'a> Validator<'a> {
    /// Checks one operator of this family and binds its operands; `op` (in
    /// `mod.rs`) gives it no other operator.
    pub(super) fn guard_op(&mut self, name: &'a str, spec: &'a OpSpec) -> Option<Op> {
        match spec {
            OpSpec::Atomic { kind, when } => {
                let filter = match when {
                    None => None,
                    Some(w) => match Filter::compile(w, self.spec.space) {
                        Ok(f) => Some(f),
                        Err(e) => {
                            let (line, col) = locate_when(&self.source, name, w, e.offset);
                            self.problems.push(Problem {
                                file: self.file.to_owned(),
                                line,
                                col,
                                message: format!("`{name}`: bad `when` expression: {e}"),
                            });
                            return None;
                        }
                    },
                };
                Some(Op::Atomic {
                    kind: kind.as_str().into(),
                    filter,
                })
            }
            OpSpec::Within { of, zones } => {
                let of = self.operand(name, of);
                if zones.is_empty() {
                    self.error(&[name], format!("`{name}`: `zones` is empty"));
                }
                let ids: Vec<Option<usize>> = zones.iter().map(|z| self.zone(name, z)).collect();
                let mut zones: Vec<usize> = ids.into_iter().collect::<Option<_>>()?;
                zones.sort_unstable();
                zones.dedup();
                if zones.is_empty() {
                    return None;
                }
                Some(Op::Within { of: of?, zones })
            }
            OpSpec::Or { of } => {
                if of.is_empty() {
                    self.error(
                        &[name],
                        format!("`{name}`: `Or` needs at least one operand"),
                    );
                }
                // A name listed twice is one operand; two names are two events, even
                // with identical definitions.
                let mut names: Vec<&'a String> = Vec::with_capacity(of.len());
                for n in of {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                let of: Vec<NodeId> = names
                    .into_iter()
                    .map(|n| self.operand(name, n))
                    .collect::<Option<_>>()?;
                Some(Op::Or { of }).filter(|o| !o.operands().is_empty())
            }
            other => unreachable!("`{name}`: {other:?} is not checked here"),
        }
    }
}

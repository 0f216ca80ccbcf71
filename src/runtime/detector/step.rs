//! One step of a detector: a component fires, and the tokens it makes travel along
//! the connection transitions to the components that read them (or become
//! detections); the step's components fire in topological order.

use super::zones::move_zone;
use super::Detector;
use crate::runtime::component::{Component, Cx};
use crate::runtime::detection::Detection;
use crate::runtime::dirty::Dirty;
use crate::runtime::token::Token;

impl Detector {
    /// Runs `f` on component `id` and fans its new tokens out along the connection transitions.
    pub(super) fn fire(
        &mut self,
        id: usize,
        step: u64,
        f: impl FnOnce(&mut Component, &mut Cx<'_>),
    ) {
        let Detector {
            program,
            components,
            timers,
            budget,
            now,
            serial,
            seq,
            inbox,
            dirty,
            produced,
            routed,
            emitted,
            counts,
            quiet,
            ..
        } = self;
        let quiet = *quiet;
        let mut cx = Cx {
            discard: quiet && program.consumers[id].is_empty(),
            now: *now,
            cause: step,
            space: program.model.space,
            budget,
            timers,
            component: id,
            out: produced,
            routed,
            counts,
        };
        f(&mut components[id], &mut cx);
        let made = produced.len() + routed.len();
        let allowed = budget.allow(step, made);
        if allowed < made {
            // The step has made all the tokens one step may: the rest are not made.
            let own = allowed.min(produced.len());
            produced.truncate(own);
            routed.truncate(allowed - own);
        }
        let program = &**program;
        let own = produced.drain(..).map(|tok| (id, tok));
        for (node, mut tok) in own.chain(routed.drain(..)) {
            *serial += 1;
            tok.serial = *serial;
            tok.cause = step;
            for &m in &program.anchors[node] {
                move_zone(&program.model, program, components, m, &tok);
            }
            let zones = &program.model.zones;
            let outputs = &program.outputs[node];
            if quiet {
                // Detections of an observed event are not made; the token goes on
                // to the components that read it.
                for &(c, role) in &program.consumers[node] {
                    deliver(inbox, dirty, c, role, tok.clone());
                }
                continue;
            }
            match program.consumers[node].split_last() {
                Some(((last, last_role), rest)) => {
                    for name in outputs {
                        emitted.push(Detection::from_token(name.clone(), *seq, &tok, zones));
                        *seq += 1;
                    }
                    for &(c, role) in rest {
                        deliver(inbox, dirty, c, role, tok.clone());
                    }
                    deliver(inbox, dirty, *last, *last_role, tok);
                }
                // Read by nothing else: the last detection takes the token's constituents.
                None => {
                    if let Some((last, rest)) = outputs.split_last() {
                        for name in rest {
                            emitted.push(Detection::from_token(name.clone(), *seq, &tok, zones));
                            *seq += 1;
                        }
                        emitted.push(Detection::from_last_token(last.clone(), *seq, tok, zones));
                        *seq += 1;
                    }
                }
            }
        }
    }

    /// Fires every component that received tokens in this step, in topological order.
    pub(super) fn run_step(&mut self, step: u64, out: &mut Vec<Detection>) {
        while self.run_component(step) {}
        out.append(&mut self.emitted);
    }

    /// Fires the first component (in topological order) that received tokens in this
    /// step, with them; `false` if there is none.
    pub(super) fn run_component(&mut self, step: u64) -> bool {
        let Some(id) = self.dirty.pop() else {
            return false;
        };
        let mut inbox = std::mem::take(&mut self.inbox[id]);
        inbox.sort_by_key(|(role, _)| *role);
        if self.components[id].fires_per_step() {
            self.fire(id, step, |u, cx| u.fire_step(&inbox, cx));
            inbox.clear();
        } else {
            for (role, tok) in inbox.drain(..) {
                self.fire(id, step, |u, cx| u.fire(role, &tok, cx));
            }
        }
        // Keep the allocation for the next step.
        if self.inbox[id].is_empty() {
            self.inbox[id] = inbox;
        }
        true
    }
}

/// Puts `tok` in the input place `role` of component `component`, marking the component to fire.
fn deliver(
    inbox: &mut [Vec<(usize, Token)>],
    dirty: &mut Dirty,
    component: usize,
    role: usize,
    tok: Token,
) {
    if inbox[component].is_empty() {
        dirty.mark(component);
    }
    inbox[component].push((role, tok));
}

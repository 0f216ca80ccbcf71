//! One step of a detector: a component fires, and the tokens it makes travel along
//! the connection transitions to the components that read them (or become
//! detections); the step's components fire in topological order.

use super::zones::move_zone;
use super::Detector;
use crate::runtime::component::{Component, Cx};
use crate::runtime::detection::Detection;
use crate::runtime::dirty::Dirty;
use crate::runtime::token::Token;
use smallvec::SmallVec;

impl Detector {
    /// Runs `f` on component `id` (with the step's held tokens, which its inbox
    /// names) and fans its new tokens out along the connection transitions.
    pub(super) fn fire(
        &mut self,
        id: usize,
        step: u64,
        f: impl FnOnce(&mut Component, &mut Cx<'_>, &[Token]),
    ) {
        let Detector {
            program,
            components,
            timers,
            budget,
            now,
            held,
            produced,
            routed,
            counts,
            quiet,
            released,
            ..
        } = self;
        let mut cx = Cx {
            discard: *quiet && program.consumers[id].is_empty(),
            now: *now,
            cause: step,
            space: program.model.space,
            budget,
            timers,
            component: id,
            out: produced,
            routed,
            counts,
            released,
        };
        f(&mut components[id], &mut cx, held);
        if !produced.is_empty() || !routed.is_empty() {
            self.fan_out(id, step);
        }
    }

    /// An atomic component `id` whose guard passes `tok` puts it in its output place,
    /// as its firing would (without making a context for it).
    pub(super) fn pass(&mut self, id: usize, step: u64, tok: &Token) {
        self.produced.push(tok.clone());
        self.fan_out(id, step);
    }

    /// Fans the tokens component `id` made out along the connection transitions.
    fn fan_out(&mut self, id: usize, step: u64) {
        let Detector {
            program,
            components,
            budget,
            serial,
            seq,
            inbox,
            held,
            dirty,
            produced,
            routed,
            emitted,
            quiet,
            names,
            ..
        } = self;
        let quiet = *quiet;
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
            let consumers = &program.consumers[node];
            if quiet {
                // Detections of an observed event are not made; the token goes on
                // to the components that read it.
                if !consumers.is_empty() {
                    hold(inbox, held, dirty, consumers, tok);
                }
                continue;
            }
            let outputs = names.of_node(node);
            match consumers.is_empty() {
                false => {
                    for name in outputs {
                        emitted.push(Detection::from_token(name.take(), *seq, &tok, zones));
                        *seq += 1;
                    }
                    hold(inbox, held, dirty, consumers, tok);
                }
                // Read by nothing else: the last detection takes the token's constituents.
                true => {
                    if let Some((last, rest)) = outputs.split_last_mut() {
                        for name in rest {
                            emitted.push(Detection::from_token(name.take(), *seq, &tok, zones));
                            *seq += 1;
                        }
                        emitted.push(Detection::from_last_token(last.take(), *seq, tok, zones));
                        *seq += 1;
                    }
                }
            }
        }
    }

    /// Fires every component that received tokens in this step, in topological order.
    pub(super) fn run_step(&mut self, step: u64) {
        while self.run_component(step) {}
        self.held.clear();
    }

    /// Fires the first component (in topological order) that received tokens in this
    /// step, with them; `false` if there is none.
    pub(super) fn run_component(&mut self, step: u64) -> bool {
        let Some(id) = self.dirty.pop() else {
            return false;
        };
        if let &[(role, i)] = self.inbox[id].as_slice() {
            // One token (most steps): a per-step component fires with it alone.
            self.inbox[id].clear();
            self.fire(id, step, |u, cx, held| {
                u.fire(role as usize, &held[i as usize], cx);
            });
            return true;
        }
        let mut inbox = std::mem::take(&mut self.inbox[id]);
        if inbox.len() > 1 {
            // By input arc, then arrival (the sort is stable).
            inbox.sort_by_key(|&(role, _)| role);
        }
        if self.components[id].fires_per_step() {
            self.fire(id, step, |u, cx, held| {
                let toks: SmallVec<[(usize, &Token); 4]> = inbox
                    .iter()
                    .map(|&(role, i)| (role as usize, &held[i as usize]))
                    .collect();
                u.fire_step(&toks, cx);
            });
        } else {
            for &(role, i) in &inbox {
                self.fire(id, step, |u, cx, held| {
                    u.fire(role as usize, &held[i as usize], cx);
                });
            }
        }
        inbox.clear();
        // Keep the allocation for the next step.
        if self.inbox[id].is_empty() {
            self.inbox[id] = inbox;
        }
        true
    }
}

/// Keeps `tok` for the rest of the step and puts it in the input place of each of
/// its `consumers` (component, input arc), marking them to fire.
fn hold(
    inbox: &mut [Vec<(u32, u32)>],
    held: &mut Vec<Token>,
    dirty: &mut Dirty,
    consumers: &[(usize, usize)],
    tok: Token,
) {
    let i = u32::try_from(held.len()).expect("fewer than 2^32 tokens in a step");
    held.push(tok);
    for &(c, role) in consumers {
        if inbox[c].is_empty() {
            dirty.mark(c);
        }
        inbox[c].push((role as u32, i));
    }
}

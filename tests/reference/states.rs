//! States in the reference: situations that hold over time, written from the
//! contract's section on states, plus `Count` and the geometry states need
//! (distances to a zone's boundary, WGS84 distances).
//!
//! A state node keeps, per key value, whether it holds and since when, and what
//! its operator must remember (the latest occurrence, the anchor, the operand's
//! start). Its *transitions* are kept in the node's history like occurrences, with
//! a phase: the interval of a transition runs from its cause's start to the
//! transition's time, its location, `ids` and attributes are its cause's. `Starts`,
//! `Ends` and `During` turn them into ordinary occurrences.
//!
//! Each step (one input event, or one timed instant) runs the nodes in topological
//! order, so every reader sees a state after the step's changes to it. Within a
//! state node, the step's occurrences and operand transitions are applied first,
//! then, at a timed instant, what is due at that instant: an occurrence at exactly
//! the due time prevents what it prevents, as an event at a tick's time does.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{
    attr, fits, key_str, names, Draft, Ev, NOp, Net, Occ, Op, Reference, Space, Val, Zone,
};

/// A transition's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Start,
    End,
}

impl Phase {
    pub fn text(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::End => "end",
        }
    }
}

/// How `AllOf`, `AnyOf` and `Unless` combine their operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comb {
    /// True while every operand holds.
    All,
    /// True while some operand holds.
    Any,
    /// `of: [s, u]`: true while s holds and u does not.
    Unless,
}

impl Comb {
    fn value(self, v: &[bool]) -> bool {
        match self {
            Comb::All => v.iter().all(|&b| b),
            Comb::Any => v.iter().any(|&b| b),
            Comb::Unless => v[0] && !v[1],
        }
    }
}

/// One detection with everything the contract fixes: time (seconds, or whatever
/// unit the stream's times are in), ids, `ticks` for `PStar`, and for a state's
/// transition its phase and, on an end, the time its interval began.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub time: f64,
    pub ids: Vec<i64>,
    pub ticks: Option<u64>,
    pub phase: Option<Phase>,
    pub start: Option<f64>,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t={} ids={:?}", self.time, self.ids)?;
        if let Some(p) = self.phase {
            write!(f, " phase={}", p.text())?;
        }
        if let Some(s) = self.start {
            write!(f, " start={s}")?;
        }
        if let Some(t) = self.ticks {
            write!(f, " ticks={t}")?;
        }
        Ok(())
    }
}

/// Per output name, its detections in order.
pub type Findings = BTreeMap<String, Vec<Found>>;

/// Puts each run of detections of one output at one time in (ids, phase, start)
/// order: the order of simultaneous detections of one output is not what the
/// state comparisons check.
pub fn canonical(mut f: Findings) -> Findings {
    for v in f.values_mut() {
        let mut i = 0;
        while i < v.len() {
            let mut j = i + 1;
            while j < v.len() && v[j].time == v[i].time {
                j += 1;
            }
            v[i..j].sort_by(|a, b| {
                (&a.ids, a.phase, a.ticks)
                    .cmp(&(&b.ids, b.phase, b.ticks))
                    .then(a.start.partial_cmp(&b.start).unwrap())
            });
            i = j;
        }
    }
    f
}

/// Shows findings, for failure messages.
pub fn show_findings(f: &Findings) -> String {
    let mut s = String::new();
    for (name, dets) in f {
        writeln!(s, "  {name}:").unwrap();
        for d in dets {
            writeln!(s, "    {d}").unwrap();
        }
    }
    s
}

/// A state operator, with its operands as node numbers.
#[derive(Clone, Debug)]
pub enum SOp {
    State {
        on: usize,
        off: usize,
        key: Option<String>,
    },
    Inside {
        of: usize,
        zones: Vec<Zone>,
        key: Option<String>,
        margin: f64,
    },
    Stationary {
        of: usize,
        radius: f64,
        for_: i64,
        key: Option<String>,
    },
    Silent {
        of: usize,
        for_: i64,
        key: Option<String>,
    },
    Close {
        of: usize,
        max: f64,
        within: Option<i64>,
        distinct: String,
    },
    Lasting {
        of: usize,
        min: i64,
    },
    Combine {
        comb: Comb,
        of: Vec<usize>,
    },
}

impl SOp {
    pub(super) fn operands(&self) -> Vec<usize> {
        match self {
            SOp::State { on, off, .. } => vec![*on, *off],
            SOp::Inside { of, .. }
            | SOp::Stationary { of, .. }
            | SOp::Silent { of, .. }
            | SOp::Close { of, .. }
            | SOp::Lasting { of, .. } => vec![*of],
            SOp::Combine { of, .. } => of.clone(),
        }
    }
}

/// What a state remembers for one key value.
#[derive(Clone, Debug, Default)]
pub struct KeyMem {
    holds: bool,
    /// When the current true interval began.
    since: i64,
    /// `Silent`: the key's latest occurrence. `Stationary`: its anchor. `Lasting`:
    /// the operand's start transition while the operand holds.
    cause: Option<Occ>,
}

/// A state node's memory: per key value (per pair of values for `Close`), and for
/// `Close` each value's latest located occurrence.
#[derive(Clone, Debug, Default)]
pub struct Mem {
    keys: BTreeMap<String, KeyMem>,
    latest: BTreeMap<String, Occ>,
}

/// The key value of an occurrence for a state keyed by `key` (`""` without a key);
/// `None` when the occurrence lacks the attribute (then it changes nothing).
fn state_key(attrs: &[(String, Val)], key: &Option<String>) -> Option<String> {
    match key {
        None => Some(String::new()),
        Some(k) => key_str(attrs, k),
    }
}

/// The key attribute of state node `n` (`None`: one value for the whole stream).
/// `Close` is keyed by pairs of values and has none.
fn key_attr(nodes: &[NOp], n: usize) -> Option<String> {
    match &nodes[n] {
        NOp::St(SOp::State { key, .. })
        | NOp::St(SOp::Inside { key, .. })
        | NOp::St(SOp::Stationary { key, .. })
        | NOp::St(SOp::Silent { key, .. }) => key.clone(),
        NOp::St(SOp::Lasting { of, .. }) => key_attr(nodes, *of),
        NOp::St(SOp::Combine { of, .. }) => key_attr(nodes, of[0]),
        NOp::St(SOp::Close { .. }) => panic!("a Close state cannot be read by During"),
        _ => panic!("an occurrence is read where a state is expected"),
    }
}

fn is_state(nodes: &[NOp], n: usize) -> bool {
    matches!(nodes[n], NOp::St(_))
}

/// Lowers a state operator, or one reading states, to a node. `ids` are its
/// operands' nodes, in role order.
pub(super) fn lower(op: &Op, ids: &[usize], nodes: &[NOp], zone: &dyn Fn(&str) -> Zone) -> NOp {
    let occurrences = |v: &[usize]| {
        for &i in v {
            assert!(
                !is_state(nodes, i),
                "a state is read where an occurrence is expected"
            );
        }
    };
    let states = |v: &[usize]| {
        for &i in v {
            assert!(
                is_state(nodes, i),
                "an occurrence is read where a state is expected"
            );
        }
    };
    match op {
        Op::State { key, .. } => {
            occurrences(ids);
            NOp::St(SOp::State {
                on: ids[0],
                off: ids[1],
                key: key.clone(),
            })
        }
        Op::Inside {
            zones, key, margin, ..
        } => {
            occurrences(ids);
            NOp::St(SOp::Inside {
                of: ids[0],
                zones: zones.iter().map(|z| zone(z)).collect(),
                key: key.clone(),
                margin: *margin,
            })
        }
        Op::Stationary {
            radius, for_, key, ..
        } => {
            occurrences(ids);
            NOp::St(SOp::Stationary {
                of: ids[0],
                radius: *radius,
                for_: *for_,
                key: key.clone(),
            })
        }
        Op::Silent { for_, key, .. } => {
            occurrences(ids);
            NOp::St(SOp::Silent {
                of: ids[0],
                for_: *for_,
                key: key.clone(),
            })
        }
        Op::Close {
            max,
            within,
            distinct,
            ..
        } => {
            occurrences(ids);
            NOp::St(SOp::Close {
                of: ids[0],
                max: *max,
                within: *within,
                distinct: distinct.clone(),
            })
        }
        Op::Lasting { min, .. } => {
            states(ids);
            NOp::St(SOp::Lasting {
                of: ids[0],
                min: *min,
            })
        }
        Op::Combine { comb, .. } => {
            states(ids);
            // Operands in list order, repeats kept (`ids` has one per name).
            NOp::St(SOp::Combine {
                comb: *comb,
                of: ids.to_vec(),
            })
        }
        Op::Starts { .. } | Op::Ends { .. } => {
            states(ids);
            NOp::Trans {
                of: ids[0],
                phase: if matches!(op, Op::Starts { .. }) {
                    Phase::Start
                } else {
                    Phase::End
                },
            }
        }
        Op::During { holds, .. } => {
            occurrences(&ids[..1]);
            states(&ids[1..]);
            NOp::During {
                of: ids[0],
                state: ids[1],
                holds: *holds,
                key: key_attr(nodes, ids[1]),
            }
        }
        other => unreachable!("not a state operator: {other:?}"),
    }
}

/// Of several occurrences that could cause a transition, the one that comes first:
/// ids compared one by one in input order, a prefix first (ids are input indices,
/// ascending, so this is the order of the lists).
fn first<'a>(v: &[&'a Occ]) -> &'a Occ {
    v.iter().min_by(|a, b| a.ids.cmp(&b.ids)).unwrap()
}

/// A transition at `time` caused by `cause`: its location, ids and attributes, and
/// an interval from the cause's start to `time`.
fn transition(cause: &Occ, time: i64, phase: Phase, began: Option<i64>, key: &str) -> Draft {
    Draft {
        start: cause.start,
        end: time,
        loc: cause.loc,
        ids: cause.ids.clone(),
        attrs: cause.attrs.clone(),
        ticks: None,
        phase: Some(phase),
        began,
        skey: Some(key.to_owned()),
    }
}

/// Makes key `k` of `mem` true (false) at `time` for `cause`, if it is false (true).
fn set(mem: &mut Mem, k: &str, to: bool, cause: &Occ, time: i64, out: &mut Vec<Draft>) {
    let m = mem.keys.entry(k.to_owned()).or_default();
    if m.holds == to {
        return;
    }
    m.holds = to;
    if to {
        m.since = time;
        out.push(transition(cause, time, Phase::Start, None, k));
    } else {
        out.push(transition(cause, time, Phase::End, Some(m.since), k));
    }
}

impl Reference {
    /// What state node `n` does in `step` (at time `now`; `instant`: a timed step).
    pub(super) fn state_step(
        &mut self,
        n: usize,
        step: usize,
        op: &SOp,
        instant: bool,
        now: i64,
    ) -> Vec<Draft> {
        let mut out = Vec::new();
        let occs = |r: &Reference, node: usize| -> Vec<Occ> {
            r.produced(node, step)
                .into_iter()
                .map(|i| r.hist[node][i].clone())
                .collect()
        };
        match op {
            SOp::State { on, off, key } => {
                // True at an `on`, false at an `off`, for the occurrence's key value;
                // an `on` while true or an `off` while false changes nothing; an `on`
                // and an `off` of one step (same key value) change nothing; an
                // occurrence lacking the key changes nothing.
                let (ons, offs) = (occs(self, *on), occs(self, *off));
                let mut by_key: BTreeMap<String, (Vec<&Occ>, Vec<&Occ>)> = BTreeMap::new();
                for o in &ons {
                    if let Some(k) = state_key(&o.attrs, key) {
                        by_key.entry(k).or_default().0.push(o);
                    }
                }
                for o in &offs {
                    if let Some(k) = state_key(&o.attrs, key) {
                        by_key.entry(k).or_default().1.push(o);
                    }
                }
                let mem = &mut self.smem[n];
                for (k, (makes, unmakes)) in by_key {
                    match (makes.is_empty(), unmakes.is_empty()) {
                        (false, true) => set(mem, &k, true, first(&makes), now, &mut out),
                        (true, false) => set(mem, &k, false, first(&unmakes), now, &mut out),
                        _ => {}
                    }
                }
            }
            SOp::Inside {
                of,
                zones,
                key,
                margin,
            } => {
                // At each located occurrence y: if false, true when y is inside some
                // zone at distance >= margin from that zone's boundary; if true,
                // false when y is outside every zone at distance >= margin from
                // each; otherwise nothing (hysteresis). Unlocated occurrences and
                // those lacking the key change nothing. Occurrences of one step that
                // both make and unmake it (for one key value) change nothing.
                let ys = occs(self, *of);
                let mut by_key: BTreeMap<String, (Vec<&Occ>, Vec<&Occ>)> = BTreeMap::new();
                for y in &ys {
                    let (Some(p), Some(k)) = (y.loc, state_key(&y.attrs, key)) else {
                        continue;
                    };
                    let space = self.space;
                    let deep_inside = zones.iter().any(|z| {
                        z.contains_in(space, p)
                            && at_least(space, z.boundary_dist(space, p), *margin)
                    });
                    let far_outside = zones.iter().all(|z| {
                        !z.contains_in(space, p)
                            && at_least(space, z.boundary_dist(space, p), *margin)
                    });
                    let e = by_key.entry(k).or_default();
                    if deep_inside {
                        e.0.push(y);
                    }
                    if far_outside {
                        e.1.push(y);
                    }
                }
                let mem = &mut self.smem[n];
                for (k, (makes, unmakes)) in by_key {
                    match (makes.is_empty(), unmakes.is_empty()) {
                        (false, true) => set(mem, &k, true, first(&makes), now, &mut out),
                        (true, false) => set(mem, &k, false, first(&unmakes), now, &mut out),
                        _ => {}
                    }
                }
            }
            SOp::Stationary {
                of,
                radius,
                for_,
                key,
            } => {
                // The key's first located occurrence is its anchor; a later located
                // occurrence farther than `radius` from the anchor ends the state
                // (if true) and becomes the new anchor. Occurrences of one step are
                // taken in the order of their ids.
                let mut ys = occs(self, *of);
                ys.sort_by(|a, b| a.ids.cmp(&b.ids));
                let space = self.space;
                let mem = &mut self.smem[n];
                for y in &ys {
                    let (Some(p), Some(k)) = (y.loc, state_key(&y.attrs, key)) else {
                        continue;
                    };
                    let anchor = mem.keys.get(&k).and_then(|m| m.cause.clone());
                    match anchor {
                        None => mem.keys.entry(k).or_default().cause = Some(y.clone()),
                        Some(a) if dist(space, a.loc.unwrap(), p) > *radius => {
                            set(mem, &k, false, y, now, &mut out);
                            mem.keys.get_mut(&k).unwrap().cause = Some(y.clone());
                        }
                        Some(_) => {}
                    }
                }
                // Timed: true at anchor time + T, with the anchor's location and ids.
                if instant {
                    let due: Vec<(String, Occ)> = mem
                        .keys
                        .iter()
                        .filter_map(|(k, m)| {
                            let a = m.cause.as_ref()?;
                            (!m.holds && a.end + for_ == now).then(|| (k.clone(), a.clone()))
                        })
                        .collect();
                    for (k, a) in due {
                        set(mem, &k, true, &a, now, &mut out);
                    }
                }
            }
            SOp::Silent { of, for_, key } => {
                // t is the time of the key's latest occurrence: the next occurrence
                // ends the state (if true) and becomes the latest. Of several in one
                // step, the one that comes first counts.
                let ys = occs(self, *of);
                let mut by_key: BTreeMap<String, Vec<&Occ>> = BTreeMap::new();
                for y in &ys {
                    if let Some(k) = state_key(&y.attrs, key) {
                        by_key.entry(k).or_default().push(y);
                    }
                }
                let mem = &mut self.smem[n];
                for (k, v) in by_key {
                    let y = first(&v);
                    set(mem, &k, false, y, now, &mut out);
                    mem.keys.get_mut(&k).unwrap().cause = Some(y.clone());
                }
                // Timed: true at t + T, with the latest occurrence's location and ids
                // (only key values seen at least once).
                if instant {
                    let due: Vec<(String, Occ)> = mem
                        .keys
                        .iter()
                        .filter_map(|(k, m)| {
                            let y = m.cause.as_ref()?;
                            (!m.holds && y.end + for_ == now).then(|| (k.clone(), y.clone()))
                        })
                        .collect();
                    for (k, y) in due {
                        set(mem, &k, true, &y, now, &mut out);
                    }
                }
            }
            SOp::Close {
                of,
                max,
                within,
                distinct,
            } => {
                // One state per unordered pair of different values of `distinct`:
                // true while the two values' latest located occurrences are at most
                // `within` apart in time and `max` apart in space. It changes only
                // when one of the two has a new occurrence y, paired with the other's
                // latest x; transitions at y, with ids(x) ∪ ids(y).
                let mut ys = occs(self, *of);
                ys.sort_by(|a, b| a.ids.cmp(&b.ids));
                let space = self.space;
                let mem = &mut self.smem[n];
                for y in &ys {
                    let (Some(p), Some(v)) = (y.loc, key_str(&y.attrs, distinct)) else {
                        continue;
                    };
                    let others: Vec<(String, Occ)> = mem
                        .latest
                        .iter()
                        .filter(|(u, _)| **u != v)
                        .map(|(u, x)| (u.clone(), x.clone()))
                        .collect();
                    for (u, x) in others {
                        let close = fits(*within, x.end.min(y.end), x.end.max(y.end))
                            && dist(space, x.loc.unwrap(), p) <= *max;
                        let pair = if u < v {
                            format!("{u} | {v}")
                        } else {
                            format!("{v} | {u}")
                        };
                        let cause = pair_cause(&x, y);
                        set(mem, &pair, close, &cause, now, &mut out);
                    }
                    mem.latest.insert(v, y.clone());
                }
            }
            SOp::Lasting { of, min } => {
                // True from t0 + T (timed; the location and ids of the operand's start
                // at t0) while the operand holds; false when it ends. An interval of
                // the operand of T or less gives nothing.
                let trs = occs(self, *of);
                let mem = &mut self.smem[n];
                for tr in &trs {
                    let k = tr.skey.clone().unwrap();
                    match tr.phase.unwrap() {
                        Phase::Start => mem.keys.entry(k).or_default().cause = Some(tr.clone()),
                        Phase::End => {
                            set(mem, &k, false, tr, now, &mut out);
                            mem.keys.get_mut(&k).unwrap().cause = None;
                        }
                    }
                }
                if instant {
                    let due: Vec<(String, Occ)> = mem
                        .keys
                        .iter()
                        .filter_map(|(k, m)| {
                            let s = m.cause.as_ref()?;
                            (!m.holds && s.end + min == now).then(|| (k.clone(), s.clone()))
                        })
                        .collect();
                    for (k, s) in due {
                        set(mem, &k, true, &s, now, &mut out);
                    }
                }
            }
            SOp::Combine { comb, of } => {
                // True while all (any) operands hold, or (Unless) the first holds and
                // the second does not, for one key value. A change is caused by the
                // operand transitions of the step: of several, the first operand in
                // the list that changed.
                let mut changed: BTreeMap<String, Occ> = BTreeMap::new();
                let mut seen = BTreeSet::new();
                for &o in of {
                    if !seen.insert(o) {
                        continue;
                    }
                    for tr in occs(self, o) {
                        changed.entry(tr.skey.clone().unwrap()).or_insert(tr);
                    }
                }
                for (k, cause) in changed {
                    let vals: Vec<bool> = of
                        .iter()
                        .map(|&o| self.smem[o].keys.get(&k).is_some_and(|m| m.holds))
                        .collect();
                    set(
                        &mut self.smem[n],
                        &k,
                        comb.value(&vals),
                        &cause,
                        now,
                        &mut out,
                    );
                }
            }
        }
        // Transitions of one step in the order of their causes.
        out.sort_by(|a, b| a.ids.cmp(&b.ids).then(a.skey.cmp(&b.skey)));
        out
    }

    /// The earliest time a timed transition of state node `n` is due, if any.
    pub(super) fn state_due(&self, n: usize, op: &SOp) -> Option<i64> {
        let after = match op {
            SOp::Stationary { for_, .. } | SOp::Silent { for_, .. } => *for_,
            SOp::Lasting { min, .. } => *min,
            _ => return None,
        };
        self.smem[n]
            .keys
            .values()
            .filter(|m| !m.holds)
            .filter_map(|m| m.cause.as_ref().map(|c| c.end + after))
            .min()
    }

    /// `During`: each occurrence of `of` at which the state, for its key value,
    /// holds (`holds`) or does not (a key value never seen does not hold). An
    /// occurrence lacking the key gives nothing either way.
    pub(super) fn during_step(
        &self,
        step: usize,
        of: usize,
        state: usize,
        holds: bool,
        key: &Option<String>,
    ) -> Vec<Draft> {
        self.produced(of, step)
            .into_iter()
            .map(|i| &self.hist[of][i])
            .filter(|y| {
                state_key(&y.attrs, key).is_some_and(|k| {
                    self.smem[state].keys.get(&k).is_some_and(|m| m.holds) == holds
                })
            })
            .map(Draft::pass)
            .collect()
    }

    /// `Count`: every set of `size` occurrences of `of`, from different input
    /// events (steps), pairwise strictly closer than `distance`, fitting `window`,
    /// with pairwise different `distinct` values; reported once, when its last
    /// member is processed, at that member. Unlocated occurrences are in no set.
    pub(super) fn count_step(
        &self,
        step: usize,
        of: usize,
        size: usize,
        distance: f64,
        window: i64,
        distinct: &Option<String>,
    ) -> Vec<Draft> {
        let h = &self.hist[of];
        let ok = |o: &Occ| {
            o.loc.is_some()
                && distinct
                    .as_ref()
                    .is_none_or(|d| attr(&o.attrs, d).is_some())
        };
        let near = |a: &Occ, b: &Occ| {
            a.step != b.step
                && dist(self.space, a.loc.unwrap(), b.loc.unwrap()) < distance
                && distinct
                    .as_ref()
                    .is_none_or(|d| attr(&a.attrs, d) != attr(&b.attrs, d))
        };
        let mut out = Vec::new();
        for yi in self.produced(of, step) {
            let y = &h[yi];
            if !ok(y) {
                continue;
            }
            let cands: Vec<usize> = (0..h.len())
                .filter(|&i| h[i].step < step && ok(&h[i]) && near(&h[i], y))
                .collect();
            // Every (size - 1)-subset of the candidates, in index order.
            #[allow(clippy::too_many_arguments)]
            fn grow(
                r: &Reference,
                of: usize,
                cands: &[usize],
                from: usize,
                set: &mut Vec<usize>,
                want: usize,
                found: &mut Vec<Vec<usize>>,
                near: &dyn Fn(&Occ, &Occ) -> bool,
            ) {
                if set.len() == want {
                    found.push(set.clone());
                    return;
                }
                for j in from..cands.len() {
                    let c = &r.hist[of][cands[j]];
                    if set.iter().all(|&s| near(&r.hist[of][s], c)) {
                        set.push(cands[j]);
                        grow(r, of, cands, j + 1, set, want, found, near);
                        set.pop();
                    }
                }
            }
            let mut found = Vec::new();
            grow(
                self,
                of,
                &cands,
                0,
                &mut Vec::new(),
                size - 1,
                &mut found,
                &near,
            );
            for set in found {
                let parts: Vec<&Occ> = set.iter().map(|&i| &h[i]).collect();
                let d = Draft::merge(&parts, y);
                if fits(Some(window), d.start, d.end) {
                    out.push(d);
                }
            }
        }
        out
    }

    /// Runs the whole stream and `finish`, returning every output's detections with
    /// their phases and starts.
    pub fn run_found(net: &Net, events: &[Ev]) -> Findings {
        Reference::run_found_bounded(net, events, usize::MAX).expect("no bound")
    }

    /// Like [`Reference::run_found`], giving up past `max` occurrences or on a near tie.
    pub fn run_found_bounded(net: &Net, events: &[Ev], max: usize) -> Option<Findings> {
        let r = Reference::run_all(net, events, max)?;
        let mut out = Findings::new();
        for (name, node) in &r.outputs {
            let dets = r.hist[*node]
                .iter()
                .map(|o| Found {
                    time: o.end as f64,
                    ids: o.ids.iter().map(|&i| r.events[i].id).collect(),
                    ticks: if r.pstar.contains(node) {
                        o.ticks
                    } else {
                        None
                    },
                    phase: o.phase,
                    start: o.began.map(|t| t as f64),
                })
                .collect();
            out.insert(name.clone(), dets);
        }
        Some(out)
    }
}

/// The cause of a `Close` transition: x and y together, at y.
fn pair_cause(x: &Occ, y: &Occ) -> Occ {
    let d = Draft::merge(&[x], y);
    Occ {
        start: d.start,
        end: d.end,
        loc: d.loc,
        ids: d.ids,
        attrs: d.attrs,
        ..y.clone()
    }
}

// ---------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------

/// The distance between two points: planar, or geodesic metres on WGS84
/// (`(lon, lat)` in degrees).
pub fn dist(space: Space, p: (f64, f64), q: (f64, f64)) -> f64 {
    match space {
        Space::Planar => ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt(),
        Space::Wgs84 => geodesic(p, q),
    }
}

/// The geodesic distance on the WGS84 ellipsoid between `(lon, lat)` points in
/// degrees, in metres: Vincenty's inverse formula (well below a millimetre for the
/// short distances of tests; it is not meant for nearly antipodal points).
#[allow(non_snake_case)]
pub fn geodesic(p: (f64, f64), q: (f64, f64)) -> f64 {
    let a = 6_378_137.0_f64;
    let f = 1.0 / 298.257_223_563;
    let b = a * (1.0 - f);
    let L = (q.0 - p.0).to_radians();
    let U1 = ((1.0 - f) * p.1.to_radians().tan()).atan();
    let U2 = ((1.0 - f) * q.1.to_radians().tan()).atan();
    let (sinU1, cosU1) = U1.sin_cos();
    let (sinU2, cosU2) = U2.sin_cos();
    let mut lambda = L;
    let (mut sin_s, mut cos_s, mut sigma, mut cos2a, mut cos2sm);
    let mut iterations = 0;
    loop {
        let (sin_l, cos_l) = lambda.sin_cos();
        sin_s = ((cosU2 * sin_l).powi(2) + (cosU1 * sinU2 - sinU1 * cosU2 * cos_l).powi(2)).sqrt();
        if sin_s == 0.0 {
            return 0.0;
        }
        cos_s = sinU1 * sinU2 + cosU1 * cosU2 * cos_l;
        sigma = sin_s.atan2(cos_s);
        let sin_a = cosU1 * cosU2 * sin_l / sin_s;
        cos2a = 1.0 - sin_a * sin_a;
        cos2sm = if cos2a == 0.0 {
            0.0
        } else {
            cos_s - 2.0 * sinU1 * sinU2 / cos2a
        };
        let C = f / 16.0 * cos2a * (4.0 + f * (4.0 - 3.0 * cos2a));
        let next = L
            + (1.0 - C)
                * f
                * sin_a
                * (sigma + C * sin_s * (cos2sm + C * cos_s * (-1.0 + 2.0 * cos2sm * cos2sm)));
        iterations += 1;
        let done = (next - lambda).abs() < 1e-13 || iterations > 1000;
        lambda = next;
        if done {
            break;
        }
    }
    let u2 = cos2a * (a * a - b * b) / (b * b);
    let A = 1.0 + u2 / 16384.0 * (4096.0 + u2 * (-768.0 + u2 * (320.0 - 175.0 * u2)));
    let B = u2 / 1024.0 * (256.0 + u2 * (-128.0 + u2 * (74.0 - 47.0 * u2)));
    let delta = B
        * sin_s
        * (cos2sm
            + B / 4.0
                * (cos_s * (-1.0 + 2.0 * cos2sm * cos2sm)
                    - B / 6.0
                        * cos2sm
                        * (-3.0 + 4.0 * sin_s * sin_s)
                        * (-3.0 + 4.0 * cos2sm * cos2sm)));
    b * A * (sigma - delta)
}

/// Planar distance from `p` to the segment `a`–`b`.
fn seg_dist(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let along = (p.0 - a.0) * dx + (p.1 - a.1) * dy;
    if len2 == 0.0 || along <= 0.0 {
        return dist(Space::Planar, p, a);
    }
    if along >= len2 {
        return dist(Space::Planar, p, b);
    }
    // Beside the segment: the perpendicular distance, |cross| / length, which is
    // exact where the distance can be (a length that is a whole square root), so
    // that a point exactly on a corridor's edge is on it, as the contract says.
    ((p.0 - a.0) * dy - (p.1 - a.1) * dx).abs() / len2.sqrt()
}

/// Geodesic distance from `p` to the edge `a`–`b`, its points taken linearly in
/// longitude and latitude (as a rectangle's or polygon's edge): the least of a
/// dense sampling, refined by golden-section search around the best sample.
fn geo_edge_dist(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let at = |t: f64| {
        dist(
            Space::Wgs84,
            p,
            (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)),
        )
    };
    const N: usize = 256;
    let best = (0..=N)
        .min_by(|&i, &j| at(i as f64 / N as f64).total_cmp(&at(j as f64 / N as f64)))
        .unwrap();
    let (mut lo, mut hi) = (
        (best as f64 - 1.0).max(0.0) / N as f64,
        (best as f64 + 1.0).min(N as f64) / N as f64,
    );
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..80 {
        let (m1, m2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if at(m1) < at(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    at((lo + hi) / 2.0).min(at(0.0)).min(at(1.0))
}

/// The corners of a rectangle, as a closed ring's points.
fn rect_ring(min: (f64, f64), max: (f64, f64)) -> Vec<(f64, f64)> {
    vec![min, (max.0, min.1), max, (min.0, max.1)]
}

/// The edges of a closed ring.
fn edges(ring: &[(f64, f64)]) -> Vec<((f64, f64), (f64, f64))> {
    (0..ring.len())
        .map(|i| (ring[i], ring[(i + 1) % ring.len()]))
        .collect()
}

/// Is `p` in the polygon `ring` (boundary included)? Even-odd ray casting, the
/// boundary tested first.
fn in_ring(ring: &[(f64, f64)], p: (f64, f64)) -> bool {
    // On an edge is inside (`at_least(0, d)` is `d <= 0`, noting a point a rounding
    // error off an edge).
    if edges(ring)
        .iter()
        .any(|&(a, b)| at_least(Space::Planar, 0.0, seg_dist(p, a, b)))
    {
        return true;
    }
    let mut inside = false;
    for (a, b) in edges(ring) {
        if (a.1 > p.1) != (b.1 > p.1) {
            let x = a.0 + (p.1 - a.1) / (b.1 - a.1) * (b.0 - a.0);
            if p.0 < x {
                inside = !inside;
            }
        }
    }
    inside
}

/// `deg` in [0, 360).
fn norm360(deg: f64) -> f64 {
    let d = deg.rem_euclid(360.0);
    if d >= 360.0 {
        0.0
    } else {
        d
    }
}

/// Is bearing `b` on the arc clockwise from `from` to `to`?
fn in_arc(from: f64, to: f64, b: f64) -> bool {
    if (to - from).abs() >= 360.0 {
        return true;
    }
    let (f, t) = (norm360(from), norm360(to));
    if f <= t {
        f <= b && b <= t
    } else {
        b >= f || b <= t
    }
}

/// The planar bearing from `c` to `p`, degrees clockwise from north.
fn bearing(c: (f64, f64), p: (f64, f64)) -> f64 {
    norm360((p.0 - c.0).atan2(p.1 - c.1).to_degrees())
}

/// The point at `radius` from `c` on bearing `deg`.
fn toward(c: (f64, f64), radius: f64, deg: f64) -> (f64, f64) {
    let r = deg.to_radians();
    (c.0 + radius * r.sin(), c.1 + radius * r.cos())
}

impl Zone {
    /// Does the zone contain `p` (boundary included)? On WGS84, rectangles and
    /// polygons are in longitude and latitude, circles are geodesic.
    pub fn contains_in(&self, space: Space, p: (f64, f64)) -> bool {
        match self {
            Zone::Rect { min, max } => min.0 <= p.0 && p.0 <= max.0 && min.1 <= p.1 && p.1 <= max.1,
            Zone::Circle { center, radius } => at_least(space, *radius, dist(space, *center, p)),
            Zone::Polygon(ring) => in_ring(ring, p),
            Zone::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => {
                assert_eq!(space, Space::Planar, "the reference's sectors are planar");
                dist(space, *center, p) <= *radius
                    && (*center == p || in_arc(*from_deg, *to_deg, bearing(*center, p)))
            }
            Zone::Line { points, width } => {
                assert_eq!(space, Space::Planar, "the reference's lines are planar");
                at_least(space, width / 2.0, line_dist(points, p))
            }
        }
    }

    /// The distance from `p` to the zone's boundary (from inside or outside).
    /// Exact in the plane for rectangles, polygons, circles, sectors and lines of
    /// one segment (for a line of several, outside points are exact and inside
    /// ones get their depth below the half width); on WGS84 (rectangles, polygons,
    /// circles) geodesic, to far better than 0.1 %.
    pub fn boundary_dist(&self, space: Space, p: (f64, f64)) -> f64 {
        let ring_dist = |ring: &[(f64, f64)]| {
            edges(ring)
                .into_iter()
                .map(|(a, b)| match space {
                    Space::Planar => seg_dist(p, a, b),
                    Space::Wgs84 => geo_edge_dist(p, a, b),
                })
                .fold(f64::INFINITY, f64::min)
        };
        match self {
            Zone::Rect { min, max } => ring_dist(&rect_ring(*min, *max)),
            Zone::Polygon(ring) => ring_dist(ring),
            Zone::Circle { center, radius } => (dist(space, *center, p) - radius).abs(),
            Zone::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => {
                assert_eq!(space, Space::Planar, "the reference's sectors are planar");
                let c = *center;
                let d = dist(space, c, p);
                // The arc: straight out from the centre if p's bearing is on it,
                // else its nearer end.
                let (e1, e2) = (toward(c, *radius, *from_deg), toward(c, *radius, *to_deg));
                let arc = if p != c && in_arc(*from_deg, *to_deg, bearing(c, p)) {
                    (d - radius).abs()
                } else {
                    dist(space, p, e1).min(dist(space, p, e2))
                };
                if (to_deg - from_deg).abs() >= 360.0 {
                    (d - radius).abs()
                } else {
                    arc.min(seg_dist(p, c, e1)).min(seg_dist(p, c, e2))
                }
            }
            Zone::Line { points, width } => {
                assert_eq!(space, Space::Planar, "the reference's lines are planar");
                (line_dist(points, p) - width / 2.0).abs()
            }
        }
    }
}

thread_local! {
    /// Set when a distance was compared with a threshold it differs from by no more
    /// than rounding (planar: a billionth; WGS84: the contract's 0.1 % of the
    /// threshold) without being equal to it: there, ccpn's arithmetic and the
    /// reference's may rightly fall on different sides, and the run is not compared.
    /// (An exact tie is compared: the boundary is inside.)
    pub(super) static NEAR_TIE: Cell<bool> = const { Cell::new(false) };
}

/// `a >= b`, noting in [`NEAR_TIE`] when the two are a rounding error apart.
fn at_least(space: Space, a: f64, b: f64) -> bool {
    let scale = match space {
        Space::Planar => 1e-9 * a.abs().max(b.abs()).max(1.0),
        Space::Wgs84 => 1e-3 * a.abs().max(b.abs()),
    };
    if a != b && (a - b).abs() <= scale {
        NEAR_TIE.set(true);
    }
    a >= b
}

/// Planar distance from `p` to a polyline.
fn line_dist(points: &[(f64, f64)], p: (f64, f64)) -> f64 {
    if points.len() == 1 {
        return dist(Space::Planar, p, points[0]);
    }
    points
        .windows(2)
        .map(|w| seg_dist(p, w[0], w[1]))
        .fold(f64::INFINITY, f64::min)
}

// ---------------------------------------------------------------------------
// RON text of the operators added here
// ---------------------------------------------------------------------------

impl Net {
    /// RON text of `Count`, the state operators and those reading states.
    pub(super) fn more_ron(&self, op: &Op) -> String {
        let key = |k: &Option<String>| match k {
            Some(k) => format!(", key: {k:?}"),
            None => String::new(),
        };
        match op {
            Op::Count {
                of,
                n,
                distance,
                window,
                distinct,
            } => {
                let d = match distinct {
                    Some(d) => format!(", distinct: {d:?}"),
                    None => String::new(),
                };
                format!(
                    "Count(of: {of:?}, n: {n}, distance: {distance:?}, window: {}{d})",
                    self.dur(*window)
                )
            }
            Op::State { on, off, key: k } => {
                format!("State(on: {on:?}, off: {off:?}{})", key(k))
            }
            Op::Inside {
                of,
                zones,
                key: k,
                margin,
            } => {
                let m = if *margin == 0.0 {
                    String::new()
                } else {
                    format!(", margin: {margin:?}")
                };
                format!("Inside(of: {of:?}, zones: {}{}{m})", names(zones), key(k))
            }
            Op::Stationary {
                of,
                radius,
                for_,
                key: k,
            } => format!(
                "Stationary(of: {of:?}, radius: {radius:?}, for: {}{})",
                self.dur(*for_),
                key(k)
            ),
            Op::Silent { of, for_, key: k } => {
                format!("Silent(of: {of:?}, for: {}{})", self.dur(*for_), key(k))
            }
            Op::Close {
                of,
                max,
                within,
                distinct,
            } => {
                let w = match within {
                    Some(w) => format!(", within: {}", self.dur(*w)),
                    None => String::new(),
                };
                format!("Close(of: {of:?}, max: {max:?}{w}, distinct: {distinct:?})")
            }
            Op::Lasting { of, min } => format!("Lasting(of: {of:?}, min: {})", self.dur(*min)),
            Op::Combine {
                comb: Comb::Unless,
                of,
            } => format!("Unless(of: {:?}, except: {:?})", of[0], of[1]),
            Op::Combine { comb, of } => {
                let name = if *comb == Comb::All { "AllOf" } else { "AnyOf" };
                format!("{name}(of: {})", names(of))
            }
            Op::Starts { of } => format!("Starts(of: {of:?})"),
            Op::Ends { of } => format!("Ends(of: {of:?})"),
            Op::During { of, state, holds } => {
                format!("During(of: {of:?}, state: {state:?}, holds: {holds})")
            }
            other => unreachable!("rendered elsewhere: {other:?}"),
        }
    }
}

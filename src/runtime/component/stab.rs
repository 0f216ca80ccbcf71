//! Stabbing: every `Within` reading the same occurrences shares one R*-tree of their
//! zones. An occurrence stabs the tree once and goes only to the `Within` components
//! one of whose zones contains it, so many rules cost a logarithm, not a scan.

use std::sync::Arc;

use super::super::token::{Extra, Token};
use super::Cx;
use crate::event::Space;
use crate::model::ZoneId;
use crate::spatial::{Zone, ZoneIndex};

/// From how many zones a group's index is fetched ahead of its events: 8,192
/// cells of 64 bytes take 512 KiB, more than an L2 cache's share of a run.
const FETCH_AHEAD_ZONES: usize = 8192;

/// The shared input of a group of `Within` components.
#[derive(Clone, Debug)]
pub(crate) struct Stab {
    /// Shared by the detectors of one net until a moving zone moves in one of them.
    index: Arc<ZoneIndex>,
    /// For each zone id `z`, the group members (positions in `nodes`) that name it:
    /// `members[starts[z]..starts[z + 1]]` (one array, so that a hit costs one read
    /// among many zones, not two).
    starts: Arc<[u32]>,
    members: Arc<[u32]>,
    /// The `Within` components of the group (model node ids), in topological order.
    nodes: Vec<usize>,
    /// Test every zone instead of stabbing the tree (for comparison).
    linear: bool,
    /// Scratch: zones hit, the first zone hit of each member, the members hit.
    hits: Vec<usize>,
    first: Vec<Option<ZoneId>>,
    touched: Vec<usize>,
}

impl Stab {
    /// A group of `Within` components: `(node id, its zones)` each.
    pub(crate) fn new(space: Space, zones: &[Zone], members: Vec<(usize, Vec<ZoneId>)>) -> Stab {
        // Each zone's members, laid out by counting (no vector per zone: a net may
        // have a hundred thousand zones).
        let mut starts = vec![0u32; zones.len() + 1];
        for (_, zs) in &members {
            for &z in zs {
                starts[z + 1] += 1;
            }
        }
        let used: Vec<bool> = starts[1..].iter().map(|&n| n > 0).collect();
        for z in 0..zones.len() {
            starts[z + 1] += starts[z];
        }
        let mut by_zone = vec![0u32; starts[zones.len()] as usize];
        let mut next: Vec<u32> = starts[..zones.len()].to_vec();
        for (m, (_, zs)) in members.iter().enumerate() {
            for &z in zs {
                by_zone[next[z] as usize] = m as u32;
                next[z] += 1;
            }
        }
        // Collected first, so that the index takes room for exactly these zones.
        let mine: Vec<(usize, Zone)> = zones
            .iter()
            .enumerate()
            .filter(|(z, _)| used[*z])
            .map(|(z, zone)| (z, zone.clone()))
            .collect();
        let index = ZoneIndex::new(space, mine);
        let n = members.len();
        Stab {
            index: Arc::new(index),
            starts: starts.into(),
            members: by_zone.into(),
            nodes: members.into_iter().map(|(node, _)| node).collect(),
            linear: false,
            hits: Vec::new(),
            first: vec![None; n],
            touched: Vec::new(),
        }
    }

    /// Tests every zone for each occurrence instead of stabbing the tree.
    pub(crate) fn scan_linearly(&mut self) {
        self.linear = true;
    }

    /// Zone `z` as it is now (a moving zone where it last moved to).
    pub(crate) fn zone(&self, z: ZoneId) -> Option<&Zone> {
        self.index.get(z)
    }

    /// Replaces zone `z` (a moving zone re-centred or turned).
    pub(crate) fn update(&mut self, z: ZoneId, zone: Zone) {
        Arc::make_mut(&mut self.index).update(z, zone);
    }

    /// Is the group's index worth fetching ahead ([`Stab::prefetch`]): a grid of
    /// enough zones that its cells (a cache line each) outgrow the faster caches?
    /// A few zones' cells stay in cache, and fetching them ahead only costs. (Asked
    /// when the net is compiled; a detector that scans instead is told later, and
    /// [`Stab::prefetch`] then does nothing.)
    pub(crate) fn worth_fetching_ahead(&self) -> bool {
        self.index.is_grid() && self.index.len() >= FETCH_AHEAD_ZONES
    }

    /// An occurrence at `p` will reach the group soon: brings what its stab reads
    /// first into cache. A hint: nothing changes.
    pub(crate) fn prefetch(&self, p: crate::event::Point) {
        if !self.linear {
            self.index.prefetch(p);
        }
    }

    pub(crate) fn fire(&mut self, tok: &Token, cx: &mut Cx<'_>) {
        let Some(p) = tok.term.location else { return };
        self.hits.clear();
        if self.linear {
            self.index.stab_linear(p, &mut self.hits);
        } else {
            self.index.stab(p, &mut self.hits);
        }
        if self.hits.is_empty() {
            return;
        }
        // Zones come back in id (= name) order: the first hit of a member is the first
        // of its zones, in name order, that contains the occurrence.
        for &z in &self.hits {
            let (from, to) = (self.starts[z] as usize, self.starts[z + 1] as usize);
            for &m in &self.members[from..to] {
                let m = m as usize;
                if self.first[m].is_none() {
                    self.first[m] = Some(z);
                    self.touched.push(m);
                }
            }
        }
        // Members in topological order, as their components would have fired.
        self.touched.sort_unstable();
        for &m in &self.touched {
            if let Some(z) = self.first[m].take() {
                let mut t = tok.clone();
                t.extra = Extra::Zone(z as u32);
                cx.routed.push((self.nodes[m], t));
            }
        }
        self.touched.clear();
    }
}

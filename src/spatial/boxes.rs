//! Boxes under caller's ids, indexed for stabbing: the filter that [`super::ZoneIndex`]
//! and the margin index of `Inside` stab before testing a zone's exact shape. A box
//! returned holds the point or lies near it (boxes are rounded outwards), never the
//! reverse: every box holding the point is returned.
//!
//! **Which structure.** A uniform grid ([`super::grid`]) when its rule accepts the
//! boxes ([`Grid::new`]: some boxes, whose median size is a number, at most an eighth
//! of them covering more than 32 cells), an R*-tree ([`super::boxtree`]) otherwise (no
//! boxes, or sizes too uneven for one cell size). The grid stabs in O(1) whatever the
//! number of boxes (one cell, a short list); the tree in O(log n), each level a cache
//! miss once the boxes outgrow the cache.
//!
//! Boxes can be inserted and removed in place (O(cells covered) in the grid, O(log n)
//! in the tree). The owner lays them out again, and the structure is chosen again,
//! when [`BoxIndex::worn`] says so: their number has doubled or halved since they last
//! were, or half of them were inserted where the grid holds them badly.

use geo_types::Rect;

use super::boxtree::{key, BoxTree};
use super::grid::Grid;
use crate::event::Point;

/// Which structure holds the boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndexKind {
    /// The grid when its rule says so ([`Grid::new`]), else the R*-tree.
    Auto,
    /// Always the R*-tree.
    Tree,
    /// The grid (large boxes in its R*-tree beside it) whenever one can be laid out
    /// (some boxes, sizes that are numbers).
    #[cfg_attr(not(test), allow(dead_code))] // for tests
    Grid,
}

/// The structure itself.
#[derive(Clone, Debug)]
enum Boxes {
    Tree(BoxTree),
    Grid(Box<Grid>),
}

/// Boxes, each under a `u32` id, in a grid or an R*-tree.
#[derive(Clone, Debug)]
pub(crate) struct BoxIndex {
    kind: IndexKind,
    boxes: Boxes,
    /// Boxes held, and held when the boxes were last laid out.
    held: usize,
    laid_out: usize,
    /// Boxes inserted since then that the grid holds badly (large, or past its extent).
    strays: usize,
}

impl BoxIndex {
    /// `boxes` (each under its id) laid out as `kind` says.
    pub(crate) fn new(boxes: &[(Rect<f64>, u32)], kind: IndexKind) -> BoxIndex {
        let grid = match kind {
            IndexKind::Tree => None,
            IndexKind::Auto => Grid::new(boxes, false),
            IndexKind::Grid => Grid::new(boxes, true),
        };
        BoxIndex {
            kind,
            boxes: match grid {
                Some(grid) => Boxes::Grid(Box::new(grid)),
                None => Boxes::Tree(BoxTree::new(boxes.iter().map(|(r, id)| (r, *id)))),
            },
            held: boxes.len(),
            laid_out: boxes.len(),
            strays: 0,
        }
    }

    /// Lays `boxes` out again (all the boxes the index is to hold), in the structure
    /// the index's kind and the grid's rule choose for them now.
    pub(crate) fn lay_out(&mut self, boxes: &[(Rect<f64>, u32)]) {
        *self = BoxIndex::new(boxes, self.kind);
    }

    /// Is the index a grid (else an R*-tree)?
    pub(crate) fn is_grid(&self) -> bool {
        matches!(self.boxes, Boxes::Grid(_))
    }

    /// Is it a grid that reads its masks (see `grid.rs`)?
    #[cfg(test)]
    pub(crate) fn is_sparse_grid(&self) -> bool {
        matches!(&self.boxes, Boxes::Grid(g) if g.is_sparse())
    }

    /// How many boxes the index holds.
    pub(crate) fn len(&self) -> usize {
        self.held
    }

    /// Adds box `r` under `id`.
    pub(crate) fn insert(&mut self, r: &Rect<f64>, id: u32) {
        match &mut self.boxes {
            Boxes::Tree(tree) => tree.insert(r, id),
            Boxes::Grid(grid) => {
                if !grid.fits(r) {
                    self.strays += 1;
                }
                grid.insert(r, id);
            }
        }
        self.held += 1;
    }

    /// Removes box `r` under `id` (as it was inserted).
    pub(crate) fn remove(&mut self, r: &Rect<f64>, id: u32) {
        match &mut self.boxes {
            Boxes::Tree(tree) => tree.remove(r, id),
            Boxes::Grid(grid) => grid.remove(r, id),
        }
        self.held = self.held.saturating_sub(1);
    }

    /// Should the boxes be laid out again? When their number has doubled or halved
    /// since they last were (unless the kind is the tree, which stays balanced), or
    /// more than half of them went where the grid holds them badly: at most once every
    /// n / 2 insertions or removals, so O(1) amortised.
    pub(crate) fn worn(&self) -> bool {
        let resized = self.held >= 2 * self.laid_out + 16 || 2 * self.held + 16 <= self.laid_out;
        (resized && self.kind != IndexKind::Tree) || 2 * self.strays > self.held + 64
    }

    /// Brings what a stab at `p` reads first into cache: the grid's cell (the tree's
    /// walk depends on what it reads, so it is not fetched ahead). A hint: no result
    /// changes.
    #[inline]
    pub(crate) fn prefetch(&self, p: Point) {
        if let Boxes::Grid(grid) = &self.boxes {
            grid.prefetch(p);
        }
    }

    /// Calls `hit` with the id of every box holding `p` (and perhaps of boxes near
    /// it), an id once per box.
    #[inline]
    pub(crate) fn stab(&self, p: Point, hit: impl FnMut(u32)) {
        let k = key(p.x, p.y);
        match &self.boxes {
            Boxes::Tree(tree) => tree.stab(&k, hit),
            Boxes::Grid(grid) => grid.stab(p, &k, hit),
        }
    }
}

//! The zone grid: a uniform grid over the zones' boxes, each cell listing the boxes
//! that cover it, so that a stab computes one cell and scans its short list, whatever
//! the number of zones.
//!
//! **Cells.** Cells are as wide as the median box and as tall as the median box
//! (times [`CELL_FACTOR`]), over the extent of the boxes (less the outermost
//! thousandth of them on each side, so that one far zone does not stretch it), and
//! coarser if that would make more than [`CELLS_PER_BOX`] cells per box. A coordinate
//! beyond the extent belongs to the border cell: the cell of a coordinate is monotonic
//! in it, so a point inside a box always falls in one of the cells the box was listed
//! in, wherever either lies. A box that would cover more than [`MAX_CELLS_PER_BOX`]
//! cells is kept in a small R*-tree beside the grid instead ("large" boxes), so that a
//! huge zone costs one entry, not thousands of cells. When more than an eighth of the
//! boxes would be large, [`Grid::new`] declines, and the zone index keeps its R*-tree.
//!
//! **Entries.** Each cell lists its boxes inline, rounded outwards to `f32` with the
//! zone's slot (20 bytes), in one array shared by every cell, so that a stab reads the
//! cell's header, then one or two cache lines of boxes, before the exact test of the
//! zones whose box holds the point. A cell that outgrows its room moves to the end of
//! the array with twice the room; the array is compacted when it holds twice the live
//! entries. Inserting or removing a box costs O(cells it covers).

use geo_types::Rect;

use super::boxtree::{rounded, BoxTree};
use crate::event::Point;

/// Cell sides in median box sides.
const CELL_FACTOR: f64 = 1.0;
/// At most this many cells per box indexed (memory stays bounded however small the
/// boxes are against their extent).
const CELLS_PER_BOX: f64 = 4.0;
/// A box covering more cells than this is kept in the R*-tree of large boxes.
const MAX_CELLS_PER_BOX: usize = 32;
/// A grid holds at most this many boxes (so that entry positions fit in `u32`, with
/// room for growth and holes).
const MAX_BOXES: usize = 1 << 24;

/// One box listed in a cell: `[min x, min y, max x, max y]` in `f32`, and its slot.
#[derive(Clone, Copy, Debug)]
struct Entry {
    b: [f32; 4],
    slot: u32,
}

/// A cell's entries: `arena[start..start + len]`, with room up to `start + cap`.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    start: u32,
    len: u32,
    cap: u32,
}

/// One axis of the grid: cell `i` starts at `origin + i / scale`.
#[derive(Clone, Copy, Debug)]
struct Axis {
    origin: f64,
    /// Cells per unit (0 when there is one cell).
    scale: f64,
    n: usize,
}

impl Axis {
    /// An axis of cells `side` wide from `lo` to `hi`.
    fn new(lo: f64, hi: f64, side: f64) -> Axis {
        let n = cells_over(hi - lo, side);
        Axis {
            origin: lo,
            scale: if n > 1.0 { 1.0 / side } else { 0.0 },
            n: n as usize,
        }
    }

    /// The cell of coordinate `v`, monotonic in `v` (clamped to the border cells; the
    /// conversion saturates, and takes a `NaN` to 0).
    #[inline]
    fn cell(&self, v: f64) -> usize {
        (((v - self.origin) * self.scale) as usize).min(self.n - 1)
    }

    /// The end of the extent the cells divide.
    fn end(&self) -> f64 {
        if self.n > 1 {
            self.origin + self.n as f64 / self.scale
        } else {
            self.origin
        }
    }
}

/// How many cells `side` wide cover a length `len` (at least one; as a float, which
/// may be huge).
fn cells_over(len: f64, side: f64) -> f64 {
    let n = (len / side).ceil();
    if n.is_finite() && n >= 1.0 {
        n
    } else {
        1.0
    }
}

/// The `k`-th smallest of `v` (`v` is reordered).
fn nth(v: &mut [f64], k: usize) -> f64 {
    let k = k.min(v.len() - 1);
    *v.select_nth_unstable_by(k, f64::total_cmp).1
}

/// Zone boxes in a uniform grid, and the large ones in an R*-tree.
#[derive(Clone, Debug)]
pub(super) struct Grid {
    x: Axis,
    y: Axis,
    cells: Vec<Cell>,
    arena: Vec<Entry>,
    /// Entries listed in cells (the rest of the arena is room and holes).
    live: usize,
    large: BoxTree,
}

impl Grid {
    /// A grid of `boxes` (each with its zone's slot), laid out from them; `None` when
    /// the R*-tree serves them better (no boxes, more than an eighth of them large,
    /// sizes that are not numbers) unless `forced`.
    pub(super) fn new(boxes: &[(Rect<f64>, u32)], forced: bool) -> Option<Grid> {
        let mut grid = Grid::plan(boxes)?;
        let spans: Vec<Option<[usize; 4]>> = boxes.iter().map(|(r, _)| grid.span(r)).collect();
        let large = spans.iter().filter(|s| s.is_none()).count();
        if !forced && large * 8 > boxes.len() + 32 {
            return None;
        }
        // Count each cell's entries, lay the cells out in order, then fill them.
        for s in spans.iter().flatten() {
            grid.each_cell(*s, |grid, c| grid.cells[c].cap += 1);
        }
        let mut start = 0u32;
        for c in &mut grid.cells {
            c.start = start;
            start += c.cap;
        }
        grid.arena = vec![
            Entry {
                b: [0.0; 4],
                slot: u32::MAX
            };
            start as usize
        ];
        for ((r, slot), s) in boxes.iter().zip(&spans) {
            if let Some(s) = s {
                let e = Entry {
                    b: rounded(r),
                    slot: *slot,
                };
                grid.each_cell(*s, |grid, c| {
                    let cell = &mut grid.cells[c];
                    grid.arena[(cell.start + cell.len) as usize] = e;
                    cell.len += 1;
                });
                grid.live += (s[1] - s[0] + 1) * (s[3] - s[2] + 1);
            }
        }
        grid.large = BoxTree::new(
            boxes
                .iter()
                .zip(&spans)
                .filter(|(_, s)| s.is_none())
                .map(|((r, slot), _)| (r, *slot)),
        );
        Some(grid)
    }

    /// The cells of a grid for `boxes`, empty.
    fn plan(boxes: &[(Rect<f64>, u32)]) -> Option<Grid> {
        let n = boxes.len();
        if n == 0 || n > MAX_BOXES {
            return None;
        }
        let mut v: Vec<f64> = boxes.iter().map(|(r, _)| r.width()).collect();
        let w = nth(&mut v, n / 2);
        v.clear();
        v.extend(boxes.iter().map(|(r, _)| r.height()));
        let h = nth(&mut v, n / 2);
        if !w.is_finite() || !h.is_finite() {
            return None;
        }
        // The extent, less the outermost thousandth of the boxes on each side.
        let k = n / 1000;
        let mut corner = |f: fn(&Rect<f64>) -> f64, from_top: bool| {
            v.clear();
            v.extend(boxes.iter().map(|(r, _)| f(r)).filter(|c| c.is_finite()));
            if v.is_empty() {
                return None;
            }
            let k = if from_top {
                v.len() - 1 - k.min(v.len() - 1)
            } else {
                k
            };
            Some(nth(&mut v, k))
        };
        let (x0, y0) = (corner(|r| r.min().x, false)?, corner(|r| r.min().y, false)?);
        let (x1, y1) = (corner(|r| r.max().x, true)?, corner(|r| r.max().y, true)?);
        let (x1, y1) = (x1.max(x0), y1.max(y0));
        // Cell sides from the median box, or from the extent when boxes are points.
        let fallback = (n as f64).sqrt();
        let side = |median: f64, len: f64| {
            let s = median * CELL_FACTOR;
            if s > 0.0 && s.is_finite() {
                s
            } else if len > 0.0 && (len / fallback).is_finite() {
                len / fallback
            } else {
                1.0
            }
        };
        let (mut cw, mut ch) = (side(w, x1 - x0), side(h, y1 - y0));
        let budget = CELLS_PER_BOX * n as f64 + 16.0;
        for _ in 0..4 {
            let cells = cells_over(x1 - x0, cw) * cells_over(y1 - y0, ch);
            if cells <= budget {
                break;
            }
            let f = (cells / budget).sqrt() * 1.01;
            cw *= f;
            ch *= f;
        }
        let (x, y) = (Axis::new(x0, x1, cw), Axis::new(y0, y1, ch));
        if (x.n as f64) * (y.n as f64) > budget {
            return None;
        }
        Some(Grid {
            x,
            y,
            cells: vec![Cell::default(); x.n * y.n],
            arena: Vec::new(),
            live: 0,
            large: BoxTree::default(),
        })
    }

    /// The cells `[x0, x1, y0, y1]` (inclusive) a box covers, or `None` for a large
    /// box (kept in the tree).
    fn span(&self, r: &Rect<f64>) -> Option<[usize; 4]> {
        let (lo, hi) = (r.min(), r.max());
        let s = [
            self.x.cell(lo.x),
            self.x.cell(hi.x),
            self.y.cell(lo.y),
            self.y.cell(hi.y),
        ];
        let cells = (s[1] - s[0] + 1).saturating_mul(s[3] - s[2] + 1);
        (cells <= MAX_CELLS_PER_BOX).then_some(s)
    }

    fn each_cell(&mut self, [x0, x1, y0, y1]: [usize; 4], mut f: impl FnMut(&mut Grid, usize)) {
        for cy in y0..=y1 {
            for cx in x0..=x1 {
                f(self, cy * self.x.n + cx);
            }
        }
    }

    /// Does `r` lie in a cell list within the grid's extent (not large, not past the
    /// border cells, where boxes would pile up)?
    pub(super) fn fits(&self, r: &Rect<f64>) -> bool {
        let (lo, hi) = (r.min(), r.max());
        self.span(r).is_some()
            && lo.x >= self.x.origin
            && hi.x <= self.x.end()
            && lo.y >= self.y.origin
            && hi.y <= self.y.end()
    }

    /// Adds box `r` of zone slot `slot`.
    pub(super) fn insert(&mut self, r: &Rect<f64>, slot: u32) {
        let Some(s) = self.span(r) else {
            self.large.insert(r, slot);
            return;
        };
        let e = Entry {
            b: rounded(r),
            slot,
        };
        self.each_cell(s, |grid, c| grid.push(c, e));
    }

    /// Removes a box `r` of zone slot `slot` (of a slot's boxes in one cell, any one:
    /// a zone's boxes are removed together).
    pub(super) fn remove(&mut self, r: &Rect<f64>, slot: u32) {
        let Some(s) = self.span(r) else {
            self.large.remove(r, slot);
            return;
        };
        self.each_cell(s, |grid, c| {
            let cell = &mut grid.cells[c];
            let (start, end) = (cell.start as usize, (cell.start + cell.len) as usize);
            if let Some(i) = grid.arena[start..end].iter().position(|e| e.slot == slot) {
                grid.arena.swap(start + i, end - 1);
                cell.len -= 1;
                grid.live -= 1;
            }
        });
    }

    fn push(&mut self, c: usize, e: Entry) {
        if self.cells[c].len == self.cells[c].cap {
            if self.arena.len() > 2 * self.live + 64 {
                self.compact();
            }
            let cell = self.cells[c];
            let cap = (cell.cap * 2).max(4);
            let start = self.arena.len();
            let (from, to) = (cell.start as usize, (cell.start + cell.len) as usize);
            self.arena.extend_from_within(from..to);
            self.arena.resize(start + cap as usize, e);
            self.cells[c] = Cell {
                start: start as u32,
                len: cell.len,
                cap,
            };
        }
        let cell = &mut self.cells[c];
        self.arena[(cell.start + cell.len) as usize] = e;
        cell.len += 1;
        self.live += 1;
    }

    /// Lays the cells out again in order, each with room for its entries only.
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.live);
        for c in &mut self.cells {
            let (from, to) = (c.start as usize, (c.start + c.len) as usize);
            c.start = arena.len() as u32;
            c.cap = c.len;
            arena.extend_from_slice(&self.arena[from..to]);
        }
        self.arena = arena;
    }

    /// Calls `hit` with the slot of every box holding the point `(x, y)`, looked up
    /// at `key` (the point as [`super::boxtree::key`] rounds it), a slot once per box.
    #[inline]
    pub(super) fn stab(&self, p: Point, key: &[f32; 2], mut hit: impl FnMut(u32)) {
        let c = self.y.cell(p.y) * self.x.n + self.x.cell(p.x);
        if let Some(cell) = self.cells.get(c) {
            let (from, to) = (cell.start as usize, (cell.start + cell.len) as usize);
            for e in self.arena.get(from..to).unwrap_or_default() {
                let [x0, y0, x1, y1] = e.b;
                if x0 <= key[0] && key[0] <= x1 && y0 <= key[1] && key[1] <= y1 {
                    hit(e.slot);
                }
            }
        }
        if self.large.len() > 0 {
            self.large.stab(key, hit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: f64, y: f64, side: f64) -> Rect<f64> {
        Rect::new(
            Point { x, y },
            Point {
                x: x + side,
                y: y + side,
            },
        )
    }

    /// A huge box costs one entry in the tree of large boxes, not a cell per cell.
    #[test]
    fn a_huge_box_is_one_entry_in_the_tree() {
        let mut boxes: Vec<(Rect<f64>, u32)> = (0..1000u32)
            .map(|i| (square(f64::from(i % 40), f64::from(i / 40), 1.0), i))
            .collect();
        boxes.push((square(-1e9, -1e9, 2e9), 1000));
        let grid = Grid::new(&boxes, false).expect("a grid");
        assert_eq!(grid.large.len(), 1);
        assert!(grid.live <= 4 * 1000, "{}", grid.live);
        assert!(grid.cells.len() as f64 <= CELLS_PER_BOX * 1001.0 + 16.0);
        let mut hits = Vec::new();
        grid.stab(Point { x: 3.5, y: 0.5 }, &[3.5, 0.5], |s| hits.push(s));
        hits.sort_unstable();
        assert_eq!(hits, [3, 1000]);
    }

    /// Boxes far smaller than their extent: the cells are coarsened to the budget.
    #[test]
    fn cells_stay_within_budget() {
        let boxes: Vec<(Rect<f64>, u32)> = (0..100u32)
            .map(|i| (square(f64::from(i) * 1e6, f64::from(i % 7) * 1e6, 1e-3), i))
            .collect();
        let grid = Grid::new(&boxes, false).expect("a grid");
        assert!(grid.cells.len() as f64 <= CELLS_PER_BOX * 100.0 + 16.0);
    }

    /// A cell that fills up moves to the end of the arena; the arena is compacted.
    #[test]
    fn cells_grow_and_compact() {
        let boxes: Vec<(Rect<f64>, u32)> = (0..100u32)
            .map(|i| (square(f64::from(i), 0.0, 1.0), i))
            .collect();
        let mut grid = Grid::new(&boxes, true).expect("a grid");
        for round in 0..100u32 {
            // 20 boxes in one cell (a new one each round), then away again.
            let r = square(f64::from(round) + 0.2, 0.2, 0.5);
            for s in 0..20 {
                grid.insert(&r, 1000 + s);
            }
            for s in 0..20 {
                grid.remove(&r, 1000 + s);
            }
            assert!(grid.arena.len() <= 2 * grid.live + 200, "round {round}");
        }
        let r = square(10.2, 0.2, 0.5);
        grid.insert(&r, 7777);
        let mut hits = Vec::new();
        grid.stab(Point { x: 10.5, y: 0.5 }, &[10.5, 0.5], |s| hits.push(s));
        hits.sort_unstable();
        assert_eq!(hits, [10, 7777]);
    }
}

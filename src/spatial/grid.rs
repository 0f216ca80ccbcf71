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
//! **Entries.** A cell lists each box that covers it as the part of the box within
//! the cell, in 256ths of the cell's width and height rounded outwards, with the
//! zone's slot (8 bytes). A cell is one cache line holding its first [`INLINE`]
//! entries, so that a stab among many zones waits on memory once for the cell and
//! its boxes, then for the zones whose box holds the point (their exact test). A cell
//! with more entries keeps the rest in one array shared by every cell; a cell that
//! outgrows its room there moves to the end of the array with twice the room, and the
//! array is compacted when it holds twice its live entries. Inserting or removing a
//! box costs O(cells it covers).
//!
//! A point's 256ths in its cell are computed as the boxes' are, by a function
//! monotonic in the coordinate (clamped to the cell, so a border cell's points beyond
//! the extent count as at its edge): a box that holds the point holds its 256ths.
//!
//! **Masks.** Beside the cells, each cell has 16 bits, one per quarter of its width
//! by quarter of its height, set where one of its entries reaches. A stab may read its
//! cell's bit first and go to the cell's line only when the bit is set. Among many
//! small zones most points fall where no box reaches: the masks (2 bytes a cell) stay
//! in cache where the cells (64 bytes a cell) do not, and those stabs wait on no
//! memory. A point's quarter is its 256ths over 64, so a box that holds the point
//! reaches its quarter; removing a box sets its cells' bits again from the entries
//! left. Only a *sparse* grid reads the masks, one whose boxes left most quarters
//! unreached when it was laid out: a stab there, and a fetch of its cell ahead
//! ([`Grid::prefetch`]), go to the cell only for a reached quarter. On a dense grid
//! the answer would mostly be yes, and reading it first would only delay the cell.

use geo_types::Rect;

use super::boxtree::BoxTree;
use crate::event::Point;

/// Cell sides in median box sides.
const CELL_FACTOR: f64 = 1.0;
/// At most this many cells per box indexed (memory stays bounded however small the
/// boxes are against their extent): a cell takes a cache line, so the cells of sparse
/// zones take at most 64 bytes per box (four per box, as when a cell was a 12-byte
/// header, cost a 100,000-zone net 19 MB more and were no faster).
const CELLS_PER_BOX: f64 = 1.0;
/// A box covering more cells than this is kept in the R*-tree of large boxes.
const MAX_CELLS_PER_BOX: usize = 32;
/// A grid holds at most this many boxes (so that entry positions fit in `u32`, with
/// room for growth and holes).
const MAX_BOXES: usize = 1 << 24;

/// The entries a cell holds in its own cache line.
const INLINE: usize = 6;

/// One box listed in a cell: the part of it within the cell, `[min x, min y, max x,
/// max y]` in 256ths of the cell ([`frac`]), and its zone's slot.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    b: [u8; 4],
    slot: u32,
}

impl Entry {
    #[inline]
    fn holds(&self, qx: u8, qy: u8) -> bool {
        let [x0, y0, x1, y1] = self.b;
        x0 <= qx && qx <= x1 && y0 <= qy && qy <= y1
    }

    /// The quarters of its cell the entry reaches, as a cell's mask has them.
    fn mask(&self) -> u16 {
        let [x0, y0, x1, y1] = self.b.map(|q| q >> 6);
        // The columns x0..=x1 of one row, then that row at each of rows y0..=y1.
        let row = ((2_u16 << x1) - 1) & !((1_u16 << x0) - 1);
        (y0..=y1).fold(0, |m, y| m | row << (4 * y))
    }
}

/// The bit of a cell's mask for a point at `(qx, qy)` 256ths of the cell.
#[inline]
fn quarter(qx: u8, qy: u8) -> u16 {
    1 << ((qy >> 6) * 4 + (qx >> 6))
}

/// A cell's `len` entries: the first [`INLINE`] in `inline`, the others in
/// `arena[start..start + len - INLINE]`, with room there up to `start + cap`.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Cell {
    len: u32,
    start: u32,
    cap: u32,
    inline: [Entry; INLINE],
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

    /// Coordinate `v` in cells from the origin.
    #[inline]
    fn at(&self, v: f64) -> f64 {
        (v - self.origin) * self.scale
    }

    /// The cell of coordinate `v`, monotonic in `v` (clamped to the border cells; the
    /// conversion saturates, and takes a `NaN` to 0).
    #[inline]
    fn cell(&self, v: f64) -> usize {
        self.cell_at(self.at(v))
    }

    /// The cell of a coordinate `t` cells from the origin.
    #[inline]
    fn cell_at(&self, t: f64) -> usize {
        (t as usize).min(self.n - 1)
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

/// Where a coordinate `t` cells from the origin lies in cell `c`, in 256ths of the
/// cell, clamped to it (0 before it, 255 past it; a `NaN` gives 0): monotonic in `t`.
#[inline]
fn frac(t: f64, c: usize) -> u8 {
    ((t - c as f64) * 256.0).clamp(0.0, 255.0) as u8
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
    /// Each cell's mask: the quarters its entries reach (see the module's notes).
    masks: Vec<u16>,
    /// Whether most quarters were reached by no box when the grid was laid out: its
    /// stabs and fetches ahead then read the mask first, and go to the cell only when
    /// the point's quarter is reached.
    sparse: bool,
    arena: Vec<Entry>,
    /// Entries held in the arena, past the cells' inline ones (the rest of the arena
    /// is room and holes).
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
        // Count each cell's entries, lay out the room of those beyond the inline
        // ones in cell order, then fill the cells.
        for s in spans.iter().flatten() {
            grid.each_cell(*s, |grid, c, _| grid.cells[c].cap += 1);
        }
        let mut start = 0u32;
        for c in &mut grid.cells {
            c.cap = c.cap.saturating_sub(INLINE as u32);
            c.start = start;
            start += c.cap;
        }
        grid.arena = vec![Entry::default(); start as usize];
        for ((r, slot), s) in boxes.iter().zip(&spans) {
            if let Some(s) = s {
                grid.each_cell(*s, |grid, c, at| {
                    let e = grid.entry(r, *slot, at);
                    grid.push(c, e);
                });
            }
        }
        let reached: u64 = grid.masks.iter().map(|m| u64::from(m.count_ones())).sum();
        grid.sparse = reached * 2 < grid.masks.len() as u64 * 16;
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
        // Whole cells round up, so an axis of a few cells shrinks slower than its side
        // grows: a step grows the sides by at least 2 % until the cells fit.
        for _ in 0..64 {
            let cells = cells_over(x1 - x0, cw) * cells_over(y1 - y0, ch);
            if cells <= budget {
                break;
            }
            let f = ((cells / budget).sqrt() * 1.01).max(1.02);
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
            masks: vec![0; x.n * y.n],
            sparse: false,
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

    /// Calls `f` with the index and the column and row of each cell of a span.
    fn each_cell(
        &mut self,
        [x0, x1, y0, y1]: [usize; 4],
        mut f: impl FnMut(&mut Grid, usize, (usize, usize)),
    ) {
        for cy in y0..=y1 {
            for cx in x0..=x1 {
                f(self, cy * self.x.n + cx, (cx, cy));
            }
        }
    }

    /// The entry of box `r` (of zone slot `slot`) in the cell at column and row `at`.
    fn entry(&self, r: &Rect<f64>, slot: u32, (cx, cy): (usize, usize)) -> Entry {
        let (lo, hi) = (r.min(), r.max());
        Entry {
            b: [
                frac(self.x.at(lo.x), cx),
                frac(self.y.at(lo.y), cy),
                frac(self.x.at(hi.x), cx),
                frac(self.y.at(hi.y), cy),
            ],
            slot,
        }
    }

    /// Entry `i` (< its `len`) of cell `c`.
    fn get(&self, c: usize, i: usize) -> Entry {
        let cell = &self.cells[c];
        match i.checked_sub(INLINE) {
            None => cell.inline[i],
            Some(k) => self.arena[cell.start as usize + k],
        }
    }

    /// Sets entry `i` (< its room) of cell `c`.
    fn set(&mut self, c: usize, i: usize, e: Entry) {
        let cell = &mut self.cells[c];
        match i.checked_sub(INLINE) {
            None => cell.inline[i] = e,
            Some(k) => self.arena[cell.start as usize + k] = e,
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
        self.each_cell(s, |grid, c, at| {
            let e = grid.entry(r, slot, at);
            grid.push(c, e);
        });
    }

    /// Removes a box `r` of zone slot `slot` (of a slot's boxes in one cell, any one:
    /// a zone's boxes are removed together).
    pub(super) fn remove(&mut self, r: &Rect<f64>, slot: u32) {
        let Some(s) = self.span(r) else {
            self.large.remove(r, slot);
            return;
        };
        self.each_cell(s, |grid, c, _| {
            let len = grid.cells[c].len as usize;
            if let Some(i) = (0..len).find(|&i| grid.get(c, i).slot == slot) {
                let last = grid.get(c, len - 1);
                grid.set(c, i, last);
                grid.cells[c].len -= 1;
                if len > INLINE {
                    grid.live -= 1;
                }
                grid.masks[c] = (0..len - 1).fold(0, |m, i| m | grid.get(c, i).mask());
            }
        });
    }

    /// Appends `e` to cell `c`'s entries.
    fn push(&mut self, c: usize, e: Entry) {
        let len = self.cells[c].len as usize;
        if let Some(k) = len.checked_sub(INLINE) {
            if k == self.cells[c].cap as usize {
                if self.arena.len() > 2 * self.live + 64 {
                    self.compact();
                }
                let cell = &mut self.cells[c];
                let cap = (cell.cap * 2).max(4);
                let start = self.arena.len();
                let from = cell.start as usize;
                cell.start = start as u32;
                cell.cap = cap;
                self.arena.extend_from_within(from..from + k);
                self.arena.resize(start + cap as usize, e);
            }
            self.live += 1;
        }
        self.set(c, len, e);
        self.cells[c].len += 1;
        self.masks[c] |= e.mask();
    }

    /// Lays the cells' entries past the inline ones out again in order, each cell with
    /// room for its entries only.
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.live);
        for c in &mut self.cells {
            let k = (c.len as usize).saturating_sub(INLINE);
            let from = c.start as usize;
            c.start = arena.len() as u32;
            c.cap = k as u32;
            arena.extend_from_slice(&self.arena[from..from + k]);
        }
        self.arena = arena;
    }

    /// The cell of point `p`, its index and the point's 256ths in it.
    #[inline]
    fn locate(&self, p: Point) -> (usize, u8, u8) {
        let (tx, ty) = (self.x.at(p.x), self.y.at(p.y));
        let (cx, cy) = (self.x.cell_at(tx), self.y.cell_at(ty));
        (cy * self.x.n + cx, frac(tx, cx), frac(ty, cy))
    }

    /// Brings the cell of point `p` into cache, for a stab soon, unless a sparse
    /// grid's mask says that no box reaches the point. A hint: no result changes.
    #[inline]
    pub(super) fn prefetch(&self, p: Point) {
        let (c, qx, qy) = self.locate(p);
        if let Some(cell) = self.cells.get(c).filter(|_| self.reached(c, qx, qy)) {
            crate::hint::prefetch(cell);
        }
    }

    /// Whether the grid reads its masks.
    #[cfg(test)]
    pub(super) fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// Whether a box of cell `c` may hold a point at `(qx, qy)` 256ths of it, as far
    /// as a sparse grid's mask tells (a dense grid does not read it: the answer is
    /// mostly yes, and reading it would only delay the cell).
    #[inline]
    fn reached(&self, c: usize, qx: u8, qy: u8) -> bool {
        !self.sparse || self.masks.get(c).is_some_and(|m| m & quarter(qx, qy) != 0)
    }

    /// Calls `hit` with the slot of every box holding the point `(x, y)` (and perhaps
    /// of boxes near it), a slot once per box; the large boxes are looked up at `key`
    /// (the point as [`super::boxtree::key`] rounds it).
    #[inline]
    pub(super) fn stab(&self, p: Point, key: &[f32; 2], mut hit: impl FnMut(u32)) {
        let (c, qx, qy) = self.locate(p);
        if let Some(cell) = self.cells.get(c).filter(|_| self.reached(c, qx, qy)) {
            let len = cell.len as usize;
            for e in &cell.inline[..len.min(INLINE)] {
                if e.holds(qx, qy) {
                    hit(e.slot);
                }
            }
            if let Some(k) = len.checked_sub(INLINE) {
                let from = cell.start as usize;
                for e in self.arena.get(from..from + k).unwrap_or_default() {
                    if e.holds(qx, qy) {
                        hit(e.slot);
                    }
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

    /// A prefetch takes any point, however far or strange, to a cell or to none.
    #[test]
    fn a_prefetch_takes_any_point() {
        let boxes: Vec<(Rect<f64>, u32)> = (0..100u32)
            .map(|i| (square(f64::from(i % 10), f64::from(i / 10), 1.0), i))
            .collect();
        let grid = Grid::new(&boxes, false).expect("a grid");
        for v in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1e300,
            1e300,
            0.0,
            5.5,
        ] {
            for w in [f64::NAN, f64::INFINITY, -1e300, 3.0] {
                grid.prefetch(Point { x: v, y: w });
                // A stab there afterwards answers as ever: every box holding the
                // point (edges included) is among its hits.
                let mut hits = Vec::new();
                grid.stab(Point { x: v, y: w }, &[v as f32, w as f32], |s| {
                    hits.push(s)
                });
                let holds = |r: &Rect<f64>| {
                    v >= r.min().x && v <= r.max().x && w >= r.min().y && w <= r.max().y
                };
                for (r, slot) in &boxes {
                    assert!(!holds(r) || hits.contains(slot), "{v} {w}: {slot}");
                }
                assert!(v != 5.5 || w != 3.0 || hits.contains(&35));
            }
        }
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
        // Every entry listed, inline or spilled (`live` counts the spilled only).
        let listed: usize = grid.cells.iter().map(|c| c.len as usize).sum();
        assert!(listed <= 4 * 1000, "{listed}");
        assert!(grid.live <= listed, "{}", grid.live);
        assert!(grid.cells.len() as f64 <= CELLS_PER_BOX * 1001.0 + 16.0);
        let mut hits = Vec::new();
        grid.stab(Point { x: 3.5, y: 0.5 }, &[3.5, 0.5], |s| hits.push(s));
        hits.sort_unstable();
        assert_eq!(hits, [3, 1000]);
    }

    /// A box is found from every point it holds: on its edges and corners, in a cell
    /// listing more boxes than it holds inline, and past the grid's extent, where the
    /// border cells take the points (their 256ths clamped to the cell's edge). Boxes
    /// near a point may be found too: their exact test decides.
    #[test]
    fn a_box_is_found_from_its_edges_and_past_the_extent() {
        let mut boxes: Vec<(Rect<f64>, u32)> = (0..1000u32)
            .map(|i| (square(f64::from(i % 40), f64::from(i / 40), 1.0), i))
            .collect();
        // Ten boxes over one cell, and a box reaching far past the extent (the
        // outermost box of 1,011 is left out of the extent).
        for k in 0..10u32 {
            boxes.push((square(5.1 + 0.01 * f64::from(k), 5.1, 0.3), 1000 + k));
        }
        boxes.push((Rect::new((39.5, 24.5), (1e6, 1e6)), 2000));
        let grid = Grid::new(&boxes, false).expect("a grid");
        assert_eq!((grid.x.n, grid.y.n, grid.large.len()), (40, 25, 0));
        assert!(grid.cells.iter().any(|c| c.len as usize > INLINE));
        let hits = |x: f64, y: f64| {
            let mut h = Vec::new();
            grid.stab(Point { x, y }, &super::super::boxtree::key(x, y), |s| {
                h.push(s)
            });
            h.sort_unstable();
            h
        };
        // The corner (5, 5) is shared by four squares.
        assert_eq!(hits(5.0, 5.0), [164, 165, 204, 205]);
        // The far edge of the last of the ten boxes; the first ends 0.09 before.
        let on_edge = hits(5.49, 5.4);
        assert!(
            on_edge.contains(&1009) && !on_edge.contains(&1000),
            "{on_edge:?}"
        );
        assert_eq!(hits(5.2, 5.2).iter().filter(|&&s| s >= 1000).count(), 10);
        // Past the extent: the box that reaches there (and the border cell's square
        // at its edge).
        assert_eq!(hits(5e5, 5e5), [999, 2000]);
        assert_eq!(hits(1e6, 1e6), [999, 2000]);
        assert_eq!(hits(-5.0, -5.0), [0]);
        assert_eq!(hits(0.5, -5.0), [0]);
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

    /// A cell's mask has the quarter of every point its entries hold, and no quarter
    /// they do not reach.
    #[test]
    fn a_mask_has_every_quarter_its_entries_reach() {
        let mask = |b: [u8; 4]| Entry { b, slot: 0 }.mask();
        assert_eq!(mask([0, 0, 255, 255]), 0xffff);
        assert_eq!(mask([64, 64, 127, 127]), 1 << 5);
        assert_eq!(mask([63, 0, 64, 0]), 0b11);
        assert_eq!(mask([200, 130, 255, 200]), 0x8800);
        let qs = (0..=255u8)
            .step_by(3)
            .chain([63, 64, 127, 128, 191, 192, 255]);
        let qs: Vec<u8> = qs.collect();
        for &x0 in &qs {
            for &x1 in qs.iter().filter(|&&x1| x1 >= x0).step_by(5) {
                for &y0 in qs.iter().step_by(7) {
                    let e = Entry {
                        b: [x0, y0, x1, y0 + (255 - y0) / 2],
                        slot: 0,
                    };
                    let m = e.mask();
                    let mut reached = 0;
                    for &qx in &qs {
                        for &qy in &qs {
                            if e.holds(qx, qy) {
                                assert_ne!(m & quarter(qx, qy), 0, "{:?} {qx} {qy}", e.b);
                                reached |= quarter(qx, qy);
                            }
                        }
                    }
                    assert_eq!(m, reached, "{:?}", e.b);
                }
            }
        }
    }

    /// Boxes inserted and removed leave each cell's mask the union of its entries'.
    #[test]
    fn masks_follow_inserts_and_removes() {
        let boxes: Vec<(Rect<f64>, u32)> = (0..100u32)
            .map(|i| (square(f64::from(i % 10), f64::from(i / 10), 0.2), i))
            .collect();
        let mut grid = Grid::new(&boxes, true).expect("a grid");
        let agree = |grid: &Grid| {
            for (c, cell) in grid.cells.iter().enumerate() {
                let m = (0..cell.len as usize).fold(0, |m, i| m | grid.get(c, i).mask());
                assert_eq!(grid.masks[c], m, "cell {c}");
            }
        };
        agree(&grid);
        // The small box at (3, 4) reaches part of its cell: a point of that cell in
        // a quarter it does not reach is answered from the mask alone.
        assert!(grid.sparse);
        let (c, ..) = grid.locate(Point { x: 3.1, y: 4.1 });
        let before = grid.masks[c];
        let p = (0..100)
            .map(|i| Point {
                x: 3.0 + f64::from(i % 10) * 0.1,
                y: 4.0 + f64::from(i / 10) * 0.1,
            })
            .find(|&p| {
                let (at, qx, qy) = grid.locate(p);
                at == c && before & quarter(qx, qy) == 0
            })
            .expect("a quarter of the cell the box does not reach");
        let mut hits = Vec::new();
        grid.stab(p, &[p.x as f32, p.y as f32], |s| hits.push(s));
        assert!(hits.is_empty(), "{hits:?}");
        let over = square(p.x - 0.01, p.y - 0.01, 0.02);
        for k in 0..12u32 {
            grid.insert(&over, 500 + k);
        }
        agree(&grid);
        grid.stab(p, &[p.x as f32, p.y as f32], |s| hits.push(s));
        assert_eq!(hits.len(), 12);
        for k in 0..12u32 {
            grid.remove(&over, 500 + k);
        }
        agree(&grid);
        assert_eq!(grid.masks[c], before);
        for (r, slot) in &boxes {
            grid.remove(r, *slot);
        }
        assert!(grid.masks.iter().all(|&m| m == 0));
    }

    /// Small boxes far apart leave most quarters unreached: the grid is sparse, and
    /// reads its masks. Boxes that tile the plane make it dense.
    #[test]
    fn a_grid_knows_whether_it_is_sparse() {
        let grid = |side: f64| {
            let boxes: Vec<(Rect<f64>, u32)> = (0..400u32)
                .map(|i| (square(f64::from(i % 20), f64::from(i / 20), side), i))
                .collect();
            Grid::new(&boxes, true).expect("a grid")
        };
        assert!(grid(0.05).sparse);
        assert!(!grid(1.0).sparse);
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

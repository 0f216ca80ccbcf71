//! Rings that cross themselves: a figure-eight outline is accepted (inside is where
//! the boundary winds around a point, so both loops are inside), but it is seldom
//! meant, and a net should say so when it loads.
//!
//! Edges are found near each other through an R*-tree of their boxes, so that a ring
//! of a million vertices is checked in about n log n; two edges cross when they share
//! a point and are not neighbours along the ring. Orientation is decided exactly with
//! the point-in-polygon test's predicate (`planar.rs`, on the `robust` crate).

use geo_types::{Coord, LineString};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{RTree, AABB};

/// Two edges of `ring` (closed: its last point is its first) that share a point and
/// are not neighbours along it, as their positions (edge `i` runs from point `i` to
/// point `i + 1`); `None` for a simple ring. Edges of zero length are left out.
pub(crate) fn self_crossing(ring: &LineString<f64>) -> Option<(usize, usize)> {
    let pts = &ring.0;
    let n = pts.len().saturating_sub(1);
    let edges: Vec<GeomWithData<Rectangle<[f64; 2]>, usize>> = (0..n)
        .filter(|&i| pts[i] != pts[i + 1])
        .map(|i| {
            let (a, b) = (pts[i], pts[i + 1]);
            GeomWithData::new(Rectangle::from_corners([a.x, a.y], [b.x, b.y]), i)
        })
        .collect();
    let tree = RTree::bulk_load(edges.clone());
    let mut found: Option<(usize, usize)> = None;
    for e in &edges {
        let i = e.data;
        let env = AABB::from_corners([e.geom().lower()[0], e.geom().lower()[1]], e.geom().upper());
        for f in tree.locate_in_envelope_intersecting(&env) {
            let j = f.data;
            if j <= i || neighbours(i, j, n, pts) {
                continue;
            }
            if segments_meet(pts[i], pts[i + 1], pts[j], pts[j + 1]) {
                let pair = (i, j);
                if found.is_none_or(|f| pair < f) {
                    found = Some(pair);
                }
            }
        }
    }
    found
}

/// Are edges `i < j` neighbours along the ring of `n` edges: consecutive, or joined
/// through edges of zero length only?
fn neighbours(i: usize, j: usize, n: usize, pts: &[Coord<f64>]) -> bool {
    let joined = |from: usize, to: usize| (from + 1..=to).all(|k| k == to || pts[k] == pts[k + 1]);
    // i's end is j's start, with only repeated points between.
    (pts[i + 1] == pts[j] && joined(i, j))
        // j's end is i's start around the closing point.
        || (pts[j + 1] == pts[i] && (j + 1..n).all(|k| pts[k] == pts[k + 1]) && (0..i).all(|k| pts[k] == pts[k + 1]))
}

/// Do the segments `ab` and `cd` share a point?
fn segments_meet(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>, d: Coord<f64>) -> bool {
    let o = super::planar::orient_coords;
    let (o1, o2, o3, o4) = (o(a, b, c), o(a, b, d), o(c, d, a), o(c, d, b));
    if ((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0))
        && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0))
    {
        return true;
    }
    let on = |p: Coord<f64>, q: Coord<f64>, r: Coord<f64>| {
        r.x >= p.x.min(q.x) && r.x <= p.x.max(q.x) && r.y >= p.y.min(q.y) && r.y <= p.y.max(q.y)
    };
    (o1 == 0.0 && on(a, b, c))
        || (o2 == 0.0 && on(a, b, d))
        || (o3 == 0.0 && on(c, d, a))
        || (o4 == 0.0 && on(c, d, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(points: &[(f64, f64)]) -> LineString<f64> {
        let mut v: Vec<Coord<f64>> = points.iter().map(|&(x, y)| Coord { x, y }).collect();
        v.push(v[0]);
        LineString(v)
    }

    #[test]
    fn figure_eights_cross_and_simple_rings_do_not() {
        // A square, a triangle with a repeated point, a concave arrow.
        assert_eq!(
            self_crossing(&ring(&[(0., 0.), (4., 0.), (4., 4.), (0., 4.)])),
            None
        );
        assert_eq!(
            self_crossing(&ring(&[(0., 0.), (4., 0.), (4., 0.), (2., 3.)])),
            None
        );
        assert_eq!(
            self_crossing(&ring(&[(0., 0.), (4., 2.), (0., 4.), (1., 2.)])),
            None
        );
        // The bow-tie: edge 0 (0,0)-(4,4) crosses edge 2 (4,0)-(0,4).
        assert_eq!(
            self_crossing(&ring(&[(0., 0.), (4., 4.), (4., 0.), (0., 4.)])),
            Some((0, 2))
        );
        // A ring through one vertex twice (two triangles touching at (2,2)).
        let touching = ring(&[(0., 0.), (2., 2.), (4., 0.), (4., 4.), (2., 2.), (0., 4.)]);
        assert!(self_crossing(&touching).is_some());
        // An edge running back along another.
        assert!(self_crossing(&ring(&[(0., 0.), (4., 0.), (2., 0.), (2., 3.)])).is_some());
    }

    /// Against every pair of edges, on random small rings.
    #[test]
    fn finds_what_every_pair_finds() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::default();
        let pts = proptest::collection::vec((0i8..5, 0i8..5), 3..9);
        runner
            .run(&pts, |pts| {
                let pts: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|&(x, y)| (f64::from(x), f64::from(y)))
                    .collect();
                let r = ring(&pts);
                let p = &r.0;
                let n = p.len() - 1;
                let mut brute = None;
                'outer: for i in 0..n {
                    for j in i + 1..n {
                        if p[i] == p[i + 1] || p[j] == p[j + 1] || neighbours(i, j, n, p) {
                            continue;
                        }
                        if segments_meet(p[i], p[i + 1], p[j], p[j + 1]) {
                            brute = Some((i, j));
                            break 'outer;
                        }
                    }
                }
                prop_assert_eq!(self_crossing(&r), brute);
                Ok(())
            })
            .unwrap();
    }
}

//! Projection-based direction relations (N, S, E, W and their combinations) between a
//! point and a reference rectangle, as the four-tuple (N, S, E, W).

use geo_types::Rect;

use crate::event::Point;

/// One of the eight direction relations. Each names the whole four-tuple: `N` is
/// (1,0,0,0), north and within the reference's east–west span; `NE` is (1,0,1,0); and so on.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub(crate) enum Dir {
    N,
    S,
    E,
    W,
    NE,
    NW,
    SE,
    SW,
}

impl Dir {
    /// The relation's (N, S, E, W) tuple.
    fn tuple(self) -> [bool; 4] {
        match self {
            Dir::N => [true, false, false, false],
            Dir::S => [false, true, false, false],
            Dir::E => [false, false, true, false],
            Dir::W => [false, false, false, true],
            Dir::NE => [true, false, true, false],
            Dir::NW => [true, false, false, true],
            Dir::SE => [false, true, true, false],
            Dir::SW => [false, true, false, true],
        }
    }
}

/// A set of relations, any of which may hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct RelSet(pub(crate) Vec<Dir>);

impl RelSet {
    /// Does `p`, relative to the rectangle `r`, satisfy one of the relations?
    pub(crate) fn holds(&self, p: Point, r: Rect<f64>) -> bool {
        let t = [
            p.y > r.max().y,
            p.y < r.min().y,
            p.x > r.max().x,
            p.x < r.min().x,
        ];
        self.0.iter().any(|d| d.tuple() == t)
    }

    /// Does `p`, relative to the point `q` (a rectangle of zero size), satisfy one of them?
    pub(crate) fn holds_point(&self, p: Point, q: Point) -> bool {
        self.holds(p, Rect::new(q, q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_tuple() {
        let r = Rect::new(Point { x: 0.0, y: 0.0 }, Point { x: 2.0, y: 2.0 });
        let nw = RelSet(vec![Dir::NW]);
        assert!(nw.holds(Point { x: -1.0, y: 3.0 }, r));
        assert!(!nw.holds(Point { x: 1.0, y: 3.0 }, r));
        let n = RelSet(vec![Dir::N]);
        assert!(n.holds(Point { x: 1.0, y: 3.0 }, r));
        assert!(
            n.holds(Point { x: 2.0, y: 3.0 }, r),
            "on the span's edge is not east"
        );
        assert!(
            !n.holds(Point { x: 1.0, y: 2.0 }, r),
            "on the top edge is not north"
        );
        let q = Point { x: 0.0, y: 0.0 };
        assert!(RelSet(vec![Dir::N, Dir::NE]).holds_point(Point { x: 1.0, y: 1.0 }, q));
        assert!(!RelSet(vec![Dir::N]).holds_point(Point { x: 1.0, y: 1.0 }, q));
    }
}

//! Moving zones: re-centring a zone on its anchor's occurrence in every zone
//! R*-tree that holds it, and where each moving zone is, for snapshots.

use serde::{Deserialize, Serialize};

use crate::runtime::component::Component;
use crate::runtime::program::Program;
use crate::runtime::token::Token;
use crate::spatial::{Shape, Zone};

/// Re-centres moving zone `m` on the anchor's occurrence `tok` (and turns a sector by
/// its heading) in every R*-tree that holds it.
pub(super) fn move_zone(
    model: &crate::model::Model,
    program: &Program,
    components: &mut [Component],
    m: usize,
    tok: &Token,
) {
    let moving = &model.moving[m];
    let Some(center) = tok.term.location else {
        return;
    };
    let base = &model.zones[moving.zone];
    let heading = match &moving.heading {
        None => 0.0,
        Some(attr) => match tok.term.attr(attr) {
            Some(crate::event::Value::Num(h)) if h.is_finite() => *h,
            // Without a usable heading the sector keeps its bearings from north.
            _ => 0.0,
        },
    };
    let shape = match &base.shape {
        Shape::Circle { radius, .. } => Shape::Circle {
            center,
            radius: *radius,
        },
        Shape::Sector {
            radius,
            from_deg,
            to_deg,
            ..
        } => Shape::Sector {
            center,
            radius: *radius,
            from_deg: from_deg + heading,
            to_deg: to_deg + heading,
        },
        _ => return,
    };
    if model.space == crate::event::Space::Wgs84
        && (center.y.abs() > 90.0 || center.x.abs() > 180.0)
    {
        return;
    }
    let zone = Zone {
        name: base.name.clone(),
        shape,
    };
    place_zone(program, components, moving.zone, &zone);
}

/// Puts `zone` as zone `z` in every R*-tree that holds `z`.
pub(super) fn place_zone(program: &Program, components: &mut [Component], z: usize, zone: &Zone) {
    for &u in &program.zone_stabs[z] {
        components[u].update_zone(z, zone);
    }
}

/// Where a moving zone is: its centre, and a sector's bearings.
#[derive(Serialize, Deserialize)]
pub(super) struct MovedZone {
    center: (f64, f64),
    from_deg: f64,
    to_deg: f64,
}

impl MovedZone {
    pub(super) fn of(shape: &Shape) -> Option<MovedZone> {
        match *shape {
            Shape::Circle { center, .. } => Some(MovedZone {
                center: (center.x, center.y),
                from_deg: 0.0,
                to_deg: 0.0,
            }),
            Shape::Sector {
                center,
                from_deg,
                to_deg,
                ..
            } => Some(MovedZone {
                center: (center.x, center.y),
                from_deg,
                to_deg,
            }),
            _ => None,
        }
    }

    /// The zone `base` moved here.
    pub(super) fn shape(&self, base: &Shape) -> Option<Shape> {
        let center = crate::event::Point {
            x: self.center.0,
            y: self.center.1,
        };
        match *base {
            Shape::Circle { radius, .. } => Some(Shape::Circle { center, radius }),
            Shape::Sector { radius, .. } => Some(Shape::Sector {
                center,
                radius,
                from_deg: self.from_deg,
                to_deg: self.to_deg,
            }),
            _ => None,
        }
    }
}

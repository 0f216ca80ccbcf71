//! Seeded event streams shared by the examples (`gen_events`, `soak`, `push_profile`)
//! and the detector benchmark.
//!
//! - `uniform`: events of types A–E at random points of a 1000 × 1000 square, with a
//!   `ship` key among 200 values and a `speed`; time advances 10 ms per event.
//! - `uniform_wgs84`: the same on WGS84, the square mapped to 1° × 1° (lon 10°–11°,
//!   lat 50°–51°, about 71 × 111 km).
//! - `harbour`: tracks (friendly and hostile vessels, patrols) moving in straight
//!   lines around a harbour at the origin, each reporting every 4 s.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A generator of one of the streams; [`Gen::next_json`] gives each event, ready to
/// print as JSON.
pub struct Gen {
    rng: SmallRng,
    n: u64,
    kind: Kind,
    tracks: Vec<Track>,
    next_track: usize,
}

enum Kind {
    Uniform,
    UniformWgs84,
    Harbour,
}

struct Track {
    id: u32,
    x: f64,
    y: f64,
    vx: f64,
    vy: f64,
    iff: &'static str,
    kind: &'static str,
}

/// Types of the uniform stream.
pub const TYPES: [&str; 5] = ["A", "B", "C", "D", "E"];

impl Gen {
    /// The uniform stream.
    pub fn uniform(seed: u64) -> Gen {
        Gen {
            rng: SmallRng::seed_from_u64(seed),
            n: 0,
            kind: Kind::Uniform,
            tracks: Vec::new(),
            next_track: 0,
        }
    }

    /// The uniform stream on WGS84.
    pub fn uniform_wgs84(seed: u64) -> Gen {
        Gen {
            kind: Kind::UniformWgs84,
            ..Gen::uniform(seed)
        }
    }

    /// The harbour scenario with `objects` tracks.
    pub fn harbour(seed: u64, objects: usize) -> Gen {
        let mut rng = SmallRng::seed_from_u64(seed);
        let tracks = (0..objects)
            .map(|i| {
                let angle: f64 = rng.random_range(0.0..std::f64::consts::TAU);
                let r: f64 = rng.random_range(5_500.0..8_000.0);
                let (x, y) = (r * angle.cos(), r * angle.sin());
                let hostile = i % 3 == 0;
                let patrol = i % 5 == 1;
                // Hostiles head for the harbour; others cross it at an angle.
                let aim = if hostile {
                    0.0
                } else {
                    rng.random_range(-0.8..0.8)
                };
                let heading = (-y).atan2(-x) + aim;
                let speed: f64 = if hostile {
                    rng.random_range(8.0..15.0)
                } else {
                    rng.random_range(4.0..10.0)
                };
                Track {
                    id: 100 + i as u32,
                    x,
                    y,
                    vx: speed * heading.cos(),
                    vy: speed * heading.sin(),
                    iff: if hostile { "foe" } else { "friend" },
                    kind: if patrol { "patrol" } else { "track" },
                }
            })
            .collect();
        Gen {
            rng,
            n: 0,
            kind: Kind::Harbour,
            tracks,
            next_track: 0,
        }
    }

    /// The next event as a JSON line (no newline).
    pub fn next_json(&mut self) -> String {
        self.n += 1;
        match self.kind {
            Kind::Uniform | Kind::UniformWgs84 => {
                let t = 1_700_000_000.0 + self.n as f64 * 0.01;
                let ty = TYPES[self.rng.random_range(0..TYPES.len())];
                let x: f64 = self.rng.random_range(0.0..1000.0);
                let y: f64 = self.rng.random_range(0.0..1000.0);
                let ship = self.rng.random_range(0..200u32);
                let speed = self.rng.random_range(0..40u32);
                if matches!(self.kind, Kind::Uniform) {
                    format!(
                        r#"{{"id":{},"type":"{ty}","time":{t:.2},"x":{x:.1},"y":{y:.1},"ship":"s{ship}","speed":{speed}}}"#,
                        self.n
                    )
                } else {
                    let (lon, lat) = (10.0 + x / 1000.0, 50.0 + y / 1000.0);
                    format!(
                        r#"{{"id":{},"type":"{ty}","time":{t:.2},"lon":{lon:.5},"lat":{lat:.5},"ship":"s{ship}","speed":{speed}}}"#,
                        self.n
                    )
                }
            }
            Kind::Harbour => {
                // Round-robin over tracks: each reports every 4 s.
                let i = self.next_track;
                self.next_track = (self.next_track + 1) % self.tracks.len();
                let round = (self.n - 1) / self.tracks.len() as u64;
                let t = 1_700_000_000.0
                    + round as f64 * 4.0
                    + i as f64 * 4.0 / self.tracks.len() as f64;
                let tr = &mut self.tracks[i];
                tr.x += tr.vx * 4.0;
                tr.y += tr.vy * 4.0;
                let speed = (tr.vx * tr.vx + tr.vy * tr.vy).sqrt();
                format!(
                    r#"{{"id":{},"type":"{}","time":{t:.3},"x":{:.1},"y":{:.1},"track":{},"iff":"{}","speed":{speed:.1}}}"#,
                    self.n, tr.kind, tr.x, tr.y, tr.id, tr.iff
                )
            }
        }
    }
}

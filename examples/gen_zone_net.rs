//! Writes a net with many zones and many `Within` rules over the `uniform` stream's
//! square, to measure zone stabbing end to end.
//!
//! ```text
//! cargo run --release --features bench --example gen_zone_net -- 10000 100 > /tmp/zones.ron
//! ```
//! makes 10,000 seeded circles, sectors and rectangles in the 1000 × 1000 square and
//! 100 `Within` rules, each over 100 of them, spread over the event types A–E.
//!
//! A third argument scales the zones' sizes: `gen_zone_net 100000 100 0.0316` makes
//! zones √1000 times smaller than `gen_zone_net 100 100`, so that both cover the same
//! share of the square (a point lies in as many zones, and the nets detect about as
//! often): the cost of the zone index alone, whatever the number of zones.

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let zones = args.first().copied().unwrap_or(10_000).max(1);
    let rules = args.get(1).copied().unwrap_or(100).clamp(1, zones);
    let scale: f64 = std::env::args()
        .nth(3)
        .and_then(|a| a.parse().ok())
        .filter(|s: &f64| *s > 0.0)
        .unwrap_or(1.0);
    print!("{}", ccpn::bench::zone_net::zone_net(zones, rules, scale));
}

//! Monitoring software that embeds ccpn: it owns a `Detector`, feeds it from a
//! channel of sensor reports, advances event time while the sensors are quiet, and
//! handles detections itself — no files, no `ccpn-run`.
//!
//! It needs none of the command line's crates:
//!
//! ```text
//! cargo run --example embed --no-default-features
//! ```

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread;

use ccpn::{Detection, Detector, Event, Net, Timestamp};

/// What the sensors send the monitor.
enum Report {
    /// A sensor report.
    Event(Event),
    /// A heartbeat: event time has reached this instant (no report is older).
    Clock(Timestamp),
}

const NET: &str = r#"Net(
    space: Planar,
    zones: { "harbour": Circle(center: (0.0, 0.0), radius: 1000.0) },
    events: {
        "hostile": Atomic(type: "track", when: "iff == \"foe\""),
        "inside": Within(of: "hostile", zones: ["harbour"]),
        "patrol": Atomic(type: "patrol"),
        // Every 60 s while a hostile is inside, until a patrol reports.
        "alarm": P(start: "inside", period: 60.0, end: "patrol", within: "10m"),
    },
    outputs: ["inside", "alarm"],
)"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let net = Net::from_ron("embedded.ron", NET)?;
    let (tx, rx) = sync_channel::<Report>(1024);

    // The sensors: a hostile track closing in, a heartbeat, then a patrol.
    let sensors = thread::spawn(move || {
        let t = |s: f64| Timestamp::from_secs_f64(1_700_000_000.0 + s).expect("in range");
        for (i, x) in [3000.0, 2000.0, 900.0, 600.0].into_iter().enumerate() {
            let e = Event::new(i as i64 + 1, "track", t(i as f64 * 30.0))
                .at(x, 0.0)
                .with("iff", "foe");
            if tx.send(Report::Event(e)).is_err() {
                return;
            }
        }
        let _ = tx.send(Report::Clock(t(240.0)));
        let _ = tx.send(Report::Event(
            Event::new(9, "patrol", t(250.0)).at(500.0, 0.0),
        ));
    });

    let mut detector = Detector::new(&net);
    let handled = monitor(&mut detector, &rx);
    sensors.join().map_err(|_| "sensor thread panicked")?;
    println!("{handled} detections handled; {:?}", detector.stats());
    Ok(())
}

/// The monitor's loop: push reports, advance time on heartbeats, act on detections;
/// when the sensors hang up, end the stream.
fn monitor(detector: &mut Detector, rx: &Receiver<Report>) -> usize {
    let mut handled = 0;
    let mut act = |found: Vec<Detection>| {
        for d in &found {
            let ids: Vec<String> = d.ids().map(ToString::to_string).collect();
            println!("ALERT {} at t={} ids=[{}]", d.event, d.time, ids.join(", "));
            handled += 1;
        }
    };
    for report in rx.iter() {
        match report {
            Report::Event(e) => match detector.push(e) {
                Ok(found) => act(found),
                Err(err) => eprintln!("report refused: {err}"),
            },
            Report::Clock(t) => act(detector.advance_to(t)),
        }
    }
    act(detector.finish());
    handled
}

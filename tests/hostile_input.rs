//! Random input never crashes ccpn: arbitrary bytes as event lines, arbitrary text
//! and mutated nets as net files, and random events through a loaded net (whose
//! detections must name pushed events and fit their operator's window).

use proptest::prelude::*;

use ccpn::io::read::LineParser;
use ccpn::{Detector, Event, Net, Space, Timestamp};

const NET: &str = r#"Net(
    zones: { "z": Circle(center: (0.0, 0.0), radius: 5.0) },
    events: {
        "a": Atomic(type: "A", when: "speed > 3"),
        "b": Atomic(type: "B"),
        "ab": Seq(of: ["a", "b"], within: 10.0, key: "k"),
        "near": Dist(a: "a", b: "b", max: 2.0, within: 5.0),
        "in": Within(of: "b", zones: ["z"]),
        "swarm": Count(of: "b", n: 3, distance: 4.0, window: 20.0),
        "quiet": Not(start: "a", absent: "b", end: "a", within: 8.0),
    },
    outputs: ["ab", "near", "in", "swarm", "quiet"],
)"#;

/// The window each output's occurrences must fit, in seconds.
fn window(event: &str) -> f64 {
    match event {
        "ab" => 10.0,
        "near" => 5.0,
        "swarm" => 20.0,
        "quiet" => 8.0,
        _ => 0.0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_as_an_event_line_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        for space in [Space::Planar, Space::Wgs84] {
            let _ = LineParser::json(space).parse(&bytes);
            if let Ok(p) = LineParser::csv(b"id,time,type,x,y,speed", space) {
                let _ = p.parse(&bytes);
            }
        }
    }

    #[test]
    fn json_like_lines_never_panic(line in r#"\{("(id|time|type|x|y|lon|lat|k)":(-?[0-9]{1,25}(\.[0-9]{1,5})?(e-?[0-9]{1,3})?|"[^"\\]{0,8}"|true|null|\[\]|\{\}),?){0,8}\}"#) {
        for space in [Space::Planar, Space::Wgs84] {
            let _ = LineParser::json(space).parse(line.as_bytes());
        }
    }

    #[test]
    fn any_text_as_a_net_never_panics(text in "\\PC{0,300}") {
        let _ = Net::from_ron("fuzz.ron", &text);
    }

    #[test]
    fn mutated_nets_never_panic(cut in 0usize..NET.len(), insert in "[\\(\\)\\[\\]\\{\\}\",:a-z0-9.\\- ]{0,6}") {
        let mut text = NET.to_owned();
        let at = (0..=cut).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        text.insert_str(at, &insert);
        let _ = Net::from_ron("mutated.ron", &text);
    }

    #[test]
    fn random_events_give_detections_of_pushed_events_that_fit_their_windows(
        events in prop::collection::vec((0u8..3, 0u32..50, -8i32..8, -8i32..8, 0u8..6, 0u8..3), 1..120),
    ) {
        let net = Net::from_ron("net.ron", NET).expect("the test net");
        let mut d = Detector::new(&net);
        let mut t = 0.0;
        let mut pushed = std::collections::HashSet::new();
        for (i, &(kind, dt, x, y, speed, k)) in events.iter().enumerate() {
            t += f64::from(dt) / 10.0;
            let ty = ["A", "B", "C"][kind as usize];
            let e = Event::new(i as i64, ty, Timestamp::from_secs_f64(t).expect("in range"))
                .at(f64::from(x), f64::from(y))
                .with("speed", f64::from(speed))
                .with("k", f64::from(k));
            pushed.insert(i as i64);
            for det in d.push(e).expect("in order") {
                for id in det.ids() {
                    match id {
                        ccpn::Id::Int(v) => prop_assert!(pushed.contains(v)),
                        other => prop_assert!(false, "unexpected id {other:?}"),
                    }
                }
                let span = det.time.as_secs_f64() - det.start.as_secs_f64();
                prop_assert!(span <= window(&det.event) + 1e-9, "{} spans {span}", det.event);
            }
        }
        let _ = d.finish();
    }
}

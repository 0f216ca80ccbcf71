//! Running ccpn itself on a reference net and stream, and comparing what it detects
//! with the reference: shared by the property tests and the fuzz targets.

use std::collections::BTreeMap;

use ccpn::io::write::JsonLines;
use ccpn::{Detail, Detection, Detector, DetectorOptions, Event, Timestamp, Value};

use super::states::{canonical, show_findings, Findings, Found, Phase};
use super::{show_outputs, Det, Ev, Net, Output, Reference, Space, Val};

pub fn to_event(e: &Ev) -> Event {
    let t = Timestamp::from_secs_f64(e.time as f64).expect("time in range");
    let mut ev = Event::new(e.id, &e.ty, t);
    if let Some((x, y)) = e.loc {
        ev = ev.at(x, y);
    }
    for (k, v) in &e.attrs {
        let v = match v {
            Val::Num(n) => Value::Num(*n),
            Val::Str(s) => Value::Str(s.as_str().into()),
            Val::Bool(b) => Value::Bool(*b),
        };
        ev = ev.with(k, v);
    }
    ev
}

/// Runs ccpn on the net's RON text and the events, then `finish()`.
pub fn run_ccpn(net: &Net, events: &[Ev]) -> Result<Output, String> {
    run_ccpn_restarting(net, events, None)
}

/// Like [`run_ccpn`]; with `Some(k)`, the detector is replaced by one restored from
/// its snapshot after every `k`-th event.
pub fn run_ccpn_restarting(
    net: &Net,
    events: &[Ev],
    every: Option<usize>,
) -> Result<Output, String> {
    let all = ccpn_detections(net, events, every)?;
    // Sequence numbers run from 0 without gaps, restored or not.
    for (i, d) in all.iter().enumerate() {
        if d.seq != i as u64 {
            return Err(format!("detection {i} has seq {}", d.seq));
        }
    }
    let mut out: Output = net
        .outputs
        .iter()
        .map(|n| (n.clone(), Vec::new()))
        .collect();
    for d in all {
        let ids = d
            .ids()
            .map(|id| match id {
                ccpn::Id::Int(i) => *i,
                other => panic!("unexpected id {other:?}"),
            })
            .collect();
        let ticks = match d.detail {
            Detail::Ticks(n) => Some(n),
            _ => None,
        };
        out.entry(d.event.to_string()).or_default().push(Det {
            time: d.time.as_secs_f64(),
            ids,
            ticks,
        });
    }
    Ok(out)
}

/// ccpn's detections of the net's RON text on the events, then `finish()`, without
/// a token cap; with `Some(k)`, the detector is replaced by one restored from its
/// snapshot after every `k`-th event, and its counters must survive the restore.
pub fn ccpn_detections(
    net: &Net,
    events: &[Ev],
    every: Option<usize>,
) -> Result<Vec<Detection>, String> {
    let ron = net.to_ron();
    let compiled =
        ccpn::Net::from_ron("prop.ron", &ron).map_err(|e| format!("net rejected: {e}"))?;
    let mut det = Detector::with_options(
        &compiled,
        DetectorOptions {
            max_tokens: usize::MAX,
            ..DetectorOptions::default()
        },
    );
    let mut all = Vec::new();
    for (i, e) in events.iter().enumerate() {
        all.extend(
            det.push(to_event(e))
                .map_err(|e| format!("push failed: {e}"))?,
        );
        if every.is_some_and(|k| (i + 1) % k == 0) {
            let stats = det.stats();
            det = Detector::restore(&compiled, &det.snapshot())
                .map_err(|e| format!("restore failed: {e}"))?;
            if det.stats() != stats {
                return Err(format!(
                    "after event {i}, counters {:?} restored as {:?}",
                    stats,
                    det.stats()
                ));
            }
        }
    }
    all.extend(det.finish());
    Ok(all)
}

/// ccpn's detections as the JSON lines `ccpn-run` writes (see [`ccpn_detections`]).
pub fn ccpn_lines(net: &Net, events: &[Ev], every: Option<usize>) -> Result<Vec<String>, String> {
    let writer = writer(net);
    ccpn_detections(net, events, every)?
        .iter()
        .map(|d| {
            let mut line = Vec::new();
            writer
                .write(&mut line, d)
                .map_err(|e| format!("write failed: {e}"))?;
            String::from_utf8(line).map_err(|e| format!("bad JSON line: {e}"))
        })
        .collect()
}

fn writer(net: &Net) -> JsonLines {
    JsonLines::new(match net.space {
        Space::Planar => ccpn::Space::Planar,
        Space::Wgs84 => ccpn::Space::Wgs84,
    })
}

/// Runs ccpn on the net's RON text and the events, then `finish()`, returning each
/// output's detections with what the contract fixes, states' `phase` and `start`
/// included: those are read from each detection's JSON line, as `ccpn-run` writes
/// it (`"phase"`, and `"start"` on ends).
pub fn run_ccpn_found(net: &Net, events: &[Ev]) -> Result<Findings, String> {
    let all = ccpn_detections(net, events, None)?;
    let writer = writer(net);
    let mut out: Findings = net
        .outputs
        .iter()
        .map(|n| (n.clone(), Vec::new()))
        .collect();
    for d in all {
        let mut line = Vec::new();
        writer
            .write(&mut line, &d)
            .map_err(|e| format!("write failed: {e}"))?;
        let line = String::from_utf8(line).map_err(|e| format!("bad JSON line: {e}"))?;
        let fields = top_level_fields(&line);
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let phase = match field("phase") {
            None => None,
            Some("\"start\"") => Some(Phase::Start),
            Some("\"end\"") => Some(Phase::End),
            Some(other) => return Err(format!("unknown phase {other} in {line}")),
        };
        // `start` is fixed for the ends of states; other detections may carry one too.
        let start = match phase {
            Some(Phase::End) => Some(
                field("start")
                    .and_then(|s| s.parse::<f64>().ok())
                    .ok_or_else(|| format!("an end without a numeric start: {line}"))?,
            ),
            _ => None,
        };
        let ids = d
            .ids()
            .map(|id| match id {
                ccpn::Id::Int(i) => *i,
                other => panic!("unexpected id {other:?}"),
            })
            .collect();
        let ticks = match d.detail {
            Detail::Ticks(n) => Some(n),
            _ => None,
        };
        out.entry(d.event.to_string()).or_default().push(Found {
            time: d.time.as_secs_f64(),
            ids,
            ticks,
            phase,
            start,
        });
    }
    Ok(out)
}

/// The top-level fields of a one-line JSON object, as (key, value's JSON text):
/// enough for the detections `JsonLines` writes (keys without escapes).
pub fn top_level_fields(line: &str) -> Vec<(String, String)> {
    let body = line.trim().trim_start_matches('{').trim_end_matches('}');
    let (mut parts, mut cur) = (Vec::new(), String::new());
    let (mut depth, mut in_str, mut escaped) = (0i32, false, false);
    for c in body.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else {
            match c {
                '"' => in_str = true,
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
        }
        cur.push(c);
    }
    parts.push(cur);
    parts
        .into_iter()
        .filter_map(|p| {
            let (k, v) = p.split_once(':')?;
            Some((k.trim().trim_matches('"').to_owned(), v.trim().to_owned()))
        })
        .collect()
}

/// Compares ccpn with the reference on a net that may hold states: phases and
/// starts included; simultaneous detections of one output in any order. Unless
/// the reference's occurrences exceed `max` (then `Ok(false)`, nothing compared).
pub fn compare_found(net: &Net, events: &[Ev], max: usize) -> Result<bool, String> {
    let Some(expected) = Reference::run_found_bounded(net, events, max) else {
        return Ok(false);
    };
    let got = run_ccpn_found(net, events).map(canonical);
    verdict(net, events, &canonical(expected), got, show_findings)
}

/// Whether ccpn's detections `got` (or why it could not run) are the reference's
/// `expected`, output by output: `Ok(true)`, or the difference with the net, the
/// events and both sides shown by `show`.
fn verdict<T: PartialEq>(
    net: &Net,
    events: &[Ev],
    expected: &BTreeMap<String, T>,
    got: Result<BTreeMap<String, T>, String>,
    show: fn(&BTreeMap<String, T>) -> String,
) -> Result<bool, String> {
    let got = got.map_err(|e| {
        format!(
            "{e}\n--- net ---\n{}--- events ---\n{}",
            net.to_ron(),
            show_events(events)
        )
    })?;
    if *expected == got {
        return Ok(true);
    }
    let differ: Vec<&String> = expected
        .keys()
        .chain(got.keys())
        .filter(|k| expected.get(*k) != got.get(*k))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Err(format!(
        "ccpn and the reference disagree on {differ:?}\n--- net ---\n{}--- events ---\n{}--- reference ---\n{}--- ccpn ---\n{}",
        net.to_ron(),
        show_events(events),
        show(expected),
        show(&got)
    ))
}

pub fn show_events(events: &[Ev]) -> String {
    let mut s = String::new();
    for e in events {
        s.push_str(&format!("  id={} type={} t={}", e.id, e.ty, e.time));
        if let Some((x, y)) = e.loc {
            s.push_str(&format!(" at=({x},{y})"));
        }
        for (k, v) in &e.attrs {
            let v = match v {
                Val::Num(n) => format!("{n}"),
                Val::Str(t) => format!("{t:?}"),
                Val::Bool(b) => format!("{b}"),
            };
            s.push_str(&format!(" {k}={v}"));
        }
        s.push('\n');
    }
    s
}

/// Compares ccpn with the reference on one net and stream.
pub fn compare(net: &Net, events: &[Ev]) -> Result<(), String> {
    compare_bounded(net, events, usize::MAX).map(|_| ())
}

/// Like [`compare`], unless the reference's occurrences exceed `max`: then nothing
/// is compared, and the answer is `Ok(false)`.
pub fn compare_bounded(net: &Net, events: &[Ev], max: usize) -> Result<bool, String> {
    let Some(expected) = Reference::run_bounded(net, events, max) else {
        return Ok(false);
    };
    verdict(net, events, &expected, run_ccpn(net, events), show_outputs)
}

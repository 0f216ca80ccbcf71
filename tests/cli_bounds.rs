//! Caps that keep `ccpn-run`'s memory bounded whatever its input, each warned about
//! when it is reached and counted in `--stats`.

mod support;

use support::{root, run, stats, text};

/// Three million lines held for `--max-delay` once took 1.1 GB without a word: the
/// buffer holds at most `--max-held` events, and processes the oldest early beyond.
#[test]
fn the_reorder_buffer_is_capped() {
    let net = root().join("nets/harbour.ron").display().to_string();
    // In time order, but a delay of an hour holds them all until the end.
    let events: String = (0..10)
        .map(|i| format!("{{\"id\":{i},\"type\":\"track\",\"time\":{},\"x\":0,\"y\":0,\"track\":1,\"iff\":\"foe\"}}\n", 100 + i))
        .collect();
    let capped = run(
        &[&net, "--max-delay", "1h", "--max-held", "3", "--stats"],
        &events,
    );
    assert!(capped.status.success(), "{}", text(&capped.stderr));
    let s = stats(&capped);
    assert_eq!(s["released_early"], 7, "{s}");
    assert_eq!(s["processed"], 10, "{s}");
    let err = text(&capped.stderr);
    assert_eq!(
        err.matches("--max-held 3 events are held").count(),
        1,
        "{err}"
    );
    assert!(err.contains("line 4: --max-held 3"), "{err}");
    // In-order input: the same detections as with no cap.
    let free = run(&[&net, "--max-delay", "1h", "--stats"], &events);
    assert_eq!(capped.stdout, free.stdout);
    assert_eq!(stats(&free)["released_early"], 0);
}

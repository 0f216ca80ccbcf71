//! Caps that keep `ccpn-run`'s memory bounded whatever its input, each warned about
//! when it is reached and counted in `--stats`.

mod support;

use support::{root, run, stats, tempfile_path, text};

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

/// A checkpoint that cannot be written (here its path is a directory) is an error,
/// said once; the run goes on and ends with exit status 5, leaving no `.tmp` file.
#[test]
fn a_checkpoint_that_cannot_be_written_ends_the_run_with_status_5() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt");
    std::fs::create_dir(&ckpt).unwrap();
    let net = root().join("nets/harbour.ron").display().to_string();
    let events = std::fs::read_to_string(root().join("examples/harbour.jsonl")).unwrap();
    let ckpt_arg = ckpt.display().to_string();
    let out = run(
        &[
            &net,
            "--checkpoint",
            &ckpt_arg,
            "--checkpoint-every",
            "1000",
        ],
        &events,
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.matches("cannot write checkpoint").count(), 1, "{err}");
    assert!(err.starts_with("ccpn-run: error: "), "{err}");
    let free = run(&[&net], &events);
    assert_eq!(out.stdout, free.stdout, "the detections are all written");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["ckpt"], "{left:?}");
}

/// `--checkpoint` or `--late` naming the events file would write over the input.
#[test]
fn outputs_naming_the_input_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    std::fs::write(&events, "{\"id\":1,\"type\":\"track\",\"time\":1}\n").unwrap();
    let net = root().join("nets/harbour.ron").display().to_string();
    let same = events.display().to_string();
    let other_path = dir
        .path()
        .join(".")
        .join("events.jsonl")
        .display()
        .to_string();
    for (flag, path) in [("--checkpoint", &same), ("--late", &other_path)] {
        let out = run(&[&net, &same, flag, path], "");
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(&format!("{flag} ")),
            "{}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("is the events file"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&events).unwrap(),
        "{\"id\":1,\"type\":\"track\",\"time\":1}\n"
    );
}

/// 50 points pairwise close and `Count(n: 5)`: the 50th event completed 211,876 sets,
/// all made and held before the first was written. `ccpn-run` now writes at most
/// 100,000 per operator and event, warns, and counts the events cut short.
#[test]
fn one_events_detections_are_capped_per_operator() {
    let net = tempfile_path::Temp::with(
        "count5.ron",
        r#"Net(events: { "a": Atomic(type: "A"),
            "out": Count(of: "a", n: 5, distance: 100.0, window: "1h") }, outputs: ["out"])"#,
    );
    let events: String = (0..50)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"type\":\"A\",\"time\":{},\"x\":0,\"y\":0}}\n",
                100 + i
            )
        })
        .collect();
    let out = run(&[net.path(), "--stats"], &events);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = stats(&out);
    // C(50, 5) = 2,118,760 sets; the events from the 42nd on complete more than
    // 100,000 each (C(41, 4) = 101,270), and fire 100,000.
    let full: u64 = (41..50u64).map(|k| choose(k, 4).min(100_000)).sum();
    let below: u64 = (4..41u64).map(|k| choose(k, 4)).sum();
    assert_eq!(s["detections"], full + below, "{s}");
    assert_eq!(s["truncated_firings"], 9, "{s}");
    let err = text(&out.stderr);
    assert!(
        err.contains("9 occurrences stopped short of their firings"),
        "{err}"
    );
}

fn choose(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |c, i| c * (n - i) / (i + 1))
}

#![allow(unreachable_pub, missing_docs)]

//! Property test: ccpn's `Detector` against the brute-force reference in
//! `tests/reference/` on random nets mixing states (every state operator) with
//! `Starts`, `Ends`, `During`, `Seq`, `And`, `Within`, `Or`, `P` and `Count`, over
//! streams made for the states' corner cases (jitter at zone boundaries and
//! margins, exact-time ties, missing keys, unlocated reports). Detections are
//! compared with their `phase` and, on ends, `start`.

mod reference;

use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestCaseError};

use reference::against::compare_found;
use reference::gen_states::{gen_state_net, state_ev_specs, state_events};

fn config() -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES overrides, for longer runs.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        max_shrink_iters: 4096,
        // A fixed seed keeps CI repeatable; PROPTEST_RNG_SEED picks another.
        rng_seed: std::env::var("PROPTEST_RNG_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(RngSeed::Fixed(0x5747_e5), RngSeed::Fixed),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// States, the operators reading them and those they read, nested.
    #[test]
    #[ignore = "states are not built yet"]
    fn states_match_reference(
        choices in prop::collection::vec(any::<u32>(), 160),
        specs in state_ev_specs(50),
    ) {
        let net = gen_state_net(&choices);
        let events = state_events(&specs);
        // Nets whose occurrences explode (nested unrestricted pairings) are skipped.
        compare_found(&net, &events, 20_000).map_err(TestCaseError::fail)?;
    }
}

/// The generator's nets are well formed for the reference, and it runs them.
#[test]
fn generated_state_nets_run_in_the_reference() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let choices = prop::collection::vec(any::<u32>(), 160);
    let specs = state_ev_specs(50);
    let mut transitions = 0;
    for _ in 0..200 {
        let net = gen_state_net(&choices.new_tree(&mut runner).unwrap().current());
        let events = state_events(&specs.new_tree(&mut runner).unwrap().current());
        if let Some(found) = reference::Reference::run_found_bounded(&net, &events, 20_000) {
            transitions += found
                .values()
                .flatten()
                .filter(|f| f.phase.is_some())
                .count();
        }
    }
    assert!(transitions > 500, "only {transitions} transitions");
}

//! `Filter::assuming` against the whole filter, on the random filters and events of
//! the filter's tests.

use proptest::prelude::*;

use super::display::Quoted;
use super::tests::{event_strategy, expr_strategy, print, repair, STRS};
use super::*;
use crate::event::Value;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// For an event whose attribute has the required text, what is left after
    /// assuming it answers as the whole expression does: the test an atomic component
    /// filed under that value by the dispatch runs.
    #[test]
    fn assuming_a_required_text_changes_no_answer(
        x in expr_strategy(),
        events in prop::collection::vec(event_strategy(), 1..6),
        (attr, text) in (prop::sample::select(&["a", "s", "flag"][..]), prop::sample::select(STRS)),
        before in any::<bool>(),
    ) {
        let space = Space::Planar;
        let x = repair(x, space);
        let mut src = String::new();
        print(&x, &mut std::iter::empty(), &mut src);
        let required = format!("{attr} == {}", Quoted(text));
        let src = if before { format!("{required} && ({src})") } else { format!("({src}) && {required}") };
        let f = Filter::compile(&src, space).map_err(|e| TestCaseError::fail(format!("{src}: {e}")))?;
        let texts: Vec<(String, String)> = f
            .required_texts()
            .iter()
            .map(|(a, t)| (a.to_string(), t.to_string()))
            .collect();
        prop_assert!(texts.iter().any(|(a, t)| a == attr && t == text), "{src}: {texts:?}");
        for (a, t) in &texts {
            let left = f.assuming(a, t);
            for e in &events {
                // The event as the dispatch would reach the component with: its first
                // value of the attribute is the text.
                let mut e = e.clone();
                e.attrs.insert(0, (a.as_str().into(), Value::Str(t.as_str().into())));
                let want = f.matches(&e);
                let got = left.as_ref().is_none_or(|g| g.matches(&e));
                prop_assert_eq!(got, want, "{} assuming {} == {:?}, left {:?}, on {:?}", src, a, t, left.as_ref().map(ToString::to_string), e);
            }
        }
    }
}

#[test]
fn assuming_drops_one_conjunct_only() {
    let f = Filter::compile(
        r#"iff == "foe" && (kind == "vessel" && iff == "foe") && speed > 3"#,
        Space::Planar,
    )
    .unwrap();
    let left = f.assuming("iff", "foe").unwrap();
    assert_eq!(
        left.to_string(),
        r#"(((kind == "vessel") && (iff == "foe")) && (speed > 3))"#
    );
    let only = Filter::compile(r#"iff == "foe""#, Space::Planar).unwrap();
    assert!(only.assuming("iff", "foe").is_none());
    // Two different values of one attribute: the other still refuses every event.
    let both = Filter::compile(r#"iff == "foe" && iff == "friend""#, Space::Planar).unwrap();
    assert_eq!(
        both.assuming("iff", "foe").unwrap().to_string(),
        r#"(iff == "friend")"#
    );
}

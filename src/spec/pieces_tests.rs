//! The pieces against the one pass: the same net, or nothing.

use proptest::prelude::*;

use super::super::load::options;
use super::*;

/// The net parsed in one pass, as text to compare (`Debug` prints every float exactly).
fn one_pass(src: &str) -> Result<String, String> {
    options()
        .from_str::<NetSpec>(src)
        .map(|spec| format!("{spec:?}"))
        .map_err(|e| e.to_string())
}

fn in_pieces(src: &str, pieces: usize) -> Option<String> {
    parse(src, pieces, &options()).map(|spec| format!("{spec:?}"))
}

/// A net whose zones are `entries` joined by `sep`, with `events` before or after.
fn net(head: &str, entries: &[String], seps: &[&str], tail: &str, zones_first: bool) -> String {
    let mut zones = String::from("zones: {\n");
    for (i, e) in entries.iter().enumerate() {
        zones.push_str(e);
        if i + 1 < entries.len() {
            zones.push_str(seps[i % seps.len()]);
        }
    }
    zones.push_str(tail);
    zones.push_str("\n},\n");
    let events = "events: {\n  \"a\": Atomic(type: \"a\", when: \"kind == 'b, }'\"),\n  \
                  \"r\": Atomic(type: r#\"r\"\", {\"#),\n  \
                  \"w\": Within(of: \"a\", zones: [\"z0\"]),\n},\n";
    let (first, second) = if zones_first {
        (zones.as_str(), events)
    } else {
        (events, zones.as_str())
    };
    format!("{head}Net(\n  space: Planar,\n{first}{second}  outputs: [\"a\", \"w\"],\n)\n")
}

fn zone(i: usize) -> String {
    match i % 4 {
        0 => format!("  \"z{i}\": Circle(center: ({i}.5, -2.0), radius: 3.0)"),
        1 => format!("  \"z{i}\": Rect(min: (0.0, 1e-3), max: ({i}.0, 2.5))"),
        2 => format!("  \"z{i}\": Polygon([(0.0, 0.0), (1.0, 0.0), ({i}.0, 1.0)])"),
        _ => format!(
            "  \"z{i}\": MultiPolygon([(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, {i}.0)], holes: [])])"
        ),
    }
}

#[test]
fn a_plain_net_is_cut_between_entries_and_parses_as_in_one_pass() {
    let entries: Vec<String> = (0..40).map(zone).collect();
    let src = net("", &entries, &[",\n"], ",", true);
    for pieces in 2..=5 {
        let cuts = Cuts::find(&src, pieces).expect("a plain net is cut");
        assert_eq!(cuts.at.len(), pieces - 1, "{pieces} pieces");
        assert_eq!(&src[cuts.open..=cuts.open], "{");
        assert_eq!(&src[cuts.close..=cuts.close], "}");
        for &c in &cuts.at {
            assert_eq!(&src[c..c + 3], ",\n ", "a cut is a comma between entries");
        }
        assert_eq!(in_pieces(&src, pieces), Some(one_pass(&src).unwrap()));
    }
}

#[test]
fn what_the_scan_does_not_know_goes_to_one_pass() {
    let entries: Vec<String> = (0..6).map(zone).collect();
    let attribute = net("#![enable(implicit_some)]\n", &entries, &[",\n"], "", true);
    assert!(one_pass(&attribute).is_ok());
    assert_eq!(Cuts::find(&attribute, 2), None);
    // A name given in two pieces: one pass reports it, the pieces give up.
    let mut twice = entries.clone();
    twice[5] = zone(0);
    let twice = net("", &twice, &[",\n"], "", true);
    assert!(one_pass(&twice).is_err());
    assert!(Cuts::find(&twice, 2).is_some());
    assert_eq!(in_pieces(&twice, 2), None);
    // Two commas together: refused by one pass, never a cut (the map is one piece,
    // which neither reader takes).
    let doubled = net("", &entries, &[",,\n"], "", true);
    assert!(one_pass(&doubled).is_err());
    assert_eq!(Cuts::find(&doubled, 2).map(|c| c.at), Some(vec![]));
    assert_eq!(in_pieces(&doubled, 2), None);
}

#[test]
fn plain_entries_are_read_ahead_of_the_scan() {
    let entries: Vec<String> = (0..40).map(|i| zone(i * 4)).collect();
    for zones_first in [true, false] {
        let src = net("", &entries, &[",\n"], ",", zones_first);
        for pieces in 2..=4 {
            let ahead = ahead(&src, pieces, &options()).map(|spec| format!("{spec:?}"));
            assert_eq!(ahead, Some(one_pass(&src).unwrap()), "{pieces} pieces");
        }
    }
}

#[test]
fn a_guess_that_is_not_a_cut_goes_to_the_scan() {
    // The only comma that ends a line before a line starting with `"` is inside a
    // name, and then inside a line comment: guessed, and refused by the piece before.
    for inside in [
        "\"b,\n\": Circle(center: (2.0, 2.0), radius: 1.0),",
        "// b,\n\"b\": Circle(center: (2.0, 2.0), radius: 1.0),",
    ] {
        let src = format!(
            "Net(zones: {{ \"a\": Circle(center: (1.0, 1.0), radius: 1.0), {inside} \
             \"c\": Circle(center: (3.0, 3.0), radius: 1.0) }}, \
             events: {{ \"e\": Atomic(type: \"E\") }}, outputs: [\"e\"])"
        );
        let open = Cuts::open(&src).expect("the map is found");
        let guessed = guess(src.as_bytes(), open + 1).expect("a comma is guessed");
        assert_eq!(&src[guessed - 1..=guessed], "b,", "{src}");
        assert_eq!(
            crate::spec::plain::between(&src[open + 1..guessed]).map(|z| z.len()),
            None
        );
        assert_eq!(ahead(&src, 2, &options()).map(|s| format!("{s:?}")), None);
        assert_eq!(in_pieces(&src, 2), Some(one_pass(&src).unwrap()));
    }
    // Two commas at a guess: one pass refuses them, and so do the pieces.
    let entries: Vec<String> = (0..40).map(zone).collect();
    let doubled = net("", &entries, &[",\n", ",,\n"], "", true);
    assert!(one_pass(&doubled).is_err());
    for pieces in 2..=4 {
        assert_eq!(
            ahead(&doubled, pieces, &options()).map(|s| format!("{s:?}")),
            None
        );
        assert_eq!(in_pieces(&doubled, pieces), None);
    }
}

#[test]
fn a_net_of_a_megabyte_parses_in_pieces_through_spec_parse() {
    let entries: Vec<String> = (0..16_000).map(zone).collect();
    let src = net("// many zones\n", &entries, &[",\n"], ",", false);
    assert!(src.len() >= PARALLEL_BYTES, "{} bytes", src.len());
    assert!(in_pieces(&src, 2).is_some());
    let spec = crate::spec::parse("big.ron", &src).unwrap();
    assert_eq!(format!("{spec:?}"), one_pass(&src).unwrap());
}

/// Separators between entries, some of them wrong, with commas, braces and the word
/// `zones` inside comments.
const SEPS: &[&str] = &[
    ",\n",
    ",\n",
    ", // a note, \"zz\": Circle(center: (0.0, 0.0), radius: 1.0),\n",
    " /* x, { y */ ,",
    ", /* a /* b, */ c, } */ ",
    ",\n  // zones: {\n",
    ",,",
    " ",
    ", ,",
    ",\n  \"zz\": Circle(center: (0.0, 0.0), radius: 1.0),",
    ",\n  // a line comment that ends with a comma,\n",
    ",\n  \"a name on two lines,\n\": Circle(center: (0.0, 0.0), radius: 1.0),\n",
];

/// Entries beyond [`zone`]: names with commas, braces, escapes and accents, values
/// with comments inside, and broken ones.
fn odd(i: usize) -> String {
    match i % 8 {
        0 => format!("  \"a, }} {{ {i}\": Circle(center: (1.0, 1.0), radius: 1.0)"),
        1 => format!("  \"q\\\"{i}, é\": Rect(min: (0.0, 0.0), max: (1.0, 1.0))"),
        2 => format!("  \"c{i}\": Circle(/* r, ) */ center: (1.0, 1.0), radius: 1.0)"),
        3 => "  \"dup\": Circle(center: (1.0, 1.0), radius: 1.0)".to_owned(),
        4 => format!("  \"bad{i}\": Circle(center: (1.0, 1.0), radius: 1.0"),
        6 => format!("  \"g{i}\": GeoJson(path: r#\"a\"}}, b.json\"#, name: \"n\")"),
        7 => format!("  \"h{i}\": GeoJson(path: r\"dir\\\", name: \"x, }}\")"),
        _ => format!(
            "  \"s{i}\": Sector(center: (0.0, 0.0), radius: 2.0, from_deg: -10.0, to_deg: +1e1)"
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the text, the pieces give the one pass's net, or give up; they never
    /// accept what one pass refuses.
    #[test]
    fn pieces_give_the_one_pass_or_nothing(
        picks in proptest::collection::vec((0usize..10, any::<bool>()), 0..14),
        seps in proptest::collection::vec(0usize..SEPS.len(), 1..4),
        tail in 0usize..3,
        head in 0usize..3,
        zones_first in any::<bool>(),
    ) {
        let entries: Vec<String> = picks
            .iter()
            .enumerate()
            .map(|(i, &(k, plain))| if plain { zone(i + 10 * k) } else { odd(i + 10 * k) })
            .collect();
        let seps: Vec<&str> = seps.iter().map(|&s| SEPS[s]).collect();
        let tail = ["", ",", ",,"][tail];
        let head = ["", "// header, zones: {\n", "/* zones: { */\n"][head];
        let src = net(head, &entries, &seps, tail, zones_first);
        let whole = one_pass(&src);
        for pieces in 1..=4 {
            let cut = in_pieces(&src, pieces);
            match &whole {
                Ok(spec) => {
                    if let Some(cut) = cut {
                        prop_assert_eq!(&cut, spec);
                    }
                }
                Err(e) => prop_assert!(cut.is_none(), "one pass refuses ({e}), the pieces accept:\n{src}"),
            }
        }
    }

    /// A net of plain entries is always taken in pieces (one where there is one
    /// thread or one entry): the fast path.
    #[test]
    fn plain_nets_are_cut(n in 1usize..30, pieces in 1usize..5, zones_first in any::<bool>()) {
        let entries: Vec<String> = (0..n).map(zone).collect();
        let src = net("", &entries, &[",\n"], ",", zones_first);
        prop_assert_eq!(in_pieces(&src, pieces), Some(one_pass(&src).unwrap()));
    }
}

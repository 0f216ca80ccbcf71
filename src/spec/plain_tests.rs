//! The plain reader against `ron`: the same zones, or `None`.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::super::load::options;
use super::super::ZoneSpec;
use super::zones;

/// `text` as the inside of a `zones` map, read by `ron` (`Debug` prints every float
/// exactly).
fn by_ron(text: &str) -> Result<String, String> {
    options()
        .from_str::<BTreeMap<String, ZoneSpec>>(&format!("{{{text}}}"))
        .map(|z| format!("{:?}", z.into_iter().collect::<Vec<_>>()))
        .map_err(|e| e.to_string())
}

fn plain(text: &str) -> Option<String> {
    zones(text).map(|z| format!("{z:?}"))
}

/// Whenever the plain reader reads `text`, `ron` reads it to the same zones.
fn agrees(text: &str) -> Result<(), TestCaseError> {
    if let Some(mine) = plain(text) {
        prop_assert_eq!(Ok(mine), by_ron(text), "text: {}", text);
    }
    Ok(())
}

const PLAIN: &str = r#"
    "z0": Circle(center: (859.7829, 806.4672), radius: 0.2460),
    "z1": Sector(center: (603.2176, -262.3701), radius: 0.1984, from_deg: 47, to_deg: 137),
    "z2": Rect(min: (20.5997, 788.9626), max: (20.7375, 789.1004)),
    // a comment between entries
    "dock": Polygon([(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0),]),
    "lane" : Line ( points: [ (0, 0), (9e0, 9.5E-1) ] , width: 1e3, ),
    "empty": Polygon([]),
    "ünï code": Rect(max: (2.0, 2.0), min: (0.0, 0.0)),
"#;

#[test]
fn plain_entries_are_read_as_ron_reads_them() {
    let mine = plain(PLAIN).expect("plain entries are read without ron");
    assert_eq!(Ok(mine), by_ron(PLAIN));
    assert_eq!(zones(PLAIN).map(|z| z.len()), Some(7));
    assert_eq!(plain(""), Some("[]".to_owned()));
    assert_eq!(plain(" \n// only a comment\n"), Some("[]".to_owned()));
}

#[test]
fn anything_else_is_left_to_ron() {
    for text in [
        // Escapes, raw strings, block comments.
        r#""a\"b": Rect(min: (0, 0), max: (1, 1))"#,
        r#"r"a": Rect(min: (0, 0), max: (1, 1))"#,
        r#"/* c */ "a": Rect(min: (0, 0), max: (1, 1))"#,
        // Numbers ron reads otherwise, or that are not plain.
        r#""a": Circle(center: (1_0, 0), radius: 1)"#,
        r#""a": Circle(center: (+1, 0), radius: 1)"#,
        r#""a": Circle(center: (.5, 0), radius: 1)"#,
        r#""a": Circle(center: (1., 0), radius: 1)"#,
        r#""a": Circle(center: (1f64, 0), radius: 1)"#,
        r#""a": Circle(center: (inf, 0), radius: 1)"#,
        r#""a": Circle(center: (NaN, 0), radius: 1)"#,
        r#""a": Circle(center: (1e, 0), radius: 1)"#,
        // Optional fields, unknown and repeated fields, missing ones.
        r#""a": Circle(center: (0, 0), radius: 1, anchor: "e")"#,
        r#""a": Sector(center: (0, 0), radius: 1, from_deg: 0, to_deg: 9, heading: "h")"#,
        r#""a": Circle(center: (0, 0), radius: 1, radius: 2)"#,
        r#""a": Circle(center: (0, 0), radius: 1, width: 2)"#,
        r#""a": Circle(center: (0, 0))"#,
        // Other shapes, and shapes of another kind.
        r#""a": PolygonWithHoles(exterior: [(0, 0), (1, 0), (1, 1)])"#,
        r#""a": MultiPolygon([(exterior: [(0, 0), (1, 0), (1, 1)])])"#,
        r#""a": GeoJson(path: "x.geojson")"#,
        r#""a": Circle((0, 0), 1)"#,
        r#""a": Rect(min: (0, 0, 0), max: (1, 1))"#,
        // A name given twice, a missing comma, a comma too many, other whitespace.
        r#""a": Rect(min: (0, 0), max: (1, 1)), "a": Rect(min: (0, 0), max: (1, 1))"#,
        r#""a": Rect(min: (0, 0), max: (1, 1)) "b": Rect(min: (0, 0), max: (1, 1))"#,
        r#""a": Rect(min: (0, 0), max: (1, 1)),,"#,
        "\"a\":\u{a0}Rect(min: (0, 0), max: (1, 1))",
        "\"a\": Rect(min: (0, 0), max: (1, 1))\u{b}",
        // A comment to the end of the text, which would hide the map's `}`.
        "\"a\": Rect(min: (0, 0), max: (1, 1)) // end",
    ] {
        assert_eq!(plain(text), None, "{text}");
    }
}

#[test]
fn a_piece_between_cuts_has_no_comma_of_its_own_at_the_end() {
    let entry = r#""a": Rect(min: (0, 0), max: (1, 1))"#;
    assert_eq!(super::between(entry).map(|z| z.len()), Some(1));
    assert_eq!(super::between(&format!("{entry},")).map(|z| z.len()), None);
    assert_eq!(super::between(" ").map(|z| z.len()), None);
    assert_eq!(zones(&format!("{entry},")).map(|z| z.len()), Some(1));
}

#[test]
fn the_last_piece_ends_at_the_maps_brace() {
    let text = r#" "b": Circle(center: (0, 0), radius: 1), "a": Rect(min: (0, 0), max: (1, 1)),
    }, events: { "x": Atomic(type: "X") }"#;
    let (zones, end) = super::to_close(text).expect("read to the brace");
    assert_eq!(&text[end..=end], "}");
    assert_eq!(
        zones.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        super::to_close(r#""a": Rect(min: (0, 0), max: (1, 1))"#).map(|z| z.1),
        None
    );
    assert_eq!(super::to_close(" } ").map(|z| z.1), Some(1));
}

/// Whitespace, a `//` comment or nothing.
fn gap() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\n  ".to_owned()),
        Just("\t\r\n".to_owned()),
        Just(" // note\n".to_owned()),
        Just("/* block */".to_owned()),
        Just("\u{a0}".to_owned()),
    ]
}

/// Numbers plain and otherwise.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-1000i32..1000, 0u32..100000).prop_map(|(i, f)| format!("{i}.{f}")),
        2 => (-1000i32..1000).prop_map(|i| i.to_string()),
        1 => (1u32..99, -30i32..30).prop_map(|(m, e)| format!("{m}e{e}")),
        1 => (1u32..99, 0i32..30).prop_map(|(m, e)| format!("{m}.5E+{e}")),
        1 => prop::sample::select(vec![
            "1_000.5", "+3", ".5", "7.", "inf", "-inf", "NaN", "2f64", "1e", "--1", "1.2.3",
            "0x10", "1..2", "-0", "-0.0", "00012.50",
        ])
        .prop_map(str::to_owned),
    ]
}

fn pair() -> impl Strategy<Value = String> {
    (
        gap(),
        number(),
        gap(),
        number(),
        gap(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(a, x, b, y, c, trailing)| {
            format!("({a}{x}{b},{a}{y}{c}{})", if trailing { "," } else { "" })
        })
}

fn pairs() -> impl Strategy<Value = String> {
    (prop::collection::vec(pair(), 0..5), gap(), prop::bool::ANY).prop_map(|(ps, g, trailing)| {
        let mut s = format!("[{g}{}", ps.join(&format!(",{g}")));
        if trailing && !ps.is_empty() {
            s.push(',');
        }
        s.push(']');
        s
    })
}

/// Field `name` with a value of its kind, its colon spaced one way or another.
fn named(name: &'static str) -> BoxedStrategy<String> {
    let value = match name {
        "center" | "min" | "max" => pair().boxed(),
        "points" => pairs().boxed(),
        _ => number().boxed(),
    };
    (prop::sample::select(vec![": ", " :", ":"]), value)
        .prop_map(move |(colon, v)| format!("{name}{colon}{v}"))
        .boxed()
}

/// The fields of the plain kinds.
const FIELDS: &[&str] = &[
    "center", "radius", "from_deg", "to_deg", "min", "max", "points", "width",
];

/// A field, right or wrong for the kind it is given to.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(FIELDS).prop_flat_map(named),
        1 => Just("anchor: \"e\"".to_owned()),
        1 => Just("heading: Some(\"h\")".to_owned()),
        1 => Just("holes: []".to_owned()),
    ]
}

/// The fields each kind needs, in a plain form.
fn kind_fields(kind: usize) -> impl Strategy<Value = (&'static str, Vec<String>)> {
    let (name, fields): (&'static str, &[&'static str]) = match kind {
        0 => ("Circle", &["center", "radius"]),
        1 => ("Sector", &["center", "radius", "from_deg", "to_deg"]),
        2 => ("Rect", &["min", "max"]),
        _ => ("Line", &["points", "width"]),
    };
    let fields: Vec<BoxedStrategy<String>> = fields.iter().map(|&f| named(f)).collect();
    fields.prop_map(move |f| (name, f))
}

/// A zone: its kind's fields shuffled, sometimes one dropped, repeated or added; or
/// a polygon; or a kind that is not plain.
fn zone() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0usize..4).prop_flat_map(kind_fields).prop_flat_map(|(kind, fields)| {
            (Just(kind), Just(fields.clone()).prop_shuffle(), 0usize..8, field(), gap(), prop::bool::ANY)
        }).prop_map(|(kind, mut fields, edit, extra, g, trailing)| {
            match edit {
                0 => { fields.pop(); }
                1 => fields.push(extra),
                2 => { let f = fields[0].clone(); fields.push(f); }
                _ => {}
            }
            let mut s = format!("{kind}{g}({g}{}", fields.join(&format!(",{g}")));
            if trailing {
                s.push(',');
            }
            s.push_str(&g);
            s.push(')');
            s
        }),
        2 => (pairs(), gap()).prop_map(|(p, g)| format!("Polygon({g}{p}{g})")),
        1 => pairs().prop_map(|p| format!("PolygonWithHoles(exterior: {p})")),
        1 => pairs().prop_map(|p| format!("Polygon({p},)")),
    ]
}

fn entries() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["a", "b", "z10", "ü", "a b", "a\\\"b", "c"]);
    (
        prop::collection::vec((name, gap(), zone(), gap()), 0..6),
        prop::bool::ANY,
    )
        .prop_map(|(es, trailing)| {
            let mut s = es
                .iter()
                .map(|(n, g, z, h)| format!("{h}\"{n}\"{g}:{h}{z}{g}"))
                .collect::<Vec<_>>()
                .join(",");
            if trailing {
                s.push_str(",\n");
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn what_the_plain_reader_reads_ron_reads_the_same(text in entries()) {
        agrees(&text)?;
    }

    /// Bytes changed anywhere: still the same zones as `ron`'s, or `None`.
    #[test]
    fn mutated_text_is_read_the_same_or_left_to_ron(
        text in entries(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..3, prop::sample::select(
            vec!['(', ')', ',', ':', '"', '/', '.', '-', 'e', '0', '7', ' ', '\n', 'x', '[', ']', '_', '\\'],
        )), 1..4),
    ) {
        let mut chars: Vec<char> = text.chars().collect();
        for (at, how, c) in edits {
            let i = if chars.is_empty() { 0 } else { at.index(chars.len()) };
            match how {
                0 if !chars.is_empty() => { chars.remove(i); }
                1 if !chars.is_empty() => chars[i] = c,
                _ => chars.insert(i, c),
            }
        }
        agrees(&chars.into_iter().collect::<String>())?;
    }

    /// Zones in the form a generated net writes are read without `ron`.
    #[test]
    fn plain_zones_are_not_left_to_ron(
        zs in prop::collection::vec((0usize..4, -1e6f64..1e6, -1e6f64..1e6, 0.0f64..10.0, 0u32..360), 1..20),
    ) {
        let text: Vec<String> = zs.iter().enumerate().map(|(i, &(k, x, y, r, d))| match k {
            0 => format!("\"z{i}\": Circle(center: ({x:.4}, {y:.4}), radius: {r:.4})"),
            1 => format!("\"z{i}\": Sector(center: ({x:.4}, {y:.4}), radius: {r:.4}, from_deg: {d}, to_deg: {})", d + 90),
            2 => format!("\"z{i}\": Rect(min: ({x:.4}, {y:.4}), max: ({}, {}))", x + r, y + r),
            _ => format!("\"z{i}\": Polygon([({x}, {y}), ({}, {y}), ({x}, {})])", x + r, y + r),
        }).collect();
        let text = format!("\n  {},\n", text.join(",\n  "));
        let mine = plain(&text);
        prop_assert!(mine.is_some(), "left to ron: {}", text);
        prop_assert_eq!(Ok(mine.unwrap_or_default()), by_ron(&text));
    }
}

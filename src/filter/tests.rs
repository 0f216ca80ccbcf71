//! Unit tests of `when` expressions: evaluation, precedence, printing, error messages
//! with their offsets, and a property test against a reference evaluator.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::ast::CmpOp;
use super::display::Quoted;
use super::{Filter, MAX_DEPTH};
use crate::event::{Event, Id, Space, Timestamp, Value};

fn ev() -> Event {
    Event::new(7, "ferry", Timestamp::from_secs_f64(100.5).unwrap())
}

fn compile(src: &str) -> Filter {
    match Filter::compile(src, Space::Planar) {
        Ok(f) => f,
        Err(e) => panic!("{src:?} failed at {}: {}", e.offset, e.message),
    }
}

fn m(src: &str, e: &Event) -> bool {
    compile(src).matches(e)
}

fn err(src: &str, space: Space) -> (usize, String) {
    match Filter::compile(src, space) {
        Ok(f) => panic!("{src:?} compiled to {f}"),
        Err(e) => (e.offset, e.message),
    }
}

fn shown(src: &str) -> String {
    compile(src).to_string()
}

#[test]
fn number_operators() {
    let e = ev().with("speed", 12.5);
    for (src, want) in [
        ("speed == 12.5", true),
        ("speed == 12", false),
        ("speed != 12", true),
        ("speed != 12.5", false),
        ("speed < 13", true),
        ("speed < 12.5", false),
        ("speed <= 12.5", true),
        ("speed <= 12", false),
        ("speed > 12", true),
        ("speed > 12.5", false),
        ("speed >= 12.5", true),
        ("speed >= 13", false),
        ("speed > -3.5", true),
        ("speed < 1e3", true),
        ("speed < 1E1", false),
        ("speed == 125e-1", true),
        ("speed == .125e2", true),
        ("speed == 12.50", true),
    ] {
        assert_eq!(m(src, &e), want, "{src}");
    }
}

#[test]
fn literal_on_the_left() {
    let e = ev().with("speed", 12.5);
    assert!(m("10 < speed", &e));
    assert!(!m("10 > speed", &e));
    assert!(m("12.5 <= speed", &e));
    assert!(m("13 >= speed", &e));
    assert!(m("12.5 == speed", &e));
    assert!(m("1 != speed", &e));
    assert_eq!(shown("10 < speed"), "(speed > 10)");
    assert_eq!(shown("10 >= speed"), "(speed <= 10)");
}

#[test]
fn string_operators() {
    let e = ev().with("name", "bravo");
    for (src, want) in [
        (r#"name == "bravo""#, true),
        (r#"name != "bravo""#, false),
        (r#"name != "alpha""#, true),
        (r#"name < "charlie""#, true),
        (r#"name < "bravo""#, false),
        (r#"name <= "bravo""#, true),
        (r#"name > "b""#, true),
        (r#"name > "bravo ""#, false),
        (r#"name >= "bravo""#, true),
        (r#"name < "Z""#, false), // byte-wise: 'b' > 'Z'
        (r#""alpha" < name"#, true),
    ] {
        assert_eq!(m(src, &e), want, "{src}");
    }
    // Byte-wise, not by char: 'é' (0xC3 0xA9) sorts after 'z'.
    let e = ev().with("name", "é");
    assert!(m(r#"name > "z""#, &e));
}

#[test]
fn bool_operators_and_bare_fields() {
    let e = ev().with("iff", true).with("lost", false);
    assert!(m("iff == true", &e));
    assert!(!m("iff == false", &e));
    assert!(m("iff != false", &e));
    assert!(m("true == iff", &e));
    assert!(m("iff", &e));
    assert!(!m("lost", &e));
    assert!(m("!lost", &e));
    assert!(m("lost == false", &e));
    assert!(!m("missing", &e));
    assert!(m("!missing", &e));
    assert_eq!(shown("iff"), "(iff == true)");
    assert_eq!(shown("!iff"), "!(iff == true)");
}

#[test]
fn precedence_and_associativity() {
    let t = ev().with("t", true).with("f", false);
    // `||` below `&&`.
    assert!(m("t || f && f", &t));
    assert!(!m("(t || f) && f", &t));
    assert!(m("f && f || t", &t));
    // `!` binds tightest.
    assert!(!m("!t && f", &t));
    assert!(m("!f && t", &t));
    assert!(m("!t || t", &t));
    assert!(!m("!(t || t)", &t));
    assert!(m("!!t", &t));
    // Comparisons bind tighter than `&&`/`||`.
    let e = ev().with("a", 1.0).with("b", 2.0);
    assert!(m("a == 1 && b == 2", &e));
    assert!(m("a == 2 || b == 2", &e));
    assert!(m("!(a == 2) && !(b > 5)", &e));
    assert_eq!(
        shown("a == 1 || b == 2 && !c"),
        "((a == 1) || ((b == 2) && !(c == true)))"
    );
    assert_eq!(
        shown("a == 1 && b == 2 && c"),
        "(((a == 1) && (b == 2)) && (c == true))"
    );
    assert_eq!(
        shown("a || b || c && d"),
        "(((a == true) || (b == true)) || ((c == true) && (d == true)))"
    );
    assert_eq!(
        shown("a && (b && c)"),
        "((a == true) && ((b == true) && (c == true)))"
    );
    assert_eq!(shown("((((a))))"), "(a == true)");
}

#[test]
fn whitespace_anywhere() {
    let e = ev().with("speed", 20.0).with("iff", false);
    assert!(m("speed>10&&iff==false", &e));
    assert!(m(" \t\n( speed\n>\t10 )\r\n&&\n! iff ", &e));
    assert!(m("speed>-1", &e));
    assert!(m("speed!=-1", &e));
}

#[test]
fn missing_fields_and_type_mismatch_are_false() {
    let e = ev().with("speed", "fast").with("iff", 1.0);
    for src in [
        "nope == 1",
        "nope != 1",
        "nope < 1",
        r#"nope == "x""#,
        "nope == false",
        "nope != false",
        "speed > 10",
        "speed != 10",
        "speed == 10",
        "iff == true",
        "iff != true",
        r#"iff == "1""#,
        r#"iff != "1""#,
        "iff",
    ] {
        assert!(!m(src, &e), "{src}");
        // `!` negates the false comparison: the contract.
        assert!(m(&format!("!({src})"), &e), "!({src})");
    }
}

#[test]
fn contract_example() {
    let f = compile("speed > 10 && iff == false");
    assert!(f.matches(&ev().with("speed", 11.0).with("iff", false)));
    assert!(!f.matches(&ev().with("speed", 11.0).with("iff", true)));
    assert!(!f.matches(&ev().with("speed", 9.0).with("iff", false)));
    assert!(!f.matches(&ev().with("speed", 11.0)));
    assert!(!f.matches(&ev().with("iff", false)));
    assert_eq!(f.to_string(), "((speed > 10) && (iff == false))");
}

#[test]
fn builtin_id() {
    let int = ev();
    assert!(m("id == 7", &int));
    assert!(m("id == 7.0", &int));
    assert!(m("id >= 7", &int));
    assert!(m("id < 7.5", &int));
    assert!(!m(r#"id == "7""#, &int));
    assert!(!m(r#"id != "7""#, &int));
    let big = Event::new(Id::UInt(u64::MAX), "a", Timestamp::default());
    assert!(m("id == 18446744073709551615", &big));
    assert!(!m("id == 18446744073709551614", &big));
    assert!(m("id > 18446744073709551614", &big));
    assert!(m("id > 1e19", &big));
    // Exact for integers beyond 2^53, where f64 would confuse neighbours.
    let near = Event::new(9_007_199_254_740_993_i64, "a", Timestamp::default());
    assert!(m("id == 9007199254740993", &near));
    assert!(!m("id == 9007199254740992", &near));
    let neg = Event::new(-3, "a", Timestamp::default());
    assert!(m("id == -3", &neg));
    assert!(m("id < -2.5", &neg));
    let s = Event::new("ab", "a", Timestamp::default());
    assert!(m(r#"id == "ab""#, &s));
    assert!(m(r#"id < "b""#, &s));
    assert!(!m("id == 7", &s));
    assert!(!m("id != 7", &s));
    assert_eq!(
        shown("id == 18446744073709551615"),
        "(id == 18446744073709551615)"
    );
    assert_eq!(shown("id == 7.5"), "(id == 7.5)");
}

#[test]
fn builtin_time() {
    let e = ev(); // 100.5 s after the epoch
    assert!(m("time == 100.5", &e));
    assert!(m("time > 100", &e));
    assert!(m("time < 1e3", &e));
    assert!(m(r#"time == "1970-01-01T00:01:40.5Z""#, &e));
    assert!(m(r#"time > "1970-01-01T00:01:40Z""#, &e));
    assert!(!m(r#"time < "1970-01-01T01:01:40.5+01:00""#, &e));
    assert!(m(r#"time == "1970-01-01T01:01:40.5+01:00""#, &e));
    assert!(m(r#""1970-01-01T00:01:40Z" < time"#, &e));
    let later = Event::new(1, "a", Timestamp::from_secs_f64(1_714_564_800.25).unwrap());
    assert!(m(r#"time == "2024-05-01T12:00:00.25Z""#, &later));
    assert!(m(
        r#"time >= "2024-05-01T12:00:00Z" && time < "2024-05-02T00:00:00Z""#,
        &later
    ));
    assert_eq!(
        shown(r#"time >= "2024-05-01T12:00:00Z""#),
        r#"(time >= "2024-05-01T12:00:00Z")"#
    );
}

#[test]
fn builtin_type() {
    let e = ev();
    assert!(m(r#"type == "ferry""#, &e));
    assert!(!m(r#"type == "cargo""#, &e));
    assert!(m(r#"type != "cargo""#, &e));
    assert!(m(r#"type > "cargo""#, &e));
}

#[test]
fn builtin_location_per_space() {
    let e = ev().at(3.0, 4.0).with("lon", 99.0).with("x_", 1.0);
    let planar = |s: &str| Filter::compile(s, Space::Planar).unwrap().matches(&e);
    let wgs = |s: &str| Filter::compile(s, Space::Wgs84).unwrap().matches(&e);
    assert!(planar("x == 3 && y == 4"));
    assert!(planar("x < 3.5 && 3.5 < y"));
    assert!(planar("lon == 99")); // an attribute in a planar net
    assert!(!planar("lat == 4"));
    assert!(wgs("lon == 3 && lat == 4"));
    assert!(!wgs("lon == 99"));
    assert!(!wgs("x == 3")); // an attribute in a WGS84 net, missing here
    assert!(wgs("!(x == 3)"));
    assert!(planar("x_ == 1"));
    // Missing location: missing field.
    let nowhere = ev();
    let f = Filter::compile("x > -1000", Space::Planar).unwrap();
    assert!(!f.matches(&nowhere));
    let f = Filter::compile("!(lat > -1000)", Space::Wgs84).unwrap();
    assert!(f.matches(&nowhere));
    assert_eq!(
        Filter::compile("lon > 1 && lat < 2", Space::Wgs84)
            .unwrap()
            .to_string(),
        "((lon > 1) && (lat < 2))"
    );
}

#[test]
fn string_escapes() {
    let e = ev().with("s", r#"say "hi" \o/"#);
    assert!(m(r#"s == "say \"hi\" \\o/""#, &e));
    assert_eq!(
        shown(r#"s == "say \"hi\" \\o/""#),
        r#"(s == "say \"hi\" \\o/")"#
    );
    assert!(m(r#"s != """#, &e));
    let e = ev().with("s", "");
    assert!(m(r#"s == """#, &e));
    let e = ev().with("s", "ünï && )");
    assert!(m(r#"s == "ünï && )""#, &e));
}

#[test]
fn fields_lists_attributes_once() {
    let f = compile(
        r#"speed > 1 && (iff || !(speed < 3)) && id == 2 && type == "a" && x > 0 && zone == "b""#,
    );
    assert_eq!(f.fields().collect::<Vec<_>>(), ["speed", "iff", "zone"]);
}

#[test]
fn errors_with_offsets() {
    let p = Space::Planar;
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "empty expression"),
        ("   ", 3, "empty expression"),
        (
            "speed >",
            7,
            "expected a field or a literal after `>`, found the end",
        ),
        (
            "speed > )",
            8,
            "expected a field or a literal after `>`, found `)`",
        ),
        (
            "speed 10",
            6,
            "expected a comparison operator after `speed`",
        ),
        ("10", 2, "expected a comparison operator after `10`"),
        (
            "true && a",
            5,
            "expected a comparison operator after `true`",
        ),
        (r#"a == "abc"#, 5, "unterminated string"),
        (r#"a == "abc\"#, 5, "unterminated string"),
        (
            r#"a == "x\n""#,
            7,
            r#"unknown escape `\n` in string; only `\"` and `\\` are allowed"#,
        ),
        ("flag < true", 5, "`<` cannot compare booleans"),
        ("false >= flag", 6, "`>=` cannot compare booleans"),
        ("a == 1)", 6, "unexpected `)`"),
        (")", 0, "unexpected `)`"),
        ("()", 1, "unexpected `)`"),
        ("(a == 1", 0, "unclosed `(`: expected `)`"),
        ("(a == 1 b", 8, "expected `&&`, `||` or `)` before `b`"),
        ("a == 1 b", 7, "expected `&&` or `||` before `b`"),
        ("a = 1", 2, "`=` is not an operator; use `==`"),
        ("a & b", 2, "`&` is not an operator; use `&&`"),
        ("a | b", 2, "`|` is not an operator; use `||`"),
        ("a == 'x'", 5, "strings are written in double quotes"),
        ("a == 1 && ", 10, "expected an expression after `&&`"),
        ("a == 1 || || b", 10, "unexpected `||`"),
        ("&& a", 0, "unexpected `&&`"),
        ("> 3", 0, "expected a field or a literal before `>`"),
        ("1 < 2", 0, "expected a field on one side of `<`"),
        (
            "a < b",
            4,
            "cannot compare field `a` with field `b`; compare a field with a literal",
        ),
        (
            "a < 1 < 2",
            6,
            "unexpected `<`: comparisons cannot be chained; join them with `&&`",
        ),
        (
            "!a > 1",
            3,
            "`!` binds tighter than `>`; to negate a comparison write `!(a > b)`",
        ),
        (
            "!(a) > 1",
            5,
            "`!` binds tighter than `>`; to negate a comparison write `!(a > b)`",
        ),
        (
            "(a) > 1",
            4,
            "`>` cannot compare a parenthesised expression; compare a field with a literal",
        ),
        ("!1", 1, "expected a field or `(` after `!`, found `1`"),
        ("!", 1, "expected a field or `(` after `!`, found the end"),
        ("a == @", 5, "unexpected `@`"),
        ("a == é", 5, "unexpected `é`"),
        ("a == -", 5, "unexpected `-`"),
        ("a == .", 5, "unexpected `.`"),
        ("a == 1x", 5, "invalid number `1x`"),
        ("a == 1.2.3", 5, "invalid number `1.2.3`"),
        ("a == 1e", 5, "invalid number `1e`"),
        ("a == 1e999", 5, "number `1e999` is out of range"),
        ("a.b == 1", 1, "unexpected `.`"),
        (
            r#"time == "yesterday""#,
            8,
            r#"expected an RFC 3339 time such as "2024-05-01T12:00:00Z", found "yesterday""#,
        ),
        (
            r#"time == "2024-05-01""#,
            8,
            r#"expected an RFC 3339 time such as "2024-05-01T12:00:00Z", found "2024-05-01""#,
        ),
        (
            "time == true",
            8,
            "`time` is a number or an RFC 3339 string, not a boolean",
        ),
        (
            "time",
            0,
            "`time` is a number or an RFC 3339 string, not a boolean",
        ),
        ("type == 3", 8, "`type` is a string, not a number"),
        (
            "id == false",
            6,
            "`id` is a number or a string, not a boolean",
        ),
        ("id", 0, "`id` is a number or a string, not a boolean"),
        (r#"x == "a""#, 5, "`x` is a number, not a string"),
        ("y != true", 5, "`y` is a number, not a boolean"),
    ];
    for (src, offset, message) in cases {
        assert_eq!(err(src, p), (*offset, message.to_string()), "{src:?}");
    }
    assert_eq!(
        err("lat", Space::Wgs84),
        (0, "`lat` is a number, not a boolean".into())
    );
    assert!(Filter::compile("lat", Space::Planar).is_ok());
    assert!(Filter::compile(r#"x == "a""#, Space::Wgs84).is_ok());
    let e = Filter::compile("a = 1", p).unwrap_err();
    assert_eq!(e.to_string(), "`=` is not an operator; use `==`");
}

#[test]
fn nesting_is_bounded_and_long_chains_are_fine() {
    let deep = format!("{}a{}", "(".repeat(200), ")".repeat(200));
    let (_, msg) = err(&deep, Space::Planar);
    assert!(msg.starts_with("expression nested too deeply"), "{msg}");
    let nots = format!("{}a", "!".repeat(200));
    let (_, msg) = err(&nots, Space::Planar);
    assert!(msg.starts_with("expression nested too deeply"), "{msg}");
    let ok = format!(
        "{}a{}",
        "(".repeat(MAX_DEPTH - 1),
        ")".repeat(MAX_DEPTH - 1)
    );
    assert!(m(&ok, &ev().with("a", true)));
    let chain = vec!["a == 1"; 100_000].join(" && ");
    let f = compile(&chain);
    assert!(f.matches(&ev().with("a", 1.0)));
    assert!(!f.matches(&ev()));
    let chain = vec!["a == 1"; 100_000].join(" || ");
    assert!(compile(&chain).matches(&ev().with("a", 1.0)));
}

#[test]
fn display_round_trips() {
    for src in [
        "speed > 10 && iff == false",
        r#"!(a == "x\"y") || b <= -1e-7 && c >= 1e300 || !!d"#,
        "id == 5 && id != 5.5 && time > 1.5",
        r#"type == "ferry" && time < "2024-01-01T00:00:00Z" || x > 0 && y < 0"#,
        "a == -0",
        "a < 123456789012345678",
    ] {
        let f = compile(src);
        let g = compile(&f.to_string());
        assert_eq!(f.to_string(), g.to_string(), "{src}");
    }
}

// ---- Property test: random trees, printed, compiled, against a reference evaluator.

const FIELDS: &[&str] = &[
    "a", "b", "s", "flag", "id", "time", "type", "x", "y", "lon", "lat",
];
const NUMS: &[f64] = &[-2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 10.0, 1000.0];
pub(super) const STRS: &[&str] = &[
    "",
    "a",
    "b",
    "ab",
    "A",
    "q\"x",
    "back\\slash",
    "ferry",
    "cargo",
];
/// Time literals as RFC 3339 text, with their seconds.
const TIMES: &[(&str, f64)] = &[
    ("1970-01-01T00:00:10Z", 10.0),
    ("1970-01-01T00:00:00.5Z", 0.5),
    ("1969-12-31T23:59:59Z", -1.0),
    ("1970-01-01T01:00:00+01:00", 0.0),
];
const OPS: &[CmpOp] = &[
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

#[derive(Clone, Debug)]
pub(super) enum RLit {
    Num(f64, bool),
    Str(String),
    Time(usize),
    Bool(bool),
}

#[derive(Clone, Debug)]
pub(super) enum RExpr {
    Cmp {
        field: &'static str,
        op: CmpOp,
        lit: RLit,
        flipped: bool,
    },
    Bare(&'static str),
    Not(Box<RExpr>),
    And(Box<RExpr>, Box<RExpr>),
    Or(Box<RExpr>, Box<RExpr>),
    Paren(Box<RExpr>),
}

#[derive(Clone, Debug, PartialEq)]
enum RVal {
    Num(f64),
    Str(String),
    Bool(bool),
}

fn lit_strategy() -> impl Strategy<Value = RLit> {
    prop_oneof![
        (prop::sample::select(NUMS), any::<bool>()).prop_map(|(n, e)| RLit::Num(n, e)),
        prop::sample::select(STRS).prop_map(|s| RLit::Str(s.to_owned())),
        (0..TIMES.len()).prop_map(RLit::Time),
        any::<bool>().prop_map(RLit::Bool),
    ]
}

pub(super) fn expr_strategy() -> impl Strategy<Value = RExpr> {
    let leaf = prop_oneof![
        4 => (
            prop::sample::select(FIELDS),
            prop::sample::select(OPS),
            lit_strategy(),
            any::<bool>()
        )
            .prop_map(|(field, op, lit, flipped)| RExpr::Cmp {
                field,
                op,
                lit,
                flipped
            }),
        1 => prop::sample::select(FIELDS).prop_map(RExpr::Bare),
    ];
    leaf.prop_recursive(5, 40, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| RExpr::Not(Box::new(e))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| RExpr::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| RExpr::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|e| RExpr::Paren(Box::new(e))),
        ]
    })
}

fn val_strategy() -> impl Strategy<Value = RVal> {
    prop_oneof![
        prop::sample::select(NUMS).prop_map(RVal::Num),
        prop::sample::select(STRS).prop_map(|s| RVal::Str(s.to_owned())),
        any::<bool>().prop_map(RVal::Bool),
    ]
}

pub(super) fn event_strategy() -> impl Strategy<Value = Event> {
    let id = prop_oneof![
        (-3i64..4).prop_map(Id::Int),
        (0u64..4).prop_map(Id::UInt),
        prop::sample::select(STRS).prop_map(Id::from),
    ];
    let attrs = prop::collection::vec(
        (
            prop::sample::select(&["a", "b", "s", "flag", "lon", "lat", "x"][..]),
            val_strategy(),
        ),
        0..6,
    );
    (
        id,
        prop::sample::select(STRS),
        prop::sample::select(&[-1.0, 0.0, 0.5, 10.0, 11.25][..]),
        prop::option::of((prop::sample::select(NUMS), prop::sample::select(NUMS))),
        attrs,
    )
        .prop_map(|(id, kind, t, loc, attrs)| {
            let mut e = Event::new(id, kind, Timestamp::from_secs_f64(t).unwrap());
            if let Some((x, y)) = loc {
                e = e.at(x, y);
            }
            for (k, v) in attrs {
                e = e.with(
                    k,
                    match v {
                        RVal::Num(n) => Value::Num(n),
                        RVal::Str(s) => Value::Str(s.into()),
                        RVal::Bool(b) => Value::Bool(b),
                    },
                );
            }
            e
        })
}

/// Prints a literal as source text.
fn lit_src(l: &RLit) -> String {
    match l {
        RLit::Num(n, false) => format!("{n}"),
        RLit::Num(n, true) => format!("{n:e}"),
        RLit::Str(s) => Quoted(s).to_string(),
        RLit::Time(i) => Quoted(TIMES[*i].0).to_string(),
        RLit::Bool(b) => b.to_string(),
    }
}

/// Binding strength, for printing with as few parentheses as the grammar needs.
fn prec(e: &RExpr) -> u8 {
    match e {
        RExpr::Or(..) => 1,
        RExpr::And(..) => 2,
        RExpr::Not(_) => 3,
        RExpr::Cmp { .. } => 4,
        RExpr::Bare(_) | RExpr::Paren(_) => 5,
    }
}

/// Prints `e` with minimal parentheses, taking whitespace from `ws` in turn.
pub(super) fn print(e: &RExpr, ws: &mut impl Iterator<Item = &'static str>, out: &mut String) {
    let mut w = |out: &mut String| out.push_str(ws.next().unwrap_or(" "));
    let sub =
        |c: &RExpr, paren: bool, out: &mut String, ws: &mut dyn Iterator<Item = &'static str>| {
            let mut ws = ws;
            if paren {
                out.push('(');
                out.push_str(ws.next().unwrap_or(""));
            }
            print(c, &mut ws, out);
            if paren {
                out.push_str(ws.next().unwrap_or(""));
                out.push(')');
            }
        };
    match e {
        RExpr::Cmp {
            field,
            op,
            lit,
            flipped,
        } => {
            let (l, o, r) = if *flipped {
                (lit_src(lit), op.flip(), field.to_string())
            } else {
                (field.to_string(), *op, lit_src(lit))
            };
            out.push_str(&l);
            w(out);
            out.push_str(o.as_str());
            w(out);
            out.push_str(&r);
        }
        RExpr::Bare(f) => out.push_str(f),
        RExpr::Not(c) => {
            out.push('!');
            w(out);
            sub(c, prec(c) < 5 && !matches!(**c, RExpr::Not(_)), out, ws);
        }
        RExpr::And(a, b) | RExpr::Or(a, b) => {
            let p = prec(e);
            sub(a, prec(a) < p, out, ws);
            out.push_str(ws.next().unwrap_or(" "));
            out.push_str(if p == 1 { "||" } else { "&&" });
            out.push_str(ws.next().unwrap_or(" "));
            sub(b, prec(b) <= p, out, ws);
        }
        RExpr::Paren(c) => sub(c, true, out, ws),
    }
}

/// Would the definition reject `field op lit` at compile time?
fn cmp_is_error(field: &str, op: CmpOp, lit: &RLit, space: Space) -> bool {
    let (xn, yn) = space.axis_names();
    if op.is_ordering() && matches!(lit, RLit::Bool(_)) {
        return true;
    }
    match field {
        "id" => matches!(lit, RLit::Bool(_)),
        "time" => matches!(lit, RLit::Bool(_)) || matches!(lit, RLit::Str(_)),
        "type" => !matches!(lit, RLit::Str(_) | RLit::Time(_)),
        f if f == xn || f == yn => !matches!(lit, RLit::Num(..)),
        _ => false,
    }
}

fn is_error(e: &RExpr, space: Space) -> bool {
    match e {
        RExpr::Cmp { field, op, lit, .. } => cmp_is_error(field, *op, lit, space),
        RExpr::Bare(f) => cmp_is_error(f, CmpOp::Eq, &RLit::Bool(true), space),
        RExpr::Not(c) | RExpr::Paren(c) => is_error(c, space),
        RExpr::And(a, b) | RExpr::Or(a, b) => is_error(a, space) || is_error(b, space),
    }
}

/// `x` with every comparison that would not compile replaced by one that does.
pub(super) fn repair(x: RExpr, space: Space) -> RExpr {
    let fix = |field: &'static str, op: CmpOp, lit: RLit, flipped: bool| {
        let op = match (op, &lit) {
            (CmpOp::Lt | CmpOp::Le, RLit::Bool(_)) => CmpOp::Eq,
            (CmpOp::Gt | CmpOp::Ge, RLit::Bool(_)) => CmpOp::Ne,
            _ => op,
        };
        let lit = if cmp_is_error(field, op, &lit, space) {
            match field {
                "time" => RLit::Time(usize::from(flipped)),
                "type" => RLit::Str("ferry".to_owned()),
                _ => RLit::Num(if flipped { 0.5 } else { 1.0 }, false),
            }
        } else {
            lit
        };
        RExpr::Cmp {
            field,
            op,
            lit,
            flipped,
        }
    };
    match x {
        RExpr::Cmp {
            field,
            op,
            lit,
            flipped,
        } => fix(field, op, lit, flipped),
        RExpr::Bare(f) if cmp_is_error(f, CmpOp::Eq, &RLit::Bool(true), space) => {
            fix(f, CmpOp::Eq, RLit::Bool(true), false)
        }
        RExpr::Bare(f) => RExpr::Bare(f),
        RExpr::Not(c) => RExpr::Not(Box::new(repair(*c, space))),
        RExpr::Paren(c) => RExpr::Paren(Box::new(repair(*c, space))),
        RExpr::And(a, b) => RExpr::And(Box::new(repair(*a, space)), Box::new(repair(*b, space))),
        RExpr::Or(a, b) => RExpr::Or(Box::new(repair(*a, space)), Box::new(repair(*b, space))),
    }
}

/// The field's value per the definition, `None` if missing.
fn field_value(e: &Event, field: &str, space: Space) -> Option<RVal> {
    let (xn, yn) = space.axis_names();
    match field {
        "id" => Some(match &e.id {
            Id::Int(i) => RVal::Num(*i as f64),
            Id::UInt(u) => RVal::Num(*u as f64),
            Id::Str(s) => RVal::Str(s.to_string()),
        }),
        "time" => Some(RVal::Num(e.time.micros() as f64 / 1e6)),
        "type" => Some(RVal::Str(e.kind.to_string())),
        f if f == xn => e.location.map(|p| RVal::Num(p.x)),
        f if f == yn => e.location.map(|p| RVal::Num(p.y)),
        f => e.attr(f).map(|v| match v {
            Value::Num(n) => RVal::Num(*n),
            Value::Str(s) => RVal::Str(s.to_string()),
            Value::Bool(b) => RVal::Bool(*b),
        }),
    }
}

fn reference(x: &RExpr, e: &Event, space: Space) -> bool {
    match x {
        RExpr::Cmp { field, op, lit, .. } => ref_cmp(e, field, *op, lit, space),
        RExpr::Bare(f) => ref_cmp(e, f, CmpOp::Eq, &RLit::Bool(true), space),
        RExpr::Not(c) => !reference(c, e, space),
        RExpr::Paren(c) => reference(c, e, space),
        RExpr::And(a, b) => reference(a, e, space) && reference(b, e, space),
        RExpr::Or(a, b) => reference(a, e, space) || reference(b, e, space),
    }
}

fn ref_cmp(e: &Event, field: &str, op: CmpOp, lit: &RLit, space: Space) -> bool {
    let lit = match lit {
        RLit::Num(n, _) => RVal::Num(*n),
        RLit::Str(s) => RVal::Str(s.clone()),
        RLit::Time(i) if field == "time" => RVal::Num(TIMES[*i].1),
        RLit::Time(i) => RVal::Str(TIMES[*i].0.to_owned()),
        RLit::Bool(b) => RVal::Bool(*b),
    };
    let Some(v) = field_value(e, field, space) else {
        return false;
    };
    let ord = match (&v, &lit) {
        (RVal::Num(a), RVal::Num(b)) => a.partial_cmp(b),
        (RVal::Str(a), RVal::Str(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        (RVal::Bool(a), RVal::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match ord {
        None => false,
        Some(o) => match op {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn compiled_matches_reference(
        x in expr_strategy(),
        events in prop::collection::vec(event_strategy(), 1..6),
        wgs in any::<bool>(),
        ws in prop::collection::vec(prop::sample::select(&["", " ", "  ", "\t", "\n "][..]), 0..64),
    ) {
        let space = if wgs { Space::Wgs84 } else { Space::Planar };
        let mut src = String::new();
        print(&x, &mut ws.iter().copied(), &mut src);
        let compiled = Filter::compile(&src, space);
        if is_error(&x, space) {
            prop_assert!(compiled.is_err(), "{} should not compile", src);
        } else {
            prop_assert!(compiled.is_ok(), "{} should compile: {:?}", src, compiled);
        }
        // Evaluate a version of the tree that compiles.
        let x = repair(x, space);
        prop_assert!(!is_error(&x, space));
        let mut src = String::new();
        print(&x, &mut ws.iter().copied(), &mut src);
        let compiled = Filter::compile(&src, space);
        let f = match compiled {
            Ok(f) => f,
            Err(e) => return Err(TestCaseError::fail(format!("{src:?}: {} at {}", e.message, e.offset))),
        };
        let again = Filter::compile(&f.to_string(), space).map_err(|e| TestCaseError::fail(format!("{f}: {e}")))?;
        prop_assert_eq!(again.to_string(), f.to_string());
        for e in &events {
            let want = reference(&x, e, space);
            prop_assert_eq!(f.matches(e), want, "{} on {:?}", src, e);
            prop_assert_eq!(f.matches_by_tree(e), want, "{} on {:?}", src, e);
            prop_assert_eq!(again.matches(e), want, "{} on {:?}", f, e);
        }
    }

    #[test]
    fn never_panics(src in "[a-z0-9 ()!=<>&|\"\\\\.eE+-]{0,40}") {
        let _ = Filter::compile(&src, Space::Planar).map(|f| f.matches(&ev()));
    }

    #[test]
    fn never_panics_on_any_text(src in any::<String>()) {
        if let Err(e) = Filter::compile(&src, Space::Wgs84) {
            prop_assert!(e.offset <= src.len());
            prop_assert!(src.is_char_boundary(e.offset));
        }
    }
}

fn bearings(a: f64, b: f64) -> Event {
    let mut e = ev();
    e.attrs = vec![
        ("COG".into(), Value::Num(a)),
        ("Heading".into(), Value::Num(b)),
    ];
    e
}

#[test]
fn angle_diff_is_the_smaller_angle_between_bearings() {
    let d = "angle_diff(COG, Heading) > 40";
    // 350° and 20° are 30° apart across north, not 330°.
    assert!(!m(d, &bearings(350.0, 20.0)));
    assert!(m(d, &bearings(350.0, 31.0)));
    // MarineCadastre writes some courses as negative: -60 is 300.
    assert!(!m(d, &bearings(-60.0, 290.0)));
    assert!(m(d, &bearings(-146.0, 60.0)));
    // Exactly 40 is not more than 40; opposite bearings are 180 apart.
    assert!(!m(d, &bearings(100.0, 60.0)));
    assert!(m("angle_diff(COG, Heading) == 180", &bearings(90.0, 270.0)));
    // A missing or non-numeric bearing makes the comparison false.
    let mut e = ev();
    e.attrs = vec![("COG".into(), Value::Num(10.0))];
    assert!(!m(d, &e));
    assert!(m(&format!("!({d})"), &e));
    e.attrs.push(("Heading".into(), Value::Str("n/a".into())));
    assert!(!m(d, &e));
    assert_eq!(shown(d), "(angle_diff(COG, Heading) > 40)");
    assert_eq!(shown(&shown(d)), shown(d));
    let f = compile("SOG > 2.7 && angle_diff(COG, Heading) > 40");
    assert_eq!(f.fields().collect::<Vec<_>>(), ["SOG", "COG", "Heading"]);
}

#[test]
fn angle_diff_errors() {
    let cases = [
        ("speed(a, b) > 1", 0, "unknown function `speed`"),
        (
            "angle_diff(a b) > 1",
            13,
            "expected `,` after `a`, found `b`",
        ),
        (
            "angle_diff(a, 1) > 1",
            14,
            "expected an attribute after `,`, found `1`",
        ),
        ("angle_diff(a, b, c) > 1", 15, "expected `)` after `b`"),
        (
            "angle_diff(a, b)",
            16,
            "expected a comparison operator after `angle_diff(…)`",
        ),
        (
            "angle_diff(a, b) > \"x\"",
            19,
            "expected a number after `>`, found `\"x\"`",
        ),
        ("angle_diff(time, b) > 1", 11, "`time` is not an attribute"),
        (
            "40 < angle_diff(a, b)",
            5,
            "write the function first: `angle_diff(…) > 40`",
        ),
        (
            "angle_diff(a, b) > 1 > 2",
            21,
            "comparisons cannot be chained",
        ),
        ("a, b", 1, "expected `&&` or `||` before `,`"),
    ];
    for (src, at, msg) in cases {
        let (offset, message) = err(src, Space::Planar);
        assert!(message.contains(msg), "{src:?}: {message:?} lacks {msg:?}");
        assert_eq!(offset, at, "{src:?}: {message}");
    }
}

proptest! {
    #[test]
    fn angle_diff_matches_the_shortest_turn(a in -720.0f64..720.0, b in -720.0f64..720.0) {
        // The shortest turn from b to a, searched over whole turns.
        let brute = (-4..=4)
            .map(|k| (a - b + 360.0 * f64::from(k)).abs())
            .fold(f64::INFINITY, f64::min);
        let d = super::eval::angle_diff(a, b);
        prop_assert!((0.0..=180.0).contains(&d));
        prop_assert!((d - brute).abs() < 1e-9, "{a} {b}: {d} vs {brute}");
    }
}

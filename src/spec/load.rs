//! Parsing a net file into a [`NetSpec`], and finding where things are in its text.

use super::NetSpec;
use super::Problem;

/// Parses RON text; a syntax or shape error becomes one [`Problem`] at the parser's position.
pub(crate) fn parse(file: &str, src: &str) -> Result<NetSpec, Problem> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<NetSpec>(src)
        .map_err(|e| Problem {
            file: file.to_owned(),
            line: e.span.start.line,
            col: e.span.start.col,
            message: e.code.to_string(),
        })
}

/// The 1-based line and column of a path of quoted names in `src`: the first
/// `"a"` that is followed by `:` (an entry's key), then the first `"b"` after it, and so
/// on. Used to point semantic errors (unknown names, bad values) at the text that
/// causes them. Falls back to the last position found.
pub(crate) fn locate(src: &str, path: &[&str]) -> (usize, usize) {
    let mut at = 0;
    for (i, name) in path.iter().enumerate() {
        let needle = format!("{name:?}");
        let mut from = at;
        let found = loop {
            let Some(rel) = src[from..].find(&needle) else {
                break None;
            };
            let pos = from + rel;
            let after = src[pos + needle.len()..].trim_start();
            // The first element of a path is an entry key: it must be followed by `:`.
            if i > 0 || after.starts_with(':') {
                break Some(pos);
            }
            from = pos + needle.len();
        };
        match found {
            Some(pos) => at = pos,
            None => break,
        }
    }
    line_col(src, at)
}

/// The 1-based line and column (in characters) of byte offset `at`.
pub(crate) fn line_col(src: &str, at: usize) -> (usize, usize) {
    let at = at.min(src.len());
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_entry_key_then_name_inside_it() {
        let src = "events: {\n  \"b\": Or(of: [\"a\"]),\n  \"a\": Atomic(type: \"a\"),\n  \"c\": Seq(of: [\"a\", \"zz\"]),\n}";
        assert_eq!(locate(src, &["a"]), (3, 3));
        assert_eq!(locate(src, &["c", "zz"]), (4, 22));
        assert_eq!(locate(src, &["b"]), (2, 3));
    }

    #[test]
    fn parse_error_has_position() {
        let err = parse(
            "n.ron",
            "Net(\n  events: {},\n  outputs: [],\n  bogus: 1,\n)",
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err:?}");
        assert!(err.message.contains("bogus"), "{}", err.message);
    }
}

//! Parsing a net file into a [`NetSpec`], and finding where things are in its text.

use std::collections::HashMap;

use super::NetSpec;
use super::Problem;

/// How every net is read: `Some(…)` may be left out around an optional value.
pub(super) fn options() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

/// Parses RON text; a syntax or shape error becomes one [`Problem`] at the parser's position.
///
/// A net of a megabyte or more (a hundred thousand zones, say) has its zones parsed on
/// as many threads as the machine runs at once, plain entries without `ron`, with the
/// same result.
pub(crate) fn parse(file: &str, src: &str) -> Result<NetSpec, Problem> {
    let options = options();
    if src.len() >= super::pieces::PARALLEL_BYTES {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        if let Some(spec) = super::pieces::parse(src, threads, &options) {
            return Ok(spec);
        }
    }
    options.from_str::<NetSpec>(src).map_err(|e| {
        let (line, col) = (e.span.start.line, e.span.start.col);
        let message = match &e.code {
            ron::Error::Message(m) => {
                let at = SourceMap::new(src).offset_of(line, col);
                super::unique::both_lines(m, src, at).unwrap_or_else(|| m.clone())
            }
            other => other.to_string(),
        };
        Problem {
            file: file.to_owned(),
            line,
            col,
            message,
        }
    })
}

/// Drops a parsed net: on a thread of its own when the net is large (a hundred
/// thousand zones take milliseconds to free, while the caller builds the net from
/// them and the other processors wait), else at once.
pub(crate) fn drop_aside(spec: NetSpec) {
    if spec.zones.len() >= ZONES_ASIDE {
        let aside = std::thread::Builder::new()
            .name("net-drop".into())
            .spawn(move || drop(spec));
        // A thread that could not start has dropped the net with its closure.
        drop(aside);
    }
}

/// From how many zones [`drop_aside`] frees a parsed net on a thread of its own.
const ZONES_ASIDE: usize = 10_000;

/// Where things are in a net's text: positions of entry keys and of lines, indexed
/// once so that pointing thousands of problems at the text costs little each.
#[derive(Debug)]
pub(crate) struct SourceMap<'s> {
    src: &'s str,
    /// Byte offset of the start of each line.
    lines: Vec<usize>,
    /// The first position of each quoted text followed by `:` (an entry key), built on
    /// first use, for names written without escapes.
    keys: std::sync::OnceLock<HashMap<&'s str, usize>>,
}

impl<'s> SourceMap<'s> {
    /// Indexes the lines of `src`.
    pub(crate) fn new(src: &'s str) -> SourceMap<'s> {
        let lines = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceMap {
            src,
            lines,
            keys: std::sync::OnceLock::new(),
        }
    }

    /// The text.
    pub(crate) fn src(&self) -> &'s str {
        self.src
    }

    /// The 1-based line and column of a path of quoted names: the first `"a"` that is
    /// followed by `:` (an entry's key), then the first `"b"` after it, and so on. Used
    /// to point semantic errors (unknown names, bad values) at the text that causes
    /// them. Falls back to the last position found.
    pub(crate) fn locate(&self, path: &[&str]) -> (usize, usize) {
        self.line_col(self.offset(path))
    }

    /// The byte offset [`SourceMap::locate`] points at.
    pub(crate) fn offset(&self, path: &[&str]) -> usize {
        let mut at = 0;
        for (i, name) in path.iter().enumerate() {
            let found = if i == 0 {
                self.key(name)
            } else {
                self.src[at..]
                    .find(&format!("{name:?}"))
                    .map(|rel| at + rel)
            };
            match found {
                Some(pos) => at = pos,
                None => break,
            }
        }
        at
    }

    /// Where `"name"` first stands as an entry key.
    fn key(&self, name: &str) -> Option<usize> {
        if format!("{name:?}").len() != name.len() + 2 {
            // Written with escapes: not in the index.
            return key_scan(self.src, name);
        }
        let keys = self.keys.get_or_init(|| key_index(self.src));
        keys.get(name).copied()
    }

    /// The byte offset of 1-based `line` and `col` (in characters).
    pub(crate) fn offset_of(&self, line: usize, col: usize) -> usize {
        let Some(&start) = self.lines.get(line.saturating_sub(1)) else {
            return self.src.len();
        };
        self.src[start..]
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(self.src.len(), |(i, _)| start + i)
    }

    /// The 1-based line and column (in characters) of byte offset `at`.
    pub(crate) fn line_col(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.src.len());
        let line = self.lines.partition_point(|&start| start <= at);
        let start = self.lines[line - 1];
        (line, self.src[start..at].chars().count() + 1)
    }
}

/// Every quoted text without `\\` that is followed by `:`, at its first position.
/// Quoted texts are taken between any two consecutive `"`, so that a key is found
/// wherever a plain search for it would find it (comments and strings included).
fn key_index(src: &str) -> HashMap<&str, usize> {
    let mut keys = HashMap::new();
    let quotes: Vec<usize> = src.match_indices('"').map(|(i, _)| i).collect();
    for pair in quotes.windows(2) {
        let (open, close) = (pair[0], pair[1]);
        let text = &src[open + 1..close];
        if text.contains('\\') || !src[close + 1..].trim_start().starts_with(':') {
            continue;
        }
        keys.entry(text).or_insert(open);
    }
    keys
}

/// Where `"name"` first stands as an entry key, by searching the text.
fn key_scan(src: &str, name: &str) -> Option<usize> {
    let needle = format!("{name:?}");
    let mut from = 0;
    loop {
        let pos = from + src[from..].find(&needle)?;
        if src[pos + needle.len()..].trim_start().starts_with(':') {
            return Some(pos);
        }
        from = pos + needle.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A net of many zones holds one `ZoneSpec` per zone, moved as the pieces' maps
    /// are built and joined: the names a zone seldom gives are boxed to keep it small.
    #[test]
    fn a_zone_entry_stays_small() {
        assert!(std::mem::size_of::<super::super::ZoneSpec>() <= 64);
    }

    #[test]
    fn locate_finds_entry_key_then_name_inside_it() {
        let src = "events: {\n  \"b\": Or(of: [\"a\"]),\n  \"a\": Atomic(type: \"a\"),\n  \"c\": Seq(of: [\"a\", \"zz\"]),\n}";
        let map = SourceMap::new(src);
        assert_eq!(map.locate(&["a"]), (3, 3));
        assert_eq!(map.locate(&["c", "zz"]), (4, 22));
        assert_eq!(map.locate(&["b"]), (2, 3));
        assert_eq!(map.locate(&["nope"]), (1, 1));
        assert_eq!(map.line_col(src.len()), (5, 2));
    }

    /// What `SourceMap::locate` finds, by a search from the start of the text for
    /// each problem (occurrences of a key that share a quote, as in `"a"a"`, all
    /// count).
    fn locate_by_search(src: &str, path: &[&str]) -> (usize, usize) {
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
                if i > 0 || after.starts_with(':') {
                    break Some(pos);
                }
                from = pos + 1;
            };
            match found {
                Some(pos) => at = pos,
                None => break,
            }
        }
        let before = &src[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    proptest::proptest! {
        #[test]
        fn locate_finds_what_a_search_finds(
            src in "[ab\":\n é\\\\]{0,60}",
            path in proptest::collection::vec("[ab\"é\\\\]{0,2}", 1..3),
        ) {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(SourceMap::new(&src).locate(&path), locate_by_search(&src, &path));
        }
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

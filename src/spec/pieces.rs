//! A net of many zones parsed on several threads: its `zones` map cut between entries
//! into pieces, each piece read on its own thread (by [`super::plain`] where its
//! entries are plain, else by `ron`), the rest of the net parsed by `ron` on the
//! caller's. With one thread the map is one piece, still read without `ron` when plain.
//!
//! The cuts come from a scan that knows only as much of RON's lexical structure as
//! finding them needs (strings, raw strings, characters, line and nested block
//! comments, brackets, words). The pieces and the rest are the net's own text,
//! re-joined at the cuts. Whatever a piece or the rest fails
//! on, a name given in two pieces, or anything the scan is unsure of, gives `None`,
//! and the caller parses the whole text in one pass: the result is the sequential
//! parse's whenever it is `Some`, and every error is the sequential parse's own.

use super::{NetSpec, ZoneSpec, Zones};

/// Below this size a net is parsed in one pass: threads cost more than they save.
pub(crate) const PARALLEL_BYTES: usize = 1 << 20;

/// The net in `src` parsed in up to `pieces` pieces (its zones cut between entries),
/// or `None` where the caller should parse it in one pass.
pub(super) fn parse(src: &str, pieces: usize, options: &ron::Options) -> Option<NetSpec> {
    if pieces > 1 {
        if let Some(spec) = ahead(src, pieces, options) {
            return Some(spec);
        }
    }
    let cuts = Cuts::find(src, pieces)?;
    // A piece of plain entries is read without `ron`; any other is copied by its own
    // thread (a megabyte's copy is mostly the page faults of fresh memory, and those
    // are taken on every processor at once) and read by `ron`.
    let piece = |(from, to): (usize, usize)| {
        super::plain::zones(&src[from..to])
            .or_else(|| zones(&format!("{{{}}}", &src[from..to]), options))
    };
    let mut ranges = cuts.ranges();
    let first = ranges.next()?;
    let (rest, zones) = std::thread::scope(|scope| {
        let others: Vec<_> = ranges
            .map(|range| {
                std::thread::Builder::new()
                    .name("net-parse".into())
                    .spawn_scoped(scope, move || piece(range))
            })
            .collect();
        let rest = rest(src, cuts.open, cuts.close, options);
        let mut all = vec![piece(first)];
        for other in others {
            // A thread that could not start, or that panicked, means one pass.
            all.push(other.ok().and_then(|h| h.join().ok()).flatten());
        }
        (rest, all)
    });
    joined(rest?, zones.into_iter().collect::<Option<Vec<_>>>()?)
}

/// The net without its zones' entries (`src` with the map between `open` and `close`
/// emptied), parsed by `ron`.
fn rest(src: &str, open: usize, close: usize, options: &ron::Options) -> Option<NetSpec> {
    let rest = format!("{}{}", &src[..=open], &src[close..]);
    options.from_str::<NetSpec>(&rest).ok()
}

/// The rest of the net given the pieces' zones, each piece in name order: `None` when
/// the rest has zones of its own or a name is in two pieces (the one pass says where).
fn joined(mut spec: NetSpec, pieces: Vec<Vec<(String, ZoneSpec)>>) -> Option<NetSpec> {
    if !spec.zones.is_empty() {
        return None;
    }
    // Joined onto the first (whose room a plain piece took for more entries than it
    // has), the pieces are runs that the stable sort merges.
    let more = pieces.iter().skip(1).map(Vec::len).sum();
    let mut pieces = pieces.into_iter();
    let mut all = pieces.next().unwrap_or_default();
    all.reserve(more);
    for piece in pieces {
        all.extend(piece);
    }
    spec.zones = Zones::sorted(all)?;
    Some(spec)
}

/// The net read from guessed cuts, its text scanned only up to the `zones` map's `{`:
/// every piece is read by the plain reader, each on a thread of its own but the first;
/// the last reads up to the map's `}`, which it finds, and then parses the rest of the
/// net with `ron`. A guess is a comma that ends a line before a line that starts with
/// `"`; the piece before it must end exactly there, after a whole entry, which makes
/// it a cut (by induction from the map's `{`). `None` on anything else: then the scan
/// finds the cuts.
fn ahead(src: &str, pieces: usize, options: &ron::Options) -> Option<NetSpec> {
    let open = Cuts::open(src)?;
    let b = src.as_bytes();
    // Shares of the text after `{`: the last piece half of the others', for its thread
    // parses the rest of the net too.
    let (span, halves) = (src.len() - open, 2 * pieces - 1);
    let mut cuts: Vec<usize> = Vec::new();
    for j in 1..pieces {
        let from = cuts.last().map_or(open + 1, |&c| c + 1);
        if let Some(c) = guess(b, (open + span * 2 * j / halves).max(from)) {
            cuts.push(c);
        }
    }
    let &first = cuts.first()?;
    let (mine, theirs) = std::thread::scope(|scope| {
        let spawned: Vec<_> = cuts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let next = cuts.get(i + 1).copied();
                std::thread::Builder::new()
                    .name("net-parse".into())
                    .spawn_scoped(scope, move || match next {
                        Some(n) => super::plain::between(&src[c + 1..n]).map(|z| (z, None)),
                        None => {
                            let (zones, end) = super::plain::to_close(&src[c + 1..])?;
                            let close = c + 1 + end;
                            Some((zones, Some(rest(src, open, close, options)?)))
                        }
                    })
            })
            .collect();
        let mine = super::plain::between(&src[open + 1..first]);
        let theirs: Vec<_> = spawned
            .into_iter()
            // A thread that could not start, or that panicked: the scan's way.
            .map(|t| t.ok().and_then(|h| h.join().ok()).flatten())
            .collect();
        (mine, theirs)
    });
    let mut pieces = vec![mine?];
    let mut spec = None;
    for piece in theirs {
        let (zones, rest) = piece?;
        pieces.push(zones);
        spec = spec.or(rest);
    }
    joined(spec?, pieces)
}

/// A comma at the end of a line, at or after `from`, whose next line starts (after
/// spaces) with `"`: where an entry of a map written one to a line may end. Looks at
/// 64 lines at most.
fn guess(b: &[u8], from: usize) -> Option<usize> {
    let space = |c: &u8| matches!(c, b' ' | b'\t' | b'\r');
    let mut at = from;
    for _ in 0..64 {
        let nl = at + memchr::memchr(b'\n', b.get(at..)?)?;
        let comma = b[..nl].iter().rposition(|c| !space(c))?;
        let next = b[nl + 1..]
            .iter()
            .position(|c| !space(c))
            .map(|i| nl + 1 + i);
        if comma >= from && b[comma] == b',' && next.is_some_and(|i| b[i] == b'"') {
            return Some(comma);
        }
        at = nl + 1;
    }
    None
}

/// One piece of a `zones` map, `{ … }`, read as the whole net reads its zones, in
/// name order.
fn zones(text: &str, options: &ron::Options) -> Option<Vec<(String, ZoneSpec)>> {
    let mut de = ron::Deserializer::from_str_with_options(text, options).ok()?;
    let zones = super::unique::zones(&mut de).ok()?;
    de.end().ok()?;
    Some(zones.0)
}

/// Where a net's `zones` map is, and the commas between its entries chosen as cuts.
#[derive(Debug, PartialEq)]
struct Cuts {
    /// The byte offset of the map's `{`.
    open: usize,
    /// The byte offset of its `}`.
    close: usize,
    /// The commas the map is cut at, ascending.
    at: Vec<usize>,
}

impl Cuts {
    /// Scans `src` for the top-level `zones: {` and the commas between its entries, and
    /// chooses at most `pieces - 1` of them to cut it into pieces of about equal work:
    /// the first piece is parsed with the rest of the net, so it is shorter by the rest's
    /// share.
    /// No cut at all (one piece) where there is one thread or one entry, so that plain
    /// entries are still read without `ron`.
    /// `None` when there is no such map, or the text holds
    /// anything the scan does not know (attributes, raw identifiers, non-ASCII outside
    /// strings and comments, unbalanced brackets, a comma beside a comma or a brace).
    fn find(src: &str, pieces: usize) -> Option<Cuts> {
        let (open, close, commas) = Scan::new(src.as_bytes()).run()?;
        let span = close - open;
        // The rest of a net is mostly names, which `ron` parses in about three times
        // the instructions that the plain reader takes over as many bytes of zones
        // (where zones are left to `ron`, the rest parses in half their time, and the
        // caller's thread has the larger share).
        let rest = (src.len() - span) * 3;
        let mut at = Vec::new();
        for j in 1..pieces {
            let target = open + ((span + rest) * j / pieces).saturating_sub(rest);
            let i = commas.partition_point(|&c| c < target);
            if let Some(&c) = commas.get(i) {
                if at.last().is_none_or(|&l| l < c) {
                    at.push(c);
                }
            }
        }
        Some(Cuts { open, close, at })
    }

    /// The offset of the net's `zones: {`, the text scanned up to it only.
    fn open(src: &str) -> Option<usize> {
        let scan = Scan {
            to_open: true,
            ..Scan::new(src.as_bytes())
        };
        scan.run().map(|(open, _, _)| open)
    }

    /// The byte ranges of the pieces, between the braces and the cuts.
    fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let starts = std::iter::once(self.open + 1).chain(self.at.iter().map(|&c| c + 1));
        let ends = self.at.iter().copied().chain(std::iter::once(self.close));
        starts.zip(ends)
    }
}

/// The scan's state: the text, where it is, and the brackets open around it.
struct Scan<'s> {
    src: &'s [u8],
    i: usize,
    stack: Vec<u8>,
    /// Whether to stop at the `zones` map's `{` (giving it as both braces, no comma).
    to_open: bool,
}

impl<'s> Scan<'s> {
    fn new(src: &'s [u8]) -> Scan<'s> {
        Scan {
            src,
            i: 0,
            stack: Vec::new(),
            to_open: false,
        }
    }

    /// The `zones` map's braces and the commas between its entries that may be cut.
    fn run(mut self) -> Option<(usize, usize, Vec<usize>)> {
        let mut open = None;
        let mut commas = Vec::new();
        // The last significant byte (a word or a string counts as `a`), and a comma of
        // the map waiting to see that the next token is neither `,` nor `}`.
        let mut last = b'\0';
        let mut pending: Option<usize> = None;
        // How much of `zones: {` has been read at the net's level: the word, then `:`.
        let mut key = 0;
        while let Some(&b) = self.src.get(self.i) {
            if self.stack.len() > 2 {
                self.deep()?;
                if self.stack.len() == 2 {
                    last = b')';
                }
                continue;
            }
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
                continue;
            }
            if b == b'/' {
                self.comment()?;
                continue;
            }
            if let Some(c) = pending.take() {
                if b != b',' && b != b'}' {
                    commas.push(c);
                }
            }
            let in_map = open.is_some() && self.stack.len() == 2;
            let level = self.stack.len();
            let was = std::mem::take(&mut key);
            match b {
                b'"' | b'\'' | b'#' => self.literal()?,
                b'(' | b'[' | b'{' => {
                    if b == b'{' && was == 2 && level == 1 && open.is_none() {
                        open = Some(self.i);
                        if self.to_open {
                            return Some((self.i, self.i, commas));
                        }
                    }
                    self.open();
                }
                b')' | b']' | b'}' => {
                    if in_map {
                        // The map's own `}` (a `)` or `]` here is unbalanced).
                        return (b == b'}').then_some((open?, self.i, commas));
                    }
                    self.close()?;
                }
                b',' => {
                    if in_map && last != b',' && last != b'{' {
                        pending = Some(self.i);
                    }
                    self.i += 1;
                }
                b':' => {
                    key = if was == 1 { 2 } else { 0 };
                    self.i += 1;
                }
                b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    if self.word() == b"zones" && level == 1 {
                        key = 1;
                    }
                }
                b'.' | b'-' | b'+' => self.i += 1,
                // Anything else.
                _ => return None,
            }
            last = match b {
                b'"' | b'\'' | b'#' | b'.' | b'-' | b'+' => b'a',
                b if b.is_ascii_alphanumeric() || b == b'_' => b'a',
                b => b,
            };
        }
        None
    }

    /// Inside an entry's value: skips to the next byte that matters there (a bracket,
    /// a string, a character, a comment) and reads it.
    fn deep(&mut self) -> Option<()> {
        let rest = &self.src[self.i..];
        self.i += rest.iter().position(|&b| DEEP[usize::from(b)])?;
        match self.src[self.i] {
            b'(' | b'[' | b'{' => self.open(),
            b')' | b']' | b'}' => self.close()?,
            b'/' => self.comment()?,
            // Non-ASCII.
            0x80.. => return None,
            _ => self.literal()?,
        }
        Some(())
    }

    /// An opening bracket.
    fn open(&mut self) {
        self.stack.push(self.src[self.i]);
        self.i += 1;
    }

    /// A closing bracket; `None` when it does not close the innermost one open.
    fn close(&mut self) -> Option<()> {
        let want = match self.src[self.i] {
            b')' => b'(',
            b']' => b'[',
            _ => b'{',
        };
        (self.stack.pop() == Some(want)).then(|| self.i += 1)
    }

    /// A string, a byte string, a character or a raw string, from its `"`, `'` or
    /// (after `r`) `#`, skipped; `None` for a `#` that opens no raw string (an
    /// attribute, a raw identifier) or a literal left open.
    fn literal(&mut self) -> Option<()> {
        match self.src[self.i] {
            b'"' | b'#' if self.raw_prefix() => self.raw_string(),
            q @ (b'"' | b'\'') => self.quoted(q),
            _ => None,
        }
    }

    /// Whether the `"` or `#` at the scan's position opens a raw string: it follows
    /// the word `r` or `br`.
    fn raw_prefix(&self) -> bool {
        let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
        let before = &self.src[..self.i];
        let start = before.len() - before.iter().rev().take_while(|b| word(b)).count();
        matches!(&before[start..], b"r" | b"br")
    }

    /// A word: an identifier, a keyword or a number.
    fn word(&mut self) -> &'s [u8] {
        let from = self.i;
        while self
            .src
            .get(self.i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.i += 1;
        }
        &self.src[from..self.i]
    }

    /// A raw string, from the first `#` or `"` after its `r` past its end; `None` for a
    /// raw identifier.
    fn raw_string(&mut self) -> Option<()> {
        let hashes = self.src[self.i..]
            .iter()
            .take_while(|&&b| b == b'#')
            .count();
        self.i += hashes;
        if self.src.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        loop {
            self.i += memchr::memchr(b'"', &self.src[self.i..])? + 1;
            let end = self.i + hashes;
            if self.src.get(self.i..end)?.iter().all(|&b| b == b'#') {
                self.i = end;
                return Some(());
            }
        }
    }

    /// A string or a character, with escapes, from its opening `quote` past its
    /// closing one.
    fn quoted(&mut self, quote: u8) -> Option<()> {
        self.i += 1;
        loop {
            let at = self.i + memchr::memchr2(quote, b'\\', &self.src[self.i..])?;
            self.i = at + if self.src[at] == b'\\' { 2 } else { 1 };
            if self.src[at] == quote {
                return Some(());
            }
        }
    }

    /// A line comment or a (nested) block comment, from its `/`.
    fn comment(&mut self) -> Option<()> {
        match self.src.get(self.i + 1)? {
            b'/' => {
                self.i = memchr::memchr(b'\n', &self.src[self.i..])
                    .map_or(self.src.len(), |n| self.i + n);
                Some(())
            }
            b'*' => {
                self.i += 2;
                let mut level = 1;
                while level > 0 {
                    let at = self.i + memchr::memchr2(b'/', b'*', &self.src[self.i..])?;
                    let pair = self.src.get(at..at + 2);
                    if pair == Some(b"/*") {
                        level += 1;
                        self.i = at + 2;
                    } else if pair == Some(b"*/") {
                        level -= 1;
                        self.i = at + 2;
                    } else {
                        self.i = at + 1;
                    }
                }
                Some(())
            }
            _ => None,
        }
    }
}

/// The bytes that matter inside an entry's value.
static DEEP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b >= 0x80
            || matches!(
                b as u8,
                b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b'\'' | b'/' | b'#'
            );
        b += 1;
    }
    table
};

#[cfg(test)]
#[path = "pieces_tests.rs"]
mod tests;

//! The library's layers, kept one-way: every `crate::` path in a source file must
//! name a module of a lower layer than the file's own (or the file's own module),
//! and every source file opens with a `//!` comment saying what it holds.
//!
//! The order, lowest first, is the one `docs/architecture.md` draws:
//!
//! ```text
//! event, hint → spatial, filter → count → spec → model → runtime → petri → compile → net → io, partition, bench
//! ```
//!
//! Modules of one layer do not import each other. The command-line tool in
//! `src/bin/` may use only the public API (`ccpn::…`): it is a separate crate
//! target, so the compiler keeps that rule.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module's layer, lowest first.
const LAYERS: &[&[&str]] = &[
    &["event", "hint"],
    &["spatial", "filter"],
    &["count"],
    &["spec"],
    &["model"],
    &["runtime"],
    &["petri"],
    &["compile"],
    &["net"],
    &["io", "partition", "bench"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments (line comments, doc comments, block comments) and
/// without the contents of string literals, so that only code is searched.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'"' => {
                // A string literal (raw strings with hashes are handled as `r#"`).
                let hashes = if i > 0 && (b[i - 1] == b'#' || b[i - 1] == b'r') {
                    src[..i].bytes().rev().take_while(|&c| c == b'#').count()
                } else {
                    0
                };
                let raw = i > hashes && b[i - hashes - 1] == b'r';
                i += 1;
                while i < b.len() {
                    if !raw && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'"' && b[i + 1..].iter().take(hashes).all(|&c| c == b'#') {
                        i += 1 + if raw { hashes } else { 0 };
                        break;
                    }
                    i += 1;
                }
                out.push_str("\"\"");
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                // A character literal such as '"' or '\n'.
                let end = src[i + 1..].find('\'').map_or(b.len(), |e| i + 2 + e);
                i = end.max(i + 3).min(b.len());
                out.push_str("' '");
            }
            _ => {
                let c = src[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// The names a `crate::` path at `rest` (just after `crate::`) reaches: one name, or
/// each first-level name of a `{…}` group.
fn crate_paths(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let mut names = Vec::new();
    let mut depth = 0;
    let mut start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if c.is_whitespace() => {}
            _ if start && depth == 0 => {
                names.push(ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    names
}

/// The crate root's re-exports: a name `crate::Name` stands for the module it
/// comes from (`pub use net::Net;` makes `crate::Net` the `net` module).
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code_only(lib);
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt
            .strip_prefix("pub use ")
            .or_else(|| stmt.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let Some((module, rest)) = path.split_once("::") else {
            continue;
        };
        let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
            group
                .trim_end_matches('}')
                .split(',')
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect()
        } else {
            vec![rest.rsplit("::").next().unwrap().trim().to_owned()]
        };
        for name in names {
            map.insert(name, module.trim().to_owned());
        }
    }
    map
}

/// The top-level module a file of `src/` belongs to (`src/runtime/unit/pair.rs` →
/// `runtime`), or `None` for the crate root and the binary.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    match first.as_str() {
        "lib.rs" | "bin" => None,
        _ => Some(first.trim_end_matches(".rs").to_owned()),
    }
}

/// Every import against the order, as `file: line: module → target`.
fn violations(src: &Path) -> Vec<String> {
    let exports = root_exports(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let Some(module) = module_of(src, file) else {
            continue;
        };
        let Some(own) = rank(&module) else {
            found.push(format!(
                "{}: module `{module}` has no layer in tests/layers.rs",
                file.display()
            ));
            continue;
        };
        let code = code_only(&fs::read_to_string(file).unwrap());
        for (n, line) in code.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + "crate::".len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue; // `$crate::` or an identifier ending in `crate`
                }
                for name in crate_paths(rest) {
                    let target = exports.get(&name).cloned().unwrap_or(name);
                    if target == module {
                        continue;
                    }
                    match rank(&target) {
                        Some(r) if r < own => {}
                        _ => found.push(format!(
                            "{}:{}: `{module}` imports `crate::{target}`, which is not below it",
                            file.display(),
                            n + 1
                        )),
                    }
                }
            }
        }
    }
    found
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn imports_go_down_the_layers() {
    let found = violations(&src_dir());
    assert!(
        found.is_empty(),
        "imports against the layers:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_source_file_opens_with_its_module_docs() {
    let mut files = Vec::new();
    sources(&src_dir(), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = fs::read_to_string(f).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without `//!` module docs:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let lib = code_only(&fs::read_to_string(src_dir().join("lib.rs")).unwrap());
    for line in lib.lines() {
        let line = line.trim();
        let decl = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = decl {
            let name = name.trim_end_matches(';').trim();
            assert!(rank(name).is_some(), "module `{name}` has no layer");
        }
    }
}

/// The checker itself: an upward import, a grouped one and one through a root
/// re-export are each caught; comments and strings are not code.
#[test]
fn the_checker_catches_upward_imports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("runtime")).unwrap();
    fs::write(
        src.join("lib.rs"),
        "//! root\nmod runtime;\nmod net;\nmod event;\npub use net::Net;\n",
    )
    .unwrap();
    fs::write(src.join("event.rs"), "//! e\n").unwrap();
    fs::write(src.join("net.rs"), "//! n\nuse crate::runtime::Detector;\n").unwrap();
    fs::write(
        src.join("runtime/mod.rs"),
        "//! r\n// crate::net is only a comment\nconst S: &str = \"crate::net\";\nuse crate::event::Event;\n",
    )
    .unwrap();
    assert!(violations(src).is_empty(), "{:?}", violations(src));
    for upward in [
        "use crate::net::Program;",
        "use crate::{event::Event, net::Program};",
        "fn f(_: &crate::Net) {}",
    ] {
        fs::write(
            src.join("runtime/detector.rs"),
            format!("//! d\n{upward}\n"),
        )
        .unwrap();
        let found = violations(src);
        assert_eq!(found.len(), 1, "{upward}: {found:?}");
        assert!(
            found[0].contains("`runtime` imports `crate::net`"),
            "{found:?}"
        );
    }
}

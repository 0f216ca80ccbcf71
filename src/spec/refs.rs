//! The events an entry of `events` reads, by name, in the order the validator
//! resolves them: so that a net can be resolved operands first without recursing as
//! deep as its chains of references go.

use super::OpSpec;

impl OpSpec {
    /// The names of the events this entry reads (zones and attributes aside), in the
    /// order its checks resolve them, repeats kept.
    pub(crate) fn operand_names(&self) -> Vec<&str> {
        use OpSpec::*;
        match self {
            Atomic { .. } => Vec::new(),
            Or { of } | Seq { of, .. } | And { of, .. } | Any { of, .. } => all(of),
            AllOf { of } | AnyOf { of } => all(of),
            Within { of, .. } | Count { of, .. } | Times { of, .. } => one(of),
            Inside { of, .. } | Stationary { of, .. } | Silent { of, .. } => one(of),
            Close { of, .. } | Lasting { of, .. } | Starts { of } | Ends { of } => one(of),
            Not {
                start, absent, end, ..
            } => vec![start.as_str(), absent, end],
            A { start, e, end, .. } | AStar { start, e, end, .. } => vec![start.as_str(), e, end],
            P { start, end, .. } | PStar { start, end, .. } => vec![start.as_str(), end],
            Dist { a, b, .. } => vec![a.as_str(), b],
            Direction { of, from, .. } => std::iter::once(of)
                .chain(from)
                .map(String::as_str)
                .collect(),
            State { on, off, .. } => vec![on.as_str(), off],
            Unless { of, except } => vec![of.as_str(), except],
            During { of, state, .. } => vec![of.as_str(), state],
        }
    }
}

fn one(s: &str) -> Vec<&str> {
    vec![s]
}

fn all(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

//! The output names a detector's detections carry: its own copies of the program's,
//! made afresh every [`FRESH_EVERY`] detections.
//!
//! Every detection holds its output's name, and another thread (the writer's) reads
//! and frees the detections: with one name shared by them all, the name's reference
//! count, which the detector writes for each detection, went from one processor's
//! cache to the other's and back at every detection. Fresh copies now and then leave
//! the copy the detector writes to in its own processor's cache; the writer reads and
//! frees older ones.

use std::sync::Arc;

use super::super::program::Program;

/// How many detections share one copy of their output's name.
const FRESH_EVERY: u32 = 256;

/// Per node, the names of the outputs it makes (as the program's `outputs`).
#[derive(Clone, Debug)]
pub(super) struct OutputNames {
    names: Vec<Vec<Arc<str>>>,
    /// Detections made since the last fresh copy.
    made: u32,
}

impl OutputNames {
    /// Copies of `program`'s output names.
    pub(super) fn of(program: &Program) -> OutputNames {
        OutputNames {
            names: program.outputs.clone(),
            made: 0,
        }
    }

    /// The names of node `node`'s outputs, for a token it made: a fresh copy of them
    /// when [`FRESH_EVERY`] detections have shared the ones before.
    #[inline]
    pub(super) fn of_node(&mut self, node: usize) -> &[Arc<str>] {
        let names = &mut self.names[node];
        self.made += names.len() as u32;
        if self.made >= FRESH_EVERY {
            self.made = 0;
            for name in names.iter_mut() {
                *name = Arc::from(&**name);
            }
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_text_and_change_copy_now_and_then() {
        let mut names = OutputNames {
            names: vec![vec![], vec!["a".into(), "b".into()]],
            made: 0,
        };
        let first = Arc::clone(&names.of_node(1)[0]);
        let mut copies = 1;
        let mut last = Arc::clone(&first);
        for _ in 0..1_000 {
            let now = names.of_node(1);
            assert_eq!((&*now[0], &*now[1]), ("a", "b"));
            if !Arc::ptr_eq(&now[0], &last) {
                copies += 1;
                last = Arc::clone(&now[0]);
            }
        }
        assert!(names.of_node(0).is_empty());
        // 2,002 names made, a fresh copy every 256: seven copies after the first.
        assert_eq!(copies, 8, "{copies} copies");
    }
}

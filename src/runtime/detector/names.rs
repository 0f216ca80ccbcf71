//! The output names a detector's detections carry: its own copies of the program's,
//! each renewed every few hundred detections ([`FreshCopy`]), since the writer's
//! thread reads and frees the detections.

use crate::hint::FreshCopy;

use super::super::program::Program;

/// Per node, the names of the outputs it makes (as the program's `outputs`).
#[derive(Clone, Debug)]
pub(super) struct OutputNames(Vec<Vec<FreshCopy>>);

impl OutputNames {
    /// Copies of `program`'s output names.
    pub(super) fn of(program: &Program) -> OutputNames {
        let copies =
            |names: &Vec<std::sync::Arc<str>>| names.iter().map(|n| FreshCopy::of(n)).collect();
        OutputNames(program.outputs.iter().map(copies).collect())
    }

    /// The names of node `node`'s outputs, each to take for a detection.
    #[inline]
    pub(super) fn of_node(&mut self, node: usize) -> &mut [FreshCopy] {
        &mut self.0[node]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn names_keep_their_text_and_change_copy_now_and_then() {
        let mut names = OutputNames(vec![vec![], vec![FreshCopy::of("a"), FreshCopy::of("b")]]);
        let take = |names: &mut OutputNames| -> Vec<Arc<str>> {
            names.of_node(1).iter_mut().map(FreshCopy::take).collect()
        };
        let first = take(&mut names);
        let mut copies = 1;
        let mut last = Arc::clone(&first[0]);
        for _ in 0..1_000 {
            let now = take(&mut names);
            assert_eq!((&*now[0], &*now[1]), ("a", "b"));
            if !Arc::ptr_eq(&now[0], &last) {
                copies += 1;
                last = Arc::clone(&now[0]);
            }
        }
        assert!(names.of_node(0).is_empty());
        // 1,001 detections of each name, a fresh copy every 256: four copies.
        assert_eq!(
            copies,
            1_001usize.div_ceil(FreshCopy::EVERY as usize),
            "{copies} copies"
        );
    }
}

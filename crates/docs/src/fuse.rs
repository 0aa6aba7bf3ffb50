//! Reciprocal Rank Fusion: one ranking from the keyword and the meaning rankings.
//!
//! bm25 scores and cosines are on different scales that shift with every corpus, so only the
//! ranks are combined: an item scores `1 / (K + rank)` in each list it is in (rank from 1).
//! A chunk both lists agree on rises above one that only one list likes.

use std::collections::HashMap;

/// The customary constant (Cormack et al., 2009): large enough that the first few ranks of a
/// list do not drown the other list.
pub(crate) const K: f32 = 60.0;

/// `lists` (each best first) fused, best first. Ties go to the item the earlier list ranks
/// higher (callers put the more precise ranking first), then to the smaller id, so results are
/// stable.
pub(crate) fn rrf(lists: &[&[i64]]) -> Vec<(i64, f32)> {
    // id → (score, the earliest list's rank of it as a tie-break key)
    let mut scores: HashMap<i64, (f32, (usize, usize))> = HashMap::new();
    for (l, list) in lists.iter().enumerate() {
        for (rank, id) in list.iter().enumerate() {
            let entry = scores.entry(*id).or_insert((0.0, (l, rank)));
            entry.0 += 1.0 / (K + rank as f32 + 1.0);
        }
    }
    let mut out: Vec<(i64, f32, (usize, usize))> = scores.into_iter().map(|(id, (s, first))| (id, s, first)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    out.into_iter().map(|(id, s, _)| (id, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_beats_one_list() {
        let fused = rrf(&[&[1, 2, 3], &[3, 4, 1]]);
        let ids: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
        // 1: 1/61 + 1/63; 3: 1/63 + 1/61; the tie goes to the first list's favourite. Then 2
        // and 4 (1/62 each), the same way.
        assert_eq!(ids, vec![1, 3, 2, 4]);
        let fused = rrf(&[&[3, 4, 1], &[1, 2, 3]]);
        assert_eq!(fused.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![3, 1, 4, 2]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-6);
    }

    #[test]
    fn one_list_keeps_its_order() {
        let fused = rrf(&[&[7, 5, 9], &[]]);
        assert_eq!(fused.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![7, 5, 9]);
        assert!(fused.windows(2).all(|w| w[0].1 > w[1].1));
        assert!(rrf(&[]).is_empty());
    }

    #[test]
    fn a_second_place_in_both_beats_a_first_place_in_one() {
        let fused = rrf(&[&[1, 2], &[3, 2]]);
        assert_eq!(fused[0].0, 2);
    }
}

//! Embedding vectors: stored as little-endian `f32` BLOBs, searched by brute force.
//!
//! Vectors are unit length, so cosine is a dot product. Scanning every vector is simple and
//! exact; at 384 dimensions it costs about a millisecond per 10,000 chunks (see the bench),
//! fine for a documentation folder. The set is kept in memory between searches.

/// All stored vectors of one index, contiguous for a fast scan.
#[derive(Debug, Clone, Default)]
pub(crate) struct VectorSet {
    ids: Vec<i64>,
    data: Vec<f32>,
    dim: usize,
}

impl VectorSet {
    /// Adds a vector; one whose length differs from the first is ignored (it came from another
    /// model and will be recomputed).
    pub(crate) fn push(&mut self, id: i64, v: &[f32]) {
        if self.ids.is_empty() && self.dim == 0 {
            self.dim = v.len();
        }
        if v.len() == self.dim && self.dim > 0 {
            self.ids.push(id);
            self.data.extend_from_slice(v);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ids of the `k` vectors closest to `query`, closest first, with their cosines.
    pub(crate) fn top(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dim || self.dim == 0 || k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(i64, f32)> =
            self.data.chunks_exact(self.dim).zip(&self.ids).map(|(v, id)| (*id, dot(v, query))).collect();
        let by_score = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, by_score);
            scored.truncate(k);
        }
        scored.sort_by(by_score);
        scored
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Four lanes let the compiler vectorise without fast-math.
    let mut acc = [0.0f32; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..4 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// `v` scaled to unit length (a zero vector stays zero).
pub(crate) fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector in a BLOB, or `None` if its length is not a whole number of `f32`s.
pub(crate) fn from_blob(b: &[u8]) -> Option<Vec<f32>> {
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return None;
    }
    Some(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.25, -1.5, f32::MIN_POSITIVE, 3.0e7];
        assert_eq!(from_blob(&to_blob(&v)), Some(v));
        assert_eq!(from_blob(&[1, 2, 3]), None);
        assert_eq!(from_blob(&[]), None);
    }

    #[test]
    fn nearest_first() {
        let mut set = VectorSet::default();
        set.push(1, &normalized(vec![1.0, 0.0, 0.0, 0.0, 0.0]));
        set.push(2, &normalized(vec![1.0, 1.0, 0.0, 0.0, 0.0]));
        set.push(3, &normalized(vec![0.0, 0.0, 1.0, 0.0, 0.0]));
        set.push(4, &[1.0, 2.0]); // another model's width: ignored
        assert_eq!(set.len(), 3);
        let q = normalized(vec![0.9, 0.1, 0.0, 0.0, 0.0]);
        let top = set.top(&q, 2);
        assert_eq!(top.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![1, 2]);
        assert!(top[0].1 > top[1].1 && top[0].1 <= 1.0001);
        assert_eq!(set.top(&q, 10).len(), 3);
        assert!(set.top(&[1.0], 3).is_empty());
    }

    #[test]
    fn normalizing_handles_zero() {
        assert_eq!(normalized(vec![0.0, 0.0]), vec![0.0, 0.0]);
        let v = normalized(vec![3.0, 4.0]);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }
}

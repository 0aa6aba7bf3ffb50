//! Bounded capture of command output: keep the head and the tail, count what was cut.

/// Keeps the first `head_cap` and last `tail_cap` bytes of a stream. The start of output usually
/// says what ran and the end says how it failed; the middle is what can go.
#[derive(Debug, Clone)]
pub struct CappedOutput {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    cut: u64,
    total: u64,
}

impl CappedOutput {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self { head: Vec::new(), tail: std::collections::VecDeque::new(), head_cap, tail_cap, cut: 0, total: 0 }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.cut += (self.tail.len() + bytes.len() - self.tail_cap) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.cut += overflow as u64;
        self.tail.extend(bytes);
    }

    /// Bytes seen in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes dropped from the middle.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// The kept text, with a marker where bytes were dropped.
    pub fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if self.cut == 0 {
            format!("{head}{tail}")
        } else {
            format!(
                "{head}\n… [{} bytes of output cut; showing the first {} and last {}] …\n{tail}",
                self.cut,
                self.head.len(),
                self.tail.len()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail() {
        let mut c = CappedOutput::new(4, 4);
        c.push(b"abcdefgh");
        assert_eq!(c.render(), "abcdefgh");
        c.push(b"ij");
        c.push(b"klmnopqrstuvwxyz");
        assert_eq!(c.total(), 26);
        assert_eq!(c.cut(), 18);
        let r = c.render();
        assert!(r.starts_with("abcd\n… [18 bytes of output cut"));
        assert!(r.ends_with("wxyz"));
    }

    proptest::proptest! {
        #[test]
        fn accounting_is_exact(chunks in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..50), 0..20), h in 0usize..20, t in 0usize..20) {
            let mut c = CappedOutput::new(h, t);
            let mut all = Vec::new();
            for ch in &chunks { c.push(ch); all.extend_from_slice(ch); }
            proptest::prop_assert_eq!(c.total(), all.len() as u64);
            let kept = c.head.len() + c.tail.len();
            proptest::prop_assert_eq!(kept as u64 + c.cut(), all.len() as u64);
            let tail: Vec<u8> = c.tail.iter().copied().collect();
            proptest::prop_assert!(all.ends_with(&tail));
            proptest::prop_assert!(all.starts_with(&c.head));
        }
    }
}

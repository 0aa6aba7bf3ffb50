//! A small GGUF (version 3) writer: enough to package a model whose weights are already in a
//! ggml layout, without a Python toolchain at run time.
//!
//! Only the value kinds a BERT-style model's metadata needs are supported. The whole file is
//! built in memory (small embedding models are tens of megabytes), which keeps the writer free
//! of I/O errors and makes its output a pure function of its input, so checksums can be pinned.
//! No crate on crates.io was both maintained and light enough to be worth a dependency for this.

/// Tensor data is aligned to this many bytes (GGUF's default; then `general.alignment` is
/// not written).
pub const ALIGNMENT: usize = 32;

const MAGIC: &[u8; 4] = b"GGUF";
const VERSION: u32 = 3;

// GGUF value type ids.
const T_UINT32: u32 = 4;
const T_INT32: u32 = 5;
const T_FLOAT32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    StrArray(Vec<String>),
    F32Array(Vec<f32>),
    I32Array(Vec<i32>),
}

/// How a tensor's values are stored (ggml type ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorType {
    F32,
    Q4_0,
}

impl TensorType {
    /// ggml's id for the type.
    pub fn ggml_id(self) -> u32 {
        match self {
            TensorType::F32 => 0,
            TensorType::Q4_0 => 2,
        }
    }

    /// Bytes that `values` values take, if they fill whole blocks.
    pub fn bytes_for(self, values: u64) -> Option<u64> {
        match self {
            TensorType::F32 => values.checked_mul(4),
            TensorType::Q4_0 => values.is_multiple_of(32).then(|| values / 32 * 18),
        }
    }
}

/// A tensor that cannot be written as described.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GgufError {
    #[error("tensor `{name}`: {bytes} bytes do not hold the {values} {ty:?} values of shape {dims:?}")]
    Size { name: String, dims: Vec<u64>, ty: TensorType, values: u64, bytes: usize },
    #[error("tensor `{0}` is added twice")]
    Duplicate(String),
    #[error("tensor `{0}` has no dimensions, or more than 4")]
    Rank(String),
    #[error("the first dimension of Q4_0 tensor `{0}` is not a multiple of 32")]
    Rows(String),
}

struct TensorEntry<'a> {
    name: String,
    /// ggml order: the fastest-varying dimension first.
    dims: Vec<u64>,
    ty: TensorType,
    data: &'a [u8],
}

/// Collects metadata and tensors, then lays out the file.
#[derive(Default)]
pub struct GgufBuilder<'a> {
    kvs: Vec<(String, Value)>,
    tensors: Vec<TensorEntry<'a>>,
}

impl<'a> GgufBuilder<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a metadata pair; pairs are written in the order they were added.
    pub fn kv(&mut self, key: &str, value: Value) {
        self.kvs.push((key.to_string(), value));
    }

    /// Add a tensor; `dims` is in ggml order (the row length first). The bytes are checked
    /// against the shape here, so a wrong layout fails at conversion, not inside llama.cpp.
    pub fn tensor(&mut self, name: &str, dims: &[u64], ty: TensorType, data: &'a [u8]) -> Result<(), GgufError> {
        if dims.is_empty() || dims.len() > 4 {
            return Err(GgufError::Rank(name.into()));
        }
        if ty == TensorType::Q4_0 && !dims[0].is_multiple_of(32) {
            return Err(GgufError::Rows(name.into()));
        }
        let values = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
        let expected = values.and_then(|v| ty.bytes_for(v));
        if expected != Some(data.len() as u64) {
            return Err(GgufError::Size {
                name: name.into(),
                dims: dims.to_vec(),
                ty,
                values: values.unwrap_or(u64::MAX),
                bytes: data.len(),
            });
        }
        if self.tensors.iter().any(|t| t.name == name) {
            return Err(GgufError::Duplicate(name.into()));
        }
        self.tensors.push(TensorEntry { name: name.into(), dims: dims.to_vec(), ty, data });
        Ok(())
    }

    /// The complete file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let data_len: usize = self.tensors.iter().map(|t| padded(t.data.len())).sum();
        let mut out = Vec::with_capacity(data_len + 4096);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, VERSION);
        put_u64(&mut out, self.tensors.len() as u64);
        put_u64(&mut out, self.kvs.len() as u64);
        for (key, value) in &self.kvs {
            put_str(&mut out, key);
            put_value(&mut out, value);
        }
        let mut offset = 0u64;
        for t in &self.tensors {
            put_str(&mut out, &t.name);
            put_u32(&mut out, t.dims.len() as u32);
            for &d in &t.dims {
                put_u64(&mut out, d);
            }
            put_u32(&mut out, t.ty.ggml_id());
            put_u64(&mut out, offset);
            offset += padded(t.data.len()) as u64;
        }
        pad(&mut out);
        for t in &self.tensors {
            out.extend_from_slice(t.data);
            pad(&mut out);
        }
        out
    }
}

fn padded(n: usize) -> usize {
    n.div_ceil(ALIGNMENT) * ALIGNMENT
}

fn pad(out: &mut Vec<u8>) {
    out.resize(padded(out.len()), 0);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U32(x) => {
            put_u32(out, T_UINT32);
            put_u32(out, *x);
        }
        Value::I32(x) => {
            put_u32(out, T_INT32);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::F32(x) => {
            put_u32(out, T_FLOAT32);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Bool(x) => {
            put_u32(out, T_BOOL);
            out.push(u8::from(*x));
        }
        Value::Str(s) => {
            put_u32(out, T_STRING);
            put_str(out, s);
        }
        Value::StrArray(items) => {
            put_array_head(out, T_STRING, items.len());
            for s in items {
                put_str(out, s);
            }
        }
        Value::F32Array(items) => {
            put_array_head(out, T_FLOAT32, items.len());
            for x in items {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        Value::I32Array(items) => {
            put_array_head(out, T_INT32, items.len());
            for x in items {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
}

fn put_array_head(out: &mut Vec<u8>, item_type: u32, len: usize) {
    put_u32(out, T_ARRAY);
    put_u32(out, item_type);
    put_u64(out, len as u64);
}

/// A minimal GGUF reader for tests: it parses what [`GgufBuilder`] writes, independently of
/// the writer's code, so a layout mistake shows up as a mismatch.
#[cfg(test)]
pub(crate) mod read {
    use super::Value;

    #[derive(Debug)]
    pub struct TensorInfo {
        pub name: String,
        pub dims: Vec<u64>,
        pub ggml_type: u32,
        pub offset: u64,
    }

    #[derive(Debug)]
    pub struct Parsed {
        pub version: u32,
        pub kvs: Vec<(String, Value)>,
        pub tensors: Vec<TensorInfo>,
        /// Where tensor data starts.
        pub data_start: usize,
    }

    impl Parsed {
        pub fn get(&self, key: &str) -> Option<&Value> {
            self.kvs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
        }
    }

    struct R<'a>(&'a [u8], usize);
    impl R<'_> {
        fn bytes(&mut self, n: usize) -> &[u8] {
            let s = &self.0[self.1..self.1 + n];
            self.1 += n;
            s
        }
        fn u32(&mut self) -> u32 {
            u32::from_le_bytes(self.bytes(4).try_into().unwrap())
        }
        fn u64(&mut self) -> u64 {
            u64::from_le_bytes(self.bytes(8).try_into().unwrap())
        }
        fn string(&mut self) -> String {
            let n = self.u64() as usize;
            String::from_utf8(self.bytes(n).to_vec()).unwrap()
        }
        fn value(&mut self, ty: u32) -> Value {
            match ty {
                4 => Value::U32(self.u32()),
                5 => Value::I32(self.u32() as i32),
                6 => Value::F32(f32::from_bits(self.u32())),
                7 => Value::Bool(self.bytes(1)[0] != 0),
                8 => Value::Str(self.string()),
                9 => {
                    let item = self.u32();
                    let n = self.u64() as usize;
                    match item {
                        8 => Value::StrArray((0..n).map(|_| self.string()).collect()),
                        6 => Value::F32Array((0..n).map(|_| f32::from_bits(self.u32())).collect()),
                        5 => Value::I32Array((0..n).map(|_| self.u32() as i32).collect()),
                        other => panic!("array of type {other} not supported by the test reader"),
                    }
                }
                other => panic!("value type {other} not supported by the test reader"),
            }
        }
    }

    pub fn parse(bytes: &[u8]) -> Parsed {
        let mut r = R(bytes, 0);
        assert_eq!(r.bytes(4), b"GGUF");
        let version = r.u32();
        let n_tensors = r.u64();
        let n_kv = r.u64();
        let kvs = (0..n_kv)
            .map(|_| {
                let k = r.string();
                let ty = r.u32();
                (k, r.value(ty))
            })
            .collect();
        let tensors = (0..n_tensors)
            .map(|_| {
                let name = r.string();
                let n_dims = r.u32();
                let dims = (0..n_dims).map(|_| r.u64()).collect();
                TensorInfo { name, dims, ggml_type: r.u32(), offset: r.u64() }
            })
            .collect();
        let data_start = r.1.div_ceil(32) * 32;
        Parsed { version, kvs, tensors, data_start }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_kvs_tensors_and_aligned_data() {
        let a: Vec<u8> = (0..4 * 3).map(|i| i as u8).collect();
        let b = vec![7u8; 18 * 2];
        let mut g = GgufBuilder::new();
        g.kv("general.architecture", Value::Str("bert".into()));
        g.kv("n", Value::U32(7));
        g.kv("i", Value::I32(-3));
        g.kv("f", Value::F32(0.5));
        g.kv("b", Value::Bool(true));
        g.kv("s", Value::StrArray(vec!["a".into(), "ção".into()]));
        g.kv("fa", Value::F32Array(vec![1.0, -2.0]));
        g.kv("ia", Value::I32Array(vec![1, 4]));
        g.tensor("a", &[3], TensorType::F32, &a).unwrap();
        g.tensor("b", &[32, 2], TensorType::Q4_0, &b).unwrap();
        let bytes = g.to_bytes();
        let p = read::parse(&bytes);
        assert_eq!(p.version, 3);
        assert_eq!(p.get("general.architecture"), Some(&Value::Str("bert".into())));
        assert_eq!(p.get("n"), Some(&Value::U32(7)));
        assert_eq!(p.get("i"), Some(&Value::I32(-3)));
        assert_eq!(p.get("f"), Some(&Value::F32(0.5)));
        assert_eq!(p.get("b"), Some(&Value::Bool(true)));
        assert_eq!(p.get("s"), Some(&Value::StrArray(vec!["a".into(), "ção".into()])));
        assert_eq!(p.get("fa"), Some(&Value::F32Array(vec![1.0, -2.0])));
        assert_eq!(p.get("ia"), Some(&Value::I32Array(vec![1, 4])));
        assert_eq!(p.tensors.len(), 2);
        assert_eq!((p.tensors[0].dims.as_slice(), p.tensors[0].ggml_type, p.tensors[0].offset), (&[3u64][..], 0, 0));
        assert_eq!(
            (p.tensors[1].dims.as_slice(), p.tensors[1].ggml_type, p.tensors[1].offset),
            (&[32u64, 2][..], 2, 32)
        );
        assert_eq!(p.data_start % ALIGNMENT, 0);
        assert_eq!(&bytes[p.data_start..p.data_start + 12], &a[..]);
        assert_eq!(&bytes[p.data_start + 32..p.data_start + 32 + 36], &b[..]);
        assert_eq!(bytes.len(), p.data_start + 32 + 64);
    }

    #[test]
    fn llama_cpp_reads_what_it_writes() {
        let data = vec![0u8; 4 * 8];
        let mut g = GgufBuilder::new();
        g.kv("general.architecture", Value::Str("bert".into()));
        g.kv("x.count", Value::U32(42));
        g.kv("x.name", Value::Str("hello".into()));
        g.tensor("t", &[8], TensorType::F32, &data).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gguf");
        std::fs::write(&path, g.to_bytes()).unwrap();
        let ctx = llama_cpp_2::gguf::GgufContext::from_file(&path).expect("ggml parses the file");
        assert_eq!(ctx.n_kv(), 3);
        assert_eq!(ctx.n_tensors(), 1);
        assert_eq!(ctx.val_u32(ctx.find_key("x.count")), 42);
        assert_eq!(ctx.val_str(ctx.find_key("x.name")), Some("hello"));
    }

    #[test]
    fn mis_sized_tensors_are_refused() {
        let mut g = GgufBuilder::new();
        let e = g.tensor("a", &[3], TensorType::F32, &[0u8; 11]).unwrap_err();
        assert!(matches!(e, GgufError::Size { .. }), "{e}");
        assert!(matches!(g.tensor("q", &[16, 2], TensorType::Q4_0, &[0u8; 18]), Err(GgufError::Rows(_))));
        assert!(matches!(g.tensor("r", &[], TensorType::F32, &[]), Err(GgufError::Rank(_))));
        assert!(matches!(g.tensor("o", &[u64::MAX, 2], TensorType::F32, &[]), Err(GgufError::Size { .. })));
        g.tensor("a", &[1], TensorType::F32, &[0u8; 4]).unwrap();
        assert!(matches!(g.tensor("a", &[1], TensorType::F32, &[0u8; 4]), Err(GgufError::Duplicate(_))));
    }
}

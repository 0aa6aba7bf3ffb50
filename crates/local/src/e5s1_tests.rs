use super::*;
use crate::gguf_write::read;
use proptest::prelude::*;

const H: usize = 32;
const FF: usize = 64;
const LAYERS: usize = 1;
const MAXP: usize = 8;
const PIECES: [&str; 7] = ["<s>", "<pad>", "</s>", "<unk>", "▁a", "ção", "<mask>"];
/// Embedding rows beyond the vocabulary, which the conversion must drop.
const EXTRA_ROWS: usize = 2;

fn q4(rows: usize, cols: usize) -> usize {
    rows * cols / 32 * 18
}

/// The tensors of a tiny model: (name, dtype id, value count, byte length).
fn tensor_table() -> Vec<(String, u8, usize, usize)> {
    let vocab = PIECES.len() + EXTRA_ROWS;
    let mut t = vec![
        ("emb.word".to_string(), 1, vocab * H, q4(vocab, H)),
        ("emb.pos".into(), 0, MAXP * H, MAXP * H * 4),
        ("emb.type".into(), 0, 2 * H, 2 * H * 4),
        ("emb.ln.w".into(), 0, H, H * 4),
        ("emb.ln.b".into(), 0, H, H * 4),
    ];
    for l in 0..LAYERS {
        for (s, rows, cols) in [("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF)] {
            t.push((format!("l{l}.{s}.w"), 1, rows * cols, q4(rows, cols)));
            t.push((format!("l{l}.{s}.b"), 0, rows, rows * 4));
        }
        for s in ["aln", "oln"] {
            t.push((format!("l{l}.{s}.w"), 0, H, H * 4));
            t.push((format!("l{l}.{s}.b"), 0, H, H * 4));
        }
    }
    t
}

fn i32s(out: &mut Vec<u8>, vals: &[i32]) {
    for v in vals {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A tiny but complete E5S1 file. Tensor bytes count up from a per-tensor seed, so a test
/// can tell which bytes landed where.
fn synthetic() -> Vec<u8> {
    let mut b = b"E5S1".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    i32s(&mut b, &[H as i32, LAYERS as i32, 2, FF as i32, (PIECES.len() + EXTRA_ROWS) as i32, MAXP as i32, 2]);
    b.extend_from_slice(&1e-12f32.to_le_bytes());
    i32s(&mut b, &[32, PIECES.len() as i32, 0, 2, 1, 3]);
    let blob: Vec<u8> = PIECES.concat().into_bytes();
    b.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    let mut off = 0u32;
    b.extend_from_slice(&off.to_le_bytes());
    for p in PIECES {
        off += p.len() as u32;
        b.extend_from_slice(&off.to_le_bytes());
    }
    for i in 0..PIECES.len() {
        b.extend_from_slice(&(-(i as f32)).to_le_bytes());
    }
    b.extend_from_slice(&blob);
    // Normalisation map: two entries, U+FF21 -> 'A' and U+00A0 -> ' ' .
    let mut map = Vec::new();
    for (cp, to) in [(0xFF21u32, 0x41u32), (0xA0, 0x20)] {
        map.extend_from_slice(&cp.to_le_bytes());
        map.push(1);
        map.extend_from_slice(&to.to_le_bytes());
    }
    i32s(&mut b, &[2]);
    b.extend_from_slice(&(map.len() as u32).to_le_bytes());
    b.extend_from_slice(&map);
    let table = tensor_table();
    let dir_len: usize = 4 + table.iter().map(|(n, ..)| 2 + n.len() + 1 + 4 + 8 + 8).sum::<usize>();
    let mut data_at = b.len() + dir_len;
    i32s(&mut b, &[table.len() as i32]);
    for (name, dt, n, len) in &table {
        b.extend_from_slice(&(name.len() as u16).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.push(*dt);
        b.extend_from_slice(&(*n as u32).to_le_bytes());
        b.extend_from_slice(&(data_at as u64).to_le_bytes());
        b.extend_from_slice(&(*len as u64).to_le_bytes());
        data_at += len;
    }
    for (i, (_, _, _, len)) in table.iter().enumerate() {
        b.extend((0..*len).map(|k| (k + i * 7) as u8));
    }
    b
}

fn tensor_bytes(file: &[u8], name: &str) -> Vec<u8> {
    let m = E5s1::parse(file).unwrap();
    m.tensors.iter().find(|t| t.name == name).unwrap().data.to_vec()
}

#[test]
fn parses_a_synthetic_file() {
    let bytes = synthetic();
    let m = E5s1::parse(&bytes).unwrap();
    assert_eq!(m.dims.hidden, 32);
    assert_eq!(m.dims.vocab_rows as usize, PIECES.len() + EXTRA_ROWS);
    assert_eq!(m.specials, Specials { bos: 0, eos: 2, pad: 1, unk: 3 });
    assert_eq!(m.pieces.iter().map(|p| std::str::from_utf8(p).unwrap()).collect::<Vec<_>>(), PIECES);
    assert_eq!(m.scores[4], -4.0);
    assert_eq!(m.normalization_entries, 2);
    assert_eq!(m.tensors.len(), tensor_table().len());
}

#[test]
fn converts_to_a_gguf_whose_header_and_tensors_read_back() {
    let src = synthetic();
    let out = to_gguf(&src).unwrap();
    assert_eq!(out, to_gguf(&src).unwrap(), "the conversion is deterministic");
    let p = read::parse(&out);
    assert_eq!(p.version, 3);
    assert_eq!(p.kvs[0], ("general.architecture".into(), Value::Str("bert".into())));
    assert_eq!(p.get("bert.embedding_length"), Some(&Value::U32(32)));
    assert_eq!(p.get("bert.block_count"), Some(&Value::U32(1)));
    assert_eq!(p.get("bert.attention.causal"), Some(&Value::Bool(false)));
    assert_eq!(p.get("tokenizer.ggml.token_type_count"), Some(&Value::U32(2)));
    assert_eq!(p.get("bert.pooling_type"), Some(&Value::U32(1)));
    assert_eq!(p.get("tokenizer.ggml.model"), Some(&Value::Str("t5".into())));
    assert_eq!(p.get("tokenizer.ggml.tokens"), Some(&Value::StrArray(PIECES.map(String::from).to_vec())));
    assert_eq!(p.get("tokenizer.ggml.token_type"), Some(&Value::I32Array(vec![3, 3, 3, 2, 1, 1, 4])));
    assert_eq!(p.get("tokenizer.ggml.mask_token_id"), Some(&Value::U32(6)));
    assert_eq!(p.get("tokenizer.ggml.seperator_token_id"), Some(&Value::U32(2)));
    let Some(Value::F32Array(scores)) = p.get("tokenizer.ggml.scores") else { panic!("no scores") };
    assert_eq!(scores.len(), PIECES.len());

    // 5 embedding tensors plus 16 per layer, names and ggml shapes as llama.cpp's bert expects.
    assert_eq!(p.tensors.len(), 5 + 16 * LAYERS);
    let info = |n: &str| p.tensors.iter().find(|t| t.name == n).unwrap_or_else(|| panic!("{n} missing"));
    let word = info("token_embd.weight");
    assert_eq!((word.dims.as_slice(), word.ggml_type), (&[32u64, PIECES.len() as u64][..], 2));
    assert_eq!(info("position_embd.weight").dims, [32, MAXP as u64]);
    assert_eq!(info("token_types.weight").dims, [32, 2]);
    assert_eq!(info("blk.0.ffn_up.weight").dims, [32, FF as u64]);
    assert_eq!(info("blk.0.ffn_down.weight").dims, [FF as u64, 32]);
    assert_eq!(info("blk.0.ffn_down.bias").dims, [32]);
    assert_eq!(info("blk.0.layer_output_norm.bias").ggml_type, 0);

    // Data: the word table keeps only the vocabulary's rows; other tensors are copied as is.
    let at = |n: &str| p.data_start + info(n).offset as usize;
    assert!(p.tensors.iter().all(|t| t.offset % 32 == 0));
    let rows = q4(PIECES.len(), H);
    assert_eq!(&out[at("token_embd.weight")..][..rows], &tensor_bytes(&src, "emb.word")[..rows]);
    let fo = tensor_bytes(&src, "l0.fo.w");
    assert_eq!(&out[at("blk.0.ffn_down.weight")..][..fo.len()], &fo[..]);
    let oln = tensor_bytes(&src, "l0.oln.b");
    assert_eq!(&out[at("blk.0.layer_output_norm.bias")..][..oln.len()], &oln[..]);
}

#[test]
fn llama_cpp_parses_the_converted_header() {
    let out = to_gguf(&synthetic()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.gguf");
    std::fs::write(&path, &out).unwrap();
    let ctx = llama_cpp_2::gguf::GgufContext::from_file(&path).expect("ggml parses the converted file");
    assert_eq!(ctx.n_tensors(), 21);
    assert_eq!(ctx.val_str(ctx.find_key("general.architecture")), Some("bert"));
    assert_eq!(ctx.val_u32(ctx.find_key("tokenizer.ggml.token_type_count")), 2);
}

#[test]
fn damaged_files_are_clear_errors() {
    let good = synthetic();
    assert_eq!(E5s1::parse(b"GGUF....").unwrap_err(), E5s1Error::BadMagic);
    assert_eq!(E5s1::parse(b"E5").unwrap_err(), E5s1Error::BadMagic);
    let mut v2 = good.clone();
    v2[4] = 2;
    assert_eq!(E5s1::parse(&v2).unwrap_err(), E5s1Error::UnsupportedVersion(2));
    let e = E5s1::parse(&good[..good.len() - 1]).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    let e = E5s1::parse(&good[..30]).unwrap_err();
    assert!(matches!(e, E5s1Error::Truncated { .. }), "{e}");
    // A negative hidden size.
    let mut neg = good.clone();
    neg[8..12].copy_from_slice(&(-384i32).to_le_bytes());
    assert!(E5s1::parse(&neg).unwrap_err().to_string().contains("positive"));
    // A special id past the vocabulary (the unknown id sits at byte 60).
    let mut unk = good.clone();
    unk[60..64].copy_from_slice(&99i32.to_le_bytes());
    assert!(E5s1::parse(&unk).unwrap_err().to_string().contains("unknown id 99"));
    // A tensor renamed away is reported by name at conversion.
    let pos = good.windows(7).position(|w| w == b"l0.fo.w").unwrap();
    let mut gone = good.clone();
    gone[pos..pos + 7].copy_from_slice(b"l0.fx.w");
    assert_eq!(to_gguf(&gone).unwrap_err(), E5s1Error::MissingTensor("l0.fo.w".into()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn truncated_files_are_errors(cut in 0usize..10_000) {
        let good = synthetic();
        let cut = cut % good.len();
        prop_assert!(to_gguf(&good[..cut]).is_err());
    }

    #[test]
    fn garbled_files_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = synthetic();
        let n = bytes.len();
        for (at, v) in flips {
            bytes[at % n] ^= v | 1;
        }
        // Either a clear error or (for a flip inside tensor data) a valid conversion.
        if let Err(e) = to_gguf(&bytes) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn header_fields_garbled_never_panic(at in 0usize..200, v in any::<u32>()) {
        let mut bytes = synthetic();
        let at = at.min(bytes.len() - 4);
        bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let _ = to_gguf(&bytes);
    }

    #[test]
    fn random_bytes_are_errors(mut bytes in proptest::collection::vec(any::<u8>(), 0..512), magic in any::<bool>()) {
        if magic && bytes.len() >= 8 {
            bytes[..4].copy_from_slice(b"E5S1");
            bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
        }
        prop_assert!(to_gguf(&bytes).is_err());
    }
}

//! The starters' passages embedded once per library and embedding model: kept in memory for
//! the process and on disk (`DATA/cache/starter-meanings/<key>.json`) for the next one, so a
//! `wright run` with the built-in model does not embed every starter's ~14 passages again
//! before it can pick. The key is a SHA-256 of the model's name and every passage, so an edited
//! starter, a user's own, or another model makes a new entry; older entries are removed when
//! one is written. A file that does not read back as the library's shape is ignored and made
//! again: the cache can only cost time, never pick differently.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wright_starters::Library;
use wright_starters::meaning::{Meanings, passages};

/// The meanings of the library last asked for, by key.
#[derive(Default)]
pub(crate) struct MeaningsCache(pub(crate) tokio::sync::Mutex<Option<(String, Arc<Meanings>)>>);

/// What a library's starters say under one embedding model, as a name for its meanings.
pub(crate) fn key(library: &Library, model: &str) -> String {
    let mut h = Sha256::new();
    // Every text length-prefixed, so no two different lists hash alike.
    let mut put = |text: &str| {
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    };
    put(model);
    for s in library.list() {
        put(s.id());
        // Where its own passages end and its near misses begin.
        put(&wright_starters::meaning::own_passages(s).to_string());
        for p in passages(s) {
            put(&p);
        }
    }
    let digest = h.finalize();
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Where meanings are kept on disk.
pub(crate) fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("cache").join("starter-meanings")
}

/// The stored meanings of `key`, when there are some that fit `library`.
pub(crate) fn load(dir: &Path, key: &str, library: &Library) -> Option<Meanings> {
    let text = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
    let vectors: Vec<Vec<Vec<f32>>> = serde_json::from_slice(&text).ok()?;
    let dim = vectors.first()?.first()?.len();
    let sound = dim > 0 && vectors.iter().flatten().all(|v| v.len() == dim && v.iter().all(|x| x.is_finite()));
    if !sound {
        return None;
    }
    Meanings::from_vectors(library, vectors).ok()
}

/// Keep `vectors` as `key`'s meanings (written aside, then renamed into place, so a reader
/// never sees half a file), and drop the entries of older libraries. A failure costs only
/// the next run's time, so it is logged, not returned.
pub(crate) fn save(dir: &Path, key: &str, vectors: &[Vec<Vec<f32>>]) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let text = serde_json::to_vec(vectors).map_err(std::io::Error::other)?;
        let aside = dir.join(format!(".{key}.{}.tmp", std::process::id()));
        std::fs::write(&aside, text)?;
        std::fs::rename(&aside, dir.join(format!("{key}.json")))?;
        for entry in std::fs::read_dir(dir)?.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".json") && name != format!("{key}.json") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    };
    if let Err(e) = write() {
        tracing::warn!(error = %e, dir = %dir.display(), "could not keep the starters' meanings for the next run");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
    use super::*;

    fn vectors(library: &Library, dim: usize) -> Vec<Vec<Vec<f32>>> {
        library.list().iter().map(|s| vec![vec![0.5; dim]; passages(s).len()]).collect()
    }

    #[test]
    fn meanings_come_back_for_their_key_only_and_older_entries_go() {
        let library = Library::builtin().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let d = dir(tmp.path());
        let k = key(&library, "e5-small");
        assert_ne!(k, key(&library, "another-model"), "the model is part of the key");
        assert!(load(&d, &k, &library).is_none(), "nothing kept yet");
        save(&d, "0ld", &vectors(&library, 4));
        save(&d, &k, &vectors(&library, 4));
        assert!(load(&d, &k, &library).is_some());
        assert!(!d.join("0ld.json").exists(), "the older library's entry is gone");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "and nothing was left aside");
    }

    #[test]
    fn a_file_that_does_not_fit_the_library_is_ignored() {
        let library = Library::builtin().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let d = dir(tmp.path());
        let k = key(&library, "m");
        std::fs::create_dir_all(&d).unwrap();
        let mut short = vectors(&library, 4);
        short.pop();
        let mut ragged = vectors(&library, 4);
        ragged[0][0] = vec![0.1; 3];
        let mut nan = vectors(&library, 4);
        nan[1][0][2] = f32::NAN;
        for bad in [
            b"not json".to_vec(),
            serde_json::to_vec(&short).unwrap(),
            serde_json::to_vec(&ragged).unwrap(),
            serde_json::to_vec(&vectors(&library, 0)).unwrap(),
        ] {
            std::fs::write(d.join(format!("{k}.json")), bad).unwrap();
            assert!(load(&d, &k, &library).is_none());
        }
        // serde_json writes NaN as null, which does not read back as a number either.
        save(&d, &k, &nan);
        assert!(load(&d, &k, &library).is_none());
    }
}

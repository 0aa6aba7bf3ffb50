//! `wright-local`'s e5 model behind the chat crate's [`Embedder`] seam, for the crate's tests,
//! its selection bench and its fitting example (the library itself never loads a model).

use wright_chat::Embedder;

pub struct E5(pub wright_local::E5Embedder);

impl Embedder for E5 {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed(texts).map_err(|e| e.to_string())
    }
}

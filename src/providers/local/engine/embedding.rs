//! Sentence embeddings for recall by meaning (docs/architecture.md §10): the embedding
//! model, held beside the chat model, turns each text into a unit vector, so that the dot
//! product of two is their cosine. The model's own pooling (mean, for all-MiniLM-L6-v2)
//! applies; a text longer than the model's context is cut, keeping its end token.
//!
//! The text is prepared as the model's tokenizer was trained to see it: BERT's uncased
//! normaliser strips accents (decomposes, then drops combining marks) where llama.cpp's
//! WordPiece only decomposes and lowercases, so the marks are dropped here first.

use std::num::NonZeroU32;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{AddBos, LlamaModel};
use unicode_normalization::UnicodeNormalization;

use super::super::Settings;
use super::super::protocol::ModelSpec;

/// The longest text, in tokens, an embedding is made of.
const MAX_TOKENS: u32 = 512;

pub(in crate::providers::local) struct Embedder {
    model: LlamaModel,
    spec: ModelSpec,
    threads: i32,
}

impl Embedder {
    pub(in crate::providers::local) fn load(spec: &ModelSpec, settings: &Settings) -> Result<Self, String> {
        let model = super::load(spec)?;
        tracing::info!(model = %spec.id, dimensions = model.n_embd(), "embedding model loaded");
        Ok(Self { model, spec: spec.clone(), threads: i32::try_from(settings.threads).unwrap_or(4) })
    }

    pub(in crate::providers::local) fn holds(&self, spec: &ModelSpec) -> bool {
        self.spec.id == spec.id && self.spec.path == spec.path
    }

    /// One unit vector per text, in order.
    pub(in crate::providers::local) fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let id = &self.spec.id;
        let failed = |err: &dyn std::fmt::Display| format!("the embedding model {id} failed: {err}");
        let n_ctx = self.model.n_ctx_train().clamp(8, MAX_TOKENS);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_ubatch(n_ctx)
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads)
            .with_embeddings(true);
        let backend = super::backend().map_err(|err| err.to_string())?;
        let mut context = self.model.new_context(backend, params).map_err(|err| failed(&err))?;
        let mut batch = LlamaBatch::new(n_ctx as usize, 1);
        let mut vectors = Vec::with_capacity(texts.len());
        for text in texts {
            let mut tokens =
                self.model.str_to_token(&without_accents(text), AddBos::Always).map_err(|err| failed(&err))?;
            if tokens.len() > n_ctx as usize
                && let Some(&end) = tokens.last()
            {
                tokens.truncate(n_ctx as usize - 1);
                tokens.push(end);
            }
            batch.clear();
            batch.add_sequence(&tokens, 0, true).map_err(|err| failed(&err))?;
            context.encode(&mut batch).map_err(|err| failed(&err))?;
            let pooled = context.embeddings_seq_ith(0).map_err(|err| failed(&err))?;
            vectors.push(unit(pooled));
        }
        Ok(vectors)
    }
}

/// `text` decomposed, without its combining marks: "café" reads "cafe".
fn without_accents(text: &str) -> String {
    text.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect()
}

fn unit(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    if norm == 0.0 {
        return vector.to_vec();
    }
    vector.iter().map(|x| (f64::from(*x) / norm) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accents_go_as_bert_uncased_drops_them() {
        assert_eq!(without_accents("naïve café résumé à Noël"), "naive cafe resume a Noel");
        assert_eq!(without_accents("plain — 12345!"), "plain — 12345!");
    }

    #[test]
    fn vectors_come_out_of_unit_length() {
        let v = unit(&[3.0, 4.0]);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert_eq!(unit(&[0.0, 0.0]), vec![0.0, 0.0]);
    }
}

//! all-MiniLM-L6-v2 on candle (feature `embed`): the only module that touches candle.
//!
//! all-MiniLM-L6-v2 on candle (feature `embed`): BERT, mean pooling over the attention mask, L2
//! normalisation; the only module that touches candle.
//!
//! The `tokenizer.json` shipped with the model pads every input to 128 tokens;
//! mean pooling over padding drags every vector towards the same point (every
//! pair of sentences scored 0.8–0.9). Here padding is only to the longest
//! input of a batch and the pooling is masked, as sentence-transformers does;
//! inputs are truncated at 256 word pieces (its `max_seq_length`).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EMBEDDING_MODEL, EmbedError, Embedder};

/// Word pieces kept per input (sentence-transformers' `max_seq_length` for this model).
pub const MAX_TOKENS: usize = 256;

/// Inputs per forward pass.
const BATCH: usize = 32;

/// The sentence embedder.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").finish_non_exhaustive()
    }
}

impl MiniLm {
    /// Load `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let files = ["model.safetensors", "tokenizer.json", "config.json"];
        if files.iter().any(|f| !dir.join(f).is_file()) {
            return Err(EmbedError::Missing(dir.to_path_buf()));
        }
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| EmbedError::Load {
                path: dir.to_path_buf(),
                reason: format!("{name}: {e}"),
            })
        };
        let config = read("config.json")?;
        let tokenizer = read("tokenizer.json")?;
        let weights = read("model.safetensors")?;
        Self::from_bytes(dir, &config, &tokenizer, weights)
    }

    /// The model from the three files' bytes (the page hands them over from
    /// its cache); `origin` names where they came from, for errors.
    pub fn from_bytes(
        origin: &Path,
        config: &[u8],
        tokenizer: &[u8],
        weights: Vec<u8>,
    ) -> Result<Self, EmbedError> {
        let fail = |reason: String| EmbedError::Load {
            path: origin.to_path_buf(),
            reason,
        };
        let config: Config =
            serde_json::from_slice(config).map_err(|e| fail(format!("config.json: {e}")))?;
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| fail(e.to_string()))?;
        Ok(Self {
            model,
            tokenizer,
            device,
        })
    }

    /// Word pieces of `text` (with `[CLS]` and `[SEP]`), after truncation.
    pub fn token_count(&self, text: &str) -> usize {
        self.tokenizer
            .encode(text, true)
            .map_or(0, |e| e.get_ids().len())
    }

    fn batch(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings
                .iter()
                .flat_map(|e| f(e).iter().copied())
                .collect()
        };
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (rows, width), &self.device)?;
        let types = Tensor::from_vec(flat(&|e| e.get_type_ids()), (rows, width), &self.device)?;
        let mask = Tensor::from_vec(
            flat(&|e| e.get_attention_mask()),
            (rows, width),
            &self.device,
        )?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens only.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Embedder for MiniLm {
    fn key(&self) -> &str {
        EMBEDDING_MODEL
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Batches of similar length pad less.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(BATCH) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            let vectors = self
                .batch(&batch)
                .map_err(|e| EmbedError::Run(e.to_string()))?;
            for (&i, v) in group.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

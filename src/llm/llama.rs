//! In-process llama.cpp (through `llama-cpp-2`): the default backend, and the only
//! module that touches llama.cpp.
//!
//! It runs on the gateway's worker thread. The chat template comes from the GGUF's
//! metadata; JSON output contracts become GBNF grammars through llama.cpp's own
//! converter. Each cache slot (a stage, or a character) keeps its own context
//! and the tokens already evaluated in it, so a call that shares a prefix with
//! the slot's previous call evaluates only the new suffix. A slot's context is
//! only as long as its calls need (a power of two from [`MIN_SLOT_CONTEXT`] up
//! to the key's `context`), so many slots cost little memory.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaLoraAdapter, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::backend::{
    Backend, BackendError, FinishReason, GenerateRequest, Generated, Role, Usage,
};
use super::stream::TextStream;

/// Tokens evaluated per decode call while reading a prompt.
const BATCH: usize = 512;

/// The shortest context a slot is made with. Its KV cache is allocated whole
/// (about 23 KB a token for the default model), so a slot starts here and is
/// made again, longer (its cache lost), when a call needs more: 2048 holds
/// every stage's prompt and reply in a session, 1024 made the NPCs' slots
/// grow, and lose their cache, a few turns in.
pub const MIN_SLOT_CONTEXT: u32 = 2048;

/// llama.cpp's backend may be initialised once per process.
fn llama_backend() -> Result<&'static LlamaBackend, BackendError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| BackendError::Fatal(format!("llama.cpp could not start: {e}")))
}

/// A model as loaded: the weights and, when its key names one, the `LoRA`
/// adapter over them (or why the adapter could not be used).
#[derive(Clone, Copy)]
struct Loaded {
    model: &'static LlamaModel,
    adapter: Option<&'static Mutex<LlamaLoraAdapter>>,
    adapter_error: Option<&'static str>,
}

/// Loaded models, one per file and adapter for the life of the process
/// (contexts borrow them; an adapter is initialised on its own copy of the
/// model, which llama.cpp needs mutably for that).
fn load_model(path: &Path, adapter: Option<&Path>) -> Result<Loaded, BackendError> {
    static MODELS: OnceLock<Mutex<HashMap<(PathBuf, Option<PathBuf>), Loaded>>> = OnceLock::new();
    let backend = llama_backend()?;
    let mut models = MODELS
        .get_or_init(Mutex::default)
        .lock()
        .map_err(|_| BackendError::Fatal("the model cache is poisoned".into()))?;
    let key = (path.to_path_buf(), adapter.map(Path::to_path_buf));
    if let Some(loaded) = models.get(&key) {
        return Ok(*loaded);
    }
    if !path.is_file() {
        return Err(BackendError::Fatal(format!(
            "the model file {} is missing; `./run.sh play` fetches the default model, and `loreloom models` says how to add others",
            path.display()
        )));
    }
    let mut model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .map_err(|e| {
            BackendError::Fatal(format!(
                "{} is not a loadable GGUF model: {e}",
                path.display()
            ))
        })?;
    let (lora, adapter_error) = match adapter {
        None => (None, None),
        Some(file) if !file.is_file() => (
            None,
            Some(format!(
                "the LoRA adapter {} is missing (`./run.sh play` installs the default one); {} answers without it",
                file.display(),
                path.display()
            )),
        ),
        Some(file) => match model.lora_adapter_init(file) {
            Ok(lora) => (Some(lora), None),
            Err(e) => (
                None,
                Some(format!(
                    "{} is not a LoRA adapter for {} ({e}); reinstall it with `./run.sh play` or remove `lora` from the key in models.ron; the model answers without it",
                    file.display(),
                    path.display()
                )),
            ),
        },
    };
    if let Some(message) = &adapter_error {
        tracing::warn!("{message}");
    }
    let loaded = Loaded {
        model: Box::leak(Box::new(model)),
        adapter: lora.map(|l| &*Box::leak(Box::new(Mutex::new(l)))),
        adapter_error: adapter_error.map(|m| &*m.leak()),
    };
    models.insert(key, loaded);
    Ok(loaded)
}

/// One cache slot: a context and the tokens its KV cache holds.
struct Slot {
    name: String,
    ctx: LlamaContext<'static>,
    /// The context's length in tokens.
    n_ctx: u32,
    tokens: Vec<LlamaToken>,
    last_used: u64,
    /// Whether the adapter is applied in this context (its KV cache was computed so).
    adapted: bool,
}

/// A prompt read into a slot.
struct Evaluated {
    slot: usize,
    /// Its tokens found already evaluated (the shared prefix).
    cached: usize,
    /// Where the last token's logits are in the last batch.
    logits: i32,
}

/// The llama.cpp backend.
pub struct LlamaCppBackend {
    model: &'static LlamaModel,
    adapter: Option<&'static Mutex<LlamaLoraAdapter>>,
    adapter_error: Option<&'static str>,
    /// The stages the adapter is applied for; every stage when `None`.
    adapter_stages: Option<Vec<String>>,
    template: LlamaChatTemplate,
    path: PathBuf,
    n_ctx: u32,
    threads: u32,
    max_slots: usize,
    slots: Vec<Slot>,
    grammars: HashMap<String, String>,
    clock: u64,
}

impl std::fmt::Debug for LlamaCppBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaCppBackend")
            .field("path", &self.path)
            .field("n_ctx", &self.n_ctx)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl LlamaCppBackend {
    /// Loads `path` (once per process) for use with `threads` inference threads.
    pub fn open(path: &Path, context: u32, threads: u32, slots: u32) -> Result<Self, BackendError> {
        Self::open_with(path, None, context, threads, slots)
    }

    /// Loads `path` with the `LoRA` `adapter` over it (once per process for the
    /// pair). An adapter that is missing or does not fit is no error: the base
    /// model answers, and [`Self::adapter_error`] says why.
    pub fn open_with(
        path: &Path,
        adapter: Option<&Path>,
        context: u32,
        threads: u32,
        slots: u32,
    ) -> Result<Self, BackendError> {
        let Loaded {
            model,
            adapter,
            adapter_error,
        } = load_model(path, adapter)?;
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|e| BackendError::Fatal(format!("no usable chat template: {e}")))?;
        let n_ctx = context.clamp(256, model.n_ctx_train().max(256));
        Ok(Self {
            model,
            adapter,
            adapter_error,
            adapter_stages: None,
            template,
            path: path.to_path_buf(),
            n_ctx,
            threads: threads.max(1),
            max_slots: usize::try_from(slots.max(1)).unwrap_or(1),
            slots: Vec::new(),
            grammars: HashMap::new(),
            clock: 0,
        })
    }

    /// Apply the adapter only for these stages (the others get the base model).
    #[must_use]
    pub fn with_adapter_stages(mut self, stages: Option<Vec<String>>) -> Self {
        self.adapter_stages = stages;
        self
    }

    /// Whether a `LoRA` adapter is loaded (applied for [`Self::adapts`]'s stages).
    pub fn has_adapter(&self) -> bool {
        self.adapter.is_some()
    }

    /// Whether the adapter is applied for `stage`.
    pub fn adapts(&self, stage: &str) -> bool {
        self.adapter.is_some()
            && self
                .adapter_stages
                .as_ref()
                .is_none_or(|s| s.iter().any(|x| x == stage))
    }

    /// Why the adapter the key names is not applied (missing, or not a `LoRA`
    /// for this model), naming the file.
    pub fn adapter_error(&self) -> Option<&str> {
        self.adapter_error
    }

    /// The prompt text after the model's chat template.
    /// A request whose last message is the assistant's is a begun answer
    /// (`CallRequest::answer_start`): the template closes the turns before
    /// it and opens the assistant's, and its text follows, to be continued.
    pub fn apply_template(&self, request: &GenerateRequest) -> Result<String, BackendError> {
        let (messages, begun) = match request.messages.split_last() {
            Some((last, before)) if last.role == Role::Assistant => (before, last.content.as_str()),
            _ => (request.messages.as_slice(), ""),
        };
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.as_str().to_owned(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BackendError::Fatal(format!("a message holds a NUL byte: {e}")))?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map(|prompt| prompt + begun)
            .map_err(|e| BackendError::Fatal(format!("the chat template failed: {e}")))
    }

    /// Tokens of a prompt.
    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), true, true)
    }

    /// The GBNF grammar llama.cpp enforces for a JSON Schema, after llama.cpp's
    /// grammar sampler has accepted it (what `loreloom llm --schema` and the tests check).
    pub fn grammar_for(&mut self, schema: &serde_json::Value) -> Result<String, BackendError> {
        self.grammar(schema)?;
        Ok(self
            .grammars
            .get(&schema.to_string())
            .cloned()
            .unwrap_or_default())
    }

    /// Forgets every cached prefix (for benchmarks that measure cold prompts).
    pub fn clear_caches(&mut self) {
        self.slots.clear();
    }

    /// The slot `name`, with a context of at least `needed` tokens.
    #[expect(
        clippy::indexing_slicing,
        reason = "slot indices are this cache's own, `common` is at most the prompt's length, and llama.cpp's candidate arrays hold the whole vocabulary"
    )]
    fn slot(&mut self, name: &str, needed: u32) -> Result<usize, BackendError> {
        self.clock += 1;
        let n_ctx = needed
            .max(MIN_SLOT_CONTEXT)
            .checked_next_power_of_two()
            .unwrap_or(u32::MAX)
            .min(self.n_ctx);
        let i = if let Some(i) = self.slots.iter().position(|s| s.name == name) {
            i
        } else if self.slots.len() >= self.max_slots
            && let Some(oldest) = self
                .slots
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i)
        {
            // All slots in use: the least recently used one is emptied and
            // taken over (its context, KV memory and adapter kept: creating a
            // context allocates the whole KV cache again).
            let slot = &mut self.slots[oldest];
            slot.ctx.clear_kv_cache();
            slot.tokens.clear();
            name.clone_into(&mut slot.name);
            oldest
        } else {
            let ctx = self.new_context(n_ctx)?;
            self.slots.push(Slot {
                name: name.to_owned(),
                ctx,
                n_ctx,
                tokens: Vec::new(),
                last_used: 0,
                adapted: false,
            });
            self.slots.len() - 1
        };
        if self.slots[i].n_ctx < n_ctx {
            // Too short for this call: made again, longer (its cache is lost).
            let ctx = self.new_context(n_ctx)?;
            let slot = &mut self.slots[i];
            slot.ctx = ctx;
            slot.n_ctx = n_ctx;
            slot.tokens.clear();
            slot.adapted = false;
        }
        self.slots[i].last_used = self.clock;
        Ok(i)
    }

    fn new_context(&self, n_ctx: u32) -> Result<LlamaContext<'static>, BackendError> {
        let threads = i32::try_from(self.threads).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(u32::try_from(BATCH).unwrap_or(512))
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        self.model
            .new_context(llama_backend()?, params)
            .map_err(|e| BackendError::Fatal(format!("cannot create a llama.cpp context: {e}")))
    }

    /// `request`'s prompt as tokens, checked to fit the key's context.
    fn prompt_tokens(&self, request: &GenerateRequest) -> Result<Vec<LlamaToken>, BackendError> {
        let tokens = self.tokenize(&self.apply_template(request)?);
        if tokens.is_empty() {
            return Err(BackendError::Fatal(format!(
                "the prompt of stage `{}` is empty",
                request.stage
            )));
        }
        if tokens.len() + 8 >= usize::try_from(self.n_ctx).unwrap_or(usize::MAX) {
            return Err(BackendError::Fatal(format!(
                "the prompt of stage `{}` has {} tokens, more than the model's context of {}; raise `context` in models.ron or shorten the prompt",
                request.stage,
                tokens.len(),
                self.n_ctx
            )));
        }
        Ok(tokens)
    }

    /// Reads `tokens` (`request`'s prompt) into its slot, reusing the prefix
    /// the slot already holds.
    #[expect(
        clippy::indexing_slicing,
        reason = "slot indices are this cache's own, `common` is at most the prompt's length, and llama.cpp's candidate arrays hold the whole vocabulary"
    )]
    fn evaluate(
        &mut self,
        request: &GenerateRequest,
        tokens: &[LlamaToken],
    ) -> Result<Evaluated, BackendError> {
        let needed = u32::try_from(tokens.len())
            .unwrap_or(u32::MAX)
            .saturating_add(request.sampling.max_tokens)
            .saturating_add(8);
        let i = self.slot(&request.cache_slot, needed)?;
        let adapt = self.adapts(&request.stage);
        let adapter = self.adapter;
        let slot = &mut self.slots[i];
        if slot.adapted != adapt
            && let Some(adapter) = adapter
        {
            let mut adapter = adapter
                .lock()
                .map_err(|_| BackendError::Fatal("the LoRA adapter lock is poisoned".into()))?;
            if adapt {
                slot.ctx.lora_adapter_set(&mut adapter, 1.0).map_err(|e| {
                    BackendError::Fatal(format!("llama.cpp refused the LoRA adapter: {e}"))
                })?;
            } else {
                slot.ctx.lora_adapter_remove(&mut adapter).map_err(|e| {
                    BackendError::Fatal(format!("llama.cpp could not remove the LoRA adapter: {e}"))
                })?;
            }
            // What the cache holds was computed with the other weights.
            slot.ctx.clear_kv_cache();
            slot.tokens.clear();
            slot.adapted = adapt;
        }

        // Reuse the evaluated prefix; always evaluate at least one token for logits.
        let common = slot
            .tokens
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        if common < slot.tokens.len() {
            let cleared = slot
                .ctx
                .clear_kv_cache_seq(Some(0), u32::try_from(common).ok(), None)
                .unwrap_or(false);
            if !cleared {
                slot.ctx.clear_kv_cache();
                slot.tokens.clear();
            }
        }
        let common = common.min(slot.tokens.len());
        slot.tokens.truncate(common);

        let mut batch = LlamaBatch::new(BATCH, 1);
        let suffix = &tokens[common..];
        for (chunk_index, chunk) in suffix.chunks(BATCH).enumerate() {
            batch.clear();
            for (j, token) in chunk.iter().enumerate() {
                let pos = common + chunk_index * BATCH + j;
                let last = pos + 1 == tokens.len();
                batch
                    .add(*token, i32::try_from(pos).unwrap_or(i32::MAX), &[0], last)
                    .map_err(decode_error)?;
            }
            if let Err(e) = slot.ctx.decode(&mut batch) {
                slot.ctx.clear_kv_cache();
                slot.tokens.clear();
                return Err(decode_error(e));
            }
            slot.tokens.extend_from_slice(chunk);
        }
        Ok(Evaluated {
            slot: i,
            cached: common,
            logits: batch.n_tokens() - 1,
        })
    }

    fn grammar(&mut self, schema: &serde_json::Value) -> Result<LlamaSampler, BackendError> {
        let key = schema.to_string();
        let gbnf = if let Some(g) = self.grammars.get(&key) {
            g.clone()
        } else {
            let text = super::contract::schema_text(schema);
            let g = llama_cpp_2::json_schema_to_grammar(&text).map_err(|e| {
                BackendError::Fatal(format!("the output contract cannot become a grammar: {e}"))
            })?;
            self.grammars.insert(key, g.clone());
            g
        };
        LlamaSampler::grammar(self.model, &gbnf, "root")
            .map_err(|e| BackendError::Fatal(format!("llama.cpp refused the grammar: {e}")))
    }
}

/// The sampler chain for the request (without the grammar).
fn chain(model: &LlamaModel, request: &GenerateRequest) -> LlamaSampler {
    let s = &request.sampling;
    let mut samplers = Vec::new();
    if let Some(penalty) = s.repeat_penalty.filter(|p| (*p - 1.0).abs() > f32::EPSILON) {
        samplers.push(LlamaSampler::penalties(
            model.n_vocab(),
            64,
            penalty,
            0.0,
            0.0,
        ));
    }
    if let Some(multiplier) = s.dry_multiplier.filter(|m| *m > 0.0) {
        // Over the whole context (the prompt's words too, so a reply that
        // recites its prompt is pushed off it); a new line, a colon or a
        // quotation mark starts a new sequence, as llama.cpp's defaults do.
        samplers.push(LlamaSampler::dry(
            model,
            multiplier,
            super::chat::DRY_BASE,
            super::chat::DRY_ALLOWED,
            -1,
            ["\n", ":", "\"", "*"],
        ));
    }
    if s.temperature <= 0.0 {
        samplers.push(LlamaSampler::greedy());
    } else {
        if let Some(k) = s.top_k.filter(|k| *k > 0) {
            samplers.push(LlamaSampler::top_k(i32::try_from(k).unwrap_or(i32::MAX)));
        }
        if let Some(p) = s.top_p.filter(|p| *p < 1.0) {
            samplers.push(LlamaSampler::top_p(p, 1));
        }
        samplers.push(LlamaSampler::temp(s.temperature));
        samplers.push(LlamaSampler::dist(s.seed));
    }
    LlamaSampler::chain_simple(samplers)
}

/// Samples the next token: the free chain first; only if the grammar refuses
/// that token, the grammar over the whole vocabulary and the chain again
/// (llama.cpp's own strategy: constrained output costs little when the model
/// already follows the grammar).
#[expect(
    clippy::indexing_slicing,
    reason = "slot indices are this cache's own, `common` is at most the prompt's length, and llama.cpp's candidate arrays hold the whole vocabulary"
)]
fn sample(
    ctx: &LlamaContext<'_>,
    idx: i32,
    chain: &mut LlamaSampler,
    grammar: Option<&mut LlamaSampler>,
) -> LlamaToken {
    let mut candidates = ctx.token_data_array_ith(idx);
    chain.apply(&mut candidates);
    let mut token = candidates
        .selected_token()
        .unwrap_or_else(|| candidates.data[0].id());
    if let Some(grammar) = grammar {
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
        grammar.apply(&mut single);
        if single.data[0].logit().is_infinite() {
            let mut constrained = ctx.token_data_array_ith(idx);
            grammar.apply(&mut constrained);
            chain.apply(&mut constrained);
            token = constrained
                .selected_token()
                .unwrap_or_else(|| constrained.data[0].id());
        }
        grammar.accept(token);
    }
    chain.accept(token);
    token
}

fn decode_error(e: impl std::fmt::Display) -> BackendError {
    BackendError::Fatal(format!("llama.cpp could not evaluate the prompt: {e}"))
}

impl Backend for LlamaCppBackend {
    fn name(&self) -> &'static str {
        "llama.cpp"
    }

    fn prefill(&mut self, request: &GenerateRequest) -> Result<(), BackendError> {
        let tokens = self.prompt_tokens(request)?;
        self.evaluate(request, &tokens).map(|_| ())
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "slot indices are this cache's own, `common` is at most the prompt's length, and llama.cpp's candidate arrays hold the whole vocabulary"
    )]
    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        let start = Instant::now();
        let tokens = self.prompt_tokens(request)?;
        let mut grammar = match &request.json_schema {
            Some(schema) => Some(self.grammar(schema)?),
            None => None,
        };
        let mut chain = chain(self.model, request);
        let vocab = self.model.vocab();
        let Evaluated {
            slot: i,
            cached: common,
            logits: mut logits_index,
        } = self.evaluate(request, &tokens)?;
        let n_ctx = usize::try_from(self.slots[i].n_ctx).unwrap_or(usize::MAX);
        let slot = &mut self.slots[i];
        let mut batch = LlamaBatch::new(BATCH, 1);

        let mut stream = TextStream::new(&request.sampling.stop);
        let mut first_token = None;
        let mut tokens_out = 0u32;
        let budget = request
            .sampling
            .max_tokens
            .min(u32::try_from(n_ctx - tokens.len()).unwrap_or(u32::MAX));
        let finish = loop {
            let token = sample(&slot.ctx, logits_index, &mut chain, grammar.as_mut());
            if vocab.is_eog(token) {
                break FinishReason::Stop;
            }
            tokens_out += 1;
            first_token.get_or_insert_with(|| start.elapsed());
            let piece = stream.push_bytes(&vocab.token_to_piece(token, false, None));
            if !piece.is_empty() && !on_token(&piece) {
                return Err(BackendError::Cancelled);
            }
            if stream.stopped() {
                break FinishReason::StopString;
            }
            if tokens_out >= budget {
                break FinishReason::Length;
            }
            batch.clear();
            let pos = i32::try_from(slot.tokens.len()).unwrap_or(i32::MAX);
            batch.add(token, pos, &[0], true).map_err(decode_error)?;
            if let Err(e) = slot.ctx.decode(&mut batch) {
                slot.ctx.clear_kv_cache();
                slot.tokens.clear();
                return Err(decode_error(e));
            }
            slot.tokens.push(token);
            logits_index = 0;
        };
        let rest = stream.finish();
        if !rest.is_empty() {
            on_token(&rest);
        }
        Ok(Generated {
            text: stream.into_text(),
            finish,
            usage: Usage {
                tokens_in: u32::try_from(tokens.len()).unwrap_or(u32::MAX),
                tokens_out,
                cached_tokens: u32::try_from(common).unwrap_or(u32::MAX),
                time_to_first_token: first_token.unwrap_or_else(|| start.elapsed()),
                total: start.elapsed(),
            },
        })
    }
}

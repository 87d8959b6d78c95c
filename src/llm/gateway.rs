//! The gateway: renders a stage's prompt, runs it on the model a key names (one
//! worker thread per backend natively; in the browser each call is a task of
//! the page, streamed with `fetch`), streams tokens over a channel, enforces
//! the stage's output contract with seed 003's policy, and records the call.
//!
//! Structured stages: invalid output → one repair prompt (`prompts/repair/`)
//! with the invalid output and the validation errors → one full retry with the
//! next seed → [`LlmError::InvalidOutput`] naming stage, model key and reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use web_time::Instant;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{Value, json};

use super::backend::{
    Backend, BackendError, Generate, GenerateRequest, Message, Sampling, SamplingOverride,
};
use super::config::{BackendConfig, ModelsConfig};
use super::contract::Contract;
use super::prompts::PromptRegistry;
use super::record::{Attempt, AttemptKind, CallRecord, now_seconds};
use super::scripted::{Script, ScriptedBackend};

/// The stage whose prompt repairs invalid structured output.
pub const REPAIR_STAGE: &str = "repair";

/// Extra validation a caller adds on top of the schema (e.g. "character ids exist").
pub type Check = Arc<dyn Fn(&Value) -> Result<(), Vec<String>> + Send + Sync>;

/// One call of a stage.
#[derive(Clone)]
pub struct CallRequest {
    pub stage: String,
    /// The pinned prompt version (the newest when `None`).
    pub version: Option<String>,
    /// The template's variables.
    pub vars: Value,
    pub model_key: String,
    /// Per-call sampling (seed, max tokens …) over the model's and stage's defaults.
    pub sampling: SamplingOverride,
    /// KV-cache slot (default: the stage name).
    pub cache_slot: Option<String>,
    /// An output contract instead of the stage's own.
    pub contract: Option<Contract>,
    /// Extra validation after the schema.
    pub check: Option<Check>,
    /// Narrow parts of the stage's contract for this call: the subschema at each
    /// JSON pointer into the instance (`/check`, `/items/stat`, `/state_ops/items`)
    /// is replaced by the one given (its `description` kept), so constrained
    /// decoding can only produce what fits it (`/check` → the ruleset's check ids).
    pub narrowing: Vec<(String, Value)>,
    /// Sample a prose stage in as many drafts as the model's `drafts` says and
    /// answer with all of them (a JSON array of strings, in seed order) when
    /// that is more than one; the caller keeps the best. Drafts never stream.
    pub drafts: bool,
    /// Bookkeeping (extractors, the lore keeper): run on the key's second lane
    /// when it has one (`lanes` in models.ron), beside what the player waits for.
    pub background: bool,
}

impl std::fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRequest")
            .field("stage", &self.stage)
            .field("version", &self.version)
            .field("model_key", &self.model_key)
            .finish_non_exhaustive()
    }
}

impl CallRequest {
    pub fn new(stage: impl Into<String>, model_key: impl Into<String>, vars: Value) -> Self {
        Self {
            stage: stage.into(),
            version: None,
            vars,
            model_key: model_key.into(),
            sampling: SamplingOverride::default(),
            cache_slot: None,
            contract: None,
            check: None,
            narrowing: Vec::new(),
            background: false,
            drafts: false,
        }
    }

    /// Ask for the model's drafts (see [`CallRequest::drafts`]).
    pub fn drafted(mut self) -> Self {
        self.drafts = true;
        self
    }

    /// Allow only `values` at `pointer` (see [`CallRequest::narrowing`]).
    pub fn allow(self, pointer: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        let values: Vec<Value> = values.into_iter().map(Into::into).collect();
        self.narrow(pointer, serde_json::json!({ "enum": values }))
    }

    /// Run on the key's background lane (see [`CallRequest::background`]).
    #[must_use]
    pub fn in_background(mut self) -> Self {
        self.background = true;
        self
    }

    /// Replace the contract's subschema at `pointer` with `schema` for this call
    /// (see [`CallRequest::narrowing`]).
    pub fn narrow(mut self, pointer: &str, schema: Value) -> Self {
        self.narrowing.push((pointer.to_owned(), schema));
        self
    }

    /// Set `keywords` on the contract's subschema at `pointer` for this call,
    /// keeping the rest of it (`minItems` on a list).
    pub fn tighten(mut self, pointer: &str, keywords: Value) -> Self {
        let mut keywords = keywords;
        if let Some(obj) = keywords.as_object_mut() {
            obj.insert(super::contract::KEEP.to_owned(), Value::Bool(true));
        }
        self.narrowing.push((pointer.to_owned(), keywords));
        self
    }

    pub fn seed(mut self, seed: u32) -> Self {
        self.sampling.seed = Some(seed);
        self
    }

    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
}

/// Why a call produced no accepted output.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LlmError {
    #[error("stage `{stage}`: {message}")]
    Setup { stage: String, message: String },
    #[error("stage `{stage}` on model `{model_key}` failed: {reason}")]
    Backend {
        stage: String,
        model_key: String,
        reason: String,
        /// The backend called it temporary (a timeout, a refused connection, a 5xx).
        transient: bool,
    },
    #[error(
        "stage `{stage}` on model `{model_key}` gave invalid output after a repair and a retry: {reason}"
    )]
    InvalidOutput {
        stage: String,
        model_key: String,
        reason: String,
    },
    #[error("stage `{stage}` was cancelled")]
    Cancelled { stage: String },
}

impl LlmError {
    /// Whether trying the same call again may succeed (seed 003: transient model errors).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Backend {
                transient: true,
                ..
            }
        )
    }
}

/// A call's result and its record.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    pub result: Result<Value, LlmError>,
    pub record: CallRecord,
}

/// What a call reports while it runs.
#[derive(Clone, Debug)]
pub enum LlmEvent {
    /// An attempt began (the UI clears its streamed text on a repair or retry).
    AttemptStarted(AttemptKind),
    /// Streamed text.
    Token(String),
    /// The call ended.
    Finished(Box<CallOutcome>),
}

/// The caller's end of a call: poll it (the frame never blocks) or wait on it.
#[derive(Debug)]
pub struct CallHandle {
    pub id: u64,
    pub stage: String,
    rx: Receiver<LlmEvent>,
    cancel: Arc<AtomicBool>,
}

impl CallHandle {
    /// Events that have arrived, without blocking.
    pub fn poll(&self) -> Vec<LlmEvent> {
        self.rx.try_iter().collect()
    }

    /// Asks the worker to stop this call at the next token.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Blocks until the call ends, passing streamed text to `on_token`.
    pub fn wait_streaming(self, mut on_token: impl FnMut(&str)) -> CallOutcome {
        for event in &self.rx {
            match event {
                LlmEvent::Token(t) => on_token(&t),
                LlmEvent::AttemptStarted(_) => {}
                LlmEvent::Finished(outcome) => return *outcome,
            }
        }
        self.stopped()
    }

    /// The channel the call's events arrive on (to wait on several calls at
    /// once with `crossbeam_channel::Select`).
    pub fn events(&self) -> &Receiver<LlmEvent> {
        &self.rx
    }

    /// The outcome of a call whose worker went away before it finished.
    pub fn stopped(&self) -> CallOutcome {
        CallOutcome {
            result: Err(LlmError::Setup {
                stage: self.stage.clone(),
                message: "the model worker stopped unexpectedly".into(),
            }),
            record: CallRecord {
                stage: self.stage.clone(),
                prompt_id: String::new(),
                prompt_version: String::new(),
                model_key: String::new(),
                backend: String::new(),
                contract: None,
                attempts: Vec::new(),
                output: None,
                error: Some("the model worker stopped unexpectedly".into()),
                started_at: 0.0,
                total: std::time::Duration::ZERO,
            },
        }
    }

    /// Blocks until the call ends.
    pub fn wait(self) -> CallOutcome {
        self.wait_streaming(|_| {})
    }
}

type BackendFactory = Box<dyn FnOnce() -> Result<Box<dyn Backend>, BackendError> + Send>;

struct Job {
    id: u64,
    model_key: String,
    /// Runs on the key's background lane (see [`CallRequest::background`]);
    /// in the browser the server schedules.
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    background: bool,
    stage: String,
    version: String,
    messages: Vec<Message>,
    sampling: Sampling,
    cache_slot: String,
    contract: Option<Contract>,
    check: Option<Check>,
    /// Samples to answer with (more than one only for prose stages that asked).
    drafts: u32,
    prompts: Arc<PromptRegistry>,
    events: Sender<LlmEvent>,
    cancel: Arc<AtomicBool>,
}

impl Job {
    /// What the backend is asked: `messages` under `sampling`, decoded to the
    /// job's contract, in `cache_slot`.
    fn request(
        &self,
        prompt_id: String,
        messages: Vec<Message>,
        sampling: Sampling,
        cache_slot: &str,
    ) -> GenerateRequest {
        GenerateRequest {
            stage: self.stage.clone(),
            prompt_id,
            messages,
            sampling,
            json_schema: self.contract.as_ref().map(|c| c.schema().clone()),
            cache_slot: cache_slot.to_owned(),
        }
    }
}

/// A worker's work (the browser has no workers: only `Stop` is sent there, to none).
#[cfg_attr(target_family = "wasm", allow(dead_code))]
enum Work {
    Call(Box<Job>),
    /// Read a prompt into the model's cache and answer nothing ([`Gateway::prime`]).
    Prime(Box<Job>, Sender<()>),
    /// Load the model now (so the first turn does not wait for it).
    Warm,
    /// Drop what waits, free the model and end the thread (the gateway is dropped).
    Stop,
}

/// How long dropping a gateway waits for its workers to finish what they
/// are running and free their models.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The one way Loreloom calls a model.
pub struct Gateway {
    prompts: Arc<PromptRegistry>,
    schemas_dir: PathBuf,
    models: ModelsConfig,
    data_dir: PathBuf,
    workers: Mutex<HashMap<String, Sender<Work>>>,
    registered: Mutex<HashMap<String, BackendFactory>>,
    /// Lanes of registered keys that have more than one.
    registered_lanes: Mutex<HashMap<String, u32>>,
    contracts: Mutex<HashMap<String, Contract>>,
    /// Draft counts set per key over `models.ron`'s (scripts, replay).
    drafts: Mutex<HashMap<String, u32>>,
    /// Prompt versions pinned per stage for calls that pin none (benches
    /// comparing versions).
    pins: Mutex<HashMap<String, String>>,
    next_id: AtomicU64,
    /// Each worker says here when it has ended and freed its model.
    stopped: (Sender<()>, Receiver<()>),
}

impl Drop for Gateway {
    /// Workers end before the process does: a model freed by the process's
    /// exit while a worker still evaluates a prompt (a prime after the last
    /// turn) crashed the exit. Waits at most [`STOP_WAIT`].
    fn drop(&mut self) {
        let workers = std::mem::take(
            &mut *self
                .workers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let running = workers
            .values()
            .filter(|tx| tx.send(Work::Stop).is_ok())
            .count();
        let deadline = Instant::now() + STOP_WAIT;
        for _ in 0..running {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.stopped.1.recv_timeout(left).is_err() {
                tracing::warn!("a model worker did not stop within {STOP_WAIT:?}");
                return;
            }
        }
        tracing::debug!("{running} model worker(s) stopped");
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("prompts", &self.prompts.root())
            .field("models", &self.models.models.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    pub fn new(
        prompts: PromptRegistry,
        schemas_dir: impl Into<PathBuf>,
        models: ModelsConfig,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            prompts: Arc::new(prompts),
            schemas_dir: schemas_dir.into(),
            models,
            data_dir: data_dir.into(),
            workers: Mutex::new(HashMap::new()),
            registered: Mutex::new(HashMap::new()),
            registered_lanes: Mutex::new(HashMap::new()),
            contracts: Mutex::new(HashMap::new()),
            drafts: Mutex::new(HashMap::new()),
            pins: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            stopped: crossbeam_channel::unbounded(),
        }
    }

    /// The gateway as the game uses it: `prompts/` and `schemas/` shipped with
    /// Loreloom, `models.ron` from the player's data dir.
    pub fn standard() -> Result<Self, String> {
        let data_dir = crate::files::data_dir();
        let prompts = PromptRegistry::load(crate::files::resource_dir("prompts"))
            .map_err(|e| e.to_string())?;
        let models = ModelsConfig::load(&data_dir).map_err(|e| e.to_string())?;
        Ok(Self::new(
            prompts,
            crate::files::resource_dir("schemas"),
            models,
            data_dir,
        ))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn prompts(&self) -> &PromptRegistry {
        &self.prompts
    }

    pub fn models(&self) -> &ModelsConfig {
        &self.models
    }

    /// Serves `model_key` with a backend built by `factory` (on the worker thread)
    /// instead of what `models.ron` says: for tests and replay.
    pub fn register_backend(
        &self,
        model_key: impl Into<String>,
        factory: impl FnOnce() -> Result<Box<dyn Backend>, BackendError> + Send + 'static,
    ) {
        let key = model_key.into();
        if let Ok(mut workers) = self.workers.lock() {
            workers.remove(&format!("registered:{key}"));
        }
        if let Ok(mut registered) = self.registered.lock() {
            registered.insert(key, Box::new(factory));
        }
    }

    /// Serves `model_key` on `lanes` workers (see [`ModelConfig::lanes`]), each
    /// with its own backend from `factory`: for tests of the parallel schedule.
    ///
    /// [`ModelConfig::lanes`]: super::config::ModelConfig::lanes
    pub fn register_lanes(
        &self,
        model_key: impl Into<String>,
        lanes: u32,
        factory: impl Fn() -> Result<Box<dyn Backend>, BackendError> + Send + Sync + 'static,
    ) {
        let key = model_key.into();
        let factory = Arc::new(factory);
        if lanes > 1 {
            let second = Arc::clone(&factory);
            self.register_backend(format!("{key}#background"), move || second());
        }
        self.register_backend(key.clone(), move || factory());
        if let Ok(mut map) = self.registered_lanes.lock() {
            map.insert(key, lanes.max(1));
        }
    }

    /// Serves `model_key` from a reply script, one reply per call: a script
    /// writes one draft (see [`Gateway::set_drafts`]).
    pub fn register_script(&self, model_key: impl Into<String>, backend: ScriptedBackend) {
        let key = model_key.into();
        self.set_drafts(&key, 1);
        self.register_backend(key, move || Ok(Box::new(backend) as Box<dyn Backend>));
    }

    /// Calls to `model_key` that ask for drafts get `drafts` of them, whatever
    /// `models.ron` says (replay sets what the turn recorded).
    pub fn set_drafts(&self, model_key: &str, drafts: u32) {
        if let Ok(mut map) = self.drafts.lock() {
            map.insert(model_key.to_owned(), drafts.max(1));
        }
    }

    /// Calls of `stage` that pin no prompt version get `version` (not the
    /// newest): a bench measures an older prompt against the newest this way.
    pub fn pin_version(&self, stage: &str, version: &str) {
        if let Ok(mut map) = self.pins.lock() {
            map.insert(stage.to_owned(), version.to_owned());
        }
    }

    /// How many drafts a call to `model_key` that asks for them gets.
    pub fn drafts_for(&self, model_key: &str) -> u32 {
        let set = self
            .drafts
            .lock()
            .ok()
            .and_then(|map| map.get(model_key).copied());
        set.or_else(|| self.models.models.get(model_key).map(|m| m.drafts))
            .unwrap_or(1)
            .max(1)
    }

    /// Loads `model_key`'s model in the background (in the browser the
    /// server has loaded it already).
    #[cfg(target_family = "wasm")]
    pub fn warm(&self, model_key: &str) -> Result<(), LlmError> {
        let _ = model_key;
        Ok(())
    }

    /// Loads `model_key`'s model in the background.
    #[cfg(not(target_family = "wasm"))]
    pub fn warm(&self, model_key: &str) -> Result<(), LlmError> {
        for background in [false, true] {
            if background && self.lanes(model_key) < 2 {
                break;
            }
            let worker = self
                .worker(model_key, background)
                .map_err(|message| LlmError::Setup {
                    stage: "warm-up".into(),
                    message,
                })?;
            let _ = worker.send(Work::Warm);
        }
        Ok(())
    }

    /// The output contract of a stage, loaded once.
    pub fn contract(&self, relative: &str) -> Result<Contract, String> {
        let mut contracts = self.contracts.lock().map_err(|e| e.to_string())?;
        if let Some(c) = contracts.get(relative) {
            return Ok(c.clone());
        }
        let contract = Contract::load(&self.schemas_dir, relative).map_err(|e| e.to_string())?;
        contracts.insert(relative.to_owned(), contract.clone());
        Ok(contract)
    }

    /// Reads `request`'s prompt into its model's prompt cache, behind the calls
    /// already sent to that lane, and answers nothing: no record, no events,
    /// nothing to replay. A later call whose prompt starts alike (the same
    /// stage and cache slot) evaluates only what differs, so a session primes
    /// the next turn's prompts while the player reads (#21). What cannot be
    /// primed (a setup problem, a backend without a cache) is skipped quietly;
    /// the call itself will say what is wrong. The receiver hears once when
    /// the worker is done with it.
    pub fn prime(&self, request: CallRequest) -> Receiver<()> {
        let (done, heard) = crossbeam_channel::bounded(1);
        let (events, _) = crossbeam_channel::unbounded();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        match self.prepare(id, request, events, Arc::new(AtomicBool::new(false))) {
            Ok(job) => self.dispatch_prime(job, done),
            Err(_) => {
                let _ = done.send(());
            }
        }
        heard
    }

    /// Starts a call. Never blocks on the model: poll or wait on the handle.
    pub fn call(&self, request: CallRequest) -> CallHandle {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = crossbeam_channel::unbounded();
        let cancel = Arc::new(AtomicBool::new(false));
        let handle = CallHandle {
            id,
            stage: request.stage.clone(),
            rx,
            cancel: cancel.clone(),
        };
        if let Err((stage, key, message)) = self
            .prepare(id, request, tx.clone(), cancel)
            .and_then(|job| self.dispatch(job))
        {
            let _ = tx.send(finished_early(&stage, &key, message));
        }
        handle
    }

    fn prepare(
        &self,
        id: u64,
        request: CallRequest,
        events: Sender<LlmEvent>,
        cancel: Arc<AtomicBool>,
    ) -> Result<Box<Job>, (String, String, String)> {
        let fail = |message: String| (request.stage.clone(), request.model_key.clone(), message);
        let info = self
            .prompts
            .stage(&request.stage)
            .map_err(|e| fail(e.to_string()))?;
        // A model that asks for compact prompts gets `compact: true` in every
        // stage's variables (unless the caller set it); templates without a
        // compact form ignore it.
        let compact = self
            .models
            .models
            .get(&request.model_key)
            .is_some_and(|m| m.compact_prompts);
        let drafts = if request.drafts {
            self.drafts_for(&request.model_key)
        } else {
            1
        };
        let mut vars = request.vars.clone();
        if let Some(map) = vars.as_object_mut() {
            map.entry("compact").or_insert(compact.into());
        }
        let pinned = request.version.clone().or_else(|| {
            self.pins
                .lock()
                .ok()
                .and_then(|m| m.get(&request.stage).cloned())
        });
        let rendered = self
            .prompts
            .render(&request.stage, pinned.as_deref(), &vars)
            .map_err(|e| fail(e.to_string()))?;
        let mut contract = match (&request.contract, &info.contract) {
            (Some(c), _) => Some(c.clone()),
            (None, Some(file)) => Some(self.contract(file).map_err(fail)?),
            (None, None) => None,
        };
        let mut narrowing: Vec<(String, Value)> = Vec::new();
        if compact {
            narrowing.extend(
                info.compact_narrowing
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
        }
        narrowing.extend(request.narrowing.iter().cloned());
        if let Some(c) = &contract
            && !narrowing.is_empty()
        {
            contract = Some(c.narrowed(&narrowing).map_err(|e| fail(e.to_string()))?);
        }
        let model_sampling = self
            .models
            .models
            .get(&request.model_key)
            .map(|m| m.sampling.clone())
            .unwrap_or_default();
        let sampling = Sampling::default()
            .merged(&model_sampling.then(&info.sampling).then(&request.sampling));
        let job = Job {
            id,
            model_key: request.model_key.clone(),
            background: request.background,
            stage: request.stage.clone(),
            version: rendered.version,
            messages: rendered.messages,
            sampling,
            cache_slot: request
                .cache_slot
                .clone()
                .unwrap_or_else(|| request.stage.clone()),
            contract,
            check: request.check.clone(),
            drafts,
            prompts: self.prompts.clone(),
            events,
            cancel,
        };
        Ok(Box::new(job))
    }

    /// Hands a call to the worker of the lane that serves its key.
    #[cfg(not(target_family = "wasm"))]
    fn dispatch(&self, job: Box<Job>) -> Result<(), (String, String, String)> {
        let (stage, key) = (job.stage.clone(), job.model_key.clone());
        let worker = self
            .worker(&job.model_key, job.background)
            .map_err(|m| (stage.clone(), key.clone(), m))?;
        worker.send(Work::Call(job)).map_err(|_| {
            let message = "the model worker has stopped".to_owned();
            (stage, key, message)
        })
    }

    /// Hands a prime to its lane's worker, behind the calls sent to it.
    #[cfg(not(target_family = "wasm"))]
    fn dispatch_prime(&self, job: Box<Job>, done: Sender<()>) {
        let Ok(worker) = self.worker(&job.model_key, job.background) else {
            let _ = done.send(());
            return;
        };
        if let Err(failed) = worker.send(Work::Prime(job, done))
            && let Work::Prime(_, done) = failed.0
        {
            let _ = done.send(());
        }
    }

    /// In the browser the server keeps its own prompt cache: nothing to prime.
    #[cfg(target_family = "wasm")]
    fn dispatch_prime(&self, job: Box<Job>, done: Sender<()>) {
        drop(job);
        let _ = done.send(());
    }

    /// Runs a call as a task of the page: the browser has no threads to block,
    /// and the model is a server the page streams from with `fetch` (the
    /// server queues what it cannot run at once).
    #[cfg(target_family = "wasm")]
    fn dispatch(&self, job: Box<Job>) -> Result<(), (String, String, String)> {
        let fail = |m: String| (job.stage.clone(), job.model_key.clone(), m);
        let model = self
            .models
            .get(&job.model_key, &self.data_dir)
            .map_err(|e| fail(e.to_string()))?;
        let mut backend =
            super::fetch::FetchBackend::open(&model.backend).map_err(|e| fail(e.to_string()))?;
        super::fetch::spawn(async move {
            run_call(&mut backend, *job).await;
        });
        Ok(())
    }

    /// How many calls `model_key` runs at once (`lanes` in models.ron; 1 for
    /// registered backends: scripts answer in the order they are asked).
    pub fn lanes(&self, model_key: &str) -> u32 {
        if let Some(lanes) = self
            .registered_lanes
            .lock()
            .ok()
            .and_then(|m| m.get(model_key).copied())
        {
            return lanes;
        }
        let registered = self
            .registered
            .lock()
            .is_ok_and(|r| r.contains_key(model_key))
            || self
                .workers
                .lock()
                .is_ok_and(|w| w.contains_key(&format!("registered:{model_key}")));
        if registered {
            return 1;
        }
        // A script file is read once, in order: one lane.
        self.models
            .get(model_key, &self.data_dir)
            .map_or(1, |m| match m.backend {
                BackendConfig::Scripted { .. } => 1,
                _ => m.lanes.max(1),
            })
    }

    /// The worker serving `model_key`, started on first use. Keys with the same
    /// backend configuration share one worker (and one loaded model); a key
    /// with two `lanes` has a second worker for `background` calls, with its own
    /// contexts over the same loaded model.
    #[cfg(not(target_family = "wasm"))]
    fn worker(&self, model_key: &str, background: bool) -> Result<Sender<Work>, String> {
        let lane_key = if background && self.lanes(model_key) > 1 {
            format!("{model_key}#background")
        } else {
            model_key.to_owned()
        };
        let registered = self
            .registered
            .lock()
            .map_err(|e| e.to_string())?
            .remove(&lane_key);
        let (identity, factory): (String, Option<BackendFactory>) =
            if let Some(factory) = registered {
                (format!("registered:{lane_key}"), Some(factory))
            } else if self
                .workers
                .lock()
                .map_err(|e| e.to_string())?
                .contains_key(&format!("registered:{lane_key}"))
            {
                (format!("registered:{lane_key}"), None)
            } else {
                let model = self
                    .models
                    .get(model_key, &self.data_dir)
                    .map_err(|e| e.to_string())?;
                let config = model.backend.clone();
                let mut identity = serde_json::to_string(&config).unwrap_or_default();
                if lane_key != model_key {
                    identity.push_str("#background");
                }
                let data_dir = self.data_dir.clone();
                (
                    identity,
                    Some(Box::new(move || open_backend(&config, &data_dir)) as BackendFactory),
                )
            };
        let mut workers = self.workers.lock().map_err(|e| e.to_string())?;
        if let Some(tx) = workers.get(&identity) {
            return Ok(tx.clone());
        }
        let factory = factory.ok_or_else(|| format!("no backend for model `{model_key}`"))?;
        let (tx, rx) = crossbeam_channel::unbounded::<Work>();
        let stopped = self.stopped.0.clone();
        std::thread::Builder::new()
            .name(format!("llm-{model_key}"))
            .spawn(move || {
                worker_loop(factory, rx);
                let _ = stopped.send(());
            })
            .map_err(|e| format!("cannot start the model worker: {e}"))?;
        workers.insert(identity, tx.clone());
        Ok(tx)
    }
}

/// Builds the backend a configuration names (on the worker thread).
pub fn open_backend(
    config: &BackendConfig,
    data_dir: &Path,
) -> Result<Box<dyn Backend>, BackendError> {
    match config {
        #[cfg(feature = "llama")]
        BackendConfig::Llama {
            context,
            threads,
            slots,
            lora_stages,
            ..
        } => {
            let path = config.model_path(data_dir).unwrap_or_default();
            let adapter = config.adapter_path(data_dir);
            let threads = threads.unwrap_or_else(super::config::default_threads);
            Ok(Box::new(
                super::llama::LlamaCppBackend::open_with(
                    &path,
                    adapter.as_deref(),
                    *context,
                    threads,
                    *slots,
                )?
                .with_adapter_stages(lora_stages.clone()),
            ))
        }
        #[cfg(not(feature = "llama"))]
        BackendConfig::Llama { .. } => Err(BackendError::Fatal(
            "this build of Loreloom has no in-process llama.cpp (feature `llama`); use an OpenAI-compatible server model key".into(),
        )),
        #[cfg(feature = "http")]
        BackendConfig::OpenAi {
            url,
            model,
            api_key_env,
            timeout_secs,
            retries,
        } => Ok(Box::new(super::openai::OpenAiBackend::new(
            url,
            model,
            api_key_env.as_deref(),
            std::time::Duration::from_secs(*timeout_secs),
            *retries,
        )?)),
        #[cfg(not(feature = "http"))]
        BackendConfig::OpenAi { .. } => Err(BackendError::Fatal(
            "this build of Loreloom has no HTTP model backend (feature `http`)".into(),
        )),
        BackendConfig::Scripted { file } => {
            let path = if file.is_absolute() { file.clone() } else { data_dir.join(file) };
            Ok(Box::new(ScriptedBackend::new(
                Script::load(&path).map_err(BackendError::Fatal)?,
            )))
        }
    }
}

fn finished_early(stage: &str, model_key: &str, message: String) -> LlmEvent {
    LlmEvent::Finished(Box::new(CallOutcome {
        result: Err(LlmError::Setup {
            stage: stage.to_owned(),
            message: message.clone(),
        }),
        record: CallRecord {
            stage: stage.to_owned(),
            prompt_id: String::new(),
            prompt_version: String::new(),
            model_key: model_key.to_owned(),
            backend: String::new(),
            contract: None,
            attempts: Vec::new(),
            output: None,
            error: Some(message),
            started_at: now_seconds(),
            total: std::time::Duration::ZERO,
        },
    }))
}

#[cfg(not(target_family = "wasm"))]
fn worker_loop(factory: BackendFactory, rx: Receiver<Work>) {
    let mut factory = Some(factory);
    let mut backend: Option<Result<Box<dyn Backend>, BackendError>> = None;
    let mut pending: std::collections::VecDeque<Work> = std::collections::VecDeque::new();
    loop {
        if pending.is_empty() {
            match rx.recv() {
                Ok(work) => pending.push_back(work),
                Err(_) => break,
            }
        }
        pending.extend(rx.try_iter());
        // Stopping: what waits is dropped (its callers see the channel close)
        // and the model is freed on the way out.
        if pending.iter().any(|w| matches!(w, Work::Stop)) {
            break;
        }
        // A call waiting means the player has moved: what was primed for that
        // move is no use now, and must not keep the call waiting.
        if pending.iter().any(|w| matches!(w, Work::Call(_))) {
            pending.retain(|w| match w {
                Work::Prime(_, done) => {
                    let _ = done.send(());
                    false
                }
                _ => true,
            });
        }
        let Some(work) = pending.pop_front() else {
            continue;
        };
        let loaded = backend.get_or_insert_with(|| match factory.take() {
            Some(f) => f(),
            None => Err(BackendError::Fatal("no backend".into())),
        });
        let job = match work {
            Work::Call(job) => job,
            Work::Prime(job, done) => {
                if let Ok(backend) = loaded {
                    let request = job.request(
                        format!("{}@{}", job.stage, job.version),
                        job.messages.clone(),
                        job.sampling.clone(),
                        &job.cache_slot,
                    );
                    if let Err(e) = backend.prefill(&request) {
                        tracing::debug!("priming `{}` failed: {e}", job.stage);
                    }
                }
                let _ = done.send(());
                continue;
            }
            Work::Warm | Work::Stop => continue,
        };
        match loaded {
            Ok(backend) => futures_lite::future::block_on(run_call(
                &mut super::backend::Blocking(backend.as_mut()),
                *job,
            )),
            Err(e) => {
                let _ = job.events.send(finished_early(
                    &job.stage,
                    &job.model_key,
                    format!("model `{}` could not be loaded: {e}", job.model_key),
                ));
            }
        }
    }
}

/// Runs one call with the repair → retry policy.
async fn run_call<B: Generate>(backend: &mut B, job: Job) {
    let started = Instant::now();
    let mut record = CallRecord {
        stage: job.stage.clone(),
        prompt_id: format!("{}@{}", job.stage, job.version),
        prompt_version: job.version.clone(),
        model_key: job.model_key.clone(),
        backend: backend.name().to_owned(),
        contract: job.contract.as_ref().map(|c| c.name().to_owned()),
        attempts: Vec::new(),
        output: None,
        error: None,
        started_at: now_seconds(),
        total: std::time::Duration::ZERO,
    };
    let result = policy(backend, &job, &mut record).await;
    record.total = started.elapsed();
    match &result {
        Ok(value) => record.output = Some(value.clone()),
        Err(e) => record.error = Some(e.to_string()),
    }
    tracing::debug!(call = job.id, "{}", record.summary());
    let _ = job
        .events
        .send(LlmEvent::Finished(Box::new(CallOutcome { result, record })));
}

async fn policy<B: Generate>(
    backend: &mut B,
    job: &Job,
    record: &mut CallRecord,
) -> Result<Value, LlmError> {
    if job.drafts > 1 && job.contract.is_none() {
        let mut drafts = Vec::new();
        for k in 0..job.drafts {
            let mut sampling = job.sampling.clone();
            sampling.seed = sampling.seed.wrapping_add(k);
            let text = attempt(
                backend,
                job,
                record,
                AttemptKind::Draft,
                job.messages.clone(),
                &sampling,
                &job.cache_slot,
            )
            .await?;
            drafts.push(Value::String(text));
        }
        return Ok(Value::Array(drafts));
    }
    let first = attempt(
        backend,
        job,
        record,
        AttemptKind::First,
        job.messages.clone(),
        &job.sampling,
        &job.cache_slot,
    )
    .await?;
    let Some(contract) = &job.contract else {
        return Ok(Value::String(first));
    };
    let errors = match validate(contract, job.check.as_ref(), &first) {
        Ok(v) => return Ok(v),
        Err(errors) => errors,
    };
    set_errors(record, &errors);

    // 1. One repair prompt with the invalid output and what is wrong with it.
    let repair_vars = json!({
        "stage": job.stage,
        "contract": serde_json::to_string_pretty(contract.schema()).unwrap_or_default(),
        "output": first,
        "errors": errors,
    });
    let errors = match job.prompts.render(REPAIR_STAGE, None, &repair_vars) {
        Ok(repair) => {
            let repair_id = repair.id();
            let text = attempt(
                backend,
                job,
                record,
                AttemptKind::Repair,
                repair.messages,
                &job.sampling,
                REPAIR_STAGE,
            )
            .await?;
            if let Some(a) = record.attempts.last_mut() {
                a.prompt_id = repair_id;
            }
            match validate(contract, job.check.as_ref(), &text) {
                Ok(v) => return Ok(v),
                Err(errors) => errors,
            }
        }
        Err(e) => vec![format!("the repair prompt could not be rendered: {e}")],
    };
    set_errors(record, &errors);

    // 2. One full retry of the stage with the next seed.
    let mut sampling = job.sampling.clone();
    sampling.seed = sampling.seed.wrapping_add(1);
    let text = attempt(
        backend,
        job,
        record,
        AttemptKind::Retry,
        job.messages.clone(),
        &sampling,
        &job.cache_slot,
    )
    .await?;
    match validate(contract, job.check.as_ref(), &text) {
        Ok(v) => Ok(v),
        Err(errors) => {
            set_errors(record, &errors);
            Err(LlmError::InvalidOutput {
                stage: job.stage.clone(),
                model_key: job.model_key.clone(),
                reason: errors.join("; "),
            })
        }
    }
}

fn set_errors(record: &mut CallRecord, errors: &[String]) {
    if let Some(a) = record.attempts.last_mut() {
        a.errors = errors.to_vec();
    }
}

fn validate(contract: &Contract, check: Option<&Check>, text: &str) -> Result<Value, Vec<String>> {
    let value = contract.check(text)?;
    if let Some(check) = check {
        check(&value)?;
    }
    Ok(value)
}

async fn attempt<B: Generate>(
    backend: &mut B,
    job: &Job,
    record: &mut CallRecord,
    kind: AttemptKind,
    messages: Vec<Message>,
    sampling: &Sampling,
    cache_slot: &str,
) -> Result<String, LlmError> {
    let _ = job.events.send(LlmEvent::AttemptStarted(kind));
    let request = job.request(
        record.prompt_id.clone(),
        messages,
        sampling.clone(),
        cache_slot,
    );
    let events = job.events.clone();
    let cancel = job.cancel.clone();
    let mut on_token = |t: &str| {
        if kind != AttemptKind::Draft {
            let _ = events.send(LlmEvent::Token(t.to_owned()));
        }
        !cancel.load(Ordering::Relaxed)
    };
    let outcome = backend.generate(&request, &mut on_token).await;
    let mut entry = Attempt {
        kind,
        prompt_id: record.prompt_id.clone(),
        messages: request.messages,
        sampling: request.sampling,
        raw_output: String::new(),
        finish: None,
        errors: Vec::new(),
        tokens_in: 0,
        tokens_out: 0,
        cached_tokens: 0,
        time_to_first_token: std::time::Duration::ZERO,
        total: std::time::Duration::ZERO,
    };
    match outcome {
        Ok(generated) => {
            entry.raw_output.clone_from(&generated.text);
            entry.finish = Some(generated.finish);
            entry.tokens_in = generated.tokens_in;
            entry.tokens_out = generated.tokens_out;
            entry.cached_tokens = generated.cached_tokens;
            entry.time_to_first_token = generated.time_to_first_token;
            entry.total = generated.total;
            record.attempts.push(entry);
            Ok(generated.text)
        }
        Err(e) => {
            entry.errors = vec![e.to_string()];
            record.attempts.push(entry);
            Err(match e {
                BackendError::Cancelled => LlmError::Cancelled {
                    stage: job.stage.clone(),
                },
                other => LlmError::Backend {
                    stage: job.stage.clone(),
                    model_key: job.model_key.clone(),
                    transient: matches!(other, BackendError::Transient(_)),
                    reason: other.to_string(),
                },
            })
        }
    }
}

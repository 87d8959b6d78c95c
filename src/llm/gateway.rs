//! The gateway: the registry of models, prompts and contracts that prepares and dispatches calls.
//!
//! A call's prompt is rendered from `prompts/`, its contract loaded from
//! `schemas/` and narrowed for the call, its sampling merged (model, stage,
//! call), and the prepared [`Job`] handed to the lane that serves its model
//! key: natively a [worker](super::worker) thread per backend and lane; in the
//! browser a task of the page, streamed with `fetch`. Either way the job runs
//! seed 003's [policy](super::policy) and its caller hears over a channel
//! (see [`super::call`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

use super::backend::{Backend, BackendError, Sampling};
use super::config::{BackendConfig, ConfigError, ModelsConfig};
use super::contract::{Contract, ContractError};
use super::policy::Job;
use super::prompts::{PromptError, PromptRegistry, StageInfo};
use super::record::now_seconds;
use super::scripted::ScriptedBackend;
use super::worker::{BackendFactory, Work};

use super::call::{CallHandle, CallOutcome, CallRequest, LlmError, LlmEvent};

/// Why the gateway the game uses could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(transparent)]
    Prompts(#[from] PromptError),
    #[error(transparent)]
    Models(#[from] ConfigError),
}

/// Why a call could not be made ready or handed to a lane: its caller gets an
/// [`LlmError::Setup`] saying so.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Contract(#[from] ContractError),
    #[error(transparent)]
    Model(#[from] ConfigError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    #[error("no backend for model `{0}`")]
    NoBackend(String),
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    #[error("cannot start the model worker: {0}")]
    Spawn(std::io::Error),
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    #[error("the model worker has stopped")]
    Stopped,
}

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
    /// Workers end before the process does (see [`super::worker::stop_all`]).
    fn drop(&mut self) {
        let workers =
            std::mem::take(&mut *self.workers.lock().unwrap_or_else(PoisonError::into_inner));
        super::worker::stop_all(workers, &self.stopped.1);
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
    pub fn open() -> Result<Self, GatewayError> {
        let data_dir = crate::files::data_dir();
        let prompts = PromptRegistry::load(crate::files::resource_dir("prompts"))?;
        let models = ModelsConfig::load(&data_dir)?;
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

    /// Calls of `stage` get `version`, whatever version they pin (a session
    /// pins its own): a bench or the evaluation harness measures another
    /// prompt this way.
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
                .map_err(|e| LlmError::Setup {
                    stage: "warm-up".into(),
                    message: e.to_string(),
                })?;
            let _ = worker.send(Work::Warm);
        }
        Ok(())
    }

    /// The output contract of a stage, loaded once.
    pub fn contract(&self, relative: &str) -> Result<Contract, ContractError> {
        let mut contracts = self
            .contracts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = contracts.get(relative) {
            return Ok(c.clone());
        }
        let contract = Contract::load(&self.schemas_dir, relative)?;
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
        let (stage, key) = (request.stage.clone(), request.model_key.clone());
        let handle = CallHandle::new(id, stage.clone(), rx, cancel.clone());
        if let Err(e) = self
            .prepare(id, request, tx.clone(), cancel)
            .and_then(|job| self.dispatch(job))
        {
            let outcome = CallOutcome::setup_failed(&stage, &key, e.to_string(), now_seconds());
            let _ = tx.send(LlmEvent::Finished(Box::new(outcome)));
        }
        handle
    }

    /// Makes `request` ready to run: its prompt rendered (at the version the
    /// call or a bench pins), its contract narrowed, its sampling merged.
    fn prepare(
        &self,
        id: u64,
        request: CallRequest,
        events: Sender<LlmEvent>,
        cancel: Arc<AtomicBool>,
    ) -> Result<Box<Job>, SetupError> {
        let info = self.prompts.stage(&request.stage)?;
        let model = self.models.models.get(&request.model_key);
        // A model that asks for compact prompts gets `compact: true` in every
        // stage's variables (unless the caller set it); templates without a
        // compact form ignore it.
        let compact = model.is_some_and(|m| m.compact_prompts);
        let drafts = if request.drafts {
            self.drafts_for(&request.model_key)
        } else {
            1
        };
        let mut vars = request.vars.clone();
        if let Some(map) = vars.as_object_mut() {
            map.entry("compact").or_insert(compact.into());
        }
        let pinned = self
            .pins
            .lock()
            .ok()
            .and_then(|m| m.get(&request.stage).cloned())
            .or_else(|| request.version.clone());
        let rendered = self
            .prompts
            .render(&request.stage, pinned.as_deref(), &vars)?;
        let contract = self.contract_for(&request, info, compact)?;
        let model_sampling = model.map(|m| m.sampling.clone()).unwrap_or_default();
        let sampling = Sampling::default()
            .merged(&model_sampling.then(&info.sampling).then(&request.sampling));
        let cache_slot = request.cache_slot.unwrap_or_else(|| request.stage.clone());
        let answer_start = if model.is_some_and(|m| m.continues_answers) {
            request.answer_start
        } else {
            String::new()
        };
        Ok(Box::new(Job {
            id,
            model_key: request.model_key,
            background: request.background,
            stage: request.stage,
            version: rendered.version,
            messages: rendered.messages,
            sampling,
            cache_slot,
            contract,
            check: request.check,
            drafts,
            answer_start,
            prompts: self.prompts.clone(),
            events,
            cancel,
        }))
    }

    /// The contract `request` is held to: its own or its stage's, narrowed by
    /// the stage's compact narrowing (for compact models) and the call's own.
    fn contract_for(
        &self,
        request: &CallRequest,
        info: &StageInfo,
        compact: bool,
    ) -> Result<Option<Contract>, SetupError> {
        let contract = match (&request.contract, &info.contract) {
            (Some(c), _) => c.clone(),
            (None, Some(file)) => self.contract(file)?,
            (None, None) => return Ok(None),
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
        if narrowing.is_empty() {
            return Ok(Some(contract));
        }
        Ok(Some(contract.narrowed(&narrowing)?))
    }

    /// Hands a call to the worker of the lane that serves its key.
    #[cfg(not(target_family = "wasm"))]
    fn dispatch(&self, job: Box<Job>) -> Result<(), SetupError> {
        let worker = self.worker(&job.model_key, job.background)?;
        worker
            .send(Work::Call(job))
            .map_err(|_| SetupError::Stopped)
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

    /// In the browser the page's own model is primed as natively (#45): the
    /// prompt is sent to be read, and the page's model reads primers one at a
    /// time while no call waits (`web/model.js`). A setup problem is skipped
    /// quietly; the call itself will say what is wrong.
    #[cfg(target_family = "wasm")]
    fn dispatch_prime(&self, job: Box<Job>, done: Sender<()>) {
        let backend = self
            .models
            .get(&job.model_key, &self.data_dir)
            .ok()
            .and_then(|m| super::fetch::FetchBackend::open(&m.backend).ok());
        let Some(backend) = backend else {
            let _ = done.send(());
            return;
        };
        let request = job.request(
            job.prompt_id(),
            job.messages.clone(),
            job.sampling.clone(),
            &job.cache_slot,
        );
        super::fetch::spawn(async move {
            if let Err(e) = backend.prefill(&request).await {
                tracing::debug!("priming `{}` failed: {e}", request.stage);
            }
            let _ = done.send(());
        });
    }

    /// Runs a call as a task of the page: the browser has no threads to block,
    /// and the model is a server the page streams from with `fetch` (the
    /// server queues what it cannot run at once).
    #[cfg(target_family = "wasm")]
    fn dispatch(&self, job: Box<Job>) -> Result<(), SetupError> {
        let model = self.models.get(&job.model_key, &self.data_dir)?;
        let mut backend = super::fetch::FetchBackend::open(&model.backend)?.on_lane(job.background);
        super::fetch::spawn(async move {
            super::policy::run_call(&mut backend, *job).await;
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
    fn worker(&self, model_key: &str, background: bool) -> Result<Sender<Work>, SetupError> {
        let lane_key = if background && self.lanes(model_key) > 1 {
            format!("{model_key}#background")
        } else {
            model_key.to_owned()
        };
        let registered = self
            .registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&lane_key);
        let (identity, factory): (String, Option<BackendFactory>) =
            if let Some(factory) = registered {
                (format!("registered:{lane_key}"), Some(factory))
            } else if self
                .workers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains_key(&format!("registered:{lane_key}"))
            {
                (format!("registered:{lane_key}"), None)
            } else {
                let model = self.models.get(model_key, &self.data_dir)?;
                let config = model.backend.clone();
                let mut identity = serde_json::to_string(&config).unwrap_or_default();
                if lane_key != model_key {
                    identity.push_str("#background");
                }
                let data_dir = self.data_dir.clone();
                (
                    identity,
                    Some(
                        Box::new(move || super::worker::open_backend(&config, &data_dir))
                            as BackendFactory,
                    ),
                )
            };
        let mut workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = workers.get(&identity) {
            return Ok(tx.clone());
        }
        let factory = factory.ok_or_else(|| SetupError::NoBackend(model_key.to_owned()))?;
        let tx = super::worker::spawn(model_key, factory, self.stopped.0.clone())
            .map_err(SetupError::Spawn)?;
        workers.insert(identity, tx.clone());
        Ok(tx)
    }
}

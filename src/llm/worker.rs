//! The model's worker threads: one per backend lane, each owning its loaded backend.
//!
//! A worker loads its backend on first use (or when warmed), then runs what
//! it is sent in order: calls through the [policy](super::policy), primes
//! into the backend's prompt cache. A call waiting drops the primes queued
//! before it (the player has moved on); stopping drops everything and frees
//! the model before the thread ends. The browser has no workers: its calls
//! are tasks of the page (see [`Gateway`](super::Gateway)), and only
//! [`Work::Stop`] is ever sent there, to none.

use std::collections::HashMap;
#[cfg(not(target_family = "wasm"))]
use std::collections::VecDeque;
use std::path::Path;

use crossbeam_channel::{Receiver, Sender};
use web_time::Instant;

use super::backend::{Backend, BackendError};
use super::config::BackendConfig;
use super::policy::Job;
use super::scripted::{Script, ScriptedBackend};

/// Builds a worker's backend, on the worker's thread.
pub(super) type BackendFactory = Box<dyn FnOnce() -> Result<Box<dyn Backend>, BackendError> + Send>;

/// A worker's work.
#[cfg_attr(target_family = "wasm", allow(dead_code))]
pub(super) enum Work {
    Call(Box<Job>),
    /// Read a prompt into the model's cache and answer nothing ([`Gateway::prime`]).
    ///
    /// [`Gateway::prime`]: super::Gateway::prime
    Prime(Box<Job>, Sender<()>),
    /// Load the model now (so the first turn does not wait for it).
    Warm,
    /// Drop what waits, free the model and end the thread (the gateway is dropped).
    Stop,
}

/// How long dropping a gateway waits for its workers to finish what they
/// are running and free their models.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Starts a worker thread named for `model_key` that builds its backend with
/// `factory`; it says on `stopped` when it has ended and freed its model.
#[cfg(not(target_family = "wasm"))]
pub(super) fn spawn(
    model_key: &str,
    factory: BackendFactory,
    stopped: Sender<()>,
) -> std::io::Result<Sender<Work>> {
    let (tx, rx) = crossbeam_channel::unbounded::<Work>();
    std::thread::Builder::new()
        .name(format!("llm-{model_key}"))
        .spawn(move || {
            worker_loop(factory, rx);
            let _ = stopped.send(());
        })?;
    Ok(tx)
}

/// Asks every worker to stop and waits, at most [`STOP_WAIT`] in all, until
/// each has said on `stopped` that it freed its model. Workers end before the
/// process does: a model freed by the process's exit while a worker still
/// evaluates a prompt (a prime after the last turn) crashed the exit.
pub(super) fn stop_all(workers: HashMap<String, Sender<Work>>, stopped: &Receiver<()>) {
    let running = workers
        .values()
        .filter(|tx| tx.send(Work::Stop).is_ok())
        .count();
    let deadline = Instant::now() + STOP_WAIT;
    for _ in 0..running {
        let left = deadline.saturating_duration_since(Instant::now());
        if stopped.recv_timeout(left).is_err() {
            tracing::warn!("a model worker did not stop within {STOP_WAIT:?}");
            return;
        }
    }
    tracing::debug!("{running} model worker(s) stopped");
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
                Script::read(&path).map_err(|e| BackendError::Fatal(e.to_string()))?,
            )))
        }
    }
}

#[cfg(not(target_family = "wasm"))]
fn worker_loop(factory: BackendFactory, rx: Receiver<Work>) {
    let mut factory = Some(factory);
    let mut backend: Option<Result<Box<dyn Backend>, BackendError>> = None;
    let mut pending: VecDeque<Work> = VecDeque::new();
    while let Some(work) = next_work(&rx, &mut pending) {
        let loaded = backend.get_or_insert_with(|| match factory.take() {
            Some(f) => f(),
            None => Err(BackendError::Fatal("no backend".into())),
        });
        match work {
            Work::Call(job) => match loaded {
                Ok(backend) => futures_lite::future::block_on(super::policy::run_call(
                    &mut super::backend::Blocking(backend.as_mut()),
                    *job,
                )),
                Err(e) => {
                    job.fail_early(format!(
                        "model `{}` could not be loaded: {e}",
                        job.model_key
                    ));
                }
            },
            Work::Prime(job, done) => {
                if let Ok(backend) = loaded {
                    prime(backend.as_mut(), &job);
                }
                let _ = done.send(());
            }
            Work::Warm | Work::Stop => {}
        }
    }
}

/// The next work to run, or `None` when the worker is to stop: the channel
/// closed, or [`Work::Stop`] arrived (what waits is dropped: its callers see
/// their channels close, and the model is freed on the way out). A call
/// waiting means the player has moved: what was primed for that move is no
/// use now, and must not keep the call waiting.
#[cfg(not(target_family = "wasm"))]
fn next_work(rx: &Receiver<Work>, pending: &mut VecDeque<Work>) -> Option<Work> {
    loop {
        if pending.is_empty() {
            pending.push_back(rx.recv().ok()?);
        }
        pending.extend(rx.try_iter());
        if pending.iter().any(|w| matches!(w, Work::Stop)) {
            return None;
        }
        if pending.iter().any(|w| matches!(w, Work::Call(_))) {
            pending.retain(|w| match w {
                Work::Prime(_, done) => {
                    let _ = done.send(());
                    false
                }
                _ => true,
            });
        }
        if let Some(work) = pending.pop_front() {
            return Some(work);
        }
    }
}

/// Reads a job's prompt into the backend's cache; a failure only costs the
/// later call its head start.
#[cfg(not(target_family = "wasm"))]
fn prime(backend: &mut dyn Backend, job: &Job) {
    let request = job.request(
        job.prompt_id(),
        job.messages.clone(),
        job.sampling.clone(),
        &job.cache_slot,
    );
    if let Err(e) = backend.prefill(&request) {
        tracing::debug!("priming `{}` failed: {e}", job.stage);
    }
}

// The page's own model (#45): the narrator (SmolLM2-135M-Instruct with Loreloom's adapter
// merged into its weights by web/build.sh) runs inside the page, in llama.cpp compiled to
// WebAssembly (wllama: llama-server's own request handling, so the page's calls get the
// native server's sampling, JSON-schema-constrained output and prompt-prefix reuse), in
// workers of its own, so the game's frame keeps drawing while it thinks.
//
// The game's model keys in the page name `/v1` (src/llm/config.rs). This module answers
// the page's own `POST /v1/chat/completions` itself, as the server-sent events llama-server
// would send (src/llm/fetch.rs reads them unchanged); nothing leaves the page. A player who
// prefers a model server sets one in "Narrator model…" (this page's settings): then the
// calls go to that server and this module stays out of the way.
//
// The model file comes from the page's own origin (models/, listed with its size and
// SHA-256 in models/manifest.json), the first time a session needs it, with a progress
// bar (size, speed, time left); it is checked against its hash and kept in Cache Storage,
// so later loads, and play offline, read it from there. A page without the file (or a
// browser that cannot run it) still plays stories; sessions then say why they cannot.
//
// The embedding model (all-MiniLM-L6-v2: three files in models/all-MiniLM-L6-v2/, listed
// in the same manifest) is fetched, checked and kept the same way when the first session
// opens (`embedderFiles`), and handed to the game, which runs it itself on candle
// (src/memory/page.rs), so lore and memory are recalled by meaning in the page as natively.
//
// The model has few threads, so this module orders its work (src/llm/fetch.rs marks each
// call with its stage and lane for it; no other server sees the marks): calls on the
// foreground lane first, the background lane's while the foreground has none, and the
// next turn's prompts (primers) while the player reads and nothing else runs.

const CACHE = 'loreloom-models';
const SOURCE_KEY = 'loreloom:page-model'; // "page" (default) or "server"
const CHAT = '/v1/chat/completions';
const THREADS_KEY = 'loreloom:page-model-threads';

const panel = document.getElementById('model-status');
const bar = panel.querySelector('progress');
const label = panel.querySelector('span');

/// What the page's model is doing, for the page and its tests.
const status = { state: 'idle', file: null, bytes: 0, loaded: 0, fromCache: null, error: null,
  threads: null, multithread: null, loadMs: null, calls: 0,
  // The last calls' figures: wall time, first text, and llama.cpp's own timings.
  recent: [],
  // Primers (the next turn's prompts read while the player reads): read, given up for a
  // call, and their prompt tokens read.
  primes: { read: 0, dropped: 0, tokens: 0, waiting: 0 },
  // The embedding model (all-MiniLM-L6-v2, run by the game itself: src/memory/page.rs).
  embedder: { state: 'idle', bytes: 0, loaded: 0, fromCache: null, loadMs: null, error: null } };

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const show = (text, fraction) => {
  panel.hidden = false;
  label.textContent = text;
  if (fraction === undefined) bar.removeAttribute('value'); else bar.value = fraction;
};
const hide = () => { panel.hidden = true; };

const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

/// How long a model's download may send nothing before it is given up.
const STALL_MS = 30000;

/// A model file's blob: from Cache Storage when it is there, else downloaded with a
/// progress bar, checked against its hash and kept. `progress` counts what was read
/// (`loaded`, `fromCache`); `what` names the model for the player; `keep` says which of the
/// cache's entries stay when this one is put (an older version's bytes go). Throws with a
/// message for the player.
async function modelBlob(entry, { cacheName, what, progress, keep }) {
  const key = new URL(`${entry.file}?sha256=${entry.sha256}`, document.baseURI).href;
  const cache = self.caches ? await caches.open(cacheName) : null;
  if (cache) {
    const hit = await cache.match(key);
    if (hit) {
      progress.fromCache = true;
      return hit.blob();
    }
  }
  progress.fromCache = false;
  // Read into one buffer of the size the manifest names: a longer answer is refused as
  // soon as it overruns (never unbounded memory), and the hash reads it without a copy.
  // A download that sends nothing for STALL_MS is given up (never a hang: the session
  // waiting for the memory model then opens without it).
  let bytes = null;
  const abort = new AbortController();
  let stall = 0;
  const arm = () => {
    clearTimeout(stall);
    stall = setTimeout(() => abort.abort(new Error(`${entry.file}: nothing arrived for ${STALL_MS / 1000} s (is the connection down?)`)), STALL_MS);
  };
  let read = 0;
  try {
    arm();
    const response = await fetch(entry.file, { cache: 'no-store', signal: abort.signal });
    if (!response.ok) throw new Error(`${entry.file} answered HTTP ${response.status}`);
    bytes = new Uint8Array(entry.bytes);
    const reader = response.body.getReader();
    const started = performance.now();
    let shown = 0;
    for (;;) {
      const { done, value } = await reader.read();
      arm();
      if (done) break;
      if (read + value.byteLength > entry.bytes) {
        reader.cancel();
        throw new Error(`${entry.file} is longer than the ${entry.bytes} bytes the page expects; reload to fetch it again`);
      }
      bytes.set(value, read);
      read += value.byteLength;
      progress.loaded += value.byteLength;
      const now = performance.now();
      if (now - shown > 200) {
        shown = now;
        const rate = read / Math.max(1, now - started) * 1000;
        const left = Math.max(0, entry.bytes - read) / Math.max(rate, 1);
        show(`Downloading the ${what} (once): ${mb(read)} of ${mb(entry.bytes)} · ${mb(rate)}/s · ${Math.ceil(left)} s left`,
          read / entry.bytes);
      }
    }
  } finally {
    clearTimeout(stall);
  }
  show(`Checking the ${what}…`);
  if (read !== entry.bytes) throw new Error(`${entry.file} is ${read} bytes, not the ${entry.bytes} the page expects; reload to fetch it again`);
  const digest = hex(await crypto.subtle.digest('SHA-256', bytes));
  if (digest !== entry.sha256) throw new Error(`${entry.file} does not match its SHA-256 (${digest}); it was not kept; reload to fetch it again`);
  const blob = new Blob([bytes]);
  if (cache) {
    for (const old of await cache.keys()) if (old.url !== key && !keep(old.url)) await cache.delete(old);
    await cache.put(key, new Response(blob, { headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(blob.size) } }))
      .catch((e) => console.warn(`loreloom: the ${what} could not be kept (${e}); it will be downloaded again next time`));
  }
  return blob;
}

/// The page's models/manifest.json, fetched once for both models. A page built without
/// models answers 404: it lists none (`{}`). Any other failure (offline, a broken answer)
/// is said as it is.
let manifestRead = null;
const manifest = () => {
  manifestRead ??= fetch('models/manifest.json').then((r) => {
    if (r.status === 404) return {};
    if (!r.ok) throw new Error(`models/manifest.json answered HTTP ${r.status}`);
    return r.json();
  });
  return manifestRead;
};

const defaultThreads = (cores) => (cores <= 2 ? cores : Math.min(Math.floor(cores / 2), 8));

let starting = null;
let wllama = null;

/// Downloads (once) and loads the model; resolves when it can answer.
function start() {
  starting ??= (async () => {
    try {
      status.state = 'loading';
      const entry = (await manifest()).narrator;
      if (!entry) throw new Error('this page was built without its model; ./run.sh play --web builds it, or choose a model server in "Narrator model…"');
      status.file = entry.file;
      status.bytes = entry.bytes;
      status.loaded = 0;
      // Only this version is kept: an older model's bytes go.
      const blob = await modelBlob(entry, { cacheName: CACHE, what: 'narrator model', progress: status, keep: () => false });
      show('Starting the narrator model…');
      const began = performance.now();
      // Fetched only now: stories never need it, and it is not part of the first screen.
      const { Wllama } = await import('./wllama/wllama.js');
      wllama = new Wllama({ default: new URL('wllama/wllama.wasm', document.baseURI).href }, { suppressNativeLog: true });
      // Never the CDN fallback for browsers without JSPI or 64-bit memory: nothing leaves the page.
      wllama.setCompat(null);
      await wllama.loadModel([blob], {
        // Four slots over one unified cache: the game's two lanes call at once, and a
        // stage's next prompt finds the slot that still holds its prefix (llama-server
        // picks the slot whose cached prompt shares the most).
        n_ctx: entry.context,
        n_parallel: 4,
        kv_unified: true,
        // Half the cores, or both of two: the page draws the game on the rest. Measured on
        // two cores in one session.js run each: while a turn's frames drew continuously, two
        // threads made calls slower; since a waiting turn draws four frames a second, two
        // threads gave first words in 93 s and the turn in 684 s against one thread's 108 and
        // 743. `loreloom:page-model-threads` overrides it (for measuring).
        n_threads: Number(localStorage.getItem(THREADS_KEY)) > 0
          ? Math.min(Number(localStorage.getItem(THREADS_KEY)), 16)
          : defaultThreads(navigator.hardwareConcurrency || 2),
        // The server loop reads at most this many prompt tokens between two looks at its
        // queue: a call that comes while a primer is read waits for one batch, not the
        // whole primer (a ~600-token prompt takes a minute on two cores).
        n_batch: 128,
        // The CPU only: WebGPU is untested here (headless Chromium has only SwiftShader).
        n_gpu_layers: 0,
      });
      status.loadMs = Math.round(performance.now() - began);
      status.threads = wllama.getNumThreads();
      status.multithread = wllama.isMultithread();
      status.state = 'ready';
      hide();
    } catch (e) {
      status.state = 'failed';
      status.error = String(e && e.message ? e.message : e);
      show(`The narrator model cannot run in this page: ${status.error} (reload the page to try again)`);
      console.warn(`loreloom: ${status.error}`);
      throw e;
    }
  })();
  return starting;
}

const EMBED_CACHE = 'loreloom-embedder';
const EMBED_FILES = ['config', 'tokenizer', 'weights'];
// The load in flight, if any: once settled it is dropped, so the page keeps no
// second copy of the 91 MB the game has copied into its own memory.
let embedding = null;

/// The embedding model's three files (all-MiniLM-L6-v2, run by candle inside the game:
/// src/memory/page.rs asks for them when the first session opens): `{config, tokenizer,
/// weights}` as bytes, or null when the page was built without it. Fetched once from the
/// page's own origin, checked against their hashes and kept, as the narrator's file is.
function embedderFiles() {
  embedding ??= (async () => {
    const e = status.embedder;
    try {
      e.state = 'loading';
      const entry = (await manifest()).embedder;
      if (!entry || !entry.files) { e.state = 'absent'; return null; }
      const files = EMBED_FILES.map((n) => entry.files[n]);
      if (files.some((f) => !f || typeof f.file !== 'string')) throw new Error('models/manifest.json names the memory model without its three files');
      e.bytes = files.reduce((n, f) => n + f.bytes, 0);
      e.loaded = 0;
      const keys = new Set(files.map((f) => new URL(`${f.file}?sha256=${f.sha256}`, document.baseURI).href));
      const began = performance.now();
      const parts = {};
      let fromCache = true;
      for (const [i, name] of EMBED_FILES.entries()) {
        const blob = await modelBlob(files[i], { cacheName: EMBED_CACHE, what: 'memory model', progress: e, keep: (url) => keys.has(url) });
        fromCache = fromCache && e.fromCache;
        parts[name] = new Uint8Array(await blob.arrayBuffer());
      }
      e.fromCache = fromCache;
      e.loadMs = Math.round(performance.now() - began);
      e.state = 'ready';
      hide();
      return parts;
    } catch (err) {
      e.state = 'failed';
      e.error = String(err && err.message ? err.message : err);
      show(`The memory model cannot load in this page: ${e.error} (lore and memories are recalled by their words; reload the page to try again)`);
      console.warn(`loreloom: ${e.error}`);
      throw err;
    }
  })().finally(() => { embedding = null; });
  return embedding;
}

const usePage = () => (localStorage.getItem(SOURCE_KEY) || 'page') === 'page';
const isChat = (url) => {
  try {
    const u = new URL(url, document.baseURI);
    return u.origin === location.origin && u.pathname === CHAT;
  } catch { return false; }
};

const encoder = new TextEncoder();
const event = (data) => encoder.encode(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
const refuse = (status, message) => new Response(JSON.stringify({ error: { message } }), { status, headers: { 'Content-Type': 'application/json' } });

/// One chat completion, answered in the page as llama-server's event stream.
async function answer(body) {
  let request;
  try { request = JSON.parse(body); } catch { return refuse(400, 'the request body is not JSON'); }
  if (!request || !Array.isArray(request.messages)) return refuse(400, 'the request has no messages');
  try { await start(); } catch (e) { return refuse(503, `the page's model: ${status.error}`); }
  const stage = typeof request.loreloom_stage === 'string' ? request.loreloom_stage : null;
  const background = request.loreloom_lane === 'background';
  const primer = request.loreloom_prime === true;
  delete request.loreloom_stage;
  delete request.loreloom_lane;
  delete request.loreloom_prime;
  if (primer) return prime(request);
  status.calls++;
  // The player has moved: what was being primed for this move is read as far as it got,
  // and the rest is no use now (the next commit primes again).
  active++;
  if (priming) priming.abort();
  for (const waiting of primes.splice(0)) waiting.resolve(false);
  status.primes.waiting = 0;
  const abort = new AbortController();
  const began = performance.now();
  const call = { stage, lane: background ? 'background' : 'foreground', ms: null, waitedMs: null, firstMs: null,
    promptN: null, cachedN: null, predictedN: null, prefillPerS: null, decodePerS: null };
  if (!background) foreground++;
  const stream = new ReadableStream({
    async start(controller) {
      try {
        // The model's threads go to the foreground lane (the move's resolution, then its
        // narration: the player's first words) while it has a call; the background lane's
        // calls (extractors, lore) are read when it has none.
        if (background) await foregroundIdle();
        call.waitedMs = Math.round(performance.now() - began);
        const chunks = await wllama.createChatCompletion({ ...request, stream: true, abortSignal: abort.signal });
        for await (const chunk of chunks) {
          if (call.firstMs === null && chunk.choices && chunk.choices[0] && chunk.choices[0].delta && chunk.choices[0].delta.content) {
            call.firstMs = Math.round(performance.now() - began);
          }
          const t = chunk.timings;
          if (t) Object.assign(call, { promptN: t.prompt_n, cachedN: t.cache_n, predictedN: t.predicted_n,
            prefillPerS: Math.round(t.prompt_per_second * 10) / 10, decodePerS: Math.round(t.predicted_per_second * 10) / 10 });
          controller.enqueue(event(chunk));
        }
        controller.enqueue(event('[DONE]'));
        controller.close();
      } catch (e) {
        if (!abort.signal.aborted) controller.error(e);
      } finally {
        call.ms = Math.round(performance.now() - began);
        status.recent.push(call);
        if (status.recent.length > 100) status.recent.shift();
        active--;
        if (!background) {
          foreground--;
          if (foreground === 0) for (const go of idleWaiters.splice(0)) go();
        }
        pump();
      }
    },
    cancel() { abort.abort(); },
  });
  return new Response(stream, { headers: { 'Content-Type': 'text/event-stream' } });
}

// Primers: the game sends the next turn's prompts after each commit (src/llm/gateway.rs,
// `prime`), each marked `loreloom_prime`, to be read into the model's cache while the
// player reads; the call that later starts alike reads only what differs. The model has
// few threads, so primers are read one at a time, only while no call runs, and the one
// being read is given up when a call comes (its batches read so far stay cached).
let active = 0; // calls being answered
let foreground = 0; // of which on the foreground lane
const idleWaiters = []; // background calls waiting for the foreground lane to be idle
const foregroundIdle = () => (foreground === 0 ? Promise.resolve() : new Promise((go) => idleWaiters.push(go)));
const primes = []; // primers waiting: { request, resolve }
let priming = null; // the AbortController of the primer being read

// Each commit or rewind primes the next turn again; what waits longer than the newest
// few is for a world that has moved on.
const PRIMES_KEPT = 8;

function prime(request) {
  return new Promise((resolve) => {
    primes.push({ request, resolve });
    for (const stale of primes.splice(0, Math.max(0, primes.length - PRIMES_KEPT))) {
      status.primes.dropped++;
      stale.resolve(false);
    }
    status.primes.waiting = primes.length;
    pump();
  }).then((read) => new Response(JSON.stringify({ primed: read }), { headers: { 'Content-Type': 'application/json' } }));
}

async function pump() {
  if (priming || active > 0 || primes.length === 0) return;
  const { request, resolve } = primes.shift();
  status.primes.waiting = primes.length;
  const abort = new AbortController();
  priming = abort;
  let read = false;
  try {
    const chunks = await wllama.createChatCompletion({ ...request, max_tokens: 1, stream: true, abortSignal: abort.signal });
    for await (const chunk of chunks) {
      if (chunk.timings) status.primes.tokens += chunk.timings.prompt_n || 0;
    }
    read = !abort.signal.aborted;
  } catch (e) {
    if (!abort.signal.aborted) console.warn(`loreloom: a primer failed: ${e && e.message ? e.message : e}`);
  } finally {
    priming = null;
    if (read) status.primes.read++; else status.primes.dropped++;
    resolve(read);
    pump();
  }
}

// The page's calls to its own /v1 are answered here while the page's model is chosen.
const fetchOut = window.fetch.bind(window);
window.fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  const method = (init && init.method) || (input instanceof Request ? input.method : 'GET');
  if (usePage() && method.toUpperCase() === 'POST' && isChat(url)) {
    const body = init && init.body !== undefined ? Promise.resolve(String(init.body))
      : input instanceof Request ? input.text() : Promise.resolve('');
    return body.then(answer);
  }
  return fetchOut(input, init);
};

// A session needs the model soon: start fetching and loading it when one opens, so the
// first turn does not wait for the download as well. Stories never touch it. The page's
// state changes with every streamed token, so the watch ends once the model is started.
// (The source is chosen before the page loads: changing it reloads the page.)
const opened = new MutationObserver(() => {
  if (starting) { opened.disconnect(); return; }
  if (/"screen":"Session/.test(document.body.dataset.loreloom || '')) {
    opened.disconnect();
    start().catch(() => {});
  }
});
if (usePage()) opened.observe(document.body, { attributes: true, attributeFilter: ['data-loreloom'] });

// "Narrator model…": the page's own model, or an OpenAI-compatible server the player names.
const dialog = document.getElementById('model-dialog');
const form = dialog.querySelector('form');
document.getElementById('model-open').addEventListener('click', () => {
  const source = localStorage.getItem(SOURCE_KEY) || 'page';
  form.elements.source.value = source;
  form.elements.url.value = localStorage.getItem('loreloom:page-model-url') || 'http://127.0.0.1:8080/v1';
  dialog.showModal();
});
form.addEventListener('submit', (e) => {
  if (e.submitter && e.submitter.value === 'cancel') return;
  const url = form.elements.url.value.trim();
  // A server with no address is no choice: the page's model stays.
  const source = form.elements.source.value === 'server' && url ? 'server' : 'page';
  localStorage.setItem(SOURCE_KEY, source);
  if (source === 'server') {
    localStorage.setItem('loreloom:page-model-url', url);
    const key = (what) => `(backend: OpenAi(url: ${JSON.stringify(url)}, model: "default"), compact_prompts: true, lanes: 2, description: "${what}")`;
    localStorage.setItem('loreloom:.loreloom/models.ron',
      `(small: "local-small", large: "local-large", models: {"local-small": ${key('the small tier, on the server the player chose')}, "local-large": ${key('the narrator, on the server the player chose')}})`);
  } else {
    localStorage.removeItem('loreloom:.loreloom/models.ron');
  }
  // The game reads its model settings when it starts.
  location.reload();
});

window.loreloomModel = { status, start, usePage, embedderFiles };

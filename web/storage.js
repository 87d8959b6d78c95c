// The page's side of src/files.rs: what ships with the page (bundle.json, made by
// web/build.sh: campaigns, prompts and schemas as text, and the list of pictures and
// music fetched from assets/), and binary files (a session's SQLite snapshot) kept in
// IndexedDB. Everything is loaded before the game starts (window.loreloomFiles.ready),
// so the game reads synchronously; each write updates the copy here at once and is
// written to IndexedDB behind it, in order.
'use strict';
(() => {
  const DB = 'loreloom', STORE = 'files';
  const files = new Map(); // path -> { bytes: Uint8Array, modified: ms }
  let bundleText = null;
  let db = null;
  let queue = Promise.resolve();

  const request = (r) => new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const openDb = () => {
    const r = indexedDB.open(DB, 1);
    r.onupgradeneeded = () => r.result.createObjectStore(STORE);
    return request(r);
  };
  // Per path: writes on their way, and the last failure not yet said to the game.
  const pending = new Map();
  const unsaid = new Map();
  const write = (path, entry) => {
    pending.set(path, (pending.get(path) || 0) + 1);
    queue = queue.then(async () => {
      if (!db) return;
      const tx = db.transaction(STORE, 'readwrite');
      if (entry) tx.objectStore(STORE).put(entry, path); else tx.objectStore(STORE).delete(path);
      await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); tx.onabort = () => reject(tx.error); });
      window.loreloomFiles.written++;
    }).catch((e) => {
      // Counted where the page (and its tests) can see it, and said to the
      // game (src/store's keep asks), which shows "this turn was not kept".
      window.loreloomFiles.failed.push({ path, error: String(e) });
      unsaid.set(path, String(e));
      console.warn(`loreloom: could not keep ${path} in IndexedDB: ${e}`);
    }).finally(() => {
      const left = (pending.get(path) || 1) - 1;
      if (left > 0) pending.set(path, left); else pending.delete(path);
    });
  };

  window.loreloomFiles = {
    /// How many writes have reached IndexedDB (tests wait on it), and the
    /// writes that did not ({path, error}).
    written: 0,
    failed: [],
    /// Whether the browser agreed to keep this page's storage under
    /// pressure (`navigator.storage.persist()`; null: not asked or no answer).
    persisted: null,
    get: (path) => files.get(path)?.bytes,
    put: (path, bytes) => {
      const entry = { bytes: bytes.slice(), modified: Date.now() };
      files.set(path, entry);
      write(path, entry);
    },
    remove: (path) => { if (files.delete(path)) write(path, null); },
    names: () => [...files.keys()],
    /// The last write of `path` that did not reach IndexedDB, once (null: none).
    failedWrite: (path) => { const e = unsaid.get(path); unsaid.delete(path); return e === undefined ? null : e; },
    /// How many writes of `path` are still on their way.
    pendingWrites: (path) => pending.get(path) || 0,
    modified: (path) => files.get(path)?.modified,
    bundle: () => bundleText,
    /// Resolves once every write so far is in IndexedDB.
    settled: () => queue,
    ready: (async () => {
      const [text] = await Promise.all([
        fetch('bundle.json').then((r) => (r.ok ? r.text() : null), () => null),
        (async () => {
          try {
            db = await openDb();
            const tx = db.transaction(STORE, 'readonly');
            const store = tx.objectStore(STORE);
            const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
            keys.forEach((k, i) => files.set(k, values[i]));
            // Saves are the player's: ask the browser not to evict them.
            if (navigator.storage && navigator.storage.persist) {
              navigator.storage.persist().then(
                (granted) => { window.loreloomFiles.persisted = granted; },
                () => { window.loreloomFiles.persisted = false; },
              );
            }
          } catch (e) {
            console.warn(`loreloom: no IndexedDB for this page (${e}); sessions last until the tab closes`);
          }
        })(),
      ]);
      bundleText = text;
    })(),
  };
})();

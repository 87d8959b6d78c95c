// Browsers keep an AudioContext suspended until the player interacts with the
// page: remember every one the game makes and resume them on the first click,
// key or touch (the music then starts where the story asked for it).
(function () {
  const Original = window.AudioContext || window.webkitAudioContext;
  if (!Original) return;
  const made = [];
  function Patched(...args) {
    const context = new Original(...args);
    made.push(context);
    return context;
  }
  Patched.prototype = Original.prototype;
  window.AudioContext = Patched;
  window.webkitAudioContext = Patched;
  // The page (and its tests) can see whether sound is on.
  window.loreloomAudioContexts = made;
  const resume = () => {
    for (const context of made) {
      if (context.state !== "running") context.resume();
    }
  };
  for (const event of ["pointerdown", "keydown", "touchstart"]) {
    document.addEventListener(event, resume, { capture: true });
  }
})();

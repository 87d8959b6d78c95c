//! The browser entry point (issue #26, feature `web`): the window in the page's canvas.
//!
//! Loreloom's window is drawn into the page's `<canvas id="loreloom">`,
//! opening on the title shelf.

use std::path::PathBuf;

/// The shelf and the campaigns come from `bundle.json`, which the page loads
/// before it starts the game (`web/storage.js`); art and music are fetched
/// from `assets/` beside the page.
fn main() {
    let _ = loreloom::ui::run(loreloom::ui::GuiOptions {
        library: vec![PathBuf::from("campaigns")],
        open: None,
        autoplay: None,
        screenshot: None,
        screenshot_each: None,
        exit: false,
        preview: false,
        window: (1280, 720),
        show: loreloom::ui::StartPanels::default(),
        measure: None,
        hold: 0.0,
        started: bevy::platform::time::Instant::now(),
        session: None,
    });
}

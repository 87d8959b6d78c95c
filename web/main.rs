//! The browser entry point (issue #26, feature `web`): Loreloom's window drawn into the page's `<canvas id="loreloom">`, opening on the title shelf.

use std::path::PathBuf;

fn main() {
    // The bundled stories, as the page serves them beneath `assets/`.
    let library = vec![PathBuf::from("campaigns")];
    let _ = loreloom::ui::run(loreloom::ui::GuiOptions {
        library,
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

//! The browser entry point (issue #26, feature `web`): Loreloom's window drawn into the page's `<canvas id="loreloom">`, opening on the title shelf.

use std::path::PathBuf;

/// The bundled story, compiled in; its art and music are fetched from `assets/` beside the page.
const BUNDLED: &str = "campaigns/the-glass-orchard/story.json";

fn main() {
    loreloom::files::bundle(
        BUNDLED,
        include_str!("../campaigns/the-glass-orchard/story.json"),
    );
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

//! The stories the title screen offers: packages under the library folders, paths given.
//!
//! Every package under the library folders, plus paths from the command line.

use std::path::{Path, PathBuf};

use bevy::prelude::*;

use super::options::GuiOptions;
use super::screens::StartStory;
use crate::files;
use crate::story::{StoryPackage, open};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(PreStartup, scan_library)
        .add_systems(Startup, open_requested_story);
}

/// One story on the shelf, or why it cannot be opened.
#[derive(Debug, Clone)]
pub struct LibraryEntry {
    pub path: PathBuf,
    pub story: Result<StoryPackage, String>,
}

impl LibraryEntry {
    /// Read and compile the story at `path`; a broken one is listed with its error (logged).
    pub fn open(path: PathBuf) -> Self {
        let story = open(&path).map_err(|e| e.to_string());
        if let Err(err) = &story {
            warn!("{err}");
        }
        Self { path, story }
    }
}

/// Every story found, in a stable order.
#[derive(Resource, Debug, Default)]
pub struct Library {
    pub entries: Vec<LibraryEntry>,
    pub selected: usize,
}

impl Library {
    pub fn selected(&self) -> Option<&StoryPackage> {
        self.entries.get(self.selected)?.story.as_ref().ok()
    }

    /// The entry holding the story with this id.
    pub fn find(&self, story_id: &str) -> Option<&StoryPackage> {
        self.entries
            .iter()
            .filter_map(|e| e.story.as_ref().ok())
            .find(|p| p.story.file().meta.id == story_id)
    }
}

/// Story packages directly inside `dir`, or `dir` itself when it is one.
fn stories_in(dir: &Path) -> Vec<PathBuf> {
    let is_package = |p: &Path| files::is_file(&p.join(crate::story::load::STORY_FILE_NAME));
    if files::is_file(dir) || is_package(dir) {
        return vec![dir.to_owned()];
    }
    files::list(dir)
        .into_iter()
        .filter(|p| is_package(p))
        .collect()
}

fn scan_library(mut commands: Commands, options: Res<GuiOptions>) {
    let mut entries: Vec<LibraryEntry> = Vec::new();
    let paths = options
        .library
        .iter()
        .flat_map(|dir| stories_in(dir))
        .chain(options.open.clone());
    for path in paths {
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        if entries.iter().any(|e| e.path == path) {
            continue;
        }
        entries.push(LibraryEntry::open(path));
    }
    commands.insert_resource(Library {
        entries,
        selected: 0,
    });
}

fn open_requested_story(
    options: Res<GuiOptions>,
    mut library: ResMut<Library>,
    mut starts: MessageWriter<StartStory>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(path) = &options.open else {
        return;
    };
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    let Some(index) = library.entries.iter().position(|e| e.path == path) else {
        return;
    };
    library.selected = index;
    match &library.entries[index].story {
        Ok(package) => {
            starts.write(StartStory {
                package: package.clone(),
                restore: None,
            });
        }
        Err(err) => {
            error!("{err}");
            if options.exit {
                exit.write(AppExit::error());
            }
        }
    }
}

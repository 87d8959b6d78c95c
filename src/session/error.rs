//! Why a session's save cannot be opened, made, read again or replayed.

use std::path::PathBuf;

use super::play::StartError;
use super::remember::MemoryError;
use crate::store::StoreError;

/// Why a save cannot be opened, made, read again or replayed.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error(transparent)]
    Store(Box<StoreError>),
    #[error("{report}\nerror: {}: the campaign has errors; `loreloom campaign validate` lists them", dir.display())]
    Campaign { dir: PathBuf, report: String },
    #[error("{}: {source}", path.display())]
    Memory {
        path: PathBuf,
        #[source]
        source: Box<MemoryError>,
    },
    #[error("{}: {source}", campaign.display())]
    Start {
        campaign: PathBuf,
        #[source]
        source: StartError,
    },
    #[error("{}: cannot create the folder: {source}", path.display())]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<StoreError> for ControllerError {
    fn from(e: StoreError) -> Self {
        Self::Store(Box::new(e))
    }
}

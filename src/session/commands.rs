//! One line of player input read as a command: a move, a choice, or an out-of-character command.

/// What one line of input asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Play an intention (free text or a numbered choice), maybe whispered.
    Act {
        text: String,
        whisper_to: Option<String>,
    },
    Retry,
    Fallback,
    Rewind(i64),
    /// Keep the current scene in a save slot (`slot-1` … `slot-6`).
    Save(String),
    /// Branch from the scene a save slot keeps.
    Load(String),
    EndScene,
    Quit,
    Help,
}

/// The out-of-character commands, for help lines.
pub const COMMANDS: &str =
    "/retry, /fallback, /rewind N, /save N, /load N, /end-scene, /whisper NPC text, /quit";

/// How many save slots a session has beside its autosave (the file itself).
pub const SAVE_SLOTS: usize = 6;

/// Why a line is not a command: each says what to write instead (shown to the player).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("{command} N: N is a save slot, 1 to {SAVE_SLOTS}")]
    NotASlot { command: &'static str },
    #[error("/rewind N: N is a scene number")]
    NotAScene,
    #[error("/whisper NPC what you say")]
    WhisperWithoutWords,
    #[error("commands: {COMMANDS}")]
    Unknown,
    #[error("there are no choices now: write what you do")]
    NoChoices,
    #[error("choose 1 to {choices}, or write what you do")]
    NoSuchChoice { choices: usize },
    #[error("write what you do")]
    Empty,
}

/// `3` or `slot-3` → `slot-3`, for slots 1 to [`SAVE_SLOTS`].
fn slot_name(arg: &str, command: &'static str) -> Result<String, CommandError> {
    let n = arg.strip_prefix("slot-").unwrap_or(arg);
    match n.parse::<usize>() {
        Ok(n) if (1..=SAVE_SLOTS).contains(&n) => Ok(format!("slot-{n}")),
        _ => Err(CommandError::NotASlot { command }),
    }
}

/// Read one line: a command, a choice number (of `choices`), or free text.
pub fn parse_command(line: &str, choices: &[String]) -> Result<Command, CommandError> {
    let line = line.trim();
    let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    match head {
        "/quit" => Ok(Command::Quit),
        "/help" => Ok(Command::Help),
        "/retry" => Ok(Command::Retry),
        "/fallback" => Ok(Command::Fallback),
        "/end-scene" => Ok(Command::EndScene),
        "/rewind" => rest
            .parse()
            .map(Command::Rewind)
            .map_err(|_| CommandError::NotAScene),
        "/save" => slot_name(rest, "/save").map(Command::Save),
        "/load" => slot_name(rest, "/load").map(Command::Load),
        "/whisper" => match rest.split_once(' ') {
            Some((npc, text)) if !text.trim().is_empty() => Ok(Command::Act {
                text: text.trim().to_owned(),
                whisper_to: Some(npc.to_owned()),
            }),
            _ => Err(CommandError::WhisperWithoutWords),
        },
        _ if head.starts_with('/') => Err(CommandError::Unknown),
        _ => match line.parse::<usize>() {
            Ok(n) if (1..=choices.len()).contains(&n) => Ok(Command::Act {
                text: choices[n - 1].clone(),
                whisper_to: None,
            }),
            Ok(_) if choices.is_empty() => Err(CommandError::NoChoices),
            Ok(_) => Err(CommandError::NoSuchChoice {
                choices: choices.len(),
            }),
            Err(_) if line.is_empty() => Err(CommandError::Empty),
            Err(_) => Ok(Command::Act {
                text: line.to_owned(),
                whisper_to: None,
            }),
        },
    }
}

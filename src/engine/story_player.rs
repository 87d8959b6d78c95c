//! The story player in the ECS: `StoryCommand` messages in, presentation messages out.

use bevy::prelude::*;

use crate::story::{CodewordIx, CodexIx, PassageIx, Player, SaveDocument, StoryPackage};

pub(super) fn plugin(app: &mut App) {
    app.add_message::<StoryCommand>()
        .add_message::<PresentPassage>()
        .add_message::<CodexUnlocked>()
        .add_message::<StoryNotice>()
        .configure_sets(Update, StorySystems::ApplyCommands)
        .add_systems(
            Update,
            apply_story_commands
                .in_set(StorySystems::ApplyCommands)
                .run_if(resource_exists::<ActiveStory>),
        );
}

/// Ordering of the story player's systems.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum StorySystems {
    /// Player input becomes player moves and presentation messages.
    ApplyCommands,
}

/// The story being played and the playthrough's state.
#[derive(Resource, Debug)]
pub struct ActiveStory {
    pub package: StoryPackage,
    pub player: Player,
}

impl ActiveStory {
    pub fn new(package: StoryPackage) -> Self {
        Self {
            player: Player::new(package.story.clone()),
            package,
        }
    }
}

/// What the player asks of the story.
#[derive(Message, Debug, Clone)]
pub enum StoryCommand {
    /// Present the current passage (at start, or after a presentation reset).
    Present,
    /// Take the n-th offered choice (1-based).
    Choose(usize),
    /// Roll back this many steps.
    Undo(usize),
    /// Continue from a save.
    Restore(Box<SaveDocument>),
    /// Start again from the first passage.
    Restart,
    /// Author preview: stand at this passage.
    JumpTo(PassageIx),
    /// Author preview: hold (true) or drop a codeword.
    SetCodeword(CodewordIx, bool),
}

/// A choice as offered to the player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedChoice {
    /// 1-based number the player picks it by.
    pub number: usize,
    pub label: String,
}

/// Show this passage with these choices (none for an ending).
#[derive(Message, Debug, Clone)]
pub struct PresentPassage {
    pub passage: PassageIx,
    pub choices: Vec<OfferedChoice>,
    /// For an ending: its title (or the passage id).
    pub ending: Option<String>,
}

/// Codex tiers that just unlocked.
#[derive(Message, Debug, Clone)]
pub struct CodexUnlocked(pub Vec<CodexIx>);

/// A one-line message for the player (a refused move, a failed restore).
#[derive(Message, Debug, Clone)]
pub struct StoryNotice(pub String);

fn present(player: &Player) -> PresentPassage {
    let passage = player.current();
    let story = player.story();
    PresentPassage {
        passage,
        choices: player
            .open_choices()
            .enumerate()
            .map(|(n, (_, choice))| OfferedChoice {
                number: n + 1,
                label: choice.label.clone(),
            })
            .collect(),
        ending: story.is_ending(passage).then(|| {
            let p = story.passage(passage);
            p.title.clone().unwrap_or_else(|| p.id.clone())
        }),
    }
}

fn apply_story_commands(
    mut commands: MessageReader<StoryCommand>,
    mut active: ResMut<ActiveStory>,
    mut passages: MessageWriter<PresentPassage>,
    mut unlocked: MessageWriter<CodexUnlocked>,
    mut notices: MessageWriter<StoryNotice>,
) {
    for command in commands.read() {
        let player = &mut active.player;
        let outcome = match command {
            StoryCommand::Present => Ok(()),
            StoryCommand::Choose(number) => player.choose_number(*number).map(|step| {
                if !step.unlocked.is_empty() {
                    unlocked.write(CodexUnlocked(step.unlocked));
                }
            }),
            StoryCommand::Undo(steps) => player.undo(*steps),
            StoryCommand::Restore(doc) => match Player::restore(player.shared_story().clone(), doc)
            {
                Ok(restored) => {
                    *player = restored;
                    Ok(())
                }
                Err(err) => {
                    notices.write(StoryNotice(format!("could not load the save: {err}")));
                    continue;
                }
            },
            StoryCommand::Restart => {
                *player = Player::new(player.shared_story().clone());
                Ok(())
            }
            StoryCommand::JumpTo(passage) => {
                player.jump_to(*passage);
                Ok(())
            }
            StoryCommand::SetCodeword(codeword, held) => {
                player.set_codeword(*codeword, *held);
                Ok(())
            }
        };
        match outcome {
            Ok(()) => {
                passages.write(present(player));
            }
            Err(err) => {
                notices.write(StoryNotice(err.to_string()));
            }
        }
    }
}
